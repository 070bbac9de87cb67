//! The run an identical direct call left behind, to go on with instead of starting anew. A
//! direct call that needs a person pauses its one-call run; the same call sent again — the same
//! script, in the same profile, from the same caller (client, and bearer token over HTTP) —
//! goes on with that run, so it runs once the person allowed it and says again that it waits
//! while they have not. A run whose process died while its call was out is gone on with too, so
//! the call reports that its outcome is unknown instead of being sent a second time.
//!
//! Only runs started within an approval's lifetime count: an allowance nobody used for longer
//! never makes a later call run without asking. Identical calls take turns, so several sent at
//! once make one run, not one each: in one process on a lock ([`Turns`]), and across the
//! processes sharing the store (replicas of one team's hub) on a turn kept in the store, held
//! with a lease so a process that dies holding it delays the others by the lease at most.
//! Where twins exist anyway (made before turns were shared, or while the store could not be
//! asked), the call goes on with one a person already decided, so a decision is never left
//! behind on a run no call reaches.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio::task::JoinHandle;

use super::Executor;
use crate::model::tool::json_digest;
use crate::runs::{APPROVAL_TTL, RENEW_EVERY, Store, TokenRecord};

/// How many of the latest runs are looked through first: a person decides within the
/// approval's 30 minutes, and a waiting run is among the latest far more often than not. When
/// all of them are that recent, four times as many are read, and so on up to
/// [`MOST_RUNS`], so other callers' calls cannot push a waiting run out of reach cheaply.
const RECENT_RUNS: usize = 200;

/// The most runs looked through for one call.
const MOST_RUNS: usize = 51_200;

/// States a run can be gone on with by the same call: waiting for a person or a sign-in, or
/// left running by a process that died.
const RESUMABLE: &[&str] = &["awaiting_approval", "awaiting_connection", "interrupted"];

/// How often a call waiting for the store's turn asks again.
const TURN_POLL: Duration = Duration::from_millis(50);

/// The turns identical direct calls take in this process: one lock per call (keyed by what
/// makes calls twins), held while the call runs, so only identical calls wait for each other —
/// never another client's calls, however slow. A lock nobody holds or waits for is let go.
#[derive(Default)]
pub struct Turns(std::sync::Mutex<HashMap<String, Weak<Mutex<()>>>>);

impl Turns {
    /// The lock of the calls keyed `key`.
    fn lock_for(&self, key: &str) -> Arc<Mutex<()>> {
        let mut locks = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lock) = locks.get(key).and_then(Weak::upgrade) {
            return lock;
        }
        locks.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::new(Mutex::new(()));
        locks.insert(key.to_string(), Arc::downgrade(&lock));
        lock
    }
}

/// A call's turn: this process's lock and, while the store can be asked, the turn in the
/// store, renewed until the call is done with it and then given up.
pub struct Turn {
    _local: OwnedMutexGuard<()>,
    shared: Option<SharedTurn>,
}

struct SharedTurn {
    store: Store,
    key: String,
    owner: String,
    renew: JoinHandle<()>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some(shared) = self.shared.take() else {
            return;
        };
        shared.renew.abort();
        // Given up in the background: the call's answer need not wait for it, and a turn left
        // behind (no runtime to give it up on) only delays the next identical call by its
        // lease.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Err(e) = shared
                .store
                .runs()
                .end_turn(&shared.key, &shared.owner)
                .await
            {
                tracing::warn!("cannot give up a direct call's turn in the store: {e}");
            }
        });
    }
}

impl Executor {
    /// Waits for this call's turn: held while looking for its twin and starting or resuming
    /// the run (until it finishes or pauses), so an identical call sent meanwhile, to this
    /// process or another sharing the store, finds the run this one left rather than start its
    /// own. A store that cannot be asked is logged, and only this process's turn is taken.
    pub async fn twin_turn(&self, caller: Option<&str>, code: &str) -> Turn {
        // Keyed by what makes calls twins; the script blanked as runs store it, and digested
        // so the store never holds it in the clear.
        let key = json_digest(&json!([
            self.profile,
            caller,
            self.redaction().for_script().clean(code)
        ]));
        let local = self.twin_turns.lock_for(&key).lock_owned().await;
        Turn {
            _local: local,
            shared: self.shared_turn(key).await,
        }
    }

