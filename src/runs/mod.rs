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
    JournalEntry, NewRun, PendingCall, Recorded, Retention, RunRecord, RunSummary, Seen,
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

struct Inner {
    backend: Box<dyn Backend>,
    vault: Vault,
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
                inner: Arc::new(Inner {
                    vault: Vault::new(keys, path),
                    backend: Box::new(backend),
                }),
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
        self.inner.backend.location()
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

    /// Runs `f` with the backend and the vault on the blocking pool: a database may wait on
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
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || f(inner.backend.as_ref(), &inner.vault))
            .await
            .map_err(|e| E::from(StoreError::Worker(e.to_string())))?
    }
}

/// What tests across the crate need to set a store up.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    use super::{Dispatch, JournalEntry, NewRun, PendingCall, Store};

    /// A store in `dir`, its key in the key file beside it.
    pub async fn store_in(dir: &Path) -> Store {
        Store::open(&dir.join("state.sqlite"), None).await.unwrap()
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
            reason: "asks".to_string(),
            call_digest: digest.to_string(),
            tool_version: None,
        }
    }

    /// Changes the store's database behind its back, as damage or an attacker would.
    pub fn tamper(store: &Store, sql: &str) {
        let connection = rusqlite::Connection::open(store.location()).unwrap();
        connection.execute_batch(sql).unwrap();
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
