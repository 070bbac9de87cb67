//! The SQLite store of runs and their call journals.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

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
    #[error("the state store failed: {0}")]
    Sql(#[from] rusqlite::Error),
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
}

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    /// SHA-256 of the canonical arguments, to notice a replay that diverges.
    pub args_digest: String,
    /// The raw `CallToolResult`, or `{"error": {...}}` when the call failed.
    pub result: Value,
    pub ok: bool,
    pub ms: u64,
}

/// The store. Cheap to share behind an `Arc`; SQLite serialises writers across processes and
/// the busy timeout makes a second process wait instead of failing.
pub struct RunsStore {
    connection: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    run_id        TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    code          TEXT NOT NULL,
    seed          INTEGER NOT NULL,
    start_time_ms INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    envelope      TEXT,
    output_budget_bytes INTEGER,
    client        TEXT,
    profile       TEXT
);
CREATE TABLE IF NOT EXISTS calls (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    address     TEXT NOT NULL,
    connection  TEXT,
    args_digest TEXT NOT NULL,
    result      TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    ms          INTEGER NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS approvals (
    run_id        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    address       TEXT NOT NULL,
    connection    TEXT,
    preview       TEXT NOT NULL,
    reason        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    decision      TEXT,
    decided_at_ms INTEGER,
    decided_by    TEXT,
    args_digest   TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS consumed_states (
    nonce    TEXT PRIMARY KEY,
    at_ms    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_grants (
    run_id  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    PRIMARY KEY (run_id, address)
);
CREATE TABLE IF NOT EXISTS audit (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms  INTEGER NOT NULL,
    run_id TEXT,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL
);
";

/// Milliseconds since the Unix epoch, the store's clock.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl RunsStore {
    /// Opens (creating) the database at `path`.
    pub fn open(path: &Path) -> Result<RunsStore, StoreError> {
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            // A failure here surfaces as the open error below, which names the path.
            let _ = std::fs::create_dir_all(parent);
        }
        let connection = Connection::open(path).map_err(open_error)?;
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
        connection.execute_batch(SCHEMA).map_err(open_error)?;
        connection
            .execute_batch(super::sources::SCHEMA)
            .map_err(open_error)?;
        connection
            .execute_batch(super::tokens::SCHEMA)
            .map_err(open_error)?;
        Ok(RunsStore {
            connection: Mutex::new(connection),
        })
    }

    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(&connection)?)
    }

    pub fn begin_run(
        &self,
        run_id: &str,
        code: &str,
        seed: u64,
        start_time_ms: u64,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        self.with(|c| {
            c.execute(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?5)",
                params![run_id, code, seed as i64, start_time_ms as i64, now as i64],
            )
            .map(|_| ())
        })
    }

    /// Who started the run: the MCP client's name (or `exec`) and the hub's profile.
    pub fn record_origin(
        &self,
        run_id: &str,
        client: Option<&str>,
        profile: Option<&str>,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE runs SET client = ?2, profile = ?3 WHERE run_id = ?1",
                params![run_id, client, profile],
            )
            .map(|_| ())
        })
    }

    pub fn record_output_budget(&self, run_id: &str, bytes: u64) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE runs SET output_budget_bytes = ?2 WHERE run_id = ?1",
                params![run_id, bytes as i64],
            )
            .map(|_| ())
        })
    }

    pub fn record_call(&self, run_id: &str, entry: &JournalEntry) -> Result<(), StoreError> {
        let result = entry.result.to_string();
        self.with(|c| {
            c.execute(
                "INSERT OR REPLACE INTO calls (run_id, seq, address, connection, args_digest, result, ok, ms, recorded_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![run_id, entry.seq as i64, entry.address, entry.connection, entry.args_digest, result, entry.ok, entry.ms as i64, now_ms() as i64],
            )
            .map(|_| ())
        })
    }

    pub fn finish_run(
        &self,
        run_id: &str,
        status: &str,
        envelope: &Value,
    ) -> Result<(), StoreError> {
        let envelope = envelope.to_string();
        self.with(|c| {
            c.execute(
                "UPDATE runs SET status = ?2, envelope = ?3, updated_at_ms = ?4 WHERE run_id = ?1",
                params![run_id, status, envelope, now_ms() as i64],
            )
            .map(|_| ())
        })
    }

    /// The most recent runs, newest first.
    pub fn recent_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT run_id, status, code, seed, start_time_ms, created_at_ms, envelope, output_budget_bytes FROM runs ORDER BY created_at_ms DESC, rowid DESC LIMIT ?1",
            )?;
            let rows = statement.query_map(params![limit as i64], run_record)?;
            rows.collect()
        })
    }

    pub fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT run_id, status, code, seed, start_time_ms, created_at_ms, envelope, output_budget_bytes FROM runs WHERE run_id = ?1",
                params![run_id],
                run_record,
            )
            .optional()
        })
    }

    /// The calls of a run in sequence order.
    pub fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT seq, address, connection, args_digest, result, ok, ms FROM calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                let result: String = row.get(4)?;
                Ok(JournalEntry {
                    seq: row.get::<_, i64>(0)? as u64,
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    args_digest: row.get(3)?,
                    result: serde_json::from_str(&result).unwrap_or(Value::Null),
                    ok: row.get(5)?,
                    ms: row.get::<_, i64>(6)? as u64,
                })
            })?;
            rows.collect()
        })
    }
}

fn run_record(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let envelope: Option<String> = row.get(6)?;
    Ok(RunRecord {
        run_id: row.get(0)?,
        status: row.get(1)?,
        code: row.get(2)?,
        seed: row.get::<_, i64>(3)? as u64,
        start_time_ms: row.get::<_, i64>(4)? as u64,
        created_at_ms: row.get::<_, i64>(5)? as u64,
        envelope: envelope.and_then(|e| serde_json::from_str(&e).ok()),
        output_budget_bytes: row.get::<_, Option<i64>>(7)?.map(|v| v as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_journals_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        {
            let store = RunsStore::open(&path).unwrap();
            store.begin_run("run_a", "return 1", 7, 1000).unwrap();
            let entry = JournalEntry {
                seq: 0,
                address: "everything.echo".into(),
                connection: None,
                args_digest: "d".into(),
                result: serde_json::json!({"content": []}),
                ok: true,
                ms: 3,
            };
            store.record_call("run_a", &entry).unwrap();
            store
                .finish_run(
                    "run_a",
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

    #[test]
    fn an_unwritable_path_names_itself() {
        let err = RunsStore::open(Path::new("/proc/no/such/state.sqlite"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("/proc/no/such/state.sqlite"), "{err}");
    }
}
