//! The recovery contract of a failed run (issue 8), against real upstreams: a script at fault
//! before any call is to be corrected; a run after which an upstream may have acted (a write,
//! a call that timed out, a call cut off by the run's own time limit, a journaled call of a
//! resumed run) must not be replayed, and its hint says only that; a source that was down
//! before anything was sent allows the same request again, and a resumed run does not count
//! such a call; a run that only read has no contract; a source that lists no tools is the
//! script's mistake. The stored envelope (what `exec --resume` answers for a finished run) is
//! the one the client got.

use serde_json::{Value, json};

use crate::approvals::{counter_config, counts, envelope, exec};
use crate::common::{everything_js, repo};
use crate::guarantees::ledger_config;
use crate::support::Home;

fn run_json(home: &Home, code: &str) -> (i32, Value) {
    let run = exec(home, &["exec", "-", "--json"], code);
    (run.code, envelope(&run))
}

/// The envelope the store keeps for a finished run.
fn stored(home: &Home, envelope: &Value) -> Value {
    let run_id = envelope["runId"].as_str().expect("runId");
    crate::approvals::envelope(&home.run(&["exec", "--resume", run_id, "--json"]))
}

fn outcome_unknown() -> Value {
    json!({
        "code": "MCP_EXECUTION_OUTCOME_UNKNOWN",
        "execute_request": "do_not_replay",
        "provider_execution": "unknown",
        "automatic_replay": false,
    })
}

fn hint(envelope: &Value) -> &str {
    envelope["error"]["hint"].as_str().unwrap_or_default()
}

#[test]
fn a_script_at_fault_before_any_call_is_to_be_corrected() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let correct = json!({
        "execute_request": "correct_arguments",
        "provider_execution": "not_started",
        "automatic_replay": false,
    });

    let (code, syntax) = run_json(&home, "const x = ;\nawait counter.write({ key: 'a' });");
    assert_eq!(code, 1);
    assert_eq!(syntax["error"]["code"], "syntax_error", "{syntax}");
    assert_eq!(syntax["error"]["recovery"], correct, "{syntax}");
    assert_eq!(stored(&home, &syntax), syntax);

    let (code, invalid) = run_json(&home, "return await counter.write({ name: 'a' });");
    assert_eq!(code, 1);
    assert_eq!(invalid["error"]["code"], "invalid_arguments", "{invalid}");
    assert_eq!(invalid["error"]["recovery"], correct, "{invalid}");
    assert_eq!(stored(&home, &invalid), invalid);
    assert_eq!(counts(&counts_file), json!({}), "nothing was written");
}

#[test]
fn a_write_then_a_throw_must_not_be_replayed() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let (code, failed) = run_json(
        &home,
        "await counter.write({ key: 'argument-value-7' }); throw new Error('after the write');",
    );
    assert_eq!(code, 1);
    assert_eq!(failed["error"]["code"], "runtime_error", "{failed}");
    assert_eq!(failed["error"]["recovery"], outcome_unknown(), "{failed}");
    let hint = hint(&failed);
    assert!(
        hint.contains("`counter.write` reached the upstream") && hint.contains("Do not run"),
        "{hint}"
    );
    assert!(!hint.contains("argument-value-7"), "no arguments: {hint}");
    assert_eq!(stored(&home, &failed), failed);
    assert_eq!(counts(&counts_file), json!({ "write:argument-value-7": 1 }));
}

#[test]
fn only_read_only_calls_then_a_throw_has_no_recovery() {
    let home = Home::new();
    counter_config(&home);
    let (code, failed) = run_json(
        &home,
        "await counter.counts(); throw new Error('after a read');",
    );
    assert_eq!(code, 1);
    assert_eq!(failed["error"]["code"], "runtime_error", "{failed}");
    assert_eq!(failed["calls"][0]["ok"], true, "the read ran: {failed}");
    assert!(failed["error"].get("recovery").is_none(), "{failed}");
    assert_eq!(
        hint(&failed),
        "Fix the script; catch errors you expect with try/catch."
    );
}

