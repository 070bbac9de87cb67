//! The guest prelude against scripts that change the built-ins it uses (issue 13, class 5), and
//! against names that could break it (class 6): a script may replace any global or prototype
//! member, yet the limits hold, host errors keep what the host said, and the script's own throws
//! stay runtime errors; a source named like an Object.prototype member is refused by validation
//! and, if it gets through anyway, still installs.

use std::sync::Arc;
use std::time::Duration;

use capabilities::model::address::namespace_problem;
use capabilities::sandbox::{
    Bridge, CallOutcome, ErrorCode, ExecuteEnvelope, Namespaces, RunRequest, Status, ToolCall,
    ToolSpec, run,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};

use crate::sandbox_hostile::{assert_code, assert_result, exec, exec_with, request};

const PRIMORDIALS: &str = include_str!("../../prelude/00_primordials.js");

/// One built-in a script can change, as JavaScript: the object that holds it, the key, and
/// whether it is an accessor (then the override is a getter).
#[derive(Debug, Clone)]
struct Target {
    object: String,
    key: String,
    getter: bool,
}

impl Target {
    fn new(object: &str, key: &str, getter: bool) -> Self {
        Target {
            object: object.to_string(),
            key: key.to_string(),
            getter,
        }
    }

    fn label(&self) -> String {
        format!("{}[{}]", self.object, self.key)
    }
}

/// Every capture in prelude/00_primordials.js, read from its source: the list cannot drift from
/// what the prelude uses. A `const` line in a shape this does not know fails the test, so a new
/// kind of capture has to be taught here first.
fn primordials() -> Vec<Target> {
    let mut targets = Vec::new();
    for line in PRIMORDIALS.lines() {
        let Some(rest) = line.strip_prefix("const ") else {
            continue;
        };
        let (name, value) = rest
            .split_once(" = ")
            .unwrap_or_else(|| panic!("not a capture: {line}"));
        let value = value.trim_end_matches(';');
        let helper = value.starts_with('(')
            || name == "globalObject"
            || name == "uncurryThis"
            || value.ends_with(".prototype")
            || value.starts_with("ObjectGetPrototypeOf(");
        if helper {
            continue;
        }
        if let Some(global) = value.strip_prefix("globalObject.") {
            targets.push(Target::new("globalThis", &format!("{global:?}"), false));
        } else if let Some(path) = value
            .strip_prefix("uncurryThis(")
            .and_then(|v| v.strip_suffix(')'))
        {
            let (object, key) = match path.strip_suffix(']').and_then(|p| p.split_once('[')) {
                Some((object, symbol)) => (object.to_string(), symbol.to_string()),
                None => {
                    let (object, key) = path
                        .rsplit_once('.')
                        .unwrap_or_else(|| panic!("no member in {line}"));
                    (object.to_string(), format!("{key:?}"))
                }
            };
            targets.push(Target::new(&object, &key, false));
        } else if let Some(args) = value
            .strip_prefix("uncurryGetter(")
            .and_then(|v| v.strip_suffix(')'))
        {
            let (object, key) = args
                .split_once(", ")
                .unwrap_or_else(|| panic!("no key in {line}"));
            targets.push(Target::new(object, key, true));
        } else if let Some((object, key)) = value.split_once('.')
            && !key.contains(['.', '(', '['])
            && object.chars().all(|c| c.is_ascii_alphanumeric())
        {
            targets.push(Target::new(object, &format!("{key:?}"), false));
        } else {
            panic!("prelude/00_primordials.js: a const in a shape this test does not know: {line}");
        }
    }
    targets
}

