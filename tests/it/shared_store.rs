//! Several hubs on one PostgreSQL store (`[store] url`), each "replica" with a data directory of
//! its own and the key in `CAPABILITIES_STATE_KEY`: an approval given in one is seen by the
//! others, concurrent resumes across replicas send an approved write once, a replica killed in
//! the middle of a write leaves it to another that never sends it again, a replica whose clock
//! runs ahead leaves a live run alone, approvals expire by the store's clock, tokens and stored results are shared, and a replica with
//! the wrong key refuses to start. Each test gets a
//! database of its own on the server `tests/setup.sh` starts (CAPABILITIES_TEST_POSTGRES).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::repo;
use crate::guarantees::{
    SLOW_WRITE, exec_json, kill_hub_once_ledger_has, run_id, wait_for_line, writes,
};
use crate::hub_http::{HttpHub, create_token, python_client_running};
use crate::raw::Raw;
use crate::support::Home;

/// The server's maintenance database, as a role that may create databases.
fn admin_url() -> String {
    std::env::var("CAPABILITIES_TEST_POSTGRES").unwrap_or_else(|_| {
        "postgres://capabilities:capabilities@127.0.0.1:5432/postgres?sslmode=disable".into()
    })
}

/// A database made for one test and dropped after it.
struct Database {
    name: String,
    url: String,
}

impl Database {
    fn new() -> Database {
        let name = format!("cap_test_{}_{}", std::process::id(), rand_suffix());
        admin(&format!("CREATE DATABASE {name}"));
        let url = admin_url().replacen("/postgres", &format!("/{name}"), 1);
        Database { name, url }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| {
            admin(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
        });
    }
}

fn rand_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{nanos:x}")
}

/// Runs `sql` on the maintenance database.
fn admin(sql: &str) {
    run_sql(&admin_url(), sql);
}

/// Runs `sql` on the database at `url`, on a thread of its own (the blocking client runs a
/// runtime of its own).
fn run_sql(url: &str, sql: &str) {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap_or_else(|e| {
            panic!("PostgreSQL is not reachable at {url} (tests/setup.sh starts it): {e}")
        });
        client.batch_execute(&sql).expect(&sql);
    })
    .join()
    .unwrap();
}

/// 32 bytes in base64, the same for every replica of one test.
const KEY: &str = "c2hhcmVkLXN0YXRlLWtleS1mb3ItdGhlLXJlcGxpY2E=";

/// A replica: its own home, the shared store, the shared key, and the ledger server writing to
/// `ledger`.
fn replica(db: &Database, ledger: &Path) -> Home {
    let home = Home::new().with_env("CAPABILITIES_STATE_KEY", KEY);
    home.write_config(&format!(
        "[store]\nurl = {}\n\n[sources.ledger]\ncommand = {}\nargs = [{}]\nenv = {{ LEDGER_FILE = {} }}\n",
        json!(db.url),
        json!(repo().join(".venv/bin/python").display().to_string()),
        json!(repo().join("tests/peers/ledger_server.py").display().to_string()),
        json!(ledger.display().to_string()),
    ));
    home
}

fn ledger_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("ledger.txt")
}

