//! The two promises a user cannot check for themselves, attacked with real peers: a call that
//! needs a person never runs without that person's decision (on exactly the arguments they saw)
//! and never runs twice — with concurrent resumes in one hub and across processes, with `kill
//! -9` in the middle of a write, with a replay that reaches the approved call with other
//! arguments — and a policy change reaches a hub that is already running. Every write is counted
//! by a real upstream (tests/peers/ledger_server.py) that appends a line the moment it writes.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::approvals::envelope;
use crate::common::{everything_js, json_report, python_peer, repo};
use crate::hub_http::{HttpHub, create_token};
use crate::raw::Raw;
use crate::support::{Home, Run};

/// The ledger server as source `ledger`, with `policy` (TOML) after it; returns the ledger file.
pub(crate) fn ledger_config(home: &Home, policy: &str) -> PathBuf {
    let ledger = home.path().join("ledger.txt");
    home.write_config(&format!(
        "[sources.ledger]\ncommand = {}\nargs = [{}]\nenv = {{ LEDGER_FILE = {} }}\n\n{policy}",
        json!(repo().join(".venv/bin/python").display().to_string()),
        json!(
            repo()
                .join("tests/peers/ledger_server.py")
                .display()
                .to_string()
        ),
        json!(ledger.display().to_string()),
    ));
    ledger
}

/// The lines the ledger server wrote: one per write it performed, and one per read it got.
fn ledger_lines(ledger: &Path) -> Vec<String> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The writes the ledger server performed.
pub(crate) fn writes(ledger: &Path) -> Vec<String> {
    ledger_lines(ledger)
        .into_iter()
        .filter(|line| line.starts_with("write"))
        .collect()
}

/// Waits (a bound against hangs, not a speed check) until the ledger has `line`.
pub(crate) fn wait_for_line(ledger: &Path, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        if ledger_lines(ledger).iter().any(|l| l == line) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the ledger never got `{line}`");
}

pub(crate) fn exec_json(home: &Home, args: &[&str], code: &str) -> (Run, Value) {
    let run = Run::with_stdin(&mut home.command(args), code);
    let envelope = envelope(&run);
    (run, envelope)
}

pub(crate) fn run_id(envelope: &Value) -> String {
    envelope["runId"]
        .as_str()
        .unwrap_or_else(|| panic!("no runId: {envelope}"))
        .to_string()
}

/// A write that needs a person and takes a second to answer, so that resumes overlap it.
pub(crate) const SLOW_WRITE: &str =
    r#"const done = await ledger.slowWrite({ key: "k", seconds: 1 }); return done;"#;

/// Runs `SLOW_WRITE` until it pauses, and approves it once from the terminal.
fn paused_and_approved(home: &Home) -> String {
    let (paused, envelope) = exec_json(home, &["exec", "-", "--json"], SLOW_WRITE);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let run_id = run_id(&envelope);
    home.run(&["hub", "approve", &run_id]).ok();
    run_id
}

#[test]
fn concurrent_resumes_in_two_hubs_on_one_store_send_the_approved_write_once() {
    let home = Home::new();
    let ledger = ledger_config(&home, "");
    let run_id = paused_and_approved(&home);
    let mut hubs = [Raw::hub(&home), Raw::hub(&home)];
    for hub in &mut hubs {
        hub.initialize("2025-11-25");
    }
    // Two resumes to each hub at once: they race inside a hub and across the two.
    for hub in &mut hubs {
        for id in 10..12 {
            hub.send(
                &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "execute", "arguments": { "resume": run_id } } })
                    .to_string(),
            );
        }
    }
    let mut statuses = Vec::new();
    for hub in &mut hubs {
        for _ in 0..2 {
            let answer = hub.next();
            let envelope = &answer["result"]["structuredContent"];
            let status = envelope["status"].as_str().unwrap_or_default().to_string();
            if status == "running" {
                assert_eq!(envelope["error"]["code"], "run_in_progress", "{envelope}");
                assert_eq!(
                    envelope["error"]["recovery"]["execute_request"], "unchanged",
                    "{envelope}"
                );
            }
            statuses.push(status);
        }
    }
    assert!(
        statuses.iter().all(|s| s == "completed" || s == "running"),
        "{statuses:?}"
    );
    assert!(statuses.iter().any(|s| s == "completed"), "{statuses:?}");
    assert_eq!(
        writes(&ledger),
        ["write k"],
        "the write reached the upstream once"
    );
    // Once it ended, every resume returns its envelope and sends nothing.
    let [mut first, second] = hubs;
    let again = first.call(20, "execute", json!({ "resume": run_id }));
    assert_eq!(again["result"]["structuredContent"]["status"], "completed");
    assert_eq!(writes(&ledger), ["write k"]);
    assert_eq!(first.close(), Some(0));
    assert_eq!(second.close(), Some(0));
}