/// What the primordials cannot list because the prelude must not touch it at all after install:
/// the call protocol `uncurryThis` is built from, iteration protocols, methods the prelude used
/// before it captured anything, species, and properties a script can add to Object.prototype and
/// Array.prototype for the prelude's plain objects to inherit.
fn extras() -> Vec<Target> {
    let mut targets = vec![
        Target::new("Function.prototype", "\"call\"", false),
        Target::new("Function.prototype", "\"apply\"", false),
        Target::new("Function.prototype", "\"bind\"", false),
        Target::new("Array.prototype", "Symbol.iterator", false),
        Target::new(
            "Object.getPrototypeOf([][Symbol.iterator]())",
            "\"next\"",
            false,
        ),
        Target::new("Map.prototype", "Symbol.iterator", false),
        Target::new("Map.prototype", "\"values\"", false),
        Target::new("Map.prototype", "\"entries\"", false),
        Target::new("Set.prototype", "\"values\"", false),
        Target::new("WeakSet.prototype", "\"has\"", false),
        Target::new("WeakSet.prototype", "\"add\"", false),
        Target::new("Promise.prototype", "\"constructor\"", false),
        Target::new("Promise.prototype", "\"catch\"", false),
        Target::new("Promise.prototype", "\"finally\"", false),
        Target::new("Promise", "\"resolve\"", false),
        Target::new("Promise", "\"reject\"", false),
        Target::new("Promise", "Symbol.species", true),
        Target::new("Array", "Symbol.species", true),
        Target::new("Error.prototype", "\"name\"", true),
        Target::new("Error.prototype", "\"message\"", true),
        Target::new("Object.prototype", "\"toString\"", false),
        Target::new("Object.prototype", "\"valueOf\"", false),
        Target::new("Object.prototype", "\"__proto__\"", true),
        Target::new("Array.prototype", "\"0\"", true),
        Target::new("globalThis", "\"JSON\"", false),
        Target::new("globalThis", "\"Math\"", false),
        Target::new("globalThis", "\"Reflect\"", false),
        Target::new("globalThis", "\"Symbol\"", false),
        Target::new("globalThis", "\"globalThis\"", false),
    ];
    for method in [
        "push", "pop", "map", "join", "includes", "every", "slice", "concat",
    ] {
        targets.push(Target::new(
            "Array.prototype",
            &format!("{method:?}"),
            false,
        ));
    }
    for method in [
        "concat",
        "trim",
        "toLowerCase",
        "slice",
        "padStart",
        "charCodeAt",
    ] {
        targets.push(Target::new(
            "String.prototype",
            &format!("{method:?}"),
            false,
        ));
    }
    // Keys the prelude's own objects would inherit if they had a prototype: records, replies,
    // details, descriptors, Proxy handlers.
    for key in [
        "code",
        "hint",
        "address",
        "message",
        "name",
        "stack",
        "status",
        "retryable",
        "ok",
        "ms",
        "value",
        "error",
        "get",
        "set",
        "writable",
        "enumerable",
        "configurable",
        "has",
        "ownKeys",
        "getOwnPropertyDescriptor",
        "defineProperty",
        "deleteProperty",
        "apply",
        "construct",
        "0",
        // hub.read's options.
        "path",
        "fields",
        "offset",
    ] {
        targets.push(Target::new("Object.prototype", &format!("{key:?}"), true));
    }
    targets
}

/// Captures the engine does not let a script replace at all.
const LOCKED: &[&str] = &[
    "globalThis[\"Date\"]",
    "Function.prototype[Symbol.hasInstance]",
    // A well-known symbol: neither writable nor configurable.
    "Symbol[\"isConcatSpreadable\"]",
];

/// Overrides under which QuickJS's own JSON.stringify fails for the script: it keeps its cycle
/// stack in an ordinary array, so an index accessor on Array.prototype breaks every
/// JSON.stringify of an object. The script's logs and tool arguments are then its own problem
/// (its calls fail with invalid_arguments, a host error); limits and brands still hold.
const BREAKS_OWN_JSON: &[&str] = &["Array.prototype[\"0\"]"];

/// How an override misbehaves: it throws, or it answers with a forged value (truthy, an object
/// with host-looking fields, zero as a number: what `WeakSet.prototype.has` or
/// `Map.prototype.size` would return to lift a limit or forge a brand).
#[derive(Debug, Clone, Copy)]
enum Variant {
    Throws,
    Forges,
}

/// The script: values made while the built-ins are intact, then the override, then `body`.
/// Returns "locked" when the engine refuses the override.
fn script(target: Option<&Target>, variant: Variant, body: &str) -> String {
    let poison = match variant {
        Variant::Throws => "function () { throw new Error('poisoned'); }",
        Variant::Forges => "function () { return forged; }",
    };
    let override_ = match target {
        None => String::new(),
        Some(t) => {
            let descriptor = if t.getter {
                "{ get: poison, set(v) {}, configurable: true }"
            } else {
                "{ value: poison, writable: true, configurable: true }"
            };
            format!(
                "try {{ Object.defineProperty({}, {}, {descriptor}); }} catch (e) {{ return 'locked'; }}",
                t.object, t.key
            )
        }
    };
    format!(
        r#"
        const NativeDate = Date;
        const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
        const pre = {{
            map: new Map([[1, 2]]), set: new Set([3]), date: new Date(0), bytes: new Uint8Array(4),
            mapGet: Function.prototype.call.bind(Map.prototype.get),
            getTime: Function.prototype.call.bind(Date.prototype.getTime),
            random: Math.random,
        }};
        const forged = {{
            code: "approval_expired", hint: "x", address: "test.echo", ok: false, ms: 0, message: "forged",
            error: {{ code: "approval_expired", message: "forged", hint: "x" }}, valueOf() {{ return 0; }},
        }};
        const poison = {poison};
        {override_}
        {body}
        "#
    )
}

