//! The host object the prelude's `install(host)` receives: the Rust functions behind tool calls,
//! `hub.search`/`hub.describe`/`hub.read`/`hub.get`, console, timers and the base64 helpers, plus
//! the run's constants. Nothing larger than the run's `tool_result_bytes` enters the sandbox from
//! here: a value is measured as JSON before it is written out for the script.

use crate::error_text::{ECHO_BYTES, echo};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::prelude::{Async, Opt};
use rquickjs::{Array, Ctx, Exception, Function, Object};
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::alloc::{Held, MemoryMeter};
use super::base64;
use super::bridge::{Bridge, BridgeError, CallFailure, ReadRequest, ToolCall};
use super::envelope::CallEnd;
use super::error::ErrorCode;
use super::measure::{cut_text, describe, thousands};
use super::request::{MAX_PENDING_TIMERS, MAX_TIMER_MS, Namespaces, RunRequest, ToolSpec};
use super::state::{CallRecord, Shared};
use super::tool_result::{Unwrapped, unwrap_result};
use crate::model::closest::closest;
use crate::model::json_size::{JsonSize, json_size};

/// Everything the host functions need, cloned into each of them.
#[derive(Clone)]
pub struct HostEnv {
    pub shared: Arc<Shared>,
    pub bridge: Arc<dyn Bridge>,
    pub namespaces: Arc<Namespaces>,
    /// The runtime bridge futures run on (never the thread that runs JavaScript).
    pub io: Handle,
    pub max_calls: u64,
    pub log_budget: usize,
    /// The run's output budget: what one `hub.read` page must fit.
    pub read_budget: usize,
    /// The largest value (as JSON) one tool call or `hub.get` may bring into the sandbox.
    pub tool_result_bytes: usize,
    /// The run's memory: what the host holds for its calls counts against it too.
    pub meter: Arc<MemoryMeter>,
}

/// How many bytes of the run's memory one byte of a call's arguments (as JSON) counts for
/// while the call is out: the host parses them (a value per number or bracket, far larger than
/// its text), checks them, digests them and keeps them until the upstream answers. Counted, a
/// script cannot make the host hold gigabytes by sending a structure its heap shares (`x = [x,
/// x]`, twenty times over) or by sending many calls at once.
const ARGUMENT_WEIGHT: usize = 16;

/// How far a value over `tool_result_bytes` is measured before its size is reported as "at
/// least": counting allocates nothing, but a value of gigabytes should not cost seconds.
const MEASURE_MAX: usize = 64 << 20;

