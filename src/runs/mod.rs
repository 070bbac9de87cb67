//! The state store: every run, the journal of its tool calls (so a run can be inspected and
//! replayed), pending approvals and the decisions on them, an audit trail, the last status each
//! source reported, the hashes of the bearer tokens `hub serve --http` accepts, and results too
//! large to send, kept a few minutes for `hub.read`. One
//! [`Store`] is shared by every part of a process; its handles (`store.runs()`,
//! `store.journal()`, `store.approvals()`, `store.bearer_tokens()`, `store.source_status()`,
//! `store.stored_results()`, `store.tool_versions()`, `store.keys()`) are narrow async APIs over one backend seam.
//! Scripts, results, envelopes, argument previews and stored results are encrypted at rest with
//! the state key; only the vault seals and opens.
//!
//! The guarantees "a call that needs a person never runs without their decision, and never runs
//! twice" are invariants of the store, not of one process: a run is claimed before it runs
//! (`claims`), a call is journaled as dispatched before it leaves, for the claim's owner only
//! (`journal`), and a decision binds to the exact call a person saw and is used once
//! (`approvals`). Every check and its write happen in one atomic step of the backend.
//!
//! | file | owns |
//! |---|---|
//! | `handle/` | the handles: `runs`, `journal`, `approvals`, `bearer_tokens`, `source_status`, `stored_results`, `tool_versions`, `keys` |
//! | `records` | the records as the rest of the code sees them: plain, opened values |
//! | `backend` | the seam: one trait per concern, implemented by each database |
//! | `sqlite/` | the embedded backend (one SQLite file in the data directory), its schema |
//! | `postgres/` | the shared backend (one PostgreSQL database for several hubs), its schema |
//! | `vault` | sealing and opening values, with the key from `keys`, encrypted by `seal` |
//! | `claims` | who runs a run now: owner identity, lease, when a run is interrupted |
//! | `error` | what goes wrong, with where and what to do |
//! | `ids` | run ids and seeds |

mod backend;
mod claims;
mod error;
mod handle;
mod ids;
mod keys;
mod postgres;
mod records;
mod seal;
mod sqlite;
mod vault;

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub use backend::BeforeCommit;
pub use claims::RENEW_EVERY;
pub use error::{DecideError, DispatchError, StoreError, TokenError};
pub use handle::{
    Approvals, BearerTokens, Journal, Kept, Keys, LOCAL_SCOPE, Runs, SourceStatuses, StoredResults,
    ToolVersions, scope_of,
};
pub use ids::{new_run_id, new_seed};
pub use keys::KeySource;
pub use records::{
    APPROVAL_TTL, Approval, AuditLine, CallRow, CallState, Claim, ClaimRecord, Decision, Dispatch,
    Grant, JournalEntry, NewRun, PendingCall, Recorded, Retention, RunRecord, RunSummary, Seen,
    SeenVersion, SourceStatusRecord, TokenRecord, ToolVersion, Unconfirmed, VersionState,
};
pub use seal::OpenError;

use self::backend::Backend;
use self::keys::StateKeys;
use self::vault::Vault;
use crate::credentials::Credentials;

/// The key file's name, beside the database, for machines with no usable credential store.
pub const KEY_FILE_NAME: &str = "state.key";

