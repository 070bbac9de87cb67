//! The key record in SQLite (where the state key is kept and its check value, in `meta`), and
//! the one-time sealing of what a version before encryption at rest stored in the clear.

use rusqlite::{OptionalExtension, params};

use super::Sqlite;
use crate::runs::backend::{KeyRecords, Sealer};
use crate::runs::error::StoreError;
use crate::runs::vault::Place;

const KEY_RECORD: &str = "SELECT s.value, k.value FROM meta s JOIN meta k ON k.name = 'key_check' WHERE s.name = 'key_source'";

impl KeyRecords for Sqlite {
    fn key_record(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        self.with(|c| {
            c.query_row(KEY_RECORD, [], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })
            .optional()
        })
    }

    fn record_key(&self, source: &str, check: &[u8]) -> Result<(String, Vec<u8>), StoreError> {
        self.write(|t| -> Result<(String, Vec<u8>), StoreError> {
            let inserted = t.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('key_source', ?1)",
                params![source],
            )?;
            if inserted == 1 {
                t.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('key_check', ?1)",
                    params![check],
                )?;
            }
            Ok(t.query_row(KEY_RECORD, [], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
            })?)
        })
    }

    fn seal_clear_values(&self, sealer: &Sealer<'_>) -> Result<(), StoreError> {
        // Each sealed column: the rows still in the clear (text where a blob belongs), and how
        // to put the sealed value back.
        const CLEAR: [(&str, &str); 4] = [
            (
                "SELECT run_id, NULL, code FROM runs WHERE typeof(code) = 'text'",
                "UPDATE runs SET code = ?1 WHERE run_id = ?2",
            ),
            (
                "SELECT run_id, NULL, envelope FROM runs WHERE typeof(envelope) = 'text'",
                "UPDATE runs SET envelope = ?1 WHERE run_id = ?2",
            ),
            (
                "SELECT run_id, seq, result FROM calls WHERE typeof(result) = 'text'",
                "UPDATE calls SET result = ?1 WHERE run_id = ?2 AND seq = ?3",
            ),
            (
                "SELECT run_id, seq, preview FROM approvals WHERE typeof(preview) = 'text'",
                "UPDATE approvals SET preview = ?1 WHERE run_id = ?2 AND seq = ?3",
            ),
        ];
        let done: Option<i64> = self.with(|c| {
            c.query_row(
                "SELECT 1 FROM meta WHERE name = 'sealed_at_rest'",
                [],
                |row| row.get(0),
            )
            .optional()
        })?;
        if done.is_some() {
            return Ok(());
        }
        let sealing_failed = |e| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        self.write(|t| -> Result<(), StoreError> {
            for (column, (select, update)) in CLEAR.iter().enumerate() {
                let rows: Vec<(String, Option<i64>, String)> = {
                    let mut statement = t.prepare(select)?;
                    let rows = statement
                        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
                    rows.collect::<rusqlite::Result<_>>()?
                };
                for (run_id, seq, text) in rows {
                    let seq = seq.map(|s| s.max(0) as u64).unwrap_or(0);
                    let place = match column {
                        0 => Place::Script { run_id: &run_id },
                        1 => Place::Envelope { run_id: &run_id },
                        2 => Place::Result {
                            run_id: &run_id,
                            seq,
                        },
                        _ => Place::Preview {
                            run_id: &run_id,
                            seq,
                        },
                    };
                    let sealed = sealer(place, &text).map_err(sealing_failed)?;
                    if column < 2 {
                        t.execute(update, params![sealed.bytes(), run_id])?;
                    } else {
                        t.execute(update, params![sealed.bytes(), run_id, seq as i64])?;
                    }
                }
            }
            t.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('sealed_at_rest', 1)",
                [],
            )?;
            Ok(())
        })
    }
}
