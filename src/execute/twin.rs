//! The run an identical direct call left waiting for a person: a direct call that needs
//! approval pauses its one-call run, and the same call sent again (the same script, in the
//! same profile) goes on with that run instead of asking anew, so it runs once the person
//! allowed it, and says again that it waits while they have not.

use super::Executor;

/// How many of the latest runs are looked through: a person decides within the approval's
/// 30 minutes, and a waiting run is among the latest far more often than not.
const RECENT_RUNS: usize = 200;

impl Executor {
    /// The latest run of this profile waiting for a person whose script is `code`, if any.
    /// A store that cannot say is logged and counts as none: the call then asks again.
    pub async fn paused_twin(&self, code: &str) -> Option<String> {
        // Runs are stored with secrets blanked, so the script is compared the same way.
        let code = self.redaction().clean(code);
        let summaries = match self.store.runs().summaries(RECENT_RUNS).await {
            Ok(summaries) => summaries,
            Err(e) => {
                tracing::warn!("cannot look for a run waiting on the same call: {e}");
                return None;
            }
        };
        for summary in summaries {
            if summary.status != "awaiting_approval" || summary.profile != self.profile {
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