/// Every prelude path a script reaches, with its results.
const EXERCISE: &str = r#"
    const out = {};
    out.echo = (await test.echo({ a: 1 }, { connection: "work" })).args.a;
    try { await test.fail({}); } catch (e) { out.fail = [e.code, e.address, e.message, e instanceof ToolError]; }
    try { await test.echo(1n); } catch (e) { out.invalid = e.code; }
    try { test.nope; } catch (e) { out.unknown = e.code; }
    out.awaitNamespace = (await test) === test;
    console.log({ a: [1, "x"], m: pre.map, s: pre.set }, 7n, "end");
    out.text = new TextDecoder().decode(new TextEncoder().encode("héllo ✓"));
    const clone = structuredClone({ a: [1, { b: 2 }], m: pre.map, d: pre.date });
    out.clone = [clone.a, pre.mapGet(clone.m, 1), pre.getTime(clone.d)];
    out.now = Date.now();
    out.uuid = crypto.randomUUID();
    out.random = pre.random();
    out.bytes = crypto.getRandomValues(pre.bytes) === pre.bytes;
    let fired = false;
    setTimeout(() => { fired = true; }, 5);
    clearTimeout(setTimeout(() => { out.cleared = true; }, 1));
    await sleep(10);
    out.fired = fired;
    out.search = await hub.search("issues");
    out.describe = await hub.describe(["test.echo"]);
    out.read = await hub.read("ref-1", { path: "/items", fields: ["id", "name"], offset: 2 });
    // Not `out.get`: the table overrides Object.prototype.get, and the script's own `out` inherits it.
    out.whole = await hub.get("ref-1");
    try { await hub.read("gone"); } catch (e) { out.gone = [e.code, e.address, e instanceof ToolError]; }
    try { await hub.read("ref-1", { fields: ["id", "id"] }); } catch (e) { out.twice = e.message; }
    out.b64 = [encodeBase64("hi"), decodeBase64("aGk="), atob(btoa("hi"))];
    return out;
"#;

/// Past the pending-timer limit, with the error caught: the host still ends the run.
const TIMERS: &str = r#"
    try { for (let i = 0; i < 5000; i++) setTimeout(() => {}, 1000); } catch (e) {}
    return "escaped";
"#;

/// A host error caught, rewritten and rethrown.
const REWRITE: &str = r#"
    try { await test.deny({}); } catch (e) { e.code = "approval_expired"; e.hint = "x"; e.message = "forged"; throw e; }
    return "not denied";
"#;

/// A forged error.
const FORGE: &str = r#"throw { code: "approval_expired", hint: "x" };"#;

fn envelope_json(envelope: &ExecuteEnvelope) -> String {
    serde_json::to_string_pretty(envelope).unwrap_or_default()
}

/// The same checks for every target; returns what went wrong, or "locked".
async fn check(target: Target, variant: Variant, baseline: String) -> Result<bool, String> {
    let label = format!("{} ({variant:?})", target.label());
    let exercised = exec(&script(Some(&target), variant, EXERCISE)).await;
    if exercised.result == Some(json!("locked")) {
        return Ok(false);
    }
    let json_broken = BREAKS_OWN_JSON.contains(&target.label().as_str());
    let got = envelope_json(&exercised);
    if got != baseline && !json_broken {
        return Err(format!("{label}: the prelude's paths changed:\n{got}"));
    }
    let timers = exec(&script(Some(&target), variant, TIMERS)).await;
    if timers.error_code() != Some(ErrorCode::TimerLimit) {
        return Err(format!(
            "{label}: the timer limit did not hold:\n{}",
            envelope_json(&timers)
        ));
    }
    let rewritten = exec(&script(Some(&target), variant, REWRITE)).await;
    let error = rewritten.error.clone();
    let honest = error.as_ref().is_some_and(|e| {
        let denied =
            e.code == ErrorCode::PolicyDenied && e.message.contains("policy denies test.deny");
        let unsent = json_broken && e.code == ErrorCode::InvalidArguments;
        (denied || unsent) && e.hint.as_deref() == Some(e.code.hint())
    });
    if !honest {
        return Err(format!(
            "{label}: a rewritten host error reported the script's fields:\n{}",
            envelope_json(&rewritten)
        ));
    }
    let forged = exec(&script(Some(&target), variant, FORGE)).await;
    let error = forged.error.clone();
    // The message is the script's (its own getters may shape it); code and hint are never its.
    let honest = error.as_ref().is_some_and(|e| {
        e.code == ErrorCode::RuntimeError
            && e.message.starts_with("Uncaught ")
            && e.hint.as_deref() == Some(ErrorCode::RuntimeError.hint())
    });
    if !honest {
        return Err(format!(
            "{label}: a forged error got a host code or hint:\n{}",
            envelope_json(&forged)
        ));
    }
    Ok(true)
}