#[test]
fn concurrent_exec_resumes_across_processes_send_the_approved_write_once() {
    let home = Home::new();
    let ledger = ledger_config(&home, "");
    let run_id = paused_and_approved(&home);
    let resumes: Vec<_> = (0..4)
        .map(|_| {
            home.command(&["exec", "--resume", &run_id, "--json"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start exec --resume")
        })
        .collect();
    let runs: Vec<Run> = resumes
        .into_iter()
        .map(|child| Run::from(child.wait_with_output().expect("exec --resume ends")))
        .collect();
    for run in &runs {
        let envelope = envelope(run);
        match run.code {
            0 => assert_eq!(envelope["result"]["result"], "wrote k", "{envelope}"),
            5 => assert_eq!(envelope["status"], "running", "{envelope}"),
            other => panic!("exit {other}: {envelope}\n{}", run.stderr),
        }
    }
    assert!(runs.iter().any(|r| r.code == 0));
    assert_eq!(
        writes(&ledger),
        ["write k"],
        "the write reached the upstream once"
    );
}

#[test]
fn kill_9_during_a_slow_write_leaves_an_interrupted_run_that_never_writes_again() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    // Killed once the write happened upstream, while the hub waits for its answer.
    kill_hub_once_ledger_has(
        &home,
        &ledger,
        json!({ "code": r#"await ledger.slowWrite({ key: "k", seconds: 600 }); return "never""# }),
        "write k",
    );

    let listed: Value =
        serde_json::from_str(&home.run(&["hub", "runs", "--json"]).ok().stdout).expect("runs");
    let run = &listed[0];
    assert_eq!(run["status"], "interrupted", "{listed}");
    let run_id = run_id(run);
    assert_eq!(
        run["calls"][0]["address"], "ledger.slowWrite",
        "journaled before it left"
    );

    let (resumed, envelope) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(resumed.code, 1, "{}", resumed.stderr);
    assert_eq!(envelope["status"], "failed", "{envelope}");
    let error = &envelope["error"];
    assert_eq!(error["code"], "interrupted", "{envelope}");
    assert_eq!(error["recovery"]["code"], "MCP_EXECUTION_OUTCOME_UNKNOWN");
    assert_eq!(error["recovery"]["execute_request"], "do_not_replay");
    assert_eq!(error["recovery"]["provider_execution"], "unknown");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("ledger.slowWrite"),
        "{envelope}"
    );
    // The outcome is final: resuming again sends nothing and says the same.
    let (again, envelope_again) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(again.code, 1);
    assert_eq!(envelope_again["error"]["code"], "interrupted");
    assert_eq!(
        writes(&ledger),
        ["write k"],
        "the write was never sent again"
    );
}

#[test]
fn a_decision_covers_only_the_arguments_it_was_shown() {
    let home = Home::new();
    let ledger = ledger_config(&home, "");
    // The first attempt's timer fires during the slow read, so the write asks with "B". A resume
    // answers the read from the journal at once, before the timer: the write is reached with
    // "A", which nobody approved.
    let script = r#"
        let key = "A";
        setTimeout(() => { key = "B"; }, 300);
        await ledger.slowRead({ seconds: 2 });
        return await ledger.write({ key });
    "#;
    let (paused, first) = exec_json(&home, &["exec", "-", "--json"], script);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let run_id = run_id(&first);
    let summary = first["pending"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("key: \"B\""), "{first}");
    home.run(&["hub", "approve", &run_id]).ok();

    let (resumed, second) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(resumed.code, 3, "asks again: {second}\n{}", resumed.stderr);
    assert_eq!(second["status"], "awaiting_approval", "{second}");
    let summary = second["pending"][0]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("key: \"A\""),
        "the new arguments are shown: {second}"
    );
    assert!(
        writes(&ledger).is_empty(),
        "nothing nobody approved was sent"
    );
    let listed = home.run(&["hub", "runs", "--json"]).ok();
    assert!(
        listed.stdout.contains("superseded"),
        "audited: {}",
        listed.stdout
    );

    let approved = home.run(&["hub", "approve", &run_id]).ok();
    assert!(
        approved.stdout.contains("key: \"A\""),
        "{}",
        approved.stdout
    );
    let (done, third) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(done.code, 0, "{third}\n{}", done.stderr);
    assert_eq!(third["result"]["result"], "wrote A");
    assert_eq!(writes(&ledger), ["write A"]);
}

/// Runs `script` through the Python SDK client over HTTP and returns its envelope.
fn over_http(hub: &HttpHub, token: &str, script: &str) -> Value {
    let report = json_report(python_peer("hub_http_client.py").arg(hub.url()).args([
        "2026-07-28",
        token,
        script,
    ]));
    report["execute"]["structured"].clone()
}

#[test]
fn a_policy_change_applies_to_a_running_http_hub() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[policy]\ndefault = \"allow\"\n",
        json!(everything_js()),
    ));
    let token = create_token(&home, &["laptop"]);
    let hub = HttpHub::start(&home, &[]);
    let script = r#"return await everything.echo({ message: "hi" });"#;
    assert_eq!(over_http(&hub, &token, script)["status"], "completed");

    home.run(&["policy", "set", "everything.echo", "ask"]).ok();
    let asked = over_http(&hub, &token, script);
    assert_eq!(asked["status"], "awaiting_approval", "{asked}");

    // A hand edit that does not load keeps the last good policy.
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    std::fs::write(home.config_path(), format!("{config}\n[[policy.rules]\n")).expect("edit");
    let still = over_http(&hub, &token, script);
    assert_eq!(still["status"], "awaiting_approval", "{still}");

    // "Always" from another process applies to the next run at once.
    std::fs::write(home.config_path(), &config).expect("restore");
    let run_id = run_id(&still);
    home.run(&["hub", "approve", &run_id, "--always", "--yes"])
        .ok();
    let allowed = over_http(&hub, &token, script);
    assert_eq!(allowed["status"], "completed", "{allowed}");
}

