//! One run from code to envelope: normalise, compile to bytecode, take a fresh QuickJS runtime
//! with the prelude evaluated (`warm`), set its limits (metered memory, stack limit, deadline
//! interrupt; no `Eval`), install the run's host functions, run the script on the JavaScript
//! threads with an outer timeout, turn what happened into the envelope (`ending`), and deliver
//! it before the runtime is freed.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Instant;

use rquickjs::convert::Coerced;
use rquickjs::{
    Array, AsyncContext, AsyncRuntime, CatchResultExt, CaughtError, Ctx, FromJs, Function, Module,
    Object, Promise, Value,
};
use tokio::runtime::Handle;
use tracing::Instrument;

use super::alloc::MemoryMeter;
use super::bridge::Bridge;
use super::cancel::CancelToken;
use super::compile::{SCRIPT_NAME, compile_module};
use super::envelope::{EnvelopeError, ExecuteEnvelope, PAGE_MAX_BYTES};
use super::error::ErrorCode;
use super::host::{self, HostEnv};
use super::js_threads;
use super::normalise::{Normalised, normalise};
use super::parser_pool::run_on_big_stack;
use super::request::RunRequest;
use super::state::Shared;
use super::warm;
use crate::model::json_size::JsonSize;

mod ending;

use ending::envelope;

/// Memory the host may still use after the script hit its limit, to read the error.
const HOST_HEADROOM: usize = 4 << 20;

/// Runs one script and returns its envelope. Never panics on script input; dropping the future
/// cancels the run.
pub async fn run(request: RunRequest, bridge: Arc<dyn Bridge>) -> ExecuteEnvelope {
    run_with_cancel(request, bridge, CancelToken::new()).await
}

/// [`run`] with a token that cancels it from elsewhere.
pub async fn run_with_cancel(
    request: RunRequest,
    bridge: Arc<dyn Bridge>,
    cancel: CancelToken,
) -> ExecuteEnvelope {
    // What the run logs, here and on the thread and tasks it uses, carries its id (and, inside
    // a hub request, the request's id from the span around this one).
    let span = tracing::info_span!("run", run_id = %request.run_id);
    let budget = request.result_budget();
    let mut envelope = run_in_span(request, bridge, cancel).instrument(span).await;
    envelope.bound(budget);
    envelope
}

async fn run_in_span(
    request: RunRequest,
    bridge: Arc<dyn Bridge>,
    cancel: CancelToken,
) -> ExecuteEnvelope {
    let run_id = request.run_id.clone();
    if request.code.len() as u64 > request.limits.code_bytes {
        let message = format!(
            "the code is {} bytes; the limit is {}",
            request.code.len(),
            request.limits.code_bytes
        );
        return ExecuteEnvelope::rejected(
            &run_id,
            EnvelopeError::new(ErrorCode::CodeTooLarge, message),
            Vec::new(),
        );
    }
    let timeout = request.timeout();
    let io = Handle::current();
    // The JavaScript runs on threads of its own (`js_threads`), so a CPU-bound script never
    // holds a worker thread that tool I/O needs, and a run that waits holds no thread at all;
    // bridge futures are spawned back onto `io`.
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let span = tracing::Span::current();
    let (deliver, delivered) = tokio::sync::oneshot::channel();
    let task = js_threads::spawn(move |slice| {
        async move {
            // The clock starts when the run gets a thread: under load a run may wait for one,
            // and that wait is not the script's time.
            let deadline = Instant::now() + timeout;
            let (envelope, spent) = match parse(&request) {
                Ok(normalised) => {
                    execute(request, bridge, normalised, deadline, cancel, io, slice).await
                }
                Err(error) => (
                    ExecuteEnvelope::rejected(&request.run_id, error, Vec::new()),
                    None,
                ),
            };
            let _ = deliver.send(envelope);
            // The client has its answer; freeing this run's heap and making the next run's
            // runtime are no one's wait.
            drop(spent);
            warm::refill().await;
        }
        // Host functions spawn tool calls from these threads; they take the span from here.
        .instrument(span)
    });
    if let Ok(envelope) = delivered.await {
        return envelope;
    }
    let failure = match task.await {
        Err(join) => format!("the sandbox task failed: {join}"),
        Ok(()) => "the sandbox task ended without an outcome".to_string(),
    };
    ExecuteEnvelope::rejected(
        &run_id,
        EnvelopeError::new(ErrorCode::Internal, failure),
        Vec::new(),
    )
}

