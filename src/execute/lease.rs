//! Keeping a run's claim alive while it runs: a task renews the lease every
//! [`RENEW_EVERY`](crate::runs::RENEW_EVERY), so other processes see the run as running and
//! never take it over. Should the claim be lost all the same (this process stalled past the
//! lease and another took the run over), the run is cancelled: the journal already refuses its
//! calls, and stopping at once saves it from running on for nothing.

use std::sync::Arc;

use tokio_util::sync::{CancellationToken, DropGuard};

use crate::runs::{RENEW_EVERY, RunsStore, now_ms};
use crate::sandbox::CancelToken;

/// Renews the claim until dropped.
pub struct Lease {
    _stop: DropGuard,
}

impl Lease {
    /// Starts renewing `owner`'s claim on `run_id`; cancels `run` if the claim is lost.
    pub fn keep(store: Arc<RunsStore>, run_id: String, owner: String, run: CancelToken) -> Lease {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stopped.cancelled() => return,
                    () = tokio::time::sleep(RENEW_EVERY) => {}
                }
                // SQLite may wait on another process's write: off the async threads.
                let renewed = {
                    let (store, run_id, owner) = (store.clone(), run_id.clone(), owner.clone());
                    tokio::task::spawn_blocking(move || {
                        store.renew_claim(&run_id, &owner, now_ms())
                    })
                    .await
                };
                match renewed {
                    Ok(Ok(true)) => {}
                    Ok(Ok(false)) => {
                        tracing::warn!(
                            "run {run_id} was taken over by another process; this attempt stops"
                        );
                        run.cancel();
                        return;
                    }
                    // The store may come back; if it does not, the journal refuses the calls.
                    Ok(Err(e)) => tracing::warn!("the claim on run {run_id} was not renewed: {e}"),
                    Err(e) => tracing::warn!("the claim on run {run_id} was not renewed: {e}"),
                }
            }
        });
        Lease {
            _stop: stop.drop_guard(),
        }
    }
}
