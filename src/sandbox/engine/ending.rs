//! How a run ends, as its envelope: the value returned (within the output budget, stored, or
//! too large), what was thrown (with the line in the script and, for a stack overflow or the
//! memory limit, what to do), or a limit that stopped it; with the calls it made, its notices
//! and what waits for a person.

use std::time::Instant;

use serde::de::IgnoredAny;

use super::{Outcome, Thrown};
use crate::sandbox::alloc::MemoryMeter;
use crate::sandbox::compile::{SCRIPT_NAME, position_in_stack};
use crate::sandbox::envelope::{EnvelopeError, ExecuteEnvelope, PendingKind, Status, Truncated};
use crate::sandbox::error::{ErrorCode, not_json};
use crate::sandbox::measure::{describe, thousands};
use crate::sandbox::normalise::Normalised;
use crate::sandbox::request::RunRequest;
use crate::sandbox::state::Shared;

pub(super) fn envelope(
    request: &RunRequest,
    normalised: &Normalised,
    outcome: Outcome,
    shared: &Shared,
    meter: &MemoryMeter,
    deadline: Instant,
) -> ExecuteEnvelope {
    let mut state = shared.lock();
    let mut notices = normalised.notices.clone();
    notices.append(&mut state.notices);
    let mut out = ExecuteEnvelope::new(&request.run_id, Status::Failed, notices);
    // Every ending lists every call, those still in flight too (as `unknown`).
    out.calls = state.calls.iter().map(|call| call.summary()).collect();
    out.logs = std::mem::take(&mut state.logs);
    out.truncated = Truncated {
        result: false,
        logs: state.logs_truncated,
    };
    let fail = |code: ErrorCode, message: String| Some(EnvelopeError::new(code, message));
    let timed_out = Instant::now() >= deadline;
    let in_flight = state.in_flight;
    let timeout_message = || {
        let limit = request.timeout().as_secs_f64();
        match in_flight {
            0 => format!("the run exceeded its {limit} s time limit"),
            // A call cut off mid-flight may still have taken effect upstream (spec 004).
            n => format!(
                "the run exceeded its {limit} s time limit with {n} tool call(s) still running; they may have taken effect"
            ),
        }
    };

    // Host-side reasons first: they explain whatever the script saw afterwards.
    if state.cancelled {
        out.status = Status::Cancelled;
        out.error = fail(ErrorCode::Cancelled, "the run was cancelled".into());
        return out;
    }
    if let Some(fatal) = state.fatal.clone() {
        out.status = Status::Failed;
        out.error = Some(fatal);
        return out;
    }
    // A call waiting for a person wins even if the script went on without awaiting it: the
    // script did not run as written.
    if !state.pending.is_empty() {
        out.pending = std::mem::take(&mut state.pending);
        let approval = out.pending.iter().any(|p| p.kind == PendingKind::Approval);
        out.status = if approval {
            Status::AwaitingApproval
        } else {
            Status::AwaitingConnection
        };
        return out;
    }
    out.status = Status::Failed;
    out.error = match outcome {
        // Past the deadline, the time limit is why the run ended, whatever else it says: a
        // getter the host read (a rejection's `name`) may have swallowed the interrupt.
        Outcome::Returned(_) | Outcome::Oversized(_)
            if timed_out && state.unhandled_rejections > 0 =>
        {
            fail(ErrorCode::Timeout, timeout_message())
        }
        Outcome::Returned(_) | Outcome::Oversized(_) if state.unhandled_rejections > 0 => {
            let reason = state.last_rejection.clone().unwrap_or_default();
            Some(EnvelopeError {
                code: ErrorCode::RuntimeError,
                message: format!("Unhandled promise rejection: {reason}"),
                hint: Some(
                    "Await every promise (or attach .catch): a call that was not awaited failed."
                        .into(),
                ),
                recovery: None,
            })
        }
        // The hub stores it and sends what it has room for.
        Outcome::Oversized(json) => match serde_json::from_str::<IgnoredAny>(&json) {
            Ok(_) => {
                out.status = Status::Completed;
                out.oversized = Some(json);
                out.notices.extend(state.result_notice.take());
                None
            }
            Err(e) => fail(ErrorCode::InvalidResult, not_json(&e)),
        },
        Outcome::Returned(json) => match serde_json::from_str(&json) {
            Ok(value) => {
                out.status = Status::Completed;
                out.result = Some(value);
                out.notices.extend(state.result_notice.take());
                None
            }
            Err(e) => fail(ErrorCode::InvalidResult, not_json(&e)),
        },
        Outcome::TooLarge { size, prefix } => {
            out.truncated.result = true;
            out.result = Some(serde_json::Value::String(prefix));
            let budget = request.result_budget();
            let cap = usize::try_from(request.limits.final_value_bytes)
                .unwrap_or(usize::MAX)
                .max(budget);
            fail(
                ErrorCode::ResultTooLarge,
                format!(
                    "the result is {} bytes of JSON; at most {} bytes can be kept ({} are sent directly, more is stored for hub.read); result holds the start of it",
                    describe(size),
                    thousands(cap),
                    thousands(budget)
                ),
            )
        }
        Outcome::NotJson(message) => fail(
            ErrorCode::InvalidResult,
            format!("the result cannot be turned into JSON: {message}"),
        ),
        Outcome::TimedOut => fail(ErrorCode::Timeout, timeout_message()),
        Outcome::Stopped => fail(
            ErrorCode::Internal,
            "the run stopped without a reason".into(),
        ),
        Outcome::Engine(message) if meter.hit_limit() => fail(
            ErrorCode::MemoryLimit,
            memory_message(request, meter, &message),
        ),
        Outcome::Engine(message) => fail(ErrorCode::Internal, message),
        // The engine throws `null` when it cannot even make the error; a value the script
        // throws after catching an earlier out-of-memory is still the script's.
        Outcome::Aborted(message)
        | Outcome::Threw(Thrown {
            message,
            name: None,
            ..
        }) if meter.hit_limit() && (message.is_empty() || message == "null") => fail(
            ErrorCode::MemoryLimit,
            memory_message(request, meter, &message),
        ),
        Outcome::Aborted(message) => {
            if timed_out || message == format!("InternalError: {INTERRUPTED}") {
                fail(ErrorCode::Timeout, timeout_message())
            } else if message == format!("{}: {}", STACK_OVERFLOW.0, STACK_OVERFLOW.1) {
                fail(
                    ErrorCode::StackOverflow,
                    format!(
                        "{message} (the stack limit is {} bytes)",
                        request.limits.stack_bytes
                    ),
                )
            } else {
                fail(ErrorCode::RuntimeError, format!("Uncaught {message}"))
            }
        }
        Outcome::Threw(thrown) => Some(thrown_error(request, normalised, thrown, meter, timed_out)),
    };
    out
}

