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

use super::journal::{DispatchError, check_owner};
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
    /// SHA-256 of the exact arguments the preview shows: a decision holds for these only.
    pub call_digest: String,
    /// When the call this approval allowed was sent; an approval is used once.
    pub consumed_at_ms: Option<u64>,
}

impl Approval {
    pub fn is_expired_at(&self, now_ms: u64) -> bool {
        self.decision.is_none() && now_ms >= self.expires_at_ms
    }

    /// `run_…/3`: how envelopes name the pending call.
    pub fn id(&self) -> String {
        format!("{}/{}", self.run_id, self.seq)
    }

    /// The call as a person saw it, to bind their decision to.
    pub fn seen(&self) -> Seen {
        Seen {
            seq: self.seq,
            call_digest: self.call_digest.clone(),
        }
    }
}

/// One call a person was shown: its step in the run and the digest of the arguments its
/// preview showed. A decision is recorded only while the call still waits with exactly those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub seq: u64,
    pub call_digest: String,
}

/// A call that asks for a person, as the bridge records it.
#[derive(Debug, Clone)]
pub struct PendingCall<'a> {
    pub seq: u64,
    pub address: &'a str,
    pub connection: Option<&'a str>,
    pub preview: &'a str,
    pub reason: &'a str,
    pub call_digest: &'a str,
}

/// What recording a pending call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The call asks for the first time.
    New,
    /// The same call (address and arguments) already waits or was decided: nothing changed.
    Unchanged,
    /// Another call (other arguments, or another tool) had asked at this step, and its
    /// decision, if any, no longer counts: the new call waits for a person.
    Superseded,
}