/// server-everything twice: `quick` gives up on a request after 1 s; `patient` keeps waiting,
/// but every run stops after 3 s. Its long-running operation is marked read-only, so only the
/// lost answer makes the outcome unknown.
fn slow_sources(home: &Home) {
    let args = format!(
        "[{}, \"stdio\"]",
        serde_json::to_string(&everything_js()).unwrap()
    );
    home.write_config(&format!(
        "[sources.quick]\ncommand = \"node\"\nargs = {args}\nrequest_timeout_secs = 1\n\n[sources.patient]\ncommand = \"node\"\nargs = {args}\n\n[limits]\nrun_timeout_secs = 3\n"
    ));
}

#[test]
fn a_call_without_an_answer_has_an_unknown_outcome() {
    let home = Home::new();
    slow_sources(&home);

    let (code, timed_out) = run_json(
        &home,
        "return await quick.triggerLongRunningOperation({ duration: 5, steps: 1 });",
    );
    assert_eq!(code, 1);
    assert_eq!(
        timed_out["error"]["code"], "upstream_unavailable",
        "{timed_out}"
    );
    assert_eq!(
        timed_out["error"]["recovery"],
        outcome_unknown(),
        "{timed_out}"
    );
    assert!(
        hint(&timed_out).starts_with("No answer came from `quick.triggerLongRunningOperation`"),
        "{timed_out}"
    );
    assert!(
        !hint(&timed_out).contains("retry later"),
        "no advice to send it again: {timed_out}"
    );

    // Cut off by the run's own limit: the call future is dropped before it could settle.
    let (code, cut_off) = run_json(
        &home,
        "await patient.echo({ message: 'first' }); return await patient.triggerLongRunningOperation({ duration: 20, steps: 1 });",
    );
    assert_eq!(code, 1);
    assert_eq!(cut_off["error"]["code"], "timeout", "{cut_off}");
    assert_eq!(cut_off["error"]["recovery"], outcome_unknown(), "{cut_off}");
    let hint = hint(&cut_off);
    assert!(
        hint.contains("No answer came from `patient.triggerLongRunningOperation`,"),
        "{hint}"
    );
    assert!(
        !hint.contains("patient.echo"),
        "the answered read is not named: {hint}"
    );
    assert_eq!(stored(&home, &cut_off), cut_off);
}

/// A write that timed out after it was sent may have acted (the ledger shows it did): the
/// script's `ToolError` says it is not retryable and to check before sending it again, and the
/// envelope lists the call's outcome as unknown, not failed. A read that timed out the same way
/// may be retried.
#[test]
fn a_write_without_an_answer_is_not_retryable_and_its_outcome_is_unknown() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "request_timeout_secs = 1\n\n[[policy.rules]]\nmatch = \"ledger.*\"\naction = \"allow\"\n",
    );
    let (code, ended) = run_json(
        &home,
        r#"const seen = {};
for (const [name, call] of [["write", () => ledger.slowWrite({ key: "once", seconds: 5 })],
                            ["read", () => ledger.slowRead({ seconds: 5 })]]) {
  try { await call(); seen[name] = "answered" }
  catch (e) { seen[name] = { code: e.code, retryable: e.retryable, hint: e.hint ?? null, message: e.message } }
}
return seen;"#,
    );
    assert_eq!(code, 0, "{ended}");
    let write = &ended["result"]["write"];
    assert_eq!(write["code"], "upstream_unavailable", "{ended}");
    assert_eq!(write["retryable"], false, "{ended}");
    assert!(
        write["hint"]
            .as_str()
            .unwrap_or("")
            .contains("may have taken effect"),
        "{ended}"
    );
    assert!(
        write["message"]
            .as_str()
            .unwrap_or("")
            .contains("`request_timeout_secs`"),
        "the message names the config key there is: {ended}"
    );
    assert_eq!(ended["result"]["read"]["retryable"], true, "{ended}");
    let outcomes: Vec<&str> = ended["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["outcome"].as_str())
        .collect();
    assert_eq!(outcomes, ["unknown", "unknown"], "{ended}");
    let written = std::fs::read_to_string(&ledger).unwrap_or_default();
    assert_eq!(
        written.lines().filter(|l| l.starts_with("write")).count(),
        1,
        "the write did reach the upstream: {written}"
    );
}