#[test]
fn a_tokens_run_resumed_locally_keeps_what_the_token_forbids() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    let token = create_token(&home, &["narrow", "--allow", "ledger.write"]);
    let hub = HttpHub::start(&home, &[]);
    // The agent's script pauses on the call it may make; the one its token forbids is reached
    // by a name the static check cannot see.
    let script = r#"
        await ledger.write({ key: "approved" });
        const name = ["slow", "Write"].join("");
        try { await ledger[name]({ key: "forbidden", seconds: 0 }); return "ran"; }
        catch (e) { return e.code; }
    "#;
    let paused = over_http(&hub, &token, script);
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let run_id = run_id(&paused);
    home.run(&["hub", "approve", &run_id]).ok();
    // The person at the hub's machine resumes it: the approved call goes, the token's limit
    // stands.
    let (done, envelope) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(done.code, 0, "{envelope}\n{}", done.stderr);
    assert_ne!(envelope["result"], "ran", "{envelope}");
    assert_eq!(writes(&ledger), ["write approved"]);
}

#[test]
fn exec_closes_the_store_cleanly_before_it_exits() {
    // A run frees its heap (whose host functions hold the store) after its envelope is out; an
    // exit that does not wait for it leaves a write-ahead log, and the store's damage checks
    // cannot then tell a truncated file from one being recovered.
    let home = Home::new();
    home.write_config("");
    let wal = home.path().join("data/state.sqlite-wal");
    for attempt in 0..12 {
        let (done, _) = exec_json(&home, &["exec", "-", "--json"], "return 1");
        assert_eq!(done.code, 0, "{}", done.stderr);
        let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        assert_eq!(
            left, 0,
            "attempt {attempt} left a write-ahead log of {left} bytes"
        );
    }
}