/// Milliseconds since the Unix epoch, the store's clock.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The state store of a process. Cheap to clone; every clone is the same store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// One store: its thread, which does every piece of backend work in turn, and the way to it.
struct Inner {
    worker: Arc<Worker>,
    jobs: Option<std::sync::mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the store's thread works with.
struct Worker {
    backend: Box<dyn Backend>,
    vault: Vault,
}

/// One piece of backend work.
type Job = Box<dyn FnOnce(&dyn Backend, &Vault) + Send>;

impl Inner {
    /// Starts the store's thread. One thread per store, not one per waiting call: the backend
    /// does one thing at a time anyway (SQLite has one writer; each store keeps one
    /// connection), and a thousand runs waiting on the store then cost a queue, not a thousand
    /// threads. A job that panics is reported to its caller and the thread goes on.
    fn start(backend: Box<dyn Backend>, vault: Vault) -> Result<Inner, StoreError> {
        let worker = Arc::new(Worker { backend, vault });
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let working = worker.clone();
        let thread = std::thread::Builder::new()
            .name("capabilities-store".into())
            .spawn(move || {
                for job in queue {
                    let run = std::panic::AssertUnwindSafe(|| {
                        job(working.backend.as_ref(), &working.vault)
                    });
                    // The caller's channel closes unanswered; it reports a worker failure.
                    let _ = std::panic::catch_unwind(run);
                }
            })
            .map_err(|e| StoreError::Worker(format!("cannot start the store's thread: {e}")))?;
        Ok(Inner {
            worker,
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }
}

impl Drop for Inner {
    /// Waits for the store's thread to finish its queue and close the database, so the process
    /// never ends with it half closed (SQLite folds its write-ahead log back in on close).
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

/// A [`Store`] that may have been closed; see [`Store::downgrade`].
#[derive(Clone)]
pub struct WeakStore(std::sync::Weak<Inner>);

impl WeakStore {
    /// The store, while some part of the process still uses it.
    pub fn upgrade(&self) -> Option<Store> {
        self.0.upgrade().map(|inner| Store { inner })
    }
}

impl Store {
    /// Opens (creating) the SQLite store at `path`. Its key goes to the user's credential store
    /// when `credentials` can hold it (the key file beside the database is the fallback, and a
    /// store keyed before keeps its key where it is). A file that should hold a store and does
    /// not is refused with what to do.
    pub async fn open(
        path: &Path,
        credentials: Option<Arc<Credentials>>,
    ) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        let opened = tokio::task::spawn_blocking(move || {
            let backend = sqlite::Sqlite::open(&path)?;
            let mut keys = StateKeys::key_file(path.with_file_name(KEY_FILE_NAME));
            if let Some(credentials) = credentials {
                keys = keys.with_credentials(credentials);
            }
            Ok(Store {
                inner: Arc::new(Inner::start(
                    Box::new(backend),
                    Vault::new(keys, path, false),
                )?),
            })
        })
        .await;
        opened.map_err(|e| StoreError::Worker(e.to_string()))?
    }

    /// Opens (migrating) the shared PostgreSQL store at `url` (`[store] url`). Its key comes
    /// from `CAPABILITIES_STATE_KEY` when that is set (every replica of a team's hub can hold
    /// it), else from the user's credential store or the key file in `data_dir`, as for SQLite.
    pub async fn open_shared(
        url: &str,
        data_dir: &Path,
        credentials: Option<Arc<Credentials>>,
    ) -> Result<Store, StoreError> {
        let url = url.to_string();
        let key_file = data_dir.join(KEY_FILE_NAME);
        let opened = tokio::task::spawn_blocking(move || {
            let backend = postgres::Postgres::open(&url)?;
            let location = backend.location().to_path_buf();
            let mut keys = StateKeys::key_file(key_file);
            if let Some(credentials) = credentials {
                keys = keys.with_credentials(credentials);
            }
            Ok(Store {
                inner: Arc::new(Inner::start(
                    Box::new(backend),
                    Vault::new(keys, location, true),
                )?),
            })
        })
        .await;
        opened.map_err(|e| StoreError::Worker(e.to_string()))?
    }

    /// A handle that does not keep the store open: a process closes its database (and SQLite
    /// folds its write-ahead log back in) when the last [`Store`] goes, which a background task
    /// holding one would otherwise delay past the process's end.
    pub fn downgrade(&self) -> WeakStore {
        WeakStore(Arc::downgrade(&self.inner))
    }

    /// Where the records live, for messages.
    pub fn location(&self) -> &Path {
        self.inner.worker.backend.location()
    }

    /// Whether other hubs may share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.inner.worker.backend.is_shared()
    }

    pub fn runs(&self) -> Runs<'_> {
        Runs(self)
    }

