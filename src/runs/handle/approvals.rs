//! The `approvals` handle: calls that wait for a person, the decisions people make on them
//! (bound to the exact call they saw, recorded all or nothing), the tools allowed for the rest
//! of a run, single-use elicitation states, and the audit trail. Every channel (terminal,
//! dashboard, browser page, MCP elicitation) writes decisions here, so a decision survives a hub
//! restart and every process sees it.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::backend::{BeforeCommit, SealedArguments, StoredApproval};
use super::super::error::{DecideError, DispatchError, StoreError};
use super::super::records::{
    APPROVAL_TTL, Approval, AuditLine, Decision, Grant, PendingCall, Recorded, Seen,
};
use super::super::vault::{Place, Vault};
use super::super::{Store, now_ms};
use crate::runs::backend::Backend;

/// Approvals and their audit trail.
pub struct Approvals<'a>(pub(in crate::runs) &'a Store);

/// `stored` with its preview (and whole call) opened. Callers unlock the vault before they read
/// the rows, so values an older version stored in the clear are sealed before they are read.
fn opened(db: &dyn Backend, vault: &Vault, stored: StoredApproval) -> Result<Approval, StoreError> {
    let mut approval = stored.approval;
    let (run_id, seq) = (approval.run_id.as_str(), approval.seq);
    approval.preview = vault.open(db, Place::Preview { run_id, seq }, &stored.preview)?;
    approval.whole = match &stored.whole {
        Some(whole) => Some(vault.open(db, Place::Whole { run_id, seq }, whole)?),
        None => None,
    };
    Ok(approval)
}

