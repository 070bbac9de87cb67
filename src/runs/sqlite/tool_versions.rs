//! Tool versions in SQLite: observing a listing and deciding what is confirmed happen in one
//! write transaction, so two hubs that list a changed tool at once agree on which version was
//! first. A version with an identity (a source's skill) is trusted by that identity, whatever
//! address it was confirmed under.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Cached;
use super::{Sqlite, unsigned};
use crate::runs::backend::ToolVersionRecords;
use crate::runs::error::StoreError;
use crate::runs::records::{SeenVersion, ToolVersion, Unconfirmed, VersionState};

/// Who confirmed the first version of a tool: nobody had to.
const FIRST_SEEN: &str = "first seen";
/// Who confirmed a skill's version seen at a new address: whoever confirmed it at the address
/// that follows.
const CONFIRMED_AS: &str = "confirmed as";

impl ToolVersionRecords for Sqlite {
    fn observe_versions(
        &self,
        seen: &[SeenVersion],
        now_ms: u64,
    ) -> Result<Vec<VersionState>, StoreError> {
        self.write(|t| -> Result<Vec<VersionState>, StoreError> {
            let mut states = Vec::with_capacity(seen.len());
            for version in seen {
                states.push(observe_one(t, version, now_ms)?);
            }
            Ok(states)
        })
    }

    fn confirm_version(
        &self,
        address: &str,
        version: &str,
        by: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.write(|t| -> Result<bool, StoreError> {
            let changed = t.execute_cached(
                "UPDATE tool_versions SET confirmed_at_ms = ?3, confirmed_by = ?4 WHERE address = ?1 AND version = ?2 AND confirmed_at_ms IS NULL",
                params![address, version, now_ms as i64, by],
            )?;
            if changed > 0 {
                return Ok(true);
            }
            let known: Option<i64> = t
                .query_row_cached(
                    "SELECT 1 FROM tool_versions WHERE address = ?1 AND version = ?2",
                    params![address, version],
                    |row| row.get(0),
                )
                .optional()?;
            Ok(known.is_some())
        })
    }

    fn last_confirmed_version(
        &self,
        address: &str,
        identity: Option<&str>,
    ) -> Result<Option<ToolVersion>, StoreError> {
        self.with(|c| last_confirmed(c, address, identity))
    }

    fn unconfirmed_versions(&self) -> Result<Vec<Unconfirmed>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT v.address, v.version, (SELECT c.read_only FROM tool_versions c WHERE c.address = v.address AND c.confirmed_at_ms IS NOT NULL ORDER BY c.confirmed_at_ms DESC, c.rowid DESC LIMIT 1) FROM tool_versions v WHERE v.confirmed_at_ms IS NULL ORDER BY v.address",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(Unconfirmed {
                    address: row.get(0)?,
                    version: row.get(1)?,
                    read_only_before: row.get(2)?,
                })
            })?;
            rows.collect()
        })
    }
}

fn observe_one(
    t: &Transaction<'_>,
    seen: &SeenVersion,
    now_ms: u64,
) -> Result<VersionState, StoreError> {
    let known: Option<Option<i64>> = t
        .query_row_cached(
            "SELECT confirmed_at_ms FROM tool_versions WHERE address = ?1 AND version = ?2",
            params![seen.address, seen.version],
            |row| row.get(0),
        )
        .optional()?;
    // Confirmed under another address as the same thing: confirmed here too.
    let elsewhere: Option<String> = match &seen.identity {
        Some(identity) if known.is_none_or(|at| at.is_none()) => t
            .query_row_cached(
                "SELECT address FROM tool_versions WHERE identity = ?1 AND version = ?2 AND confirmed_at_ms IS NOT NULL ORDER BY confirmed_at_ms DESC, rowid DESC LIMIT 1",
                params![identity, seen.version],
                |row| row.get(0),
            )
            .optional()?,
        _ => None,
    };
    let confirmed_by = elsewhere.map(|address| format!("{CONFIRMED_AS} {address}"));
    let confirmed = match known {
        Some(Some(_)) => true,
        Some(None) => {
            if let Some(by) = &confirmed_by {
                t.execute_cached(
                    "UPDATE tool_versions SET confirmed_at_ms = ?3, confirmed_by = ?4 WHERE address = ?1 AND version = ?2",
                    params![seen.address, seen.version, now_ms as i64, by],
                )?;
            }
            confirmed_by.is_some()
        }
        None => {
            let any_before: Option<i64> = t
                .query_row_cached(
                    "SELECT 1 FROM tool_versions WHERE address = ?1 OR identity = ?2 LIMIT 1",
                    params![seen.address, seen.identity],
                    |row| row.get(0),
                )
                .optional()?;
            // The first version of a tool is what the user added the source with; a skill
            // that only moved to a new address is not first seen there.
            let by = match (any_before, confirmed_by) {
                (_, Some(by)) => Some(by),
                (None, None) => Some(FIRST_SEEN.to_string()),
                (Some(_), None) => None,
            };
            t.execute_cached(
                "INSERT INTO tool_versions (address, version, definition, read_only, first_seen_ms, confirmed_at_ms, confirmed_by, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    seen.address,
                    seen.version,
                    seen.definition.to_string(),
                    seen.read_only,
                    now_ms as i64,
                    by.is_some().then_some(now_ms as i64),
                    by,
                    seen.identity,
                ],
            )?;
            by.is_some()
        }
    };
    if confirmed {
        return Ok(VersionState::Confirmed);
    }
    let last_confirmed = last_confirmed(t, &seen.address, seen.identity.as_deref())?;
    Ok(VersionState::Changed {
        confirmed: last_confirmed.map(Box::new),
    })
}

/// The version of `address` confirmed last, else the one of `identity` under any address.
fn last_confirmed(
    c: &Connection,
    address: &str,
    identity: Option<&str>,
) -> rusqlite::Result<Option<ToolVersion>> {
    c.query_row_cached(
        "SELECT address, version, definition, read_only, first_seen_ms, confirmed_at_ms, confirmed_by FROM tool_versions WHERE (address = ?1 OR identity = ?2) AND confirmed_at_ms IS NOT NULL ORDER BY address = ?1 DESC, confirmed_at_ms DESC, rowid DESC LIMIT 1",
        params![address, identity],
        |row| {
            let definition: String = row.get(2)?;
            Ok(ToolVersion {
                address: row.get(0)?,
                version: row.get(1)?,
                // Written by `observe_one` from a `Value`; unreadable only if changed by hand,
                // and then the change just shows against nothing.
                definition: serde_json::from_str(&definition).unwrap_or(serde_json::Value::Null),
                read_only: row.get(3)?,
                first_seen_ms: unsigned(row.get(4)?),
                confirmed_at_ms: row.get::<_, Option<i64>>(5)?.map(unsigned),
                confirmed_by: row.get(6)?,
            })
        },
    )
    .optional()
}
