//! The host object the prelude's `install(host)` receives: the Rust functions behind tool calls,
//! `hub.search`/`hub.describe`, console, timers and the base64 helpers, plus the run's constants.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::prelude::{Async, Opt};
use rquickjs::{Array, Ctx, Exception, Function, Object};
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tracing::Instrument;

use super::base64;
use super::bridge::{Bridge, BridgeError, CallFailure, ToolCall};
use super::envelope::{CallEnd, CallSummary};
use super::error::ErrorCode;
use super::request::{MAX_PENDING_TIMERS, MAX_TIMER_MS, Namespaces, RunRequest, ToolSpec};
use super::state::Shared;
use super::tool_result::{Unwrapped, unwrap_result};
use crate::model::closest::closest;

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
}

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
pub fn unknown_tool_message(namespaces: &Namespaces, ns: &str, name: &str) -> String {
    let tools: Vec<&str> = namespaces
        .get(ns)
        .map(|t| t.iter().map(|t| t.name.as_str()).collect())
        .unwrap_or_default();
    let near = closest(name, tools.iter().copied(), 3);
    if near.is_empty() {
        let mut all: Vec<&str> = tools.iter().copied().take(10).collect();
        if tools.len() > all.len() {
            all.push("…");
        }
        format!("{ns}.{name} is not a tool; {ns} has: {}", all.join(", "))
    } else {
        let near: Vec<String> = near.iter().map(|n| format!("{ns}.{n}")).collect();
        format!(
            "{ns}.{name} is not a tool; did you mean {}?",
            near.join(", ")
        )
    }
}

/// A call after its synchronous checks: either an answer already, or a bridge task to await.
enum Started {
    Ready(String),
    Running {
        seq: u64,
        address: String,
        task: AbortOnDrop<super::bridge::CallOutcome>,
        at: Instant,
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
    let arguments = match check_arguments(spec, &address, args, connection.as_deref()) {
        Ok(arguments) => arguments,
        Err(failure) => return Started::Ready(reply_error(&failure, 0)),
    };
    let seq = {
        let mut state = env.shared.lock();
        let seq = state.calls.len() as u64;
        if seq >= env.max_calls {
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
        state.calls.push(None);
        state.in_flight += 1;
        seq
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
        seq,
        address,
        task,
        at: Instant::now(),
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
    };
    if let Some(connection) = connection
        && !spec.connections.is_empty()
        && !spec.connections.iter().any(|c| c == connection)
    {
        return Err(invalid(format!(
            "{address}: there is no connection {connection:?}; available: {}",
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
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("at {path}: {error}")
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
    let (seq, address, mut task, at) = match started {
        Started::Ready(reply) => return Ok(reply),
        Started::Running {
            seq,
            address,
            task,
            at,
        } => (seq, address, task, at),
    };
    let outcome = task.join().await;
    let measured = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (reply, ok, ms) = match outcome {
        Err(join) => {
            let failure = CallFailure::new(
                ErrorCode::Internal,
                format!("{address}: the call failed inside the hub: {join}"),
            );
            (reply_error(&failure, measured), false, measured)
        }
        Ok(outcome) => {
            let ms = outcome.ms.unwrap_or(measured);
            match outcome.result {
                Ok(raw) => match unwrap_result(raw) {
                    Unwrapped::Value(value) => (
                        json!({ "ok": true, "ms": ms, "value": value }).to_string(),
                        true,
                        ms,
                    ),
                    Unwrapped::ToolFailed(message) => (
                        reply_error(&CallFailure::new(ErrorCode::ToolError, message), ms),
                        false,
                        ms,
                    ),
                },
                Err(BridgeError::Failed(failure)) => (reply_error(&failure, ms), false, ms),
                Err(BridgeError::Suspend(pending)) => {
                    {
                        let mut state = env.shared.lock();
                        state.in_flight = state.in_flight.saturating_sub(1);
                        state.pending.push(pending);
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
        if let Some(slot) = usize::try_from(seq)
            .ok()
            .and_then(|i| state.calls.get_mut(i))
        {
            let outcome = Some(if ok { CallEnd::Done } else { CallEnd::Failed });
            *slot = Some(CallSummary {
                address,
                ok,
                ms,
                outcome,
            });
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
    fn seeds_differ() {
        assert_ne!(seed_words(1), seed_words(2));
        assert_eq!(seed_words(7), seed_words(7));
    }
}