/// A resumed run replays such a write from its journal as it first ended: outcome unknown, not
/// retryable, with the advice to check; and it is not sent again.
#[test]
fn a_replayed_write_without_an_answer_keeps_its_unknown_outcome() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "request_timeout_secs = 1\n\n[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n\n[[policy.rules]]\nmatch = \"ledger.entries\"\naction = \"ask\"\n",
    );
    let script = r#"let write;
try { await ledger.slowWrite({ key: "once", seconds: 5 }); write = "answered" }
catch (e) { write = { retryable: e.retryable, hint: e.hint ?? null } }
await ledger.entries({});
return write;"#;
    let (code, paused) = run_json(&home, script);
    assert_eq!(code, 3, "waits for the approval of the read: {paused}");
    let run_id = paused["runId"].as_str().expect("runId").to_string();
    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = envelope(&exec(&home, &["exec", "--resume", &run_id, "--json"], ""));
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(resumed["result"]["retryable"], false, "{resumed}");
    assert!(
        resumed["result"]["hint"]
            .as_str()
            .unwrap_or("")
            .contains("may have taken effect"),
        "{resumed}"
    );
    assert_eq!(resumed["calls"][0]["outcome"], "unknown", "{resumed}");
    let written = std::fs::read_to_string(&ledger).unwrap_or_default();
    assert_eq!(
        written.lines().filter(|l| l.starts_with("write")).count(),
        1,
        "never sent again: {written}"
    );
}

/// The counter server as source `name`, which starts only while the file `down` is absent.
/// The config is the same either way (so the cached tool listing stays valid, and a call to the
/// down source fails before anything is sent instead of meeting no global). `NAME.write` is
/// allowed.
fn flaky_counter(name: &str, counts_file: &std::path::Path, down: &std::path::Path) -> String {
    format!(
        "[sources.{name}]\ncommand = \"sh\"\nargs = [\"-c\", \"test -e \\\"$DOWN\\\" && exit 1; exec \\\"$0\\\" \\\"$1\\\"\", {}, {}]\nenv = {{ COUNTER_FILE = {}, DOWN = {} }}\n\n[[policy.rules]]\nmatch = \"{name}.write\"\naction = \"allow\"\n",
        serde_json::to_string(&repo().join(".venv/bin/python").display().to_string()).unwrap(),
        serde_json::to_string(
            &repo()
                .join("tests/peers/counter_server.py")
                .display()
                .to_string()
        )
        .unwrap(),
        serde_json::to_string(&counts_file.display().to_string()).unwrap(),
        serde_json::to_string(&down.display().to_string()).unwrap(),
    )
}

#[test]
fn a_source_down_before_the_call_allows_the_same_request_again() {
    let home = Home::new();
    let down = home.path().join("down");
    let counts_file = home.path().join("counts.json");
    home.write_config(&flaky_counter("counter", &counts_file, &down));
    let (code, up) = run_json(&home, "return await counter.counts();");
    assert_eq!(code, 0, "the source works while up: {up}");

    std::fs::write(&down, "").expect("mark the source down");
    let (code, failed) = run_json(&home, "return await counter.write({ key: 'a' });");
    assert_eq!(code, 1);
    assert_eq!(failed["error"]["code"], "upstream_unavailable", "{failed}");
    assert_eq!(
        failed["error"]["recovery"],
        json!({
            "execute_request": "unchanged",
            "provider_execution": "not_started",
            "automatic_replay": false,
        }),
        "{failed}"
    );
    assert_eq!(counts(&counts_file), json!({}), "nothing was written");
}

