//! `capabilities hub serve` driven by real, independent MCP clients: the Python `mcp` SDK in
//! 2026-07-28 and legacy mode, the MCP Inspector CLI, and raw JSON-RPC lines for malformed input
//! and for measuring the surface's fixed cost in tokens.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::{
    counted_source, everything_js, json_report, mcp_server_time, python_peer, repo, starts,
    venv_node,
};
use crate::raw::Raw;
use crate::reaping::{processes_with, wait_for};
use crate::support::{Home, block_on, store_of};

/// server-everything and the Python time server, every tool allowed (the default policy asks
/// for tools not marked read-only, and these tests call some).
fn two_sources(home: &Home) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[sources.time]\ncommand = {}\n\n[policy]\ndefault = \"allow\"\ndestructive = \"allow\"\n",
        serde_json::to_string(&everything_js()).unwrap(),
        serde_json::to_string(&mcp_server_time()).unwrap(),
    ));
}

/// The `_meta` a 2026-07-28 request carries instead of `initialize`.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
    })
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn python_client(mode: &str) -> Value {
    let home = Home::new();
    two_sources(&home);
    let database = home.path().join("data/state.sqlite");
    json_report(
        python_peer("hub_client.py")
            .arg(mode)
            .arg(&database)
            .arg(env!("CARGO_BIN_EXE_capabilities"))
            .args(["hub", "serve"])
            .env("CAPABILITIES_HOME", home.path())
            // Never the developer\'s own keychain: the store keys itself with a key file.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("CAPABILITIES_CONFIG"),
    )
}

fn check_python_report(report: &Value) {
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search", "describe", "execute"]);
    assert_eq!(report["tools"][0]["annotations"]["readOnlyHint"], true);
    assert_eq!(report["tools"][2]["annotations"]["readOnlyHint"], false);
    assert!(report["tools"][2]["outputSchema"].is_object());

    let search = report["search"].as_str().unwrap();
    assert!(
        search.contains("everything.echo(input: { message: string })"),
        "{search}"
    );
    assert!(!search.contains("still connecting"), "{search}");
    assert!(
        report["searchNamespace"]["text"]
            .as_str()
            .unwrap()
            .contains("time.getCurrentTime"),
        "{}",
        report["searchNamespace"]
    );
    assert_eq!(report["searchUnknown"]["isError"], true);
    assert!(
        report["searchUnknown"]["text"]
            .as_str()
            .unwrap()
            .contains("there is no source named `nope`")
    );

    let describe = report["describe"]["text"].as_str().unwrap();
    assert!(
        describe.contains("declare const everything: {")
            && describe.contains("declare const time: {"),
        "{describe}"
    );
    assert_eq!(report["describeUnknown"]["isError"], true);
    assert!(
        report["describeUnknown"]["text"]
            .as_str()
            .unwrap()
            .contains("closest: everything.echo"),
        "{}",
        report["describeUnknown"]
    );

    let multi = &report["multiSource"]["structured"];
    assert_eq!(multi["status"], "completed", "{multi}");
    assert_eq!(multi["result"]["echo"], "Echo: hello from the hub");
    assert_eq!(multi["result"]["timezone"], "UTC");
    assert_eq!(multi["calls"].as_array().unwrap().len(), 3);
    // The text block is the same envelope on one line.
    let line = report["multiSource"]["text"].as_str().unwrap();
    assert!(!line.contains('\n'));
    assert_eq!(&serde_json::from_str::<Value>(line).unwrap(), multi);

    assert_eq!(report["failed"]["isError"], true);
    assert_eq!(
        report["failed"]["structured"]["error"]["code"],
        "runtime_error"
    );

    let parallel = report["parallel"].as_array().unwrap();
    assert_eq!(parallel.len(), 8);
    for (i, run) in parallel.iter().enumerate() {
        assert_eq!(run["structured"]["result"], format!("Echo: n{i}"), "{run}");
    }
    let run_ids: std::collections::BTreeSet<&str> = parallel
        .iter()
        .map(|r| r["structured"]["runId"].as_str().unwrap())
        .collect();
    assert_eq!(run_ids.len(), 8);

    assert_eq!(report["cancelledRuns"].as_array().unwrap().len(), 1);
    assert_eq!(report["afterCancel"]["structured"]["result"], 42);

    for (case, expected) in [
        ("both", "exactly one of `code`"),
        ("neither", "execute needs `code`"),
        ("resume", "there is no run `run_x`"),
    ] {
        assert_eq!(report[case]["isError"], true, "{case}");
        assert!(
            report[case]["text"].as_str().unwrap().contains(expected),
            "{case}: {}",
            report[case]
        );
    }
}