#[test]
fn an_emptied_truncated_or_overwritten_store_is_refused_with_what_to_do() {
    let home = Home::new();
    home.write_config("");
    home.run(&["token", "create", "laptop"]).ok();
    let (done, _) = exec_json(&home, &["exec", "-", "--json"], "return 1");
    assert_eq!(done.code, 0, "{}", done.stderr);
    let database = home.path().join("data/state.sqlite");
    let original = std::fs::read(&database).expect("the store");
    assert!(original.len() > 4096, "a store with pages to cut");

    let damaged = [
        (Vec::new(), "is empty (0 bytes)"),
        (
            b"not a database, just text that is long enough to look like a header".repeat(200),
            "is not a database",
        ),
        (original[..original.len() / 2].to_vec(), "is truncated"),
    ];
    for (bytes, problem) in damaged {
        std::fs::write(&database, &bytes).expect("damage the store");
        for args in [&["hub", "runs"][..], &["token", "list"][..]] {
            let refused = home.run(args).fails();
            assert!(
                refused.stderr.contains(problem),
                "{args:?}: {}",
                refused.stderr
            );
            assert!(
                refused.stderr.contains("Restore it from a backup")
                    && refused.stderr.contains("state.sqlite.broken"),
                "{args:?}: {}",
                refused.stderr
            );
            assert!(!refused.stderr.contains("writable"), "{}", refused.stderr);
        }
        let now = std::fs::read(&database).expect("store");
        assert!(
            now == bytes,
            "something was written over it: {} bytes, {} before; starts {:?}",
            now.len(),
            bytes.len(),
            String::from_utf8_lossy(&now[..now.len().min(40)])
        );
    }
}

/// Starts `hub serve` on `home`, sends `arguments` (`{ code }` or `{ resume }`) to `execute`
/// without waiting for the answer, waits until the ledger has `line` (the upstream got the
/// call), and kills the hub with SIGKILL.
pub(crate) fn kill_hub_once_ledger_has(home: &Home, ledger: &Path, arguments: Value, line: &str) {
    let mut hub = Raw::hub(home);
    hub.initialize("2025-11-25");
    hub.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "execute", "arguments": arguments } })
            .to_string(),
    );
    wait_for_line(ledger, line);
    hub.child.kill().expect("kill -9 the hub");
    hub.child.wait().expect("reap the hub");
}

fn only_run_id(home: &Home) -> String {
    let listed: Value =
        serde_json::from_str(&home.run(&["hub", "runs", "--json"]).ok().stdout).expect("runs");
    run_id(&listed[0])
}

#[test]
fn a_write_left_in_flight_ends_the_run_even_where_the_script_would_not_reach_it_again() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    // A resume answers the read at once, before the timer: the script would return early and
    // report `completed`, hiding the write the first attempt sent.
    let code = r#"
        let late = false;
        setTimeout(() => { late = true; }, 300);
        await ledger.slowRead({ seconds: 2 });
        if (!late) return "nothing written";
        return await ledger.slowWrite({ key: "A", seconds: 600 });
    "#;
    kill_hub_once_ledger_has(&home, &ledger, json!({ "code": code }), "write A");
    let run_id = only_run_id(&home);
    let (resumed, envelope) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(resumed.code, 1, "{envelope}");
    assert_eq!(envelope["error"]["code"], "interrupted", "{envelope}");
    assert_eq!(
        envelope["error"]["recovery"]["execute_request"],
        "do_not_replay"
    );
    assert_eq!(writes(&ledger), ["write A"]);
}

