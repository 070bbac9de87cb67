//! Direct mode (`hub serve --direct`, a profile's `mode = "direct"`) with the Python `mcp`
//! client: each source's tool listed as `namespace_tool` with its upstream schemas and
//! annotations, denied tools not listed, calls through policy (a form for a 2026-07-28 client,
//! the approval command for an older one, then the same call runs once), `list_changed` when a
//! source adds a tool, a bearer token that narrows the list, and secrets blanked and refused
//! as in code mode.

use serde_json::{Value, json};

use crate::common::{json_report, mcp_server_time, python_peer, repo};
use crate::hub::inspector;
use crate::hub_http::{HttpHub, create_token};
use crate::large_results::rows_config;
use crate::raw::Raw;
use crate::support::Home;

/// counter (writes allowed, publish asks), changing (adds tools) and time (one tool denied).
fn config(home: &Home, profile: &str) {
    let python =
        |path: &str| serde_json::to_string(&repo().join(path).display().to_string()).unwrap();
    home.write_config(&format!(
        r#"[sources.counter]
command = {python}
args = [{counter}]
env = {{ COUNTER_FILE = {counts} }}

[sources.changing]
command = {python}
args = [{changing}]

[sources.time]
command = {time}

[[policy.rules]]
match = "counter.write"
action = "allow"

[[policy.rules]]
match = "changing.*"
action = "allow"

[[policy.rules]]
match = "time.convertTime"
action = "deny"
{profile}"#,
        python = python(".venv/bin/python"),
        counter = python("tests/peers/counter_server.py"),
        changing = python("tests/peers/changing_server.py"),
        counts =
            serde_json::to_string(&home.path().join("counts.json").display().to_string()).unwrap(),
        time = serde_json::to_string(&mcp_server_time()).unwrap(),
    ));
}

fn client(home: &Home, scenario: &str, hub_args: &[&str]) -> Value {
    let hub = env!("CARGO_BIN_EXE_capabilities");
    json_report(
        python_peer("direct_client.py")
            .args([scenario, hub, hub])
            .args(hub_args)
            .env("CAPABILITIES_HOME", home.path())
            // Never the developer's own keychain: the store keys itself with a key file.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("CAPABILITIES_CONFIG")
            .env_remove("DISPLAY"),
    )
}

#[test]
fn a_modern_client_lists_and_calls_each_tool_and_decides_through_a_form() {
    let home = Home::new();
    config(&home, "");
    let report = client(&home, "modern", &["hub", "serve", "--direct"]);
    let tools = report["tools"].as_object().expect("tools by name");
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "capabilities_read_result",
            "changing_addTool",
            "counter_counts",
            "counter_publish",
            "counter_write",
            "time_getCurrentTime",
        ],
        "the denied time.convertTime is not listed: {report}"
    );
    let publish = &tools["counter_publish"];
    assert_eq!(publish["annotations"]["destructiveHint"], true, "{publish}");
    assert_eq!(
        publish["inputSchema"]["properties"]["key"]["type"], "string",
        "{publish}"
    );
    assert!(
        publish["description"]
            .as_str()
            .is_some_and(|d| d.contains("Publish KEY")),
        "{publish}"
    );
    assert!(publish["outputSchema"].is_object(), "{publish}");

    assert_eq!(report["write"]["isError"], false, "{report}");
    assert_eq!(
        report["write"]["structured"],
        json!({ "result": 1 }),
        "{report}"
    );
    // Asked through the form, allowed once, run once.
    assert_eq!(
        report["publish"]["structured"],
        json!({ "result": 1 }),
        "{report}"
    );
    assert!(
        report["denied"]
            .as_str()
            .is_some_and(|e| e.contains("there is no tool `time_convertTime`")),
        "{report}"
    );
    assert_eq!(report["badArguments"]["isError"], true, "{report}");
    assert!(
        report["badArguments"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("key")),
        "{report}"
    );
    // A tool without an output schema answers in text (JSON here).
    let counts: Value =
        serde_json::from_str(report["counts"]["text"].as_str().unwrap_or_default()).unwrap();
    assert_eq!(counts["write:a"], 1, "{report}");
    assert_eq!(counts["publish:p"], 1, "{report}");

    assert!(
        report["tampered"]
            .as_str()
            .is_some_and(|e| e.contains("not one this hub signed")
                && e.contains("call counter_publish again with the same arguments")),
        "{report}"
    );

    assert_eq!(report["added"]["isError"], false, "{report}");
    assert!(
        report["toolsAfter"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("changing_fresh"))),
        "{report}"
    );
    assert_eq!(
        report["fresh"]["structured"]["result"], "fresh ran",
        "{report}"
    );
}

