//! Approvals in PostgreSQL: pending calls, decisions checked and recorded in one transaction
//! under the write lock, grants, single-use elicitation states and the audit trail.

use std::collections::BTreeSet;

use postgres::{GenericClient, Row};
use serde_json::Value;

use super::{Postgres, sealed, signed, unsigned};
use crate::runs::backend::{ApprovalRecords, BeforeCommit, SealedArguments, StoredApproval};
use crate::runs::error::{DecideError, DispatchError, StoreError};
use crate::runs::records::{
    Approval, AskedBefore, AuditLine, Decision, Grant, PendingCall, Recorded, SUPERSEDED, Seen,
};
use crate::runs::vault::Sealed;

const COLUMNS: &str = "run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, decision, decided_at_ms, decided_by, call_digest, consumed_at_ms, tool_version, whole";

fn stored_approval(row: &Row) -> StoredApproval {
    let decision: Option<String> = row.get(8);
    StoredApproval {
        approval: Approval {
            run_id: row.get(0),
            seq: unsigned(row.get(1)),
            address: row.get(2),
            connection: row.get(3),
            preview: String::new(),
            whole: None,
            reason: row.get(5),
            created_at_ms: unsigned(row.get(6)),
            expires_at_ms: unsigned(row.get(7)),
            decision: decision.and_then(|d| d.parse().ok()),
            decided_at_ms: row.get::<_, Option<i64>>(9).map(unsigned),
            decided_by: row.get(10),
            call_digest: row.get::<_, Option<String>>(11).unwrap_or_default(),
            consumed_at_ms: row.get::<_, Option<i64>>(12).map(unsigned),
            tool_version: row.get(13),
        },
        preview: sealed(row, 4).unwrap_or_else(|| Sealed::stored(Vec::new())),
        whole: sealed(row, 14),
    }
}

impl ApprovalRecords for Postgres {
    fn record_pending(
        &self,
        run_id: &str,
        owner: &str,
        call: &PendingCall,
        arguments: &SealedArguments,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<Recorded, DispatchError> {
        self.write_run(run_id, |t| {
            self.check_owner(t, run_id, owner)?;
            let seq = signed(call.seq);
            let before = t
                .query_opt(
                    "SELECT address, call_digest, decision, tool_version FROM approvals WHERE run_id = $1 AND seq = $2",
                    &[&run_id, &seq],
                )
                .map_err(|e| self.error(e))?
                .map(|row| AskedBefore {
                    address: row.get(0),
                    call_digest: row.get(1),
                    decision: row.get(2),
                    tool_version: row.get(3),
                });
            let recorded = match &before {
                None => Recorded::New,
                Some(before) if before.is(call) => return Ok(Recorded::Unchanged),
                Some(_) => Recorded::Superseded,
            };
            // What asked at this step before is replaced whole, its decision with it.
            t.execute(
                "DELETE FROM approvals WHERE run_id = $1 AND seq = $2",
                &[&run_id, &seq],
            )
            .map_err(|e| self.error(e))?;
            t.execute(
                "INSERT INTO approvals (run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, call_digest, tool_version, whole)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                &[
                    &run_id,
                    &seq,
                    &call.address,
                    &call.connection,
                    &arguments.preview.bytes(),
                    &call.reason,
                    &signed(now_ms),
                    &signed(expires_at_ms),
                    &call.call_digest,
                    &call.tool_version,
                    &arguments.whole.as_ref().map(Sealed::bytes),
                ],
            )
            .map_err(|e| self.error(e))?;
            if let Some(before) = before {
                let detail = serde_json::json!({
                    "seq": call.seq,
                    "address": call.address,
                    "replaces": before.address,
                    "decision": before.decision,
                    "why": SUPERSEDED,
                });
                audit_in(t, Some(run_id), "superseded", &detail, now_ms)
                    .map_err(|e| self.error(e))?;
            }
            Ok(recorded)
        })
    }

    fn approvals(&self, run_id: &str) -> Result<Vec<StoredApproval>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 ORDER BY seq"),
                &[&run_id],
            )?;
            Ok(rows.iter().map(stored_approval).collect())
        })
    }

    fn approval(&self, run_id: &str, seq: u64) -> Result<Option<StoredApproval>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 AND seq = $2"),
                &[&run_id, &signed(seq)],
            )?;
            Ok(row.as_ref().map(stored_approval))
        })
    }

    fn pending_approvals(&self, now_ms: u64) -> Result<Vec<StoredApproval>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {COLUMNS} FROM approvals WHERE decision IS NULL AND expires_at_ms > $1 ORDER BY created_at_ms, run_id, seq"
                ),
                &[&signed(now_ms)],
            )?;
            Ok(rows.iter().map(stored_approval).collect())
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
                .query_opt("SELECT profile FROM runs WHERE run_id = $1", &[&run_id])
                .map_err(|e| self.error(e))?
                .map(|row| row.get(0));
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
                    .query_opt(
                        &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 AND seq = $2"),
                        &[&run_id, &signed(call.seq)],
                    )
                    .map_err(|e| self.error(e))?
                    .map(|row| stored_approval(&row).approval)
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
                t.execute(
                    "UPDATE approvals SET decision = $3, decided_at_ms = $4, decided_by = $5 WHERE run_id = $1 AND seq = $2 AND decision IS NULL",
                    &[&run_id, &signed(approval.seq), &decision.as_str(), &signed(now_ms), &channel],
                )
                .map_err(|e| self.error(e))?;
                let detail = serde_json::json!({ "seq": approval.seq, "address": approval.address, "decision": decision.as_str(), "channel": channel, "callDigest": approval.call_digest });
                audit_in(t, Some(run_id), "decision", &detail, now_ms)
                    .map_err(|e| self.error(e))?;
                approval.decision = Some(decision);
                approval.decided_at_ms = Some(now_ms);
                approval.decided_by = Some(channel.to_string());
            }
            Ok(waiting)
        })
    }

    fn run_grants(&self, run_id: &str) -> Result<BTreeSet<Grant>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                "SELECT address, connection, tool_version FROM approvals WHERE run_id = $1 AND decision = 'allow_run' AND consumed_at_ms IS NOT NULL",
                &[&run_id],
            )?;
            Ok(rows
                .iter()
                .map(|row| (row.get(0), row.get(1), row.get(2)))
                .collect())
        })
    }

    fn consume_once(&self, nonce: &str, now_ms: u64) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO consumed_states (nonce, at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&nonce, &signed(now_ms)],
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
            let rows = c.query(
                "SELECT at_ms, kind, detail FROM audit WHERE run_id = $1 ORDER BY id",
                &[&run_id],
            )?;
            Ok(rows
                .iter()
                .map(|row| {
                    let detail: String = row.get(2);
                    AuditLine {
                        at_ms: unsigned(row.get(0)),
                        kind: row.get(1),
                        detail: serde_json::from_str(&detail).unwrap_or(Value::Null),
                    }
                })
                .collect())
        })
    }
}

/// One audit line, written on `client` (inside a caller's transaction when it has one).
fn audit_in(
    client: &mut impl GenericClient,
    run_id: Option<&str>,
    kind: &str,
    detail: &Value,
    now_ms: u64,
) -> Result<(), postgres::Error> {
    client
        .execute(
            "INSERT INTO audit (at_ms, run_id, kind, detail) VALUES ($1, $2, $3, $4)",
            &[&signed(now_ms), &run_id, &kind, &detail.to_string()],
        )
        .map(|_| ())
}
