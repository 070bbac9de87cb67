//! What a resumed run already knows: the journal of calls earlier attempts made, the decisions
//! people made on its pending calls, and the tools allowed for the rest of the run. A resumed
//! script re-runs from the start with the same seed and clock; calls already answered in the
//! journal answer from it (so a write never runs twice), a write an interrupted attempt sent
//! without an answer is never sent again, and a script that no longer matches its journal
//! stops rather than guessing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde_json::Value;

use crate::runs::{Approval, CallState, Decision, Grant, JournalEntry, Store, StoreError};
use crate::sandbox::{BridgeError, CallFailure, CallOutcome, ErrorCode};

use super::recovery;

#[derive(Default)]
pub struct Replay {
    journal: BTreeMap<u64, JournalEntry>,
    approvals: BTreeMap<u64, Approval>,
    /// Tools a person allowed for the rest of the run (with the version of the definition they
    /// saw), once the call they were allowed on went out; grows when this attempt sends such a
    /// call.
    grants: Mutex<BTreeSet<Grant>>,
    /// Set at the first call that does not match the journal, or that an interrupted attempt
    /// left without an answer; every later call is refused.
    stop: Mutex<Option<Stop>>,
    /// The steps this attempt has reached that the journal holds.
    replayed: Mutex<BTreeSet<u64>>,
}

/// Why a resumed run stopped sending calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A call differs from the journal at the same step.
    Diverged(String),
    /// A call that may write, or that a person allowed to go once, was sent by an earlier
    /// attempt that stopped before its answer.
    Interrupted {
        seq: u64,
        address: String,
        /// Sent on a person's decision on this very call (else: not marked read-only).
        decided: bool,
    },
}

impl Stop {
    pub fn code(&self) -> ErrorCode {
        match self {
            Stop::Diverged(_) => ErrorCode::ReplayDivergence,
            Stop::Interrupted { .. } => ErrorCode::Interrupted,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Stop::Diverged(what) => what.clone(),
            Stop::Interrupted {
                seq,
                address,
                decided,
            } => {
                let why = if *decided {
                    "the person's approval was for one send, and it went"
                } else {
                    "it may have taken effect"
                };
                format!(
                    "the run was interrupted while call {seq} to `{address}` was in flight, and no answer was recorded: {why}, so it was not sent again"
                )
            }
        }
    }
}

/// What the person decided about the call at a step, as far as this call is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nobody was asked about this step.
    NotAsked,
    /// This very call (tool and arguments) waits for a decision.
    Waiting,
    /// This very call was decided.
    Decided(Decision),
    /// Another call (other arguments, or another tool) was asked about at this step: its
    /// decision does not carry over.
    Changed,
}

impl Replay {
    /// Everything the store holds about `run_id`.
    pub async fn load(store: &Store, run_id: &str) -> Result<Replay, StoreError> {
        Ok(Replay {
            journal: store
                .journal()
                .entries(run_id)
                .await?
                .into_iter()
                .map(|e| (e.seq, e))
                .collect(),
            approvals: store
                .approvals()
                .of_run(run_id)
                .await?
                .into_iter()
                .map(|a| (a.seq, a))
                .collect(),
            grants: Mutex::new(store.approvals().grants(run_id).await?),
            stop: Mutex::new(None),
            replayed: Mutex::default(),
        })
    }

    /// The refusal of every call once the run stopped sending calls: checked when a call
    /// reaches the journal, and again just before one goes out, since another call may have
    /// found the run diverged meanwhile.
    pub fn halted(&self) -> Option<CallOutcome> {
        self.stopped().map(|stop| {
            refused(
                stop.code(),
                format!("the run stopped sending calls: {}", stop.message()),
            )
        })
    }

    /// The journaled answer to call `seq`, if an earlier attempt got one; `None` when the call
    /// is to be sent (it never was, or it is a read whose answer was lost and that no person
    /// decided on). A call that differs from the journal marks the run diverged, and a call
    /// sent without an answer that must not go twice marks it interrupted; either way it is
    /// refused.
    pub fn answer(&self, seq: u64, address: &str, call_digest: &str) -> Option<CallOutcome> {
        if let Some(halted) = self.halted() {
            return Some(halted);
        }
        let Some(entry) = self.journal.get(&seq) else {
            return self.reordered(seq, address, call_digest);
        };
        if entry.address != address || entry.call_digest != call_digest {
            let what = if entry.address != address {
                format!(
                    "call {seq} was `{}` when the run paused, and is `{address}` now",
                    entry.address
                )
            } else {
                format!("call {seq} to `{address}` has other arguments than when the run paused")
            };
            return Some(self.stop_with(Stop::Diverged(what)));
        }
        self.replayed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(seq);
        if entry.state == CallState::Dispatched {
            // A read nobody decided on may go again (`None`).
            return self.unrepeatable(entry).map(|stop| self.stop_with(stop));
        }
        let result = match entry.result.get("error") {
            Some(error) if !entry.ok && entry.result.get("content").is_none() => {
                let code = error
                    .get("code")
                    .and_then(Value::as_str)
                    .and_then(ErrorCode::parse)
                    .unwrap_or(ErrorCode::UpstreamError);
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the call failed")
                    .to_string();
                let mut failure = CallFailure::new(code, message);
                let (delivery, mutating) = recovery::noted(entry);
                recovery::settle(&mut failure, delivery, mutating);
                Err(BridgeError::Failed(failure))
            }
            _ => Ok(recovery::unmarked(&entry.result)),
        };
        Some(CallOutcome {
            result,
            ms: Some(entry.ms),
        })
    }