#[test]
fn python_client_in_2026_07_28_mode() {
    let report = python_client("2026-07-28");
    assert_eq!(report["protocolVersion"], "2026-07-28");
    check_python_report(&report);
}

#[test]
fn python_client_in_legacy_mode() {
    let report = python_client("legacy");
    assert_eq!(report["protocolVersion"], "2025-11-25");
    assert!(
        report["instructions"]
            .as_str()
            .unwrap()
            .contains("search finds tools")
    );
    check_python_report(&report);
}

/// The Inspector's CLI against `capabilities hub serve HUB_ARGS…` in `era`.
pub(crate) fn inspector(home: &Home, era: &str, hub_args: &[&str], method_args: &[&str]) -> Value {
    let launcher = repo()
        .join("tests/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    json_report(
        Command::new(venv_node())
            .arg(launcher)
            .args([
                "--cli",
                "--format",
                "json",
                "-q",
                "--protocol-era",
                era,
                "-e",
            ])
            .arg(format!("CAPABILITIES_HOME={}", home.path().display()))
            .args([env!("CARGO_BIN_EXE_capabilities"), "hub", "serve"])
            .args(hub_args)
            .args(method_args),
    )
}

#[test]
fn inspector_cli_lists_the_tools_and_executes() {
    let home = Home::new();
    two_sources(&home);
    for era in ["legacy", "modern"] {
        let listed = inspector(&home, era, &[], &["--method", "tools/list"]);
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["search", "describe", "execute"], "{era}");
        let code =
            r#"{"code":"const r = await everything.echo({ message: 'inspected' }); return r"}"#;
        let called = inspector(
            &home,
            era,
            &[],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "execute",
                "--tool-args-json",
                code,
            ],
        );
        let envelope = &called["result"]["structuredContent"];
        assert_eq!(envelope["status"], "completed", "{era}: {called}");
        assert_eq!(envelope["result"], "Echo: inspected");
    }
}

#[test]
fn malformed_input_gets_errors_that_say_what_is_wrong_and_the_server_keeps_serving() {
    let home = Home::new();
    home.write_config("");
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-06-18");

    hub.send("this is not json");
    let answer = hub.next();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not JSON"),
        "{answer}"
    );

    hub.send(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#);
    let answer = hub.next();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batches are not supported"),
        "{answer}"
    );

    hub.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":"all"}"#);
    let answer = hub.next();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32600)),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`params` must be an object"),
        "{answer}"
    );

    let answer = hub.request(3, "no/such/method", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown method `no/such/method`"),
        "{answer}"
    );

    let answer = hub.request(4, "tools/call", json!({ "name": ["search"] }));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid params for `tools/call`"),
        "{answer}"
    );

    let answer = hub.call(5, "nosuch", json!({}));
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("there is no tool `nosuch`"),
        "{answer}"
    );

    let tool_errors = [
        (
            "search",
            json!({ "query": 5 }),
            "`query` must be a string, got a number",
        ),
        (
            "describe",
            json!({ "targets": [] }),
            "`targets` must hold 1 to 10 items",
        ),
        (
            "execute",
            json!({ "code": "return 1", "resume": "run_x" }),
            "exactly one of `code`",
        ),
        ("execute", json!({}), "execute needs `code`"),
        ("execute", json!({ "code": 42 }), "`code` must be a string"),
        (
            "execute",
            json!({ "code": "x".repeat(10 << 20) }),
            "`code` is 10485760 bytes; the limit is 65536",
        ),
        (
            "execute",
            json!({ "script": "return 1" }),
            "execute has no argument `script`",
        ),
    ];
    for (i, (tool, arguments, expected)) in tool_errors.into_iter().enumerate() {
        let answer = hub.call(10 + i as u64, tool, arguments);
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
        assert!(
            text(&answer).contains(expected),
            "{tool}: expected `{expected}` in {answer}"
        );
    }

    let answer = hub.call(30, "execute", json!({ "code": "return 6 * 7" }));
    assert_eq!(
        answer["result"]["structuredContent"]["result"], 42,
        "{answer}"
    );
    assert_eq!(hub.close(), Some(0), "a closed stdin is a clean shutdown");
}

