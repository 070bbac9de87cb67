//! The SQLite store of runs and their call journals. What a run says (its script, the results
//! of its calls, its envelope) is sealed with the state key before it is written and opened
//! after it is read, so nothing outside this file handles ciphertext; ids, statuses, tool
//! addresses, timings and argument digests stay in the clear for listings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use zeroize::Zeroizing;

use super::claims::{lease_end, new_owner};
use super::keys::{self, KeySource, StateKeys};
use super::seal::{OpenError, StateCipher};
use crate::credentials::{Credentials, STATE_KEY_LOCK_FILE_NAME};

/// The key file's name, beside the database, for machines with no usable credential store.
pub const KEY_FILE_NAME: &str = "state.key";

/// A store problem, with the database path and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open the state store {path}: {source}; check that the data directory is writable"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the state store {path} {problem}, so the runs, approvals and bearer tokens it held cannot be read. Restore it from a backup; or move it aside (`mv {path} {path}.broken`) to start an empty store, which loses its pending runs and tokens (create tokens again with `capabilities token create`)", path = .path.display()
    )]
    Damaged { path: PathBuf, problem: String },
    #[error("cannot use the state store {path}: {source}", path = .path.display())]
    Schema {
        path: PathBuf,
        source: super::schema::MigrateError,
    },
    #[error(
        "the state store failed: {0}; if it keeps failing, `capabilities doctor` checks the store and its key"
    )]
    Sql(#[from] rusqlite::Error),
    #[error(
        "cannot use the key that encrypts the runs in {path}: {reason}. Make it readable again (`capabilities doctor` checks the credential stores), or give up the runs stored so far with `capabilities hub runs --clear` (tokens and settings are kept)"
    )]
    Key { path: PathBuf, reason: String },
    #[error(
        "{what} in {path} cannot be read: {source}. `capabilities hub runs --clear` gives up the runs stored so far (tokens and settings are kept)"
    )]
    Sealed {
        path: PathBuf,
        what: String,
        source: OpenError,
    },
}

impl StoreError {
    /// `error` from SQLite, named as damage when that is what it says: such a file needs a
    /// backup or a fresh start, not a writable folder.
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
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub run_id: String,
    pub status: String,
    pub code: String,
    pub seed: u64,
    pub start_time_ms: u64,
    pub created_at_ms: u64,
    /// The last envelope returned for this run, if it finished or paused.
    pub envelope: Option<Value>,
    /// The client's `outputBudgetBytes`, kept so a resumed run returns what the first asked for.
    pub output_budget_bytes: Option<u64>,
    /// The profile whose sources and policy the run was started under; only a process serving
    /// the same one may go on with it.
    pub profile: Option<String>,
}

/// Who started a run: the MCP client's name (or `exec`), the hub's profile, and the client's
/// `outputBudgetBytes`, kept so a resumed run returns what the first asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOrigin<'a> {
    pub client: Option<&'a str>,
    pub profile: Option<&'a str>,
    pub output_budget_bytes: Option<u64>,
}

/// The store. Cheap to share behind an `Arc`; SQLite serialises writers across processes and
/// the busy timeout makes a second process wait instead of failing.
pub struct RunsStore {
    connection: Mutex<Connection>,
    path: PathBuf,
    keys: StateKeys,
    /// Unlocked on first need, so commands that never touch a run's content never reach for
    /// the keychain.
    cipher: Mutex<Option<Arc<StateCipher>>>,
}