#[test]
fn an_older_client_is_told_who_decides_and_the_same_call_runs_once_allowed() {
    let home = Home::new();
    config(
        &home,
        "\n[profiles.direct]\nsources = [\"counter\", \"changing\"]\nmode = \"direct\"\nrules = [{ match = \"changing.*\", action = \"allow\" }]\n",
    );
    let report = client(&home, "legacy", &["hub", "serve", "--profile", "direct"]);
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report}");
    assert_eq!(
        report["tools"],
        json!([
            "capabilities_read_result",
            "changing_addTool",
            "counter_counts",
            "counter_publish",
            "counter_write"
        ]),
        "{report}"
    );
    let asked = &report["asked"];
    assert_eq!(asked["isError"], true, "{report}");
    let text = asked["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("a person must decide")
            && text.contains("call counter_publish again with exactly the same arguments"),
        "{report}"
    );
    // Asked again before anyone decided: still waiting, the same run.
    assert_eq!(report["askedAgain"]["text"], asked["text"], "{report}");
    assert_eq!(report["approve"]["code"], 0, "{report}");
    assert_eq!(
        report["afterApproval"]["structured"],
        json!({ "result": 1 }),
        "{report}"
    );
    // Allowed once: the next identical call asks again.
    assert_eq!(report["askedAfterRun"]["isError"], true, "{report}");
    let counts: Value =
        serde_json::from_str(report["counts"]["text"].as_str().unwrap_or_default()).unwrap();
    assert_eq!(counts["publish:q"], 1, "{report}");
    assert!(
        report["toolsAfter"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("changing_later"))),
        "{report}"
    );
}

#[test]
fn a_token_narrows_the_list_over_http() {
    let home = Home::new();
    config(&home, "");
    let token = create_token(&home, &["writer", "--allow", "counter.*"]);
    let hub = HttpHub::start(&home, &["--direct"]);
    let report = json_report(python_peer("direct_client.py").args([
        "http",
        env!("CARGO_BIN_EXE_capabilities"),
        &hub.url(),
        &token,
    ]));
    assert_eq!(
        report["tools"],
        json!([
            "capabilities_read_result",
            "counter_counts",
            "counter_publish",
            "counter_write"
        ]),
        "{report}"
    );
    assert!(
        report["hidden"]
            .as_str()
            .is_some_and(|e| e.contains("there is no tool `time_getCurrentTime`")),
        "{report}"
    );
    assert_eq!(
        report["write"]["structured"],
        json!({ "result": 1 }),
        "{report}"
    );
    // A form answered over HTTP runs the call (a debug build's worker stack once overflowed).
    assert_eq!(
        report["publish"]["structured"],
        json!({ "result": 1 }),
        "{report}"
    );
}

#[test]
fn an_unknown_mode_names_the_line_and_the_two_modes() {
    let home = Home::new();
    config(
        &home,
        "\n[profiles.p]\nsources = [\"counter\"]\nmode = \"fast\"\n",
    );
    let run = home.run(&["hub", "serve", "--profile", "p"]).fails();
    assert!(
        run.stderr.contains("profiles.p.mode: unknown mode `fast`")
            && run.stderr.contains("mode = \"direct\""),
        "{}",
        run.stderr
    );
}

#[test]
fn the_inspector_lists_and_calls_a_tool_in_both_eras() {
    let home = Home::new();
    config(&home, "");
    for era in ["legacy", "modern"] {
        let listed = inspector(&home, era, &["--direct"], &["--method", "tools/list"]);
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            names.contains(&"counter_write") && !names.contains(&"execute"),
            "{era}: {listed}"
        );
        let called = inspector(
            &home,
            era,
            &["--direct"],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "counter_write",
                "--tool-args-json",
                r#"{"key":"inspected"}"#,
            ],
        );
        assert_eq!(called["result"]["isError"], false, "{era}: {called}");
        assert!(
            called["result"]["structuredContent"]["result"].is_u64(),
            "{era}: {called}"
        );
    }
}