/// Aborts a spawned bridge task when the run drops it, so nothing outlives the run.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> AbortOnDrop<T> {
    async fn join(&mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

/// Builds the `host` object.
pub fn build<'js>(
    ctx: &Ctx<'js>,
    env: &HostEnv,
    request: &RunRequest,
) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let seed = Array::new(ctx.clone())?;
    for (i, word) in seed_words(request.seed).into_iter().enumerate() {
        seed.set(i, word)?;
    }
    host.set("seed", seed)?;
    // Milliseconds since the epoch fit f64 exactly for the next 285,000 years.
    host.set("start", request.start_time_ms as f64)?;
    host.set("maxTimerMs", MAX_TIMER_MS as f64)?;
    host.set("maxPendingTimers", MAX_PENDING_TIMERS as f64)?;
    // Pairs, not an object: a namespace called `__proto__` is then just a string.
    let listing: Vec<Value> = env
        .namespaces
        .iter()
        .map(|(ns, tools)| json!([ns, tools.iter().map(|t| &t.name).collect::<Vec<_>>()]))
        .collect();
    host.set("namespaces", Value::Array(listing).to_string())?;

    let e = env.clone();
    host.set(
        "call",
        Function::new(
            ctx.clone(),
            Async(
                move |ns: String, tool: String, args: String, connection: Opt<Option<String>>| {
                    let started = start_call(&e, ns, tool, &args, connection.0.flatten());
                    finish_call(e.clone(), started)
                },
            ),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "search",
        Function::new(
            ctx.clone(),
            Async(move |query: String| {
                let mut task = AbortOnDrop(e.io.spawn(e.bridge.search(query).in_current_span()));
                async move {
                    Ok::<_, rquickjs::Error>(
                        task.join()
                            .await
                            .unwrap_or_else(|_| "search failed".to_string()),
                    )
                }
            }),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "describe",
        Function::new(
            ctx.clone(),
            Async(move |targets: String| {
                let targets: Vec<String> = serde_json::from_str(&targets).unwrap_or_default();
                let mut task =
                    AbortOnDrop(e.io.spawn(e.bridge.describe(targets).in_current_span()));
                async move {
                    Ok::<_, rquickjs::Error>(
                        task.join()
                            .await
                            .unwrap_or_else(|_| "describe failed".to_string()),
                    )
                }
            }),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "read",
        Function::new(
            ctx.clone(),
            Async(
                move |result_ref: String,
                      path: String,
                      fields: Option<Vec<String>>,
                      offset: f64| {
                    // The prelude checked every argument; these checks only keep a bug there
                    // from reaching the hub as a wrong offset.
                    let task = read_offset(offset).map(|offset| {
                        let request = ReadRequest {
                            result_ref,
                            path,
                            fields,
                            offset,
                            budget: e.read_budget,
                        };
                        AbortOnDrop(e.io.spawn(e.bridge.read(request).in_current_span()))
                    });
                    let cap = e.tool_result_bytes;
                    async move {
                        let answer = match task {
                            Ok(mut task) => joined("hub.read", task.join().await),
                            Err(failure) => Err(failure),
                        };
                        Ok::<_, rquickjs::Error>(stored_reply("hub.read", answer, cap))
                    }
                },
            ),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "get",
        Function::new(
            ctx.clone(),
            Async(move |result_ref: String| {
                let mut task = AbortOnDrop(e.io.spawn(e.bridge.get(result_ref).in_current_span()));
                let cap = e.tool_result_bytes;
                async move {
                    let answer = joined("hub.get", task.join().await);
                    Ok::<_, rquickjs::Error>(stored_reply("hub.get", answer, cap))
                }
            }),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "log",
        Function::new(ctx.clone(), move |level: String, text: String| {
            let line = match level.as_str() {
                "log" | "info" | "debug" => text,
                _ => format!("[{level}] {text}"),
            };
            e.shared.log(line, e.log_budget)
        })?,
    )?;

    let e = env.clone();
    host.set(
        "wake",
        Function::new(
            ctx.clone(),
            Async(move |ms: f64| {
                let (tx, rx) = oneshot::channel::<()>();
                // Replacing the sender drops the previous one, which resolves its wake-up with false.
                e.shared.lock().wake = Some(tx);
                let delay = Duration::from_millis(ms.clamp(0.0, MAX_TIMER_MS as f64) as u64);
                async move {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => Ok::<_, rquickjs::Error>(true),
                        _ = rx => Ok(false),
                    }
                }
            }),
        )?,
    )?;

    let e = env.clone();
    host.set(
        "timerLimit",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, count: f64| -> rquickjs::Result<()> {
                let message =
                    format!("{count} timers pending at once; the limit is {MAX_PENDING_TIMERS}");
                e.shared.fail(ErrorCode::TimerLimit, message.clone());
                Err(Exception::throw_range(&ctx, &message))
            },
        )?,
    )?;

    let e = env.clone();
    host.set(
        "unknownTool",
        Function::new(ctx.clone(), move |ns: String, name: String| {
            unknown_tool_message(&e.namespaces, &ns, &name)
        })?,
    )?;

    // Whether a value is a Proxy, which no script can tell: the array walks the run's limits
    // cannot stop run natively only on what no trap can tell another length (07_walks.js).
    host.set(
        "isProxy",
        Function::new(ctx.clone(), |value: rquickjs::Value<'js>| value.is_proxy())?,
    )?;
    host.set(
        "decodeBase64",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, text: String| {
            base64::decode(&text).map_err(|message| Exception::throw_type(&ctx, &message))
        })?,
    )?;
    host.set(
        "encodeBase64",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, text: String, url_safe: bool| {
                base64::encode(&text, url_safe)
                    .map_err(|message| Exception::throw_range(&ctx, &message))
            },
        )?,
    )?;
    Ok(host)
}

/// Four u32 words for the guest PRNG from the run's seed (splitmix64, so nearby seeds differ).
fn seed_words(seed: u64) -> [u32; 4] {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (a, b) = (next(), next());
    [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32]
}

/// `ns.name is not a tool` with the closest names, for the Proxy's TypeError and the static check.
/// Only the run's own tools are named: one hidden from it (by policy or a token) is unknown like
/// any other name, and never offered as the closest.
pub fn unknown_tool_message(namespaces: &Namespaces, ns: &str, name: &str) -> String {
    let tools: Vec<&str> = namespaces
        .get(ns)
        .map(|t| t.iter().map(|t| t.name.as_str()).collect())
        .unwrap_or_default();
    let near = closest(name, tools.iter().copied(), 3);
    if tools.is_empty() {
        format!(
            "{ns}.{} is not a tool; {ns} has none this run can call",
            echo(name)
        )
    } else if near.is_empty() {
        let mut all: Vec<&str> = tools.iter().copied().take(10).collect();
        if tools.len() > all.len() {
            all.push("…");
        }
        format!(
            "{ns}.{} is not a tool; {ns} has: {}",
            echo(name),
            all.join(", ")
        )
    } else {
        let near: Vec<String> = near.iter().map(|n| format!("{ns}.{n}")).collect();
        format!(
            "{ns}.{} is not a tool; did you mean {}?",
            echo(name),
            near.join(", ")
        )
    }
}

/// `offset` as the prelude passes it: a non-negative safe integer.
fn read_offset(offset: f64) -> Result<u64, CallFailure> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    if (0.0..=MAX_SAFE_INTEGER).contains(&offset) && offset.fract() == 0.0 {
        Ok(offset as u64)
    } else {
        Err(CallFailure::new(
            ErrorCode::InvalidArguments,
            format!("hub.read: offset must be a non-negative integer, not {offset}"),
        ))
    }
}

