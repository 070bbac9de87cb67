//! Pause and resume: a run that writes, then hits a call that asks, waits for a person; once
//! approved from the terminal it resumes, and every write ran exactly once (counted by a real
//! upstream). Denials, divergent scripts and unknown runs end clearly.

use std::time::Duration;

use serde_json::Value;

use crate::common::repo;
use crate::support::{Home, Run};

pub(crate) fn counter_config(home: &Home) -> std::path::PathBuf {
    let counts = home.path().join("counts.json");
    home.write_config(&format!(
        "[sources.counter]\ncommand = {}\nargs = [{}]\nenv = {{ COUNTER_FILE = {} }}\n\n[[policy.rules]]\nmatch = \"counter.write\"\naction = \"allow\"\n",
        serde_json::to_string(&repo().join(".venv/bin/python").display().to_string()).unwrap(),
        serde_json::to_string(&repo().join("tests/peers/counter_server.py").display().to_string()).unwrap(),
        serde_json::to_string(&counts.display().to_string()).unwrap(),
    ));
    counts
}

pub(crate) fn exec(home: &Home, args: &[&str], code: &str) -> Run {
    Run::with_stdin(&mut home.command(args), code)
}

pub(crate) fn envelope(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not an envelope ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// `exec --resume RUN_ID` of a run whose calls were decided: it completes.
fn resumes_to_completion(home: &Home, run_id: &str) {
    let resumed = home.run(&["exec", "--resume", run_id, "--json"]).ok();
    assert_eq!(
        envelope(&resumed)["status"],
        "completed",
        "{}",
        resumed.stdout
    );
}

pub(crate) fn counts(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|_| "{}".into()))
        .expect("counts")
}

pub(crate) const SCRIPT: &str = r#"
    const first = await counter.write({ key: "a" });
    const published = await counter.publish({ key: "b" });
    const second = await counter.write({ key: "c" });
    return { first, published, second };
"#;

#[test]
fn an_approved_run_resumes_and_no_write_runs_twice() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let paused = exec(&home, &["exec", "-", "--json"], SCRIPT);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let paused = envelope(&paused);
    assert_eq!(paused["status"], "awaiting_approval");
    let run_id = paused["runId"].as_str().expect("runId").to_string();
    let pending = &paused["pending"][0];
    assert_eq!(pending["kind"], "approval");
    assert_eq!(pending["address"], "counter.publish");
    assert!(
        pending["summary"].as_str().unwrap().contains("key: \"b\""),
        "{pending}"
    );
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ "write:a": 1 }),
        "the write before the pause ran once"
    );

    // Resuming before anyone decided runs nothing and answers the same.
    let early = home.run(&["exec", "--resume", &run_id, "--json"]);
    assert_eq!(early.code, 3);
    assert_eq!(envelope(&early)["pending"], paused["pending"]);
    assert_eq!(counts(&counts_file), serde_json::json!({ "write:a": 1 }));

    let listed = home.run(&["hub", "runs", "--pending"]).ok();
    assert!(
        listed.stdout.contains(&run_id) && listed.stdout.contains("counter.publish"),
        "{}",
        listed.stdout
    );

    let approved = home.run(&["hub", "approve", &run_id]).ok();
    assert!(
        approved.stdout.contains("allow_once"),
        "{}",
        approved.stdout
    );

    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]).ok();
    let resumed = envelope(&resumed);
    assert_eq!(resumed["status"], "completed", "{resumed}");
    // The Python SDK wraps a returned int as structured content `{ "result": n }`.
    assert_eq!(
        resumed["result"],
        serde_json::json!({ "first": { "result": 1 }, "published": { "result": 1 }, "second": { "result": 1 } })
    );
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ "write:a": 1, "publish:b": 1, "write:c": 1 })
    );

    // A finished run answers with its envelope again and runs nothing.
    let again = home.run(&["exec", "--resume", &run_id, "--json"]).ok();
    assert_eq!(envelope(&again)["result"], resumed["result"]);
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ "write:a": 1, "publish:b": 1, "write:c": 1 })
    );

    let audit = home.run(&["hub", "runs", "--json"]).ok();
    let runs: Value = serde_json::from_str(&audit.stdout).expect("json");
    let run = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["runId"] == run_id.as_str())
        .expect("the run is listed");
    assert_eq!(run["approvals"][0]["decidedBy"], "terminal");
    assert_eq!(run["audit"][0]["detail"]["decision"], "allow_once");
}

