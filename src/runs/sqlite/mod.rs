//! The embedded backend: one SQLite database in the data directory (WAL mode, so the hub,
//! `exec`, `hub approve` and the dashboard — separate processes — share it). SQLite serialises
//! writers across processes and the busy timeout makes a second process wait instead of
//! failing; every compare-and-set runs in a write transaction taken at once (`BEGIN
//! IMMEDIATE`), so what it read cannot change before it writes.
//!
//! | file | owns |
//! |---|---|
//! | `schema` | the tables and their versioned migrations |
//! | `runs` | runs, their claims, listings |
//! | `journal` | calls dispatched and answered |
//! | `approvals` | pending calls, decisions, grants, single-use states, the audit trail |
//! | `bearer_tokens`, `sources` | bearer tokens (their hashes), source statuses |
//! | `stored_results` | results kept for `hub.read`, evicted by age, count and size |
//! | `tool_versions` | every version of every tool's definition, and which are confirmed |
//! | `keys` | the key record and the sealing of an older version's clear values |

mod approvals;
mod bearer_tokens;
mod journal;
mod keys;
mod runs;
mod schema;
mod sources;
mod stored_results;
mod tool_versions;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Params, Row, TransactionBehavior, params};

pub use schema::MigrateError;

use super::KEY_FILE_NAME;
use super::backend::Backend;
use super::error::{DispatchError, StoreError};
use super::vault::Sealed;
use crate::credentials::STATE_KEY_LOCK_FILE_NAME;

/// The SQLite database of a store.
pub struct Sqlite {
    connection: Mutex<Connection>,
    path: PathBuf,
}

impl Sqlite {
    /// Opens (creating) the database at `path`. A file that should hold a store and does not
    /// (emptied, truncated, not a database) is refused with what to do, never silently started
    /// over or written to.
    pub fn open(path: &Path) -> Result<Sqlite, StoreError> {
        if let Some(parent) = path.parent() {
            // A failure here surfaces as the open error below, which names the path.
            let _ = std::fs::create_dir_all(parent);
        }
        refuse_damaged(path)?;
        let open_error = |source: rusqlite::Error| match from_sql(path, source) {
            StoreError::Sql(source) => StoreError::Open {
                path: path.to_path_buf(),
                source,
            },
            damaged => damaged,
        };
        let mut connection = Connection::open(path).map_err(open_error)?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(open_error)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        // With WAL, NORMAL keeps the database consistent and committed data survives a crash of
        // the process (what a hub restart or `kill -9` is); it only skips an fsync per commit.
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_error)?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(open_error)?;
        // Room for every fixed statement of the store (about fifty), so none is prepared twice.
        connection.set_prepared_statement_cache_capacity(96);
        schema::migrate(&mut connection).map_err(|e| match e {
            MigrateError::Sql(source) => open_error(source),
            newer => StoreError::Schema {
                path: path.to_path_buf(),
                source: newer,
            },
        })?;
        Ok(Sqlite {
            connection: Mutex::new(connection),
            path: path.to_path_buf(),
        })
    }

    /// Runs `f` on the connection.
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        f(&connection).map_err(|e| from_sql(&self.path, e))
    }

    /// Runs `f` in one write transaction, taken at once (`BEGIN IMMEDIATE`) so that what `f`
    /// reads cannot change before it writes. `f` decides with its own error type; the
    /// transaction commits only on `Ok`.
    fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let sql = |e| E::from(from_sql(&self.path, e));
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let value = f(&transaction)?;
        transaction.commit().map_err(sql)?;
        Ok(value)
    }
}

impl Backend for Sqlite {
    fn location(&self) -> &Path {
        &self.path
    }

    fn is_shared(&self) -> bool {
        false
    }
}

/// `error` from SQLite, named as damage when that is what it says: such a file needs a backup
/// or a fresh start, not a writable folder.
fn from_sql(path: &Path, error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::Damaged {
            path: path.to_path_buf(),
            problem: "is not a database (it was overwritten or is truncated)".into(),
        },
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => StoreError::Damaged {
            path: path.to_path_buf(),
            problem: "is damaged (truncated, or changed by something other than SQLite)".into(),
        },
        _ => StoreError::Sql(error),
    }
}

/// Statements prepared once per connection and kept (rusqlite's statement cache): every query
/// here is fixed text, and preparing it again on each call was a fifth of the store's time in an
/// empty `execute`.
trait Cached {
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    fn query_row_cached<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        row: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn execute_cached<P: Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn query_row_cached<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        row: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, row)
    }
}

