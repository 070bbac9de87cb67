//! What users expect of a command line, end to end: exit codes as grep and gh give them,
//! `--json` on the reading verbs, no colour in a pipe, run ids by a unique prefix, `hub approve`
//! without an id, `call`, `source enable|disable`, man pages, and hints in CLI words that
//! carry the `--config` the person used.

use serde_json::Value;

use crate::approvals::{SCRIPT, counter_config, envelope, exec};
use crate::common::everything_js;
use crate::support::Home;

/// A config with server-everything (over stdio, from tests/node_modules).
fn everything(home: &Home) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n",
        serde_json::to_string(&everything_js()).unwrap()
    ));
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
fn search_exits_1_on_no_match_and_prints_json_and_notes_apart() {
    let home = Home::new();
    everything(&home);
    let found = home.run(&["search", "echo a message", "--json"]).ok();
    let body = json(&found.stdout);
    assert_eq!(body["matches"][0]["address"], "everything.echo", "{body}");
    assert!(
        body["matches"][0]["signature"]
            .as_str()
            .unwrap()
            .contains("message: string")
    );

    let none = home.run(&["search", "zzqx qqzz"]);
    assert_eq!(none.code, 1, "no match exits 1: {}", none.stderr);
    assert!(none.stdout.is_empty(), "nothing on stdout: {}", none.stdout);
    assert!(none.stderr.contains("No tools match"), "{}", none.stderr);
    assert!(
        none.stderr.contains("--namespace NAME"),
        "a person gets the flag, not the tool argument: {}",
        none.stderr
    );

    // A source that cannot start: every source failed is an error, and says which.
    home.write_config("[sources.broken]\ncommand = \"/nonexistent/server\"\n");
    let failed = home.run(&["search", "echo"]).fails();
    assert!(
        failed.stderr.contains("no source could be listed") && failed.stderr.contains("broken"),
        "{}",
        failed.stderr
    );
}

#[test]
fn describe_takes_bare_type_names_call_options_and_json() {
    let home = Home::new();
    everything(&home);
    let options = home.run(&["describe", "CallOptions"]).ok();
    assert!(
        options.stdout.contains("interface CallOptions"),
        "{}",
        options.stdout
    );
    let body = json(
        &home
            .run(&["describe", "everything.echo", "--json"])
            .ok()
            .stdout,
    );
    assert!(
        body["declarations"].as_str().unwrap().contains("echo("),
        "{body}"
    );
    let unknown = home
        .run(&[
            "--config",
            home.config_path().to_str().unwrap(),
            "describe",
            "everything.nope",
        ])
        .fails();
    assert!(
        unknown.stderr.contains(&format!(
            "`capabilities --config {} search WORDS` finds addresses",
            home.config_path().display()
        )),
        "the suggested command carries --config: {}",
        unknown.stderr
    );
}

#[test]
fn no_colour_reaches_a_pipe_unless_asked_for() {
    let home = Home::new();
    home.write_config("");
    // `exec` with no sources warns through the log layer.
    let mut auto = home.command(&["exec", "-"]);
    auto.env_remove("NO_COLOR");
    let plain = crate::support::Run::with_stdin(&mut auto, "return 1");
    assert!(
        plain.stderr.contains("no sources are configured"),
        "{}",
        plain.stderr
    );
    assert!(!plain.stderr.contains('\u{1b}'), "{:?}", plain.stderr);
    let mut always = home.command(&["--color", "always", "exec", "-"]);
    always.env_remove("NO_COLOR");
    let coloured = crate::support::Run::with_stdin(&mut always, "return 1");
    assert!(coloured.stderr.contains('\u{1b}'), "{:?}", coloured.stderr);
}