    pub fn journal(&self) -> Journal<'_> {
        Journal(self)
    }

    pub fn approvals(&self) -> Approvals<'_> {
        Approvals(self)
    }

    pub fn bearer_tokens(&self) -> BearerTokens<'_> {
        BearerTokens(self)
    }

    pub fn source_status(&self) -> SourceStatuses<'_> {
        SourceStatuses(self)
    }

    pub fn stored_results(&self) -> StoredResults<'_> {
        StoredResults(self)
    }

    pub fn tool_versions(&self) -> ToolVersions<'_> {
        ToolVersions(self)
    }

    pub fn keys(&self) -> Keys<'_> {
        Keys(self)
    }

    /// Runs `f` with the backend and the vault on the store's thread: a database may wait on
    /// another process's write, and the key may come from a keychain over D-Bus, neither of
    /// which may hold an async thread.
    async fn call<T, E>(
        &self,
        f: impl FnOnce(&dyn Backend, &Vault) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        self.queue(f).await
    }

    /// [`call`](Self::call), queued at once rather than when first awaited: the store's
    /// thread does its work in the order it was queued, so whatever is asked of the store
    /// after this returns is done after `f`.
    fn queue<T, E>(
        &self,
        f: impl FnOnce(&dyn Backend, &Vault) -> Result<T, E> + Send + 'static,
    ) -> impl Future<Output = Result<T, E>> + Send + 'static
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |backend, vault| {
            let _ = answer.send(f(backend, vault));
        });
        let queued = self
            .inner
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        async move {
            if !queued {
                return Err(E::from(StoreError::Worker(
                    "the store's thread stopped".into(),
                )));
            }
            answered.await.map_err(|_| {
                E::from(StoreError::Worker(
                    "the store's thread failed while it worked on this request".into(),
                ))
            })?
        }
    }
}