#[test]
fn an_approval_in_one_replica_is_used_once_by_concurrent_resumes_in_two_others() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let [first, second, third] = [0, 1, 2].map(|_| replica(&db, &ledger));
    // The run pauses in the first replica and is approved from the second.
    let (paused, envelope) = exec_json(&first, &["exec", "-", "--json"], SLOW_WRITE);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let run_id = run_id(&envelope);
    let listed = second.run(&["hub", "runs", "--pending"]).ok();
    assert!(listed.stdout.contains(&run_id), "{}", listed.stdout);
    second.run(&["hub", "approve", &run_id]).ok();
    // Two hubs in two other replicas resume it at once, twice each.
    let mut hubs = [Raw::hub(&second), Raw::hub(&third)];
    for hub in &mut hubs {
        hub.initialize("2025-11-25");
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
            statuses.push(
                answer["result"]["structuredContent"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
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
    // The first replica sees how it ended.
    let (again, envelope) = exec_json(&first, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(writes(&ledger), ["write k"]);
}

/// libfaketime, which `tests/setup.sh` installs: preloaded, it shifts the process's clock.
fn faketime() -> PathBuf {
    std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("faketime/libfaketime.so.1"))
        .find(|library| library.exists())
        .expect("libfaketime is installed (tests/setup.sh)")
}

/// A replica whose clock is `shift` off (libfaketime's `+40m`, `-40m`).
fn skewed_replica(db: &Database, ledger: &Path, shift: &str) -> Home {
    replica(db, ledger)
        .with_env("LD_PRELOAD", &faketime().display().to_string())
        .with_env("FAKETIME", shift)
        .with_env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
}

/// Approvals expire by the store's clock: a replica whose clock runs forty minutes ahead (past
/// the thirty a call waits for a person) approves a call another replica paused on a moment ago,
/// and one whose clock runs forty minutes behind cannot approve a call whose time is up.
#[test]
fn approvals_expire_by_the_store_clock_whatever_a_replica_clock_says() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let first = replica(&db, &ledger);
    let ahead = skewed_replica(&db, &ledger, "+40m");
    let behind = skewed_replica(&db, &ledger, "-40m");
    let (paused, envelope) = exec_json(&first, &["exec", "-", "--json"], SLOW_WRITE);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let early = run_id(&envelope);
    let approved = ahead.run(&["hub", "approve", &early]);
    assert_eq!(approved.code, 0, "{}", approved.stderr);
    let (_, envelope) = exec_json(&first, &["exec", "--resume", &early, "--json"], "");
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(writes(&ledger), ["write k"]);
    // A second run's call whose time is up by the store's clock, though not yet by a clock forty
    // minutes behind.
    let (paused, envelope) = exec_json(&first, &["exec", "-", "--json"], SLOW_WRITE);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let late = run_id(&envelope);
    run_sql(
        &db.url,
        "UPDATE approvals SET expires_at_ms = created_at_ms - 1",
    );
    let refused = behind.run(&["hub", "approve", &late]);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(refused.stderr.contains("expired"), "{}", refused.stderr);
    let (_, envelope) = exec_json(&behind, &["exec", "--resume", &late, "--json"], "");
    assert_eq!(envelope["error"]["code"], "approval_expired", "{envelope}");
    assert_eq!(
        writes(&ledger),
        ["write k"],
        "the late write never went out"
    );
}

/// A replica whose clock runs ten minutes ahead finds a run that another replica is running
/// still claimed, and leaves it: leases are read by the store's clock, not the replica's, so
/// the running one finishes its write and nothing takes the run from under it.
#[test]
fn a_replica_whose_clock_runs_ahead_never_takes_over_a_live_run() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let first = replica(&db, &ledger);
    let ahead = skewed_replica(&db, &ledger, "+10m");
    let (skewed, shown) = exec_json(&ahead, &["exec", "-", "--json"], "return Date.now();");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64;
    assert!(
        shown["result"].as_f64().unwrap_or_default() > now + 300_000.0,
        "the replica's clock runs ahead: {}",
        skewed.stdout
    );
    let script = r#"return await ledger.slowWrite({ key: "k", seconds: 6 });"#;
    let (paused, envelope) = exec_json(&first, &["exec", "-", "--json"], script);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let run_id = run_id(&envelope);
    first.run(&["hub", "approve", &run_id]).ok();
    let resuming = first
        .command(&["exec", "--resume", &run_id, "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(&ledger, "write k");
    let (_, envelope) = exec_json(&ahead, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(envelope["status"], "running", "{envelope}");
    let finished = resuming.wait_with_output().unwrap();
    let envelope: serde_json::Value = serde_json::from_slice(&finished.stdout).unwrap_or_default();
    assert_eq!(
        envelope["status"],
        "completed",
        "{}",
        String::from_utf8_lossy(&finished.stderr)
    );
    assert_eq!(writes(&ledger), ["write k"]);
}

#[test]
fn a_replica_killed_mid_write_leaves_a_run_another_replica_never_writes_again() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let first = replica(&db, &ledger);
    let second = replica(&db, &ledger);
    let (_, envelope) = exec_json(&first, &["exec", "-", "--json"], SLOW_WRITE);
    let run_id = run_id(&envelope);
    first.run(&["hub", "approve", &run_id]).ok();
    // The first replica's hub dies while the approved write is in flight.
    kill_hub_once_ledger_has(&first, &ledger, json!({ "resume": run_id }), "write k");
    // Another replica takes the run over: the write is not sent again, and says so.
    let (ended, envelope) = exec_json(&second, &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(ended.code, 1, "{}", ended.stderr);
    assert_eq!(envelope["error"]["code"], "interrupted", "{envelope}");
    assert_eq!(
        envelope["error"]["recovery"]["execute_request"], "do_not_replay",
        "{envelope}"
    );
    assert_eq!(writes(&ledger), ["write k"]);
}

#[test]
fn tokens_runs_and_stored_results_are_shared_between_replicas() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let first = replica(&db, &ledger);
    let second = replica(&db, &ledger);
    let created = first.run(&["token", "create", "team"]).ok();
    assert!(
        created.stderr.contains("shown only this once"),
        "{}",
        created.stderr
    );
    let listed = second.run(&["token", "list"]).ok();
    assert!(listed.stdout.contains("team"), "{}", listed.stdout);
    // A result too large to send, stored by one replica, is read by another.
    let (_, stored) = exec_json(
        &first,
        &["exec", "-", "--json"],
        "return Array.from({ length: 3000 }, (_, i) => ({ i, text: 'row ' + i }));",
    );
    let result_ref = stored["stored"]["resultRef"]
        .as_str()
        .unwrap_or_else(|| panic!("not stored: {stored}"))
        .to_string();
    let (_, page) = exec_json(
        &second,
        &["exec", "-", "--json"],
        &format!(
            "const v = await hub.get({}); return v.length;",
            json!(result_ref)
        ),
    );
    assert_eq!(page["result"], 3000, "{page}");
    // The doctor of either replica checks the store.
    let doctor = second.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("is reachable and up to date"),
        "{}{}",
        doctor.stdout,
        doctor.stderr
    );
}

#[test]
fn a_replica_with_the_wrong_key_or_an_unreachable_store_refuses_with_what_to_do() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let keyed = replica(&db, &ledger);
    let (done, _) = exec_json(&keyed, &["exec", "-", "--json"], "return 1");
    assert_eq!(done.code, 0, "{}", done.stderr);
    // Not a key at all: said so, with how to make one.
    let garbled = Home::new().with_env("CAPABILITIES_STATE_KEY", "not-a-key");
    garbled.write_config(&format!("[store]\nurl = {}\n", json!(db.url)));
    let refused = garbled.command(&["hub", "serve"]).output().unwrap();
    assert_ne!(refused.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("openssl rand -base64 32"), "{stderr}");
    // Another key: the hub does not start, and no run is touched.
    let wrong = Home::new().with_env(
        "CAPABILITIES_STATE_KEY",
        "YW5vdGhlci1rZXktYW5vdGhlci1rZXktYW5vdGhlciE=",
    );
    wrong.write_config(&format!("[store]\nurl = {}\n", json!(db.url)));
    let refused = wrong.command(&["hub", "serve"]).output().unwrap();
    assert_ne!(refused.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("is not the one these runs were encrypted with")
            && stderr.contains("give this one the key they use"),
        "the way out is the other hubs' key, not clearing their runs: {stderr}"
    );
    // Clearing from the wrong replica needs a confirmation, and without one deletes nothing.
    let unconfirmed = wrong.run(&["hub", "runs", "--clear"]).fails();
    assert!(
        unconfirmed.stderr.contains("for every hub sharing it"),
        "{}",
        unconfirmed.stderr
    );
    let still = keyed.run(&["hub", "runs", "--json"]).ok();
    assert!(still.stdout.contains("runId"), "{}", still.stdout);
    // A store nobody answers at: the message names it and says what to check.
    let nowhere = Home::new().with_env("CAPABILITIES_STATE_KEY", KEY);
    nowhere.write_config(
        "[store]\nurl = \"postgres://capabilities:capabilities@127.0.0.1:1/nothing?sslmode=disable\"\n",
    );
    let failed = nowhere.run(&["hub", "runs"]).fails();
    assert!(
        failed
            .stderr
            .contains("cannot connect to the shared state store")
            && failed.stderr.contains("refused")
            && !failed.stderr.contains("capabilities:capabilities"),
        "{}",
        failed.stderr
    );
    // A URL that is not one.
    nowhere.write_config("[store]\nurl = \"mysql://db.example/runs\"\n");
    let bad = nowhere.run(&["hub", "runs"]).fails();
    assert!(bad.stderr.contains("URL is not valid"), "{}", bad.stderr);
}

