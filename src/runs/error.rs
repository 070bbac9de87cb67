//! What can go wrong with the store, each error saying where and what to do next.

use std::path::PathBuf;

use super::seal::OpenError;

/// A store problem, with the database's location and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the state store {path}: {source}; check that the data directory is writable",
        path = .path.display()
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the state store {path} {problem}, so the runs, approvals and bearer tokens it held cannot be read. Restore it from a backup; or move it aside (`mv {path} {path}.broken`) to start an empty store, which loses its pending runs and tokens (create tokens again with `capabilities token create`)",
        path = .path.display()
    )]
    Damaged { path: PathBuf, problem: String },
    #[error("cannot use the state store {path}: {source}", path = .path.display())]
    Schema {
        path: PathBuf,
        source: super::sqlite::MigrateError,
    },
    #[error(
        "the state store failed: {0}; if it keeps failing, `capabilities doctor` checks the store and its key"
    )]
    Sql(#[from] rusqlite::Error),
    #[error(
        "cannot use the key that encrypts the runs in {path}: {reason}. Make it readable again (`capabilities doctor` checks the credential stores), or {way_out}",
        path = .path.display(),
        way_out = way_out(*.shared)
    )]
    Key {
        path: PathBuf,
        reason: String,
        shared: bool,
    },
    #[error(
        "{what} in {path} cannot be read: {source}. {way_out}",
        path = .path.display(),
        way_out = way_out(*.shared)
    )]
    Sealed {
        path: PathBuf,
        shared: bool,
        what: String,
        source: OpenError,
    },
    #[error("the state store's worker stopped before it answered: {0}; this is a bug in the hub")]
    Worker(String),
    #[error(
        "the shared state store URL is not valid: {reason}; write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (`[store] url` or CAPABILITIES_STORE_URL)"
    )]
    Url { reason: String },
    #[error(
        "cannot connect to the shared state store {location}: {reason}; check that PostgreSQL runs there, that the role may log in to that database, and the password (`capabilities doctor` checks it)",
        location = .location.display()
    )]
    Connect { location: PathBuf, reason: String },
    #[error(
        "the shared state store {location} failed: {source}; if it keeps failing, `capabilities doctor` checks the store and its key",
        location = .location.display()
    )]
    Postgres {
        location: PathBuf,
        source: postgres::Error,
    },
}

/// Why a call was not journaled, and so must not be sent (or why its pending record or answer
/// was not written).
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(
        "run `{run_id}` is being run by another process now, so this attempt sends nothing more"
    )]
    NotOwner { run_id: String },
    #[error(
        "call {seq} of run `{run_id}` has no unused approval for this exact call, so it was not sent"
    )]
    NotApproved { run_id: String, seq: u64 },
    #[error("call {seq} of run `{run_id}` was already sent once, so it is not sent again")]
    AlreadyJournaled { run_id: String, seq: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a decision could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(
        "there is no run `{0}`; `capabilities hub runs --pending` lists the runs waiting for a decision"
    )]
    UnknownRun(String),
    #[error("run `{run_id}` has no call waiting for a decision{}; `capabilities hub runs --pending` lists the calls that wait", .seq.map(|s| format!(" at call {s}")).unwrap_or_default())]
    NothingPending { run_id: String, seq: Option<u64> },
    #[error("the approval of call {seq} of run `{run_id}` expired; run the script again")]
    Expired { run_id: String, seq: u64 },
    #[error(
        "call {seq} of run `{run_id}` now waits with another tool, connection, arguments or tool definition than the ones shown, so nothing was decided; look at it again (`capabilities hub runs --pending`) and decide on what it sends now"
    )]
    Changed { run_id: String, seq: u64 },
    #[error("{0}; nothing was decided")]
    Rule(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a token cannot be created or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "a token named `{0}` already exists; revoke it first (`capabilities token revoke {0}`) or pick another name"
    )]
    Exists(String),
    #[error("there is no token named `{0}`; `capabilities token list` shows them")]
    Unknown(String),
    #[error("cannot read random bytes from the operating system for a token: {0}")]
    Random(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The way out when this process cannot read the runs of a store (`shared` by other hubs or
/// not). A shared store's runs are every hub's: the others may hold the right key, and clearing
/// loses theirs too.
fn way_out(shared: bool) -> &'static str {
    if shared {
        "if other hubs share this store, give this one the key they use (CAPABILITIES_STATE_KEY, or their keychain entry or key file); only if no hub has it, give up every hub's runs with `capabilities hub runs --clear` (tokens and settings are kept)"
    } else {
        "give up the runs stored so far with `capabilities hub runs --clear` (tokens and settings are kept)"
    }
}
