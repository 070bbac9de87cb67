//! The `runs` handle: starting a run, claiming it (a resume, a takeover), renewing and giving up
//! the claim when it ends, reading it back, listing and clearing runs; and the turns identical
//! direct calls take before they look for a run to go on with.

use serde_json::Value;

use super::super::claims::{lease_end, new_owner, owner_is_gone};
use super::super::error::StoreError;
use super::super::records::{Claim, ClaimRecord, NewRun, RunRecord, RunSummary};
use super::super::vault::Place;
use super::super::{Store, now_ms};

/// Runs in the store.
pub struct Runs<'a>(pub(in crate::runs) &'a Store);

impl Runs<'_> {
    /// Records a new run, claimed by the caller (see `claims`); returns the claim's owner.
    pub async fn begin(&self, run: NewRun) -> Result<String, StoreError> {
        let (owner, recorded) = self.begin_queued(run);
        recorded.await?;
        Ok(owner)
    }

    /// [`begin`](Self::begin), queued now: the claim's owner at once, and whether the run was
    /// recorded to await later, so the run can start meanwhile. The store does what it is
    /// asked in order, so all the run asks of it afterwards (a call journaled as dispatched,
    /// an approval) finds the run recorded, or fails with it: no call goes out for a run the
    /// store did not record.
    pub fn begin_queued(
        &self,
        run: NewRun,
    ) -> (
        String,
        impl Future<Output = Result<(), StoreError>> + Send + 'static,
    ) {
        let owner = new_owner();
        let claimant = owner.clone();
        let recorded = self.0.queue(move |db, vault| {
            let now = db.clock_ms()?;
            let code = vault.seal(
                db,
                Place::Script {
                    run_id: &run.run_id,
                },
                &run.code,
            )?;
            db.insert_run(&run, &code, &claimant, lease_end(now), now)
        });
        (owner, recorded)
    }

    /// A run with its script and envelope opened.
    pub async fn get(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let run_id = run_id.to_string();
        self.0
            .call(move |db, vault| {
                // First, so values an older version stored in the clear are sealed before read.
                vault.unlock(db)?;
                let Some(stored) = db.run(&run_id)? else {
                    return Ok(None);
                };
                let mut record = stored.record;
                record.code = vault.open(db, Place::Script { run_id: &run_id }, &stored.code)?;
                if let Some(envelope) = &stored.envelope {
                    record.envelope =
                        Some(vault.open_json(db, Place::Envelope { run_id: &run_id }, envelope)?);
                }
                Ok(Some(record))
            })
            .await
    }

    /// The run's status and claim, without opening anything sealed (so deciding on a run
    /// needs no key).
    pub async fn claim_record(&self, run_id: &str) -> Result<Option<ClaimRecord>, StoreError> {
        let run_id = run_id.to_string();
        self.0.call(move |db, _| db.claim_record(&run_id)).await
    }

    /// Claims a run that is not running (it paused for approval, or an older version left it
    /// `interrupted`) while it is still `status`, so this caller alone goes on with it.
    pub async fn claim(&self, run_id: &str, status: &str) -> Result<Claim, StoreError> {
        let (run_id, status) = (run_id.to_string(), status.to_string());
        self.0
            .call(move |db, _| {
                let owner = new_owner();
                let now_ms = db.clock_ms()?;
                let won = db.claim(&run_id, &status, &owner, lease_end(now_ms), now_ms)?;
                Ok(claimed(owner, won))
            })
            .await
    }

    /// Takes over a `running` run whose owner is gone, as `seen` showed it: the claim changes
    /// only if nobody renewed, finished or took over the run since.
    pub async fn take_over(&self, run_id: &str, seen: &ClaimRecord) -> Result<Claim, StoreError> {
        let (run_id, seen) = (run_id.to_string(), seen.clone());
        self.0
            .call(move |db, _| {
                let now_ms = db.clock_ms()?;
                if !seen.is_interrupted_at(now_ms) {
                    return Ok(Claim::Lost);
                }
                let owner = new_owner();
                let won = db.take_over(&run_id, &seen, &owner, lease_end(now_ms), now_ms)?;
                Ok(claimed(owner, won))
            })
            .await
    }

    /// Extends `owner`'s lease; false when the run is no longer its (taken over, or finished).
    pub async fn renew(&self, run_id: &str, owner: &str) -> Result<bool, StoreError> {
        let (run_id, owner) = (run_id.to_string(), owner.to_string());
        self.0
            .call(move |db, _| db.renew_claim(&run_id, &owner, lease_end(db.clock_ms()?)))
            .await
    }

    /// The time by the store's clock, which leases are read by (see
    /// [`RunRecords::clock_ms`](crate::runs::backend::RunRecords::clock_ms)).
    pub async fn clock_ms(&self) -> Result<u64, StoreError> {
        self.0.call(move |db, _| db.clock_ms()).await
    }

    /// The store's clock, or this machine's when the store cannot say: for what only shows a
    /// time or picks recent rows by it, where a store that is down fails the next call anyway.
    pub async fn clock_or_local_ms(&self) -> u64 {
        self.clock_ms().await.unwrap_or_else(|_| now_ms())
    }

    /// A new owner for a turn: this process's identity, by which another process on this
    /// machine can tell when it is gone, and a fresh nonce.
    pub fn new_turn_owner(&self) -> String {
        new_owner()
    }

    /// Takes, or renews, the turn `key` for `owner` (from [`new_turn_owner`](Self::new_turn_owner))
    /// with a lease as long as a run's claim; false while another owner holds it. A holder
    /// whose process is known to be dead (killed mid-call) gives way at once rather than when
    /// its lease runs out, as a run's claim does.
    pub async fn take_turn(&self, key: &str, owner: &str) -> Result<bool, StoreError> {
        let (key, owner) = (key.to_string(), owner.to_string());
        self.0
            .call(move |db, _| {
                let now_ms = db.clock_ms()?;
                if db.take_turn(&key, &owner, None, now_ms, lease_end(now_ms))? {
                    return Ok(true);
                }
                match db.turn_holder(&key)? {
                    Some(holder) if owner_is_gone(&holder) => {
                        db.take_turn(&key, &owner, Some(&holder), now_ms, lease_end(now_ms))
                    }
                    _ => Ok(false),
                }
            })
            .await
    }

    /// Gives up `owner`'s turn `key`.
    pub async fn end_turn(&self, key: &str, owner: &str) -> Result<(), StoreError> {
        let (key, owner) = (key.to_string(), owner.to_string());
        self.0.call(move |db, _| db.end_turn(&key, &owner)).await
    }

    /// Records how `owner`'s attempt of a run ended (or that it paused) and gives up the
    /// claim. False, and nothing written, when the run is no longer `owner`'s: another process
    /// took it over, and its outcome is the one that counts.
    pub async fn finish(
        &self,
        run_id: &str,
        owner: &str,
        status: &str,
        envelope: &Value,
    ) -> Result<bool, StoreError> {
        let (run_id, owner, status) = (run_id.to_string(), owner.to_string(), status.to_string());
        let envelope = envelope.to_string();
        self.0
            .call(move |db, vault| {
                let sealed = vault.seal(db, Place::Envelope { run_id: &run_id }, &envelope)?;
                db.finish_run(&run_id, &owner, &status, &sealed, db.clock_ms()?)
            })
            .await
    }

    /// The ids of at most `limit` runs whose id starts with `prefix`, newest first: how a
    /// person's shortened run id is resolved.
    pub async fn ids_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let prefix = prefix.to_string();
        self.0
            .call(move |db, _| db.run_ids_with_prefix(&prefix, limit))
            .await
    }

    /// The most recent runs, newest first; a run whose process is gone mid-run is listed as
    /// `interrupted`.
    pub async fn summaries(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        self.0
            .call(move |db, _| {
                let now = db.clock_ms()?;
                Ok(db
                    .run_summaries(limit)?
                    .into_iter()
                    .map(|(mut summary, claim)| {
                        if claim.is_interrupted_at(now) {
                            summary.status = "interrupted".to_string();
                        }
                        summary
                    })
                    .collect())
            })
            .await
    }

    /// Deletes every run with its journal, approvals and audit trail, the used elicitation
    /// states, and the record of the runs' key (and the key file), so the next run starts a
    /// new history with a new key. Tokens and source statuses stay. Returns how many runs were
    /// deleted.
    pub async fn clear(&self) -> Result<usize, StoreError> {
        self.0
            .call(move |db, vault| {
                let deleted = db.clear_runs()?;
                vault.forget()?;
                Ok(deleted)
            })
            .await
    }
}

