//! Runs at rest: what `exec` stores about a run (script, call results, envelope) is encrypted;
//! `doctor` says where the key is; a lost key is named with the way out, and nothing is
//! rewritten under another key.

use std::path::Path;

use crate::approvals::{counter_config, exec};
use crate::support::Home;

const SCRIPT: &str = r#"
const written = await counter.write({ key: "ARGUMENT-MARKER" });
return { said: "RETURNED-MARKER", written };
"#;

/// The database and its write-ahead log, as a reader of the files would see them.
fn database_bytes(data_dir: &Path) -> Vec<u8> {
    ["state.sqlite", "state.sqlite-wal"]
        .iter()
        .filter_map(|name| std::fs::read(data_dir.join(name)).ok())
        .flatten()
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn exec_stores_nothing_readable_and_a_lost_key_is_named() {
    let home = Home::new();
    counter_config(&home);
    let run = exec(&home, &["exec", "-", "--json"], SCRIPT).ok();
    assert!(run.stdout.contains("RETURNED-MARKER"), "{}", run.stdout);
    let data = home.path().join("data");
    let stored = database_bytes(&data);
    assert!(!stored.is_empty());
    for marker in ["ARGUMENT-MARKER", "RETURNED-MARKER"] {
        assert!(
            !contains(&stored, marker),
            "{marker} is readable in the state store"
        );
    }

    // With no keychain here, the key is in a file beside the store, and doctor says what that
    // protects.
    assert!(data.join("state.key").exists());
    let doctor = home.run(&["doctor"]);
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.contains("runs"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("state.key") && line.starts_with("note"),
        "{}",
        doctor.stdout
    );

    let runs = home.run(&["hub", "runs", "--json"]).ok();
    assert!(runs.stdout.contains("counter.write"), "{}", runs.stdout);

    std::fs::remove_file(data.join("state.key")).expect("remove the key");
    let refused = home.run(&["hub", "runs", "--json"]).fails();
    assert!(
        refused.stderr.contains("state.key")
            && refused.stderr.contains("capabilities hub runs --clear"),
        "{}",
        refused.stderr
    );
    let refused = exec(&home, &["exec", "-"], "return 1");
    assert_ne!(refused.code, 0, "no run is stored under a new key");
    assert!(refused.stderr.contains("state.key"), "{}", refused.stderr);
    assert!(
        !data.join("state.key").exists(),
        "no new key replaced the lost one"
    );

    // The way out the message gives: the runs go, the tokens stay, and runs work again.
    home.run(&["token", "create", "laptop"]).ok();
    // Without a terminal to ask on, nothing is deleted until it is confirmed.
    let unconfirmed = home.run(&["hub", "runs", "--clear"]).fails();
    assert!(
        unconfirmed.stderr.contains("confirm it with --yes"),
        "{}",
        unconfirmed.stderr
    );
    let cleared = home.run(&["hub", "runs", "--clear", "--yes"]).ok();
    assert!(
        cleared.stdout.contains("Deleted 1 run(s)"),
        "{}",
        cleared.stdout
    );
    exec(&home, &["exec", "-"], "return 1").ok();
    let runs = home.run(&["hub", "runs", "--json"]).ok();
    let listed: serde_json::Value = serde_json::from_str(&runs.stdout).expect("JSON");
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{}", runs.stdout);
    assert!(home.run(&["token", "list"]).ok().stdout.contains("laptop"));
}
