//! The sandbox against hostile and careless scripts: every escape hatch the spec closes, every
//! limit, and the process still healthy afterwards. Runs against an in-process bridge with short
//! limits; no timing assertions.

use std::sync::Arc;
use std::time::Duration;

use capabilities::sandbox::Limits;
use capabilities::sandbox::{
    Bridge, BridgeError, CallEnd, CallFailure, CallOutcome, CancelToken, ErrorCode,
    ExecuteEnvelope, Namespaces, Pending, PendingKind, ReadRequest, RunRequest, Status, ToolCall,
    ToolSpec, run, run_with_cancel, unavailable,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

/// Tools with every kind of behaviour a real upstream can show.
pub(crate) struct TestBridge;

impl Bridge for TestBridge {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        async move {
            let text = |t: String| json!({ "content": [{ "type": "text", "text": t }] });
            let result = match call.tool.as_str() {
                "echo" => Ok(text(json!({ "args": call.arguments, "connection": call.connection, "seq": call.seq }).to_string())),
                "typed" => Ok(json!({ "content": [], "structuredContent": { "n": call.arguments["n"] } })),
                "plain" => Ok(text("just words".into())),
                "image" => Ok(json!({ "content": [{ "type": "image", "data": "iVBORw0=", "mimeType": "image/png" }] })),
                "fail" => Ok(json!({ "isError": true, "content": [{ "type": "text", "text": "repository not found" }] })),
                "deny" => Err(BridgeError::Failed(CallFailure::new(ErrorCode::PolicyDenied, "policy denies test.deny"))),
                "flaky" => Err(BridgeError::Failed(CallFailure {
                    code: ErrorCode::UpstreamUnavailable,
                    message: "connection refused".into(),
                    hint: None,
                    status: Some(503),
                    retryable: true,
                    outcome: None,
                })),
                "ask" => Err(BridgeError::Suspend(Pending {
                    id: format!("p{}", call.seq),
                    kind: PendingKind::Approval,
                    address: Some(call.address()),
                    summary: "test.ask wants to run".into(),
                    message: None,
                    connection: None,
                })),
                "hang" => futures::future::pending().await,
                "big" => {
                    let bytes = call.arguments["bytes"].as_u64().unwrap_or(0);
                    Ok(text("x".repeat(usize::try_from(bytes).unwrap_or(0))))
                }
                _ => Ok(text("?".into())),
            };
            // A fixed duration, as a journal replay would report it, keeps envelopes identical.
            CallOutcome { result, ms: Some(5) }
        }
        .boxed()
    }

    fn search(&self, query: String) -> BoxFuture<'static, String> {
        async move { format!("results for {query}") }.boxed()
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        async move { format!("declare const {};", targets.join(",")) }.boxed()
    }

    /// Stored results: `gone` is not there, `wide` has a row too large for the budget; any other
    /// reference answers with a page that echoes what was asked.
    fn read(&self, request: ReadRequest) -> BoxFuture<'static, Result<Value, CallFailure>> {
        async move {
            match request.result_ref.as_str() {
                "gone" => Err(unavailable("gone")),
                "wide" => {
                    let mut failure = CallFailure::new(
                        ErrorCode::RowTooLarge,
                        "row 0 of /items is 70,000 bytes with the fields asked for",
                    );
                    failure.hint = Some(ErrorCode::RowTooLarge.hint().into());
                    Err(failure)
                }
                _ => Ok(json!({
                    "items": [{ "id": 1 }],
                    "asked": {
                        "ref": request.result_ref, "path": request.path, "fields": request.fields,
                        "offset": request.offset, "budget": request.budget,
                    },
                })),
            }
        }
        .boxed()
    }

    /// `gone` is not there, `huge` is a 2 MiB value; any other reference is a small one.
    fn get(&self, result_ref: String) -> BoxFuture<'static, Result<Value, CallFailure>> {
        async move {
            match result_ref.as_str() {
                "gone" => Err(unavailable("gone")),
                "huge" => Ok(json!({ "blob": "x".repeat(2 << 20) })),
                _ => Ok(json!({ "ref": result_ref, "rows": [1, 2, 3] })),
            }
        }
        .boxed()
    }
}