/// Milliseconds since the Unix epoch, the store's clock.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl RunsStore {
    /// Opens (creating) the database at `path`, its key in the key file beside it (see
    /// [`with_credentials`](Self::with_credentials) for the user's credential stores). A file
    /// that should hold a store and does not (emptied, truncated, not a database) is refused
    /// with what to do, never silently started over or written to.
    pub fn open(path: &Path) -> Result<RunsStore, StoreError> {
        if let Some(parent) = path.parent() {
            // A failure here surfaces as the open error below, which names the path.
            let _ = std::fs::create_dir_all(parent);
        }
        refuse_damaged(path)?;
        let open_error = |source: rusqlite::Error| match StoreError::from_sql(path, source) {
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
        super::schema::migrate(&mut connection).map_err(|e| match e {
            super::schema::MigrateError::Sql(source) => open_error(source),
            newer => StoreError::Schema {
                path: path.to_path_buf(),
                source: newer,
            },
        })?;
        Ok(RunsStore {
            connection: Mutex::new(connection),
            path: path.to_path_buf(),
            keys: StateKeys::key_file(path.with_file_name(KEY_FILE_NAME)),
            cipher: Mutex::new(None),
        })
    }

    /// Keeps the key of a new store in the user's credential store when it can (the key file
    /// remains the fallback, and a store keyed before keeps its key where it is).
    pub fn with_credentials(mut self, credentials: Arc<Credentials>) -> RunsStore {
        self.keys = self.keys.with_credentials(credentials);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this store's key is kept, once its first run recorded it.
    pub fn key_source(&self) -> Result<Option<KeySource>, StoreError> {
        Ok(self
            .key_record()?
            .and_then(|(source, _)| KeySource::parse(&source)))
    }

    pub fn key_file_path(&self) -> &Path {
        self.keys.key_file_path()
    }

    /// A key for `purpose` derived from the state key: the same in every process that shares
    /// this store (the elicitation signing key is one).
    pub fn derived_key(&self, purpose: &str) -> Result<Zeroizing<[u8; 32]>, StoreError> {
        Ok(self.cipher()?.derive(purpose))
    }

    /// The cipher of the state key, unlocked once per process.
    fn cipher(&self) -> Result<Arc<StateCipher>, StoreError> {
        let mut cached = self.cipher.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cipher) = cached.as_ref() {
            return Ok(cipher.clone());
        }
        let key_error = |reason| StoreError::Key {
            path: self.path.clone(),
            reason,
        };
        let cipher = Arc::new(self.unlock().map_err(key_error)?);
        self.seal_plaintext(&cipher).map_err(|e| {
            key_error(format!(
                "the runs an older version stored in the clear could not be encrypted: {e}"
            ))
        })?;
        *cached = Some(cipher.clone());
        Ok(cipher)
    }

    /// Seals, once per store, what a version before encryption at rest stored in the clear
    /// (text where a sealed blob belongs), so an upgrade keeps the run history readable.
    fn seal_plaintext(&self, cipher: &StateCipher) -> Result<(), StoreError> {
        // Each sealed column: where its context starts, the rows still in the clear, and how
        // to put the sealed value back.
        const CLEAR: [(&str, &str, &str); 4] = [
            (
                "runs.code",
                "SELECT run_id, NULL, code FROM runs WHERE typeof(code) = 'text'",
                "UPDATE runs SET code = ?1 WHERE run_id = ?2",
            ),
            (
                "runs.envelope",
                "SELECT run_id, NULL, envelope FROM runs WHERE typeof(envelope) = 'text'",
                "UPDATE runs SET envelope = ?1 WHERE run_id = ?2",
            ),
            (
                "calls.result",
                "SELECT run_id, seq, result FROM calls WHERE typeof(result) = 'text'",
                "UPDATE calls SET result = ?1 WHERE run_id = ?2 AND seq = ?3",
            ),
            (
                "approvals.preview",
                "SELECT run_id, seq, preview FROM approvals WHERE typeof(preview) = 'text'",
                "UPDATE approvals SET preview = ?1 WHERE run_id = ?2 AND seq = ?3",
            ),
        ];
        let sealing_failed = |e: OpenError| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        self.write(|transaction| -> Result<(), StoreError> {
            let done: Option<i64> = transaction
                .query_row(
                    "SELECT 1 FROM meta WHERE name = 'sealed_at_rest'",
                    [],
                    |row| row.get(0),
                )
                .optional()?;
            if done.is_none() {
                for (place, select, update) in CLEAR {
                    let rows: Vec<(String, Option<i64>, String)> = {
                        let mut statement = transaction.prepare(select)?;
                        let rows = statement
                            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
                        rows.collect::<rusqlite::Result<_>>()?
                    };
                    for (run_id, seq, text) in rows {
                        let context = match seq {
                            Some(seq) => format!("{place}:{run_id}:{seq}"),
                            None => format!("{place}:{run_id}"),
                        };
                        let sealed = cipher
                            .seal(&context, text.as_bytes())
                            .map_err(sealing_failed)?;
                        match seq {
                            Some(seq) => {
                                transaction.execute(update, params![sealed, run_id, seq])?
                            }
                            None => transaction.execute(update, params![sealed, run_id])?,
                        };
                    }
                }
                transaction.execute(
                    "INSERT OR IGNORE INTO meta (name, value) VALUES ('sealed_at_rest', 1)",
                    [],
                )?;
            }
            Ok(())
        })
    }

    /// Deletes every run with its journal, approvals, grants and audit trail, the used
    /// elicitation states, and the record of the runs' key (and the key file), so the next run
    /// starts a new history with a new key. Tokens and source statuses stay. Returns how many
    /// runs were deleted.
    pub fn clear_runs(&self) -> Result<usize, StoreError> {
        let deleted = self.write(|transaction| -> Result<usize, StoreError> {
            let runs = transaction.execute("DELETE FROM runs", [])?;
            for table in ["calls", "approvals", "audit", "consumed_states", "meta"] {
                transaction.execute(&format!("DELETE FROM {table}"), [])?;
            }
            Ok(runs)
        })?;
        *self.cipher.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match std::fs::remove_file(self.keys.key_file_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::Key {
                path: self.path.clone(),
                reason: format!(
                    "the runs are deleted, but {} could not be: {e}",
                    self.keys.key_file_path().display()
                ),
            }),
            _ => Ok(deleted),
        }
    }

    /// The key recorded for this store, or a first one, recorded now; checked against the
    /// store's check value either way.
    fn unlock(&self) -> Result<StateCipher, String> {
        let recorded = self.key_record().map_err(|e| e.to_string())?;
        let (source, key) = match &recorded {
            Some((name, _)) => {
                let source = KeySource::parse(name).ok_or_else(|| {
                    format!("its key is kept in `{name}`, which this version does not know")
                })?;
                let key = self
                    .keys
                    .recorded(source)
                    .map_err(|e| format!("it is kept in {source}, which cannot be read: {e}"))?;
                (source, key)
            }
            None => self.keys.first()?,
        };
        let cipher = StateCipher::new(key);
        let check = match recorded {
            Some((_, check)) => check,
            None => {
                let (winner, check) = self
                    .record_key(source, &keys::check_value(&cipher)?)
                    .map_err(|e| e.to_string())?;
                if winner != source.as_str() {
                    // Another process keyed the store at the same moment, elsewhere: use its key.
                    return self.unlock();
                }
                check
            }
        };
        if !keys::check_matches(&cipher, &check) {
            return Err(format!(
                "the key in {source} is not the one these runs were encrypted with"
            ));
        }
        Ok(cipher)
    }

    fn key_record(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT s.value, k.value FROM meta s JOIN meta k ON k.name = 'key_check' WHERE s.name = 'key_source'",
                [],
                |row| Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?)),
            )
            .optional()
        })
    }

    /// Records the key's place and check value unless another process did first; returns what
    /// is recorded now.
    fn record_key(&self, source: KeySource, check: &[u8]) -> Result<(String, Vec<u8>), StoreError> {
        self.write(|transaction| -> Result<(String, Vec<u8>), StoreError> {
            let inserted = transaction.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('key_source', ?1)",
                params![source.as_str()],
            )?;
            if inserted == 1 {
                transaction.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('key_check', ?1)",
                    params![check],
                )?;
            }
            let recorded = transaction.query_row(
                "SELECT s.value, k.value FROM meta s JOIN meta k ON k.name = 'key_check' WHERE s.name = 'key_source'",
                [],
                |row| Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?)),
            )?;
            Ok(recorded)
        })
    }

    /// Unlocks the state key (once per process), keying a new store and sealing the rows an
    /// older version stored in the clear. Reads call it first, so those rows open like every
    /// other; `doctor` calls it to check the key.
    pub fn unlock_key(&self) -> Result<(), StoreError> {
        self.cipher().map(|_| ())
    }

    /// `text` sealed for the place `context` names.
    pub(crate) fn seal(&self, context: &str, text: &str) -> Result<Vec<u8>, StoreError> {
        self.cipher()?
            .seal(context, text.as_bytes())
            .map_err(|source| self.sealed_error(context, source))
    }

    /// What [`seal`](Self::seal) wrote for `context`.
    pub(crate) fn open_text(&self, context: &str, stored: &[u8]) -> Result<String, StoreError> {
        let opened = self
            .cipher()?
            .open(context, stored)
            .map_err(|source| self.sealed_error(context, source))?;
        String::from_utf8(opened).map_err(|_| self.sealed_error(context, OpenError::Rejected))
    }

    pub(super) fn sealed_error(&self, context: &str, source: OpenError) -> StoreError {
        StoreError::Sealed {
            path: self.path.clone(),
            what: describe_context(context),
            source,
        }
    }

    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        f(&connection).map_err(|e| StoreError::from_sql(&self.path, e))
    }

    /// Runs `f` in one write transaction, taken at once (`BEGIN IMMEDIATE`) so that what `f`
    /// reads cannot change before it writes: every compare-and-set that spans several rows goes
    /// through here. `f` decides with its own error type; the transaction commits only on `Ok`.
    pub(crate) fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let sql = |e| E::from(StoreError::from_sql(&self.path, e));
        let mut connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let transaction = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        let value = f(&transaction)?;
        transaction.commit().map_err(sql)?;
        Ok(value)
    }

    /// Records a new run with no origin (tests, tools that are not a client); returns the
    /// owner of its claim.
    pub fn begin_run(
        &self,
        run_id: &str,
        code: &str,
        seed: u64,
        start_time_ms: u64,
    ) -> Result<String, StoreError> {
        self.begin_run_from(run_id, code, seed, start_time_ms, &RunOrigin::default())
    }

    /// Records a new run and where it came from, in one statement: a run is stored whole or
    /// not at all. The run starts claimed by the caller (see `claims`); returns the owner.
    pub fn begin_run_from(
        &self,
        run_id: &str,
        code: &str,
        seed: u64,
        start_time_ms: u64,
        origin: &RunOrigin<'_>,
    ) -> Result<String, StoreError> {
        let now = now_ms();
        let owner = new_owner();
        let code = self.seal(&format!("runs.code:{run_id}"), code)?;
        self.with(|c| {
            c.execute(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms, client, profile, output_budget_bytes, owner, lease_until_ms, attempt) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?10, 1)",
                params![run_id, code, seed as i64, start_time_ms as i64, now as i64, origin.client, origin.profile, origin.output_budget_bytes.map(|b| b as i64), owner, lease_end(now)],
            )
            .map(|_| ())
        })?;
        Ok(owner)
    }

    /// The status of a run (`running`, `awaiting_approval`, `completed`, …) without opening
    /// anything sealed, so deciding on a run needs no key.
    pub fn run_status(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT status FROM runs WHERE run_id = ?1",
                params![run_id],
                |row| row.get(0),
            )
            .optional()
        })
    }

    /// Records how `owner`'s attempt of a run ended (or that it paused) and gives up the
    /// claim. False, and nothing written, when the run is no longer `owner`'s: another process
    /// took it over, and its outcome is the one that counts.
    pub fn finish_run(
        &self,
        run_id: &str,
        owner: &str,
        status: &str,
        envelope: &Value,
    ) -> Result<bool, StoreError> {
        let envelope = self.seal(&format!("runs.envelope:{run_id}"), &envelope.to_string())?;
        let changed = self.with(|c| {
            c.execute(
                "UPDATE runs SET status = ?3, envelope = ?4, updated_at_ms = ?5, owner = NULL, lease_until_ms = NULL
                 WHERE run_id = ?1 AND owner = ?2 AND status = 'running'",
                params![run_id, owner, status, envelope, now_ms() as i64],
            )
        })?;
        Ok(changed == 1)
    }

    pub fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.unlock_key()?;
        let sealed = self.with(|c| {
            c.query_row(
                "SELECT run_id, status, code, seed, start_time_ms, created_at_ms, envelope, output_budget_bytes, profile FROM runs WHERE run_id = ?1",
                params![run_id],
                sealed_run,
            )
            .optional()
        })?;
        sealed.map(|run| self.open_run(run)).transpose()
    }

    fn open_run(&self, sealed: SealedRun) -> Result<RunRecord, StoreError> {
        let mut record = sealed.record;
        record.code = self.open_text(&format!("runs.code:{}", record.run_id), &sealed.code)?;
        if let Some(envelope) = sealed.envelope {
            let text = self.open_text(&format!("runs.envelope:{}", record.run_id), &envelope)?;
            record.envelope = serde_json::from_str(&text).ok();
        }
        Ok(record)
    }
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