#[test]
fn a_denied_call_throws_and_the_rest_of_the_script_goes_on() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let code = r#"
        await counter.write({ key: "a" });
        let denied = null;
        try { await counter.publish({ key: "b" }); } catch (e) { denied = e.code; }
        return denied;
    "#;
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], code));
    let run_id = paused["runId"].as_str().unwrap().to_string();
    home.run(&["hub", "deny", &run_id]).ok();
    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(resumed["result"], "policy_denied", "{resumed}");
    assert_eq!(counts(&counts_file), serde_json::json!({ "write:a": 1 }));
}

/// Two calls wait; the person denies one. Resuming while the other is still undecided lists
/// only that one as pending: the denied call no longer waits for anyone.
#[test]
fn a_call_decided_since_the_pause_is_no_longer_listed_as_waiting() {
    let home = Home::new();
    counter_config(&home);
    let code = r#"
        return await Promise.allSettled([counter.publish({ key: "b" }), counter.publish({ key: "d" })]);
    "#;
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], code));
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let ids: Vec<String> = paused["pending"]
        .as_array()
        .map(|p| {
            p.iter()
                .filter_map(|p| p["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(ids.len(), 2, "{paused}");
    let run_id = paused["runId"].as_str().unwrap().to_string();
    let (first, second) = (&ids[0], &ids[1]);
    let seq = first.rsplit('/').next().unwrap();
    home.run(&["hub", "deny", &run_id, "--call", seq]).ok();
    let waiting = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]));
    assert_eq!(waiting["status"], "awaiting_approval", "{waiting}");
    let left: Vec<&str> = waiting["pending"]
        .as_array()
        .map(|p| p.iter().filter_map(|p| p["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(left, [second.as_str()], "{waiting}");
}

#[test]
fn deciding_on_unknown_or_settled_runs_says_so() {
    let home = Home::new();
    counter_config(&home);
    let none = home.run(&["hub", "approve", "run_nope"]).fails();
    assert!(
        none.stderr.contains("no runs yet") || none.stderr.contains("no run `run_nope`"),
        "{}",
        none.stderr
    );
    let done = exec(
        &home,
        &["exec", "-", "--json"],
        "return await counter.write({ key: 'x' });",
    );
    let run_id = envelope(&done)["runId"].as_str().unwrap().to_string();
    let settled = home.run(&["hub", "approve", &run_id]).fails();
    assert!(
        settled.stderr.contains("no call waiting"),
        "{}",
        settled.stderr
    );
    let unknown = home.run(&["hub", "approve", "run_nope"]).fails();
    assert!(
        unknown.stderr.contains("no run `run_nope`"),
        "{}",
        unknown.stderr
    );
    let resume_unknown = home.run(&["exec", "--resume", "run_nope"]).fails();
    assert!(
        resume_unknown.stderr.contains("no run `run_nope`"),
        "{}",
        resume_unknown.stderr
    );
    let always = home.run(&["hub", "approve", &run_id, "--always"]).fails();
    assert!(
        always.stderr.contains("no call waiting"),
        "{}",
        always.stderr
    );
}

fn tamper(home: &Home, sql: &str) {
    let connection =
        rusqlite::Connection::open(home.path().join("data/state.sqlite")).expect("open the store");
    connection.execute(sql, []).expect("tamper");
}

#[test]
fn a_run_that_no_longer_matches_its_journal_stops_without_writing() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let run_id = paused["runId"].as_str().unwrap().to_string();
    // As if the first call had been to another tool: the replay must not guess.
    tamper(
        &home,
        "UPDATE calls SET call_digest = 'different' WHERE seq = 0",
    );
    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]);
    assert_eq!(resumed.code, 1);
    let resumed = envelope(&resumed);
    assert_eq!(resumed["error"]["code"], "replay_divergence", "{resumed}");
    assert!(
        resumed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("other arguments"),
        "{resumed}"
    );
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ "write:a": 1 }),
        "nothing ran after the divergence"
    );
}