pub(crate) fn namespaces() -> Arc<Namespaces> {
    let any = json!({ "type": "object" });
    // `note`'s pattern is not a regular expression the validator compiles (an upstream's schema
    // is outside input): the check of `n` must hold all the same.
    let typed = json!({
        "type": "object",
        "properties": { "n": { "type": "number" }, "note": { "type": "string", "pattern": "(?<!x" } },
        "required": ["n"]
    });
    let tool = |name: &str, schema: &Value| {
        Arc::new(ToolSpec::new(
            name,
            schema.clone(),
            format!("test.{name}(input: object)"),
        ))
    };
    let mut tools: Vec<_> = [
        "echo", "plain", "image", "fail", "deny", "flaky", "ask", "hang", "big",
    ]
    .iter()
    .map(|n| tool(n, &any))
    .collect();
    tools.push(Arc::new(ToolSpec::new(
        "typed",
        typed,
        "test.typed(input: { n: number }): Promise<{ n: number }>",
    )));
    tools[0] = Arc::new(
        ToolSpec::new("echo", any, "test.echo(input: object)")
            .with_connections(vec!["personal".into(), "work".into()]),
    );
    Arc::new(Namespaces::from([("test".to_string(), tools)]))
}

pub(crate) fn request(code: &str) -> RunRequest {
    let mut request = RunRequest::new("run-1", code, namespaces());
    request.limits = Limits {
        run_timeout: Duration::from_secs(2),
        max_calls: 10,
        memory_bytes: 16 << 20,
        ..Limits::default()
    };
    request.seed = 42;
    request.start_time_ms = 1_700_000_000_000;
    request
}

pub(crate) async fn exec(code: &str) -> ExecuteEnvelope {
    run(request(code), Arc::new(TestBridge)).await
}

pub(crate) async fn exec_with(request: RunRequest) -> ExecuteEnvelope {
    run(request, Arc::new(TestBridge)).await
}

#[track_caller]
pub(crate) fn assert_code(envelope: &ExecuteEnvelope, code: ErrorCode) {
    assert_eq!(
        envelope.error_code(),
        Some(code),
        "{}",
        serde_json::to_string_pretty(envelope).unwrap_or_default()
    );
    assert_ne!(envelope.status, Status::Completed);
}

#[track_caller]
pub(crate) fn assert_result(envelope: &ExecuteEnvelope, expected: Value) {
    assert_eq!(
        envelope.status,
        Status::Completed,
        "{}",
        serde_json::to_string_pretty(envelope).unwrap_or_default()
    );
    assert_eq!(envelope.result.as_ref(), Some(&expected));
}

