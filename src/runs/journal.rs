//! The journal of a run's tool calls. A call is journaled as *dispatched* before its request
//! leaves the process and as *answered* when its result comes back, so a crash in between
//! leaves a record that the call may have acted, and a resumed run never sends it again.
//!
//! Journaling a dispatch is the last gate before the upstream, in one write transaction: the
//! run must still be claimed by the caller (an owner that lost its claim sends nothing), the
//! approval that allows the call (if one does) must be for exactly these arguments and unused
//! — it is used up here — and the call must not be journaled already.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::seal::OpenError;
use super::store::{RunsStore, StoreError, now_ms, stored_bytes};

/// How far a journaled call got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Its request may have left; no answer was recorded (yet).
    Dispatched,
    /// Its answer (a result, or the error that stopped it) is recorded.
    Answered,
}

impl CallState {
    fn as_str(self) -> &'static str {
        match self {
            CallState::Dispatched => "dispatched",
            CallState::Answered => "answered",
        }
    }
}

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    /// SHA-256 of the canonical arguments, to notice a replay that diverges.
    pub call_digest: String,
    /// The raw `CallToolResult`, or `{"error": {...}}` when the call failed; `null` while only
    /// dispatched.
    pub result: Value,
    pub ok: bool,
    pub ms: u64,
    pub state: CallState,
    /// Whether the tool may write (not marked read-only); a journal of an older version does not
    /// say, and counts as a write.
    pub mutating: bool,
}

/// A call about to leave: what the journal records before it is sent.
#[derive(Debug, Clone)]
pub struct Dispatch<'a> {
    pub seq: u64,
    pub address: &'a str,
    pub connection: Option<&'a str>,
    pub call_digest: &'a str,
    pub mutating: bool,
    /// The call runs on a person's decision, recorded for this call: that approval is used up.
    pub uses_approval: bool,
}