/// What tests across the crate need to set a store up.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::{Dispatch, JournalEntry, NewRun, PendingCall, Store};

    /// The server the store tests also run against, when set (the README's test command sets
    /// it for one more pass of `runs::`): the same tests then check the shared backend.
    const TEST_STORE_URL: &str = "CAPABILITIES_TEST_STORE_URL";

    /// The databases made for tests: the directory a test keeps its store in, the location the
    /// store reports (which leaves the password out), and the full URL — so a test that opens
    /// the store in `dir` again gets the same database, and [`tamper`] can reach it.
    static DATABASES: Mutex<Vec<(PathBuf, PathBuf, String)>> = Mutex::new(Vec::new());

    /// True when the store tests run against PostgreSQL.
    pub fn shared() -> bool {
        std::env::var_os(TEST_STORE_URL).is_some()
    }

    /// A store in `dir`, its key in the key file beside it: SQLite, or a new PostgreSQL
    /// database when [`shared`].
    pub async fn store_in(dir: &Path) -> Store {
        let Ok(admin) = std::env::var(TEST_STORE_URL) else {
            return Store::open(&dir.join("state.sqlite"), None).await.unwrap();
        };
        let known = DATABASES
            .lock()
            .unwrap()
            .iter()
            .find(|(made_for, _, _)| made_for == dir)
            .map(|(_, _, url)| url.clone());
        if let Some(url) = known {
            return Store::open_shared(&url, dir, None).await.unwrap();
        }
        let url = tokio::task::spawn_blocking(move || fresh_database(&admin))
            .await
            .unwrap();
        let store = Store::open_shared(&url, dir, None).await.unwrap();
        DATABASES
            .lock()
            .unwrap()
            .push((dir.to_path_buf(), store.location().to_path_buf(), url));
        store
    }

    /// The first column of every row `sql` selects, as bytes (text and blobs alike), read
    /// behind the store's back.
    pub fn raw_column(store: &Store, sql: &str) -> Vec<Vec<u8>> {
        match database_url(store) {
            Some(url) => {
                let sql = sql.to_string();
                std::thread::spawn(move || {
                    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                    client
                        .query(&sql, &[])
                        .unwrap()
                        .iter()
                        .map(|row| match row.try_get::<_, Vec<u8>>(0) {
                            Ok(bytes) => bytes,
                            Err(_) => row
                                .try_get::<_, i64>(0)
                                .map(|n| n.to_string().into_bytes())
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .join()
                .unwrap()
            }
            None => {
                let connection = rusqlite::Connection::open(store.location()).unwrap();
                let mut statement = connection.prepare(sql).unwrap();
                statement
                    .query_map([], |row| {
                        Ok(match row.get::<_, rusqlite::types::Value>(0)? {
                            rusqlite::types::Value::Blob(bytes) => bytes,
                            rusqlite::types::Value::Text(text) => text.into_bytes(),
                            rusqlite::types::Value::Integer(n) => n.to_string().into_bytes(),
                            _ => Vec::new(),
                        })
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
        }
    }

    fn database_url(store: &Store) -> Option<String> {
        DATABASES
            .lock()
            .unwrap()
            .iter()
            .find(|(_, location, _)| location == store.location())
            .map(|(_, _, url)| url.clone())
    }

    /// A new database on the server of `admin` (a URL to a database the role may connect to),
    /// named after this process so that one left by a run that died is dropped by the next.
    fn fresh_database(admin: &str) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut client = postgres::Client::connect(admin, postgres::NoTls).unwrap();
        let stale: Vec<String> = client
            .query(
                "SELECT datname FROM pg_database WHERE datname LIKE 'cap_unit_%'",
                &[],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .filter(|name: &String| {
                let pid = name.split('_').nth(2).unwrap_or_default();
                !Path::new("/proc").join(pid).exists()
            })
            .collect();
        for name in stale {
            let _ = client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
        let name = format!(
            "cap_unit_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let (base, query) = admin.split_once('?').unwrap_or((admin, ""));
        let (server, _) = base.rsplit_once('/').unwrap();
        if query.is_empty() {
            format!("{server}/{name}")
        } else {
            format!("{server}/{name}?{query}")
        }
    }

    /// Starts run `run_id` with `code`; returns the owner of its claim.
    pub async fn begin(store: &Store, run_id: &str, code: &str) -> String {
        let run = NewRun {
            run_id: run_id.to_string(),
            code: code.to_string(),
            seed: 1,
            start_time_ms: 2,
            ..NewRun::default()
        };
        store.runs().begin(run).await.unwrap()
    }

    /// A call of `address` waiting at step `seq` with digest `digest`.
    pub fn pending(seq: u64, address: &str, digest: &str) -> PendingCall {
        PendingCall {
            seq,
            address: address.to_string(),
            connection: None,
            preview: "{}".to_string(),
            whole: None,
            reason: "asks".to_string(),
            call_digest: digest.to_string(),
            tool_version: None,
        }
    }

    /// Changes the store's database behind its back, as damage or an attacker would.
    pub fn tamper(store: &Store, sql: &str) {
        match database_url(store) {
            Some(url) => {
                let sql = sql.to_string();
                std::thread::spawn(move || {
                    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                    client.batch_execute(&sql).unwrap();
                })
                .join()
                .unwrap();
            }
            None => {
                let connection = rusqlite::Connection::open(store.location()).unwrap();
                connection.execute_batch(sql).unwrap();
            }
        }
    }

    /// Journals `entry` the way the bridge does: dispatched, then answered.
    pub async fn journal_call(store: &Store, run_id: &str, owner: &str, entry: &JournalEntry) {
        let dispatch = Dispatch {
            seq: entry.seq,
            address: entry.address.clone(),
            connection: entry.connection.clone(),
            call_digest: entry.call_digest.clone(),
            mutating: entry.mutating,
            uses_approval: false,
        };
        store
            .journal()
            .dispatch(run_id, owner, dispatch)
            .await
            .unwrap();
        store
            .journal()
            .answer(run_id, owner, entry.seq, &entry.result, entry.ok, entry.ms)
            .await
            .unwrap();
    }
}
