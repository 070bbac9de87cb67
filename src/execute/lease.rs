//! Keeping a run's claim alive while it runs: a task renews the lease every
//! [`RENEW_EVERY`](crate::runs::RENEW_EVERY), so other processes see the run as running and
//! never take it over. Should the claim be lost all the same (this process stalled past the
//! lease and another took the run over), the run is cancelled: the journal already refuses its
//! calls, and stopping at once saves it from running on for nothing.

use tokio_util::sync::{CancellationToken, DropGuard};

use crate::runs::{RENEW_EVERY, Store};
use crate::sandbox::CancelToken;

/// Renews the claim until dropped.
pub struct Lease {
    _stop: DropGuard,
}

impl Lease {
    /// Starts renewing `owner`'s claim on `run_id`; cancels `run` if the claim is lost.
    pub fn keep(store: Store, run_id: String, owner: String, run: CancelToken) -> Lease {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stopped.cancelled() => return,
                    () = tokio::time::sleep(RENEW_EVERY) => {}
                }
                match store.runs().renew(&run_id, &owner).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(
                            "run {run_id} was taken over by another process; this attempt stops"
                        );
                        run.cancel();
                        return;
                    }
                    // The store may come back; if it does not, the journal refuses the calls.
                    Err(e) => tracing::warn!("the claim on run {run_id} was not renewed: {e}"),
                }
            }
        });
        Lease {
            _stop: stop.drop_guard(),
        }
    }
}
