//! The watch behind `notifications/tools/list_changed` in direct mode: the listing a client
//! sees changes when a source lists new tools, when the config's policy hides or shows one,
//! or when a source connects. Neither the catalogue nor the policy sends a change signal
//! (both are read on demand), so each client's listing is looked at again every second and
//! compared by digest; the client is told only when what it would be listed changed.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often the listing is looked at again.
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// Calls `notify` each time `fingerprint` (the digest of what the client would be listed now)
/// changes, until `stop` is cancelled, `gone` says the client went away, or `notify` fails.
pub async fn follow<F, N, Fut, G>(fingerprint: F, notify: N, gone: G, stop: CancellationToken)
where
    F: Fn() -> String,
    N: Fn() -> Fut,
    Fut: Future<Output = bool>,
    G: Fn() -> bool,
{
    let mut seen = fingerprint();
    loop {
        tokio::select! {
            () = tokio::time::sleep(LOOK_AGAIN) => {}
            () = stop.cancelled() => return,
        }
        if gone() {
            return;
        }
        let now = fingerprint();
        if now != seen {
            seen = now;
            if !notify().await {
                return;
            }
        }
    }
}