#[test]
fn a_resumed_run_that_fails_counts_its_journaled_calls() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    // counter.publish asks; counter.write ran before the pause and answers from the journal
    // when the run resumes, so only the journal knows it was sent.
    let code = "await counter.write({ key: 'a' }); await counter.publish({ key: 'b' }); throw new Error('after the publish');";
    let (exit, paused) = run_json(&home, code);
    assert_eq!(exit, 3, "{paused}");
    let run_id = paused["runId"].as_str().expect("runId").to_string();
    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]));
    assert_eq!(resumed["error"]["recovery"], outcome_unknown(), "{resumed}");
    assert!(
        hint(&resumed).contains("`counter.write`, `counter.publish` reached the upstream"),
        "{resumed}"
    );
    assert_eq!(
        counts(&counts_file),
        json!({ "write:a": 1, "publish:b": 1 })
    );
}

#[test]
fn a_resumed_run_does_not_count_a_journaled_call_that_was_never_sent() {
    let home = Home::new();
    let down = home.path().join("down");
    let counts_file = counter_config(&home);
    // `flaky` (down during the run) next to `counter`, whose read-only `counts` asks here.
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    home.write_config(&format!(
        "{config}\n{}\n[[policy.rules]]\nmatch = \"counter.counts\"\naction = \"ask\"\n",
        flaky_counter("flaky", &counts_file, &down)
    ));
    let (code, up) = run_json(&home, "return await flaky.counts();");
    assert_eq!(
        code, 0,
        "flaky works while up (and its tools are cached): {up}"
    );

    std::fs::write(&down, "").expect("mark flaky down");
    // flaky.write fails before anything is sent and is journaled so; counter.counts asks.
    let script = "let sent = 'sent'; try { await flaky.write({ key: 'a' }); } catch (e) { sent = e.code; } await counter.counts(); throw new Error('after the read: ' + sent);";
    let (exit, paused) = run_json(&home, script);
    assert_eq!(exit, 3, "{paused}");
    let run_id = paused["runId"].as_str().expect("runId").to_string();
    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]));
    assert_eq!(resumed["status"], "failed", "{resumed}");
    let error = &resumed["error"];
    assert_eq!(error["code"], "runtime_error", "{resumed}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("after the read: upstream_unavailable"),
        "the journal answered the unsent call: {resumed}"
    );
    // Only the approved read reached an upstream: no contract, and no word of a write.
    assert!(error.get("recovery").is_none(), "{resumed}");
    assert!(!hint(&resumed).contains("flaky.write"), "{resumed}");
    assert_eq!(counts(&counts_file), json!({}), "nothing was written");
}

#[test]
fn a_source_that_lists_no_tools_is_the_script_s_mistake() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.empty]\ncommand = {}\nargs = [{}]\n",
        serde_json::to_string(&repo().join(".venv/bin/python").display().to_string()).unwrap(),
        serde_json::to_string(
            &repo()
                .join("tests/peers/empty_server.py")
                .display()
                .to_string()
        )
        .unwrap(),
    ));
    let (code, failed) = run_json(&home, "return await empty.anything({});");
    assert_eq!(code, 1);
    let error = &failed["error"];
    assert_eq!(error["code"], "runtime_error", "{failed}");
    assert_eq!(
        error["message"],
        "source `empty` lists no tools, so the script cannot call it"
    );
    assert!(hint(&failed).contains("search or describe"), "{failed}");
    assert_eq!(
        error["recovery"],
        json!({
            "execute_request": "correct_arguments",
            "provider_execution": "not_started",
            "automatic_replay": false,
        }),
        "{failed}"
    );
}

#[test]
fn a_misspelt_source_is_pointed_at_the_source_and_an_undefined_variable_is_not() {
    let home = Home::new();
    counter_config(&home);
    for script in [
        "return await countr.read({});",
        "return await Counter.read({});",
        "return await conuter.read({});",
    ] {
        let (code, failed) = run_json(&home, script);
        assert_eq!(code, 1);
        assert_eq!(failed["error"]["code"], "runtime_error", "{failed}");
        assert!(
            hint(&failed).contains("Did you mean `counter`?"),
            "{script}: {failed}"
        );
    }
    for script in [
        "return c;",
        "return resultOfTheCount;",
        "return hb.search('x');",
    ] {
        let (_, failed) = run_json(&home, script);
        assert_eq!(failed["error"]["code"], "runtime_error", "{failed}");
        let hint = hint(&failed);
        assert!(
            !hint.contains("counter") && hint.contains("Fix the script")
                || script.starts_with("return hb") && hint.contains("Did you mean `hub`?"),
            "{script}: {failed}"
        );
    }
}