fn claimed(owner: String, won: bool) -> Claim {
    if won {
        Claim::Won { owner }
    } else {
        Claim::Lost
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::records::{CallState, JournalEntry};
    use super::super::super::testing::{begin, journal_call, shared, store_in, tamper};
    use super::*;

    fn entry(seq: u64, address: &str, result: Value) -> JournalEntry {
        JournalEntry {
            seq,
            address: address.into(),
            connection: None,
            call_digest: "d".into(),
            result,
            ok: true,
            ms: 3,
            state: CallState::Answered,
            mutating: true,
        }
    }

    #[tokio::test]
    async fn runs_and_journals_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = store_in(dir.path()).await;
            let owner = begin(&store, "run_a", "return 1").await;
            journal_call(
                &store,
                "run_a",
                &owner,
                &entry(0, "everything.echo", json!({"content": []})),
            )
            .await;
            let finished = store
                .runs()
                .finish(
                    "run_a",
                    &owner,
                    "completed",
                    &json!({"status": "completed"}),
                )
                .await
                .unwrap();
            assert!(finished);
        }
        let store = store_in(dir.path()).await;
        let run = store.runs().get("run_a").await.unwrap().unwrap();
        assert_eq!(
            (run.status.as_str(), run.seed, run.code.as_str()),
            ("completed", 1, "return 1")
        );
        assert_eq!(run.envelope.unwrap()["status"], "completed");
        let journal = store.journal().entries("run_a").await.unwrap();
        assert_eq!(journal.len(), 1);
        assert_eq!(journal[0].address, "everything.echo");
        assert!(store.runs().get("run_missing").await.unwrap().is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn only_one_of_many_resumes_claims_a_paused_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        let paused = json!({"status": "awaiting_approval"});
        assert!(
            store
                .runs()
                .finish("run_a", &owner, "awaiting_approval", &paused)
                .await
                .unwrap()
        );
        let claims = (0..8).map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .runs()
                    .claim("run_a", "awaiting_approval")
                    .await
                    .unwrap()
            })
        });
        let mut won = Vec::new();
        for claim in claims {
            won.push(claim.await.unwrap());
        }
        let winners = won
            .iter()
            .filter(|c| matches!(c, Claim::Won { .. }))
            .count();
        assert_eq!(winners, 1, "{won:?}");
        let record = store.runs().claim_record("run_a").await.unwrap().unwrap();
        assert_eq!((record.status.as_str(), record.attempt), ("running", 2));
    }

    #[tokio::test]
    async fn a_live_claim_is_never_taken_over_and_an_expired_one_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let first = begin(&store, "run_a", "code").await;
        let now = store.runs().clock_ms().await.unwrap();
        let seen = store.runs().claim_record("run_a").await.unwrap().unwrap();
        assert!(!seen.is_interrupted_at(now), "this process is alive");
        assert_eq!(
            store.runs().take_over("run_a", &seen).await.unwrap(),
            Claim::Lost
        );

        // Its owner stopped renewing a lease ago.
        tamper(
            &store,
            "UPDATE runs SET lease_until_ms = 1 WHERE run_id = 'run_a'",
        );
        let seen = store.runs().claim_record("run_a").await.unwrap().unwrap();
        let Claim::Won { owner: second } = store.runs().take_over("run_a", &seen).await.unwrap()
        else {
            panic!("an expired lease is taken over");
        };
        // A second taker saw the same, now stale, record.
        assert_eq!(
            store.runs().take_over("run_a", &seen).await.unwrap(),
            Claim::Lost
        );
        // The old owner can neither renew nor finish: its claim is gone.
        assert!(!store.runs().renew("run_a", &first).await.unwrap());
        assert!(store.runs().renew("run_a", &second).await.unwrap());
        let finished = store
            .runs()
            .finish("run_a", &first, "completed", &json!({}))
            .await
            .unwrap();
        assert!(!finished);
        let record = store.runs().claim_record("run_a").await.unwrap().unwrap();
        assert_eq!((record.status.as_str(), record.attempt), ("running", 2));
    }

    #[tokio::test]
    async fn listings_count_calls_and_name_interrupted_runs() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        begin(&store, "run_b", "code").await;
        for (seq, address) in [(0, "counter.write"), (1, "counter.publish")] {
            journal_call(&store, "run_a", &owner, &entry(seq, address, json!({}))).await;
        }
        tamper(
            &store,
            "UPDATE runs SET lease_until_ms = 1 WHERE run_id = 'run_b'",
        );
        let summaries = store.runs().summaries(10).await.unwrap();
        let rows: Vec<_> = summaries
            .iter()
            .map(|s| {
                (
                    s.run_id.as_str(),
                    s.status.as_str(),
                    s.calls,
                    s.last_call.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("run_b", "interrupted", 0, None),
                ("run_a", "running", 2, Some("counter.publish"))
            ]
        );
        assert_eq!(store.runs().summaries(1).await.unwrap().len(), 1);

        // Listing calls opens no result: a result that would not open does not matter there.
        let garbage = if shared() {
            "UPDATE calls SET result = '\\x00'::bytea WHERE seq = 0"
        } else {
            "UPDATE calls SET result = x'00' WHERE seq = 0"
        };
        tamper(&store, garbage);
        let rows = store.journal().rows("run_a").await.unwrap();
        assert_eq!(rows.len(), 2);
        assert!(store.journal().entries("run_a").await.is_err());
    }

    #[tokio::test]
    async fn clearing_the_runs_keeps_the_tokens_and_starts_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "return 1").await;
        journal_call(&store, "run_a", &owner, &entry(0, "a.b", json!(1))).await;
        store
            .bearer_tokens()
            .create("laptop", None, None, &[])
            .await
            .unwrap();
        let key_file = dir.path().join(crate::runs::KEY_FILE_NAME);
        let old_key = std::fs::read(&key_file).unwrap();

        assert_eq!(store.runs().clear().await.unwrap(), 1);
        assert!(!key_file.exists());
        assert_eq!(
            store.bearer_tokens().list().await.unwrap().len(),
            1,
            "tokens are kept"
        );
        assert!(store.runs().get("run_a").await.unwrap().is_none());
        assert!(store.journal().entries("run_a").await.unwrap().is_empty());

        begin(&store, "run_b", "return 2").await;
        assert_ne!(std::fs::read(&key_file).unwrap(), old_key, "a new key");
        let reopened = store_in(dir.path()).await;
        let run = reopened.runs().get("run_b").await.unwrap().unwrap();
        assert_eq!(run.code, "return 2");
    }

    #[tokio::test]
    async fn a_turn_is_held_by_one_owner_until_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let runs = store.runs();
        assert!(runs.take_turn("call", "a").await.unwrap());
        assert!(!runs.take_turn("call", "b").await.unwrap());
        // The holder renews it by taking it again; another key is another turn.
        assert!(runs.take_turn("call", "a").await.unwrap());
        assert!(runs.take_turn("other", "b").await.unwrap());
        // Only the holder gives it up.
        runs.end_turn("call", "b").await.unwrap();
        assert!(!runs.take_turn("call", "b").await.unwrap());
        runs.end_turn("call", "a").await.unwrap();
        assert!(runs.take_turn("call", "b").await.unwrap());
        // A holder whose process died gives way before its lease runs out.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let mine = runs.new_turn_owner();
        let parts: Vec<&str> = mine.split('|').collect();
        let dead = format!("{}|{}|{}|{pid}|n", parts[0], parts[1], parts[2]);
        if parts[..3].iter().all(|p| !p.is_empty()) {
            assert!(runs.take_turn("killed", &dead).await.unwrap());
            assert!(runs.take_turn("killed", &mine).await.unwrap());
        }
    }
}