/// Tool definitions plus instructions, in o200k_base tokens, as one JSON text.
fn surface_tokens(tools: &Value, instructions: &str) -> usize {
    capabilities::token_count::count(&tools.to_string())
        + capabilities::token_count::count(instructions)
}

/// Every tool of a server listed directly, in tokens: the cost of the classic setup.
fn direct_listing_tokens(mut command: Command) -> usize {
    command.env_remove("CAPABILITIES_HOME");
    let mut server = Raw::spawn(command);
    server.initialize("2025-06-18");
    let listed = server.request(1, "tools/list", json!({}));
    let _ = server.close();
    capabilities::token_count::count(&listed["result"]["tools"].to_string())
}

#[test]
fn fixed_cost_of_the_surface_stays_within_1000_tokens() {
    const LIMIT: usize = 1_000;
    let home = Home::new();
    two_sources(&home);

    let mut modern = Raw::hub(&home);
    let discovered = modern.request(1, "server/discover", json!({ "_meta": modern_meta() }));
    assert!(
        discovered["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discovered}"
    );
    assert_eq!(
        discovered["result"]["resultType"], "complete",
        "{discovered}"
    );
    // Tools, and the skills (SEP-2640) with their files as resources: no prompts, no logging.
    assert_eq!(
        discovered["result"]["capabilities"],
        json!({ "tools": {}, "resources": {}, "extensions": { "io.modelcontextprotocol/skills": {} } }),
        "only tools and skills are advertised: {discovered}"
    );
    let listed = modern.request(2, "tools/list", json!({ "_meta": modern_meta() }));
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    let modern_cost = surface_tokens(
        &listed["result"]["tools"],
        discovered["result"]["instructions"].as_str().unwrap(),
    );
    assert_eq!(modern.close(), Some(0));

    let mut legacy = Raw::hub(&home);
    let initialized = legacy.initialize("2025-03-26");
    assert_eq!(initialized["result"]["protocolVersion"], "2025-03-26");
    assert!(
        initialized["result"].get("resultType").is_none(),
        "legacy results carry no resultType: {initialized}"
    );
    let listed = legacy.request(1, "tools/list", json!({}));
    let legacy_cost = surface_tokens(
        &listed["result"]["tools"],
        initialized["result"]["instructions"].as_str().unwrap(),
    );
    assert_eq!(legacy.close(), Some(0));

    let mut everything = Command::new("node");
    everything.args([everything_js(), "stdio".into()]);
    let classic =
        direct_listing_tokens(everything) + direct_listing_tokens(Command::new(mcp_server_time()));
    eprintln!(
        "fixed cost: {modern_cost} tokens (2026-07-28), {legacy_cost} (legacy); listing every tool of the same sources directly: {classic}"
    );
    assert!(
        modern_cost <= LIMIT && legacy_cost <= LIMIT,
        "the surface costs {modern_cost} / {legacy_cost} tokens; the limit is {LIMIT}"
    );
}

/// A source that never answers: its `sh` and two `sleep` grandchildren, marked by `mark`.
fn hanging_source(home: &Home, mark: u32) {
    home.write_config(&format!(
        "[sources.hangs]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep {mark} & sleep {mark}.5\"]\nconnect_timeout_secs = 60\n"
    ));
}

fn hub_with_hanging_source(mark: u32) -> (Home, Raw, String) {
    let home = Home::new();
    hanging_source(&home, mark);
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    // Answered at once, while the source is still starting.
    let listed = hub.request(1, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"].as_array().map(Vec::len),
        Some(3),
        "{listed}"
    );
    let searched = hub.call(2, "search", json!({ "query": "anything" }));
    assert!(
        text(&searched).contains("`hangs` is still connecting"),
        "{searched}"
    );
    // A script that does not use the connecting source does not wait for it.
    let ran = hub.call(3, "execute", json!({ "code": "return 'no source needed'" }));
    assert_eq!(
        ran["result"]["structuredContent"]["result"], "no source needed",
        "{ran}"
    );
    let needle = format!("sleep {mark}");
    wait_for("the source's processes to start", || {
        processes_with(&needle).len() >= 2
    });
    (home, hub, needle)
}

#[test]
fn search_names_sources_still_connecting_and_stdin_eof_leaves_no_processes() {
    let mark = 50_000 + (std::process::id() % 10_000) * 2;
    let (_home, hub, needle) = hub_with_hanging_source(mark);
    assert_eq!(hub.close(), Some(0));
    wait_for("the source's processes to be gone", || {
        processes_with(&needle).is_empty()
    });
}

#[test]
fn sigterm_stops_the_hub_and_its_sources() {
    let mark = 50_001 + (std::process::id() % 10_000) * 2;
    let (_home, mut hub, needle) = hub_with_hanging_source(mark);
    crate::support::send_signal(hub.child.id(), "TERM");
    let status = hub.child.wait().expect("wait");
    assert_eq!(status.code(), Some(143));
    wait_for("the source's processes to be gone", || {
        processes_with(&needle).is_empty()
    });
}

#[test]
fn a_run_waiting_for_approval_resumes_after_the_user_approves() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[[policy.rules]]\nmatch = \"everything.echo\"\naction = \"ask\"\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let code = "const r = await everything.echo({ message: 'approved' }); return r";
    let paused = hub.call(1, "execute", json!({ "code": code }));
    let envelope = &paused["result"]["structuredContent"];
    assert_eq!(envelope["status"], "awaiting_approval", "{paused}");
    assert_eq!(
        paused["result"]["isError"], false,
        "waiting is not an error: {paused}"
    );
    let run_id = envelope["runId"].as_str().unwrap().to_string();
    let text = paused.to_string();
    assert!(
        !text.contains("127.0.0.1") && !text.contains("/approve/"),
        "the model never sees the page's URL or token: {paused}"
    );
    assert!(
        text.contains(&format!("capabilities hub approve {run_id}")),
        "the terminal fallback is named: {paused}"
    );
    // The hub records its sources' status for the dashboard.
    let store = crate::support::store_of(&home);
    let statuses = crate::support::block_on(store.source_status().list()).expect("statuses");
    assert!(
        statuses
            .iter()
            .any(|s| s.name == "everything" && s.status == "ready"),
        "{statuses:?}"
    );

    let still_waiting = hub.call(2, "execute", json!({ "resume": run_id }));
    assert_eq!(
        still_waiting["result"]["structuredContent"]["status"], "awaiting_approval",
        "{still_waiting}"
    );

    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = hub.call(3, "execute", json!({ "resume": run_id }));
    let envelope = &resumed["result"]["structuredContent"];
    assert_eq!(envelope["status"], "completed", "{resumed}");
    assert_eq!(envelope["result"], "Echo: approved");
    assert_eq!(hub.close(), Some(0));
}