#[test]
fn an_approval_nobody_decides_expires() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let run_id = paused["runId"].as_str().unwrap().to_string();
    tamper(&home, "UPDATE approvals SET expires_at_ms = 1");
    let late = home.run(&["hub", "approve", &run_id]).fails();
    assert!(late.stderr.contains("expired"), "{}", late.stderr);
    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]);
    assert_eq!(resumed.code, 1);
    assert_eq!(envelope(&resumed)["error"]["code"], "approval_expired");
    assert_eq!(counts(&counts_file), serde_json::json!({ "write:a": 1 }));
}

#[test]
fn a_run_the_store_cannot_record_sends_no_call() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    // A store that exists, then refuses every new run (as a full disk would): the script
    // starts while its run is being recorded, and its first call must wait for that record.
    exec(&home, &["exec", "-", "--json"], "return 1");
    tamper(
        &home,
        "CREATE TRIGGER refuse_runs BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    let refused = exec(
        &home,
        &["exec", "-", "--json"],
        r#"try { await counter.write({ key: "a" }); } catch (e) {} return "went on";"#,
    );
    assert_eq!(refused.code, 1, "{}\n{}", refused.stdout, refused.stderr);
    let refused = envelope(&refused);
    assert_eq!(refused["status"], "failed", "{refused}");
    assert!(refused["result"].is_null(), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the run was not started") && message.contains("disk is full"),
        "{refused}"
    );
    assert!(
        refused["error"]["hint"]
            .as_str()
            .is_some_and(|hint| hint.starts_with("Nothing ran.")),
        "{refused}"
    );
    assert_eq!(counts(&counts_file), serde_json::json!({}));
}

#[test]
fn on_a_terminal_approve_asks_first_unless_told_yes() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let code = r#"return await counter.publish({ key: "news" });"#;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let paused = envelope(&exec(&home, &["exec", "-", "--json"], code));
        assert_eq!(paused["status"], "awaiting_approval", "{paused}");
        runs.push(paused["runId"].as_str().unwrap().to_string());
    }
    // Asked, and a "no" decides nothing.
    let mut asked = crate::exec::OnTerminal::start(&home, &["hub", "approve", &runs[0]]);
    asked.wait_for("[y/N] ");
    asked.type_keys("n\n");
    let (status, shown) = asked.finish();
    assert_ne!(status, Some(0), "{shown}");
    assert!(shown.contains("nothing was decided"), "{shown}");
    // `--yes` (once or for the run, not only with --always) decides without a question.
    for (run_id, extra) in runs.iter().zip([&[][..], &["--for-run"][..]]) {
        let mut args = vec!["hub", "approve", run_id.as_str(), "--yes"];
        args.extend_from_slice(extra);
        let told = crate::exec::OnTerminal::start(&home, &args);
        let (status, shown) = told.finish();
        assert_eq!(status, Some(0), "{args:?}: {shown}");
        assert!(!shown.contains("[y/N]"), "{shown}");
        resumes_to_completion(&home, run_id);
    }
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ "publish:news": 2 })
    );
}

