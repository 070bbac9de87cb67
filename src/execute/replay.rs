//! What a resumed run already knows: the journal of calls that ran before it paused, the
//! decisions people made on its pending calls, and the tools allowed for the rest of the run.
//! A resumed script re-runs from the start with the same seed and clock; calls already in the
//! journal answer from it (so a write never runs twice), and a script that no longer matches
//! its journal stops rather than guessing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde_json::Value;

use crate::runs::{Approval, Decision, JournalEntry, RunsStore, StoreError};
use crate::sandbox::{BridgeError, CallFailure, CallOutcome, ErrorCode};

use super::recovery;

#[derive(Default)]
pub struct Replay {
    journal: BTreeMap<u64, JournalEntry>,
    approvals: BTreeMap<u64, Approval>,
    grants: BTreeSet<String>,
    /// Set at the first call that does not match the journal; every later call is refused.
    divergence: Mutex<Option<String>>,
}

impl Replay {
    /// Everything the store holds about `run_id`.
    pub fn load(store: &RunsStore, run_id: &str) -> Result<Replay, StoreError> {
        Ok(Replay {
            journal: store
                .journal(run_id)?
                .into_iter()
                .map(|e| (e.seq, e))
                .collect(),
            approvals: store
                .approvals(run_id)?
                .into_iter()
                .map(|a| (a.seq, a))
                .collect(),
            grants: store.run_grants(run_id)?,
            divergence: Mutex::new(None),
        })
    }

    /// The journaled answer to call `seq`, if it ran before. A call that differs from the
    /// journal (another tool or other arguments at the same step) marks the run diverged.
    pub fn answer(&self, seq: u64, address: &str, args_digest: &str) -> Option<CallOutcome> {
        if let Some(first) = self.divergence() {
            return Some(refused(format!(
                "the run already diverged from its journal: {first}"
            )));
        }
        let entry = self.journal.get(&seq)?;
        if entry.address != address || entry.args_digest != args_digest {
            let what = if entry.address != address {
                format!(
                    "call {seq} was `{}` when the run paused, and is `{address}` now",
                    entry.address
                )
            } else {
                format!("call {seq} to `{address}` has other arguments than when the run paused")
            };
            *self.divergence.lock().unwrap_or_else(|p| p.into_inner()) = Some(what.clone());
            return Some(refused(what));
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
                Err(BridgeError::Failed(CallFailure::new(code, message)))
            }
            _ => Ok(recovery::unmarked(&entry.result)),
        };
        Some(CallOutcome {
            result,
            ms: Some(entry.ms),
        })
    }

    /// The decision a person made on call `seq`, if it is the same tool that asked.
    pub fn decision(&self, seq: u64, address: &str) -> Option<Decision> {
        self.approvals
            .get(&seq)
            .filter(|a| a.address == address)
            .and_then(|a| a.decision)
    }

    /// The calls earlier attempts of the run journaled, in call order.
    pub fn journal(&self) -> impl Iterator<Item = &JournalEntry> {
        self.journal.values()
    }

    /// True when a person allowed `address` for the rest of this run.
    pub fn granted(&self, address: &str) -> bool {
        self.grants.contains(address)
    }

    /// Why the run stopped matching its journal, if it did.
    pub fn divergence(&self) -> Option<String> {
        self.divergence
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn refused(message: String) -> CallOutcome {
    let mut failure = CallFailure::new(ErrorCode::ReplayDivergence, message);
    failure.hint = Some("The script changed since the run paused; run it again as a new execute instead of resuming.".into());
    CallOutcome {
        result: Err(BridgeError::Failed(failure)),
        ms: Some(0),
    }
}