#[test]
fn run_ids_by_prefix_and_approve_without_an_id() {
    let home = Home::new();
    counter_config(&home);
    let nothing = home.run(&["hub", "approve"]);
    assert_eq!(nothing.code, 1, "{}", nothing.stderr);
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let run_id = paused["runId"].as_str().unwrap().to_string();
    // The only waiting run needs no id.
    let approved = home.run(&["hub", "approve"]).ok();
    assert!(approved.stdout.contains(&run_id), "{}", approved.stdout);
    assert!(
        approved
            .stdout
            .contains(&format!("capabilities exec --resume {run_id}")),
        "{}",
        approved.stdout
    );
    let prefix = &run_id[..10];
    let resumed = home.run(&["exec", "--resume", prefix, "--json"]);
    assert_eq!(
        envelope(&resumed)["status"],
        "completed",
        "{}",
        resumed.stderr
    );

    // Two waiting runs: a bare `hub approve` lists both and decides nothing.
    let one = envelope(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let two = envelope(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let (one, two) = (
        one["runId"].as_str().unwrap(),
        two["runId"].as_str().unwrap(),
    );
    let several = home.run(&["hub", "approve"]).fails();
    assert!(
        several.stderr.contains(one) && several.stderr.contains(two),
        "{}",
        several.stderr
    );
    let ambiguous = home.run(&["hub", "deny", "run_"]).fails();
    assert!(
        ambiguous.stderr.contains("several run ids"),
        "{}",
        ambiguous.stderr
    );
    home.run(&["hub", "deny", &two[..12]]).ok();
    let missing = home.run(&["hub", "deny", "run_nosuchrun"]).fails();
    assert!(
        missing.stderr.contains("there is no run `run_nosuchrun`"),
        "{}",
        missing.stderr
    );
    // A pasted screenful is not repeated back whole.
    let pasted = format!("run_{}", "x".repeat(100_000));
    let missing = home.run(&["hub", "deny", &pasted]).fails();
    assert!(
        missing
            .stderr
            .contains(&format!("there is no run `run_{}…(+", "x".repeat(76)))
            && missing.stderr.len() < 400,
        "{} bytes",
        missing.stderr.len()
    );
}

#[test]
fn call_runs_one_tool_under_policy() {
    let home = Home::new();
    everything(&home);
    let echoed = home
        .run(&["call", "everything.echo", r#"{"message":"from a shell"}"#])
        .ok();
    assert!(echoed.stdout.contains("from a shell"), "{}", echoed.stdout);
    let bad = home.run(&["call", "everything.echo", "[1]"]).fails();
    assert!(bad.stderr.contains("JSON object"), "{}", bad.stderr);

    let home = Home::new();
    counter_config(&home);
    // Not at a terminal, a call that asks waits, like a script's, and says how to go on.
    let waits = home.run(&["call", "counter.publish", r#"{"key":"x"}"#]);
    assert_eq!(waits.code, 3, "{}", waits.stderr);
    assert!(
        waits.stderr.contains("capabilities exec --resume run_"),
        "{}",
        waits.stderr
    );
}

#[test]
fn source_disable_and_enable_edit_the_config() {
    let home = Home::new();
    home.write_config("[sources.a]\ncommand = \"x\"\n[sources.b]\ncommand = \"y\"\n");
    let off = home.run(&["source", "disable", "a"]).ok();
    assert!(off.stdout.contains("Disabled `a`"), "{}", off.stdout);
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(text.contains("enabled = false"), "{text}");
    let again = home.run(&["source", "disable", "a"]).ok();
    assert!(
        again.stdout.contains("already disabled"),
        "{}",
        again.stdout
    );
    // What a disabled source is asked for says how to turn it on.
    let tested = home.run(&["source", "test", "a"]).fails();
    assert!(
        tested.stderr.contains("`capabilities source enable a`"),
        "{}",
        tested.stderr
    );
    let called = crate::support::Run::with_stdin(
        &mut home.command(&["exec", "-", "--json"]),
        "return await a.anything({})",
    );
    assert!(
        called
            .stdout
            .contains("`capabilities source enable a` turns it on"),
        "{}",
        called.stdout
    );
    home.run(&["source", "enable", "a"]).ok();
    let text = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(!text.contains("enabled"), "{text}");
    let unknown = home.run(&["source", "enable", "c"]).fails();
    assert!(
        unknown.stderr.contains("known sources: a, b"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn json_on_doctor_policy_and_source_test() {
    let home = Home::new();
    // A fresh machine without a keychain (the tests have no D-Bus session) and nothing stored:
    // doctor warns, and does not fail.
    let doctor = home.run(&["doctor", "--json"]).ok();
    let body = json(&doctor.stdout);
    assert_eq!(body["ok"], true, "{body}");
    let text = home.run(&["doctor"]).ok();
    assert!(text.stdout.contains("warn "), "{}", text.stdout);
    // Doing what it advises (a secret in the file store) does not turn the warning into a failure.
    let mut stored = home.command(&["credential", "set", "foo", "--store", "file"]);
    stored.env("CAPABILITIES_PASSPHRASE", "correct horse battery staple");
    crate::support::Run::with_stdin(&mut stored, "a-long-enough-value").ok();
    let mut after = home.command(&["doctor", "--json"]);
    after.env("CAPABILITIES_PASSPHRASE", "correct horse battery staple");
    let after = crate::support::Run::of(&mut after);
    assert_eq!(json(&after.stdout)["ok"], true, "{}", after.stdout);

    everything(&home);
    let tested = json(
        &home
            .run(&["source", "test", "everything", "--json"])
            .ok()
            .stdout,
    );
    assert_eq!(tested["status"], "ready", "{tested}");
    assert!(tested["toolCount"].as_u64().unwrap() > 3);
    let shown = json(&home.run(&["policy", "show", "--json"]).ok().stdout);
    assert!(shown["defaults"]["default"].is_string(), "{shown}");
    let explained = json(
        &home
            .run(&["policy", "explain", "everything.echo", "--json"])
            .ok()
            .stdout,
    );
    assert!(
        explained["action"].is_string() && explained["reason"].is_string(),
        "{explained}"
    );

    home.write_config("[sources.broken]\ncommand = \"/nonexistent/server\"\n");
    let broken = home.run(&["source", "test", "broken", "--json"]).fails();
    assert_eq!(json(&broken.stdout)["status"], "failed");

    // A config that does not load is one problem, not one more for each check that reads it.
    home.write_config("[sources.a]\ncommand = \"x\"\nbogus = 1\n");
    let doctor = json(&home.run(&["doctor", "--json"]).fails().stdout);
    assert_eq!(doctor["problems"], 1, "{doctor}");
}

#[test]
fn config_mistakes_say_what_is_wrong() {
    let home = Home::new();
    let missing = home
        .run(&["--config", "/missing.toml", "search", "x"])
        .fails();
    assert!(
        missing
            .stderr
            .contains("/missing.toml (from --config) does not exist"),
        "{}",
        missing.stderr
    );
    home.write_config("[sources.a]\ncommand = \"x\"\n");
    let refused = home.run(&["policy", "set", "nosuch.*", "deny"]).fails();
    let quotes_a_line = refused
        .stderr
        .split("config.toml:")
        .skip(1)
        .any(|after| after.starts_with(|c: char| c.is_ascii_digit()));
    assert!(
        refused.stderr.contains("the change was not written") && !quotes_a_line,
        "no line of a text never written: {}",
        refused.stderr
    );
}

#[test]
fn man_pages_show_with_their_sections() {
    let home = Home::new();
    let page = home.run(&["man", "search"]).ok();
    for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES", ".nh"] {
        assert!(page.stdout.contains(section), "{section}:\n{}", page.stdout);
    }
    let nested = home.run(&["man", "hub", "serve"]).ok();
    assert!(
        nested.stdout.contains("capabilities\\-hub\\-serve"),
        "{}",
        nested.stdout
    );
    let none = home.run(&["man", "nosuch"]).fails();
    assert!(none.stderr.contains("there is no page"), "{}", none.stderr);
    let dir = home.path().join("man1");
    home.run(&["man", "--install", dir.to_str().unwrap()]).ok();
    assert!(dir.join("capabilities-source-enable.1").exists());
}

#[test]
fn hub_serve_on_a_terminal_says_what_it_is_on_stderr() {
    use crate::dashboard::{Tmux, quoted};
    let home = Home::new();
    home.write_config("");
    let script = format!(
        "CAPABILITIES_HOME={} NO_COLOR=1 {} hub serve 2>&1; echo \"hub exited $?\"; sleep 60",
        quoted(&home.path().display().to_string()),
        quoted(env!("CARGO_BIN_EXE_capabilities")),
    );
    let tmux = Tmux::start(&home, 200, 20, &script);
    let screen = tmux.wait_for("speaks MCP on stdin/stdout");
    assert!(screen.contains("install print"), "{screen}");
    // Started by a client (stdin a pipe), it says nothing: its stderr is the client's log.
    let quiet = crate::support::Run::with_stdin(&mut home.command(&["hub", "serve"]), "");
    assert!(!quiet.stderr.contains("speaks MCP"), "{}", quiet.stderr);
}

/// Every verb's JSON names its keys alike (camelCase, as the envelope and `hub runs` do), so a
/// script reading one reads them all.
#[test]
fn json_keys_are_camel_case_in_every_verb() {
    let home = Home::new();
    home.write_config("[credentials]\nstore = \"file\"\n\n[sources.s]\ncommand = \"x\"\nenv = { T = \"${secret:t}\" }\n");
    home.run(&["token", "create", "laptop"]).ok();
    let mut listed = home.command(&["credential", "list", "--json"]);
    listed.env("CAPABILITIES_PASSPHRASE", "correct horse battery staple");
    let credentials = json(&crate::support::Run::of(&mut listed).ok().stdout);
    let tokens = json(&home.run(&["token", "list", "--json"]).ok().stdout);
    for (verb, rows) in [("credential list", &credentials), ("token list", &tokens)] {
        let rows = rows.as_array().unwrap_or_else(|| panic!("{verb}: a list"));
        assert!(!rows.is_empty(), "{verb}: {rows:?}");
        for row in rows {
            for key in row.as_object().unwrap().keys() {
                assert!(
                    !key.contains('_'),
                    "{verb}: `{key}` is not camelCase: {row}"
                );
            }
        }
    }
    assert!(tokens[0]["createdAtMs"].is_u64(), "{tokens}");
    assert_eq!(
        credentials[0]["usedBy"],
        serde_json::json!(["s"]),
        "{credentials}"
    );
}
