//! Large results inside the sandbox (issue 15): `hub.read`/`hub.get` against a test bridge and
//! against scripts that change the built-ins they use; the caps on what a tool or `hub.get` may
//! bring in and on the final value; an envelope that stays small and true; and every call a run
//! started listed with its outcome, however the run ended. No timing assertions.

use std::sync::Arc;
use std::time::Duration;

use capabilities::sandbox::{
    Bridge, CallEnd, CallOutcome, CancelToken, ENVELOPE_MAX_BYTES, ERROR_TEXT_MAX_BYTES, ErrorCode,
    ExecuteEnvelope, Status, ToolCall, run_with_cancel,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::sandbox_hostile::{TestBridge, assert_code, assert_result, exec, exec_with, request};

fn envelope_size(envelope: &ExecuteEnvelope) -> usize {
    serde_json::to_string(envelope).map_or(usize::MAX, |json| json.len())
}

fn outcomes(envelope: &ExecuteEnvelope) -> Vec<CallEnd> {
    envelope
        .calls
        .iter()
        .map(|c| {
            c.outcome
                .unwrap_or_else(|| panic!("no outcome: {envelope:?}"))
        })
        .collect()
}

#[track_caller]
fn assert_message(envelope: &ExecuteEnvelope, code: ErrorCode, parts: &[&str]) {
    assert_code(envelope, code);
    let message = envelope.error.as_ref().map(|e| e.message.as_str());
    let message = message.unwrap_or_default();
    for part in parts {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
}

// --- hub.read and hub.get ----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_read_and_get_reach_the_bridge_and_are_not_tool_calls() {
    let code = r#"
        const pages = [];
        // More reads than the call limit allows calls: they are not calls.
        for (let i = 0; i < 12; i++) pages.push(await hub.read("ref-1", { offset: i }));
        return {
            full: (await hub.read("ref-1", { path: "/data/items", fields: ["id", "title"], offset: 40 })).asked,
            defaults: (await hub.read("ref-1", {})).asked,
            absent: (await hub.read("ref-1", { path: undefined, fields: undefined, offset: undefined })).asked,
            items: pages[11].items,
            offsets: pages.map((p) => p.asked.offset),
            get: await hub.get("ref-2"),
        };
    "#;
    let mut request = request(code);
    request.output_budget_bytes = Some(2048);
    let envelope = exec_with(request).await;
    assert_result(
        &envelope,
        json!({
            "full": { "ref": "ref-1", "path": "/data/items", "fields": ["id", "title"], "offset": 40, "budget": 2048 },
            "defaults": { "ref": "ref-1", "path": "", "fields": null, "offset": 0, "budget": 2048 },
            "absent": { "ref": "ref-1", "path": "", "fields": null, "offset": 0, "budget": 2048 },
            "items": [{ "id": 1 }],
            "offsets": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            "get": { "ref": "ref-2", "rows": [1, 2, 3] },
        }),
    );
    assert!(envelope.calls.is_empty(), "{:?}", envelope.calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_read_and_get_refuse_bad_arguments_with_type_errors() {
    let sixty_five: Vec<String> = (0..65).map(|i| format!("\"f{i}\"")).collect();
    let sixty_five = format!("[{}]", sixty_five.join(", "));
    let cases: Vec<(String, &str)> = vec![
        (
            "hub.read()".into(),
            "hub.read: resultRef must be a non-empty string",
        ),
        (
            "hub.read('')".into(),
            "hub.read: resultRef must be a non-empty string",
        ),
        (
            "hub.read(7)".into(),
            "hub.read: resultRef must be a non-empty string",
        ),
        (
            "hub.read('r', null)".into(),
            "hub.read: options must be an object like",
        ),
        (
            "hub.read('r', 5)".into(),
            "hub.read: options must be an object like",
        ),
        (
            "hub.read('r', ['/a'])".into(),
            "hub.read: options must be an object like",
        ),
        (
            "hub.read('r', { limit: 5 })".into(),
            "hub.read: unknown option \"limit\"; the options are path, fields and offset",
        ),
        (
            "hub.read('r', { path: 5 })".into(),
            "hub.read: path must be a JSON Pointer string",
        ),
        (
            "hub.read('r', { path: 'items' })".into(),
            "hub.read: path must be a JSON Pointer string",
        ),
        (
            "hub.read('r', { fields: 'id' })".into(),
            "hub.read: fields must be an array of 1 to 64",
        ),
        (
            "hub.read('r', { fields: [] })".into(),
            "hub.read: fields must be an array of 1 to 64",
        ),
        (
            format!("hub.read('r', {{ fields: {sixty_five} }})"),
            "hub.read: fields must be an array of 1 to 64",
        ),
        (
            "hub.read('r', { fields: [''] })".into(),
            "hub.read: fields[0] must be a non-empty string",
        ),
        (
            "hub.read('r', { fields: ['id', 2] })".into(),
            "hub.read: fields[1] must be a non-empty string",
        ),
        (
            "hub.read('r', { fields: [, 'id'] })".into(),
            "hub.read: fields[0] must be a non-empty string",
        ),
        (
            "hub.read('r', { fields: ['id', 'name', 'id'] })".into(),
            "hub.read: fields lists \"id\" twice",
        ),
        (
            "hub.read('r', { offset: -1 })".into(),
            "hub.read: offset must be a non-negative integer",
        ),
        (
            "hub.read('r', { offset: 1.5 })".into(),
            "hub.read: offset must be a non-negative integer",
        ),
        (
            "hub.read('r', { offset: '3' })".into(),
            "hub.read: offset must be a non-negative integer",
        ),
        (
            "hub.read('r', { offset: 2 ** 53 })".into(),
            "hub.read: offset must be a non-negative integer",
        ),
        (
            "hub.read('r', { offset: null })".into(),
            "hub.read: offset must be a non-negative integer",
        ),
        (
            "hub.read('r', {}, 1)".into(),
            "hub.read takes a resultRef and an optional options object",
        ),
        (
            "hub.get()".into(),
            "hub.get: resultRef must be a non-empty string",
        ),
        (
            "hub.get('')".into(),
            "hub.get: resultRef must be a non-empty string",
        ),
        (
            "hub.get({ resultRef: 'r' })".into(),
            "hub.get: resultRef must be a non-empty string",
        ),
        (
            "hub.get('r', { path: '/a' })".into(),
            "hub.get takes exactly one argument, a resultRef",
        ),
        (
            "hub.get('r', undefined)".into(),
            "hub.get takes exactly one argument, a resultRef",
        ),
    ];
    for (call, expected) in cases {
        // Uncaught, the run fails with the TypeError; caught, it is a TypeError, never a call.
        let envelope = exec(&format!("return await {call}")).await;
        assert_message(
            &envelope,
            ErrorCode::RuntimeError,
            &["TypeError: ", expected],
        );
        let caught =
            exec(&format!("try {{ await {call}; return 'sent' }} catch (e) {{ return [e instanceof TypeError, e.message] }}")).await;
        let result = caught.result.clone().unwrap_or_default();
        assert_eq!(result[0], json!(true), "{call}: {caught:?}");
        assert!(
            result[1].as_str().is_some_and(|m| m.starts_with(expected)),
            "{call}: {result}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_reads_end_the_run_with_their_code_and_hint() {
    let gone = exec("return await hub.read('gone', { offset: 0 })").await;
    assert_message(
        &gone,
        ErrorCode::ResultUnavailable,
        &["hub.read: the stored result `gone` is not available"],
    );
    assert_eq!(
        gone.error.as_ref().and_then(|e| e.hint.as_deref()),
        Some(ErrorCode::ResultUnavailable.hint())
    );
    let get = exec("return await hub.get('gone')").await;
    assert_message(&get, ErrorCode::ResultUnavailable, &["hub.get: the stored"]);
    let wide = exec("return await hub.read('wide', { fields: ['body'] })").await;
    assert_message(
        &wide,
        ErrorCode::RowTooLarge,
        &["hub.read: row 0 of /items"],
    );
    assert_eq!(
        wide.error.as_ref().and_then(|e| e.hint.as_deref()),
        Some(ErrorCode::RowTooLarge.hint())
    );
    let caught = "try { await hub.read('wide') } catch (e) { return [e instanceof ToolError, e.code, e.address] }";
    assert_result(
        &exec(caught).await,
        json!([true, "row_too_large", "hub.read"]),
    );
}

/// The same reads under overrides a script can make; each must give what it gives untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_and_hostile_options_do_not_change_what_hub_read_does() {
    let body = r#"
        const page = await hub.read("ref-1", { path: "/items", fields: ["id", "name"], offset: 3 });
        const whole = await hub.get("ref-1");
        let gone = null;
        try { await hub.read("gone"); } catch (e) { gone = [e.code, e.address]; }
        let twice = null;
        try { await hub.read("ref-1", { fields: ["a", "a"] }); } catch (e) { twice = e.message; }
        return { asked: page.asked, items: page.items, whole, gone, twice };
    "#;
    let baseline = exec(body).await;
    assert_eq!(baseline.status, Status::Completed, "{baseline:?}");
    for poison in [
        "Object.defineProperty(Object.prototype, 'path', { get() { throw 1; } });",
        "Object.defineProperty(Object.prototype, 'fields', { get() { return ['forged']; } });",
        "Object.defineProperty(Object.prototype, 'offset', { get() { return 99; } });",
        "Object.defineProperty(Object.prototype, 'ok', { get() { return true; } }); \
         Object.defineProperty(Object.prototype, 'value', { get() { return 'forged'; } });",
        "JSON.stringify = () => { throw 1; }; JSON.parse = () => ({ ok: true, value: 'forged' });",
        "Array.prototype.push = function () { throw 1; };",
        "Promise.prototype.then = function () { throw 1; };",
        "Promise.prototype.constructor = function Fake() {}; Promise.resolve = () => { throw 1; };",
        "Object.keys = () => ['limit']; Reflect.ownKeys = () => []; Object.getOwnPropertyNames = () => [];",
        "Array.isArray = () => false; Number.isSafeInteger = () => false;",
        "Map.prototype.has = () => true; Map.prototype.set = () => { throw 1; };",
        "String.prototype.charCodeAt = () => 0; String.prototype.slice = () => 'forged';",
        "Function.prototype.call = () => { throw 1; }; Function.prototype.apply = () => { throw 1; };",
        "globalThis.TypeError = function () { return {}; }; globalThis.Promise = function () {};",
    ] {
        let envelope = exec(&format!("{poison}\n{body}")).await;
        assert_eq!(envelope.result, baseline.result, "{poison}\n{envelope:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_are_read_once_and_only_their_own_keys() {
    let code = r#"
        let reads = 0;
        const getter = { get path() { reads++; return reads === 1 ? "/items" : 5; } };
        const first = (await hub.read("ref-1", getter)).asked.path;

        const inherited = Object.create({ path: "/evil", fields: ["evil"] });
        inherited.offset = 2;
        const own = (await hub.read("ref-1", inherited)).asked;

        const trapped = [];
        const proxy = new Proxy({ fields: ["id"] }, {
            get(t, k) { trapped.push(String(k)); return t[k]; },
        });
        const viaProxy = (await hub.read("ref-1", proxy)).asked.fields;

        let lengthReads = 0;
        const list = new Proxy(["id", "name"], {
            get(t, k) { if (k === "length") lengthReads++; return t[k]; },
        });
        const viaList = (await hub.read("ref-1", { fields: list })).asked.fields;
        return { reads, first, own, trapped, viaProxy, lengthReads, viaList };
    "#;
    assert_result(
        &exec(code).await,
        json!({
            "reads": 1, "first": "/items",
            "own": { "ref": "ref-1", "path": "", "fields": null, "offset": 2, "budget": 16384 },
            "trapped": ["fields"], "viaProxy": ["id"],
            "lengthReads": 1, "viaList": ["id", "name"],
        }),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_result_over_the_tool_result_cap_is_refused() {
    let envelope = exec("return (await hub.get('huge')).blob.length").await;
    assert_message(
        &envelope,
        ErrorCode::ResultTooLarge,
        &[
            "hub.get: the stored result is 2,097,163 bytes of JSON",
            "1,048,576",
        ],
    );
    let hint = envelope.error.as_ref().and_then(|e| e.hint.clone());
    assert!(hint.is_some_and(|h| h.contains("hub.read(")));
    assert!(envelope.calls.is_empty());
    let caught = "try { await hub.get('huge') } catch (e) { return e.code }";
    assert_result(&exec(caught).await, json!("result_too_large"));
}

// --- Tool results and the final value ---------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_over_the_cap_never_enter_the_sandbox() {
    let mut capped = request("return (await test.big({ bytes: 20000 })).length");
    capped.limits.tool_result_bytes = 10_000;
    let envelope = exec_with(capped).await;
    assert_message(
        &envelope,
        ErrorCode::ResultTooLarge,
        &[
            "test.big: the result is 20,002 bytes of JSON",
            "at most 10,000 bytes of one tool result",
        ],
    );
    let hint = envelope.error.as_ref().and_then(|e| e.hint.clone());
    assert!(hint.is_some_and(|h| h.contains("Ask the tool for less")));
    // The call ran; the script did not get its value.
    assert_eq!(outcomes(&envelope), [CallEnd::Done]);
    assert!(!envelope.calls[0].ok);

    let mut within = request("return (await test.big({ bytes: 9998 })).length");
    within.limits.tool_result_bytes = 10_000;
    assert_result(&exec_with(within).await, json!(9998));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_value_over_the_budget_is_handed_over_to_be_stored() {
    let envelope = exec("return { rows: Array.from({ length: 3000 }, (_, i) => ({ i })) }").await;
    assert_eq!(envelope.status, Status::Completed, "{envelope:?}");
    assert!(envelope.error.is_none() && envelope.result.is_none());
    let json = envelope.oversized.clone().unwrap_or_default();
    assert!(json.len() > 16 << 10, "{}", json.len());
    let value: Value = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(value["rows"][2999], json!({ "i": 2999 }));
    // Not serialized: the hub decides what of it is sent.
    let sent = serde_json::to_string(&envelope).unwrap_or_default();
    assert!(!sent.contains("2999"), "{sent}");
    // Small results are sent as they are.
    let small = exec("return { rows: [1, 2] }").await;
    assert_result(&small, json!({ "rows": [1, 2] }));
    assert_eq!(small.oversized, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_value_over_the_cap_says_its_real_size() {
    // Non-ASCII: fewer UTF-16 units than the cap, more bytes; measured exactly.
    let envelope = exec("return ['é'.repeat(600000)]").await;
    assert_message(
        &envelope,
        ErrorCode::ResultTooLarge,
        &[
            "the result is 1,200,004 bytes of JSON; at most 1,048,576 bytes can be kept (16,384 are sent directly, more is stored for hub.read)",
        ],
    );
    assert!(envelope.truncated.result && envelope.oversized.is_none());
    // Over the cap for certain: not copied out to be measured, and said so.
    let ascii = exec("return ['x'.repeat(1843195)]").await;
    assert_message(
        &ascii,
        ErrorCode::ResultTooLarge,
        &["the result is at least 1,843,199 bytes of JSON"],
    );
    let string = exec("return 'x'.repeat(1843195)").await;
    assert_message(
        &string,
        ErrorCode::ResultTooLarge,
        &["the result is at least 1,843,197 bytes of JSON"],
    );
    // A lower cap from the config.
    let mut lowered = request("return 'x'.repeat(50000)");
    lowered.limits.final_value_bytes = 40_000;
    assert_message(
        &exec_with(lowered).await,
        ErrorCode::ResultTooLarge,
        &["at least 50,002 bytes", "at most 40,000 bytes can be kept"],
    );
    // An array certain to be over the cap is not written whole to find out (ten million holes
    // would be 50 MB of `null,` and run out of memory): its length says so, and the start of
    // the result is still the start of its JSON.
    let holes = exec("const a = []; a.length = 1e7; return { rows: a };").await;
    assert_message(
        &holes,
        ErrorCode::ResultTooLarge,
        &["the result is at least 20,000,001 bytes of JSON"],
    );
    let start = holes
        .result
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(start.starts_with(r#"{"rows":[null,null,"#), "{start:?}");
    // The start of a result over the cap is kept even where the cut falls inside a UTF-16
    // pair (an emoji), at either parity.
    for code in [
        r#"return ["a" + "\u{1F600}".repeat(600000)]"#,
        r#"return ["\u{1F600}".repeat(600000)]"#,
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::ResultTooLarge);
        let start = envelope
            .result
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(
            start.len() > 1000 && start.contains('\u{1F600}'),
            "{code}: {start:?}"
        );
    }
}

// --- The envelope stays small and true ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_character_throw_is_cut() {
    for code in [
        "throw new Error('x'.repeat(100000))",
        "throw 'é'.repeat(100000)",
        "throw new Error('\\u0000'.repeat(100000))",
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::RuntimeError);
        let message = envelope.error.as_ref().map_or("", |e| e.message.as_str());
        assert!(message.len() <= ERROR_TEXT_MAX_BYTES, "{}", message.len());
        assert!(message.contains("bytes in all]"), "{message}");
        assert!(
            envelope_size(&envelope) <= ENVELOPE_MAX_BYTES,
            "{}",
            envelope_size(&envelope)
        );
    }
    let mut small = request("throw new Error('x'.repeat(100000))");
    small.output_budget_bytes = Some(1024);
    let envelope = exec_with(small).await;
    let message = envelope.error.as_ref().map_or("", |e| e.message.as_str());
    assert!(message.len() <= 1024, "{}", message.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_calls_and_a_large_result_fit_the_envelope_and_stay_true() {
    let script = |result_bytes: usize| {
        format!(
            r#"
            for (let i = 0; i < 100; i++) console.log("line " + i);
            for (let i = 0; i < 100; i++) await test.echo({{ i }});
            return "r".repeat({result_bytes});
            "#
        )
    };
    let mut within = request(&script(60_000));
    within.limits.max_calls = 100;
    within.output_budget_bytes = Some(65_536);
    let envelope = exec_with(within).await;
    assert_eq!(envelope.status, Status::Completed, "{:?}", envelope.error);
    assert!(envelope_size(&envelope) <= ENVELOPE_MAX_BYTES);
    assert_eq!(
        envelope
            .result
            .as_ref()
            .and_then(Value::as_str)
            .map(str::len),
        Some(60_000),
        "the result is whole"
    );
    assert!(envelope.truncated.logs);
    // The calls left out are counted in a notice: all of them still add up to 100.
    let kept = envelope.calls.len();
    assert!(kept < 100);
    assert!(outcomes(&envelope).iter().all(|o| *o == CallEnd::Done));
    let notice = format!(
        "… and {} more calls: {} done, 0 failed, 0 not sent, 0 unknown",
        100 - kept,
        100 - kept
    );
    assert!(envelope.notices.contains(&notice), "{:?}", envelope.notices);

    // A result within the budget that cannot fit an envelope even alone goes to the hub to
    // store, and the logs and calls stay.
    let mut full = request(&script(65_530));
    full.limits.max_calls = 100;
    full.output_budget_bytes = Some(65_536);
    let envelope = exec_with(full).await;
    assert_eq!(envelope.status, Status::Completed, "{:?}", envelope.error);
    assert!(envelope_size(&envelope) <= ENVELOPE_MAX_BYTES);
    assert_eq!(envelope.result, None);
    assert_eq!((envelope.logs.len(), envelope.calls.len()), (100, 100));
    assert!(!envelope.truncated.logs && envelope.notices.is_empty());
    let stored: Value =
        serde_json::from_str(envelope.oversized.as_deref().unwrap_or("null")).unwrap_or_default();
    assert_eq!(stored.as_str().map(str::len), Some(65_530));
}

// --- Every call, with its outcome, however the run ends ------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_at_the_call_limit_are_listed_with_outcomes() {
    let code = r#"
        await test.echo({});
        try { await test.fail({}); } catch (e) {}
        await Promise.all(Array.from({ length: 17 }, (_, i) => test.hang({ i })));
    "#;
    let envelope = exec(code).await;
    assert_code(&envelope, ErrorCode::CallLimit);
    let got = outcomes(&envelope);
    // Two answered, eight sent and never answered, then the ones refused at the limit (the
    // eleventh at least; those issued before the run stopped).
    assert!(got.len() >= 11 && got.len() <= 19, "{got:?}");
    assert_eq!(got[..2], [CallEnd::Done, CallEnd::Failed]);
    assert_eq!(got[2..10], [CallEnd::Unknown; 8]);
    assert!(got[10..].iter().all(|o| *o == CallEnd::NotSent), "{got:?}");
    assert!(
        envelope.calls[2..]
            .iter()
            .all(|c| c.address == "test.hang" && !c.ok)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_at_a_timeout_are_unknown() {
    let mut short =
        request("await test.echo({}); await Promise.all([test.hang({}), test.hang({})]);");
    short.limits.run_timeout = Duration::from_millis(300);
    let envelope = exec_with(short).await;
    assert_code(&envelope, ErrorCode::Timeout);
    assert_eq!(
        outcomes(&envelope),
        [CallEnd::Done, CallEnd::Unknown, CallEnd::Unknown]
    );
}

/// Says when a `hang` call has reached it, so the test can cancel while it is in flight.
struct Signalling {
    hanging: Arc<Notify>,
}

impl Bridge for Signalling {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        if call.tool == "hang" {
            self.hanging.notify_one();
        }
        TestBridge.call(call)
    }

    fn search(&self, query: String) -> BoxFuture<'static, String> {
        TestBridge.search(query)
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        TestBridge.describe(targets)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_at_a_cancel_are_unknown() {
    let hanging = Arc::new(Notify::new());
    let bridge = Arc::new(Signalling {
        hanging: hanging.clone(),
    });
    let cancel = CancelToken::new();
    let run = tokio::spawn(run_with_cancel(
        request("await test.echo({}); await test.hang({}); return 1"),
        bridge,
        cancel.clone(),
    ));
    hanging.notified().await;
    cancel.cancel();
    let envelope = run.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(envelope.status, Status::Cancelled);
    assert_eq!(outcomes(&envelope), [CallEnd::Done, CallEnd::Unknown]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_other_ending_lists_its_calls_too() {
    let memory = exec(
        "await test.echo({}); test.hang({}); const keep = []; for (;;) keep.push(new Array(100000).fill(7))",
    )
    .await;
    assert_code(&memory, ErrorCode::MemoryLimit);
    assert_eq!(outcomes(&memory), [CallEnd::Done, CallEnd::Unknown]);

    let threw = exec("await test.echo({}); test.hang({}); throw new Error('stop')").await;
    assert_code(&threw, ErrorCode::RuntimeError);
    assert_eq!(outcomes(&threw), [CallEnd::Done, CallEnd::Unknown]);

    // Returned while a call was still in flight: it may have taken effect.
    let returned = exec("test.hang({}); await test.echo({}); return 1").await;
    assert_result(&returned, json!(1));
    assert_eq!(outcomes(&returned), [CallEnd::Unknown, CallEnd::Done]);

    // The hub refused it: not sent; the tool failed: failed.
    let refused =
        exec("try { await test.deny({}) } catch {} try { await test.flaky({}) } catch {} return 1")
            .await;
    assert_eq!(outcomes(&refused), [CallEnd::NotSent, CallEnd::Failed]);

    // Refused by the sandbox for their own sake: never calls, not listed.
    let invalid = exec(
        "try { await test.typed({ n: 'x' }) } catch {} try { await test['nope' + '']({}) } catch {} return 1",
    )
    .await;
    assert_result(&invalid, json!(1));
    assert!(invalid.calls.is_empty(), "{:?}", invalid.calls);
}

// --- values JSON has no form for -----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maps_sets_and_errors_are_returned_as_what_they_hold_and_said_so() {
    let code = r#"
        let caught;
        try { null.x; } catch (e) { caught = e; }
        return {
            byName: new Map([["a", 1], ["b", new Set(["x", "y"])]]),
            byObject: new Map([[{ id: 1 }, "one"]]),
            sameName: new Map([["1", "text"], [1, "number"]]),
            errors: [new Error("boom", { cause: "why" }), caught],
            plain: { n: 1 },
        };
    "#;
    let envelope = exec(code).await;
    assert_result(
        &envelope,
        json!({
            "byName": { "a": 1, "b": ["x", "y"] },
            "byObject": [[{ "id": 1 }, "one"]],
            "sameName": [["1", "text"], [1, "number"]],
            "errors": [
                { "name": "Error", "message": "boom", "cause": "why" },
                { "name": "TypeError", "message": "cannot read property 'x' of null" },
            ],
            "plain": { "n": 1 },
        }),
    );
    let notices = envelope.notices.join("\n");
    assert!(
        notices.contains("3 Maps each became") && notices.contains("its Set became an array"),
        "{notices}"
    );
    assert!(notices.contains("2 Errors each became"), "{notices}");
    // A result without any says nothing.
    assert!(exec("return { n: 1 };").await.notices.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversion_holds_against_a_script_that_changes_built_ins() {
    // The script's own toJSON wins; the built-ins the conversion uses are its own copies.
    let own = exec(r#"Map.prototype.toJSON = () => "mine"; return [new Map([["a", 1]])];"#).await;
    assert_result(&own, json!(["mine"]));
    assert!(own.notices.is_empty(), "{:?}", own.notices);
    let code = r#"
        Map.prototype.forEach = () => { throw new Error("forEach"); };
        Set.prototype.forEach = () => { throw new Error("forEach"); };
        Object.keys = () => { throw new Error("keys"); };
        globalThis.String = () => "forged";
        Object.defineProperty(Object.prototype, "a", { set() { throw new Error("setter"); } });
        return [new Map([["a", 1], [2, 2]]), new Set([1])];
    "#;
    assert_result(&exec(code).await, json!([{ "a": 1, "2": 2 }, [1]]));
    // Something that only inherits from Map.prototype is no Map: written as JSON would.
    let fake = exec("const f = Object.create(Map.prototype); f.x = 1; return f;").await;
    assert_result(&fake, json!({ "x": 1 }));
    assert!(fake.notices.is_empty(), "{:?}", fake.notices);
    // Nothing is lent to the prototypes, so freezing them changes nothing.
    let frozen = exec(r#"Object.freeze(Set.prototype); return new Set([1]);"#).await;
    assert_result(&frozen, json!([1]));
    // A Map that holds itself never ends as JSON: refused as any cycle is, with no notice.
    let cycle = exec(r#"const m = new Map(); m.set("self", m); return m;"#).await;
    assert_message(&cycle, ErrorCode::InvalidResult, &["contains itself"]);
    assert!(cycle.notices.is_empty(), "{:?}", cycle.notices);
    // The conversion is the result's alone: JSON.stringify in the script, or in a getter the
    // result's writing runs, is JSON as ever, and converts nothing the notice would count.
    let code = r#"
        const inner = new Map([["k", 1]]);
        return {
            before: JSON.stringify(inner),
            get during() {
                for (let i = 0; i < 5; i++) JSON.stringify(new Error("e"));
                return JSON.stringify(inner);
            },
        };
    "#;
    let during = exec(code).await;
    assert_result(&during, json!({ "before": "{}", "during": "{}" }));
    assert!(during.notices.is_empty(), "{:?}", during.notices);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_map_set_or_error_holds_is_written_as_json_writes_it() {
    let code = r#"
        return {
            boxed: new Set([new Number(1), new String("ab"), new Boolean(true)]),
            fields: Object.assign(new Error("e"), { code: new String("E_X") }),
            fromToJSON: { toJSON() { return new Map([["k", 1]]); } },
            aggregate: new AggregateError([new Error("a")], "all failed"),
            when: new Map([["at", new Date(0)]]),
        };
    "#;
    assert_result(
        &exec(code).await,
        json!({
            "boxed": [1, "ab", true],
            "fields": { "name": "Error", "message": "e", "code": "E_X" },
            "fromToJSON": { "k": 1 },
            "aggregate": {
                "name": "AggregateError",
                "message": "all failed",
                "errors": [{ "name": "Error", "message": "a" }],
            },
            "when": { "at": "1970-01-01T00:00:00.000Z" },
        }),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_json_cannot_hold_is_refused_with_where_it_is() {
    // A cycle names the value and the ancestor it is, whichever route leads back: a property,
    // a Map, or a toJSON that hands an ancestor back.
    for (code, parts) in [
        (
            "const a = { b: [1, {}] }; a.b[1].x = a.b; return a",
            ["contains itself", "/b/1/x is the one at /b"],
        ),
        (
            "const a = { b: {} }; a.b.up = a; return a",
            ["contains itself", "/b/up is the result itself"],
        ),
        (
            r#"const m = new Map(); const o = { toJSON() { return m; } }; m.set("a", o); return m;"#,
            ["contains itself", "/a is the result itself"],
        ),
        (
            "const a = {}; a.o = { toJSON() { return a; } }; return a",
            ["contains itself", "/o is the result itself"],
        ),
        ("return { n: [1, 2n] }", ["BigInt (at /n/1)", "String(n)"]),
        (
            r#"return { "a/b~c": Object(3n) }"#,
            ["BigInt", "at /a~1b~0c"],
        ),
        ("return 5n", ["BigInt", "the result itself"]),
    ] {
        let envelope = exec(code).await;
        assert_message(&envelope, ErrorCode::InvalidResult, &parts);
    }
    // A toJSON that hands out a fresh way down each time never ends: it is as deep as JSON is
    // read, where the engine's own stack would have run out first.
    let endless = exec("const o = { toJSON() { return { x: o }; } }; return o").await;
    assert_message(
        &endless,
        ErrorCode::InvalidResult,
        &["nests deeper than the 128 levels"],
    );
    // The limit is the host's, not one level less: 127 containers inside one another are read.
    for (wrap, name) in [("[v]", "arrays"), (r#"new Map([["k", v]])"#, "maps")] {
        let within = format!("let v = 1; for (let i = 0; i < 127; i++) v = {wrap}; return v");
        assert_eq!(exec(&within).await.status, Status::Completed, "{name}");
        let over = format!("let v = 1; for (let i = 0; i < 128; i++) v = {wrap}; return v");
        assert_message(
            &exec(&over).await,
            ErrorCode::InvalidResult,
            &["nests deeper"],
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_script_throws_while_its_result_is_written_is_its_own_error() {
    // A TypeError from the script's own getter or toJSON is no verdict on the result's shape.
    for (code, said) in [
        (
            r#"return { toJSON() { throw new TypeError("boom"); } }"#,
            "TypeError: boom",
        ),
        (
            r#"return { get x() { throw new TypeError("getter"); } }"#,
            "TypeError: getter",
        ),
        (
            r#"return { toJSON() { throw { name: "TypeError", message: "posing" }; } }"#,
            "posing",
        ),
    ] {
        let envelope = exec(code).await;
        assert_message(&envelope, ErrorCode::RuntimeError, &["Uncaught", said]);
    }
    // Nor does a message choose the code: only the engine's own stack overflow is one.
    for code in [
        r#"throw new Error("stack overflow")"#,
        r#"throw new RangeError("call stack size")"#,
        r#"throw "Maximum call stack size exceeded""#,
    ] {
        assert_code(&exec(code).await, ErrorCode::RuntimeError);
    }
    let real = exec("function f() { return f() + 1; }\nreturn f()").await;
    assert_message(
        &real,
        ErrorCode::StackOverflow,
        &["Maximum call stack size exceeded"],
    );
}