// --- Code generation and missing host APIs -------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_is_not_available() {
    assert_result(&exec("return typeof eval").await, json!("undefined"));
    assert_code(&exec("return eval('1 + 1')").await, ErrorCode::RuntimeError);
    assert_code(
        &exec("const e = globalThis['ev' + 'al']; return e('1')").await,
        ErrorCode::RuntimeError,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_constructor_is_blocked_every_way() {
    for code in [
        "return Function('return 1')()",
        "return new Function('return 1')()",
        "return (function () {}).constructor('return 1')()",
        "return (() => 1).constructor.constructor('return this')()",
        "return (async () => {}).constructor('return 1')()",
        "return Object.getPrototypeOf(function* () {}).constructor('yield 1')().next()",
        "return Object.getPrototypeOf(async function* () {}).constructor('yield 1')",
        "return Reflect.construct(Function, ['return 1'])()",
        "return Function.prototype.constructor('return 1')()",
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::RuntimeError);
        let message = envelope.error.map(|e| e.message).unwrap_or_default();
        assert!(
            message.contains("not available") || message.contains("not supported"),
            "{code}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_constructor_stubs_cannot_be_replaced() {
    let code = "Object.defineProperty(Object.getPrototypeOf(async () => {}), 'constructor', { value: 1 }); return 1";
    assert_code(&exec(code).await, ErrorCode::RuntimeError);
    assert_result(
        &exec("return (function () {}) instanceof Function").await,
        json!(true),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_apis_are_absent() {
    let code = "return [typeof require, typeof process, typeof Buffer, typeof fetch, typeof WeakRef, \
                typeof FinalizationRegistry, typeof setInterval, typeof std, typeof os]";
    assert_result(&exec(code).await, Value::Array(vec![json!("undefined"); 9]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_fail() {
    assert_code(
        &exec("import fs from 'fs';\nreturn 1").await,
        ErrorCode::SyntaxError,
    );
    // import() of anything, the engine's own modules included (the prelude's installer, the
    // script's own function), is refused before the script runs.
    for code in [
        "const fs = await import('fs'); return 1",
        "return typeof (await import('prelude.js')).default",
        "const m = 'script' + '.js'; return typeof (await import(m)).default",
        "return 1; async function later() { return import('./prelude.js') }",
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::SyntaxError);
        let message = envelope.error.map(|e| e.message).unwrap_or_default();
        assert!(
            message.contains("import() is not available"),
            "{code}: {message}"
        );
    }
    assert_code(&exec("return require('fs')").await, ErrorCode::RuntimeError);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomics_wait_cannot_block() {
    let code =
        "const a = new Int32Array(new SharedArrayBuffer(4)); return Atomics.wait(a, 0, 0, 10000)";
    assert_code(&exec(code).await, ErrorCode::RuntimeError);
}

// --- Frozen globals and pollution ------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_are_frozen() {
    for code in [
        "test.echo = async () => 'evil'; return 1",
        "Object.defineProperty(test, 'evil', { value: 1 }); return 1",
        "delete test.echo; return 1",
        "globalThis.test = {}; return 1",
        "Object.setPrototypeOf(test, {}); return 1",
        "hub.search = null; return 1",
        "Math.random = () => 4; return 1",
        "Date.now = () => 0; return 1",
        "console.log = null; return 1",
    ] {
        assert_code(&exec(code).await, ErrorCode::RuntimeError);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prototype_pollution_stays_in_its_run() {
    let polluted = exec(
        "Object.prototype.polluted = 1; Array.prototype.map = () => 'evil'; JSON.stringify = () => '\"evil\"'; \
         const r = await test.echo({ a: 1 }); return r.args",
    )
    .await;
    // The prelude captured JSON and the host parsed the arguments itself.
    assert_result(&polluted, json!({ "a": 1 }));
    assert_result(
        &exec("return [({}).polluted, [1].map((x) => x + 1)]").await,
        json!([null, [2]]),
    );
}

// --- Limits ----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn infinite_loop_inside_try_catch_times_out() {
    let code = "for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }";
    assert_code(&exec(code).await, ErrorCode::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catastrophic_regex_times_out() {
    assert_code(
        &exec("return /^(a+)+$/.test('a'.repeat(64) + 'b')").await,
        ErrorCode::Timeout,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_settling_promise_times_out() {
    assert_code(
        &exec("await new Promise(() => {}); return 1").await,
        ErrorCode::Timeout,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hanging_tool_call_times_out() {
    let envelope = exec("await test.hang({}); return 1").await;
    assert_code(&envelope, ErrorCode::Timeout);
    assert!(
        envelope
            .error
            .is_some_and(|e| e.message.contains("may have taken effect"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn microtask_loop_times_out() {
    let code = "(async () => { for (;;) await null; })(); await new Promise(() => {})";
    assert_code(&exec(code).await, ErrorCode::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_sort_comparator_and_getter_time_out() {
    assert_code(
        &exec("[3, 2, 1].sort(() => { for (;;) {} })").await,
        ErrorCode::Timeout,
    );
    assert_code(
        &exec("return { get x() { for (;;) {} } }").await,
        ErrorCode::Timeout,
    );
}

/// A run that QuickJS's own array walks would hold past every limit: an answer within this
/// bound, whatever it is, shows the walk was never started (the bound only keeps a failing test
/// from hanging; the run's own time limit is far shorter).
async fn answers(code: &str) -> ExecuteEnvelope {
    tokio::time::timeout(Duration::from_secs(60), exec(code))
        .await
        .unwrap_or_else(|_| {
            panic!("no answer: the built-in walked on past the run's limits: {code}")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_array_walks_over_huge_lengths_are_refused_not_run_past_the_limits() {
    // Each of these walks `length` in C without polling the run's deadline.
    let walks = [
        "join.call(G, '')",
        "toLocaleString.call(G)",
        "reverse.call(G)",
        "copyWithin.call(G, 0, 1)",
        "concat.call([], Object.assign(G, { [Symbol.isConcatSpreadable]: true }))",
        "flat.call(G)",
        "flatMap.call(G, (x) => x)",
        "slice.call(G, 0)",
        "shift.call(G)",
        "unshift.call(G, 1)",
        "sort.call(G)",
        "splice.call(G, 0, 1)",
    ];
    let huge = [
        "Array(2 ** 32 - 1)",
        "({ length: 2 ** 53 - 1 })",
        "new Proxy([], { get: (t, k) => (k === 'length' ? 2 ** 53 - 1 : t[k]) })",
    ];
    // Tells a first read one length and every later one another: read once, it is walked as
    // short as it said, or refused by a walk that would change it.
    let lying =
        "(() => { let reads = 0; return { get length() { return reads++ ? 2 ** 53 - 1 : 1 } } })()";
    for walk in walks {
        let code = format!("const G = {lying}; return Array.prototype.{walk};");
        answers(&code).await;
    }
    for g in huge {
        for walk in walks {
            let code = format!("const G = {g}; return Array.prototype.{walk};");
            let envelope = answers(&code).await;
            assert_code(&envelope, ErrorCode::RuntimeError);
            let message = envelope.error.map(|e| e.message).unwrap_or_default();
            assert!(
                message.contains("refused in the sandbox"),
                "{code}: {message}"
            );
        }
    }
    for code in [
        "return String.raw({ raw: { length: 2 ** 53 - 1 } })",
        "return String(Array(2 ** 32 - 1))",
    ] {
        assert_code(&answers(code).await, ErrorCode::RuntimeError);
    }
    // What scripts do with arrays still does what it did.
    assert_result(
        &exec(
            "function rest() { return Array.prototype.slice.call(arguments, 1) }
             return [
               [1, [2, [3, [4]]]].flat(Infinity), [1, 2].flatMap((x) => [x, x * 10]),
               [1, 2].concat(3, [4, [5]], 'six'), Array.prototype.join.call('abc', '-'),
               rest(1, 2, 3), [3, 1, 2].sort(), [1, 2, 3].reverse(), String([1, [2, 3]]),
               Array.prototype.join.call(new Proxy([1, 2], {}), '+'), String.raw`a${1}b`,
               [[1, 2], [3]].flat().length, Array.prototype.flat.length, [].concat.name,
             ]",
        )
        .await,
        json!([
            [1, 2, 3, 4],
            [1, 10, 2, 20],
            [1, 2, 3, 4, [5], "six"],
            "a-b-c",
            [2, 3],
            [1, 2, 3],
            [3, 2, 1],
            "1,2,3",
            "1+2",
            "a1b",
            3,
            0,
            "concat"
        ]),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_overflows_the_stack() {
    let envelope = exec("function f(n) { return f(n + 1) + 1 }\nreturn f(0)").await;
    assert_code(&envelope, ErrorCode::StackOverflow);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocation_loop_hits_the_memory_limit() {
    let envelope = exec("const keep = []; for (;;) keep.push(new Array(100000).fill(7))").await;
    assert_code(&envelope, ErrorCode::MemoryLimit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_doubling_hits_the_memory_limit() {
    let envelope = exec("let s = 'x'; for (;;) s += s").await;
    let code = envelope.error_code();
    assert!(
        matches!(code, Some(ErrorCode::MemoryLimit | ErrorCode::RuntimeError)),
        "{envelope:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caught_out_of_memory_still_cannot_allocate() {
    let code = "const keep = []; try { for (;;) keep.push(new Array(100000).fill(7)) } catch (e) {} \
                keep.push(new Array(1e7).fill(1)); return keep.length";
    assert_code(&exec(code).await, ErrorCode::MemoryLimit);
    // What the script throws itself once memory is free again is its own error.
    let own = "try { const keep = []; for (;;) keep.push(new Array(100000).fill(7)) } catch (e) {} \
               throw 'my own failure'";
    let envelope = exec(own).await;
    assert_code(&envelope, ErrorCode::RuntimeError);
    let message = envelope.error.map(|e| e.message).unwrap_or_default();
    assert!(message.contains("my own failure"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_timers_hit_the_timer_limit() {
    let code = "for (let i = 0; i < 100000; i++) setTimeout(() => {}, 1000); return 1";
    assert_code(&exec(code).await, ErrorCode::TimerLimit);
    let caught =
        "try { for (let i = 0; i < 100000; i++) setTimeout(() => {}, 1000) } catch (e) {} return 1";
    assert_code(&exec(caught).await, ErrorCode::TimerLimit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timers_reject_strings_and_long_delays() {
    assert_code(
        &exec("setTimeout('alert(1)', 1); return 1").await,
        ErrorCode::RuntimeError,
    );
    assert_code(
        &exec("setTimeout(() => {}, 31000); return 1").await,
        ErrorCode::RuntimeError,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_limit_cannot_be_caught() {
    let code = "for (let i = 0; i < 50; i++) { try { await test.echo({ i }) } catch (e) {} } return 'done'";
    let envelope = exec(code).await;
    assert_code(&envelope, ErrorCode::CallLimit);
    // Ten ran; the eleventh was refused at the limit and is listed as not sent.
    let outcomes: Vec<Option<CallEnd>> = envelope.calls.iter().map(|c| c.outcome).collect();
    let mut expected = vec![Some(CallEnd::Done); 10];
    expected.push(Some(CallEnd::NotSent));
    assert_eq!(outcomes, expected, "{envelope:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_megabyte_result_is_refused() {
    let mut big = request("return 'x'.repeat(50 * 1024 * 1024)");
    big.limits.memory_bytes = 64 << 20;
    let envelope = exec_with(big).await;
    assert_code(&envelope, ErrorCode::ResultTooLarge);
    assert!(envelope.truncated.result);
    let preview = envelope
        .result
        .as_ref()
        .and_then(Value::as_str)
        .map_or(0, str::len);
    assert!(preview <= 16 << 10, "{preview}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_over_a_small_budget_are_handed_over_to_be_stored() {
    let code = "return Array.from({ length: 500 }, (_, i) => ({ i, name: 'item ' + i }))";
    let mut small = request(code);
    small.output_budget_bytes = Some(1024);
    let envelope = exec_with(small).await;
    assert_eq!(envelope.status, Status::Completed, "{envelope:?}");
    assert_eq!(envelope.result, None);
    let stored: Value =
        serde_json::from_str(envelope.oversized.as_deref().unwrap_or("null")).unwrap_or_default();
    assert_eq!(stored[499], json!({ "i": 499, "name": "item 499" }));
    // Over the final-value cap it is refused.
    let mut capped = request(code);
    capped.output_budget_bytes = Some(1024);
    capped.limits.final_value_bytes = 2048;
    assert_code(&exec_with(capped).await, ErrorCode::ResultTooLarge);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_over_the_limit_is_refused() {
    let code = format!("return 1; // {}", "x".repeat(70 * 1024));
    assert_code(&exec(&code).await, ErrorCode::CodeTooLarge);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_code_does_not_crash_the_parser() {
    let deep = |open: &str, close: &str, n: usize| {
        format!("return {}1{}", open.repeat(n), close.repeat(n))
    };
    for code in [
        deep("(", ")", 30_000),
        deep("[", "]", 30_000),
        deep("!", "", 60_000),
        deep("x => ", "", 12_000),
        deep("a ? ", " : 0", 8_000),
        "{".repeat(65_000),
        "(".repeat(65_000),
    ] {
        let envelope = exec(&code).await;
        assert!(
            envelope.status == Status::Completed || envelope.error_code().is_some(),
            "{envelope:?}"
        );
    }
}

/// Runtimes are made ahead of their runs; each serves one run only, so what a run does to its
/// globals, prototypes and intrinsics is gone for every later run, concurrent or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_run_changes_reaches_another_run() {
    let tamper = "globalThis.leaked = 'yes'; \
        try { Object.prototype.polluted = 1; } catch (_) {} \
        try { Array.prototype.push = () => 0; } catch (_) {} \
        try { JSON.stringify = () => 'owned'; } catch (_) {} \
        return 1";
    let look = "return [typeof leaked, ({}).polluted === undefined, \
        (() => { const a = []; a.push(2); return a.length; })(), JSON.stringify({ a: 1 })]";
    for _ in 0..4 {
        let (tampered, looked) = tokio::join!(exec(tamper), exec(look));
        assert_result(&tampered, json!(1));
        assert_result(&looked, json!(["undefined", true, 1, "{\"a\":1}"]));
        assert_result(
            &exec(look).await,
            json!(["undefined", true, 1, "{\"a\":1}"]),
        );
    }
}

/// Code of at most 1 KiB is parsed on the run's own thread instead of a big-stack parser thread:
/// the deepest nesting that fits in it must not overflow that thread's stack either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_short_code_does_not_crash_the_parser() {
    let deep = |open: &str, close: &str, n: usize| {
        format!("return {}1{}", open.repeat(n), close.repeat(n))
    };
    for code in [
        deep("(", ")", 508),
        deep("[", "]", 508),
        deep("!", "", 1_016),
        deep("-", "", 1_016),
        deep("x => ", "", 203),
        deep("a ? ", " : 0", 126),
        deep("{a:", "}", 253),
        "{".repeat(1_024),
        "(".repeat(1_024),
        "[".repeat(1_024),
    ] {
        assert!(code.len() <= 1_024, "{}", code.len());
        let envelope = exec(&code).await;
        assert!(
            envelope.status == Status::Completed || envelope.error_code().is_some(),
            "{envelope:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_stay_within_their_budget() {
    let envelope =
        exec("for (let i = 0; i < 100000; i++) console.log('line', i, { i }); return 1").await;
    assert_result(&envelope, json!(1));
    assert!(envelope.truncated.logs);
    let bytes: usize = envelope.logs.iter().map(String::len).sum();
    assert!(bytes <= (4 << 10) + 3, "{bytes}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_surrogate_logs_instead_of_throwing() {
    let envelope = exec(r#"console.log("a\ud800b"); return "went on";"#).await;
    assert_result(&envelope, json!("went on"));
    assert_eq!(envelope.logs, vec!["a\u{fffd}b".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_surrogate_in_what_is_thrown_keeps_the_rest_of_the_message() {
    for (code, said) in [
        (r#"throw new Error("a \ud800 b");"#, "Error: a \u{fffd} b"),
        (
            r#"throw new TypeError("x \udc00");"#,
            "TypeError: x \u{fffd}",
        ),
        (r#"throw "a \ud800 b";"#, "a \u{fffd} b"),
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::RuntimeError);
        let message = envelope.error.map(|e| e.message).unwrap_or_default();
        assert!(message.contains(said), "{code}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_getter_the_host_reads_is_still_a_timeout() {
    // The host reads an unhandled rejection's `name` to describe it; the getter never ends.
    let envelope = exec(
        r#"
        const e = new Error("boom");
        Object.defineProperty(e, "name", { get() { for (;;) {} } });
        Promise.reject(e);
        return 1;
    "#,
    )
    .await;
    assert_code(&envelope, ErrorCode::Timeout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_the_host_holds_count_against_the_runs_memory() {
    // A structure the heap shares (x = [x, x], nineteen times) is a few kilobytes there and
    // megabytes of JSON for the host to parse and keep: refused before it is parsed, and the
    // script goes on. Sequential calls give their share back when answered.
    let envelope = exec(
        r#"
        let x = 0;
        for (let i = 0; i < 19; i++) x = [x, x];
        let refused;
        try { await test.echo({ pad: x }); } catch (e) { refused = e.code; }
        x = null;
        const big = "y".repeat(400000);
        let sent = 0;
        for (let i = 0; i < 8; i++) { await test.echo({ big, i }); sent++; }
        return { refused, sent };
    "#,
    )
    .await;
    assert_result(&envelope, json!({ "refused": "memory_limit", "sent": 8 }));
}

// --- Errors the script makes -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unhandled_rejections_fail_the_run() {
    let envelope = exec("Promise.reject(new Error('lost')); await sleep(1); return 1").await;
    assert_code(&envelope, ErrorCode::RuntimeError);
    assert!(
        envelope
            .error
            .as_ref()
            .is_some_and(|e| e.message.contains("lost")),
        "{envelope:?}"
    );
    let envelope = exec("test.fail({}); await sleep(20); return 1").await;
    assert_code(&envelope, ErrorCode::RuntimeError);
    // Handled later is fine.
    assert_result(
        &exec("const p = Promise.reject(1); await sleep(1); try { await p } catch { } return 2")
            .await,
        json!(2),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_values_cannot_spoof_error_codes() {
    assert_code(
        &exec("throw { code: 'timeout' }").await,
        ErrorCode::RuntimeError,
    );
    assert_code(&exec("throw null").await, ErrorCode::RuntimeError);
    let spoof = exec("const e = new ToolError('x', { code: 'cancelled' }); throw e").await;
    assert_code(&spoof, ErrorCode::RuntimeError);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_errors_point_at_the_users_line() {
    let envelope = exec("const a = null;\nconst b: number = 1;\nreturn a.x").await;
    assert_code(&envelope, ErrorCode::RuntimeError);
    let message = envelope.error.map(|e| e.message).unwrap_or_default();
    assert!(message.contains("line 3"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syntax_errors_point_at_the_users_line() {
    let envelope = exec("const a = 1;\nconst = 2;").await;
    assert_code(&envelope, ErrorCode::SyntaxError);
    assert!(envelope.error.is_some_and(|e| e.message.contains("line 2")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_file_may_start_with_a_hashbang_and_keeps_its_lines() {
    let envelope = exec("#!/usr/bin/env -S capabilities exec\nreturn 1 + 1;").await;
    assert_result(&envelope, json!(2));
    let thrown = exec("#!/usr/bin/env -S capabilities exec\n\nthrow new Error(\"here\");").await;
    assert_code(&thrown, ErrorCode::RuntimeError);
    let message = thrown.error.map(|e| e.message).unwrap_or_default();
    assert!(message.contains("line 3"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrepresentable_results_are_invalid() {
    assert_code(&exec("return 10n").await, ErrorCode::InvalidResult);
    assert_code(
        &exec("const a = {}; a.a = a; return a").await,
        ErrorCode::InvalidResult,
    );
    assert_result(&exec("return undefined").await, Value::Null);
    // What JSON cannot carry is said in the script's terms, not the decoder's.
    for (code, said) in [
        (
            "let v = 1; for (let i = 0; i < 200; i++) v = [v]; return v",
            "nests deeper than the 128 levels",
        ),
        (r#"return { name: "\ud800x" }"#, "toWellFormed()"),
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::InvalidResult);
        let message = envelope.error.map(|e| e.message).unwrap_or_default();
        assert!(message.contains(said), "{code}: {message}");
    }
}

// --- Tools -------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_name_the_closest() {
    let envelope = exec("await test.echo({}); return await test.ecoh({})").await;
    assert_code(&envelope, ErrorCode::UnknownTool);
    assert!(envelope.calls.is_empty(), "checked before running");
    assert!(
        envelope
            .error
            .is_some_and(|e| e.message.contains("test.echo"))
    );
    let dynamic = exec("const name = 'ecoh'; return await test[name]({})").await;
    assert_code(&dynamic, ErrorCode::UnknownTool);
    let caught =
        exec("try { test.nope } catch (e) { return [e instanceof TypeError, e.message] }").await;
    assert_eq!(caught.status, Status::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_validated_with_the_signature_as_hint() {
    let envelope = exec("return await test.typed({ n: 'seven' })").await;
    assert_code(&envelope, ErrorCode::InvalidArguments);
    let hint = envelope.error.and_then(|e| e.hint).unwrap_or_default();
    assert!(hint.contains("test.typed(input: { n: number })"), "{hint}");
    assert!(envelope.calls.is_empty());
    assert_code(
        &exec("return await test.typed({ note: 'no n' })").await,
        ErrorCode::InvalidArguments,
    );
    let fine = exec("return await test.typed({ n: 2, note: 'anything' })").await;
    assert_eq!(fine.result, Some(json!({ "n": 2 })), "{fine:?}");
    assert_code(
        &exec("return await test.echo({}, { connection: 'nope' })").await,
        ErrorCode::InvalidArguments,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_are_unwrapped() {
    let code = "return [await test.echo({ a: 1 }, { connection: 'work' }), await test.typed({ n: 2 }), \
                await test.plain(), await test.image()]";
    let envelope = exec(code).await;
    assert_result(
        &envelope,
        json!([
            { "args": { "a": 1 }, "connection": "work", "seq": 0 },
            { "n": 2 },
            "just words",
            { "type": "image", "data": "iVBORw0=", "mimeType": "image/png" }
        ]),
    );
    assert_eq!(envelope.calls.len(), 4);
    assert!(envelope.calls.iter().all(|c| c.ok));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_failures_are_tool_errors() {
    let code = "try { await test.fail({}) } catch (e) { return [e instanceof ToolError, e.code, e.address, e.message] }";
    assert_result(
        &exec(code).await,
        json!([true, "tool_error", "test.fail", "repository not found"]),
    );
    let flaky = "try { await test.flaky({}) } catch (e) { return [e.code, e.status, e.retryable] }";
    assert_result(
        &exec(flaky).await,
        json!(["upstream_unavailable", 503, true]),
    );
    let envelope = exec("await test.fail({})").await;
    assert_code(&envelope, ErrorCode::ToolError);
    assert_eq!(envelope.calls.first().map(|c| c.ok), Some(false));
    assert_code(&exec("await test.deny({})").await, ErrorCode::PolicyDenied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_needing_approval_stop_the_run() {
    let envelope = exec("const a = await test.echo({}); await Promise.all([test.ask({}), test.ask({}), test.echo({})]); return 1").await;
    assert_eq!(envelope.status, Status::AwaitingApproval, "{envelope:?}");
    assert_eq!(envelope.pending.len(), 2);
    // The calls waiting for a person are listed too: they were not sent.
    let outcomes: Vec<Option<CallEnd>> = envelope.calls.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [
            CallEnd::Done,
            CallEnd::NotSent,
            CallEnd::NotSent,
            CallEnd::Done
        ]
        .map(Some)
    );
    assert!(envelope.error.is_none() && envelope.result.is_none());
    // Once recorded, a waiting call stops the run even if the script did not await it.
    let unawaited = exec("test.ask({}); await sleep(50); return 1").await;
    assert_eq!(unawaited.status, Status::AwaitingApproval, "{unawaited:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_a_busy_run() {
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let envelope = run_with_cancel(request("for (;;) {}"), Arc::new(TestBridge), cancel).await;
    assert_eq!(envelope.status, Status::Cancelled);
    assert_code(&envelope, ErrorCode::Cancelled);
}

// --- The prelude's helpers -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prelude_helpers_work() {
    let code = r#"
        const bytes = new TextEncoder().encode("héllo ✓");
        const back = new TextDecoder().decode(bytes);
        const clone = structuredClone({ d: new Date(0), m: new Map([[1, 2]]), s: new Set([3]) });
        let fatal = false;
        try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])) } catch { fatal = true }
        let bad64 = false;
        try { decodeBase64("/w==") } catch { bad64 = true }
        return {
            back, len: bytes.length, fatal, bad64,
            clone: [clone.d.getTime(), clone.m.get(1), clone.s.has(3)],
            b64: [encodeBase64("héllo"), encodeBase64("subjects?>>", true), decodeBase64("c3ViamVjdHM_Pj4"), atob(btoa("hi"))],
            search: await hub.search("issues"),
            describe: await hub.describe(["test.echo"]),
        };
    "#;
    assert_result(
        &exec(code).await,
        json!({
            "back": "héllo ✓", "len": 10, "fatal": true, "bad64": true,
            "clone": [0, 2, true],
            "b64": ["aMOpbGxv", "c3ViamVjdHM_Pj4", "subjects?>>", "hi"],
            "search": "results for issues",
            "describe": "declare const test.echo;",
        }),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_shapes_are_forgiven_with_notices() {
    let envelope = exec("```ts\nconst x: number = 2;\nx * 21\n```").await;
    assert_result(&envelope, json!(42));
    assert_eq!(envelope.notices.len(), 3, "{:?}", envelope.notices);
    assert_result(
        &exec("export default async function main() { return 'hi' }").await,
        json!("hi"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timers_and_the_logical_clock() {
    let code = r#"
        const t0 = Date.now();
        const order = [];
        setTimeout(() => order.push("b"), 20);
        setTimeout(() => order.push("a"), 10);
        const id = setTimeout(() => order.push("never"), 5);
        clearTimeout(id);
        await sleep(30);
        await test.echo({});
        return { order, elapsed: Date.now() - t0, perf: performance.now(), iso: new Date().toISOString() };
    "#;
    assert_result(
        &exec(code).await,
        json!({ "order": ["a", "b"], "elapsed": 35, "perf": 35, "iso": "2023-11-14T22:13:20.035Z" }),
    );
}

// --- Determinism and health ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_seed_same_calls_same_envelope() {
    let code = r#"
        const a = await Promise.all([test.echo({ r: Math.random() }), test.typed({ n: 1 })]);
        console.log("uuid", crypto.randomUUID(), Date.now());
        const bytes = crypto.getRandomValues(new Uint8Array(8));
        await sleep(5);
        return { a, r: Math.random(), bytes: Array.from(bytes), now: Date.now(), perf: performance.now(), d: String(new Date()) };
    "#;
    let first = serde_json::to_string(&exec(code).await).unwrap_or_default();
    let second = serde_json::to_string(&exec(code).await).unwrap_or_default();
    assert!(first.contains("\"completed\""), "{first}");
    assert_eq!(first, second);
    let mut other = request(code);
    other.seed = 43;
    let third = serde_json::to_string(&exec_with(other).await).unwrap_or_default();
    assert_ne!(first, third);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zz_process_is_healthy_after_hostile_runs() {
    let hostile = [
        "for (;;) {}",
        "const k = []; for (;;) k.push(new Array(1e5).fill(1))",
        "function f() { f() } f()",
    ];
    let runs = hostile.iter().map(|code| exec(code));
    let envelopes = futures::future::join_all(runs).await;
    assert!(envelopes.iter().all(|e| e.status == Status::Failed));
    let healthy = futures::future::join_all((0..20).map(|i| {
        exec_with(request(&format!(
            "return (await test.echo({{ i: {i} }})).args.i"
        )))
    }))
    .await;
    for (i, envelope) in healthy.iter().enumerate() {
        assert_result(envelope, json!(i));
    }
}

// --- Busy scripts share the JavaScript threads ---------------------------------------------------

/// More scripts spinning without an await than there are JavaScript threads (one per core, at
/// least two) do not hold up a short run started after them: each busy one is left its own
/// thread, and the short run finishes while they all still spin (they end only at their limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_scripts_do_not_starve_a_short_run() {
    let busy_count = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(2)
        .max(2)
        * 2;
    let mut busy = Vec::new();
    for _ in 0..busy_count {
        let mut spinning = request("for (;;) {}");
        spinning.limits.run_timeout = Duration::from_secs(5);
        busy.push(tokio::spawn(exec_with(spinning)));
    }
    // Let every busy script start spinning first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let short = exec("return await test.echo({ x: 1 })").await;
    assert_eq!(short.status, Status::Completed, "{short:?}");
    assert!(
        busy.iter().all(|task| !task.is_finished()),
        "the short run waited for a busy one to end"
    );
    for task in busy {
        let spun = task.await.unwrap();
        assert_code(&spun, ErrorCode::Timeout);
    }
}