/// `execute` over Streamable HTTP (2026-07-28, stateless) with the Python `mcp` client; `script`
/// may be `resume:RUN_ID`. The envelope.
fn over_http(hub: &HttpHub, token: &str, script: &str) -> serde_json::Value {
    let report = python_client_running(hub, &["2026-07-28", token, script]);
    let envelope = report["execute"]["structured"].clone();
    assert!(envelope.is_object(), "{report}");
    envelope
}

#[test]
fn two_http_replicas_share_runs_approvals_and_tokens_and_write_once() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let a = replica(&db, &ledger);
    let b = replica(&db, &ledger);
    let token = create_token(&a, &["team"]);
    let mut hub_a = HttpHub::start(&a, &[]);
    let hub_b = HttpHub::start(&b, &[]);
    // Paused on A, approved from a terminal, resumed through B and A twenty times at once.
    let paused = over_http(&hub_a, &token, SLOW_WRITE);
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let first_run = run_id(&paused);
    b.run(&["hub", "approve", &first_run]).ok();
    let resumes: Vec<_> = (0..20)
        .map(|i| {
            let url_hub = if i % 2 == 0 { &hub_b } else { &hub_a };
            let (url, token, resume) =
                (url_hub.url(), token.clone(), format!("resume:{first_run}"));
            std::thread::spawn(move || {
                crate::common::json_report(
                    crate::common::python_peer("hub_http_client.py")
                        .arg(url)
                        .args(["2026-07-28", &token, &resume]),
                )
            })
        })
        .collect();
    let statuses: Vec<String> = resumes
        .into_iter()
        .map(|t| {
            let report = t.join().unwrap();
            report["execute"]["structured"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        statuses.iter().all(|s| s == "completed" || s == "running"),
        "{statuses:?}"
    );
    assert_eq!(
        writes(&ledger),
        ["write k"],
        "the write reached the upstream once"
    );

    // A replica killed mid-write: the other reports the outcome unknown and never resends it.
    let paused = over_http(
        &hub_a,
        &token,
        r#"return await ledger.slowWrite({ key: "m", seconds: 5 });"#,
    );
    let second_run = run_id(&paused);
    a.run(&["hub", "approve", &second_run]).ok();
    let (url_a, resume_token, resume) =
        (hub_a.url(), token.clone(), format!("resume:{second_run}"));
    let in_flight = std::thread::spawn(move || {
        let _ = crate::common::python_peer("hub_http_client.py")
            .arg(url_a)
            .args(["2026-07-28", &resume_token, &resume])
            .output();
    });
    wait_for_line(&ledger, "write m");
    hub_a.kill();
    let _ = in_flight.join();
    let ended = over_http(&hub_b, &token, &format!("resume:{second_run}"));
    assert_eq!(ended["error"]["code"], "interrupted", "{ended}");
    assert_eq!(
        ended["error"]["recovery"]["provider_execution"], "unknown",
        "{ended}"
    );
    assert_eq!(writes(&ledger), ["write k", "write m"], "never sent twice");

    // A token revoked through one replica's store is refused by the other at once.
    a.run(&["token", "revoke", "team"]).ok();
    let bearer = format!("Bearer {token}");
    let refused = crate::hub_http::post(
        &hub_b,
        &[("Authorization", &bearer)],
        &crate::hub_http::initialize(),
    );
    assert_eq!(
        refused.status, 401,
        "B is up and refuses the revoked token: {}{}",
        refused.head, refused.body
    );
}

/// The run a direct call's "a person must decide" answer names.
fn waiting_run(answer: &serde_json::Value) -> Option<String> {
    let text = answer["result"]["content"][0]["text"].as_str()?;
    let start = text.find("hub approve ")? + "hub approve ".len();
    let rest = &text[start..];
    Some(rest[..rest.find('`')?].to_string())
}

#[test]
fn one_direct_call_sent_to_two_replicas_at_once_waits_on_one_run_and_writes_once() {
    let db = Database::new();
    let shared = tempfile::tempdir().unwrap();
    let ledger = ledger_in(&shared);
    let [first, second] = [0, 1].map(|_| replica(&db, &ledger));
    let mut hubs = [&first, &second].map(|home| {
        let mut hub = Raw::spawn(home.command(&["hub", "serve", "--direct"]));
        hub.initialize("2025-11-25");
        hub
    });
    let call = |id: u64, key: &str| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "ledger_write", "arguments": { "key": key } } })
        .to_string()
    };
    // Several rounds, each a call sent four times to each replica, interleaved: a race lost
    // once is enough to make two runs.
    let mut waiting = Vec::new();
    for (round, key) in ["once", "r1", "r2", "r3"].into_iter().enumerate() {
        let first_id = 10 * round as u64 + 1;
        for id in first_id..first_id + 4 {
            for hub in &mut hubs {
                hub.send(&call(id, key));
            }
        }
        let asked: Vec<serde_json::Value> = hubs
            .iter_mut()
            .flat_map(|hub| (0..4).map(|_| hub.next()).collect::<Vec<_>>())
            .collect();
        let runs: std::collections::BTreeSet<Option<String>> =
            asked.iter().map(waiting_run).collect();
        assert_eq!(runs.len(), 1, "one run for one call ({key}): {asked:?}");
        let Some(Some(run_id)) = runs.into_iter().next() else {
            panic!("the calls did not wait for a person: {asked:?}");
        };
        waiting.push(run_id);
    }
    let pending = first.run(&["hub", "runs", "--pending", "--json"]).ok();
    let pending: Vec<serde_json::Value> = serde_json::from_str(&pending.stdout).unwrap();
    assert_eq!(pending.len(), 4, "one run per call waits: {pending:?}");
    let run_id = &waiting[0];

    // Allowed in one replica, the call sent to the other runs it, once.
    first.run(&["hub", "approve", run_id]).ok();
    hubs[1].send(&call(100, "once"));
    let ran = hubs[1].next();
    assert_ne!(ran["result"]["isError"], json!(true), "{ran}");
    assert_eq!(writes(&ledger), ["write once"], "{ran}");
    for hub in hubs {
        hub.close();
    }
}
