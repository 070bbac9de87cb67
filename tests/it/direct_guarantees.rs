//! Direct mode's gate attacked as code mode's is (guarantees.rs): the same call sent several
//! times at once makes one run and, once allowed, one write; an allowance given to one bearer
//! token's call never runs another token's identical call, nor can that token answer the other's
//! approval form; a hub killed with `kill -9` while the
//! call was out makes the same call report that its outcome is unknown instead of sending it
//! again. Writes are counted by tests/peers/ledger_server.py.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{json_report, python_peer};
use crate::guarantees::{ledger_config, wait_for_line, writes};
use crate::hub_http::{HttpHub, create_token};
use crate::raw::Raw;
use crate::support::Home;

const ASK_WRITES: &str = "[[policy.rules]]\nmatch = \"ledger.write\"\naction = \"ask\"\n";

/// Sends `count` identical `ledger_write` calls at once (ids from `first_id`) to a hub that
/// does not elicit, and returns their results.
fn at_once(hub: &mut Raw, first_id: u64, count: u64) -> Vec<Value> {
    for id in first_id..first_id + count {
        hub.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": { "name": "ledger_write", "arguments": { "key": "once" } } })
            .to_string(),
        );
    }
    (0..count).map(|_| hub.next()["result"].clone()).collect()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The run a "a person must decide" answer names.
fn waiting_run(result: &Value) -> Option<String> {
    let text = text(result);
    let start = text.find("hub approve ")? + "hub approve ".len();
    let rest = &text[start..];
    Some(rest[..rest.find('`')?].to_string())
}

#[test]
fn identical_calls_sent_at_once_wait_on_one_run_and_write_once_when_allowed() {
    let home = Home::new();
    let ledger = ledger_config(&home, ASK_WRITES);
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
    hub.initialize("2025-11-25");

    let asked = at_once(&mut hub, 1, 4);
    let runs: BTreeSet<Option<String>> = asked.iter().map(waiting_run).collect();
    assert_eq!(runs.len(), 1, "one run for four identical calls: {asked:?}");
    let Some(Some(run_id)) = runs.into_iter().next() else {
        panic!("the calls did not wait for a person: {asked:?}");
    };
    home.run(&["hub", "approve", &run_id]).ok();

    let answered = at_once(&mut hub, 10, 4);
    assert_eq!(writes(&ledger), ["write once"], "{answered:?}");
    let ran: Vec<&Value> = answered
        .iter()
        .filter(|r| r["isError"] != json!(true))
        .collect();
    assert_eq!(ran.len(), 1, "{answered:?}");
    // Allowed once: the other three wait again, on one new run.
    let again: BTreeSet<Option<String>> = answered
        .iter()
        .filter(|r| r["isError"] == json!(true))
        .map(waiting_run)
        .collect();
    assert_eq!(again.len(), 1, "{answered:?}");
    assert!(
        again
            .iter()
            .all(|r| r.as_ref().is_some_and(|r| *r != run_id)),
        "{answered:?}"
    );
    hub.close();
}

#[test]
fn an_allowance_for_one_tokens_call_never_runs_another_tokens_identical_call() {
    let home = Home::new();
    let ledger = ledger_config(&home, ASK_WRITES);
    let token_a = create_token(&home, &["agent-a"]);
    let token_b = create_token(&home, &["agent-b"]);
    let hub = HttpHub::start(&home, &["--direct"]);
    let report = json_report(
        python_peer("direct_client.py")
            .args([
                "tokens",
                env!("CARGO_BIN_EXE_capabilities"),
                &hub.url(),
                &token_a,
                &token_b,
            ])
            .env("CAPABILITIES_HOME", home.path())
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("CAPABILITIES_CONFIG"),
    );
    assert_eq!(report["approve"]["code"], 0, "{report}");
    let asked_b = &report["askedB"];
    assert_eq!(asked_b["isError"], true, "{report}");
    assert!(
        asked_b["text"]
            .as_str()
            .is_some_and(|t| t.contains("a person must decide")
                && !t.contains(report["approve"]["runId"].as_str().unwrap_or("-"))),
        "B's call waits on a run of its own: {report}"
    );
    assert_eq!(report["ranA"]["isError"], false, "{report}");
    assert!(
        report["formAnsweredByB"]
            .as_str()
            .is_some_and(|e| e.contains("another client's or another tool's call")),
        "{report}"
    );
    assert_eq!(report["formAnsweredByA"]["isError"], false, "{report}");
    assert_eq!(writes(&ledger), ["write shared", "write form"], "{report}");
}

#[test]
fn a_call_whose_hub_was_killed_mid_write_reports_an_unknown_outcome_and_is_not_sent_again() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    let call = json!({ "key": "k", "seconds": 600 });
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
    hub.initialize("2025-11-25");
    hub.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": { "name": "ledger_slowWrite", "arguments": call } })
        .to_string(),
    );
    wait_for_line(&ledger, "write k");
    hub.child.kill().expect("kill -9 the hub");
    hub.child.wait().expect("reap the hub");

    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
    hub.initialize("2025-11-25");
    let retried = hub.call(2, "ledger_slowWrite", call.clone())["result"].clone();
    assert_eq!(retried["isError"], true, "{retried}");
    let said = text(&retried);
    assert!(
        said.contains("ledger.slowWrite") && said.contains("may have taken effect"),
        "{retried}"
    );
    assert_eq!(writes(&ledger), ["write k"], "never sent a second time");
    hub.close();
}