/// A run as read, before its script and envelope are opened.
struct SealedRun {
    record: RunRecord,
    code: Vec<u8>,
    envelope: Option<Vec<u8>>,
}

fn sealed_run(row: &rusqlite::Row<'_>) -> rusqlite::Result<SealedRun> {
    Ok(SealedRun {
        record: RunRecord {
            run_id: row.get(0)?,
            status: row.get(1)?,
            code: String::new(),
            seed: row.get::<_, i64>(3)? as u64,
            start_time_ms: row.get::<_, i64>(4)? as u64,
            created_at_ms: row.get::<_, i64>(5)? as u64,
            envelope: None,
            output_budget_bytes: row.get::<_, Option<i64>>(7)?.map(|v| v as u64),
            profile: row.get(8)?,
        },
        code: stored_bytes(row, 2)?.unwrap_or_default(),
        envelope: stored_bytes(row, 6)?,
    })
}

/// A sealed column's bytes. Text is what an older, unencrypting version wrote; it is passed on
/// so that opening it says so.
pub(super) fn stored_bytes(
    row: &rusqlite::Row<'_>,
    index: usize,
) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match row.get::<_, rusqlite::types::Value>(index)? {
        rusqlite::types::Value::Blob(bytes) => Some(bytes),
        rusqlite::types::Value::Text(text) => Some(text.into_bytes()),
        _ => None,
    })
}

