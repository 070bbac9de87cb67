//! `--profile NAME` on every verb that reads or runs the catalogue: `search`, `describe`, `exec`,
//! `source list`, `policy show|set|explain`, `dashboard` and `install`, against server-everything
//! and the Python ledger server. Under a profile a verb sees only the profile's sources, decides
//! by the profile's rules, and says which profile it is; an unknown one is refused by every verb
//! with the profiles there are.

use serde_json::{Value, json};

use crate::approvals::envelope;
use crate::common::{everything_js, repo};
use crate::raw::Raw;
use crate::support::{Home, Run};

/// server-everything and the ledger server; the config denies every ledger tool, and profile
/// `work` (the ledger alone) allows `ledger.write`.
fn config(home: &Home) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n\
         [sources.ledger]\ncommand = {}\nargs = [{}]\nenv = {{ LEDGER_FILE = {} }}\n\n\
         [policy]\ndefault = \"allow\"\n\n\
         [[policy.rules]]\nmatch = \"ledger.*\"\naction = \"deny\"\n\n\
         [profiles.work]\nsources = [\"ledger\"]\n\n\
         [[profiles.work.rules]]\nmatch = \"ledger.write\"\naction = \"allow\"\n",
        json!(everything_js()),
        json!(repo().join(".venv/bin/python").display().to_string()),
        json!(
            repo()
                .join("tests/peers/ledger_server.py")
                .display()
                .to_string()
        ),
        json!(home.path().join("ledger.txt").display().to_string()),
    ));
}

const HEADER: &str = "profile: work (sources: ledger)";
const UNKNOWN: &str = "there is no profile `nope`; profiles in the config: work";

fn exec_json(home: &Home, args: &[&str], code: &str) -> (Run, Value) {
    let run = Run::with_stdin(&mut home.command(args), code);
    let envelope = envelope(&run);
    (run, envelope)
}

#[test]
fn search_under_a_profile_lists_only_its_tools_by_its_rules_after_a_header() {
    let home = Home::new();
    config(&home);
    let work = home
        .run(&["search", "write an entry", "--profile", "work"])
        .ok();
    assert!(
        work.stdout.starts_with(&format!("{HEADER}\n\n")),
        "{}",
        work.stdout
    );
    assert!(work.stdout.contains("ledger.write("), "{}", work.stdout);
    assert!(!work.stdout.contains("everything"), "{}", work.stdout);
    // The whole config denies the ledger's tools: hidden, and no header.
    // Every match hidden is no match: exit 1, and stderr says why.
    let whole = home.run(&["search", "write an entry"]).fails();
    assert!(!whole.stdout.starts_with("profile:"), "{}", whole.stdout);
    assert!(!whole.stdout.contains("ledger.write("), "{}", whole.stdout);
    assert!(
        whole.stderr.contains("hidden by policy"),
        "{}",
        whole.stderr
    );
    // A source outside the profile is not there to list, and the error says why.
    let outside = home
        .run(&[
            "search",
            "",
            "--namespace",
            "everything",
            "--profile",
            "work",
        ])
        .fails();
    assert!(
        outside.stderr.contains("no source named `everything`")
            && outside
                .stderr
                .contains("only the sources of profile `work` were looked in (ledger)"),
        "{}",
        outside.stderr
    );
}

#[test]
fn describe_under_a_profile_sees_its_tools_and_policy_only() {
    let home = Home::new();
    config(&home);
    let work = home
        .run(&["describe", "ledger.write", "--profile", "work"])
        .ok();
    assert!(work.stdout.contains("write"), "{}", work.stdout);
    // Denied by the whole config's rules, so not described there.
    home.run(&["describe", "ledger.write"]).fails();
    let outside = home
        .run(&["describe", "everything.echo", "--profile", "work"])
        .fails();
    assert!(
        outside.stderr.contains("profile `work`"),
        "{}",
        outside.stderr
    );
    home.run(&["describe", "everything.echo"]).ok();
}

#[test]
fn policy_under_a_profile_shows_and_explains_its_rules() {
    let home = Home::new();
    config(&home);
    // policy reads cached listings only: a search lists every source first.
    home.run(&["search", "echo"]).ok();
    let work = home
        .run(&["policy", "explain", "ledger.write", "--profile", "work"])
        .ok();
    assert!(
        work.stdout
            .starts_with("ledger.write through connection `default` under profile `work`: allow"),
        "{}",
        work.stdout
    );
    let whole = home.run(&["policy", "explain", "ledger.write"]).ok();
    assert!(
        whole
            .stdout
            .starts_with("ledger.write through connection `default`: deny"),
        "{}",
        whole.stdout
    );
    let outside = home
        .run(&["policy", "explain", "everything.echo", "--profile", "work"])
        .fails();
    assert!(
        outside
            .stderr
            .contains("`everything.echo` is not in profile `work`"),
        "{}",
        outside.stderr
    );
    let shown = home.run(&["policy", "show", "--profile", "work"]).ok();
    assert!(shown.stdout.starts_with(HEADER), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("allow  ledger.write") && !shown.stdout.contains("ledger.*"),
        "{}",
        shown.stdout
    );
    // A rule set for the profile goes to its rules, and applies under it only.
    home.run(&[
        "policy",
        "set",
        "ledger.slowWrite",
        "deny",
        "--profile",
        "work",
    ])
    .ok();
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    let profile_part = &config[config.find("[profiles.work]").unwrap()..];
    assert!(
        profile_part.contains("ledger.slowWrite"),
        "the rule is the profile's: {config}"
    );
    let denied = home
        .run(&["policy", "explain", "ledger.slowWrite", "--profile", "work"])
        .ok();
    assert!(denied.stdout.contains(": deny"), "{}", denied.stdout);
}