/// Why a call was not journaled, and so must not be sent.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(
        "run `{run_id}` is being run by another process now, so this attempt sends nothing more"
    )]
    NotOwner { run_id: String },
    #[error(
        "call {seq} of run `{run_id}` has no unused approval for these arguments, so it was not sent"
    )]
    NotApproved { run_id: String, seq: u64 },
    #[error("call {seq} of run `{run_id}` was already sent once, so it is not sent again")]
    AlreadyJournaled { run_id: String, seq: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Fails unless `owner` holds the claim on the running run `run_id`; checked inside the write
/// transaction that depends on it.
pub(super) fn check_owner(
    t: &rusqlite::Transaction<'_>,
    run_id: &str,
    owner: &str,
) -> Result<(), DispatchError> {
    let current: Option<String> = t
        .query_row(
            "SELECT owner FROM runs WHERE run_id = ?1 AND status = 'running'",
            params![run_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(StoreError::from)?
        .flatten();
    if current.as_deref() != Some(owner) {
        return Err(DispatchError::NotOwner {
            run_id: run_id.to_string(),
        });
    }
    Ok(())
}

fn result_context(run_id: &str, seq: u64) -> String {
    format!("calls.result:{run_id}:{seq}")
}

impl RunsStore {
    /// Journals `call` as dispatched for `owner`'s attempt of the run, using up its approval;
    /// see the module docs for what is checked. Only a read-only call that an interrupted
    /// attempt dispatched without an answer may be journaled (and so sent) again.
    pub fn record_dispatch(
        &self,
        run_id: &str,
        owner: &str,
        call: &Dispatch<'_>,
    ) -> Result<(), DispatchError> {
        let placeholder = self.seal(&result_context(run_id, call.seq), "null")?;
        let now = now_ms() as i64;
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            if call.uses_approval {
                let used = t
                    .execute(
                        "UPDATE approvals SET consumed_at_ms = ?4
                         WHERE run_id = ?1 AND seq = ?2 AND call_digest = ?3 AND consumed_at_ms IS NULL
                           AND decision IN ('allow_once', 'allow_run', 'allow_always')",
                        params![run_id, call.seq as i64, call.call_digest, now],
                    )
                    .map_err(StoreError::from)?;
                if used != 1 {
                    return Err(DispatchError::NotApproved {
                        run_id: run_id.to_string(),
                        seq: call.seq,
                    });
                }
            }
            let journaled = t
                .execute(
                    "INSERT INTO calls (run_id, seq, address, connection, call_digest, result, ok, ms, recorded_at_ms, state, mutating)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, ?7, 'dispatched', ?8)
                     ON CONFLICT (run_id, seq) DO UPDATE SET recorded_at_ms = excluded.recorded_at_ms
                     WHERE calls.state = 'dispatched' AND calls.mutating = 0 AND excluded.mutating = 0
                       AND calls.address = excluded.address AND calls.call_digest = excluded.call_digest",
                    params![
                        run_id,
                        call.seq as i64,
                        call.address,
                        call.connection,
                        call.call_digest,
                        placeholder,
                        now,
                        call.mutating
                    ],
                )
                .map_err(StoreError::from)?;
            if journaled != 1 {
                return Err(DispatchError::AlreadyJournaled {
                    run_id: run_id.to_string(),
                    seq: call.seq,
                });
            }
            Ok(())
        })
    }

    /// Records the answer to a call `owner`'s attempt dispatched; an attempt that lost its claim
    /// meanwhile records nothing (the call stays dispatched, its outcome unknown to the run).
    pub fn record_answer(
        &self,
        run_id: &str,
        owner: &str,
        seq: u64,
        result: &Value,
        ok: bool,
        ms: u64,
    ) -> Result<(), DispatchError> {
        let result = self.seal(&result_context(run_id, seq), &result.to_string())?;
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            t.execute(
                "UPDATE calls SET state = ?3, result = ?4, ok = ?5, ms = ?6, recorded_at_ms = ?7 WHERE run_id = ?1 AND seq = ?2",
                params![run_id, seq as i64, CallState::Answered.as_str(), result, ok, ms as i64, now_ms() as i64],
            )
            .map_err(StoreError::from)?;
            Ok(())
        })
    }

    /// The calls of a run in sequence order.
    pub fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        self.unlock_key()?;
        let sealed: Vec<(JournalEntry, Vec<u8>)> = self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT seq, address, connection, call_digest, result, ok, ms, state, mutating FROM calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                let state: String = row.get(7)?;
                let entry = JournalEntry {
                    seq: row.get::<_, i64>(0)?.max(0) as u64,
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    call_digest: row.get(3)?,
                    result: Value::Null,
                    ok: row.get(5)?,
                    ms: row.get::<_, i64>(6)?.max(0) as u64,
                    // Anything but a recorded answer may have acted without one.
                    state: if state == CallState::Answered.as_str() {
                        CallState::Answered
                    } else {
                        CallState::Dispatched
                    },
                    mutating: row.get::<_, Option<bool>>(8)?.unwrap_or(true),
                };
                Ok((entry, stored_bytes(row, 4)?.unwrap_or_default()))
            })?;
            rows.collect()
        })?;
        sealed
            .into_iter()
            .map(|(mut entry, result)| {
                let context = result_context(run_id, entry.seq);
                let opened = self.open_text(&context, &result)?;
                entry.result = serde_json::from_str(&opened)
                    .map_err(|_| self.sealed_error(&context, OpenError::Rejected))?;
                Ok(entry)
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runs::Claim;

    /// Journals `entry` the way the bridge does: dispatched, then answered.
    pub(crate) fn journal_call(store: &RunsStore, run_id: &str, owner: &str, entry: &JournalEntry) {
        store
            .record_dispatch(
                run_id,
                owner,
                &Dispatch {
                    seq: entry.seq,
                    address: &entry.address,
                    connection: entry.connection.as_deref(),
                    call_digest: &entry.call_digest,
                    mutating: entry.mutating,
                    uses_approval: false,
                },
            )
            .unwrap();
        store
            .record_answer(run_id, owner, entry.seq, &entry.result, entry.ok, entry.ms)
            .unwrap();
    }

    fn dispatch<'a>(seq: u64, digest: &'a str, mutating: bool) -> Dispatch<'a> {
        Dispatch {
            seq,
            address: "counter.write",
            connection: None,
            call_digest: digest,
            mutating,
            uses_approval: false,
        }
    }

    #[test]
    fn a_call_is_journaled_before_it_is_answered_and_only_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        store
            .record_dispatch("run_a", &owner, &dispatch(0, "d", true))
            .unwrap();
        let journal = store.journal("run_a").unwrap();
        assert_eq!(journal[0].state, CallState::Dispatched);
        assert!(journal[0].mutating);
        let again = store
            .record_dispatch("run_a", &owner, &dispatch(0, "d", true))
            .unwrap_err();
        assert!(
            matches!(again, DispatchError::AlreadyJournaled { .. }),
            "{again}"
        );
        store
            .record_answer(
                "run_a",
                &owner,
                0,
                &serde_json::json!({"content": []}),
                true,
                4,
            )
            .unwrap();
        let journal = store.journal("run_a").unwrap();
        assert_eq!(
            (journal[0].state, journal[0].ms, journal[0].ok),
            (CallState::Answered, 4, true)
        );
    }

    #[test]
    fn an_approval_is_used_once_and_only_for_the_arguments_decided() {
        use crate::runs::{Decision, PendingCall, Seen};
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        let pending = PendingCall {
            seq: 0,
            address: "counter.write",
            connection: None,
            preview: "{}",
            reason: "asks",
            call_digest: "d",
        };
        store.record_pending("run_a", &owner, &pending).unwrap();
        let approved = Dispatch {
            uses_approval: true,
            ..dispatch(0, "d", true)
        };
        let err = store
            .record_dispatch("run_a", &owner, &approved)
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "undecided: {err}"
        );
        let seen = [Seen {
            seq: 0,
            call_digest: "d".into(),
        }];
        store
            .record_decision("run_a", &seen, Decision::AllowOnce, "terminal", |_, _| {
                Ok(())
            })
            .unwrap();
        let other = Dispatch {
            uses_approval: true,
            ..dispatch(0, "other", true)
        };
        let err = store.record_dispatch("run_a", &owner, &other).unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "other arguments: {err}"
        );
        store.record_dispatch("run_a", &owner, &approved).unwrap();
        assert!(
            store
                .approval("run_a", 0)
                .unwrap()
                .unwrap()
                .consumed_at_ms
                .is_some()
        );
        let err = store
            .record_dispatch("run_a", &owner, &approved)
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "used up: {err}"
        );
    }

    #[test]
    fn only_the_owner_dispatches_and_an_unanswered_read_may_go_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        let err = store
            .record_dispatch("run_a", "someone|else", &dispatch(0, "d", false))
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
        store
            .record_dispatch("run_a", &owner, &dispatch(0, "d", false))
            .unwrap();
        store
            .record_dispatch("run_a", &owner, &dispatch(1, "d", true))
            .unwrap();
        // A later attempt: the read may be sent again, the write never.
        let seen = store.claim_record("run_a").unwrap().unwrap();
        let later = now_ms() + super::super::claims::LEASE.as_millis() as u64 + 1;
        let Claim::Won { owner: next } = store.take_over("run_a", &seen, later).unwrap() else {
            panic!("the expired claim is taken over");
        };
        store
            .record_dispatch("run_a", &next, &dispatch(0, "d", false))
            .unwrap();
        let err = store
            .record_dispatch("run_a", &next, &dispatch(1, "d", true))
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::AlreadyJournaled { .. }),
            "{err}"
        );
        // Nor a read with other arguments at that step.
        let err = store
            .record_dispatch("run_a", &next, &dispatch(0, "other", false))
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::AlreadyJournaled { .. }),
            "{err}"
        );
    }
}