/// Makes runtimes ready on the JavaScript threads, now and after each run, so that runs do not
/// pay for making theirs. For processes that serve many runs.
pub fn warm_up() {
    warm::want();
    drop(js_threads::spawn(|_| warm::refill()));
}

/// Code this short cannot nest deep enough to need a big stack, so it is parsed on the run's
/// own thread (8 MiB) without a hand-off to the parser threads.
const PARSE_INLINE_BYTES: usize = 1024;

fn parse(request: &RunRequest) -> Result<Normalised, EnvelopeError> {
    if request.code.len() <= PARSE_INLINE_BYTES {
        return normalise(&request.code, &request.namespaces);
    }
    parse_on_big_stack(request)
}

struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn parse_on_big_stack(request: &RunRequest) -> Result<Normalised, EnvelopeError> {
    let code = request.code.clone();
    let namespaces = request.namespaces.clone();
    run_on_big_stack(move || normalise(&code, &namespaces)).unwrap_or_else(|| {
        Err(EnvelopeError::new(
            ErrorCode::Internal,
            "the parser failed on this code",
        ))
    })
}

/// What the script did, as owned data (nothing here may borrow the JS runtime).
enum Outcome {
    /// The JSON of the return value.
    Returned(String),
    /// The JSON of a return value over the output budget but within the final-value cap.
    Oversized(String),
    /// The return value is over the final-value cap: its size and a prefix of its JSON.
    TooLarge {
        size: JsonSize,
        prefix: String,
    },
    /// The return value is not JSON.
    NotJson(String),
    Threw(Thrown),
    /// An exception the prelude could not describe (interrupt, out of memory).
    Aborted(String),
    /// Stopped from the host side: fatal limit, suspended calls, cancel.
    Stopped,
    TimedOut,
    Engine(String),
}

/// A thrown value as the prelude's `describeError` reports it. Code, hint and address are set
/// only for errors the prelude made for the host (branded), never from what a script threw.
#[derive(Debug, Default)]
struct Thrown {
    name: Option<String>,
    message: String,
    stack: Option<String>,
    code: Option<String>,
    hint: Option<String>,
    /// The tool's address, for errors from tool calls.
    address: Option<String>,
}

impl Thrown {
    /// Reads `[name, message, stack, code, hint, address]`.
    fn from_fields(fields: &Array<'_>) -> Option<Thrown> {
        let text = |i: usize| fields.get::<Option<String>>(i).ok().flatten();
        Some(Thrown {
            name: text(0),
            message: text(1)?,
            stack: text(2),
            code: text(3),
            hint: text(4),
            address: text(5),
        })
    }
}