#[test]
fn an_approved_read_left_in_flight_is_not_sent_again_on_its_used_decision() {
    let home = Home::new();
    let ledger = ledger_config(&home, "[policy]\nread_only = \"ask\"\n");
    let code = r#"return await ledger.slowRead({ seconds: 3 });"#;
    let (paused, first) = exec_json(&home, &["exec", "-", "--json"], code);
    assert_eq!(paused.code, 3, "{first}");
    let run_id = run_id(&first);
    home.run(&["hub", "approve", &run_id]).ok();
    // The approved read reaches the upstream; its process dies before the answer.
    kill_hub_once_ledger_has(&home, &ledger, json!({ "resume": run_id }), "read");

    // The person allowed one send, and it went: a resume (or several) sends nothing more.
    for _ in 0..2 {
        let (done, envelope) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
        assert_eq!(done.code, 1, "{envelope}\n{}", done.stderr);
        assert_eq!(envelope["error"]["code"], "interrupted", "{envelope}");
        assert_eq!(
            envelope["error"]["recovery"]["execute_request"], "do_not_replay",
            "{envelope}"
        );
        let message = envelope["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("approval was for one send"), "{envelope}");
    }
    assert_eq!(ledger_lines(&ledger), ["read"], "one decision, one send");
}

/// The ledger with two connections, `personal` (the default) and `work`; writes say which.
fn ledger_with_connections(home: &Home) -> PathBuf {
    let ledger = ledger_config(home, "");
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    home.write_config(&format!(
        "{config}\n[sources.ledger.connections.personal]\ndefault = true\nenv = {{ LEDGER_TAG = \"personal\" }}\n\n[sources.ledger.connections.work]\nenv = {{ LEDGER_TAG = \"work\" }}\n"
    ));
    ledger
}

#[test]
fn a_decision_covers_only_the_connection_it_was_shown() {
    let home = Home::new();
    let ledger = ledger_with_connections(&home);
    let script = r#"
        let connection = "personal";
        setTimeout(() => { connection = "work"; }, 300);
        await ledger.slowRead({ seconds: 2 });
        return await ledger.write({ key: "A" }, { connection });
    "#;
    let (_, first) = exec_json(&home, &["exec", "-", "--json"], script);
    let summary = first["pending"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("on connection `work`"), "{first}");
    let run_id = run_id(&first);
    home.run(&["hub", "approve", &run_id]).ok();

    let (resumed, second) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(resumed.code, 3, "asks again: {second}");
    let summary = second["pending"][0]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("on connection `personal`") && summary.contains("asked again"),
        "{second}"
    );
    assert!(
        writes(&ledger).is_empty(),
        "nothing went out on a connection nobody approved"
    );
}

#[test]
fn allowing_always_or_for_the_run_holds_on_the_connection_shown() {
    let home = Home::new();
    let ledger = ledger_with_connections(&home);
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    home.write_config(&format!(
        "{config}\n[[policy.rules]]\nmatch = \"ledger.*\"\naction = \"deny\"\nconnection = \"work\"\n"
    ));

    // "For this run", given on `personal`, does not reach `work` (where the policy asks).
    home.run(&["policy", "set", "ledger.*", "ask", "--connection", "work"])
        .ok();
    let both = r#"
        await ledger.write({ key: "test" });
        return await ledger.write({ key: "prod" }, { connection: "work" });
    "#;
    let (_, first) = exec_json(&home, &["exec", "-", "--json"], both);
    let for_run = run_id(&first);
    home.run(&["hub", "approve", &for_run, "--for-run"]).ok();
    let (resumed, second) = exec_json(&home, &["exec", "--resume", &for_run, "--json"], "");
    assert_eq!(resumed.code, 3, "asks about `work`: {second}");
    let summary = second["pending"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("on connection `work`"), "{second}");
    assert_eq!(writes(&ledger), ["write test via personal"]);

    // "Always", given on `personal`, is a rule for `personal`: the deny on `work` stands.
    home.run(&["policy", "set", "ledger.*", "deny", "--connection", "work"])
        .ok();
    let (_, third) = exec_json(
        &home,
        &["exec", "-", "--json"],
        r#"return await ledger.write({ key: "always" });"#,
    );
    let always = run_id(&third);
    home.run(&["hub", "approve", &always, "--always", "--yes"])
        .ok();
    let written = std::fs::read_to_string(home.config_path()).expect("config");
    assert!(
        written.contains("match = \"ledger.write\"\naction = \"allow\"\nconnection = \"personal\""),
        "{written}"
    );
    let explained = home
        .run(&["policy", "explain", "ledger.write", "--connection", "work"])
        .ok();
    assert!(explained.stdout.contains("deny"), "{}", explained.stdout);
    let (_, on_work) = exec_json(
        &home,
        &["exec", "-", "--json"],
        r#"try { await ledger.write({ key: "denied" }, { connection: "work" }); } catch (e) { return e.code; }"#,
    );
    assert_eq!(on_work["result"], "policy_denied", "{on_work}");
    assert_eq!(writes(&ledger), ["write test via personal"]);
}

