//! Waiting for the signals that end the process. Stdio sources run in process groups of their
//! own, so a terminal's Ctrl-C does not reach them: whoever handles the signal has to shut the
//! sources down (see [`Sources::shutdown`](super::Sources::shutdown)) before exiting.

/// Resolves when the process gets SIGINT (Ctrl-C), SIGTERM or SIGHUP, with the conventional exit
/// status for it (128 + the signal number). Listening replaces the default "terminate at once",
/// so the caller must exit itself after cleaning up.
#[cfg(unix)]
pub async fn termination_signal() -> u8 {
    use tokio::signal::unix::{SignalKind, signal};

    async fn next(kind: SignalKind) {
        match signal(kind) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            // Without this signal's stream, the others still end the wait.
            Err(error) => {
                tracing::debug!("cannot listen for signal {}: {error}", kind.as_raw_value());
                std::future::pending::<()>().await;
            }
        }
    }
    tokio::select! {
        _ = next(SignalKind::interrupt()) => 130,
        _ = next(SignalKind::terminate()) => 143,
        _ = next(SignalKind::hangup()) => 129,
    }
}

/// Resolves on Ctrl-C, with exit status 130.
#[cfg(not(unix))]
pub async fn termination_signal() -> u8 {
    if let Err(error) = tokio::signal::ctrl_c().await {
        tracing::debug!("cannot listen for Ctrl-C: {error}");
        std::future::pending::<()>().await;
    }
    130
}
