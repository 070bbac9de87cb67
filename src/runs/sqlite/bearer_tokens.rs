//! Bearer tokens in SQLite: each row keeps the SHA-256 of a token's secret, never the secret.

use rusqlite::{OptionalExtension, params};

use super::Cached;
use super::{Sqlite, unsigned};
use crate::runs::backend::BearerTokenRecords;
use crate::runs::error::StoreError;
use crate::runs::records::TokenRecord;

const COLUMNS: &str = "name, profile, allow, created_at_ms, expires_at_ms, revoked_at_ms";

fn record(row: &rusqlite::Row<'_>) -> rusqlite::Result<TokenRecord> {
    let allow: String = row.get(2)?;
    Ok(TokenRecord {
        name: row.get(0)?,
        profile: row.get(1)?,
        // Written from a Vec<String>; unreadable means "allows nothing".
        allow: serde_json::from_str(&allow).unwrap_or_else(|_| vec![String::new()]),
        created_at_ms: unsigned(row.get(3)?),
        expires_at_ms: row.get::<_, Option<i64>>(4)?.map(unsigned),
        revoked_at_ms: row.get::<_, Option<i64>>(5)?.map(unsigned),
    })
}

impl BearerTokenRecords for Sqlite {
    fn insert_token(&self, record: &TokenRecord, hash: &str) -> Result<bool, StoreError> {
        let allow = serde_json::to_string(&record.allow).unwrap_or_else(|_| "[]".into());
        self.write(|t| -> Result<bool, StoreError> {
            t.execute_cached(
                "DELETE FROM tokens WHERE name = ?1 AND revoked_at_ms IS NOT NULL",
                params![record.name],
            )?;
            let inserted = t.execute_cached(
                "INSERT OR IGNORE INTO tokens (name, hash, profile, allow, created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    record.name,
                    hash,
                    record.profile,
                    allow,
                    record.created_at_ms as i64,
                    record.expires_at_ms.map(|v| v as i64)
                ],
            )?;
            Ok(inserted == 1)
        })
    }

    fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.with(|c| {
            let mut statement =
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM tokens ORDER BY name"))?;
            let rows = statement.query_map([], record)?;
            rows.collect()
        })
    }

    fn revoke_token(&self, name: &str, now_ms: u64) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "UPDATE tokens SET revoked_at_ms = ?2 WHERE name = ?1 AND revoked_at_ms IS NULL",
                params![name, now_ms as i64],
            )
        })?;
        Ok(changed == 1)
    }

    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                &format!("SELECT {COLUMNS} FROM tokens WHERE hash = ?1"),
                params![hash],
                record,
            )
            .optional()
        })
    }

    fn token_by_name(&self, name: &str) -> Result<Option<TokenRecord>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                &format!("SELECT {COLUMNS} FROM tokens WHERE name = ?1"),
                params![name],
                record,
            )
            .optional()
        })
    }
}