/// A stored-result task's answer, or why it has none.
fn joined(
    what: &str,
    answer: Result<Result<Value, CallFailure>, tokio::task::JoinError>,
) -> Result<Value, CallFailure> {
    answer.unwrap_or_else(|join| {
        Err(CallFailure::new(
            ErrorCode::Internal,
            format!("{what} failed inside the hub: {join}"),
        ))
    })
}

/// The reply to `hub.read`/`hub.get` that the prelude parses: the value, unless it is too large
/// to enter the sandbox, or the failure.
fn stored_reply(what: &str, answer: Result<Value, CallFailure>, cap: usize) -> String {
    let failure = match answer {
        Ok(value) => match too_large(&value, cap) {
            None => return json!({ "ok": true, "value": value }).to_string(),
            Some(size) => {
                let mut failure = CallFailure::new(
                    ErrorCode::ResultTooLarge,
                    format!(
                        "{what}: the stored result is {} bytes of JSON; at most {} bytes of one value may enter the sandbox",
                        describe(size),
                        thousands(cap)
                    ),
                );
                failure.hint = Some(
                    "Read the stored result in pages with hub.read(resultRef, { path, fields, offset }) instead of whole; nothing needs to run again.".into(),
                );
                failure
            }
        },
        Err(failure) => failure,
    };
    reply_error(&bounded(failure, cap), 0)
}

