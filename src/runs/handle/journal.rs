//! The `journal` handle: a call is journaled as dispatched before it leaves the process (the
//! last gate: the run's owner only, its approval used up) and as answered when it comes back,
//! so a crash in between leaves a record that the call may have acted.

use serde_json::Value;

use super::super::error::{DispatchError, StoreError};
use super::super::records::{CallRow, Dispatch, JournalEntry};
use super::super::vault::Place;
use super::super::{Store, now_ms};

/// Each run's calls.
pub struct Journal<'a>(pub(in crate::runs) &'a Store);

impl Journal<'_> {
    /// Journals `call` as dispatched for `owner`'s attempt of the run, using up its approval.
    /// Only a read-only call that an interrupted attempt dispatched without an answer may be
    /// journaled (and so sent) again.
    pub async fn dispatch(
        &self,
        run_id: &str,
        owner: &str,
        call: Dispatch,
    ) -> Result<(), DispatchError> {
        let (run_id, owner) = (run_id.to_string(), owner.to_string());
        self.0
            .call(move |db, vault| {
                let place = Place::Result {
                    run_id: &run_id,
                    seq: call.seq,
                };
                let placeholder = vault.seal(db, place, "null")?;
                db.record_dispatch(&run_id, &owner, &call, &placeholder, now_ms())
            })
            .await
    }

    /// Records the answer to a call `owner`'s attempt dispatched; an attempt that lost its claim
    /// meanwhile records nothing (the call stays dispatched, its outcome unknown to the run).
    pub async fn answer(
        &self,
        run_id: &str,
        owner: &str,
        seq: u64,
        result: &Value,
        ok: bool,
        ms: u64,
    ) -> Result<(), DispatchError> {
        let (run_id, owner, result) = (run_id.to_string(), owner.to_string(), result.to_string());
        self.0
            .call(move |db, vault| {
                let sealed = vault.seal(
                    db,
                    Place::Result {
                        run_id: &run_id,
                        seq,
                    },
                    &result,
                )?;
                db.record_answer(&run_id, &owner, seq, &sealed, ok, ms, now_ms())
            })
            .await
    }

    /// Takes back call `seq` of `owner`'s attempt, dispatched but refused before it reached
    /// its upstream, as if it was never journaled (its approval usable again).
    pub async fn withdraw(&self, run_id: &str, owner: &str, seq: u64) -> Result<(), DispatchError> {
        let (run_id, owner) = (run_id.to_string(), owner.to_string());
        self.0
            .call(move |db, _| db.record_withdrawal(&run_id, &owner, seq))
            .await
    }

    /// The calls of a run in sequence order, their results opened.
    pub async fn entries(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let run_id = run_id.to_string();
        self.0
            .call(move |db, vault| {
                // First, so values an older version stored in the clear are sealed before read.
                vault.unlock(db)?;
                db.journal(&run_id)?
                    .into_iter()
                    .map(|stored| {
                        let mut entry = stored.entry;
                        let place = Place::Result {
                            run_id: &run_id,
                            seq: entry.seq,
                        };
                        entry.result = vault.open_json(db, place, &stored.result)?;
                        Ok(entry)
                    })
                    .collect()
            })
            .await
    }

    /// The calls of a run in sequence order, read without opening their results.
    pub async fn rows(&self, run_id: &str) -> Result<Vec<CallRow>, StoreError> {
        let run_id = run_id.to_string();
        self.0.call(move |db, _| db.call_rows(&run_id)).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::records::{CallState, Claim, Decision, Seen};
    use super::super::super::testing::{begin, pending, store_in, tamper};
    use super::*;

    fn dispatch(seq: u64, digest: &str, mutating: bool) -> Dispatch {
        Dispatch {
            seq,
            address: "counter.write".into(),
            connection: None,
            call_digest: digest.into(),
            mutating,
            uses_approval: false,
        }
    }

    #[tokio::test]
    async fn a_call_is_journaled_before_it_is_answered_and_only_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        let journal = store.journal();
        journal
            .dispatch("run_a", &owner, dispatch(0, "d", true))
            .await
            .unwrap();
        let entries = journal.entries("run_a").await.unwrap();
        assert_eq!(entries[0].state, CallState::Dispatched);
        assert!(entries[0].mutating);
        let again = journal
            .dispatch("run_a", &owner, dispatch(0, "d", true))
            .await
            .unwrap_err();
        assert!(
            matches!(again, DispatchError::AlreadyJournaled { .. }),
            "{again}"
        );
        journal
            .answer(
                "run_a",
                &owner,
                0,
                &serde_json::json!({"content": []}),
                true,
                4,
            )
            .await
            .unwrap();
        let entries = journal.entries("run_a").await.unwrap();
        assert_eq!(
            (entries[0].state, entries[0].ms, entries[0].ok),
            (CallState::Answered, 4, true)
        );
    }

    #[tokio::test]
    async fn only_the_owner_dispatches_and_an_unanswered_read_may_go_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        let journal = store.journal();
        let err = journal
            .dispatch("run_a", "someone|else", dispatch(0, "d", false))
            .await
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
        journal
            .dispatch("run_a", &owner, dispatch(0, "d", false))
            .await
            .unwrap();
        journal
            .dispatch("run_a", &owner, dispatch(1, "d", true))
            .await
            .unwrap();
        // A later attempt, once the lease ran out: the read may be sent again, the write never.
        tamper(
            &store,
            "UPDATE runs SET lease_until_ms = 1 WHERE run_id = 'run_a'",
        );
        let seen = store.runs().claim_record("run_a").await.unwrap().unwrap();
        let Claim::Won { owner: next } = store.runs().take_over("run_a", &seen).await.unwrap()
        else {
            panic!("the expired claim is taken over");
        };
        journal
            .dispatch("run_a", &next, dispatch(0, "d", false))
            .await
            .unwrap();
        let err = journal
            .dispatch("run_a", &next, dispatch(1, "d", true))
            .await
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::AlreadyJournaled { .. }),
            "{err}"
        );
        // Nor a read that is another call at that step.
        let err = journal
            .dispatch("run_a", &next, dispatch(0, "other", false))
            .await
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::AlreadyJournaled { .. }),
            "{err}"
        );
        // The old owner can answer nothing any more.
        let err = journal
            .answer("run_a", &owner, 0, &serde_json::json!({}), true, 1)
            .await
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
    }

    #[tokio::test]
    async fn an_approval_is_used_once_and_only_for_the_call_decided() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(0, "counter.write", "d"))
            .await
            .unwrap();
        let approved = Dispatch {
            uses_approval: true,
            ..dispatch(0, "d", true)
        };
        let err = store
            .journal()
            .dispatch("run_a", &owner, approved.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "undecided: {err}"
        );
        let seen = vec![Seen {
            seq: 0,
            call_digest: "d".into(),
            tool_version: None,
        }];
        store
            .approvals()
            .decide(
                "run_a",
                seen,
                Decision::AllowOnce,
                "terminal",
                Box::new(|_, _| Ok(())),
            )
            .await
            .unwrap();
        let other = Dispatch {
            uses_approval: true,
            ..dispatch(0, "other", true)
        };
        let err = store
            .journal()
            .dispatch("run_a", &owner, other)
            .await
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "another call: {err}"
        );
        store
            .journal()
            .dispatch("run_a", &owner, approved.clone())
            .await
            .unwrap();
        let approval = store.approvals().get("run_a", 0).await.unwrap().unwrap();
        assert!(approval.consumed_at_ms.is_some());
        let err = store
            .journal()
            .dispatch("run_a", &owner, approved)
            .await
            .unwrap_err();
        assert!(
            matches!(err, DispatchError::NotApproved { .. }),
            "used up: {err}"
        );
    }

    #[tokio::test]
    async fn a_write_refused_for_want_of_a_sign_in_is_taken_back_with_its_approval() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(0, "counter.write", "d"))
            .await
            .unwrap();
        let seen = vec![Seen {
            seq: 0,
            call_digest: "d".into(),
            tool_version: None,
        }];
        store
            .approvals()
            .decide(
                "run_a",
                seen,
                Decision::AllowOnce,
                "terminal",
                Box::new(|_, _| Ok(())),
            )
            .await
            .unwrap();
        let approved = Dispatch {
            uses_approval: true,
            ..dispatch(0, "d", true)
        };
        let journal = store.journal();
        journal
            .dispatch("run_a", &owner, approved.clone())
            .await
            .unwrap();
        let err = journal
            .withdraw("run_a", "someone|else", 0)
            .await
            .unwrap_err();
        assert!(matches!(err, DispatchError::NotOwner { .. }), "{err}");
        journal.withdraw("run_a", &owner, 0).await.unwrap();
        assert!(journal.entries("run_a").await.unwrap().is_empty());
        let approval = store.approvals().get("run_a", 0).await.unwrap().unwrap();
        assert!(approval.consumed_at_ms.is_none());
        // Sent once after the sign-in, with the approval the person gave.
        journal.dispatch("run_a", &owner, approved).await.unwrap();
        let entries = journal.entries("run_a").await.unwrap();
        assert_eq!(entries[0].state, CallState::Dispatched);
    }
}