#[test]
fn an_expired_approval_after_a_write_must_not_be_replayed() {
    let home = Home::new();
    counter_config(&home);
    let (_, paused) = run_json(&home, crate::approvals::SCRIPT);
    let run_id = paused["runId"].as_str().expect("runId").to_string();
    rusqlite::Connection::open(home.path().join("data/state.sqlite"))
        .and_then(|db| db.execute("UPDATE approvals SET expires_at_ms = 1", []))
        .expect("expire the approval");
    let expired = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]));
    assert_eq!(expired["error"]["code"], "approval_expired", "{expired}");
    assert_eq!(expired["error"]["recovery"], outcome_unknown(), "{expired}");
    assert!(
        hint(&expired).contains("`counter.write` reached"),
        "{expired}"
    );
    assert_eq!(stored(&home, &expired), expired);
}

#[test]
fn a_source_that_never_connected_is_named_with_its_reason_not_a_reference_error() {
    let home = Home::new();
    home.write_config(
        "[sources.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo cannot start >&2; exit 3\"]\n",
    );
    let (code, failed) = run_json(&home, "return await broken.anything({});");
    assert_eq!(code, 1);
    let error = &failed["error"];
    assert_eq!(error["code"], "upstream_unavailable", "{failed}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("source `broken` is configured but not available")
            && !message.contains("ReferenceError"),
        "{failed}"
    );
    assert!(
        hint(&failed).contains("capabilities source test broken"),
        "{failed}"
    );
    assert_eq!(
        error["recovery"],
        json!({
            "execute_request": "unchanged",
            "provider_execution": "not_started",
            "automatic_replay": false,
        }),
        "{failed}"
    );
    // A name that is no source stays the script's own mistake.
    let (_, typo) = run_json(&home, "return await brokn.anything({});");
    assert_eq!(typo["error"]["code"], "runtime_error", "{typo}");
}

/// An owner that lost its run to another process while its write was out (its lease lapsed:
/// it stalled, or two replicas' clocks disagree) answers with the call it sent and
/// `do_not_replay`, not "ran nothing, send it again": sending the script again as a new run
/// would write twice. Here the store's claim is handed to another owner while the write waits.
#[test]
fn an_attempt_whose_run_was_taken_over_reports_the_write_it_sent() {
    let home = Home::new();
    let ledger = ledger_config(
        &home,
        "[[policy.rules]]\nmatch = \"ledger.slowWrite\"\naction = \"allow\"\n",
    );
    let mut command = home.command(&["exec", "-", "--json"]);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("capabilities runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"return await ledger.slowWrite({ key: \"once\", seconds: 3 });")
            .expect("write the script");
    }
    // Bounded against a hang, not timed: the write is out once the ledger shows it.
    let mut tries = 0;
    while !std::fs::read_to_string(&ledger)
        .unwrap_or_default()
        .contains("write once")
    {
        tries += 1;
        assert!(tries < 1200, "the write never reached the ledger");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    rusqlite::Connection::open(home.path().join("data/state.sqlite"))
        .and_then(|db| {
            db.execute(
                "UPDATE runs SET owner = 'another-host|boot|ns|1|claim', lease_until_ms = 9999999999999 WHERE status = 'running'",
                [],
            )
        })
        .expect("hand the claim to another owner");
    let output = child.wait_with_output().expect("exec ends");
    let taken: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not an envelope ({e}):\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(taken["error"]["code"], "run_in_progress", "{taken}");
    assert!(
        taken["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("was taken over by another process"),
        "{taken}"
    );
    assert_eq!(taken["error"]["recovery"], outcome_unknown(), "{taken}");
    assert_eq!(taken["calls"][0]["address"], "ledger.slowWrite", "{taken}");
    assert!(
        hint(&taken).contains("Do not send this script again"),
        "{taken}"
    );
}