/// Why a decision could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(
        "there is no run `{0}`; `capabilities hub runs --pending` lists the runs waiting for a decision"
    )]
    UnknownRun(String),
    #[error("run `{run_id}` has no call waiting for a decision{}; `capabilities hub runs --pending` lists the calls that wait", .seq.map(|s| format!(" at call {s}")).unwrap_or_default())]
    NothingPending { run_id: String, seq: Option<u64> },
    #[error("the approval of call {seq} of run `{run_id}` expired; run the script again")]
    Expired { run_id: String, seq: u64 },
    #[error(
        "call {seq} of run `{run_id}` now waits with another tool, connection or arguments than the ones shown, so nothing was decided; look at it again (`capabilities hub runs --pending`) and decide on what it sends now"
    )]
    Changed { run_id: String, seq: u64 },
    #[error("{0}; nothing was decided")]
    Rule(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

const COLUMNS: &str = "run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, decision, decided_at_ms, decided_by, call_digest, consumed_at_ms";

/// What was asked at a step before, as far as asking again there is concerned.
struct AskedBefore {
    address: String,
    call_digest: Option<String>,
    decision: Option<String>,
}

/// An approval as read, with its preview still sealed.
type SealedApproval = (Approval, Vec<u8>);

fn approval(row: &rusqlite::Row<'_>) -> rusqlite::Result<SealedApproval> {
    let decision: Option<String> = row.get(8)?;
    let unsigned = |v: i64| v.max(0) as u64;
    let approval = Approval {
        run_id: row.get(0)?,
        seq: unsigned(row.get(1)?),
        address: row.get(2)?,
        connection: row.get(3)?,
        preview: String::new(),
        reason: row.get(5)?,
        created_at_ms: unsigned(row.get(6)?),
        expires_at_ms: unsigned(row.get(7)?),
        decision: decision.and_then(|d| d.parse().ok()),
        decided_at_ms: row.get::<_, Option<i64>>(9)?.map(unsigned),
        decided_by: row.get(10)?,
        call_digest: row.get::<_, Option<String>>(11)?.unwrap_or_default(),
        consumed_at_ms: row.get::<_, Option<i64>>(12)?.map(unsigned),
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

    /// Records that call `seq` of a run waits for a person. The same call asking again keeps
    /// its first record (creation time, and any decision); another call at the same step (a
    /// replay that reached it with other arguments, or another tool) replaces it, so no
    /// decision is ever applied to a call nobody saw. Only the run's current `owner` records:
    /// an attempt that lost its claim leaves the approvals alone.
    pub fn record_pending(
        &self,
        run_id: &str,
        owner: &str,
        call: &PendingCall<'_>,
    ) -> Result<Recorded, DispatchError> {
        let now = now_ms();
        let expires = now + APPROVAL_TTL.as_millis() as u64;
        let preview = self.seal(&preview_context(run_id, call.seq), call.preview)?;
        self.write(|t| {
            check_owner(t, run_id, owner)?;
            let existing: Option<AskedBefore> = t
                .query_row(
                    "SELECT address, call_digest, decision FROM approvals WHERE run_id = ?1 AND seq = ?2",
                    params![run_id, call.seq as i64],
                    |row| {
                        Ok(AskedBefore {
                            address: row.get(0)?,
                            call_digest: row.get(1)?,
                            decision: row.get(2)?,
                        })
                    },
                )
                .optional()
                .map_err(StoreError::from)?;
            let recorded = match &existing {
                None => Recorded::New,
                Some(before)
                    if before.address == call.address
                        && before.call_digest.as_deref() == Some(call.call_digest) =>
                {
                    return Ok(Recorded::Unchanged);
                }
                Some(_) => Recorded::Superseded,
            };
            t.execute(
                "INSERT OR REPLACE INTO approvals (run_id, seq, address, connection, preview, reason, created_at_ms, expires_at_ms, call_digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![run_id, call.seq as i64, call.address, call.connection, preview, call.reason, now as i64, expires as i64, call.call_digest],
            )
            .map_err(StoreError::from)?;
            if let Some(before) = existing {
                let detail = serde_json::json!({
                    "seq": call.seq,
                    "address": call.address,
                    "replaces": before.address,
                    "decision": before.decision,
                    "why": "the call reached this step with another tool, connection or arguments than the ones decided on",
                });
                audit_in(t, Some(run_id), "superseded", &detail).map_err(StoreError::from)?;
            }
            Ok(recorded)
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

    /// Records `decision` on the calls of a run a person `seen`, as `channel`, all or nothing,
    /// in one write transaction: every one must still wait, unexpired, with the arguments seen.
    /// `before_commit` runs inside the transaction once that is checked, with the profile the
    /// run was made under (it writes an "always" rule there), so a rule is written only for
    /// calls that are decided, and a rule that cannot be written decides nothing. Returns the
    /// approvals decided, without previews (so deciding needs no key).
    pub fn record_decision(
        &self,
        run_id: &str,
        seen: &[Seen],
        decision: Decision,
        channel: &str,
        before_commit: impl FnOnce(&[Approval], Option<&str>) -> Result<(), DecideError>,
    ) -> Result<Vec<Approval>, DecideError> {
        let now = now_ms();
        self.write(|t| {
            let profile: Option<Option<String>> = t
                .query_row("SELECT profile FROM runs WHERE run_id = ?1", params![run_id], |row| row.get(0))
                .optional()
                .map_err(StoreError::from)?;
            let Some(profile) = profile else {
                return Err(DecideError::UnknownRun(run_id.to_string()));
            };
            if seen.is_empty() {
                return Err(DecideError::NothingPending { run_id: run_id.to_string(), seq: None });
            }
            let mut waiting = Vec::new();
            for call in seen {
                let current = t
                    .query_row(
                        &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = ?1 AND seq = ?2"),
                        params![run_id, call.seq as i64],
                        approval,
                    )
                    .optional()
                    .map_err(StoreError::from)?
                    .map(|(approval, _)| approval)
                    .filter(|a| a.decision.is_none());
                let Some(current) = current else {
                    return Err(DecideError::NothingPending {
                        run_id: run_id.to_string(),
                        seq: Some(call.seq),
                    });
                };
                if current.call_digest != call.call_digest {
                    return Err(DecideError::Changed { run_id: run_id.to_string(), seq: call.seq });
                }
                if current.is_expired_at(now) {
                    return Err(DecideError::Expired { run_id: run_id.to_string(), seq: call.seq });
                }
                waiting.push(current);
            }
            before_commit(&waiting, profile.as_deref())?;
            for approval in &mut waiting {
                t.execute(
                    "UPDATE approvals SET decision = ?3, decided_at_ms = ?4, decided_by = ?5 WHERE run_id = ?1 AND seq = ?2 AND decision IS NULL",
                    params![run_id, approval.seq as i64, decision.as_str(), now as i64, channel],
                )
                .map_err(StoreError::from)?;
                let detail = serde_json::json!({ "seq": approval.seq, "address": approval.address, "decision": decision.as_str(), "channel": channel, "argsDigest": approval.call_digest });
                audit_in(t, Some(run_id), "decision", &detail).map_err(StoreError::from)?;
                approval.decision = Some(decision);
                approval.decided_at_ms = Some(now);
                approval.decided_by = Some(channel.to_string());
            }
            Ok(waiting)
        })
    }

    /// The tools a person allowed for the rest of the run whose approving call was sent: a
    /// grant counts only once the call it was given on went out with the arguments shown.
    pub fn run_grants(&self, run_id: &str) -> Result<BTreeSet<String>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT address FROM approvals WHERE run_id = ?1 AND decision = 'allow_run' AND consumed_at_ms IS NOT NULL",
            )?;
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
        self.with(|c| audit_in(c, run_id, kind, detail))
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
                    row.get::<_, i64>(0)?.max(0) as u64,
                    row.get::<_, String>(1)?,
                    serde_json::from_str(&detail).unwrap_or(Value::Null),
                ))
            })?;
            rows.collect()
        })
    }
}