#[test]
fn a_paused_run_survives_kill_9_of_the_hub() {
    let home = Home::new();
    let counts_file = crate::approvals::counter_config(&home);
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let paused = hub.call(1, "execute", json!({ "code": crate::approvals::SCRIPT }));
    let run_id = paused["result"]["structuredContent"]["runId"]
        .as_str()
        .expect("runId")
        .to_string();
    crate::support::send_signal(hub.child.id(), "KILL");
    let _ = hub.child.wait();

    home.run(&["hub", "approve", &run_id]).ok();
    let mut again = Raw::hub(&home);
    again.initialize("2025-11-25");
    let resumed = again.call(1, "execute", json!({ "resume": run_id }));
    let envelope = &resumed["result"]["structuredContent"];
    assert_eq!(envelope["status"], "completed", "{resumed}");
    let counts = crate::approvals::counts(&counts_file);
    assert_eq!(
        counts,
        json!({ "write:a": 1, "publish:b": 1, "write:c": 1 }),
        "every write ran exactly once"
    );
    assert_eq!(again.close(), Some(0));
}

#[test]
fn readme_documents_every_envelope_error_code() {
    // The table is reference material: it lives in docs/envelope.md, which the README links.
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    assert!(
        readme.contains("(docs/envelope.md)"),
        "the README links the table"
    );
    let table = std::fs::read_to_string(repo().join("docs/envelope.md")).expect("docs/envelope.md");
    for code in capabilities::sandbox::ErrorCode::ALL {
        assert!(
            table.contains(&format!("| `{}` |", code.as_str())),
            "docs/envelope.md's error-code table lacks `{code}`"
        );
    }
}

