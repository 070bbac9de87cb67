//! Pending approvals, the decisions people make on them, per-run grants, and the audit trail.
//! Every channel (terminal, dashboard, browser page, MCP elicitation) writes decisions here, so
//! the store is the one source of truth and a decision survives a hub restart.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use super::store::{RunsStore, StoreError, now_ms, stored_bytes};

/// How long a pending approval waits for a person.
pub const APPROVAL_TTL: Duration = Duration::from_secs(30 * 60);

/// The four choices every channel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run this one call.
    AllowOnce,
    /// Run this call and every later call of the same tool in this run.
    AllowRun,
    /// Run it, and write a policy rule that allows the tool from now on.
    AllowAlways,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowRun => "allow_run",
            Decision::AllowAlways => "allow_always",
            Decision::Deny => "deny",
        }
    }

    pub fn allows(self) -> bool {
        self != Decision::Deny
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Decision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Decision::AllowOnce,
            Decision::AllowRun,
            Decision::AllowAlways,
            Decision::Deny,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
        .ok_or_else(|| {
            format!("`{s}` is not a decision; use allow_once, allow_run, allow_always or deny")
        })
    }
}

/// One call that waits (or waited) for a person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub run_id: String,
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    /// The arguments, redacted and cut short for display.
    pub preview: String,
    pub reason: String,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    pub decision: Option<Decision>,
    pub decided_at_ms: Option<u64>,
    /// Which channel decided: `terminal`, `dashboard`, `page`, `elicitation`, `exec`.
    pub decided_by: Option<String>,
}

impl Approval {
    pub fn is_expired_at(&self, now_ms: u64) -> bool {
        self.decision.is_none() && now_ms >= self.expires_at_ms
    }

    /// `run_…/3`: how envelopes name the pending call.
    pub fn id(&self) -> String {
        format!("{}/{}", self.run_id, self.seq)
    }
}

