//! The shared backend: one PostgreSQL database for several hubs (`[store] url`). Each process
//! keeps one connection, used only from the store's worker threads (the blocking client runs
//! its own small runtime). Every compare-and-set is one conditional statement (PostgreSQL
//! re-checks its condition after waiting on a concurrent writer of the row) or runs in a
//! transaction that first takes transaction-level advisory locks, so what it read cannot change
//! before it writes — the single-writer steps of SQLite's `BEGIN IMMEDIATE`, across replicas on
//! different machines, but one writer per run rather than per store: a run's journal and
//! approvals take the store's lock shared and the run's own lock exclusive, so replicas running
//! different runs write side by side; writes that span runs (tokens, keys, tool versions, a
//! decision and the rule it writes, clearing) take the store's lock exclusive.
//!
//! | file | owns |
//! |---|---|
//! | `schema` | the tables and their versioned migrations |
//! | `runs`, `journal`, `approvals` | runs and claims, calls, pending calls and decisions |
//! | `records` | bearer tokens, source statuses, stored results, tool versions, the key record |

mod approvals;
mod journal;
mod records;
mod runs;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use postgres::{Client, Config, Row, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::backend::Backend;
use super::error::{DispatchError, StoreError};
use super::vault::Sealed;

/// The store's lock (`pg_advisory_xact_lock`), released when its transaction ends: taken
/// exclusive by writes that span runs, shared by a run's own writes.
const WRITE_LOCK: i64 = 0x6361_7073_7461_7465; // "capstate"

/// The space of the per-run locks: the two-key advisory locks (this, the run id's hash). A hash
/// collision only makes two runs take turns.
const RUN_LOCK_SPACE: i32 = 0x6361_7072; // "capr"

/// A PostgreSQL state store.
pub struct Postgres {
    config: Config,
    tls: MakeRustlsConnect,
    /// Reconnected on next use when the server or the network dropped it.
    client: Mutex<Option<Client>>,
    /// The URL without its password, for messages.
    location: PathBuf,
    /// How far the server's clock is ahead of this machine's (ms), and when that was measured:
    /// leases are read by the server's clock without asking it for the time on every claim.
    clock: Mutex<Option<(Instant, i64)>>,
}

/// How long a measured clock offset is used before it is measured again, so a step of this
/// machine's clock (NTP setting it) is followed soon: well within a run's 30-second lease.
const CLOCK_REMEASURE: Duration = Duration::from_secs(10);

impl Postgres {
    /// Connects to `url` and brings its schema up to date. A server that cannot be reached, a
    /// role that may not log in or create tables, a schema from a newer version: each is
    /// refused with what to do.
    pub fn open(url: &str) -> Result<Postgres, StoreError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::Url {
                reason: "it must start with postgres:// (PostgreSQL is the one shared store)"
                    .into(),
            });
        }
        let config: Config = url.parse().map_err(|e: postgres::Error| StoreError::Url {
            reason: e.to_string(),
        })?;
        let location = PathBuf::from(describe(&config));
        crate::tls::install_crypto_provider();
        let tls = MakeRustlsConnect::new(tls_config().map_err(|reason| StoreError::Connect {
            location: location.clone(),
            reason,
        })?);
        let store = Postgres {
            config,
            tls,
            client: Mutex::new(None),
            location,
            clock: Mutex::new(None),
        };
        store.with(schema::migrate)?;
        store.check_clock();
        Ok(store)
    }

    /// Warns when this machine's clock and the server's disagree by more than
    /// [`CLOCK_TOLERANCE_MS`]: leases follow the server's clock, but replicas compare their own
    /// for approval expiry.
    fn check_clock(&self) {
        if let Ok(offset) = self.clock_offset()
            && let Some(warning) = clock_warning(offset.saturating_neg())
        {
            tracing::warn!("{warning}");
        }
    }

    /// How far the server's clock is ahead of this machine's, in milliseconds: as measured in
    /// the last [`CLOCK_REMEASURE`], or measured now (the server's clock as the query runs, not
    /// as a transaction began, against this machine's halfway through the round trip).
    fn clock_offset(&self) -> Result<i64, StoreError> {
        let mut clock = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((measured, offset)) = *clock
            && measured.elapsed() < CLOCK_REMEASURE
        {
            return Ok(offset);
        }
        let before = crate::runs::now_ms();
        let server: i64 = self.with(|client| {
            client
                .query_one(
                    "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
                    &[],
                )
                .map(|row| row.get(0))
        })?;
        let after = crate::runs::now_ms();
        let here = i64::try_from(before / 2 + after / 2).unwrap_or(i64::MAX);
        let offset = server.saturating_sub(here);
        *clock = Some((Instant::now(), offset));
        Ok(offset)
    }

    /// Runs `f` on the connection, connecting first when there is none.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(Client::is_closed) {
            let client = self
                .config
                .connect(self.tls.clone())
                .map_err(|e| StoreError::Connect {
                    location: self.location.clone(),
                    // A certificate this machine does not trust is the usual reason TLS fails;
                    // say which, and what to do.
                    reason: match crate::tls::explain_handshake_failure(&e) {
                        Some(explained) => format!(
                            "{explained}. For a server on this machine, `?sslmode=disable` at the end of the URL connects without TLS"
                        ),
                        None => with_causes(&e),
                    },
                })?;
            *guard = Some(client);
        }
        let Some(client) = guard.as_mut() else {
            return Err(StoreError::Worker("no connection after connecting".into()));
        };
        f(client).map_err(|e| self.error(e))
    }

    /// Runs `f` in one transaction holding the store's write lock; it commits only on `Ok`.
    fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.locked(Lock::Store, f)
    }

    /// Runs `f` in one transaction that writes only `run_id`'s rows (its claim is checked, its
    /// journal and approvals written): other runs' writes go on beside it.
    fn write_run<T, E: From<StoreError>>(
        &self,
        run_id: &str,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.locked(Lock::Run(run_id), f)
    }

    fn locked<T, E: From<StoreError>>(
        &self,
        lock: Lock<'_>,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut outcome = None;
        self.with(|client| {
            let mut transaction = client.transaction()?;
            match lock {
                Lock::Store => {
                    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])?;
                }
                // No transaction takes two runs' locks, so these cannot deadlock.
                Lock::Run(run_id) => {
                    transaction.execute(
                        "SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock($2, hashtext($3))",
                        &[&WRITE_LOCK, &RUN_LOCK_SPACE, &run_id],
                    )?;
                }
            }
            let value = f(&mut transaction);
            if value.is_ok() {
                transaction.commit()?;
            }
            // Dropping an uncommitted transaction rolls it back.
            outcome = Some(value);
            Ok(())
        })?;
        outcome.unwrap_or_else(|| Err(E::from(StoreError::Worker("the write did not run".into()))))
    }

    fn error(&self, source: postgres::Error) -> StoreError {
        StoreError::Postgres {
            location: self.location.clone(),
            source,
        }
    }

    /// Fails unless `owner` holds the claim on the running run `run_id`; checked inside the
    /// write transaction that depends on it.
    fn check_owner(
        &self,
        t: &mut Transaction<'_>,
        run_id: &str,
        owner: &str,
    ) -> Result<(), DispatchError> {
        let current: Option<Option<String>> = t
            .query_opt(
                "SELECT owner FROM runs WHERE run_id = $1 AND status = 'running'",
                &[&run_id],
            )
            .map_err(|e| self.error(e))?
            .map(|row| row.get(0));
        if current.flatten().as_deref() != Some(owner) {
            return Err(DispatchError::NotOwner {
                run_id: run_id.to_string(),
            });
        }
        Ok(())
    }
}

