//! The journal in PostgreSQL: journaling a dispatch is the last gate before the upstream, in
//! one transaction under the run's write lock (see `sqlite/journal` for the rules it keeps).

use super::{Postgres, sealed, signed, unsigned};
use crate::runs::backend::{JournalRecords, StoredCall};
use crate::runs::error::{DispatchError, StoreError};
use crate::runs::records::{CallRow, CallState, Dispatch, JournalEntry};
use crate::runs::vault::Sealed;

impl JournalRecords for Postgres {
    fn record_dispatch(
        &self,
        run_id: &str,
        owner: &str,
        call: &Dispatch,
        placeholder: &Sealed,
        now_ms: u64,
    ) -> Result<(), DispatchError> {
        self.write_run(run_id, |t| {
            self.check_owner(t, run_id, owner)?;
            let seq = signed(call.seq);
            if call.uses_approval {
                let used = t
                    .execute(
                        "UPDATE approvals SET consumed_at_ms = $4
                         WHERE run_id = $1 AND seq = $2 AND call_digest = $3 AND consumed_at_ms IS NULL
                           AND decision IN ('allow_once', 'allow_run', 'allow_always')",
                        &[&run_id, &seq, &call.call_digest, &signed(now_ms)],
                    )
                    .map_err(|e| self.error(e))?;
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
                     VALUES ($1, $2, $3, $4, $5, $6, false, 0, $7, 'dispatched', $8)
                     ON CONFLICT (run_id, seq) DO UPDATE SET recorded_at_ms = excluded.recorded_at_ms
                     WHERE calls.state = 'dispatched' AND calls.mutating = false AND excluded.mutating = false
                       AND calls.address = excluded.address AND calls.call_digest = excluded.call_digest",
                    &[
                        &run_id,
                        &seq,
                        &call.address,
                        &call.connection,
                        &call.call_digest,
                        &placeholder.bytes(),
                        &signed(now_ms),
                        &call.mutating,
                    ],
                )
                .map_err(|e| self.error(e))?;
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
        self.write_run(run_id, |t| {
            self.check_owner(t, run_id, owner)?;
            t.execute(
                "UPDATE calls SET state = $3, result = $4, ok = $5, ms = $6, recorded_at_ms = $7 WHERE run_id = $1 AND seq = $2",
                &[
                    &run_id,
                    &signed(seq),
                    &CallState::Answered.as_str(),
                    &result.bytes(),
                    &ok,
                    &signed(ms),
                    &signed(now_ms),
                ],
            )
            .map_err(|e| self.error(e))?;
            Ok(())
        })
    }

    fn record_withdrawal(&self, run_id: &str, owner: &str, seq: u64) -> Result<(), DispatchError> {
        self.write_run(run_id, |t| {
            self.check_owner(t, run_id, owner)?;
            t.execute(
                "DELETE FROM calls WHERE run_id = $1 AND seq = $2 AND state = 'dispatched'",
                &[&run_id, &signed(seq)],
            )
            .map_err(|e| self.error(e))?;
            t.execute(
                "UPDATE approvals SET consumed_at_ms = NULL WHERE run_id = $1 AND seq = $2",
                &[&run_id, &signed(seq)],
            )
            .map_err(|e| self.error(e))?;
            Ok(())
        })
    }

    fn journal(&self, run_id: &str) -> Result<Vec<StoredCall>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                "SELECT seq, address, connection, call_digest, result, ok, ms, state, mutating FROM calls WHERE run_id = $1 ORDER BY seq",
                &[&run_id],
            )?;
            Ok(rows
                .iter()
                .map(|row| {
                    let state: String = row.get(7);
                    StoredCall {
                        entry: JournalEntry {
                            seq: unsigned(row.get(0)),
                            address: row.get(1),
                            connection: row.get(2),
                            call_digest: row.get(3),
                            result: serde_json::Value::Null,
                            ok: row.get(5),
                            ms: unsigned(row.get(6)),
                            state: CallState::parse(&state),
                            mutating: row.get::<_, Option<bool>>(8).unwrap_or(true),
                        },
                        result: sealed(row, 4).unwrap_or_else(|| Sealed::stored(Vec::new())),
                    }
                })
                .collect())
        })
    }

    fn call_rows(&self, run_id: &str) -> Result<Vec<CallRow>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                "SELECT seq, address, connection, ok, ms FROM calls WHERE run_id = $1 ORDER BY seq",
                &[&run_id],
            )?;
            Ok(rows
                .iter()
                .map(|row| CallRow {
                    seq: unsigned(row.get(0)),
                    address: row.get(1),
                    connection: row.get(2),
                    ok: row.get(3),
                    ms: unsigned(row.get(4)),
                })
                .collect())
        })
    }
}