async fn execute(
    request: RunRequest,
    bridge: Arc<dyn Bridge>,
    normalised: Normalised,
    deadline: Instant,
    cancel: CancelToken,
    io: Handle,
    slice: Arc<js_threads::Slice>,
) -> (ExecuteEnvelope, Option<Spent>) {
    let notices = normalised.notices.clone();
    // Bytecode is loaded without copying (QuickJS ROM mode), so it must outlive the runtime:
    // declared first, dropped last.
    let user_bytecode = match compile_module(SCRIPT_NAME, &normalised.module) {
        Ok(bytes) => bytes,
        Err(e) => {
            let (line, column) =
                normalised.user_position(e.line.unwrap_or(2), e.column.unwrap_or(1));
            let error = EnvelopeError {
                code: ErrorCode::SyntaxError,
                message: format!("{} (line {line}, column {column})", e.message),
                hint: Some(format!(
                    "Fix the code at line {line}, column {column}, and run it again."
                )),
                recovery: None,
            };
            return (
                ExecuteEnvelope::rejected(&request.run_id, error, notices),
                None,
            );
        }
    };
    let warm::Ready {
        context,
        runtime,
        meter,
    } = match warm::take().await {
        Ok(ready) => ready,
        Err(message) => return (internal(&request.run_id, message, notices), None),
    };
    // The prelude's memory counts against the run's limit, as if the run had loaded it.
    meter.set_limit(usize::try_from(request.limits.memory_bytes).unwrap_or(usize::MAX));
    let shared = Shared::new();
    runtime
        .set_max_stack_size(usize::try_from(request.limits.stack_bytes).unwrap_or(1 << 20))
        .await;
    {
        let shared = shared.clone();
        let cancel = cancel.clone();
        runtime
            .set_interrupt_handler(Some(Box::new(move || {
                // A long stretch without an await gives the thread's place in the pool away.
                slice.check();
                shared.should_stop() || cancel.is_cancelled() || Instant::now() >= deadline
            })))
            .await;
    }
    {
        let shared = shared.clone();
        runtime
            .set_host_promise_rejection_tracker(Some(Box::new(
                move |_ctx, _promise, reason, handled| {
                    // Described before taking the lock: reading `name` and `message` may run a
                    // script's getter, which may log, which takes the lock too.
                    let text = (!handled).then(|| describe_reason(&reason));
                    let mut state = shared.lock();
                    match text {
                        None => state.unhandled_rejections -= 1,
                        Some(text) => {
                            state.unhandled_rejections += 1;
                            state.last_rejection = Some(text);
                        }
                    }
                },
            )))
            .await;
    }
    let env = HostEnv {
        shared: shared.clone(),
        bridge,
        namespaces: request.namespaces.clone(),
        io,
        max_calls: request.limits.max_calls,
        log_budget: usize::try_from(request.limits.log_bytes).unwrap_or(usize::MAX),
        read_budget: request.result_budget().min(PAGE_MAX_BYTES),
        tool_result_bytes: usize::try_from(request.limits.tool_result_bytes).unwrap_or(usize::MAX),
        meter: meter.clone(),
    };
    let limits = (
        request.result_budget(),
        usize::try_from(request.limits.final_value_bytes).unwrap_or(usize::MAX),
    );
    let js = {
        let request = request.clone();
        let shared = shared.clone();
        let meter = meter.clone();
        let user = user_bytecode.as_slice();
        context.async_with(async move |ctx| {
            drive(ctx, env, &request, user, limits, shared, meter).await
        })
    };
    let outcome = tokio::select! {
        finished = tokio::time::timeout_at(deadline.into(), js) => finished.unwrap_or(Outcome::TimedOut),
        () = cancel.cancelled() => Outcome::Stopped,
    };
    if cancel.is_cancelled() {
        shared.cancel();
    }
    let spent = Spent {
        _context: context,
        _runtime: runtime,
        _user_bytecode: user_bytecode,
    };
    // A call still in flight is cut off now (freeing the runtime drops its future), before the
    // envelope says it was; with none, the heap is freed after the envelope is delivered.
    let in_flight = shared.lock().in_flight;
    let spent = if in_flight == 0 {
        Some(spent)
    } else {
        drop(spent);
        None
    };
    (
        envelope(&request, &normalised, outcome, &shared, &meter, deadline),
        spent,
    )
}

/// What a finished run leaves to free.
struct Spent {
    // Field order matters: the context drops before its runtime, and the script's bytecode,
    // which QuickJS reads in place, after both.
    _context: AsyncContext,
    _runtime: AsyncRuntime,
    _user_bytecode: Vec<u8>,
}

#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename these
async fn drive<'js>(
    ctx: Ctx<'js>,
    env: HostEnv,
    request: &RunRequest,
    user: &[u8],
    limits: (usize, usize),
    shared: Arc<Shared>,
    meter: Arc<MemoryMeter>,
) -> Outcome {
    let helpers = match install(&ctx, &env, request) {
        Ok(helpers) => helpers,
        Err(e) => return Outcome::Engine(format!("the prelude failed to install: {e}")),
    };
    if !helpers.skipped.is_empty() {
        let mut state = shared.lock();
        for ns in &helpers.skipped {
            state.notices.push(format!(
                "source `{ns}` is not reachable in this run: a sandbox global has that name; rename the source"
            ));
        }
    }
    let main = match load_user(&ctx, user).await {
        Ok(main) => main,
        Err(e) => return classify_error(&ctx, &helpers, e, &meter),
    };
    let promise: Promise<'js> = match main.call(()).catch(&ctx) {
        Ok(promise) => promise,
        Err(e) => return caught(&ctx, &helpers, e, &meter),
    };
    let stop = async {
        loop {
            let notified = shared.changed.notified();
            if shared.must_stop() {
                return;
            }
            notified.await;
        }
    };
    let value = tokio::select! {
        value = Settled::new(promise, helpers.when_settled.clone()) => value,
        () = stop => return Outcome::Stopped,
    };
    match value.catch(&ctx) {
        Ok(value) => finish(&ctx, &helpers, value, limits, &meter, &shared),
        Err(e) => caught(&ctx, &helpers, e, &meter),
    }
}