/// Which advisory locks a write transaction takes first.
#[derive(Clone, Copy)]
enum Lock<'a> {
    /// The store's, exclusive.
    Store,
    /// The store's shared and this run's exclusive.
    Run(&'a str),
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // The blocking client closes its connection by running its own small runtime, which
        // panics on a thread that drives async tasks — where the last `Store` usually goes.
        // It is closed on a plain thread instead, and waited for, so the server sees a clean
        // goodbye before the process ends.
        let client = self
            .client
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(client) = client {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

impl Backend for Postgres {
    fn location(&self) -> &Path {
        &self.location
    }

    fn is_shared(&self) -> bool {
        true
    }
}

/// How far this machine's clock may be from the store server's before it is worth a warning:
/// far below a run's 30-second lease.
const CLOCK_TOLERANCE_MS: i64 = 5_000;

/// The warning for a clock `ahead_ms` ahead of the server's (behind when negative), if any.
fn clock_warning(ahead_ms: i64) -> Option<String> {
    if ahead_ms.abs() <= CLOCK_TOLERANCE_MS {
        return None;
    }
    let side = if ahead_ms > 0 { "ahead of" } else { "behind" };
    Some(format!(
        "this machine's clock is {:.0} s {side} the store server's; replicas sharing a store compare their clocks for approval expiry, so keep every machine's clock synchronised (NTP: `timedatectl set-ntp true`)",
        ahead_ms.unsigned_abs() as f64 / 1000.0
    ))
}

/// An error with what caused it ("error connecting to server: Connection refused").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = inner.source();
    }
    text
}

/// `postgres://user@host:port/db`, never the password.
fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or("?"),
        config.get_dbname().unwrap_or("?")
    )
}

/// TLS for the connection (`sslmode` in the URL decides whether it is used), verified against
/// the OS trust store like every other TLS client here.
fn tls_config() -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::ConfigVerifierExt;
    rustls::ClientConfig::with_platform_verifier().map_err(|e| e.to_string())
}

/// A sealed column.
fn sealed(row: &Row, index: usize) -> Option<Sealed> {
    row.get::<_, Option<Vec<u8>>>(index).map(Sealed::stored)
}

/// A count or a time as stored (never negative when we wrote it).
fn unsigned(value: i64) -> u64 {
    value.max(0) as u64
}

/// A count or a time to store.
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_far_from_the_servers_is_named_with_the_fix() {
        assert_eq!(clock_warning(0), None);
        assert_eq!(clock_warning(-4_000), None);
        let ahead = clock_warning(61_000).expect("a minute ahead");
        assert!(
            ahead.contains("61 s ahead of the store server's"),
            "{ahead}"
        );
        assert!(ahead.contains("timedatectl set-ntp true"), "{ahead}");
        let behind = clock_warning(-45_500).expect("behind");
        assert!(behind.contains("46 s behind"), "{behind}");
    }
}