pub(super) fn memory_message(request: &RunRequest, meter: &MemoryMeter, message: &str) -> String {
    if meter.hit_budget_of_all_runs() {
        return format!(
            "the script ran out of memory: the hub's memory for scripts ({} MiB for all runs at once) is in use by other runs; run it again once they are done",
            meter.budget_of_all_runs() >> 20
        );
    }
    let limit = request.limits.memory_bytes >> 20;
    if message.is_empty() || message == "null" {
        format!("the script ran out of memory (the limit is {limit} MiB)")
    } else {
        format!("{message} (the memory limit is {limit} MiB)")
    }
}

/// The engine's own error when the stack runs out (quickjs-ng's `js_throw_stack_overflow`). Only
/// that is a stack overflow: a script's error that merely mentions one is the script's error.
const STACK_OVERFLOW: (&str, &str) = ("RangeError", "Maximum call stack size exceeded");

/// The engine's message when the interrupt handler stops a run (an `InternalError`).
const INTERRUPTED: &str = "interrupted";

pub(super) fn thrown_error(
    request: &RunRequest,
    normalised: &Normalised,
    thrown: Thrown,
    meter: &MemoryMeter,
    timed_out: bool,
) -> EnvelopeError {
    let name = thrown.name.clone().unwrap_or_default();
    let position = thrown
        .stack
        .as_deref()
        .and_then(|stack| position_in_stack(stack, SCRIPT_NAME))
        .map(|(line, column)| normalised.user_position(line, column.unwrap_or(1)));
    let at = position
        .map(|(line, column)| format!(" (line {line}, column {column})"))
        .unwrap_or_default();
    let message = match &thrown.address {
        // Errors raised before the call already name the tool.
        Some(address) if !thrown.message.starts_with(address.as_str()) => {
            format!("{address}: {}", thrown.message)
        }
        _ => thrown.message.clone(),
    };
    let text = if name.is_empty() {
        message
    } else {
        format!("{name}: {message}")
    };
    if let Some(code) = thrown.code.as_deref().and_then(ErrorCode::parse) {
        return EnvelopeError {
            code,
            message: format!("{text}{at}"),
            hint: thrown
                .hint
                .clone()
                .or_else(|| Some(code.hint().to_string())),
            recovery: None,
        };
    }
    if timed_out && thrown.message == INTERRUPTED {
        return EnvelopeError::new(
            ErrorCode::Timeout,
            format!(
                "the run exceeded its {} s time limit",
                request.timeout().as_secs_f64()
            ),
        );
    }
    if (name.as_str(), thrown.message.as_str()) == STACK_OVERFLOW {
        return EnvelopeError::new(
            ErrorCode::StackOverflow,
            format!(
                "{text}{at} (the stack limit is {} bytes)",
                request.limits.stack_bytes
            ),
        );
    }
    if meter.hit_limit() && (name == "InternalError" || thrown.message.contains("out of memory")) {
        return EnvelopeError::new(
            ErrorCode::MemoryLimit,
            memory_message(request, meter, &text),
        );
    }
    EnvelopeError::new(ErrorCode::RuntimeError, format!("Uncaught {text}{at}"))
}