#[test]
fn source_list_under_a_profile_lists_only_its_sources_and_names_it() {
    let home = Home::new();
    config(&home);
    let work = home.run(&["source", "list", "--profile", "work"]).ok();
    assert!(work.stdout.starts_with(HEADER), "{}", work.stdout);
    let rows: Vec<&str> = work
        .stdout
        .lines()
        .skip_while(|line| !line.starts_with("NAME"))
        .skip(1)
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(rows.len(), 1, "{}", work.stdout);
    assert!(rows[0].starts_with("ledger "), "{}", work.stdout);
    let json: Value = serde_json::from_str(
        &home
            .run(&["source", "list", "--profile", "work", "--json"])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json[0]["name"], "ledger");
}

#[test]
fn exec_under_a_profile_uses_its_sources_and_rules_and_names_it_in_the_envelope() {
    let home = Home::new();
    config(&home);
    let (done, work) = exec_json(
        &home,
        &["exec", "-", "--json", "--profile", "work"],
        r#"return await ledger.write({ key: "A" });"#,
    );
    assert_eq!(done.code, 0, "{work}\n{}", done.stderr);
    assert_eq!(work["profile"], "work", "{work}");
    assert_eq!(work["result"]["result"], "wrote A", "{work}");

    // A source the profile leaves out is not there, and the error says so.
    let (failed, outside) = exec_json(
        &home,
        &["exec", "-", "--json", "--profile", "work"],
        r#"return await everything.echo({ message: "hi" });"#,
    );
    assert_eq!(failed.code, 1, "{outside}");
    assert_eq!(outside["error"]["code"], "runtime_error", "{outside}");
    assert_eq!(
        outside["error"]["message"],
        "source `everything` is not in profile `work`, which this run uses (its sources: ledger), so the script cannot use it",
        "{outside}"
    );

    // `hub.search` inside a script starts with the same header as `search`.
    let (_, found) = exec_json(
        &home,
        &["exec", "-", "--json", "--profile", "work"],
        r#"return await hub.search("write an entry");"#,
    );
    let text = found["result"].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("{HEADER}\n\n")), "{found}");

    // Without a profile: the whole config, and no `profile` in the envelope.
    let (done, whole) = exec_json(
        &home,
        &["exec", "-", "--json"],
        r#"return await everything.echo({ message: "hi" });"#,
    );
    assert_eq!(done.code, 0, "{whole}");
    assert!(whole.get("profile").is_none(), "{whole}");
    let (_, found) = exec_json(
        &home,
        &["exec", "-", "--json"],
        r#"return await hub.search("echo");"#,
    );
    assert!(
        !found["result"]
            .as_str()
            .unwrap_or_default()
            .starts_with("profile:"),
        "{found}"
    );
}

#[test]
fn the_hub_s_search_under_a_profile_starts_with_the_header() {
    let home = Home::new();
    config(&home);
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--profile", "work"]));
    hub.initialize("2025-11-25");
    let answer = hub.call(1, "search", json!({ "query": "write an entry" }));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with(&format!("{HEADER}\n\n")), "{answer}");
    assert!(!text.contains("everything"), "{answer}");
    assert_eq!(hub.close(), Some(0));
    let mut whole = Raw::hub(&home);
    whole.initialize("2025-11-25");
    let answer = whole.call(1, "search", json!({ "query": "echo" }));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(!text.starts_with("profile:"), "{answer}");
    assert_eq!(whole.close(), Some(0));
}

#[test]
fn install_print_with_a_profile_starts_the_hub_with_it() {
    let home = Home::new();
    config(&home);
    let run = home.run(&["install", "print", "--profile", "work"]).ok();
    let snippet: Value = serde_json::from_str(&run.stdout).unwrap();
    let args = &snippet["mcpServers"]["capabilities"]["args"];
    assert_eq!(
        args,
        &json!(["hub", "serve", "--profile", "work"]),
        "{snippet}"
    );
}

#[test]
fn an_unknown_profile_is_refused_by_every_verb_with_the_known_ones() {
    let home = Home::new();
    config(&home);
    for args in [
        &["search", "echo", "--profile", "nope"][..],
        &["describe", "everything.echo", "--profile", "nope"],
        &["exec", "-", "--profile", "nope"],
        &["exec", "--resume", "run_x", "--profile", "nope"],
        &["source", "list", "--profile", "nope"],
        &["policy", "show", "--profile", "nope"],
        &["policy", "explain", "everything.echo", "--profile", "nope"],
        &[
            "policy",
            "set",
            "everything.echo",
            "ask",
            "--profile",
            "nope",
        ],
        &["dashboard", "--profile", "nope"],
        &["install", "print", "--profile", "nope"],
        &["hub", "serve", "--profile", "nope"],
    ] {
        let run = Run::with_stdin(&mut home.command(args), "return 1");
        assert_eq!(run.code, 1, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(UNKNOWN), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        !config.contains("everything.echo"),
        "a refused `policy set` wrote nothing: {config}"
    );
}
