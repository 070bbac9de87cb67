//! Approvals over MCP elicitation with the Python `mcp` client in 2026-07-28 mode: the form shows
//! the call and the four choices; accept runs the call once, decline denies it; a tampered,
//! replayed or expired `requestState` is refused. Over stateless HTTP, a form one hub process
//! asked is answered at another that shares only the state store, and a client with a bearer
//! token cannot answer "always" (a rule that would outlast the token and bind every client).

use crate::approvals::{counter_config, counts};
use crate::common::{json_report, python_peer};
use crate::hub_http::{HttpHub, create_token};
use crate::support::Home;

#[test]
fn the_python_client_decides_through_the_form() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let database = home.path().join("data/state.sqlite");
    let report = json_report(
        python_peer("elicit_client.py")
            .arg(&database)
            .arg(env!("CARGO_BIN_EXE_capabilities"))
            .args(["hub", "serve"])
            .env("CAPABILITIES_HOME", home.path())
            // Never the developer\'s own keychain: the store keys itself with a key file.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("CAPABILITIES_CONFIG")
            .env_remove("DISPLAY"),
    );

    assert_eq!(report["accept"]["status"], "completed", "{report}");
    assert_eq!(
        report["accept"]["result"]["published"]["result"], 1,
        "{report}"
    );
    let form = &report["form"];
    let message = form["message"].as_str().unwrap_or("");
    assert!(
        message.contains("counter.publish") && message.contains("key: \"accept\""),
        "{form}"
    );
    let choices: Vec<&str> = form["requestedSchema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .expect("four choices")
        .iter()
        .filter_map(|c| c["const"].as_str())
        .collect();
    assert_eq!(choices, ["allow_once", "allow_run", "allow_always", "deny"]);
    assert!(
        !form.to_string().contains("http"),
        "no URL in the form: {form}"
    );

    assert_eq!(report["decline"]["status"], "completed", "{report}");
    assert_eq!(
        report["decline"]["result"]["published"], "policy_denied",
        "{report}"
    );

    assert!(
        report["tampered"]
            .as_str()
            .unwrap_or("")
            .contains("not one this hub signed"),
        "{report}"
    );
    assert_eq!(report["replay_first"]["status"], "completed", "{report}");
    assert!(
        report["replayed"]
            .as_str()
            .unwrap_or("")
            .contains("already answered"),
        "{report}"
    );
    assert!(
        report["expired"].as_str().unwrap_or("").contains("expired"),
        "{report}"
    );

    let counts = counts(&counts_file);
    assert_eq!(counts["publish:accept"], 1, "{counts}");
    assert_eq!(
        counts["publish:replay"], 1,
        "the replayed answer ran nothing: {counts}"
    );
    assert_eq!(counts.get("publish:decline"), None, "{counts}");
    assert_eq!(counts.get("publish:tamper"), None, "{counts}");
    assert_eq!(counts.get("publish:expire"), None, "{counts}");
    assert_eq!(counts["write:accept-2"], 1, "{counts}");

    let decided_by: Vec<String> = crate::support::block_on(async {
        let store = capabilities::runs::Store::open(&database, None)
            .await
            .expect("store");
        let mut decided_by = Vec::new();
        for run in store.runs().summaries(20).await.expect("runs") {
            let approvals = store
                .approvals()
                .of_run(&run.run_id)
                .await
                .expect("approvals");
            decided_by.extend(approvals.into_iter().filter_map(|a| a.decided_by));
        }
        decided_by
    });
    assert!(
        decided_by.iter().all(|c| c == "elicitation"),
        "{decided_by:?}"
    );
    assert_eq!(
        decided_by.len(),
        3,
        "accept, decline and the first replay answer: {decided_by:?}"
    );
}

#[test]
fn a_form_asked_by_one_http_hub_is_answered_at_another() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let token = create_token(&home, &["approver"]);
    let hub_a = HttpHub::start(&home, &[]);
    let hub_b = HttpHub::start(&home, &[]);
    let report = json_report(python_peer("elicit_http_client.py").args([
        &hub_a.url(),
        &hub_b.url(),
        &token,
    ]));
    assert_eq!(report["asked"], "input_required", "{report}");
    let choices: Vec<&str> = report["form"]["approval"]["params"]["requestedSchema"]["properties"]
        ["decision"]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("a form with choices: {report}"))
        .iter()
        .filter_map(|c| c["const"].as_str())
        .collect();
    assert_eq!(
        choices,
        ["allow_once", "allow_run", "deny"],
        "a client with a token is not offered a lasting rule: {report}"
    );
    assert!(
        report["always"]
            .as_str()
            .unwrap_or("")
            .contains("not a lasting rule"),
        "{report}"
    );
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        !config.contains("counter.publish"),
        "no rule was written:\n{config}"
    );
    assert_eq!(report["done"]["status"], "completed", "{report}");
    assert_eq!(
        report["done"]["result"]["published"]["result"], 1,
        "{report}"
    );
    assert!(
        report["replayed"]
            .as_str()
            .unwrap_or("")
            .contains("already answered"),
        "hub B refuses the same state twice: {report}"
    );
    let counts = counts(&counts_file);
    assert_eq!(counts["write:http-1"], 1, "{counts}");
    assert_eq!(counts["publish:http"], 1, "{counts}");
}

#[test]
fn with_token_clients_approve_off_a_token_client_is_given_no_form_and_cannot_answer_one() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let token = create_token(&home, &["approver"]);
    let hub = HttpHub::start(&home, &[]);
    // A form given out while the policy allowed it.
    let earlier = json_report(python_peer("elicit_http_client.py").args([&hub.url(), "-", &token]));
    assert_eq!(earlier["asked"], "input_required", "{earlier}");
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    std::fs::write(
        home.config_path(),
        format!("[policy]\ntoken_clients_approve = false\n\n{config}"),
    )
    .expect("write config");
    // The running hub reads its policy again; a fresh one for certain.
    drop(hub);
    let hub = HttpHub::start(&home, &[]);
    let report = json_report(python_peer("elicit_http_client.py").args([&hub.url(), "-", &token]));
    assert_eq!(report["asked"], "complete", "{report}");
    assert_eq!(
        report["envelope"]["status"], "awaiting_approval",
        "{report}"
    );
    assert_eq!(report["form"], serde_json::Value::Null, "{report}");
    // The earlier form, answered now, decides nothing.
    let state = earlier["state"].as_str().expect("the earlier form's state");
    let answered = json_report(python_peer("elicit_http_client.py").args([
        hub.url(),
        format!("answer:{state}"),
        token,
    ]));
    assert!(
        answered["answered"]
            .as_str()
            .is_some_and(|e| e.contains("token_clients_approve = false")),
        "{answered}"
    );
    // Nothing past the first write of either run ran.
    let counts = counts(&counts_file);
    assert_eq!(counts["write:http-1"], 2, "{counts}");
    assert_eq!(counts.get("publish:http"), None, "{counts}");
}
