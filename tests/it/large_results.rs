//! Large results as handles, against a real upstream that returns as many rows as asked and
//! counts its calls (tests/peers/rows_server.py): a result over the output budget is stored and
//! the run completes; its `nextRequest` runs as it is; paging with `hub.read` reaches `complete`
//! with every row exactly once at every budget, and the provider ran once in all; expiry,
//! eviction and another token's reference are `result_unavailable`; the envelope stays small
//! and lists the calls a run started even when it ended at `call_limit` or its time limit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::approvals::envelope;
use crate::common::repo;
use crate::hub_http::{HttpHub, create_token, python_client_running};
use crate::raw::Raw;
use crate::support::{Home, Run};

/// The rows server as source `rows` with `extra` TOML after it; returns its calls file.
pub(crate) fn rows_config(home: &Home, extra: &str) -> PathBuf {
    let calls = home.path().join("calls.txt");
    home.write_config(&format!(
        "[sources.rows]\ncommand = {}\nargs = [{}]\nenv = {{ CALLS_FILE = {} }}\n\n{extra}",
        json!(repo().join(".venv/bin/python").display().to_string()),
        json!(
            repo()
                .join("tests/peers/rows_server.py")
                .display()
                .to_string()
        ),
        json!(calls.display().to_string()),
    ));
    calls
}

/// What the provider was asked, one line per call it received.
fn provider_calls(calls: &Path) -> Vec<String> {
    std::fs::read_to_string(calls)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn exec(home: &Home, code: &str, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["exec", "-", "--json"];
    args.extend_from_slice(extra);
    let run = Run::with_stdin(&mut home.command(&args), code);
    let envelope = envelope(&run);
    (run, envelope)
}

/// One execute over a stdio hub; returns the envelope.
fn execute(hub: &mut Raw, id: u64, arguments: Value) -> Value {
    let answer = hub.call(id, "execute", arguments);
    let envelope = answer["result"]["structuredContent"].clone();
    assert!(envelope.is_object(), "no envelope: {answer}");
    envelope
}

const LIST_2000: &str = "return await rows.listRows({ n: 2000 });";

/// The ids of `items`, checking each row carries only `fields` (when given).
fn ids(items: &Value, fields: Option<&[&str]>) -> Vec<u64> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("items is not an array: {items}"))
        .iter()
        .map(|row| {
            if let Some(fields) = fields {
                let keys: BTreeSet<&str> = row
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                assert!(keys.iter().all(|k| fields.contains(k)), "{row}");
            }
            row["id"].as_u64().unwrap_or_else(|| panic!("no id: {row}"))
        })
        .collect()
}

