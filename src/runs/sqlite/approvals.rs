//! Approvals in SQLite: pending calls, the decisions on them (checked and recorded in one write
//! transaction), grants read off the approvals whose call went out, single-use elicitation
//! states, and the audit trail.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::Cached;
use super::{Sqlite, check_owner, sealed, unsigned};
use crate::runs::backend::{ApprovalRecords, BeforeCommit, SealedArguments, StoredApproval};
use crate::runs::error::{DecideError, DispatchError, StoreError};
use crate::runs::records::{
    Approval, AskedBefore, AuditLine, Decision, Grant, PendingCall, Recorded, SUPERSEDED, Seen,
};
use crate::runs::vault::Sealed;

const COLUMNS: &str = "run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, decision, decided_at_ms, decided_by, call_digest, consumed_at_ms, tool_version, whole";

fn stored_approval(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredApproval> {
    let decision: Option<String> = row.get(8)?;
    Ok(StoredApproval {
        approval: Approval {
            run_id: row.get(0)?,
            seq: unsigned(row.get(1)?),
            address: row.get(2)?,
            connection: row.get(3)?,
            preview: String::new(),
            whole: None,
            reason: row.get(5)?,
            created_at_ms: unsigned(row.get(6)?),
            expires_at_ms: unsigned(row.get(7)?),
            decision: decision.and_then(|d| d.parse().ok()),
            decided_at_ms: row.get::<_, Option<i64>>(9)?.map(unsigned),
            decided_by: row.get(10)?,
            call_digest: row.get::<_, Option<String>>(11)?.unwrap_or_default(),
            consumed_at_ms: row.get::<_, Option<i64>>(12)?.map(unsigned),
            tool_version: row.get(13)?,
        },
        preview: sealed(row, 4)?.unwrap_or_else(|| Sealed::stored(Vec::new())),
        whole: sealed(row, 14)?,
    })
}

impl ApprovalRecords for Sqlite {
    fn record_pending(
        &self,
        run_id: &str,
        owner: &str,
        call: &PendingCall,
        arguments: &SealedArguments,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<Recorded, DispatchError> {
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            let before: Option<AskedBefore> = t
                .query_row_cached(
                    "SELECT address, call_digest, decision, tool_version FROM approvals WHERE run_id = ?1 AND seq = ?2",
                    params![run_id, call.seq as i64],
                    |row| {
                        Ok(AskedBefore {
                            address: row.get(0)?,
                            call_digest: row.get(1)?,
                            decision: row.get(2)?,
                            tool_version: row.get(3)?,
                        })
                    },
                )
                .optional()
                .map_err(StoreError::from)?;
            let recorded = match &before {
                None => Recorded::New,
                Some(before) if before.is(call) => return Ok(Recorded::Unchanged),
                Some(_) => Recorded::Superseded,
            };
            t.execute_cached(
                "INSERT OR REPLACE INTO approvals (run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, call_digest, tool_version, whole) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    run_id,
                    call.seq as i64,
                    call.address,
                    call.connection,
                    arguments.preview.bytes(),
                    call.reason,
                    now_ms as i64,
                    expires_at_ms as i64,
                    call.call_digest,
                    call.tool_version,
                    arguments.whole.as_ref().map(Sealed::bytes)
                ],
            )
            .map_err(StoreError::from)?;
            if let Some(before) = before {
                let detail = serde_json::json!({
                    "seq": call.seq,
                    "address": call.address,
                    "replaces": before.address,
                    "decision": before.decision,
                    "why": SUPERSEDED,
                });
                audit_in(t, Some(run_id), "superseded", &detail, now_ms).map_err(StoreError::from)?;
            }
            Ok(recorded)
        })
    }

    fn approvals(&self, run_id: &str) -> Result<Vec<StoredApproval>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 ORDER BY seq"
            ))?;
            let rows = statement.query_map(params![run_id], stored_approval)?;
            rows.collect()
        })
    }

    fn approval(&self, run_id: &str, seq: u64) -> Result<Option<StoredApproval>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 AND seq = ?2"),
                params![run_id, seq as i64],
                stored_approval,
            )
            .optional()
        })
    }

    fn pending_approvals(&self, now_ms: u64) -> Result<Vec<StoredApproval>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE decision IS NULL AND expires_at_ms > ?1 ORDER BY created_at_ms, run_id, seq"
            ))?;
            let rows = statement.query_map(params![now_ms as i64], stored_approval)?;
            rows.collect()
        })
    }

    fn record_decision(
        &self,
        run_id: &str,
        seen: &[Seen],
        decision: Decision,
        channel: &str,
        now_ms: u64,
        before_commit: BeforeCommit<'_>,
    ) -> Result<Vec<Approval>, DecideError> {
        self.write(|t| {
            let profile: Option<Option<String>> = t
                .query_row_cached(
                    "SELECT profile FROM runs WHERE run_id = ?1",
                    params![run_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(StoreError::from)?;
            let Some(profile) = profile else {
                return Err(DecideError::UnknownRun(run_id.to_string()));
            };
            if seen.is_empty() {
                return Err(DecideError::NothingPending {
                    run_id: run_id.to_string(),
                    seq: None,
                });
            }
            let mut waiting = Vec::new();
            for call in seen {
                let current = t
                    .query_row_cached(
                        &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 AND seq = ?2"),
                        params![run_id, call.seq as i64],
                        stored_approval,
                    )
                    .optional()
                    .map_err(StoreError::from)?
                    .map(|stored| stored.approval)
                    .filter(|a| a.decision.is_none());
                let Some(current) = current else {
                    return Err(DecideError::NothingPending {
                        run_id: run_id.to_string(),
                        seq: Some(call.seq),
                    });
                };
                if !call.matches(&current) {
                    return Err(DecideError::Changed {
                        run_id: run_id.to_string(),
                        seq: call.seq,
                    });
                }
                if current.is_expired_at(now_ms) {
                    return Err(DecideError::Expired {
                        run_id: run_id.to_string(),
                        seq: call.seq,
                    });
                }
                waiting.push(current);
            }
            before_commit(&waiting, profile.as_deref())?;
            for approval in &mut waiting {
                t.execute_cached(
                    "UPDATE approvals SET decision = ?3, decided_at_ms = ?4, decided_by = ?5 WHERE run_id = ?1 AND seq = ?2 AND decision IS NULL",
                    params![run_id, approval.seq as i64, decision.as_str(), now_ms as i64, channel],
                )
                .map_err(StoreError::from)?;
                let detail = serde_json::json!({ "seq": approval.seq, "address": approval.address, "decision": decision.as_str(), "channel": channel, "callDigest": approval.call_digest });
                audit_in(t, Some(run_id), "decision", &detail, now_ms).map_err(StoreError::from)?;
                approval.decision = Some(decision);
                approval.decided_at_ms = Some(now_ms);
                approval.decided_by = Some(channel.to_string());
            }
            Ok(waiting)
        })
    }

    fn run_grants(&self, run_id: &str) -> Result<BTreeSet<Grant>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT address, connection, tool_version FROM approvals WHERE run_id = ?1 AND decision = 'allow_run' AND consumed_at_ms IS NOT NULL",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?;
            rows.collect()
        })
    }

    fn consume_once(&self, nonce: &str, now_ms: u64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO consumed_states (nonce, at_ms) VALUES (?1, ?2)",
                params![nonce, now_ms as i64],
            )
            .map(|n| n == 1)
        })
    }

    fn audit(
        &self,
        run_id: Option<&str>,
        kind: &str,
        detail: &Value,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.with(|c| audit_in(c, run_id, kind, detail, now_ms))
    }

    fn audit_log(&self, run_id: &str) -> Result<Vec<AuditLine>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT at_ms, kind, detail FROM audit WHERE run_id = ?1 ORDER BY id",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                let detail: String = row.get(2)?;
                Ok(AuditLine {
                    at_ms: unsigned(row.get(0)?),
                    kind: row.get(1)?,
                    detail: serde_json::from_str(&detail).unwrap_or(Value::Null),
                })
            })?;
            rows.collect()
        })
    }
}

/// One audit line, written on `connection` (inside a caller's transaction when it has one).
fn audit_in(
    connection: &Connection,
    run_id: Option<&str>,
    kind: &str,
    detail: &Value,
    now_ms: u64,
) -> rusqlite::Result<()> {
    connection
        .execute_cached(
            "INSERT INTO audit (at_ms, run_id, kind, detail) VALUES (?1, ?2, ?3, ?4)",
            params![now_ms as i64, run_id, kind, detail.to_string()],
        )
        .map(|_| ())
}