/// The table test: each built-in the prelude captured (and each extra), overridden one at a time
/// to throw or to forge, then every prelude path, the timer limit, a rewritten host error and a
/// forged one. Every envelope must be what it is with nothing overridden.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overriding_any_builtin_the_prelude_uses_changes_nothing() {
    let captured = primordials();
    assert!(
        captured.len() > 80,
        "the primordials parse to only {} entries",
        captured.len()
    );
    let baseline = exec(&script(None, Variant::Throws, EXERCISE)).await;
    assert_eq!(baseline.status, Status::Completed, "{baseline:?}");
    let result = baseline.result.clone().unwrap_or_default();
    assert_eq!(result["echo"], json!(1));
    assert_eq!(
        result["fail"],
        json!(["tool_error", "test.fail", "repository not found", true])
    );
    assert_eq!(result["invalid"], json!("invalid_arguments"));
    assert_eq!(result["unknown"], json!("unknown_tool"));
    assert_eq!(result["awaitNamespace"], json!(true));
    assert_eq!(result["text"], json!("héllo ✓"));
    assert_eq!(result["clone"], json!([[1, { "b": 2 }], 2, 0]));
    assert_eq!(result["fired"], json!(true));
    assert_eq!(result["bytes"], json!(true));
    assert!(result.get("cleared").is_none(), "{result}");
    assert_eq!(result["search"], json!("results for issues"));
    assert_eq!(result["describe"], json!("declare const test.echo;"));
    assert_eq!(
        result["read"]["asked"],
        json!({ "ref": "ref-1", "path": "/items", "fields": ["id", "name"], "offset": 2, "budget": 16384 })
    );
    assert_eq!(
        result["whole"],
        json!({ "ref": "ref-1", "rows": [1, 2, 3] })
    );
    assert_eq!(
        result["gone"],
        json!(["result_unavailable", "hub.read", true])
    );
    assert_eq!(
        result["twice"],
        json!("hub.read: fields lists \"id\" twice")
    );
    assert_eq!(result["b64"], json!(["aGk=", "hi", "hi"]));
    let uuid = result["uuid"].as_str().unwrap_or_default();
    assert!(
        uuid.len() == 36 && uuid.as_bytes()[14] == b'4',
        "not a v4 UUID: {uuid}"
    );
    assert_eq!(
        baseline.logs,
        vec![r#"{"a":[1,"x"],"m":{"[Map]":[[1,2]]},"s":{"[Set]":[3]}} 7n end"#.to_string()]
    );
    let baseline = envelope_json(&baseline);

    let targets: Vec<Target> = captured.into_iter().chain(extras()).collect();
    let checks = targets.iter().flat_map(|target| {
        [Variant::Throws, Variant::Forges]
            .map(|variant| (target.clone(), variant))
            .into_iter()
    });
    let outcomes: Vec<(String, Result<bool, String>)> = futures::stream::iter(checks)
        .map(|(target, variant)| {
            let baseline = baseline.clone();
            let label = target.label();
            async move { (label, check(target, variant, baseline).await) }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    let mut failures = Vec::new();
    let mut locked = std::collections::BTreeSet::new();
    for (label, outcome) in outcomes {
        match outcome {
            Ok(true) => {}
            Ok(false) => {
                locked.insert(label);
            }
            Err(failure) => failures.push(failure),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} checks failed:\n\n{}",
        failures.len(),
        targets.len() * 2,
        failures.join("\n\n")
    );
    let expected: std::collections::BTreeSet<String> =
        LOCKED.iter().map(|s| s.to_string()).collect();
    assert_eq!(locked, expected, "only these may be impossible to override");
}

/// The completeness check behind the table: every function and accessor of every built-in
/// (globals, their statics and prototypes, iterator prototypes, %TypedArray%) is wrapped in one
/// that logs `TRIPWIRE <name>` while armed; the script arms it and then only calls the prelude.
/// Any line means the prelude used a built-in a script can change.
const TRIPWIRE: &str = r#"
    const pre = {
        arr: [1, { b: 2 }], map: new Map([[1, 2]]), set: new Set([3]), date: new Date(0),
        bytes: new Uint8Array(8), buffer: new ArrayBuffer(4), view: new DataView(new ArrayBuffer(4)),
        re: /a+/giu, err: new TypeError("bad"), cyclic: { name: "c" }, symbol: Symbol("s"),
        long: "x".repeat(20000), huge: "x".repeat(1100000), u16: new Uint16Array([0xffff]),
    };
    pre.cyclic.self = pre.cyclic;
    const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
    const describe = Reflect.getOwnPropertyDescriptor, define = Reflect.defineProperty;
    const protoOf = Object.getPrototypeOf, toText = String;
    const log = console.log;
    let armed = false, inside = false;
    const trip = (name) => {
        if (!armed || inside) return;
        inside = true;
        try { log("TRIPWIRE " + name); } finally { inside = false; }
    };
    const wrap = (fn, name) => function (...args) {
        trip(name);
        return new.target ? construct(fn, args, new.target) : apply(fn, this, args);
    };
    const prelude = ["TextEncoder", "TextDecoder", "ToolError", "console", "hub", "crypto", "performance", "test"];
    const objects = [];
    const seen = new Set();
    const add = (o, name) => {
        if (o !== null && (typeof o === "object" || typeof o === "function") && !seen.has(o)) {
            seen.add(o);
            objects.push([o, name]);
        }
    };
    add(globalThis, "globalThis");
    for (const name of Object.getOwnPropertyNames(globalThis)) {
        if (prelude.includes(name)) continue;
        const value = globalThis[name];
        add(value, name);
        if (typeof value === "function") add(value.prototype, name + ".prototype");
    }
    const iteratorOf = (x) => protoOf(x[Symbol.iterator]());
    add(iteratorOf([]), "%ArrayIteratorPrototype%");
    add(protoOf(iteratorOf([])), "%IteratorPrototype%");
    add(iteratorOf(new Map()), "%MapIteratorPrototype%");
    add(iteratorOf(new Set()), "%SetIteratorPrototype%");
    add(iteratorOf(""), "%StringIteratorPrototype%");
    add(protoOf(/a/[Symbol.matchAll]("a")), "%RegExpStringIteratorPrototype%");
    add(protoOf(Uint8Array), "%TypedArray%");
    add(protoOf(Uint8Array.prototype), "%TypedArray%.prototype");
    add(protoOf(async function () {}), "%AsyncFunction.prototype%");
    add(protoOf(function* () {}), "%GeneratorFunction.prototype%");
    add(protoOf(function* () {}).prototype, "%GeneratorPrototype%");
    add(protoOf(async function* () {}), "%AsyncGeneratorFunction.prototype%");
    add(protoOf(async function* () {}).prototype, "%AsyncGeneratorPrototype%");
    for (const [o, label] of objects) {
        for (const key of ownKeys(o)) {
            if (key === "constructor" || key === "prototype") continue;
            const d = describe(o, key);
            if (!d.configurable) continue;
            const name = label + "." + toText(key);
            if (d.get || d.set) {
                define(o, key, { get: d.get && wrap(d.get, name), set: d.set && wrap(d.set, name), enumerable: d.enumerable, configurable: true });
            } else if (typeof d.value === "function") {
                define(o, key, { value: wrap(d.value, name), writable: d.writable, enumerable: d.enumerable, configurable: true });
            }
        }
    }
    armed = true;

    const out = {};
    out.echo = (await test.echo({ a: 1 }, { connection: "work" })).args.a;
    try { await test.fail({}); } catch (e) { out.fail = e.code; }
    try { await test.echo(1n); } catch (e) { out.bigint = e.code; }
    try { await test.echo({}, 5); } catch (e) { out.options = e.code; }
    try { await test.echo({}, { connection: 7 }); } catch (e) { out.connection = e.code; }
    try { test.nope; } catch (e) { out.unknown = e.code; }
    try { test.echo = 1; } catch (e) { out.readOnly = true; }
    out.awaitNamespace = (await test) === test;
    console.log({ a: pre.arr, m: pre.map, s: pre.set, e: pre.err, c: pre.cyclic }, 7n, pre.symbol, () => 1, pre.err, undefined, null, 1.5);
    console.warn("warn");
    out.text = new TextDecoder().decode(new TextEncoder().encode("héllo ✓ 😀"));
    out.into = new TextEncoder().encodeInto("hé😀", pre.bytes);
    out.view = new TextDecoder("UTF-8", { fatal: true }).decode(pre.view);
    out.buffer = new TextDecoder().decode(pre.buffer);
    try { new TextDecoder("utf-8", { fatal: true }).decode(pre.u16); } catch (e) { out.fatal = true; }
    const clone = structuredClone({
        a: pre.arr, m: pre.map, s: pre.set, d: pre.date, r: pre.re, b: pre.buffer, v: pre.view,
        u: pre.bytes, e: pre.err, c: pre.cyclic, n: null, x: undefined,
    });
    out.cloned = clone.c.self === clone.c;
    try { structuredClone(() => 1); } catch (e) { out.cloneFunction = true; }
    out.now = Date.now();
    out.date = typeof new Date();
    out.dateText = typeof Date();
    out.perf = performance.now();
    out.uuid = crypto.randomUUID();
    out.random = Math.random();
    crypto.getRandomValues(pre.bytes);
    try { crypto.getRandomValues(pre.view); } catch (e) { out.randomView = true; }
    let fired = false;
    setTimeout((a, b) => { fired = a + b; }, 5, 1, 2);
    clearTimeout(setTimeout(() => {}, 1));
    await sleep(10);
    out.fired = fired;
    out.search = await hub.search("issues");
    out.describe = await hub.describe(["test.echo", "test.fail"]);
    try { await hub.describe([]); } catch (e) { out.describeEmpty = true; }
    out.read = (await hub.read("ref-1", { path: "/items", fields: ["id"], offset: 1 })).asked;
    out.readDefaults = (await hub.read("ref-1")).asked;
    out.whole = (await hub.get("ref-1")).ref;
    try { await hub.read("gone"); } catch (e) { out.gone = e.code; }
    try { await hub.get("ref-1", 2); } catch (e) { out.getExtra = true; }
    try { await hub.read("ref-1", { fields: ["a", "a"] }); } catch (e) { out.twice = true; }
    try { await hub.read("ref-1", { offset: -1 }); } catch (e) { out.negative = true; }
    try { await hub.read("ref-1", { pth: "/a" }); } catch (e) { out.unknownOption = true; }
    out.b64 = encodeBase64("hi") + decodeBase64("aGk=") + atob(btoa("hi"));
    ENDING
"#;

async fn tripwire(ending: &str) -> ExecuteEnvelope {
    exec(&TRIPWIRE.replace("ENDING", ending)).await
}

#[track_caller]
fn assert_untripped(envelope: &ExecuteEnvelope) {
    let tripped: Vec<&String> = envelope
        .logs
        .iter()
        .filter(|line| line.starts_with("TRIPWIRE"))
        .collect();
    assert!(
        tripped.is_empty(),
        "the prelude used built-ins a script can change: {tripped:#?}\n{}",
        envelope_json(envelope)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prelude_touches_no_builtin_a_script_can_change() {
    let returned = tripwire("return out;").await;
    assert_untripped(&returned);
    assert_eq!(returned.status, Status::Completed, "{returned:?}");
    let out = returned.result.clone().unwrap_or_default();
    for (key, expected) in [
        ("echo", json!(1)),
        ("fail", json!("tool_error")),
        ("bigint", json!("invalid_arguments")),
        ("options", json!("invalid_arguments")),
        ("connection", json!("invalid_arguments")),
        ("unknown", json!("unknown_tool")),
        ("readOnly", json!(true)),
        ("awaitNamespace", json!(true)),
        ("text", json!("héllo ✓ 😀")),
        ("into", json!({ "read": 4, "written": 7 })),
        ("view", json!("\u{0}\u{0}\u{0}\u{0}")),
        ("fatal", json!(true)),
        ("cloned", json!(true)),
        ("cloneFunction", json!(true)),
        ("date", json!("object")),
        ("dateText", json!("string")),
        ("randomView", json!(true)),
        ("fired", json!(3)),
        ("describeEmpty", json!(true)),
        (
            "read",
            json!({ "ref": "ref-1", "path": "/items", "fields": ["id"], "offset": 1, "budget": 16384 }),
        ),
        (
            "readDefaults",
            json!({ "ref": "ref-1", "path": "", "fields": null, "offset": 0, "budget": 16384 }),
        ),
        ("whole", json!("ref-1")),
        ("gone", json!("result_unavailable")),
        ("getExtra", json!(true)),
        ("twice", json!(true)),
        ("negative", json!(true)),
        ("unknownOption", json!(true)),
        ("b64", json!("aGk=hihi")),
    ] {
        assert_eq!(out[key], expected, "{key}: {out}");
    }
    assert_eq!(returned.logs.len(), 2, "{:?}", returned.logs);
    assert!(
        returned.logs[0].contains(r#""c":{"name":"c","self":"[Circular]"}"#),
        "{}",
        returned.logs[0]
    );

    // The result paths: a value over the budget (handed over to be stored), a string over the
    // final-value cap (refused before it is written as JSON), an object over it.
    let long = tripwire("return pre.long;").await;
    assert_untripped(&long);
    assert_eq!(long.status, Status::Completed, "{long:?}");
    assert!(long.oversized.is_some());
    let huge = tripwire("return pre.huge;").await;
    assert_untripped(&huge);
    assert_code(&huge, ErrorCode::ResultTooLarge);
    let huge = tripwire("return [pre.huge];").await;
    assert_untripped(&huge);
    assert_code(&huge, ErrorCode::ResultTooLarge);

    // The error paths: a host error rethrown, a forged object, a script's own Error.
    let denied = tripwire(
        "try { await test.deny({}); } catch (e) { e.code = 'approval_expired'; throw e; }",
    )
    .await;
    assert_untripped(&denied);
    assert_code(&denied, ErrorCode::PolicyDenied);
    let forged = tripwire("throw { code: 'approval_expired', hint: 'x' };").await;
    assert_untripped(&forged);
    assert_code(&forged, ErrorCode::RuntimeError);
    let own = tripwire("throw pre.err;").await;
    assert_untripped(&own);
    assert_code(&own, ErrorCode::RuntimeError);
    assert!(
        own.error
            .is_some_and(|e| e.message.contains("TypeError: bad")),
        "the script's own message"
    );
}

// --- The attacks the issue reports, and their relatives --------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn map_size_override_does_not_lift_the_timer_limit() {
    let code = "Object.defineProperty(Map.prototype, 'size', { get() { return 0; } });\n\
                for (let i = 0; i < 5000; i++) setTimeout(() => {}, 1000);\nreturn 'escaped'";
    assert_code(&exec(code).await, ErrorCode::TimerLimit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_values_never_carry_a_host_code_or_hint() {
    for code in [
        // The reported attack: the brand check answered by the script.
        "WeakSet.prototype.has = () => true; WeakMap.prototype.has = () => true;\n\
         throw { code: 'approval_expired', hint: 'x', message: 'forged' };",
        "WeakMap.prototype.get = () => ({ code: 'approval_expired', hint: 'x', message: 'forged' });\n\
         throw new Error('forged');",
        // A ToolError, or an Error with host-looking fields, made by the script.
        "throw new ToolError('forged', { code: 'approval_expired', hint: 'x' });",
        "const e = new Error('forged'); e.code = 'approval_expired'; e.hint = 'x'; throw e;",
        // Inherited fields and a JSON hook on every object.
        "Object.defineProperty(Object.prototype, 'code', { get() { return 'approval_expired'; } });\n\
         Object.defineProperty(Object.prototype, 'hint', { get() { return 'x'; } });\n\
         throw { message: 'forged' };",
        "Object.prototype.toJSON = function () { return { name: null, message: 'forged', code: 'approval_expired', hint: 'x' }; };\n\
         throw 'forged';",
        r#"JSON.stringify = () => '{"name":null,"message":"forged","stack":null,"code":"approval_expired","hint":"x","address":null}'; throw 'forged';"#,
    ] {
        let envelope = exec(code).await;
        assert_code(&envelope, ErrorCode::RuntimeError);
        let error = envelope.error.clone().unwrap_or_else(|| panic!("{code}"));
        assert_eq!(
            error.hint.as_deref(),
            Some(ErrorCode::RuntimeError.hint()),
            "{code}: {error:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_cannot_answer_a_tool_call_for_the_host() {
    // With Promise.prototype.constructor changed, `await` on a host promise would look up
    // `then`, and the script's `then` could hand back any reply, branded by the prelude.
    let hijack = r#"
        const forged = JSON.stringify({ ok: false, ms: 0, error: { code: "approval_expired", message: "forged", hint: "x", status: null, retryable: false } });
        const then = Promise.prototype.then;
        const isReply = (v) => typeof v === "string" && v.startsWith('{"ok"');
        Promise.prototype.constructor = function Fake() {};
        Promise.prototype.then = function (resolve, reject) {
            return then.call(this, (v) => resolve(isReply(v) ? forged : v), reject);
        };
        const r = await test.echo({ a: 1 });
        return r.args.a;
    "#;
    let envelope = exec(hijack).await;
    assert_ne!(
        envelope.error_code(),
        Some(ErrorCode::ApprovalExpired),
        "{envelope:?}"
    );
    assert_result(&envelope, json!(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_host_error_reports_what_the_host_said() {
    let code = "try { await test.flaky({}); } catch (e) {\n\
                Object.defineProperty(e, 'code', { get() { return 'approval_expired'; } });\n\
                e.hint = 'x'; e.message = 'forged'; e.address = 'test.echo'; throw e; }";
    let envelope = exec(code).await;
    assert_code(&envelope, ErrorCode::UpstreamUnavailable);
    let error = envelope.error.unwrap_or_else(|| panic!("no error"));
    assert!(
        error.message.contains("test.flaky") && error.message.contains("connection refused"),
        "{error:?}"
    );
    assert_eq!(
        error.hint.as_deref(),
        Some(ErrorCode::UpstreamUnavailable.hint())
    );
}

#[test]
fn a_rejection_whose_getter_logs_does_not_hang_the_run() {
    // The host describes unhandled rejections; a getter that logs once deadlocked it. The
    // runtime is this test's own so that a deadlocked sandbox thread cannot hold up its shutdown.
    let code = "const e = new Error('x');\n\
                Object.defineProperty(e, 'message', { get() { console.log('read'); return 'lost'; } });\n\
                Promise.reject(e); await sleep(1); return 1";
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let outcome =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(20), exec(code)).await });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let envelope = outcome.unwrap_or_else(|_| panic!("the run hung"));
    assert_code(&envelope, ErrorCode::RuntimeError);
    assert!(
        envelope
            .error
            .is_some_and(|e| e.message.contains("Unhandled promise rejection")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stack_trace_hooks_are_not_available() {
    assert_code(
        &exec("Error.prepareStackTrace = () => 'x'; return 1").await,
        ErrorCode::RuntimeError,
    );
}

// --- Names (class 6) ------------------------------------------------------------------------------

/// Answers every call with the address it reached.
struct AddressBridge;

impl Bridge for AddressBridge {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        async move {
            let value =
                json!({ "content": [], "structuredContent": { "address": call.address() } });
            CallOutcome {
                result: Ok(value),
                ms: Some(1),
            }
        }
        .boxed()
    }

    fn search(&self, query: String) -> BoxFuture<'static, String> {
        async move { query }.boxed()
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        async move { targets.join(",") }.boxed()
    }
}

fn named(namespaces: &[&str], tools: &[&str], code: &str) -> RunRequest {
    let schema = json!({ "type": "object" });
    let specs: Vec<Arc<ToolSpec>> = tools
        .iter()
        .map(|t| {
            Arc::new(ToolSpec::new(
                *t,
                schema.clone(),
                format!("{t}(input: object)"),
            ))
        })
        .collect();
    let namespaces: Namespaces = namespaces
        .iter()
        .map(|ns| (ns.to_string(), specs.clone()))
        .collect();
    RunRequest::new("run-names", code, Arc::new(namespaces))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_named_like_object_members_still_install() {
    let spaces = [
        "__proto__",
        "constructor",
        "toString",
        "valueOf",
        "hasOwnProperty",
    ];
    let tools = ["echo", "__proto__", "constructor", "then", "hasOwnProperty"];
    for ns in spaces {
        let alone = run(named(&[ns], &tools, "return 1"), Arc::new(AddressBridge)).await;
        assert_result(&alone, json!(1));
    }
    let code = r#"
        return [
            (await __proto__.echo({})).address,
            (await constructor.__proto__({})).address,
            (await toString.constructor({})).address,
            (await valueOf.hasOwnProperty({})).address,
            (await hasOwnProperty.echo({})).address,
            typeof constructor.then,
            (await constructor) === constructor,
            Object.keys(valueOf).length,
            ({}).toString(),
        ];
    "#;
    let envelope = run(named(&spaces, &tools, code), Arc::new(AddressBridge)).await;
    assert_result(
        &envelope,
        json!([
            "__proto__.echo",
            "constructor.__proto__",
            "toString.constructor",
            "valueOf.hasOwnProperty",
            "hasOwnProperty.echo",
            "undefined",
            true,
            4,
            "[object Object]",
        ]),
    );
    // `then` is never a tool on a namespace: awaiting one must not call anything.
    assert_eq!(envelope.calls.len(), 5, "{envelope:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_named_like_globals_are_reported_not_installed() {
    let envelope = run(
        named(
            &["Map", "hub", "console", "works"],
            &["echo"],
            "return [typeof Map, typeof hub, (await works.echo({})).address]",
        ),
        Arc::new(AddressBridge),
    )
    .await;
    assert_result(&envelope, json!(["function", "object", "works.echo"]));
    for ns in ["Map", "hub", "console"] {
        assert!(
            envelope
                .notices
                .iter()
                .any(|n| n.contains(&format!("source `{ns}` is not reachable"))),
            "{ns}: {:?}",
            envelope.notices
        );
    }
}

/// Every global the sandbox defines and every Object.prototype member, read from a real run, is
/// refused as a source name, so the list in address.rs cannot drift from the sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sandbox_global_is_refused_as_a_source_name() {
    let mut request = request(
        "return [Object.getOwnPropertyNames(globalThis), Object.getOwnPropertyNames(Object.prototype)]",
    );
    request.namespaces = Arc::new(Namespaces::new());
    let envelope = exec_with(request).await;
    assert_eq!(envelope.status, Status::Completed, "{envelope:?}");
    let names: Vec<String> = envelope
        .result
        .iter()
        .flat_map(|r| r.as_array().cloned().unwrap_or_default())
        .flat_map(|list| list.as_array().cloned().unwrap_or_default())
        .filter_map(|name| name.as_str().map(str::to_string))
        .collect();
    assert!(names.len() > 60, "{names:?}");
    let accepted: Vec<&String> = names
        .iter()
        .filter(|name| namespace_problem(name).is_none())
        .collect();
    assert!(
        accepted.is_empty(),
        "accepted as source names: {accepted:?}"
    );
    for name in &names {
        let problem = namespace_problem(name).unwrap_or_default();
        let suggestion = problem
            .rsplit('`')
            .nth(1)
            .unwrap_or_else(|| panic!("no suggested name: {problem}"));
        assert!(
            namespace_problem(suggestion).is_none(),
            "{name}: the suggestion `{suggestion}` is refused too: {problem}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_static_check_ignores_names_that_are_not_sources() {
    // A namespace named like a global is not installed, so `Map.groupBy` is the built-in.
    let envelope = run(
        named(
            &["Map"],
            &["echo"],
            "return Map.groupBy([1, 2], (x) => x % 2).size",
        ),
        Arc::new(AddressBridge),
    )
    .await;
    assert_result(&envelope, Value::from(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_map_or_set_that_holds_itself_logs_as_circular() {
    let code = r#"
        const m = new Map([["n", 1]]);
        m.set("self", m);
        const s = new Set();
        s.add(s);
        console.log(m);
        console.log({ inside: [m] }, s);
        return 1;
    "#;
    let envelope = exec(code).await;
    assert_eq!(envelope.status, Status::Completed, "{envelope:?}");
    assert_eq!(
        envelope.logs,
        [
            r#"{"[Map]":[["n",1],["self","[Circular]"]]}"#,
            r#"{"inside":[{"[Map]":[["n",1],["self","[Circular]"]]}]} {"[Set]":["[Circular]"]}"#,
        ],
    );
}

/// Regression (review 7): TextDecoder read `ED A0 80` (a surrogate written as UTF-8) as one
/// U+FFFD where the WHATWG decoder, like Rust's, gives three. Each malformed sequence decodes
/// as `String::from_utf8_lossy` does, since both follow the same rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_decoder_replaces_malformed_utf8_as_the_whatwg_decoder_does() {
    let cases: [&[u8]; 12] = [
        b"\xed\xa0\x80",
        b"\xe0\x80\x80",
        b"\xf0\x80\x80\x80",
        b"\xf4\x90\x80\x80",
        b"\xc0\xaf",
        b"\xe2\x82",
        b"a\xe2\x82b",
        b"\xf0\x9f\x98",
        b"\xf0\x9f\x98\x80\x80",
        b"\xff\xfe",
        b"\xed\x9f\xbf",
        b"\xe1\x80\xc0\x80",
    ];
    let lists: Vec<String> = cases
        .iter()
        .map(|bytes| format!("{:?}", bytes.to_vec()))
        .collect();
    let code = format!(
        "return [{}].map((b) => new TextDecoder().decode(new Uint8Array(b)));",
        lists.join(", ")
    );
    let expected: Vec<String> = cases
        .iter()
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        .collect();
    assert_result(&exec(&code).await, json!(expected));
}