/// Why a decision could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(
        "there is no run `{0}`; `capabilities hub runs --pending` lists the runs waiting for a decision"
    )]
    UnknownRun(String),
    #[error("run `{run_id}` has no call waiting for a decision{}", .seq.map(|s| format!(" at call {s}")).unwrap_or_default())]
    NothingPending { run_id: String, seq: Option<u64> },
    #[error("the approval of call {seq} of run `{run_id}` expired; run the script again")]
    Expired { run_id: String, seq: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

const COLUMNS: &str = "run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, decision, decided_at_ms, decided_by";

/// An approval as read, with its preview still sealed.
type SealedApproval = (Approval, Vec<u8>);

fn approval(row: &rusqlite::Row<'_>) -> rusqlite::Result<SealedApproval> {
    let decision: Option<String> = row.get(8)?;
    let approval = Approval {
        run_id: row.get(0)?,
        seq: row.get::<_, i64>(1)? as u64,
        address: row.get(2)?,
        connection: row.get(3)?,
        preview: String::new(),
        reason: row.get(5)?,
        created_at_ms: row.get::<_, i64>(6)? as u64,
        expires_at_ms: row.get::<_, i64>(7)? as u64,
        decision: decision.and_then(|d| d.parse().ok()),
        decided_at_ms: row.get::<_, Option<i64>>(9)?.map(|v| v as u64),
        decided_by: row.get(10)?,
    };
    Ok((approval, stored_bytes(row, 4)?.unwrap_or_default()))
}

fn preview_context(run_id: &str, seq: u64) -> String {
    format!("approvals.preview:{run_id}:{seq}")
}

impl RunsStore {
    fn open_approval(
        &self,
        (mut approval, preview): SealedApproval,
    ) -> Result<Approval, StoreError> {
        approval.preview =
            self.open_text(&preview_context(&approval.run_id, approval.seq), &preview)?;
        Ok(approval)
    }

    fn open_approvals(&self, sealed: Vec<SealedApproval>) -> Result<Vec<Approval>, StoreError> {
        sealed.into_iter().map(|a| self.open_approval(a)).collect()
    }

    /// Records that call `seq` of a run waits for a person; a second record of the same call
    /// keeps the first (its creation time and any decision).
    pub fn record_pending(
        &self,
        run_id: &str,
        seq: u64,
        address: &str,
        connection: Option<&str>,
        preview: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        let expires = now + APPROVAL_TTL.as_millis() as u64;
        let preview = self.seal(&preview_context(run_id, seq), preview)?;
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO approvals (run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![run_id, seq as i64, address, connection, preview, reason, now as i64, expires as i64],
            )
            .map(|_| ())
        })
    }

    /// Remembers the digest of the pending call's arguments, so a decision made elsewhere (an
    /// elicitation answer) can be bound to exactly those arguments.
    pub fn record_pending_digest(
        &self,
        run_id: &str,
        seq: u64,
        args_digest: &str,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute("UPDATE approvals SET args_digest = ?3 WHERE run_id = ?1 AND seq = ?2 AND args_digest IS NULL", params![run_id, seq as i64, args_digest])
                .map(|_| ())
        })
    }

    /// The digest recorded with [`record_pending_digest`](Self::record_pending_digest).
    pub fn pending_digest(&self, run_id: &str, seq: u64) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT args_digest FROM approvals WHERE run_id = ?1 AND seq = ?2",
                params![run_id, seq as i64],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    /// Marks a single-use token (a signed elicitation state) as used; false when it already was.
    /// The store enforces it, so a replayed answer is refused even by another hub process.
    pub fn consume_once(&self, nonce: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO consumed_states (nonce, at_ms) VALUES (?1, ?2)",
                params![nonce, now_ms() as i64],
            )
            .map(|n| n == 1)
        })
    }

    /// Every approval of a run, by call order.
    pub fn approvals(&self, run_id: &str) -> Result<Vec<Approval>, StoreError> {
        self.unlock_key()?;
        let sealed = self.with(|c| {
            let mut statement = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 ORDER BY seq"
            ))?;
            let rows = statement.query_map(params![run_id], approval)?;
            rows.collect()
        })?;
        self.open_approvals(sealed)
    }

    /// The approval of one call, if it was ever asked for.
    pub fn approval(&self, run_id: &str, seq: u64) -> Result<Option<Approval>, StoreError> {
        self.unlock_key()?;
        let sealed = self.with(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 AND seq = ?2"),
                params![run_id, seq as i64],
                approval,
            )
            .optional()
        })?;
        sealed.map(|a| self.open_approval(a)).transpose()
    }

    /// Every approval still waiting for a decision and not expired, oldest first.
    pub fn pending_approvals(&self) -> Result<Vec<Approval>, StoreError> {
        self.unlock_key()?;
        let now = now_ms() as i64;
        let sealed = self.with(|c| {
            let mut statement = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE decision IS NULL AND expires_at_ms > ?1 ORDER BY created_at_ms, run_id, seq"
            ))?;
            let rows = statement.query_map(params![now], approval)?;
            rows.collect()
        })?;
        self.open_approvals(sealed)
    }

    /// Records a decision on the undecided calls of a run (only call `seq` when given), with the
    /// channel that made it, and audits it. Returns the approvals decided.
    pub fn decide(
        &self,
        run_id: &str,
        seq: Option<u64>,
        decision: Decision,
        channel: &str,
    ) -> Result<Vec<Approval>, DecideError> {
        if self.run_status(run_id)?.is_none() {
            return Err(DecideError::UnknownRun(run_id.to_string()));
        }
        let now = now_ms();
        let waiting: Vec<Approval> = self
            .approvals(run_id)?
            .into_iter()
            .filter(|a| a.decision.is_none() && seq.is_none_or(|s| s == a.seq))
            .collect();
        if waiting.is_empty() {
            return Err(DecideError::NothingPending {
                run_id: run_id.to_string(),
                seq,
            });
        }
        if let Some(expired) = waiting.iter().find(|a| a.is_expired_at(now)) {
            return Err(DecideError::Expired {
                run_id: run_id.to_string(),
                seq: expired.seq,
            });
        }
        let mut decided = Vec::new();
        for mut approval in waiting {
            self.with(|c| {
                c.execute(
                    "UPDATE approvals SET decision = ?3, decided_at_ms = ?4, decided_by = ?5 WHERE run_id = ?1 AND seq = ?2 AND decision IS NULL",
                    params![run_id, approval.seq as i64, decision.as_str(), now as i64, channel],
                )
            })?;
            if decision == Decision::AllowRun {
                self.grant_for_run(run_id, &approval.address)?;
            }
            self.audit(
                Some(run_id),
                "decision",
                &serde_json::json!({ "seq": approval.seq, "address": approval.address, "decision": decision.as_str(), "channel": channel }),
            )?;
            approval.decision = Some(decision);
            approval.decided_at_ms = Some(now);
            approval.decided_by = Some(channel.to_string());
            decided.push(approval);
        }
        Ok(decided)
    }

    /// Allows `address` for the rest of the run without asking again.
    pub fn grant_for_run(&self, run_id: &str, address: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO run_grants (run_id, address) VALUES (?1, ?2)",
                params![run_id, address],
            )
            .map(|_| ())
        })
    }

    pub fn run_grants(&self, run_id: &str) -> Result<BTreeSet<String>, StoreError> {
        self.with(|c| {
            let mut statement =
                c.prepare_cached("SELECT address FROM run_grants WHERE run_id = ?1")?;
            let rows = statement.query_map(params![run_id], |row| row.get::<_, String>(0))?;
            rows.collect()
        })
    }

    /// Appends one line to the audit trail.
    pub fn audit(
        &self,
        run_id: Option<&str>,
        kind: &str,
        detail: &Value,
    ) -> Result<(), StoreError> {
        let detail = detail.to_string();
        self.with(|c| {
            c.execute(
                "INSERT INTO audit (at_ms, run_id, kind, detail) VALUES (?1, ?2, ?3, ?4)",
                params![now_ms() as i64, run_id, kind, detail],
            )
            .map(|_| ())
        })
    }

    /// The audit trail of a run, oldest first: `(at_ms, kind, detail)`.
    pub fn audit_log(&self, run_id: &str) -> Result<Vec<(u64, String, Value)>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT at_ms, kind, detail FROM audit WHERE run_id = ?1 ORDER BY id",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                let detail: String = row.get(2)?;
                Ok((
                    row.get::<_, i64>(0)? as u64,
                    row.get::<_, String>(1)?,
                    serde_json::from_str(&detail).unwrap_or(Value::Null),
                ))
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_run() -> (tempfile::TempDir, RunsStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        store.begin_run("run_a", "code", 1, 2).unwrap();
        (dir, store)
    }

    #[test]
    fn a_decision_is_recorded_once_and_audited() {
        let (_dir, store) = store_with_run();
        store
            .record_pending(
                "run_a",
                2,
                "gh.createIssue",
                Some("work"),
                "{ title: \"x\" }",
                "asks",
            )
            .unwrap();
        store
            .record_pending("run_a", 2, "gh.createIssue", Some("work"), "other", "other")
            .unwrap();
        assert_eq!(store.pending_approvals().unwrap().len(), 1);
        let decided = store
            .decide("run_a", None, Decision::AllowRun, "terminal")
            .unwrap();
        assert_eq!(decided.len(), 1);
        assert_eq!(
            decided[0].preview, "{ title: \"x\" }",
            "the first record is kept"
        );
        assert!(store.pending_approvals().unwrap().is_empty());
        assert!(
            store
                .run_grants("run_a")
                .unwrap()
                .contains("gh.createIssue")
        );
        let again = store
            .decide("run_a", None, Decision::Deny, "terminal")
            .unwrap_err()
            .to_string();
        assert!(again.contains("no call waiting"), "{again}");
        let audit = store.audit_log("run_a").unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].2["channel"], "terminal");
    }

    #[test]
    fn single_use_tokens_are_consumed_once() {
        let (_dir, store) = store_with_run();
        assert!(store.consume_once("n1").unwrap());
        assert!(!store.consume_once("n1").unwrap());
        store
            .record_pending("run_a", 0, "a.b", None, "{}", "asks")
            .unwrap();
        store.record_pending_digest("run_a", 0, "d1").unwrap();
        store.record_pending_digest("run_a", 0, "d2").unwrap();
        assert_eq!(
            store.pending_digest("run_a", 0).unwrap().as_deref(),
            Some("d1")
        );
    }

    #[test]
    fn unknown_runs_and_calls_are_named() {
        let (_dir, store) = store_with_run();
        let err = store
            .decide("run_zzz", None, Decision::Deny, "terminal")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no run `run_zzz`") && err.contains("hub runs --pending"),
            "{err}"
        );
        store
            .record_pending("run_a", 1, "a.b", None, "{}", "asks")
            .unwrap();
        let err = store
            .decide("run_a", Some(5), Decision::Deny, "terminal")
            .unwrap_err()
            .to_string();
        assert!(err.contains("at call 5"), "{err}");
    }

    #[test]
    fn expired_approvals_cannot_be_decided() {
        let (_dir, store) = store_with_run();
        store
            .record_pending("run_a", 0, "a.b", None, "{}", "asks")
            .unwrap();
        store
            .with(|c| c.execute("UPDATE approvals SET expires_at_ms = 1", []))
            .unwrap();
        assert!(store.pending_approvals().unwrap().is_empty());
        let err = store
            .decide("run_a", None, Decision::AllowOnce, "terminal")
            .unwrap_err()
            .to_string();
        assert!(err.contains("expired"), "{err}");
    }
}