struct Helpers<'js> {
    finish: Function<'js>,
    describe_error: Function<'js>,
    /// `whenSettled(promise, onFulfilled, onRejected)` from the prelude's primordials.
    when_settled: Function<'js>,
    /// Namespaces the prelude did not install because a global already has the name.
    skipped: Vec<String>,
}

fn install<'js>(
    ctx: &Ctx<'js>,
    env: &HostEnv,
    request: &RunRequest,
) -> rquickjs::Result<Helpers<'js>> {
    let install = warm::take_install(ctx).ok_or(rquickjs::Error::Unknown)?;
    let host = host::build(ctx, env, request)?;
    let helpers: Object = install.call((host,))?;
    Ok(Helpers {
        finish: helpers.get("finish")?,
        describe_error: helpers.get("describeError")?,
        when_settled: helpers.get("whenSettled")?,
        skipped: helpers.get("skipped")?,
    })
}

/// Waits for the script's promise. rquickjs's `Promise::into_future` looks up and calls the
/// promise's `then`, which a script can replace (and so run its code inside the host's wait, or
/// fail it); this registers through the prelude's captured `whenSettled` instead, and the outcome
/// is always read from the engine's own promise state.
struct Settled<'js> {
    promise: Promise<'js>,
    when_settled: Function<'js>,
    waker: Option<Arc<Mutex<Waker>>>,
}

impl<'js> Settled<'js> {
    fn new(promise: Promise<'js>, when_settled: Function<'js>) -> Self {
        Settled {
            promise,
            when_settled,
            waker: None,
        }
    }
}

impl<'js> Future for Settled<'js> {
    type Output = rquickjs::Result<Value<'js>>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(result) = this.promise.result() {
            return Poll::Ready(result);
        }
        let ctx = this.promise.ctx().clone();
        // An interrupt inside a job (deadline, a fatal limit) ends the wait; other pending
        // exceptions belong to jobs whose promises carry them.
        if ctx.has_exception() {
            let exception = ctx.catch();
            if exception.is_uncatchable_error() {
                return Poll::Ready(Err(ctx.throw(exception)));
            }
        }
        if let Some(waker) = &this.waker {
            waker
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .clone_from(cx.waker());
            return Poll::Pending;
        }
        let waker = Arc::new(Mutex::new(cx.waker().clone()));
        let inner = waker.clone();
        let wake = match Function::new(ctx.clone(), move || {
            inner
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .wake_by_ref();
        }) {
            Ok(wake) => wake,
            Err(e) => return Poll::Ready(Err(e)),
        };
        if let Err(e) = this
            .when_settled
            .call::<_, ()>((this.promise.clone(), wake.clone(), wake))
        {
            return Poll::Ready(Err(e));
        }
        this.waker = Some(waker);
        Poll::Pending
    }
}

async fn load_user<'js>(ctx: &Ctx<'js>, user: &[u8]) -> rquickjs::Result<Function<'js>> {
    // SAFETY: the bytes were produced by `compile_module` in this process.
    let module = unsafe { Module::load(ctx.clone(), user) }?;
    let (module, evaluated) = module.eval()?;
    evaluated.into_future::<()>().await?;
    module.get("default")
}

/// Turns the script's value into the run's outcome: JSON within the output budget is the result,
/// JSON within the final-value cap goes to the hub to store, anything larger is refused.
fn finish<'js>(
    ctx: &Ctx<'js>,
    helpers: &Helpers<'js>,
    value: Value<'js>,
    limits: (usize, usize),
    meter: &MemoryMeter,
    shared: &Shared,
) -> Outcome {
    let (budget, final_cap) = limits;
    // A cap under the budget would refuse what the budget lets through.
    let cap = final_cap.max(budget);
    let prefix_units = budget / 2;
    let list: Result<Array, _> = helpers
        .finish
        .call((value, cap as f64, prefix_units as f64))
        .catch(ctx);
    let list = match list {
        Ok(list) => list,
        // What the script's getters or toJSON threw, an interrupt inside them, out of memory:
        // classified like anything else the script ends with.
        Err(e) => return caught(ctx, helpers, e, meter),
    };
    // Only the prelude's refusal says the value is not JSON (what, and where).
    if let Ok(Some(refusal)) = list.get::<Option<String>>(4) {
        return Outcome::NotJson(refusal);
    }
    shared.lock().result_notice = list
        .get::<Vec<u32>>(3)
        .ok()
        .and_then(|counts| converted_notice(&counts));
    let units: f64 = list.get(0).unwrap_or(f64::INFINITY);
    let mut text: String = list.get(1).unwrap_or_default();
    let whole: bool = list.get(2).unwrap_or(false);
    let size = if whole {
        let bytes = text.len();
        if bytes <= budget {
            return Outcome::Returned(text);
        }
        if bytes <= cap {
            return Outcome::Oversized(text);
        }
        JsonSize::Exact(bytes)
    } else {
        // Each UTF-16 unit is at least one byte of UTF-8.
        JsonSize::AtLeast(if units.is_finite() {
            units as usize
        } else {
            cap + 1
        })
    };
    let mut cut = prefix_units.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    Outcome::TooLarge { size, prefix: text }
}