/// Direct mode keeps code mode's secret handling: a credential the upstream echoes (in a tool
/// error and in a JSON-RPC error) is blanked, and a call that carries it as an argument is
/// refused before it leaves.
#[test]
fn a_secret_is_blanked_from_answers_and_refused_as_an_argument() {
    let secret = "direct-mode-canary-7731";
    let home = Home::new().with_env("CANARY_SECRET_VALUE", secret);
    home.write_config(&format!(
        "[sources.canary]\ncommand = {}\nargs = [{}, \"stdio\"]\nenv = {{ CANARY_TOKEN = \"${{env:CANARY_SECRET_VALUE}}\" }}\n\n[policy]\ndefault = \"allow\"\n",
        serde_json::to_string(&repo().join(".venv/bin/python").display().to_string()).unwrap(),
        serde_json::to_string(&repo().join("tests/peers/canary_server.py").display().to_string())
            .unwrap(),
    ));
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
    hub.initialize("2025-11-25");
    let mut seen = String::new();
    for (id, kind) in [(1, "tool"), (2, "protocol")] {
        let answer = hub.call(id, "canary_leak", json!({ "kind": kind }));
        assert!(
            answer.to_string().contains("upstream rejected token"),
            "{answer}"
        );
        seen.push_str(&answer.to_string());
    }
    let refused = hub.call(
        3,
        "canary_echo",
        json!({ "text": format!("send {secret}") }),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    seen.push_str(&refused.to_string());
    assert!(
        !seen.contains(secret),
        "the secret reached the client: {seen}"
    );
    assert!(seen.contains("•••"), "{seen}");
    hub.close();
}

#[test]
fn a_result_too_large_to_send_is_stored_and_read_in_pages() {
    let home = Home::new();
    let calls = rows_config(&home, "");
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
    hub.initialize("2025-11-25");
    let answer = hub.call(1, "rows_listRows", json!({ "n": 2000, "width": 64 }));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("too large to send") && text.contains("capabilities_read_result"),
        "{answer}"
    );
    let described: Value =
        serde_json::from_str(text.lines().last().unwrap_or_default()).expect("the stored result");
    let result_ref = described["resultRef"].as_str().expect("resultRef");
    assert!(
        described["collections"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["path"] == "/rows" && c["rows"] == 2000)),
        "{described}"
    );

    let page = hub.call(
        2,
        "capabilities_read_result",
        json!({ "resultRef": result_ref, "path": "/rows", "fields": ["id"], "offset": 10 }),
    );
    assert_eq!(page["result"]["isError"], false, "{page}");
    let text = page["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains(r#"{"id":10}"#) && !text.contains("secret-body"),
        "{page}"
    );
    let refused = hub.call(3, "capabilities_read_result", json!({ "path": "/rows" }));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("`resultRef` is missing")),
        "{refused}"
    );
    // Read from the store: the provider ran once.
    assert_eq!(
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .collect::<Vec<_>>(),
        ["list 2000"]
    );
}

/// A tool that declares an output schema, answering with more than the output budget: the
/// Python SDK checks every successful answer's structured content against the schema, so the
/// stored result's answer must pass that check and still say how to read the result.
#[test]
fn a_stored_result_of_a_tool_with_an_output_schema_is_valid_for_a_checking_client() {
    let home = Home::new();
    rows_config(&home, "");
    let report = client(&home, "large", &["hub", "serve", "--direct"]);
    assert!(
        report["schemas"]["rows_listRowsTyped"].is_object(),
        "{report}"
    );
    assert!(report["schemas"]["rows_bigAnswer"].is_object(), "{report}");

    // A schema any object satisfies: the reference goes out as the structured content.
    let rows = &report["rows"];
    assert!(rows.get("raised").is_none(), "{report}");
    assert_eq!(rows["isError"], false, "{report}");
    assert!(
        rows["structured"]["resultRef"].is_string()
            && rows["text"]
                .as_str()
                .is_some_and(|t| t.contains("capabilities_read_result")),
        "{report}"
    );

    // A schema the reference cannot satisfy: an error result (never checked) saying the call
    // succeeded and how to read what it answered.
    let big = &report["big"];
    assert!(big.get("raised").is_none(), "{report}");
    assert_eq!(big["isError"], true, "{report}");
    assert!(
        big["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("The call succeeded.")
                && (t.contains("capabilities_read_result") || t.contains("bbbb"))),
        "{report}"
    );
}
