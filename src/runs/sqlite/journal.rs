//! The journal in SQLite. Journaling a dispatch is the last gate before the upstream, in one
//! write transaction: the run must still be claimed by the caller, the approval that allows the
//! call (if one does) must be for exactly this call and unused — it is used up here — and the
//! call must not be journaled already (only a read an interrupted attempt left unanswered may be
//! journaled again).

use rusqlite::params;

use super::Cached;
use super::{Sqlite, check_owner, sealed, unsigned};
use crate::runs::backend::{JournalRecords, StoredCall};
use crate::runs::error::{DispatchError, StoreError};
use crate::runs::records::{CallRow, CallState, Dispatch, JournalEntry};
use crate::runs::vault::Sealed;

impl JournalRecords for Sqlite {
    fn record_dispatch(
        &self,
        run_id: &str,
        owner: &str,
        call: &Dispatch,
        placeholder: &Sealed,
        now_ms: u64,
    ) -> Result<(), DispatchError> {
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            if call.uses_approval {
                let used = t
                    .execute_cached(
                        "UPDATE approvals SET consumed_at_ms = ?4
                         WHERE run_id = ?1 AND seq = ?2 AND call_digest = ?3 AND consumed_at_ms IS NULL
                           AND decision IN ('allow_once', 'allow_run', 'allow_always')",
                        params![run_id, call.seq as i64, call.call_digest, now_ms as i64],
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
                .execute_cached(
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
                        placeholder.bytes(),
                        now_ms as i64,
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

    fn record_answer(
        &self,
        run_id: &str,
        owner: &str,
        seq: u64,
        result: &Sealed,
        ok: bool,
        ms: u64,
        now_ms: u64,
    ) -> Result<(), DispatchError> {
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            t.execute_cached(
                "UPDATE calls SET state = ?3, result = ?4, ok = ?5, ms = ?6, recorded_at_ms = ?7 WHERE run_id = ?1 AND seq = ?2",
                params![
                    run_id,
                    seq as i64,
                    CallState::Answered.as_str(),
                    result.bytes(),
                    ok,
                    ms as i64,
                    now_ms as i64
                ],
            )
            .map_err(StoreError::from)?;
            Ok(())
        })
    }

    fn record_withdrawal(&self, run_id: &str, owner: &str, seq: u64) -> Result<(), DispatchError> {
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            t.execute_cached(
                "DELETE FROM calls WHERE run_id = ?1 AND seq = ?2 AND state = 'dispatched'",
                params![run_id, seq as i64],
            )
            .map_err(StoreError::from)?;
            t.execute_cached(
                "UPDATE approvals SET consumed_at_ms = NULL WHERE run_id = ?1 AND seq = ?2",
                params![run_id, seq as i64],
            )
            .map_err(StoreError::from)?;
            Ok(())
        })
    }

    fn journal(&self, run_id: &str) -> Result<Vec<StoredCall>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT seq, address, connection, call_digest, result, ok, ms, state, mutating FROM calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                let state: String = row.get(7)?;
                Ok(StoredCall {
                    entry: JournalEntry {
                        seq: unsigned(row.get(0)?),
                        address: row.get(1)?,
                        connection: row.get(2)?,
                        call_digest: row.get(3)?,
                        result: serde_json::Value::Null,
                        ok: row.get(5)?,
                        ms: unsigned(row.get(6)?),
                        state: CallState::parse(&state),
                        mutating: row.get::<_, Option<bool>>(8)?.unwrap_or(true),
                    },
                    result: sealed(row, 4)?.unwrap_or_else(|| Sealed::stored(Vec::new())),
                })
            })?;
            rows.collect()
        })
    }

    fn call_rows(&self, run_id: &str) -> Result<Vec<CallRow>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT seq, address, connection, ok, ms FROM calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                Ok(CallRow {
                    seq: unsigned(row.get(0)?),
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    ok: row.get(3)?,
                    ms: unsigned(row.get(4)?),
                })
            })?;
            rows.collect()
        })
    }
}
