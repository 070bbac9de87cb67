//! `capabilities install` and `capabilities source import`: moving a user's MCP client onto the
//! hub. Client config files live under a temporary HOME.

use serde_json::Value;

use crate::support::{Home, Run};

/// `capabilities ARGS…` with HOME (where the clients keep their configs) inside the test home.
fn run_with_home(home: &Home, args: &[&str]) -> Run {
    Run::of(
        home.command(args)
            .env("HOME", home.path())
            .env_remove("CODEX_HOME"),
    )
}

#[test]
fn install_print_is_a_snippet_that_starts_the_hub() {
    let home = Home::new();
    let run = home.run(&["install", "print"]).ok();
    let snippet: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.stdout));
    let entry = &snippet["mcpServers"]["capabilities"];
    assert_eq!(entry["args"], serde_json::json!(["hub", "serve"]));
    assert!(
        entry["command"].as_str().unwrap().ends_with("capabilities"),
        "{entry}"
    );
    // The client does not share our environment, so the snippet carries CAPABILITIES_HOME.
    assert_eq!(
        entry["env"]["CAPABILITIES_HOME"],
        home.path().display().to_string()
    );
    // A hub whose config does not load would fail in the client, where nobody reads its
    // stderr: the mistake is said here instead.
    home.write_config("[sources.a]\ncommand = \"x\"\nbogus = 1\n");
    let refused = home.run(&["install", "print"]).fails();
    assert!(
        refused
            .stderr
            .contains("config.toml:3:1: unknown field `bogus`")
            && refused.stdout.is_empty(),
        "{}",
        refused.stderr
    );
}

#[test]
fn install_cursor_is_a_dry_run_until_write_and_keeps_what_was_there() {
    let home = Home::new();
    // `--profile` must name a profile of the config.
    home.write_config("[sources.a]\ncommand = \"x\"\n[profiles.work]\nsources = [\"a\"]\n");
    let file = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = r#"{"mcpServers":{"github":{"command":"gh-mcp"}},"other":1}"#;
    std::fs::write(&file, original).unwrap();

    let dry = run_with_home(&home, &["install", "cursor"]).ok();
    assert!(
        dry.stdout.contains("Would add `capabilities`"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("capabilities source import"),
        "names the other servers: {}",
        dry.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "a dry run changes nothing"
    );

    let wrote = run_with_home(
        &home,
        &["install", "cursor", "--write", "--profile", "work"],
    )
    .ok();
    assert!(
        wrote.stdout.contains("Added `capabilities`"),
        "{}",
        wrote.stdout
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["other"], 1);
    assert_eq!(doc["mcpServers"]["github"]["command"], "gh-mcp");
    assert_eq!(
        doc["mcpServers"]["capabilities"]["args"],
        serde_json::json!(["hub", "serve", "--profile", "work"])
    );
    let backups: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bak"))
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(
        std::fs::read_to_string(backups[0].path()).unwrap(),
        original
    );

    let again = run_with_home(
        &home,
        &["install", "cursor", "--write", "--profile", "work"],
    )
    .ok();
    assert!(
        again.stdout.contains("nothing to change"),
        "{}",
        again.stdout
    );
}

#[test]
fn install_refuses_to_touch_a_config_it_cannot_read() {
    let home = Home::new();
    let file = home.path().join(".claude.json");
    std::fs::write(&file, "{ not json").unwrap();
    let run = run_with_home(&home, &["install", "claude", "--write"]).fails();
    assert!(
        run.stderr
            .contains("is not valid JSON, so it was left alone"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
}

#[test]
fn install_codex_writes_toml() {
    let home = Home::new();
    run_with_home(&home, &["install", "codex", "--write"]).ok();
    let text = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    assert!(text.contains("[mcp_servers.capabilities]"), "{text}");
    assert!(text.contains("args = [\"hub\", \"serve\"]"), "{text}");
}

#[test]
fn source_import_reads_a_client_config_and_reports_what_it_skipped() {
    let home = Home::new();
    home.write_config("[sources.time]\ncommand = \"uvx\"\nargs = [\"mcp-server-time\"]\n");
    let file = home.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {
            "server-everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"API_TOKEN": "abc"}},
            "remote": {"url": "https://example.test/mcp", "headers": {"X-Key": "${MY_KEY}"}},
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "legacy": {"type": "sse", "url": "https://example.test/sse"}
        }}"#,
    )
    .unwrap();
    let path = file.display().to_string();

    let dry = home.run(&["source", "import", &path, "--dry-run"]).ok();
    assert!(
        dry.stdout.contains("Would import 2 source(s)"),
        "{}",
        dry.stdout
    );
    assert!(
        !std::fs::read_to_string(home.config_path())
            .unwrap()
            .contains("serverEverything")
    );

    let run = home.run(&["source", "import", &path]).ok();
    assert!(
        run.stdout.contains("Imported 2 source(s)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("serverEverything (was \"server-everything\")"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("time: a source with that name is already configured"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("legacy: it uses the old HTTP+SSE transport"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("`env.API_TOKEN` looks like a secret"),
        "{}",
        run.stdout
    );
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(config.contains("[sources.serverEverything]"), "{config}");
    assert!(config.contains("${env:MY_KEY}"), "{config}");

    let again = home.run(&["source", "import", &path]).fails();
    assert!(
        again.stdout.contains("Imported 0 source(s)"),
        "{}",
        again.stdout
    );

    let missing = home
        .run(&["source", "import", "/nonexistent/mcp.json"])
        .fails();
    assert!(
        missing
            .stderr
            .contains("there is no file at /nonexistent/mcp.json"),
        "{}",
        missing.stderr
    );
}