#[test]
fn a_call_too_long_for_its_preview_waits_with_all_of_its_arguments() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let tail = "THE-PART-PAST-THE-PREVIEW";
    let code = format!(
        r#"return await counter.publish({{ key: "{}{tail}" }});"#,
        "k".repeat(120)
    );
    let paused = envelope(&exec(&home, &["exec", "-", "--json"], &code));
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let run_id = paused["runId"].as_str().unwrap().to_string();
    // The compact preview cuts it (as the model and the lists see it) ...
    assert!(!paused.to_string().contains(tail), "{paused}");
    // ... and the person sees all of it: in the run's record, and where they decide.
    let runs: Value =
        serde_json::from_str(&home.run(&["hub", "runs", "--json"]).ok().stdout).expect("json");
    let approval = &runs[0]["approvals"][0];
    assert!(
        !approval["preview"]
            .as_str()
            .unwrap_or_default()
            .contains(tail),
        "{approval}"
    );
    assert!(
        approval["whole"]
            .as_str()
            .is_some_and(|whole| whole.ends_with(&format!("{tail}\" }}"))),
        "{approval}"
    );
    let mut approving = crate::exec::OnTerminal::start(&home, &["hub", "approve", &run_id]);
    approving.wait_for("[y/N] ");
    approving.type_keys("y\n");
    let (status, shown) = approving.finish();
    assert_eq!(status, Some(0), "{shown}");
    assert!(
        shown.contains(&format!(
            "  all of the arguments: {{ key: \"{}",
            "k".repeat(120)
        )) && shown.contains(tail),
        "{shown}"
    );
    resumes_to_completion(&home, &run_id);
    assert_eq!(
        counts(&counts_file),
        serde_json::json!({ format!("publish:{}{tail}", "k".repeat(120)): 1 })
    );
    // Sealed at rest like the preview.
    let database = std::fs::read(home.path().join("data/state.sqlite")).expect("the store");
    assert!(
        !database.windows(tail.len()).any(|w| w == tail.as_bytes()),
        "the arguments are in the clear in the store"
    );
}

#[test]
fn the_hub_opens_one_page_for_the_calls_a_run_waits_on_and_a_few_pages_in_all() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    counter_config(&home);
    // A browser that writes down what it was asked to open, and a display for it.
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let opened = home.path().join("opened.txt");
    let launcher = bin.join("xdg-open");
    let log = opened.display();
    std::fs::write(&launcher, format!("#!/bin/sh\necho \"$1\" >> '{log}'\n")).expect("write");
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = home.command(&["hub", "serve"]);
    command.env("PATH", path).env("DISPLAY", ":99");
    let mut hub = crate::raw::Raw::spawn(command);
    hub.initialize("2025-11-25");
    let told = |answer: &serde_json::Value| {
        let envelope = &answer["result"]["structuredContent"];
        let message = envelope["pending"][0]["message"]
            .as_str()
            .unwrap_or_default();
        (
            envelope["runId"].as_str().unwrap_or_default().to_string(),
            message.to_string(),
        )
    };
    let (run_id, message) = told(&hub.call(1, "execute", serde_json::json!({ "code": SCRIPT })));
    assert!(
        message.contains("opened in the user's browser"),
        "{message}"
    );
    // Asked again while the person decides (a client polling its resume): no second tab.
    for id in 2..4 {
        let (_, again) = told(&hub.call(id, "execute", serde_json::json!({ "resume": run_id })));
        assert!(again.contains("already open"), "{again}");
    }
    // Other runs get pages of their own, up to five waiting at once; then none.
    for id in 4..8 {
        let (_, message) = told(&hub.call(id, "execute", serde_json::json!({ "code": SCRIPT })));
        assert!(
            message.contains("opened in the user's browser"),
            "{message}"
        );
    }
    let (over, message) = told(&hub.call(8, "execute", serde_json::json!({ "code": SCRIPT })));
    assert!(
        message.contains("Several approval pages already wait")
            && message.contains(&format!("capabilities hub approve {over}")),
        "{message}"
    );
    hub.close();
    // The launcher runs on its own; a bound on it, not a speed check.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let lines = loop {
        let lines = std::fs::read_to_string(&opened)
            .unwrap_or_default()
            .lines()
            .count();
        if lines >= 5 || std::time::Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(500));
    let lines_after = std::fs::read_to_string(&opened)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!((lines, lines_after), (5, 5));
}