/// One audit line, written on `connection` (inside a caller's transaction when it has one).
fn audit_in(
    connection: &rusqlite::Connection,
    run_id: Option<&str>,
    kind: &str,
    detail: &Value,
) -> rusqlite::Result<()> {
    connection
        .execute(
            "INSERT INTO audit (at_ms, run_id, kind, detail) VALUES (?1, ?2, ?3, ?4)",
            params![now_ms() as i64, run_id, kind, detail.to_string()],
        )
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store with one run, and the owner of its claim.
    fn store_with_run() -> (tempfile::TempDir, RunsStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        (dir, store, owner)
    }

    fn pending<'a>(
        seq: u64,
        address: &'a str,
        preview: &'a str,
        digest: &'a str,
    ) -> PendingCall<'a> {
        PendingCall {
            seq,
            address,
            connection: Some("work"),
            preview,
            reason: "asks",
            call_digest: digest,
        }
    }

    fn seen(seq: u64, digest: &str) -> Seen {
        Seen {
            seq,
            call_digest: digest.to_string(),
        }
    }

    fn decide(
        store: &RunsStore,
        seen: &[Seen],
        decision: Decision,
    ) -> Result<Vec<Approval>, DecideError> {
        store.record_decision("run_a", seen, decision, "terminal", |_, _| Ok(()))
    }

    #[test]
    fn a_decision_is_recorded_once_and_audited() {
        let (_dir, store, owner) = store_with_run();
        let first = pending(2, "gh.createIssue", "{ title: \"x\" }", "d1");
        assert_eq!(
            store.record_pending("run_a", &owner, &first).unwrap(),
            Recorded::New
        );
        let again = pending(2, "gh.createIssue", "other", "d1");
        assert_eq!(
            store.record_pending("run_a", &owner, &again).unwrap(),
            Recorded::Unchanged
        );
        let waiting = store.pending_approvals().unwrap();
        assert_eq!(waiting.len(), 1);
        assert_eq!(
            waiting[0].preview, "{ title: \"x\" }",
            "the first record is kept"
        );
        let decided = decide(&store, &[seen(2, "d1")], Decision::AllowRun).unwrap();
        assert_eq!(decided.len(), 1);
        assert!(store.pending_approvals().unwrap().is_empty());
        assert!(
            store.run_grants("run_a").unwrap().is_empty(),
            "a grant counts once its call was sent"
        );
        let again = decide(&store, &[seen(2, "d1")], Decision::Deny)
            .unwrap_err()
            .to_string();
        assert!(again.contains("no call waiting"), "{again}");
        let audit = store.audit_log("run_a").unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].2["channel"], "terminal");
    }

    #[test]
    fn a_decision_holds_only_for_the_arguments_shown() {
        let (_dir, store, owner) = store_with_run();
        store
            .record_pending(
                "run_a",
                &owner,
                &pending(0, "a.b", "{ key: \"B\" }", "digest-b"),
            )
            .unwrap();
        let err = decide(&store, &[seen(0, "digest-a")], Decision::AllowOnce).unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 0, .. }), "{err}");
        assert!(
            err.to_string().contains("or arguments than the ones shown"),
            "{err}"
        );
        decide(&store, &[seen(0, "digest-b")], Decision::AllowOnce).unwrap();

        // The call comes back with other arguments: the decision no longer counts.
        let changed = pending(0, "a.b", "{ key: \"A\" }", "digest-a");
        assert_eq!(
            store.record_pending("run_a", &owner, &changed).unwrap(),
            Recorded::Superseded
        );
        let approval = store.approval("run_a", 0).unwrap().unwrap();
        assert_eq!(approval.decision, None);
        assert_eq!(approval.preview, "{ key: \"A\" }");
        assert_eq!(approval.call_digest, "digest-a");
        let audit = store.audit_log("run_a").unwrap();
        assert_eq!(audit.last().unwrap().1, "superseded");
    }

    #[test]
    fn all_or_nothing_when_one_call_changed_or_the_rule_fails() {
        let (_dir, store, owner) = store_with_run();
        store
            .record_pending("run_a", &owner, &pending(0, "a.b", "{}", "d0"))
            .unwrap();
        store
            .record_pending("run_a", &owner, &pending(1, "a.c", "{}", "d1"))
            .unwrap();
        let err = decide(
            &store,
            &[seen(0, "d0"), seen(1, "stale")],
            Decision::AllowOnce,
        )
        .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 1, .. }), "{err}");
        let err = store
            .record_decision(
                "run_a",
                &[seen(0, "d0")],
                Decision::AllowAlways,
                "page",
                |_, _| Err(DecideError::Rule("the config cannot be written".into())),
            )
            .unwrap_err();
        assert!(err.to_string().ends_with("nothing was decided"), "{err}");
        assert_eq!(
            store.pending_approvals().unwrap().len(),
            2,
            "nothing was decided"
        );
        assert!(store.audit_log("run_a").unwrap().is_empty());
    }

    #[test]
    fn concurrent_deciders_decide_once() {
        let (_dir, store, owner) = store_with_run();
        store
            .record_pending("run_a", &owner, &pending(0, "a.b", "{}", "d0"))
            .unwrap();
        let outcomes: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = [
                Decision::AllowOnce,
                Decision::Deny,
                Decision::AllowRun,
                Decision::Deny,
            ]
            .into_iter()
            .map(|d| {
                let store = &store;
                scope.spawn(move || decide(store, &[seen(0, "d0")], d).is_ok())
            })
            .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1, "{outcomes:?}");
        assert_eq!(store.audit_log("run_a").unwrap().len(), 1);
    }

    #[test]
    fn only_the_runs_owner_records_what_waits() {
        let (_dir, store, _) = store_with_run();
        let err = store
            .record_pending("run_a", "lost|claim", &pending(0, "a.b", "{}", "d"))
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
        assert!(store.approvals("run_a").unwrap().is_empty());
    }

    #[test]
    fn single_use_tokens_are_consumed_once() {
        let (_dir, store, _) = store_with_run();
        assert!(store.consume_once("n1").unwrap());
        assert!(!store.consume_once("n1").unwrap());
    }

    #[test]
    fn unknown_runs_and_calls_are_named() {
        let (_dir, store, owner) = store_with_run();
        let err = store
            .record_decision(
                "run_zzz",
                &[seen(0, "d")],
                Decision::Deny,
                "terminal",
                |_, _| Ok(()),
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no run `run_zzz`") && err.contains("hub runs --pending"),
            "{err}"
        );
        store
            .record_pending("run_a", &owner, &pending(1, "a.b", "{}", "d"))
            .unwrap();
        let err = decide(&store, &[seen(5, "d")], Decision::Deny)
            .unwrap_err()
            .to_string();
        assert!(err.contains("at call 5"), "{err}");
    }

    #[test]
    fn expired_approvals_cannot_be_decided() {
        let (_dir, store, owner) = store_with_run();
        store
            .record_pending("run_a", &owner, &pending(0, "a.b", "{}", "d"))
            .unwrap();
        store
            .with(|c| c.execute("UPDATE approvals SET expires_at_ms = 1", []))
            .unwrap();
        assert!(store.pending_approvals().unwrap().is_empty());
        let err = decide(&store, &[seen(0, "d")], Decision::AllowOnce)
            .unwrap_err()
            .to_string();
        assert!(err.contains("expired"), "{err}");
    }
}