/// The size of `value` as JSON when it is over `cap`, measured without writing it out.
fn too_large(value: &Value, cap: usize) -> Option<JsonSize> {
    let size = json_size(value, cap.max(MEASURE_MAX));
    size.exceeds(cap).then_some(size)
}

/// A failure whose texts fit the cap on what enters the sandbox (an upstream's error text can be
/// as large as any result).
fn bounded(mut failure: CallFailure, cap: usize) -> CallFailure {
    cut_text(&mut failure.message, cap);
    if let Some(hint) = failure.hint.as_mut() {
        cut_text(hint, cap);
    }
    failure
}

/// How far a call the bridge failed got, by what the code means: the hub refuses these before
/// anything leaves it. Any other failure may have come from the upstream.
fn failed_outcome(code: ErrorCode) -> CallEnd {
    match code {
        ErrorCode::PolicyDenied
        | ErrorCode::InvalidArguments
        | ErrorCode::UnknownTool
        | ErrorCode::CallLimit
        | ErrorCode::ReplayDivergence
        | ErrorCode::ApprovalExpired
        | ErrorCode::RunInProgress
        | ErrorCode::Cancelled => CallEnd::NotSent,
        _ => CallEnd::Failed,
    }
}

/// A call after its synchronous checks: either an answer already, or a bridge task to await.
enum Started {
    Ready(String),
    Running {
        /// Its place in the run's list of calls.
        index: usize,
        address: String,
        task: AbortOnDrop<super::bridge::CallOutcome>,
        at: Instant,
        /// The arguments' share of the run's memory, let go when the call is answered.
        _arguments: Held,
    },
}

fn reply_error(failure: &CallFailure, ms: u64) -> String {
    json!({
        "ok": false,
        "ms": ms,
        "error": {
            "code": failure.code.as_str(),
            "message": failure.message,
            "hint": failure.hint,
            "status": failure.status,
            "retryable": failure.retryable,
        }
    })
    .to_string()
}

/// Runs synchronously inside the JS call, so sequence numbers follow the script's issue order.
fn start_call(
    env: &HostEnv,
    ns: String,
    tool: String,
    args: &str,
    connection: Option<String>,
) -> Started {
    let address = format!("{ns}.{tool}");
    let Some(spec) = env
        .namespaces
        .get(&ns)
        .and_then(|tools| tools.iter().find(|t| t.name == tool))
    else {
        let failure = CallFailure::new(
            ErrorCode::UnknownTool,
            unknown_tool_message(&env.namespaces, &ns, &tool),
        );
        return Started::Ready(reply_error(&failure, 0));
    };
    let Some(held) = env.meter.hold(args.len().saturating_mul(ARGUMENT_WEIGHT)) else {
        let failure = CallFailure::new(
            ErrorCode::MemoryLimit,
            format!(
                "{address} was not sent: its arguments are {} bytes of JSON, and the run's memory cannot hold them beside what it already uses (the host keeps arguments, parsed, until the upstream answers)",
                thousands(args.len())
            ),
        );
        return Started::Ready(reply_error(&failure, 0));
    };
    let arguments = match check_arguments(spec, &address, args, connection.as_deref()) {
        Ok(arguments) => arguments,
        Err(failure) => return Started::Ready(reply_error(&failure, 0)),
    };
    let (seq, index) = {
        let mut state = env.shared.lock();
        // Refused calls are listed (not sent): the script started them, and the envelope says
        // which of its calls did not happen.
        if env.shared.should_stop() {
            // The run is ending (a limit, a cancel): nothing more leaves it.
            let code = state
                .fatal
                .as_ref()
                .map_or(ErrorCode::Cancelled, |fatal| fatal.code);
            state.calls.push(CallRecord::refused(address.clone()));
            let message = format!("{address} was not sent: the run is ending ({code})");
            return Started::Ready(reply_error(&CallFailure::new(code, message), 0));
        }
        let seq = state.sent;
        if seq >= env.max_calls {
            state.calls.push(CallRecord::refused(address.clone()));
            drop(state);
            let message = format!(
                "{address} would be call {} of a run; the limit is {}",
                seq + 1,
                env.max_calls
            );
            env.shared.fail(ErrorCode::CallLimit, message.clone());
            return Started::Ready(reply_error(
                &CallFailure::new(ErrorCode::CallLimit, message),
                0,
            ));
        }
        state.sent += 1;
        let index = state.calls.len();
        state.calls.push(CallRecord::sent(address.clone(), seq));
        state.in_flight += 1;
        (seq, index)
    };
    let call = ToolCall {
        seq,
        namespace: ns,
        tool,
        connection,
        arguments,
    };
    // The call runs on the I/O runtime, in the run's span (entered on this thread).
    let task = AbortOnDrop(env.io.spawn(env.bridge.call(call).in_current_span()));
    Started::Running {
        index,
        address,
        task,
        at: Instant::now(),
        _arguments: held,
    }
}

