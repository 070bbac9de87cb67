//! What one run records while it runs, shared between the host functions, the interrupt handler
//! and the engine: calls, logs, pending calls, the fatal error (limits) and the timer wake-up slot.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::{Notify, oneshot};

use super::envelope::{CallEnd, CallSummary, EnvelopeError, Pending};
use super::error::ErrorCode;

/// Shared by everything that takes part in one run.
#[derive(Debug, Default)]
pub struct Shared {
    state: Mutex<RunState>,
    /// Checked by the interrupt handler: set on a fatal error or a cancel, it stops running JS.
    stop: AtomicBool,
    /// Woken whenever the engine may have to stop (fatal error, cancel, a call suspended).
    pub changed: Notify,
}

/// One call the run started, as the envelope will list it.
#[derive(Debug)]
pub struct CallRecord {
    /// Until the call ends: `ok: false`, outcome `unknown` (sent) or `not_sent` (refused).
    pub summary: CallSummary,
    /// When it was sent, while it is in flight: a call the run ends without an answer to is
    /// listed with the time it had been in flight.
    pub in_flight_since: Option<Instant>,
}

impl CallRecord {
    /// Call `seq`, handed to the bridge just now.
    pub fn sent(address: String, seq: u64) -> Self {
        CallRecord {
            summary: CallSummary {
                address,
                ok: false,
                ms: 0,
                outcome: Some(CallEnd::Unknown),
                seq: Some(seq),
            },
            in_flight_since: Some(Instant::now()),
        }
    }

    /// A call the sandbox refused because of the run (its call limit, its ending).
    pub fn refused(address: String) -> Self {
        CallRecord {
            summary: CallSummary {
                address,
                ok: false,
                ms: 0,
                outcome: Some(CallEnd::NotSent),
                seq: None,
            },
            in_flight_since: None,
        }
    }

    /// Records how the call ended.
    pub fn end(&mut self, ok: bool, ms: u64, outcome: CallEnd) {
        self.summary.ok = ok;
        self.summary.ms = ms;
        self.summary.outcome = Some(outcome);
        self.in_flight_since = None;
    }

    /// The call as the envelope lists it now.
    pub fn summary(&self) -> CallSummary {
        let mut summary = self.summary.clone();
        if let Some(since) = self.in_flight_since {
            summary.ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
        }
        summary
    }
}

#[derive(Debug, Default)]
pub struct RunState {
    /// Every call the script started, in issue order: those handed to the bridge and those
    /// refused because the limit was reached or the run was ending. A call in flight finds its
    /// record by index.
    pub calls: Vec<CallRecord>,
    /// How many calls went to the bridge: the next call's sequence number.
    pub sent: u64,
    pub in_flight: usize,
    pub pending: Vec<Pending>,
    pub fatal: Option<EnvelopeError>,
    pub cancelled: bool,
    pub logs: Vec<String>,
    pub log_bytes: usize,
    pub logs_truncated: bool,
    /// Rejections nobody handled (yet), and the latest one's text.
    pub unhandled_rejections: i64,
    pub last_rejection: Option<String>,
    /// Notices found while running (a namespace the prelude could not install).
    pub notices: Vec<String>,
    /// What became of the result's Maps, Sets and Errors, for an envelope that carries it.
    pub result_notice: Option<String>,
    /// The one timer wake-up in flight; replacing it resolves the old one with `false`.
    pub wake: Option<oneshot::Sender<()>>,
}

impl Shared {
    pub fn new() -> Arc<Self> {
        Arc::new(Shared::default())
    }

    /// The state; a poisoned lock only means a host function panicked, and the data is still
    /// consistent enough to report.
    pub fn lock(&self) -> MutexGuard<'_, RunState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Ends the run with `error` (the first fatal error wins).
    pub fn fail(&self, code: ErrorCode, message: impl Into<String>) {
        let mut state = self.lock();
        if state.fatal.is_none() {
            state.fatal = Some(EnvelopeError::new(code, message));
        }
        drop(state);
        self.stop.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    pub fn cancel(&self) {
        self.lock().cancelled = true;
        self.stop.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    /// True when the run must stop now: a fatal error, a cancel, or suspended calls with nothing
    /// else in flight.
    pub fn must_stop(&self) -> bool {
        let state = self.lock();
        state.fatal.is_some()
            || state.cancelled
            || (!state.pending.is_empty() && state.in_flight == 0)
    }

    /// Appends one console line within `budget` bytes; false once the budget is spent.
    pub fn log(&self, line: String, budget: usize) -> bool {
        let mut state = self.lock();
        if state.logs_truncated {
            return false;
        }
        let left = budget.saturating_sub(state.log_bytes);
        if line.len() <= left {
            state.log_bytes += line.len();
            state.logs.push(line);
            return true;
        }
        let mut cut = left;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            state.logs.push(format!("{}…", &line[..cut]));
        }
        state.log_bytes = budget;
        state.logs_truncated = true;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_stop_at_the_budget_on_a_char_boundary() {
        let shared = Shared::new();
        assert!(shared.log("hello".into(), 8));
        assert!(!shared.log("ééé".into(), 8));
        let state = shared.lock();
        assert_eq!(state.logs, vec!["hello".to_string(), "é…".to_string()]);
        assert!(state.logs_truncated);
    }

    #[test]
    fn first_fatal_error_wins() {
        let shared = Shared::new();
        shared.fail(ErrorCode::CallLimit, "a");
        shared.fail(ErrorCode::TimerLimit, "b");
        assert!(shared.should_stop());
        assert_eq!(
            shared.lock().fatal.as_ref().map(|e| e.code),
            Some(ErrorCode::CallLimit)
        );
    }
}