    async fn shared_turn(&self, key: String) -> Option<SharedTurn> {
        let runs = self.store.runs();
        let owner = runs.new_turn_owner();
        loop {
            match runs.take_turn(&key, &owner).await {
                Ok(true) => break,
                Ok(false) => tokio::time::sleep(TURN_POLL).await,
                Err(e) => {
                    tracing::warn!(
                        "cannot take a direct call's turn in the store, so only calls to this process take turns: {e}"
                    );
                    return None;
                }
            }
        }
        let (store, renew_key, renew_owner) = (self.store.clone(), key.clone(), owner.clone());
        let renew = tokio::spawn(async move {
            loop {
                tokio::time::sleep(RENEW_EVERY).await;
                match store.runs().take_turn(&renew_key, &renew_owner).await {
                    Ok(true) => {}
                    // Its lease ran out and another call took it: nothing left to renew.
                    Ok(false) => return,
                    Err(e) => tracing::warn!("cannot renew a direct call's turn: {e}"),
                }
            }
        });
        Some(SharedTurn {
            store: self.store.clone(),
            key,
            owner,
            renew,
        })
    }

    /// The recent run of this profile and `caller` whose script is `code` and that the call
    /// goes on with (see the module): the latest one whose waiting call a person decided, else
    /// the latest. Only a run `token` may go on with counts: one a revoked token of the same
    /// name left is not this token's. A store that cannot say is logged and counts as none:
    /// the call then asks again.
    pub async fn paused_twin(
        &self,
        code: &str,
        caller: Option<&str>,
        token: Option<&TokenRecord>,
    ) -> Option<String> {
        // Runs are stored with secrets blanked, so the script is compared the same way.
        let code = self.redaction().for_script().clean(code);
        // Runs are dated by the store's clock, which another hub on a shared store writes too.
        let now = self.store.runs().clock_or_local_ms().await;
        let since = now.saturating_sub(APPROVAL_TTL.as_millis() as u64);
        let mut limit = RECENT_RUNS;
        let summaries = loop {
            let summaries = match self.store.runs().summaries(limit).await {
                Ok(summaries) => summaries,
                Err(e) => {
                    tracing::warn!("cannot look for a run waiting on the same call: {e}");
                    return None;
                }
            };
            // Newest first: once the oldest read is older than an approval lives, or there are
            // no more, every run a call could go on with was read.
            let reached = summaries.len() < limit
                || summaries.last().is_some_and(|s| s.created_at_ms < since);
            if reached || limit >= MOST_RUNS {
                break summaries;
            }
            limit *= 4;
        };
        let mut latest = None;
        for summary in summaries {
            if !RESUMABLE.contains(&summary.status.as_str())
                || summary.profile != self.profile
                || summary.client.as_deref() != caller
                || summary.created_at_ms < since
                || !super::caller::may_go_on(caller, summary.created_at_ms, token)
            {
                continue;
            }
            match self.store.runs().get(&summary.run_id).await {
                Ok(Some(record)) if record.code == code => {
                    if self.is_decided(&summary.run_id).await {
                        return Some(summary.run_id);
                    }
                    latest.get_or_insert(summary.run_id);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("cannot read run {}: {e}", summary.run_id),
            }
        }
        latest
    }

    /// Whether a person decided a call `run_id` waits on, and the decision was not used yet.
    async fn is_decided(&self, run_id: &str) -> bool {
        match self.store.approvals().of_run(run_id).await {
            Ok(approvals) => approvals
                .iter()
                .any(|a| a.decision.is_some() && a.consumed_at_ms.is_none()),
            Err(e) => {
                tracing::warn!("cannot read the approvals of run {run_id}: {e}");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::catalog::cache::ListingCache;
    use crate::catalog::live::LiveCatalog;
    use crate::config::Settings;
    use crate::credentials::NoSecretStore;
    use crate::runs::testing::{pending, store_in};
    use crate::runs::{Decision, NewRun, Seen};
    use crate::sources::Sources;

    const CODE: &str = "return await ledger.write({\"key\":\"once\"})";

    /// A run of `CODE` from `agent`, paused on its one call.
    async fn waiting(store: &Store, run_id: &str) {
        waiting_from(store, run_id, "agent").await;
    }

    /// A run of `CODE` from `client`, paused on its one call.
    async fn waiting_from(store: &Store, run_id: &str, client: &str) {
        let run = NewRun {
            run_id: run_id.into(),
            code: CODE.into(),
            client: Some(client.into()),
            ..NewRun::default()
        };
        let owner = store.runs().begin(run).await.unwrap();
        store
            .approvals()
            .record_pending(run_id, &owner, pending(0, "ledger.write", "d0"))
            .await
            .unwrap();
        store
            .runs()
            .finish(run_id, &owner, "awaiting_approval", &json!({}))
            .await
            .unwrap();
    }

    /// A store in `dir` and an executor on it, with no sources.
    async fn executor_in(dir: &std::path::Path) -> (Store, Executor) {
        let store = store_in(dir).await;
        let settings = Settings::empty();
        let sources = Sources::start(Vec::new(), Arc::new(NoSecretStore));
        let catalog = LiveCatalog::start(
            settings.clone(),
            ListingCache::new(dir.join("cache")),
            sources,
        );
        let executor = Executor::new(catalog, Arc::new(settings), store.clone());
        (store, executor)
    }

    #[tokio::test]
    async fn a_run_a_revoked_token_left_is_not_gone_on_with_by_a_new_token_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let (store, executor) = executor_in(dir.path()).await;
        let client = "agent · token carol";
        waiting_from(&store, "run_old", client).await;
        let started = store.runs().get("run_old").await.unwrap().unwrap();
        let old = TokenRecord {
            name: "carol".into(),
            profile: None,
            allow: Vec::new(),
            created_at_ms: started.created_at_ms,
            expires_at_ms: None,
            revoked_at_ms: None,
        };
        let successor = TokenRecord {
            created_at_ms: started.created_at_ms + 1,
            ..old.clone()
        };
        assert_eq!(
            executor
                .paused_twin(CODE, Some(client), Some(&old))
                .await
                .as_deref(),
            Some("run_old")
        );
        assert_eq!(
            executor
                .paused_twin(CODE, Some(client), Some(&successor))
                .await,
            None,
            "the new token's call starts its own run"
        );
    }

    #[tokio::test]
    async fn only_identical_calls_wait_for_each_others_turn() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, executor) = executor_in(dir.path()).await;
        // Turns held by a hundred distinct calls (slow ones, as if their upstream hung) keep
        // no other call waiting; the same call as one of them waits.
        let mut held = Vec::new();
        for i in 0..100 {
            let code = format!("return await slow.call({{ i: {i} }})");
            let turn = tokio::time::timeout(
                Duration::from_secs(30),
                executor.twin_turn(Some("agent"), &code),
            )
            .await;
            held.push(turn.unwrap_or_else(|_| panic!("call {i} waited for another call")));
        }
        let twin = tokio::time::timeout(
            Duration::from_millis(200),
            executor.twin_turn(Some("agent"), "return await slow.call({ i: 7 })"),
        )
        .await;
        assert!(twin.is_err(), "an identical call takes its turn after");
        held.clear();
        let free = executor.twin_turn(Some("agent"), "return await slow.call({ i: 7 })");
        drop(
            tokio::time::timeout(Duration::from_secs(30), free)
                .await
                .unwrap(),
        );
    }

    #[tokio::test]
    async fn a_twin_a_person_decided_is_gone_on_with_before_a_later_undecided_one() {
        let dir = tempfile::tempdir().unwrap();
        let (store, executor) = executor_in(dir.path()).await;
        // Two twins, as replicas made them before they took turns in the store.
        waiting(&store, "run_older").await;
        waiting(&store, "run_newer").await;
        assert_eq!(
            executor
                .paused_twin(CODE, Some("agent"), None)
                .await
                .as_deref(),
            Some("run_newer"),
            "undecided alike: the latest"
        );
        store
            .approvals()
            .decide(
                "run_older",
                vec![Seen {
                    seq: 0,
                    call_digest: "d0".into(),
                    tool_version: None,
                }],
                Decision::AllowOnce,
                "terminal",
                Box::new(|_, _| Ok(())),
            )
            .await
            .unwrap();
        assert_eq!(
            executor
                .paused_twin(CODE, Some("agent"), None)
                .await
                .as_deref(),
            Some("run_older"),
            "the approval is reached"
        );
        assert_eq!(executor.paused_twin(CODE, Some("other"), None).await, None);
    }

    #[tokio::test]
    async fn other_callers_runs_do_not_push_a_waiting_run_out_of_reach() {
        let dir = tempfile::tempdir().unwrap();
        let (store, executor) = executor_in(dir.path()).await;
        waiting(&store, "run_waiting").await;
        for i in 0..(RECENT_RUNS * 2) {
            let run = NewRun {
                run_id: format!("run_flood_{i}"),
                code: "return 1".into(),
                client: Some("flooder".into()),
                ..NewRun::default()
            };
            let owner = store.runs().begin(run).await.unwrap();
            store
                .runs()
                .finish(&format!("run_flood_{i}"), &owner, "completed", &json!({}))
                .await
                .unwrap();
        }
        assert_eq!(
            executor
                .paused_twin(CODE, Some("agent"), None)
                .await
                .as_deref(),
            Some("run_waiting")
        );
    }
}