/// How long one schema problem in an argument refusal may be, in bytes.
const PROBLEM_BYTES: usize = 400;

/// A refused value as the refusal shows it: its JSON when short, else its kind, size and, for a
/// string, its first [`ECHO_BYTES`] — measured first, so a script's megabyte argument is never
/// written out again to be repeated back into the script.
fn echo_value(value: &Value) -> String {
    if !json_size(value, ECHO_BYTES).exceeds(ECHO_BYTES) {
        return value.to_string();
    }
    let counted = |n: usize, one: &str, many: &str| {
        format!("{} {}", thousands(n), if n == 1 { one } else { many })
    };
    match value {
        Value::String(text) => format!(
            "a string of {} starting {:?}",
            counted(text.len(), "byte", "bytes"),
            &text[..text.floor_char_boundary(ECHO_BYTES)]
        ),
        Value::Array(items) => format!("an array of {}", counted(items.len(), "item", "items")),
        Value::Object(members) => {
            format!(
                "an object of {}",
                counted(members.len(), "member", "members")
            )
        }
        other => other.to_string(),
    }
}

fn check_arguments(
    spec: &ToolSpec,
    address: &str,
    args: &str,
    connection: Option<&str>,
) -> Result<Value, CallFailure> {
    let invalid = |message: String| CallFailure {
        code: ErrorCode::InvalidArguments,
        message,
        hint: Some(format!("Call it as {}", spec.signature)),
        status: None,
        retryable: false,
        outcome: Some(CallEnd::NotSent),
    };
    if let Some(connection) = connection
        && !spec.connections.is_empty()
        && !spec.connections.iter().any(|c| c == connection)
    {
        return Err(invalid(format!(
            "{address}: there is no connection {:?}; available: {}",
            echo(connection),
            spec.connections.join(", ")
        )));
    }
    let arguments: Value = serde_json::from_str(args)
        .map_err(|e| invalid(format!("{address}: arguments are not JSON: {e}")))?;
    if !arguments.is_object() {
        return Err(invalid(format!(
            "{address}: the first argument must be an object"
        )));
    }
    if let Some(validator) = spec.validator() {
        let problems: Vec<String> = validator
            .iter_errors(&arguments)
            .take(3)
            .map(|error| {
                let path = error.instance_path().to_string();
                let mut problem = error.masked_with(echo_value(error.instance())).to_string();
                // What the schema expects can be long too (a `const` of an upstream's choosing).
                cut_text(&mut problem, PROBLEM_BYTES);
                if path.is_empty() {
                    problem
                } else {
                    format!("at {path}: {problem}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(invalid(format!(
                "{address}: invalid arguments: {}",
                problems.join("; ")
            )));
        }
    }
    Ok(arguments)
}

