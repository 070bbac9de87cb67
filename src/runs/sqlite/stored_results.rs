//! Stored results in SQLite: keeping one evicts in the same write transaction, so two hubs
//! storing for one scope at once never leave it over its limits.

use rusqlite::{OptionalExtension, params};

use super::Cached;
use super::{Sqlite, unsigned};
use crate::runs::backend::StoredResultRecords;
use crate::runs::error::StoreError;
use crate::runs::records::{Retention, StoredResult};
use crate::runs::vault::Sealed;

impl StoredResultRecords for Sqlite {
    fn keep_result(
        &self,
        stored: &StoredResult,
        value: &Sealed,
        retention: &Retention,
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        self.write(|t| -> Result<u64, StoreError> {
            t.execute_cached(
                "DELETE FROM stored_results WHERE expires_at_ms <= ?1",
                params![now_ms as i64],
            )?;
            t.execute_cached(
                "INSERT INTO stored_results (result_ref, scope, run_id, bytes, value, created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    stored.result_ref,
                    stored.scope,
                    stored.run_id,
                    stored.bytes as i64,
                    value.bytes(),
                    stored.created_at_ms as i64,
                    stored.expires_at_ms as i64
                ],
            )?;
            // Newest first: keep while both totals stay within the limits, drop the rest. The
            // new one comes first, so it is always kept (the caller checked it fits alone).
            let mut evict = Vec::new();
            {
                let mut rows = t.prepare_cached(
                    "SELECT result_ref, bytes FROM stored_results WHERE scope = ?1 ORDER BY created_at_ms DESC, rowid DESC",
                )?;
                let rows = rows.query_map(params![stored.scope], |row| {
                    Ok((row.get::<_, String>(0)?, unsigned(row.get(1)?)))
                })?;
                let (mut count, mut bytes) = (0u64, 0u64);
                for row in rows {
                    let (result_ref, size) = row?;
                    count += 1;
                    bytes = bytes.saturating_add(size);
                    if count > retention.max_results || bytes > retention.max_bytes {
                        evict.push(result_ref);
                    }
                }
            }
            for result_ref in &evict {
                t.execute_cached(
                    "DELETE FROM stored_results WHERE result_ref = ?1",
                    params![result_ref],
                )?;
            }
            Ok(evict.len() as u64)
        })
    }

    fn stored_result(
        &self,
        scope: &str,
        result_ref: &str,
        now_ms: u64,
    ) -> Result<Option<Sealed>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                "SELECT value FROM stored_results WHERE result_ref = ?1 AND scope = ?2 AND expires_at_ms > ?3",
                params![result_ref, scope, now_ms as i64],
                |row| row.get::<_, Vec<u8>>(0),
            )
            .optional()
            .map(|value| value.map(Sealed::stored))
        })
    }
}
