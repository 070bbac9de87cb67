//! The last status each source reported, written by hub processes and read by the dashboard (a
//! separate process): the store is the only thing they share, so the dashboard shows live
//! sources without a hub of its own.

use rusqlite::params;

use super::store::{RunsStore, StoreError, now_ms};

/// What a hub last said about one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStatusRecord {
    pub name: String,
    /// A short word: `connecting`, `ready`, `failed`, `restarting`, `disabled`.
    pub status: String,
    pub tool_count: usize,
    /// The last error, kept while the source recovers so a person can see what went wrong.
    pub error: Option<String>,
    pub updated_at_ms: u64,
}

impl RunsStore {
    /// Records the current status of a source, replacing what was recorded before.
    pub fn record_source_status(
        &self,
        name: &str,
        status: &str,
        tool_count: usize,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT OR REPLACE INTO source_status (name, status, tool_count, error, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![name, status, tool_count as i64, error, now_ms() as i64],
            )
            .map(|_| ())
        })
    }

    /// Every recorded source status, by name.
    pub fn source_statuses(&self) -> Result<Vec<SourceStatusRecord>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached("SELECT name, status, tool_count, error, updated_at_ms FROM source_status ORDER BY name")?;
            let rows = statement.query_map([], |row| {
                Ok(SourceStatusRecord {
                    name: row.get(0)?,
                    status: row.get(1)?,
                    tool_count: row.get::<_, i64>(2)?.max(0) as usize,
                    error: row.get(3)?,
                    updated_at_ms: row.get::<_, i64>(4)?.max(0) as u64,
                })
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_status_of_each_source_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        assert!(store.source_statuses().unwrap().is_empty());
        store
            .record_source_status("time", "connecting", 0, None)
            .unwrap();
        store
            .record_source_status("everything", "failed", 0, Some("spawn failed"))
            .unwrap();
        store
            .record_source_status("time", "ready", 2, None)
            .unwrap();
        let statuses = store.source_statuses().unwrap();
        let summary: Vec<_> = statuses
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.status.as_str(),
                    s.tool_count,
                    s.error.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("everything", "failed", 0, Some("spawn failed")),
                ("time", "ready", 2, None)
            ]
        );
    }
}