#[test]
fn a_2000_row_listing_is_stored_and_its_next_request_runs_as_it_is() {
    let home = Home::new();
    let calls = rows_config(&home, "");
    let (run, stored) = exec(&home, LIST_2000, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(stored["status"], "completed", "{stored}");
    assert!(stored.get("result").is_none(), "{stored}");
    let meta = &stored["stored"];
    let result_ref = meta["resultRef"].as_str().expect("a resultRef").to_string();
    assert!(meta["bytes"].as_u64().unwrap() > 16_384, "{meta}");
    assert_eq!(meta["outputBudgetBytes"], 16_384, "{meta}");
    assert!(meta["expiresAtMs"].as_u64().is_some(), "{meta}");
    assert_eq!(meta["collections"][0]["path"], "/rows", "{meta}");
    assert_eq!(meta["collections"][0]["rows"], 2000, "{meta}");
    let fields: Vec<&str> = meta["collections"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for field in ["id", "subject", "body", "labels", "starred"] {
        assert!(fields.contains(&field), "{meta}");
    }
    assert_eq!(
        meta["recovery"]["execute_request"], "use_next_request",
        "{meta}"
    );
    assert_eq!(
        meta["recovery"]["provider_execution"], "completed",
        "{meta}"
    );
    // Shape only: no scalar of the data (a body, a subject) shows anywhere in the envelope.
    let text = stored.to_string();
    assert!(
        !text.contains("secret-body") && !text.contains("Subject"),
        "{text}"
    );
    assert!(text.len() <= 16_384, "{} bytes", text.len());
    assert!(
        stored["notices"].as_array().is_some_and(|n| n
            .iter()
            .any(|n| n.as_str().unwrap_or("").contains("hub.read"))),
        "{stored}"
    );
    // nextRequest, sent as it is, returns the first page of the rows.
    let code = stored["nextRequest"]["code"].as_str().expect("nextRequest");
    assert!(code.contains(&result_ref), "{code}");
    let (run, page) = exec(&home, code, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(page["status"], "completed", "{page}");
    let result = &page["result"];
    assert_eq!(result["offset"], 0, "{page}");
    assert_eq!(result["total"], 2000, "{page}");
    let returned = result["returned"].as_u64().unwrap();
    assert!(returned > 0 && returned < 2000, "{page}");
    assert_eq!(
        ids(&result["items"], None),
        (0..returned).collect::<Vec<_>>()
    );
    assert_eq!(result["nextOffset"], returned, "{page}");
    assert_eq!(result["complete"], false, "{page}");
    // hub.get hands the whole value to a script, to aggregate inside the sandbox.
    let (_, counted) = exec(
        &home,
        &format!(
            "const v = await hub.get({}); return v.rows.filter(r => r.starred).length;",
            json!(result_ref)
        ),
        &[],
    );
    assert_eq!(counted["result"], 667, "{counted}");
    assert_eq!(
        provider_calls(&calls),
        ["list 2000"],
        "the provider ran once"
    );
    // A person running the script at a terminal gets the whole value on stdout.
    let whole = Run::with_stdin(&mut home.command(&["exec", "-"]), LIST_2000);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let value: Value = serde_json::from_str(&whole.stdout).expect("the whole value as JSON");
    assert_eq!(value["rows"].as_array().map(Vec::len), Some(2000));
    assert!(whole.stderr.contains("stored as res_"), "{}", whole.stderr);
}

#[test]
fn a_large_value_without_arrays_is_stored_and_its_next_request_shows_a_part_of_it() {
    let home = Home::new();
    rows_config(&home, "");
    let (_, stored) = exec(&home, "return { text: 'é'.repeat(20000), n: 1 };", &[]);
    assert_eq!(stored["status"], "completed", "{stored}");
    assert_eq!(stored["stored"]["collections"], json!([]), "{stored}");
    let code = stored["nextRequest"]["code"].as_str().expect("nextRequest");
    let (_, part) = exec(&home, code, &[]);
    assert_eq!(part["status"], "completed", "{part}");
    assert_eq!(part["result"], json!(["text", "n"]), "{part}");
}

#[test]
fn a_result_nested_past_what_json_carries_is_invalid_whatever_its_size() {
    let home = Home::new();
    rows_config(&home, "");
    // Small enough to send, and large enough to be stored: the same refusal, naming the cause.
    for code in [
        "let o = []; for (let i = 0; i < 200; i++) o = [o]; return o;",
        "let o = 1; for (let i = 0; i < 3000; i++) o = { a: o }; return o;",
    ] {
        let (_, failed) = exec(&home, code, &[]);
        assert_eq!(failed["error"]["code"], "invalid_result", "{failed}");
        let message = failed["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("nests deeper than the 128 levels"),
            "{failed}"
        );
    }
}

#[test]
fn paging_with_fields_sees_every_row_once_at_every_budget_and_the_provider_runs_once() {
    let home = Home::new();
    let calls = rows_config(&home, "");
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let mut id = 1;
    for budget in [1_024u64, 4_096, 16_384, 65_536] {
        let stored = execute(
            &mut hub,
            id,
            json!({ "code": LIST_2000, "outputBudgetBytes": budget }),
        );
        id += 1;
        assert_eq!(stored["status"], "completed", "{stored}");
        // The metadata itself fits the budget it was made for.
        assert!(
            stored["stored"].to_string().len() + stored["nextRequest"].to_string().len()
                <= budget as usize,
            "{stored}"
        );
        let result_ref = stored["stored"]["resultRef"].as_str().unwrap().to_string();
        let mut seen = Vec::new();
        let mut offset = 0u64;
        let mut pages = 0;
        loop {
            let code = format!(
                "return await hub.read({}, {{ path: \"/rows\", fields: [\"id\", \"subject\", \"starred\"], offset: {offset} }});",
                json!(result_ref)
            );
            let page = execute(
                &mut hub,
                id,
                json!({ "code": code, "outputBudgetBytes": budget }),
            );
            id += 1;
            pages += 1;
            assert_eq!(page["status"], "completed", "{page}");
            let result = &page["result"];
            assert!(result.is_object(), "budget {budget}: {page}");
            assert!(
                result.to_string().len() <= budget as usize,
                "a page over {budget} bytes: {}",
                result.to_string().len()
            );
            let items = ids(&result["items"], Some(&["id", "subject", "starred"]));
            // Sparse fields stay absent: only every third row is starred.
            for row in result["items"].as_array().unwrap() {
                let starred = row.get("starred").is_some();
                assert_eq!(starred, row["id"].as_u64().unwrap() % 3 == 0, "{row}");
            }
            assert_eq!(result["offset"], offset, "{page}");
            assert_eq!(result["returned"], items.len(), "{page}");
            seen.extend(items);
            if result["complete"] == true {
                assert_eq!(result["nextOffset"], Value::Null, "{page}");
                break;
            }
            assert!(!result["items"].as_array().unwrap().is_empty(), "{page}");
            offset = result["nextOffset"].as_u64().expect("a nextOffset");
            assert!(pages < 2_000, "paging does not progress");
        }
        assert_eq!(seen, (0..2000).collect::<Vec<_>>(), "budget {budget}");
    }
    assert_eq!(provider_calls(&calls), vec!["list 2000"; 4]);
    hub.close();
}

#[test]
fn a_row_too_large_and_a_bad_projection_say_what_to_change() {
    let home = Home::new();
    rows_config(&home, "");
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let stored = execute(
        &mut hub,
        1,
        json!({ "code": "return await rows.listRows({ n: 40, width: 3000 });", "outputBudgetBytes": 1024 }),
    );
    let result_ref = stored["stored"]["resultRef"]
        .as_str()
        .expect("stored")
        .to_string();
    let read = |hub: &mut Raw, id, options: &str| {
        let code = format!("return await hub.read({}, {options});", json!(result_ref));
        execute(hub, id, json!({ "code": code, "outputBudgetBytes": 1024 }))
    };
    let whole = read(&mut hub, 2, "{ path: \"/rows\" }");
    let error = &whole["error"];
    assert_eq!(error["code"], "row_too_large", "{whole}");
    assert!(
        error["hint"].as_str().unwrap().contains("fields"),
        "{whole}"
    );
    assert_eq!(
        error["recovery"]["execute_request"], "adjust_projection",
        "{whole}"
    );
    assert_eq!(
        error["recovery"]["provider_execution"], "completed",
        "{whole}"
    );
    // Fewer fields fit.
    let narrow = read(&mut hub, 3, "{ path: \"/rows\", fields: [\"id\"] }");
    assert_eq!(narrow["status"], "completed", "{narrow}");
    assert_eq!(narrow["result"]["total"], 40, "{narrow}");
    // A field no row has is named; so is a path that is not there.
    let unknown = read(&mut hub, 4, "{ path: \"/rows\", fields: [\"nope\"] }");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope"),
        "{unknown}"
    );
    let missing = read(&mut hub, 5, "{ path: \"/mail\" }");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/mail"),
        "{missing}"
    );
    hub.close();
}

#[test]
fn expired_evicted_and_unknown_references_are_unavailable_and_say_not_to_repeat_writes() {
    let home = Home::new();
    let limits = |ttl: u64| {
        format!(
            "[policy]\ndestructive = \"allow\"\n\n[limits]\nstored_results = 2\nstored_ttl_secs = {ttl}\n"
        )
    };
    let calls = rows_config(&home, &limits(300));
    let mut refs = Vec::new();
    for _ in 0..3 {
        let (_, stored) = exec(&home, "return await rows.createRows({ n: 400 });", &[]);
        assert_eq!(stored["status"], "completed", "{stored}");
        refs.push(stored["stored"]["resultRef"].as_str().unwrap().to_string());
    }
    let get = |result_ref: &str| {
        exec(
            &home,
            &format!(
                "const v = await hub.get({}); return v.created.length;",
                json!(result_ref)
            ),
            &[],
        )
        .1
    };
    // The oldest made room for the third.
    let evicted = get(&refs[0]);
    assert_eq!(evicted["error"]["code"], "result_unavailable", "{evicted}");
    let hint = evicted["error"]["hint"].as_str().unwrap();
    assert!(hint.contains("never repeat a write"), "{hint}");
    assert_eq!(
        evicted["error"]["recovery"]["code"], "MCP_RESULT_UNAVAILABLE",
        "{evicted}"
    );
    assert_eq!(get(&refs[2])["result"], 400);
    let unknown = get("res_doesnotexist");
    assert_eq!(unknown["error"]["code"], "result_unavailable", "{unknown}");
    // A result kept for one second is gone two seconds later.
    rows_config(&home, &limits(1));
    let (_, brief) = exec(&home, "return await rows.createRows({ n: 400 });", &[]);
    let brief_ref = brief["stored"]["resultRef"].as_str().unwrap().to_string();
    std::thread::sleep(std::time::Duration::from_millis(2_000));
    let expired = get(&brief_ref);
    assert_eq!(expired["error"]["code"], "result_unavailable", "{expired}");
    assert_eq!(provider_calls(&calls).len(), 4, "no write ran again");
}

#[test]
fn a_stdio_hub_stores_for_the_local_user_and_another_token_cannot_read_a_tokens_result() {
    let home = Home::new();
    rows_config(&home, "");
    // A stdio hub's result is the local user's: a later `exec` reads it.
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let stored = execute(&mut hub, 1, json!({ "code": LIST_2000 }));
    hub.close();
    let local_ref = stored["stored"]["resultRef"].as_str().unwrap().to_string();
    let count = |r: &str| {
        format!(
            "const v = await hub.get({}); return v.rows.length;",
            json!(r)
        )
    };
    let (_, read) = exec(&home, &count(&local_ref), &[]);
    assert_eq!(read["result"], 2000, "{read}");

    let alice = create_token(&home, &["alice"]);
    let bob = create_token(&home, &["bob"]);
    let http = HttpHub::start(&home, &[]);
    let run = |token: &str, script: &str| {
        python_client_running(&http, &["2026-07-28", token, script])["execute"]["structured"]
            .clone()
    };
    let stored = run(&alice, LIST_2000);
    assert_eq!(stored["status"], "completed", "{stored}");
    let alice_ref = stored["stored"]["resultRef"].as_str().unwrap().to_string();
    // A stateless request of the same token reads it; another token and the local user cannot.
    assert_eq!(run(&alice, &count(&alice_ref))["result"], 2000);
    let refused = run(&bob, &count(&alice_ref));
    assert_eq!(refused["error"]["code"], "result_unavailable", "{refused}");
    let (_, local) = exec(&home, &count(&alice_ref), &[]);
    assert_eq!(local["error"]["code"], "result_unavailable", "{local}");
    let bobs_view = run(&bob, &count(&local_ref));
    assert_eq!(
        bobs_view["error"]["code"], "result_unavailable",
        "{bobs_view}"
    );
}

#[test]
fn the_calls_list_is_true_at_the_call_limit_and_at_the_time_limit() {
    let home = Home::new();
    // The run's time includes starting the Python source, seconds on a loaded machine: the
    // limit leaves room for that before the 30 s read below runs into it.
    rows_config(&home, "[limits]\nmax_calls = 5\nrun_timeout_secs = 10\n");
    // Five calls in flight at once, then a sixth over the limit.
    let (_, limited) = exec(
        &home,
        "const slow = rows.slowRead({ seconds: 1 });
         const fast = [1, 2, 3, 4].map(n => rows.listRows({ n }));
         await Promise.all(fast);
         await rows.listRows({ n: 5 });
         return await slow;",
        &[],
    );
    assert_eq!(limited["error"]["code"], "call_limit", "{limited}");
    let listed = limited["calls"].as_array().expect("calls");
    assert_eq!(listed.len(), 6, "{limited}");
    assert_eq!(listed[0]["address"], "rows.slowRead", "{limited}");
    for call in &listed[1..5] {
        assert_eq!(call["outcome"], "done", "{limited}");
    }
    // The call over the limit is listed as never sent.
    assert_eq!(listed[5]["outcome"], "not_sent", "{limited}");
    // The read still in flight went out: the provider work had started, and how it ended is
    // not known.
    assert_eq!(listed[0]["outcome"], "unknown", "{limited}");
    assert_eq!(
        limited["error"]["recovery"]["provider_execution"], "unknown",
        "{limited}"
    );

    let (_, timed_out) = exec(
        &home,
        "await rows.listRows({ n: 1 }); return await rows.slowRead({ seconds: 30 });",
        &[],
    );
    assert_eq!(timed_out["error"]["code"], "timeout", "{timed_out}");
    let listed = timed_out["calls"].as_array().expect("calls");
    assert_eq!(listed.len(), 2, "{timed_out}");
    assert_eq!(listed[0]["outcome"], "done", "{timed_out}");
    assert_eq!(listed[1]["address"], "rows.slowRead", "{timed_out}");
    assert_eq!(listed[1]["outcome"], "unknown", "{timed_out}");
}

#[test]
fn oversized_answers_values_and_errors_are_refused_or_cut_with_their_real_size() {
    let home = Home::new();
    rows_config(&home, "[limits]\ntool_result_bytes = 100000\n");
    // One call's answer over the cap never reaches the script.
    let (_, big) = exec(
        &home,
        "return await rows.bigAnswer({ bytes: 150000 });",
        &[],
    );
    assert_eq!(big["error"]["code"], "result_too_large", "{big}");
    let message = big["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("rows.bigAnswer") && message.contains("100000"),
        "{message}"
    );
    assert_eq!(big["calls"][0]["address"], "rows.bigAnswer", "{big}");
    // A final value over 1 MiB says its real size.
    let (_, huge) = exec(&home, "return 'x'.repeat(1200000);", &[]);
    assert_eq!(huge["error"]["code"], "result_too_large", "{huge}");
    let message = huge["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1200002") || message.contains("1,200,002"),
        "{message}"
    );
    // A 100,000-character throw is cut to the budget with a marker.
    let (run, thrown) = exec(&home, "throw new Error('e'.repeat(100000));", &[]);
    let message = thrown["error"]["message"].as_str().unwrap();
    assert!(message.len() <= 8_192, "{} bytes", message.len());
    assert!(message.contains("cut"), "{message}");
    assert!(run.stdout.len() <= 65_536, "{} bytes", run.stdout.len());
}