#[test]
fn a_resumed_script_that_makes_its_calls_in_another_order_sends_no_write_twice() {
    let home = Home::new();
    let ledger = ledger_with_connections(&home);
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    home.write_config(&format!(
        "{config}\n[[policy.rules]]\nmatch = \"ledger.write\"\naction = \"allow\"\n\n[[policy.rules]]\nmatch = \"ledger.*\"\naction = \"deny\"\nconnection = \"work\"\n"
    ));
    // First time: the read takes two seconds, so the timer's call (denied on `work`, so never
    // journaled) takes step 1 and the write step 2. On resume the read answers from the
    // journal at once, before the timer: the write reaches step 1, which the journal holds
    // nothing for.
    let script = r#"
        const slow = ledger.slowRead({ seconds: 2 });
        setTimeout(() => {
            ledger.slowRead({ seconds: 0 }, { connection: "work" }).catch(() => {});
        }, 300);
        await slow;
        await ledger.write({ key: "A" });
        return await ledger.slowWrite({ key: "X", seconds: 0 });
    "#;
    let (_, first) = exec_json(&home, &["exec", "-", "--json"], script);
    assert_eq!(first["status"], "awaiting_approval", "{first}");
    assert_eq!(writes(&ledger), ["write A via personal"]);
    let run_id = run_id(&first);
    home.run(&["hub", "approve", &run_id]).ok();
    let (_, resumed) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(resumed["status"], "failed", "{resumed}");
    assert_eq!(resumed["error"]["code"], "replay_divergence", "{resumed}");
    assert!(
        resumed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in another order")),
        "{resumed}"
    );
    assert_eq!(
        writes(&ledger),
        ["write A via personal"],
        "the write went out twice"
    );
}

#[test]
fn a_write_the_script_did_not_await_is_named_in_its_completed_envelope() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    let (done, envelope) = exec_json(
        &home,
        &["exec", "-", "--json"],
        r#"
        ledger.slowWrite({ key: "FF", seconds: 5 });
        await new Promise((resolve) => setTimeout(resolve, 2000));
        return "all good";
    "#,
    );
    assert_eq!(done.code, 0, "{envelope}");
    assert_eq!(envelope["status"], "completed", "{envelope}");
    let notices = envelope["notices"].to_string();
    assert!(
        notices.contains("`ledger.slowWrite` was still out when the script ended")
            && notices.contains("may have taken effect"),
        "{envelope}"
    );
    wait_for_line(&ledger, "write FF");
}

#[test]
fn a_denied_call_stays_denied_after_the_policy_allows_its_tool() {
    let home = Home::new();
    let ledger = ledger_config(&home, "");
    let code = r#"try { return await ledger.write({ key: "A" }); } catch (e) { return e.code; }"#;
    let (_, first) = exec_json(&home, &["exec", "-", "--json"], code);
    let run_id = run_id(&first);
    home.run(&["hub", "deny", &run_id]).ok();
    home.run(&["policy", "set", "ledger.write", "allow"]).ok();
    let (done, envelope) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(done.code, 0, "{envelope}");
    assert_eq!(envelope["result"], "policy_denied", "{envelope}");
    assert!(writes(&ledger).is_empty());
}