/// Says what became of the Maps, Sets and Errors in a result (`counts`, in that order), which
/// JSON has no form for; `None` when it held none.
fn converted_notice(counts: &[u32]) -> Option<String> {
    let forms = [
        (
            "Map",
            "Maps",
            "an object of its entries ([key, value] pairs where a key is not a string or number, or two keys read the same)",
        ),
        ("Set", "Sets", "an array"),
        ("Error", "Errors", "{ name, message } with its own fields"),
    ];
    let parts: Vec<String> = counts
        .iter()
        .zip(forms)
        .filter(|(n, _)| **n > 0)
        .map(|(n, (one, many, form))| match n {
            1 => format!("its {one} became {form}"),
            n => format!("its {n} {many} each became {form}"),
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "JSON has no Map, Set or Error, so the result was converted: {}.",
            parts.join("; ")
        )
    })
}

/// Reads `key` of a thrown object without the prelude. A script's getter may run; an exception
/// it throws is dropped, so that nothing later takes it for the run's own.
fn read_field<'js, T: FromJs<'js>>(object: &Object<'js>, key: &str) -> Option<T> {
    let ctx = object.ctx();
    let clean = !ctx.has_exception();
    let value = object.get::<_, T>(key).ok();
    if clean && ctx.has_exception() {
        ctx.catch();
    }
    value
}

fn classify_error<'js>(
    ctx: &Ctx<'js>,
    helpers: &Helpers<'js>,
    error: rquickjs::Error,
    meter: &MemoryMeter,
) -> Outcome {
    match error {
        rquickjs::Error::Exception => {
            caught(ctx, helpers, CaughtError::from_error(ctx, error), meter)
        }
        other => Outcome::Engine(other.to_string()),
    }
}

/// Describes a thrown value through the prelude, unless the run is being torn down (then any
/// JavaScript would be interrupted again).
fn caught<'js>(
    ctx: &Ctx<'js>,
    helpers: &Helpers<'js>,
    error: CaughtError<'js>,
    meter: &MemoryMeter,
) -> Outcome {
    if meter.hit_limit() {
        meter.raise_limit(HOST_HEADROOM);
    }
    let value = match error {
        CaughtError::Exception(e) => e.into_value(),
        CaughtError::Value(v) => v,
        CaughtError::Error(e) => return Outcome::Engine(e.to_string()),
    };
    let plain = describe_reason(&value);
    let described: Result<Array, _> = helpers.describe_error.call((value,)).catch(ctx);
    match described
        .ok()
        .and_then(|fields| Thrown::from_fields(&fields))
    {
        Some(thrown) => Outcome::Threw(thrown),
        None => Outcome::Aborted(plain),
    }
}

/// A short text for a thrown value, without the prelude (see [`read_field`]).
fn describe_reason(value: &Value<'_>) -> String {
    if let Some(exception) = value.as_exception() {
        let object = exception.as_object();
        let name: Option<String> = read_field(object, "name");
        let message = read_field::<Option<Coerced<String>>>(object, "message")
            .flatten()
            .map(|m| m.0)
            .unwrap_or_default();
        return match name {
            Some(name) if !name.is_empty() => format!("{name}: {message}"),
            _ => message,
        };
    }
    if let Some(text) = value.as_string().and_then(|s| s.to_string().ok()) {
        return text;
    }
    if value.is_null() {
        return "null".into();
    }
    format!("a thrown {}", value.type_name())
}

fn internal(run_id: &str, message: String, notices: Vec<String>) -> ExecuteEnvelope {
    ExecuteEnvelope::rejected(
        run_id,
        EnvelopeError::new(ErrorCode::Internal, message),
        notices,
    )
}

/// Waits, at most `bound`, until finished runs have freed their runtimes (and with them the
/// host functions that hold the state store). For a process about to exit.
pub async fn settle(bound: std::time::Duration) {
    js_threads::settled(bound).await;
}