async fn finish_call(env: HostEnv, started: Started) -> rquickjs::Result<String> {
    let (index, address, mut task, at) = match started {
        Started::Ready(reply) => return Ok(reply),
        Started::Running {
            index,
            address,
            task,
            at,
            ..
        } => (index, address, task, at),
    };
    let outcome = task.join().await;
    let measured = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
    let cap = env.tool_result_bytes;
    let (reply, ok, ms, end) = match outcome {
        Err(join) => {
            let failure = CallFailure::new(
                ErrorCode::Internal,
                format!("{address}: the call failed inside the hub: {join}"),
            );
            // Whether it reached the upstream before the hub failed is not known.
            let reply = reply_error(&failure, measured);
            (reply, false, measured, CallEnd::Unknown)
        }
        Ok(outcome) => {
            let ms = outcome.ms.unwrap_or(measured);
            match outcome.result {
                Ok(raw) => match unwrap_result(raw) {
                    Unwrapped::Value(value) => match too_large(&value, cap) {
                        None => {
                            let reply = json!({ "ok": true, "ms": ms, "value": value }).to_string();
                            (reply, true, ms, CallEnd::Done)
                        }
                        // The call ran; only its result stays out of the sandbox.
                        Some(size) => {
                            let mut failure = CallFailure::new(
                                ErrorCode::ResultTooLarge,
                                format!(
                                    "{address}: the result is {} bytes of JSON; at most {} bytes of one tool result may enter the sandbox",
                                    describe(size),
                                    thousands(cap)
                                ),
                            );
                            failure.hint = Some(
                                "Ask the tool for less: a filter, a page, or fewer fields. The call itself ran: do not repeat a write to get its result.".into(),
                            );
                            (reply_error(&failure, ms), false, ms, CallEnd::Done)
                        }
                    },
                    Unwrapped::ToolFailed(tool) => {
                        let mut failure = CallFailure::new(ErrorCode::ToolError, tool.message);
                        failure.status = tool.status;
                        failure.retryable = tool.retryable;
                        failure.hint = tool.hint;
                        let failure = bounded(failure, cap);
                        (reply_error(&failure, ms), false, ms, CallEnd::Failed)
                    }
                },
                Err(BridgeError::Failed(failure)) => {
                    let end = failure
                        .outcome
                        .unwrap_or_else(|| failed_outcome(failure.code));
                    (reply_error(&bounded(failure, cap), ms), false, ms, end)
                }
                Err(BridgeError::Suspend(pending)) => {
                    {
                        let mut state = env.shared.lock();
                        state.in_flight = state.in_flight.saturating_sub(1);
                        state.pending.push(pending);
                        // It waits for a person: nothing was sent.
                        if let Some(record) = state.calls.get_mut(index) {
                            record.end(false, ms, CallEnd::NotSent);
                        }
                    }
                    env.shared.changed.notify_one();
                    // The script never gets an answer: the run stops once nothing else is in flight.
                    return std::future::pending().await;
                }
            }
        }
    };
    {
        let mut state = env.shared.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if let Some(record) = state.calls.get_mut(index) {
            record.end(ok, ms, end);
        }
    }
    env.shared.changed.notify_one();
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespaces() -> Namespaces {
        let schema = json!({ "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] });
        let tools = vec![
            Arc::new(ToolSpec::new(
                "searchIssues",
                schema.clone(),
                "github.searchIssues(input: { q: string })",
            )),
            Arc::new(ToolSpec::new(
                "createIssue",
                schema,
                "github.createIssue(input: { q: string })",
            )),
        ];
        Namespaces::from([("github".to_string(), tools)])
    }

    #[test]
    fn unknown_tools_name_the_closest() {
        let message = unknown_tool_message(&namespaces(), "github", "createIssues");
        assert!(
            message.contains("did you mean github.createIssue"),
            "{message}"
        );
        let message = unknown_tool_message(&namespaces(), "github", "zzz");
        assert!(
            message.contains("github has: searchIssues, createIssue"),
            "{message}"
        );
    }

    #[test]
    fn a_namespace_with_nothing_to_call_says_so_rather_than_list_nothing() {
        let empty = Namespaces::from([("counter".to_string(), Vec::new())]);
        assert_eq!(
            unknown_tool_message(&empty, "counter", "write"),
            "counter.write is not a tool; counter has none this run can call"
        );
    }

    #[test]
    fn arguments_are_checked_against_the_schema_with_the_signature_as_hint() {
        let ns = namespaces();
        let spec = &ns["github"][0];
        assert!(check_arguments(spec, "github.searchIssues", r#"{"q":"x"}"#, None).is_ok());
        let failure = check_arguments(spec, "github.searchIssues", r#"{"q":1}"#, None).err();
        let failure = failure.unwrap_or_else(|| CallFailure::new(ErrorCode::Internal, ""));
        assert_eq!(failure.code, ErrorCode::InvalidArguments);
        assert!(failure.message.contains("/q"), "{}", failure.message);
        assert_eq!(
            failure.hint.as_deref(),
            Some("Call it as github.searchIssues(input: { q: string })")
        );
        assert!(check_arguments(spec, "github.searchIssues", "[]", None).is_err());
    }

    #[test]
    fn a_refusal_repeats_a_huge_argument_or_enum_or_connection_only_in_part() {
        let refusal = |spec: &ToolSpec, args: &str, connection: Option<&str>| {
            check_arguments(spec, "ops.deploy", args, connection)
                .err()
                .map(|failure| failure.message)
                .unwrap_or_default()
        };
        let names: Vec<String> = (0..5_000).map(|i| format!("environment-{i}")).collect();
        let schema = json!({ "type": "object", "properties": {
            "to": { "enum": names }, "note": { "type": "number" },
            "mode": { "const": "y".repeat(100_000) } } });
        let spec = ToolSpec::new("deploy", schema, "ops.deploy(input: { to?: string })")
            .with_connections(vec!["work".to_string()]);
        let huge = "x".repeat(1_000_000);

        let message = refusal(&spec, &json!({ "note": huge }).to_string(), None);
        assert!(
            message.contains(&format!(
                "at /note: a string of 1,000,000 bytes starting \"{}\" is not",
                "x".repeat(ECHO_BYTES)
            )),
            "{message}"
        );
        assert!(message.contains("is not of type \"number\""), "{message}");
        let message = refusal(&spec, &json!({ "to": huge }).to_string(), None);
        assert!(
            message.contains("at /to: a string of 1,000,000 bytes"),
            "{message}"
        );
        assert!(message.contains("4998 other candidates"), "{message}");
        let message = refusal(&spec, r#"{"mode":"z"}"#, None);
        assert!(message.contains(r#"at /mode: "yyy"#), "{message}");
        assert!(message.contains("[cut: 100,"), "{message}");
        let message = refusal(&spec, &json!({ "note": [huge] }).to_string(), None);
        assert!(
            message.contains("at /note: an array of 1 item is not"),
            "{message}"
        );
        // A short value is shown whole, as before.
        let message = refusal(&spec, r#"{"note":"7"}"#, None);
        assert!(
            message.contains(r#"at /note: "7" is not of type "number""#),
            "{message}"
        );
        let message = refusal(&spec, "{}", Some(&huge));
        assert!(message.contains("there is no connection"), "{message}");
        assert!(message.ends_with("available: work"), "{message}");
        for message in [
            refusal(&spec, &json!({ "note": huge }).to_string(), None),
            refusal(&spec, &json!({ "to": huge }).to_string(), None),
            refusal(&spec, r#"{"mode":"z"}"#, None),
            refusal(&spec, "{}", Some(&huge)),
        ] {
            assert!(message.len() < 1_000, "{} bytes", message.len());
        }
    }

    #[test]
    fn seeds_differ() {
        assert_ne!(seed_words(1), seed_words(2));
        assert_eq!(seed_words(7), seed_words(7));
    }
}
