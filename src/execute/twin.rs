//! The run an identical direct call left behind, to go on with instead of starting anew. A
//! direct call that needs a person pauses its one-call run; the same call sent again — the same
//! script, in the same profile, from the same caller (client, and bearer token over HTTP) —
//! goes on with that run, so it runs once the person allowed it and says again that it waits
//! while they have not. A run whose process died while its call was out is gone on with too, so
//! the call reports that its outcome is unknown instead of being sent a second time.
//!
//! Only runs started within an approval's lifetime count: an allowance nobody used for longer
//! never makes a later call run without asking. Identical calls in one process take turns
//! ([`Turns`]), so several sent at once make one run, not one each.

use std::hash::{DefaultHasher, Hash, Hasher};

use tokio::sync::{Mutex, MutexGuard};

use super::Executor;
use crate::runs::{APPROVAL_TTL, now_ms};

/// How many of the latest runs are looked through: a person decides within the approval's
/// 30 minutes, and a waiting run is among the latest far more often than not.
const RECENT_RUNS: usize = 200;

/// States a run can be gone on with by the same call: waiting for a person or a sign-in, or
/// left running by a process that died.
const RESUMABLE: &[&str] = &["awaiting_approval", "awaiting_connection", "interrupted"];

/// One lock per stripe of calls: identical calls always meet on the same one. Distinct calls
/// sharing a stripe only wait for each other's start, never for a person.
const STRIPES: usize = 64;

/// The turns identical direct calls take in this process.
pub struct Turns(Vec<Mutex<()>>);

impl Default for Turns {
    fn default() -> Turns {
        Turns((0..STRIPES).map(|_| Mutex::new(())).collect())
    }
}

impl Executor {
    /// Waits for this call's turn: held while looking for its twin and starting or resuming
    /// the run (until it finishes or pauses), so an identical call sent meanwhile finds the run
    /// this one left rather than start its own.
    pub async fn twin_turn(&self, caller: Option<&str>, code: &str) -> MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        (caller, code, &self.profile).hash(&mut hasher);
        let stripe = (hasher.finish() % STRIPES as u64) as usize;
        self.twin_turns.0[stripe].lock().await
    }

    /// The latest recent run of this profile and `caller` whose script is `code` and that the
    /// call goes on with (see the module). A store that cannot say is logged and counts as
    /// none: the call then asks again.
    pub async fn paused_twin(&self, code: &str, caller: Option<&str>) -> Option<String> {
        // Runs are stored with secrets blanked, so the script is compared the same way.
        let code = self.redaction().clean(code);
        let summaries = match self.store.runs().summaries(RECENT_RUNS).await {
            Ok(summaries) => summaries,
            Err(e) => {
                tracing::warn!("cannot look for a run waiting on the same call: {e}");
                return None;
            }
        };
        let since = now_ms().saturating_sub(APPROVAL_TTL.as_millis() as u64);
        for summary in summaries {
            if !RESUMABLE.contains(&summary.status.as_str())
                || summary.profile != self.profile
                || summary.client.as_deref() != caller
                || summary.created_at_ms < since
            {
                continue;
            }
            match self.store.runs().get(&summary.run_id).await {
                Ok(Some(record)) if record.code == code => return Some(summary.run_id),
                Ok(_) => {}
                Err(e) => tracing::warn!("cannot read run {}: {e}", summary.run_id),
            }
        }
        None
    }
}