    /// A call at a step the journal holds nothing for, that the journal holds at a later step
    /// this attempt has not reached: the script made its calls in another order than when it
    /// paused (journaled calls answer at once, while timers wait as long as before), so this
    /// one already went out, and sending it here would send it twice. Unless this very call
    /// was asked about at this step (a person's decision is kept per step), the run stops.
    fn reordered(&self, seq: u64, address: &str, call_digest: &str) -> Option<CallOutcome> {
        let asked_here = self
            .approvals
            .get(&seq)
            .is_some_and(|a| a.address == address && a.call_digest == call_digest);
        if asked_here {
            return None;
        }
        let replayed = self.replayed.lock().unwrap_or_else(|p| p.into_inner());
        let made = self.journal.values().find(|e| {
            e.seq != seq
                && e.address == address
                && e.call_digest == call_digest
                && !replayed.contains(&e.seq)
        })?;
        let what = format!(
            "call {seq} to `{address}` is the call {} was when the run paused: the script made its calls in another order this time (a timer racing the calls answered from the journal), so it was not sent again",
            made.seq
        );
        drop(replayed);
        Some(self.stop_with(Stop::Diverged(what)))
    }

    fn stop_with(&self, stop: Stop) -> CallOutcome {
        let outcome = refused(stop.code(), stop.message());
        self.stop
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(stop);
        outcome
    }

    /// What was decided about call `seq`, for exactly this tool and these arguments.
    pub fn verdict(
        &self,
        seq: u64,
        address: &str,
        call_digest: &str,
        tool_version: &str,
    ) -> Verdict {
        match self.approvals.get(&seq) {
            None => Verdict::NotAsked,
            Some(a) if a.address != address || a.call_digest != call_digest => Verdict::Changed,
            // A "no" stands whatever the tool became.
            Some(a) if a.decision == Some(Decision::Deny) => Verdict::Decided(Decision::Deny),
            // A "yes" was given on the tool as it was defined then: after a change (a POST
            // turned DELETE, another upstream tool behind the address) the person decides
            // again.
            Some(a) if a.tool_version.as_deref().is_some_and(|v| v != tool_version) => {
                Verdict::Changed
            }
            Some(a) => a.decision.map_or(Verdict::Waiting, Verdict::Decided),
        }
    }

    /// The first call an interrupted attempt sent without an answer that must not go twice,
    /// if there is one. Such a run is not run again at all: whether the script would even
    /// reach that call again is not known, and the call may have acted.
    pub fn unanswered_unrepeatable(&self) -> Option<Stop> {
        self.journal
            .values()
            .filter(|e| e.state == CallState::Dispatched)
            .find_map(|e| self.unrepeatable(e))
    }

    /// Why the unanswered call `entry` must not be sent again: a write may have acted, and a
    /// person's approval of a call is for one send, whatever the upstream says the tool does
    /// (they chose to be asked even about a read: a costly, rate-limited or sensitive one).
    fn unrepeatable(&self, entry: &JournalEntry) -> Option<Stop> {
        let decided = self
            .approvals
            .get(&entry.seq)
            .is_some_and(|a| a.decision.is_some());
        (entry.mutating || decided).then(|| Stop::Interrupted {
            seq: entry.seq,
            address: entry.address.clone(),
            decided: decided && !entry.mutating,
        })
    }

    /// The calls earlier attempts of the run journaled, in call order.
    pub fn journal(&self) -> impl Iterator<Item = &JournalEntry> {
        self.journal.values()
    }

    /// True when a person allowed `address` on `connection`, defined as `tool_version`, for
    /// the rest of this run: a grant does not pass to another connection (another account)
    /// nor to what the tool became since.
    pub fn granted(&self, address: &str, connection: Option<&str>, tool_version: &str) -> bool {
        let grants = self.grants.lock().unwrap_or_else(|p| p.into_inner());
        let granted = |version: Option<&str>| {
            grants.contains(&(
                address.to_string(),
                connection.map(str::to_string),
                version.map(str::to_string),
            ))
        };
        granted(Some(tool_version)) || granted(None)
    }

    /// `address` on `connection`, defined as `tool_version`, was allowed for the rest of the
    /// run, and the call it was allowed on went out.
    pub fn grant(&self, address: &str, connection: Option<&str>, tool_version: &str) {
        self.grants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((
                address.to_string(),
                connection.map(str::to_string),
                Some(tool_version.to_string()),
            ));
    }

    /// Why the run stopped sending calls, if it did.
    pub fn stopped(&self) -> Option<Stop> {
        self.stop.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn refused(code: ErrorCode, message: String) -> CallOutcome {
    let mut failure = CallFailure::new(code, message);
    failure.hint = Some(match code {
        ErrorCode::Interrupted => code.hint().to_string(),
        _ => "The script changed since the run paused; run it again as a new execute instead of resuming.".into(),
    });
    CallOutcome {
        result: Err(BridgeError::Failed(failure)),
        ms: Some(0),
    }
}