/// server-everything behind a `sh` that adds a line to `marker` each time it starts, every
/// tool allowed.
fn counted_everything(home: &Home, marker: &std::path::Path, extra: &str) {
    let then = format!("exec node '{}' stdio", everything_js());
    home.write_config(&format!(
        "{}\n[policy]\ndefault = \"allow\"\n\n{extra}",
        counted_source("everything", marker, &then, "")
    ));
}

/// The status the hub recorded for `source` in the store (where the dashboard reads it), and
/// when, in milliseconds since the Unix epoch.
fn recorded_status(home: &Home, source: &str) -> Option<(String, u64)> {
    let statuses = block_on(store_of(home).source_status().list()).ok()?;
    statuses
        .into_iter()
        .find(|s| s.name == source)
        .map(|s| (s.status, s.updated_at_ms))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

#[test]
fn the_hub_starts_a_cached_source_on_its_first_call_and_stops_it_when_idle() {
    let home = Home::new();
    let marker = home.path().join("everything-started");
    counted_everything(
        &home,
        &marker,
        "[hub]\nidle_stop_secs = 1\nmax_starting = 1\n",
    );
    home.run(&["source", "test", "everything"]).ok();
    assert_eq!(starts(&marker), 1);

    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let searched = hub.call(1, "search", json!({ "query": "echo" }));
    assert!(text(&searched).contains("everything.echo("), "{searched}");
    assert_eq!(
        starts(&marker),
        1,
        "search started a source it has a listing of"
    );

    let code = "return await everything.echo({ message: 'hi' })";
    let ran = hub.call(2, "execute", json!({ "code": code }));
    assert_eq!(
        ran["result"]["structuredContent"]["status"], "completed",
        "{ran}"
    );
    assert_eq!(
        starts(&marker),
        2,
        "the first call did not start the source"
    );

    // A second without a call stops it (the hub was idle before the call too: only a later
    // record counts); the next call starts it again.
    let called = now_ms();
    wait_for("the idle source to stop", || {
        recorded_status(&home, "everything")
            .is_some_and(|(status, at)| status == "idle" && at >= called)
    });
    let again = hub.call(3, "execute", json!({ "code": code }));
    assert_eq!(
        again["result"]["structuredContent"]["status"], "completed",
        "{again}"
    );
    assert_eq!(starts(&marker), 3, "the stopped source did not start again");
    assert_eq!(hub.close(), Some(0));
}