impl Approvals<'_> {
    /// Records that call `call.seq` of a run waits for a person. The same call asking again
    /// keeps its first record (creation time, and any decision); another call at the same step
    /// (a replay that reached it with another tool, connection or arguments) replaces it, so no
    /// decision is ever applied to a call nobody saw. Only the run's current `owner` records.
    pub async fn record_pending(
        &self,
        run_id: &str,
        owner: &str,
        call: PendingCall,
    ) -> Result<Recorded, DispatchError> {
        let (run_id, owner) = (run_id.to_string(), owner.to_string());
        self.0
            .call(move |db, vault| {
                let now = db.clock_ms()?;
                let place = Place::Preview {
                    run_id: &run_id,
                    seq: call.seq,
                };
                let whole = match &call.whole {
                    Some(whole) => {
                        let place = Place::Whole {
                            run_id: &run_id,
                            seq: call.seq,
                        };
                        Some(vault.seal(db, place, whole)?)
                    }
                    None => None,
                };
                let arguments = SealedArguments {
                    preview: vault.seal(db, place, &call.preview)?,
                    whole,
                };
                let expires = now + APPROVAL_TTL.as_millis() as u64;
                db.record_pending(&run_id, &owner, &call, &arguments, now, expires)
            })
            .await
    }

    /// Every approval of a run, by call order.
    pub async fn of_run(&self, run_id: &str) -> Result<Vec<Approval>, StoreError> {
        let run_id = run_id.to_string();
        self.0
            .call(move |db, vault| {
                vault.unlock(db)?;
                db.approvals(&run_id)?
                    .into_iter()
                    .map(|stored| opened(db, vault, stored))
                    .collect()
            })
            .await
    }

    /// The approval of one call, if it was ever asked for.
    pub async fn get(&self, run_id: &str, seq: u64) -> Result<Option<Approval>, StoreError> {
        let run_id = run_id.to_string();
        self.0
            .call(move |db, vault| {
                vault.unlock(db)?;
                db.approval(&run_id, seq)?
                    .map(|stored| opened(db, vault, stored))
                    .transpose()
            })
            .await
    }

    /// Every approval still waiting for a decision and not expired, oldest first.
    pub async fn pending(&self) -> Result<Vec<Approval>, StoreError> {
        self.0
            .call(move |db, vault| {
                vault.unlock(db)?;
                db.pending_approvals(db.clock_ms()?)?
                    .into_iter()
                    .map(|stored| opened(db, vault, stored))
                    .collect()
            })
            .await
    }

    /// Records `decision` on the calls of a run a person `seen`, as `channel`, all or nothing:
    /// every one must still wait, unexpired, exactly as seen. `before_commit` runs once that is
    /// checked, before anything is recorded, with the profile the run was made under (it
    /// writes an "always" rule there); its error decides nothing. Returns the approvals decided,
    /// without previews (so deciding needs no key).
    pub async fn decide(
        &self,
        run_id: &str,
        seen: Vec<Seen>,
        decision: Decision,
        channel: &str,
        before_commit: BeforeCommit<'static>,
    ) -> Result<Vec<Approval>, DecideError> {
        let (run_id, channel) = (run_id.to_string(), channel.to_string());
        self.0
            .call(move |db, _| {
                db.record_decision(
                    &run_id,
                    &seen,
                    decision,
                    &channel,
                    db.clock_ms()?,
                    before_commit,
                )
            })
            .await
    }

    /// The tools a person allowed for the rest of the run whose approving call was sent: a
    /// grant counts only once the call it was given on went out as shown.
    pub async fn grants(&self, run_id: &str) -> Result<BTreeSet<Grant>, StoreError> {
        let run_id = run_id.to_string();
        self.0.call(move |db, _| db.run_grants(&run_id)).await
    }

    /// Marks a single-use value (a signed elicitation state) as used; false when it already
    /// was. The store enforces it, so a replayed answer is refused even by another process.
    pub async fn consume_once(&self, nonce: &str) -> Result<bool, StoreError> {
        let nonce = nonce.to_string();
        self.0
            .call(move |db, _| db.consume_once(&nonce, now_ms()))
            .await
    }

    /// Appends one line to the audit trail.
    pub async fn audit(
        &self,
        run_id: Option<&str>,
        kind: &str,
        detail: Value,
    ) -> Result<(), StoreError> {
        let (run_id, kind) = (run_id.map(str::to_string), kind.to_string());
        self.0
            .call(move |db, _| db.audit(run_id.as_deref(), &kind, &detail, now_ms()))
            .await
    }

    /// The audit trail of a run, oldest first.
    pub async fn audit_log(&self, run_id: &str) -> Result<Vec<AuditLine>, StoreError> {
        let run_id = run_id.to_string();
        self.0.call(move |db, _| db.audit_log(&run_id)).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{begin, pending, store_in, tamper};
    use super::*;

    async fn store_with_run() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        (dir, store, owner)
    }

    fn seen(seq: u64, digest: &str) -> Seen {
        Seen {
            seq,
            call_digest: digest.to_string(),
            tool_version: None,
        }
    }

    async fn decide(
        store: &Store,
        seen: Vec<Seen>,
        decision: Decision,
    ) -> Result<Vec<Approval>, DecideError> {
        store
            .approvals()
            .decide("run_a", seen, decision, "terminal", Box::new(|_, _| Ok(())))
            .await
    }

    fn with_preview(mut call: PendingCall, preview: &str) -> PendingCall {
        call.preview = preview.to_string();
        call
    }

    #[tokio::test]
    async fn a_decision_is_recorded_once_and_audited() {
        let (_dir, store, owner) = store_with_run().await;
        let approvals = store.approvals();
        let first = with_preview(pending(2, "gh.createIssue", "d1"), "{ title: \"x\" }");
        assert_eq!(
            approvals
                .record_pending("run_a", &owner, first)
                .await
                .unwrap(),
            Recorded::New
        );
        let again = with_preview(pending(2, "gh.createIssue", "d1"), "other");
        assert_eq!(
            approvals
                .record_pending("run_a", &owner, again)
                .await
                .unwrap(),
            Recorded::Unchanged
        );
        let waiting = approvals.pending().await.unwrap();
        assert_eq!(waiting.len(), 1);
        assert_eq!(
            waiting[0].preview, "{ title: \"x\" }",
            "the first record is kept"
        );
        let decided = decide(&store, vec![seen(2, "d1")], Decision::AllowRun)
            .await
            .unwrap();
        assert_eq!(decided.len(), 1);
        assert!(approvals.pending().await.unwrap().is_empty());
        assert!(
            approvals.grants("run_a").await.unwrap().is_empty(),
            "a grant counts once its call was sent"
        );
        let again = decide(&store, vec![seen(2, "d1")], Decision::Deny)
            .await
            .unwrap_err()
            .to_string();
        assert!(again.contains("no call waiting"), "{again}");
        let audit = approvals.audit_log("run_a").await.unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].detail["channel"], "terminal");
    }

    #[tokio::test]
    async fn a_decision_holds_only_for_the_call_shown() {
        let (_dir, store, owner) = store_with_run().await;
        let approvals = store.approvals();
        let b = with_preview(pending(0, "a.b", "digest-b"), "{ key: \"B\" }");
        approvals.record_pending("run_a", &owner, b).await.unwrap();
        let err = decide(&store, vec![seen(0, "digest-a")], Decision::AllowOnce)
            .await
            .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 0, .. }), "{err}");
        decide(&store, vec![seen(0, "digest-b")], Decision::AllowOnce)
            .await
            .unwrap();

        // The call comes back as another call: the decision no longer counts.
        let a = with_preview(pending(0, "a.b", "digest-a"), "{ key: \"A\" }");
        assert_eq!(
            approvals.record_pending("run_a", &owner, a).await.unwrap(),
            Recorded::Superseded
        );
        let approval = approvals.get("run_a", 0).await.unwrap().unwrap();
        assert_eq!(approval.decision, None);
        assert_eq!(approval.preview, "{ key: \"A\" }");
        assert_eq!(approval.call_digest, "digest-a");
        let audit = approvals.audit_log("run_a").await.unwrap();
        assert_eq!(audit.last().unwrap().kind, "superseded");
    }

    #[tokio::test]
    async fn a_decision_holds_only_for_the_tool_version_shown() {
        let (_dir, store, owner) = store_with_run().await;
        let approvals = store.approvals();
        let versioned = |version: Option<&str>| PendingCall {
            tool_version: version.map(str::to_string),
            ..pending(0, "a.b", "digest")
        };
        approvals
            .record_pending("run_a", &owner, versioned(Some("v1")))
            .await
            .unwrap();
        let shown = |version: &str| Seen {
            tool_version: Some(version.to_string()),
            ..seen(0, "digest")
        };
        decide(&store, vec![shown("v1")], Decision::AllowOnce)
            .await
            .unwrap();
        // The same call of the same tool as it is defined now: still decided.
        assert_eq!(
            approvals
                .record_pending("run_a", &owner, versioned(Some("v1")))
                .await
                .unwrap(),
            Recorded::Unchanged
        );
        // The tool's definition changed: the person decides again.
        assert_eq!(
            approvals
                .record_pending("run_a", &owner, versioned(Some("v2")))
                .await
                .unwrap(),
            Recorded::Superseded
        );
        let approval = approvals.get("run_a", 0).await.unwrap().unwrap();
        assert_eq!(approval.decision, None);
        assert_eq!(approval.tool_version.as_deref(), Some("v2"));
        // An answer to the question as it was asked under v1 (a terminal that listed the call
        // before the resume) does not settle the question asked under v2.
        let err = decide(&store, vec![shown("v1")], Decision::AllowOnce)
            .await
            .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 0, .. }), "{err}");
        assert!(err.to_string().contains("tool definition"), "{err}");
        assert_eq!(
            approvals.get("run_a", 0).await.unwrap().unwrap().decision,
            None,
            "nothing decided"
        );
        decide(&store, vec![shown("v2")], Decision::AllowOnce)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn all_or_nothing_when_one_call_changed_or_the_rule_fails() {
        let (_dir, store, owner) = store_with_run().await;
        let approvals = store.approvals();
        for (seq, address, digest) in [(0, "a.b", "d0"), (1, "a.c", "d1")] {
            approvals
                .record_pending("run_a", &owner, pending(seq, address, digest))
                .await
                .unwrap();
        }
        let err = decide(
            &store,
            vec![seen(0, "d0"), seen(1, "stale")],
            Decision::AllowOnce,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 1, .. }), "{err}");
        let err = approvals
            .decide(
                "run_a",
                vec![seen(0, "d0")],
                Decision::AllowAlways,
                "page",
                Box::new(|_, _| Err(DecideError::Rule("the config cannot be written".into()))),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().ends_with("nothing was decided"), "{err}");
        assert_eq!(
            approvals.pending().await.unwrap().len(),
            2,
            "nothing was decided"
        );
        assert!(approvals.audit_log("run_a").await.unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_deciders_decide_once() {
        let (_dir, store, owner) = store_with_run().await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(0, "a.b", "d0"))
            .await
            .unwrap();
        let deciders = [
            Decision::AllowOnce,
            Decision::Deny,
            Decision::AllowRun,
            Decision::Deny,
        ]
        .map(|decision| {
            let store = store.clone();
            tokio::spawn(async move { decide(&store, vec![seen(0, "d0")], decision).await.is_ok() })
        });
        let mut outcomes = Vec::new();
        for decider in deciders {
            outcomes.push(decider.await.unwrap());
        }
        assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1, "{outcomes:?}");
        assert_eq!(store.approvals().audit_log("run_a").await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn only_the_runs_owner_records_what_waits_and_single_use_values_are_used_once() {
        let (_dir, store, _) = store_with_run().await;
        let err = store
            .approvals()
            .record_pending("run_a", "lost|claim", pending(0, "a.b", "d"))
            .await
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
        assert!(store.approvals().of_run("run_a").await.unwrap().is_empty());
        assert!(store.approvals().consume_once("n1").await.unwrap());
        assert!(!store.approvals().consume_once("n1").await.unwrap());
    }

    #[tokio::test]
    async fn unknown_runs_and_calls_and_expired_approvals_are_named() {
        let (_dir, store, owner) = store_with_run().await;
        let err = store
            .approvals()
            .decide(
                "run_zzz",
                vec![seen(0, "d")],
                Decision::Deny,
                "terminal",
                Box::new(|_, _| Ok(())),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no run `run_zzz`") && err.contains("hub runs --pending"),
            "{err}"
        );
        store
            .approvals()
            .record_pending("run_a", &owner, pending(1, "a.b", "d"))
            .await
            .unwrap();
        let err = decide(&store, vec![seen(5, "d")], Decision::Deny)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("at call 5"), "{err}");
        tamper(&store, "UPDATE approvals SET expires_at_ms = 1");
        assert!(store.approvals().pending().await.unwrap().is_empty());
        let err = decide(&store, vec![seen(1, "d")], Decision::AllowOnce)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("expired"), "{err}");
    }
}