/// Fails unless `owner` holds the claim on the running run `run_id`; checked inside the write
/// transaction that depends on it.
fn check_owner(
    t: &rusqlite::Transaction<'_>,
    run_id: &str,
    owner: &str,
) -> Result<(), DispatchError> {
    let current: Option<String> = t
        .query_row_cached(
            "SELECT owner FROM runs WHERE run_id = ?1 AND status = 'running'",
            params![run_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(StoreError::from)?
        .flatten();
    if current.as_deref() != Some(owner) {
        return Err(DispatchError::NotOwner {
            run_id: run_id.to_string(),
        });
    }
    Ok(())
}

/// A sealed column's bytes. Text is what an older, unencrypting version wrote; it is passed on
/// so that opening it says so.
fn sealed(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Option<Sealed>> {
    Ok(match row.get::<_, rusqlite::types::Value>(index)? {
        rusqlite::types::Value::Blob(bytes) => Some(Sealed::stored(bytes)),
        rusqlite::types::Value::Text(text) => Some(Sealed::stored(text.into_bytes())),
        _ => None,
    })
}

/// A count or a time as stored (never negative when we wrote it).
fn unsigned(value: i64) -> u64 {
    value.max(0) as u64
}

/// Refuses a file that should hold a store and cannot, before SQLite touches it: SQLite takes a
/// 0-byte file for a new database and starts over (losing every run and bearer token without a
/// word), and it may write a leftover write-ahead log into a file that is not its own.
/// - An empty file counts as damaged when the files beside it (the key, or the lock taken when
///   a key was made in a credential store, or a write-ahead log with content) show that a store
///   lived here; otherwise it is a store that was never written, and SQLite may start it.
/// - A file with content must start with SQLite's header and be as long as the header says.
fn refuse_damaged(path: &Path) -> Result<(), StoreError> {
    let damaged = |problem: &str| {
        Err(StoreError::Damaged {
            path: path.to_path_buf(),
            problem: problem.to_string(),
        })
    };
    let Ok(bytes_on_disk) = std::fs::metadata(path).map(|m| m.len()) else {
        return Ok(());
    };
    if bytes_on_disk == 0 {
        let beside = |name: &str| path.with_file_name(name);
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal_size = std::fs::metadata(Path::new(&wal))
            .map(|m| m.len())
            .unwrap_or(0);
        let lived_here = beside(KEY_FILE_NAME).exists()
            || beside(STATE_KEY_LOCK_FILE_NAME).exists()
            || wal_size > 0;
        if lived_here {
            return damaged("is empty (0 bytes), though the files beside it show it held a store");
        }
        return Ok(());
    }
    let mut header = [0u8; 100];
    let read = std::fs::File::open(path).and_then(|mut file| {
        use std::io::Read;
        file.read_exact(&mut header)
    });
    // An unreadable file is for SQLite to report (permissions say what to fix).
    if let Err(e) = read {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            return damaged("is not a database (it is shorter than a database header)");
        }
        return Ok(());
    }
    if &header[..16] != b"SQLite format 3\0" {
        return damaged("is not a database (it was overwritten, or is not a state store)");
    }
    // Bytes 16-17: the page size (1 means 65536); 28-31: the pages the file holds. SQLite
    // trusts the count only while the change counter (24-27) matches 92-95.
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        size => u64::from(size),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let count_is_current = header[24..28] == header[92..96];
    // A checkpoint cut short (the process killed while it copied pages from the write-ahead
    // log) leaves the file short of its new count; the log still holds the pages, and SQLite
    // finishes the copy. Likewise a rollback journal.
    let recovering = ["-wal", "-journal"].iter().any(|suffix| {
        let mut beside = path.as_os_str().to_owned();
        beside.push(suffix);
        std::fs::metadata(Path::new(&beside)).is_ok_and(|m| m.len() > 0)
    });
    if count_is_current
        && !recovering
        && page_size > 0
        && bytes_on_disk < pages.saturating_mul(page_size)
    {
        return damaged(&format!(
            "is truncated: it has {bytes_on_disk} bytes, though its header counts {pages} pages of {page_size}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::runs::Store;
    use crate::runs::testing::begin;

    #[tokio::test]
    async fn a_damaged_file_is_refused_before_sqlite_writes_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = Store::open(&path, None).await.unwrap();
        begin(&store, "run_a", "return 1").await;
        store
            .bearer_tokens()
            .create("laptop", None, None, &[])
            .await
            .unwrap();
        drop(store);
        let whole = std::fs::read(&path).unwrap();
        let cases = [
            (Vec::new(), "is empty (0 bytes)"),
            (b"{\"runs\": []}".to_vec(), "shorter than a database header"),
            (vec![b'x'; 8192], "is not a database"),
            (whole[..whole.len() - 4096].to_vec(), "is truncated"),
        ];
        for (bytes, problem) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = Store::open(&path, None).await.err().unwrap().to_string();
            assert!(err.contains(problem), "{err}");
            assert!(err.contains("Restore it from a backup"), "{err}");
            assert!(!err.contains("writable"), "{err}");
            assert!(
                std::fs::read(&path).unwrap() == bytes,
                "{problem}: untouched"
            );
        }
        // An empty file with nothing beside it is a store that was never written.
        let fresh = tempfile::tempdir().unwrap();
        let path = fresh.path().join("state.sqlite");
        std::fs::write(&path, "").unwrap();
        begin(
            &Store::open(&path, None).await.unwrap(),
            "run_a",
            "return 1",
        )
        .await;
    }

    #[tokio::test]
    async fn an_unwritable_path_names_itself() {
        let err = Store::open(std::path::Path::new("/proc/no/such/state.sqlite"), None)
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("/proc/no/such/state.sqlite"), "{err}");
        assert!(err.contains("writable"), "{err}");
    }
}
