//! Source statuses in SQLite: one row per source, the latest report wins.

use rusqlite::params;

use super::Cached;
use super::{Sqlite, unsigned};
use crate::runs::backend::SourceStatusRecords;
use crate::runs::error::StoreError;
use crate::runs::records::SourceStatusRecord;

impl SourceStatusRecords for Sqlite {
    fn record_source_status(&self, record: &SourceStatusRecord) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO source_status (name, status, tool_count, error, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    record.name,
                    record.status,
                    record.tool_count as i64,
                    record.error,
                    record.updated_at_ms as i64
                ],
            )
            .map(|_| ())
        })
    }

    fn source_statuses(&self) -> Result<Vec<SourceStatusRecord>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT name, status, tool_count, error, updated_at_ms FROM source_status ORDER BY name",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(SourceStatusRecord {
                    name: row.get(0)?,
                    status: row.get(1)?,
                    tool_count: unsigned(row.get(2)?) as usize,
                    error: row.get(3)?,
                    updated_at_ms: unsigned(row.get(4)?),
                })
            })?;
            rows.collect()
        })
    }
}