/// What a sealing context names, for an error message: `calls.result:run_x:3` → "the result
/// of call 3 of run run_x".
fn describe_context(context: &str) -> String {
    let mut parts = context.split(':');
    let place = parts.next().unwrap_or_default();
    let run = parts.next().unwrap_or_default();
    let seq = parts.next().unwrap_or_default();
    match place {
        "runs.code" => format!("the script of run {run}"),
        "runs.envelope" => format!("the envelope of run {run}"),
        "calls.result" => format!("the result of call {seq} of run {run}"),
        "approvals.preview" => format!("the argument preview of call {seq} of run {run}"),
        other => format!("the value `{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::journal::tests::journal_call;
    use crate::runs::{CallState, JournalEntry, PendingCall};

    #[test]
    fn runs_and_journals_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        {
            let store = RunsStore::open(&path).unwrap();
            let owner = store.begin_run("run_a", "return 1", 7, 1000).unwrap();
            let entry = JournalEntry {
                address: "everything.echo".into(),
                ms: 3,
                ..entry(0, serde_json::json!({"content": []}))
            };
            journal_call(&store, "run_a", &owner, &entry);
            store
                .finish_run(
                    "run_a",
                    &owner,
                    "completed",
                    &serde_json::json!({"status": "completed"}),
                )
                .unwrap();
        }
        let store = RunsStore::open(&path).unwrap();
        let run = store.run("run_a").unwrap().unwrap();
        assert_eq!(
            (run.status.as_str(), run.seed, run.start_time_ms),
            ("completed", 7, 1000)
        );
        assert_eq!(run.envelope.unwrap()["status"], "completed");
        let journal = store.journal("run_a").unwrap();
        assert_eq!(journal.len(), 1);
        assert_eq!(journal[0].address, "everything.echo");
        assert!(store.run("run_missing").unwrap().is_none());
    }

    fn entry(seq: u64, result: Value) -> JournalEntry {
        JournalEntry {
            seq,
            address: "counter.write".into(),
            connection: None,
            call_digest: "d".into(),
            result,
            ok: true,
            ms: 1,
            state: CallState::Answered,
            mutating: true,
        }
    }

    /// Every byte SQLite wrote for the store, the write-ahead log included.
    fn stored_bytes_on_disk(path: &Path) -> Vec<u8> {
        let mut bytes = std::fs::read(path).unwrap();
        if let Ok(wal) = std::fs::read(path.with_extension("sqlite-wal")) {
            bytes.extend(wal);
        }
        bytes
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    }

    #[test]
    fn scripts_results_envelopes_and_previews_are_encrypted_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = RunsStore::open(&path).unwrap();
        let owner = store
            .begin_run("run_a", "return 'SCRIPT-MARKER'", 1, 2)
            .unwrap();
        journal_call(
            &store,
            "run_a",
            &owner,
            &entry(0, serde_json::json!({"text": "RESULT-MARKER"})),
        );
        let pending = PendingCall {
            seq: 1,
            address: "counter.publish",
            connection: None,
            preview: "{ key: \"PREVIEW-MARKER\" }",
            reason: "asks",
            call_digest: "d",
        };
        store.record_pending("run_a", &owner, &pending).unwrap();
        store
            .finish_run(
                "run_a",
                &owner,
                "completed",
                &serde_json::json!({"result": "ENVELOPE-MARKER"}),
            )
            .unwrap();
        let on_disk = stored_bytes_on_disk(&path);
        for marker in [
            "SCRIPT-MARKER",
            "RESULT-MARKER",
            "PREVIEW-MARKER",
            "ENVELOPE-MARKER",
        ] {
            assert!(
                !contains(&on_disk, marker),
                "{marker} is stored in the clear"
            );
        }
        assert!(
            contains(&on_disk, "counter.write"),
            "addresses stay readable"
        );

        let reopened = RunsStore::open(&path).unwrap();
        let run = reopened.run("run_a").unwrap().unwrap();
        assert_eq!(run.code, "return 'SCRIPT-MARKER'");
        assert_eq!(run.envelope.unwrap()["result"], "ENVELOPE-MARKER");
        assert_eq!(
            reopened.journal("run_a").unwrap()[0].result["text"],
            "RESULT-MARKER"
        );
        assert!(
            reopened.approvals("run_a").unwrap()[0]
                .preview
                .contains("PREVIEW-MARKER")
        );
        assert_eq!(reopened.key_source().unwrap(), Some(KeySource::KeyFile));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn another_or_a_missing_key_is_named_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        RunsStore::open(&path)
            .unwrap()
            .begin_run("run_a", "return 1", 1, 2)
            .unwrap();
        let key_file = dir.path().join(KEY_FILE_NAME);
        let original = std::fs::read(&key_file).unwrap();

        std::fs::write(&key_file, "ab".repeat(32)).unwrap();
        let err = RunsStore::open(&path)
            .unwrap()
            .run("run_a")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not the one these runs were encrypted with"),
            "{err}"
        );
        assert!(
            err.contains("capabilities hub runs --clear") && err.contains("state.sqlite"),
            "{err}"
        );
        let err = RunsStore::open(&path)
            .unwrap()
            .begin_run("run_b", "return 2", 1, 2)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not the one"),
            "a wrong key writes nothing: {err}"
        );

        std::fs::remove_file(&key_file).unwrap();
        let err = RunsStore::open(&path)
            .unwrap()
            .run("run_a")
            .unwrap_err()
            .to_string();
        assert!(err.contains(KEY_FILE_NAME), "{err}");
        assert!(
            !key_file.exists(),
            "a missing key is not replaced by a new one"
        );

        std::fs::write(&key_file, original).unwrap();
        let store = RunsStore::open(&path).unwrap();
        assert_eq!(store.run("run_a").unwrap().unwrap().code, "return 1");
        assert!(store.run("run_b").unwrap().is_none());
    }

    #[test]
    fn a_moved_or_unencrypted_value_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = RunsStore::open(&path).unwrap();
        let owner = store.begin_run("run_a", "return 1", 1, 2).unwrap();
        journal_call(&store, "run_a", &owner, &entry(0, serde_json::json!(0)));
        journal_call(&store, "run_a", &owner, &entry(1, serde_json::json!(1)));
        store
            .with(|c| {
                c.execute(
                    "UPDATE calls SET result = (SELECT result FROM calls WHERE seq = 0) WHERE seq = 1",
                    [],
                )
            })
            .unwrap();
        let err = store.journal("run_a").unwrap_err().to_string();
        assert!(err.contains("the result of call 1 of run run_a"), "{err}");
        assert!(
            err.contains("changed, moved, or encrypted with another key"),
            "{err}"
        );

        store
            .with(|c| c.execute("UPDATE runs SET code = 'return 1'", []))
            .unwrap();
        let err = store.run("run_a").unwrap_err().to_string();
        assert!(err.contains("the script of run run_a"), "{err}");
        assert!(err.contains("older version"), "{err}");
    }

    #[test]
    fn two_stores_keyed_at_once_share_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let first = RunsStore::open(&path).unwrap();
        let second = RunsStore::open(&path).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| first.begin_run("run_a", "return 'a'", 1, 2).unwrap());
            scope.spawn(|| second.begin_run("run_b", "return 'b'", 1, 2).unwrap());
        });
        let third = RunsStore::open(&path).unwrap();
        assert_eq!(third.run("run_a").unwrap().unwrap().code, "return 'a'");
        assert_eq!(third.run("run_b").unwrap().unwrap().code, "return 'b'");
        assert_eq!(
            *first.derived_key("x").unwrap(),
            *second.derived_key("x").unwrap()
        );
    }

    #[test]
    fn what_an_older_version_stored_in_the_clear_is_sealed_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = RunsStore::open(&path).unwrap();
        store
            .with(|c| {
                c.execute_batch(
                    "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms, envelope) VALUES ('run_old', 'awaiting_approval', 'OLD-SCRIPT', 1, 2, 3, 3, '{\"result\":\"OLD-ENVELOPE\"}');
                     INSERT INTO calls (run_id, seq, address, call_digest, result, ok, ms, recorded_at_ms) VALUES ('run_old', 0, 'counter.write', 'd', '{\"text\":\"OLD-RESULT\"}', 1, 1, 3);
                     INSERT INTO approvals (run_id, seq, address, preview, reason, created_at_ms, expires_at_ms) VALUES ('run_old', 1, 'counter.publish', 'OLD-PREVIEW', 'asks', 3, 4);",
                )
            })
            .unwrap();
        let run = store.run("run_old").unwrap().unwrap();
        assert_eq!(run.code, "OLD-SCRIPT");
        assert_eq!(run.envelope.unwrap()["result"], "OLD-ENVELOPE");
        assert_eq!(
            store.journal("run_old").unwrap()[0].result["text"],
            "OLD-RESULT"
        );
        assert_eq!(
            store.approvals("run_old").unwrap()[0].preview,
            "OLD-PREVIEW"
        );
        drop(store);
        let on_disk = stored_bytes_on_disk(&path);
        for marker in ["OLD-SCRIPT", "OLD-ENVELOPE", "OLD-RESULT", "OLD-PREVIEW"] {
            assert!(
                !contains(&on_disk, marker),
                "{marker} is still in the clear"
            );
        }
        let reopened = RunsStore::open(&path).unwrap();
        assert_eq!(reopened.run("run_old").unwrap().unwrap().code, "OLD-SCRIPT");
    }

    #[test]
    fn clearing_the_runs_keeps_the_tokens_and_starts_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = RunsStore::open(&path).unwrap();
        let owner = store.begin_run("run_a", "return 1", 1, 2).unwrap();
        journal_call(&store, "run_a", &owner, &entry(0, serde_json::json!(1)));
        store.create_token("laptop", None, None, &[]).unwrap();
        let key_file = dir.path().join(KEY_FILE_NAME);
        let old_key = std::fs::read(&key_file).unwrap();

        assert_eq!(store.clear_runs().unwrap(), 1);
        assert!(!key_file.exists());
        assert_eq!(store.tokens().unwrap().len(), 1, "tokens are kept");
        assert!(store.run("run_a").unwrap().is_none());
        assert!(store.journal("run_a").unwrap().is_empty());

        store.begin_run("run_b", "return 2", 1, 2).unwrap();
        assert_ne!(std::fs::read(&key_file).unwrap(), old_key, "a new key");
        let reopened = RunsStore::open(&path).unwrap();
        assert_eq!(reopened.run("run_b").unwrap().unwrap().code, "return 2");
    }

    #[test]
    fn a_damaged_file_is_refused_before_sqlite_writes_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let store = RunsStore::open(&path).unwrap();
        store.begin_run("run_a", "return 1", 1, 2).unwrap();
        store.create_token("laptop", None, None, &[]).unwrap();
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
            let err = RunsStore::open(&path).err().unwrap().to_string();
            assert!(err.contains(problem), "{err}");
            assert!(err.contains("Restore it from a backup"), "{err}");
            assert!(!err.contains("writable"), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{problem}: untouched");
        }
        // An empty file with nothing beside it is a store that was never written.
        let fresh = tempfile::tempdir().unwrap();
        let path = fresh.path().join("state.sqlite");
        std::fs::write(&path, "").unwrap();
        RunsStore::open(&path)
            .unwrap()
            .begin_run("run_a", "return 1", 1, 2)
            .unwrap();
    }

    #[test]
    fn an_unwritable_path_names_itself() {
        let err = RunsStore::open(Path::new("/proc/no/such/state.sqlite"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("/proc/no/such/state.sqlite"), "{err}");
    }
}