#[test]
fn a_run_is_resumed_only_under_the_profile_it_started_with() {
    let home = Home::new();
    let ledger = ledger_config(&home, "[profiles.work]\nsources = [\"ledger\"]\n");
    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--profile", "work"]));
    hub.initialize("2025-11-25");
    let paused = hub.call(
        1,
        "execute",
        json!({ "code": r#"return await ledger.write({ key: "A" });"# }),
    );
    let envelope = &paused["result"]["structuredContent"];
    assert_eq!(envelope["status"], "awaiting_approval", "{paused}");
    assert_eq!(envelope["profile"], "work", "{paused}");
    let run_id = run_id(envelope);
    assert_eq!(hub.close(), Some(0));
    home.run(&["hub", "approve", &run_id]).ok();

    // Refused by `exec` and by a hub of the whole config, naming both sides and the way.
    let refused = home.run(&["exec", "--resume", &run_id]).fails();
    assert!(
        refused.stderr.contains("started under profile `work`")
            && refused.stderr.contains("serves no profile")
            && refused
                .stderr
                .contains(&format!("exec --resume {run_id} --profile work")),
        "{}",
        refused.stderr
    );
    let mut whole = Raw::hub(&home);
    whole.initialize("2025-11-25");
    let answer = whole.call(2, "execute", json!({ "resume": run_id }));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("started under profile `work`") && text.contains("serves no profile"),
        "{answer}"
    );
    assert_eq!(whole.close(), Some(0));
    assert!(writes(&ledger).is_empty(), "nothing ran");

    // The approval was not spent: under its own profile the run does the approved write once.
    let (done, finished) = exec_json(
        &home,
        &["exec", "--resume", &run_id, "--profile", "work", "--json"],
        "",
    );
    assert_eq!(done.code, 0, "{finished}\n{}", done.stderr);
    assert_eq!(finished["result"]["result"], "wrote A", "{finished}");
    assert_eq!(finished["profile"], "work", "{finished}");
    assert_eq!(writes(&ledger), ["write A"]);
}

/// A run made with the whole config, reading a source (`store`) that profile `work` leaves
/// out before the write it waits to make. Resumed under `work`, its script would meet no
/// `store` ("ReferenceError: store is not defined") and end, its approval lost.
fn paused_outside_the_profile(home: &Home) -> (PathBuf, String) {
    let ledger = ledger_config(
        home,
        &format!(
            "[sources.store]\ncommand = {}\nargs = [{}]\nenv = {{ LEDGER_FILE = {} }}\n\n[[policy.rules]]\nmatch = \"store.*\"\naction = \"allow\"\n\n[profiles.work]\nsources = [\"ledger\"]\n",
            json!(repo().join(".venv/bin/python").display().to_string()),
            json!(
                repo()
                    .join("tests/peers/ledger_server.py")
                    .display()
                    .to_string()
            ),
            json!(home.path().join("store.txt").display().to_string()),
        ),
    );
    let code = r#"await store.slowRead({ seconds: 0 }); return await ledger.write({ key: "A" });"#;
    let (paused, envelope) = exec_json(home, &["exec", "-", "--json"], code);
    assert_eq!(paused.code, 3, "{envelope}\n{}", paused.stderr);
    assert!(envelope.get("profile").is_none(), "{envelope}");
    let run_id = run_id(&envelope);
    home.run(&["hub", "approve", &run_id]).ok();
    (ledger, run_id)
}

/// Names both profiles: the run's (none) and the refusing process's (`work`).
fn assert_refused_naming_both(text: &str) {
    assert!(
        text.contains("started under no profile")
            && text.contains("serves profile `work`")
            && !text.contains("ReferenceError"),
        "{text}"
    );
}

#[test]
fn a_resume_under_another_profile_runs_nothing_and_leaves_the_approval_for_the_right_one() {
    let home = Home::new();
    let (ledger, run_id) = paused_outside_the_profile(&home);

    let refused = home
        .run(&["exec", "--resume", &run_id, "--profile", "work"])
        .fails();
    assert_refused_naming_both(&refused.stderr);

    let mut hub = Raw::spawn(home.command(&["hub", "serve", "--profile", "work"]));
    hub.initialize("2025-11-25");
    let answer = hub.call(1, "execute", json!({ "resume": run_id }));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_refused_naming_both(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    );
    assert_eq!(hub.close(), Some(0));

    let token = create_token(&home, &["laptop"]);
    let http = HttpHub::start(&home, &["--profile", "work"]);
    let report = json_report(python_peer("hub_http_client.py").arg(http.url()).args([
        "2026-07-28",
        &token,
        &format!("resume:{run_id}"),
    ]));
    // A token's holder may not go on with the user's run at all, and is told no more: not even
    // the profile it was started under.
    assert_eq!(report["execute"]["isError"], true, "{report}");
    let said = report["execute"]["text"].as_str().unwrap_or_default();
    assert!(
        said.contains("was started by another client's token") && !said.contains("profile"),
        "{said}"
    );
    drop(http);

    let store = home.path().join("store.txt");
    assert!(writes(&ledger).is_empty(), "nothing was written");
    assert_eq!(ledger_lines(&store), ["read"], "nothing ran again");
    // Resumed where it started, the approved write happens, once.
    let (done, finished) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(done.code, 0, "{finished}\n{}", done.stderr);
    assert_eq!(finished["result"]["result"], "wrote A", "{finished}");
    let (_, again) = exec_json(&home, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(again["status"], "completed", "{again}");
    assert_eq!(writes(&ledger), ["write A"]);
    assert_eq!(
        ledger_lines(&store),
        ["read"],
        "the read answered from the journal"
    );
}

#[test]
fn calls_a_script_leaves_behind_are_listed_as_far_as_they_got() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.write\"\naction = \"allow\"\n",
    );
    // Left behind while the source may still be connecting: a call that did not start out is
    // listed `not_sent` (and counted in the notice), one that did is `unknown`, never the other
    // way round.
    let left_behind =
        r#"for (let i = 0; i < 20; i++) ledger.write({ key: "k" + i }); return "left";"#;
    let (ran, envelope) = exec_json(&home, &["exec", "-", "--json"], left_behind);
    assert_eq!(ran.code, 0, "{envelope}");
    let calls = envelope["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 20, "{envelope}");
    let written = writes(&ledger);
    let mut unsent = 0;
    for (i, call) in calls.iter().enumerate() {
        match call["outcome"].as_str() {
            Some("not_sent") => {
                unsent += 1;
                assert!(!written.contains(&format!("write k{i}")), "{envelope}");
            }
            Some("unknown") => {}
            other => panic!("call {i} ended {other:?}: {envelope}"),
        }
    }
    let notices = envelope["notices"].to_string();
    if unsent > 0 {
        let said = format!(
            "{unsent} {} to `ledger.write` never went out",
            if unsent == 1 { "call" } else { "calls" }
        );
        assert!(notices.contains(&said), "{envelope}");
    } else {
        assert!(!notices.contains("never went out"), "{envelope}");
    }

    // Connected first: some may leave before the script returns. Whatever got out is listed as
    // possibly sent, never as not sent.
    let some_out = r#"
        await ledger.write({ key: "first" });
        for (let i = 0; i < 20; i++) ledger.write({ key: "m" + i });
        return "left";
    "#;
    let (ran, envelope) = exec_json(&home, &["exec", "-", "--json"], some_out);
    assert_eq!(ran.code, 0, "{envelope}");
    let written = writes(&ledger);
    let calls = envelope["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 21, "{envelope}");
    for (i, call) in calls.iter().enumerate().skip(1) {
        // Keys of their own: the first script's calls that got out wrote `k…` lines already.
        let line = format!("write m{}", i - 1);
        match call["outcome"].as_str() {
            Some("not_sent") => assert!(!written.contains(&line), "{line}: {envelope}"),
            Some("unknown") => {}
            other => panic!("call {i} ended {other:?}: {envelope}"),
        }
    }
}
