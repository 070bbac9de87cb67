//! The smaller record kinds in PostgreSQL: bearer tokens (their hashes), source statuses,
//! stored results (kept and evicted in one transaction), tool versions, and the key record.

use postgres::{GenericClient, Row};

use super::{Postgres, signed, unsigned};
use crate::runs::backend::{
    BearerTokenRecords, KeyRecords, Sealer, SourceStatusRecords, StoredResultRecords,
    ToolVersionRecords,
};
use crate::runs::error::StoreError;
use crate::runs::records::{
    Retention, SeenVersion, SourceStatusRecord, StoredResult, TokenRecord, ToolVersion,
    Unconfirmed, VersionState,
};
use crate::runs::vault::Sealed;

const TOKEN_COLUMNS: &str = "name, profile, allow, created_at_ms, expires_at_ms, revoked_at_ms";

fn token(row: &Row) -> TokenRecord {
    let allow: String = row.get(2);
    TokenRecord {
        name: row.get(0),
        profile: row.get(1),
        // Written from a Vec<String>; unreadable means "allows nothing".
        allow: serde_json::from_str(&allow).unwrap_or_else(|_| vec![String::new()]),
        created_at_ms: unsigned(row.get(3)),
        expires_at_ms: row.get::<_, Option<i64>>(4).map(unsigned),
        revoked_at_ms: row.get::<_, Option<i64>>(5).map(unsigned),
    }
}

impl BearerTokenRecords for Postgres {
    fn insert_token(&self, record: &TokenRecord, hash: &str) -> Result<bool, StoreError> {
        let allow = serde_json::to_string(&record.allow).unwrap_or_else(|_| "[]".into());
        self.write(|t| -> Result<bool, StoreError> {
            t.execute(
                "DELETE FROM tokens WHERE name = $1 AND revoked_at_ms IS NOT NULL",
                &[&record.name],
            )
            .map_err(|e| self.error(e))?;
            let inserted = t
                .execute(
                    "INSERT INTO tokens (name, hash, profile, allow, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                    &[
                        &record.name,
                        &hash,
                        &record.profile,
                        &allow,
                        &signed(record.created_at_ms),
                        &record.expires_at_ms.map(signed),
                    ],
                )
                .map_err(|e| self.error(e))?;
            Ok(inserted == 1)
        })
    }

    fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                &format!("SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY name"),
                &[],
            )?;
            Ok(rows.iter().map(token).collect())
        })
    }

    fn revoke_token(&self, name: &str, now_ms: u64) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute(
                "UPDATE tokens SET revoked_at_ms = $2 WHERE name = $1 AND revoked_at_ms IS NULL",
                &[&name, &signed(now_ms)],
            )
        })?;
        Ok(changed == 1)
    }

    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                &format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE hash = $1"),
                &[&hash],
            )?;
            Ok(row.as_ref().map(token))
        })
    }

    fn token_by_name(&self, name: &str) -> Result<Option<TokenRecord>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                &format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE name = $1"),
                &[&name],
            )?;
            Ok(row.as_ref().map(token))
        })
    }
}

impl SourceStatusRecords for Postgres {
    fn record_source_status(&self, record: &SourceStatusRecord) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO source_status (name, status, tool_count, error, updated_at_ms) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (name) DO UPDATE SET status = excluded.status, tool_count = excluded.tool_count, error = excluded.error, updated_at_ms = excluded.updated_at_ms",
                &[
                    &record.name,
                    &record.status,
                    &(record.tool_count as i64),
                    &record.error,
                    &signed(record.updated_at_ms),
                ],
            )
            .map(|_| ())
        })
    }

    fn source_statuses(&self) -> Result<Vec<SourceStatusRecord>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                "SELECT name, status, tool_count, error, updated_at_ms FROM source_status ORDER BY name",
                &[],
            )?;
            Ok(rows
                .iter()
                .map(|row| SourceStatusRecord {
                    name: row.get(0),
                    status: row.get(1),
                    tool_count: unsigned(row.get(2)) as usize,
                    error: row.get(3),
                    updated_at_ms: unsigned(row.get(4)),
                })
                .collect())
        })
    }
}

impl StoredResultRecords for Postgres {
    fn keep_result(
        &self,
        stored: &StoredResult,
        value: &Sealed,
        retention: &Retention,
        now_ms: u64,
    ) -> Result<u64, StoreError> {
        self.write(|t| -> Result<u64, StoreError> {
            let mut step = || -> Result<u64, postgres::Error> {
                t.execute(
                    "DELETE FROM stored_results WHERE expires_at_ms <= $1",
                    &[&signed(now_ms)],
                )?;
                t.execute(
                    "INSERT INTO stored_results (result_ref, scope, run_id, bytes, value, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &stored.result_ref,
                        &stored.scope,
                        &stored.run_id,
                        &signed(stored.bytes),
                        &value.bytes(),
                        &signed(stored.created_at_ms),
                        &signed(stored.expires_at_ms),
                    ],
                )?;
                // Newest first: keep while both totals stay within the limits (the new one
                // first, so it is always kept), drop the rest.
                let rows = t.query(
                    "SELECT result_ref, bytes FROM stored_results WHERE scope = $1 ORDER BY created_at_ms DESC, seq_no DESC",
                    &[&stored.scope],
                )?;
                let (mut count, mut bytes, mut evicted) = (0u64, 0u64, 0u64);
                for row in rows {
                    count += 1;
                    bytes = bytes.saturating_add(unsigned(row.get(1)));
                    if count > retention.max_results || bytes > retention.max_bytes {
                        let result_ref: String = row.get(0);
                        t.execute(
                            "DELETE FROM stored_results WHERE result_ref = $1",
                            &[&result_ref],
                        )?;
                        evicted += 1;
                    }
                }
                Ok(evicted)
            };
            step().map_err(|e| self.error(e))
        })
    }

    fn stored_result(
        &self,
        scope: &str,
        result_ref: &str,
        now_ms: u64,
    ) -> Result<Option<Sealed>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                "SELECT value FROM stored_results WHERE result_ref = $1 AND scope = $2 AND expires_at_ms > $3",
                &[&result_ref, &scope, &signed(now_ms)],
            )?;
            Ok(row.map(|row| Sealed::stored(row.get(0))))
        })
    }
}

/// Who confirmed the first version of a tool: nobody had to.
const FIRST_SEEN: &str = "first seen";
/// Who confirmed a skill's version seen at a new address: whoever confirmed it at the address
/// that follows.
const CONFIRMED_AS: &str = "confirmed as";

impl ToolVersionRecords for Postgres {
    fn observe_versions(
        &self,
        seen: &[SeenVersion],
        now_ms: u64,
    ) -> Result<Vec<VersionState>, StoreError> {
        self.write(|t| -> Result<Vec<VersionState>, StoreError> {
            let mut states = Vec::with_capacity(seen.len());
            for version in seen {
                states.push(observe_one(t, version, now_ms).map_err(|e| self.error(e))?);
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
        self.with(|c| {
            c.execute(
                "UPDATE tool_versions SET confirmed_at_ms = COALESCE(confirmed_at_ms, $3), confirmed_by = COALESCE(confirmed_by, $4) WHERE address = $1 AND version = $2",
                &[&address, &version, &signed(now_ms), &by],
            )
            .map(|n| n == 1)
        })
    }

    fn unconfirmed_versions(&self) -> Result<Vec<Unconfirmed>, StoreError> {
        self.with(|c| {
            let rows = c.query(
                "SELECT v.address, v.version, (SELECT c.read_only FROM tool_versions c WHERE c.address = v.address AND c.confirmed_at_ms IS NOT NULL ORDER BY c.confirmed_at_ms DESC, c.seq_no DESC LIMIT 1)
                 FROM tool_versions v WHERE v.confirmed_at_ms IS NULL ORDER BY v.address",
                &[],
            )?;
            Ok(rows
                .iter()
                .map(|row| Unconfirmed {
                    address: row.get(0),
                    version: row.get(1),
                    read_only_before: row.get(2),
                })
                .collect())
        })
    }

    fn last_confirmed_version(
        &self,
        address: &str,
        identity: Option<&str>,
    ) -> Result<Option<ToolVersion>, StoreError> {
        self.with(|c| last_confirmed(c, address, identity))
    }
}

fn observe_one(
    t: &mut impl GenericClient,
    seen: &SeenVersion,
    now_ms: u64,
) -> Result<VersionState, postgres::Error> {
    let known: Option<Option<i64>> = t
        .query_opt(
            "SELECT confirmed_at_ms FROM tool_versions WHERE address = $1 AND version = $2",
            &[&seen.address, &seen.version],
        )?
        .map(|row| row.get(0));
    // Confirmed under another address as the same thing: confirmed here too.
    let elsewhere: Option<String> = match &seen.identity {
        Some(identity) if known.is_none_or(|at| at.is_none()) => t
            .query_opt(
                "SELECT address FROM tool_versions WHERE identity = $1 AND version = $2 AND confirmed_at_ms IS NOT NULL ORDER BY confirmed_at_ms DESC, seq_no DESC LIMIT 1",
                &[identity, &seen.version],
            )?
            .map(|row| row.get(0)),
        _ => None,
    };
    let confirmed_by = elsewhere.map(|address| format!("{CONFIRMED_AS} {address}"));
    let confirmed = match known {
        Some(Some(_)) => true,
        Some(None) => {
            if let Some(by) = &confirmed_by {
                t.execute(
                    "UPDATE tool_versions SET confirmed_at_ms = $3, confirmed_by = $4 WHERE address = $1 AND version = $2",
                    &[&seen.address, &seen.version, &signed(now_ms), by],
                )?;
            }
            confirmed_by.is_some()
        }
        None => {
            let any_before = t
                .query_opt(
                    "SELECT 1 FROM tool_versions WHERE address = $1 OR identity = $2 LIMIT 1",
                    &[&seen.address, &seen.identity],
                )?
                .is_some();
            // The first version of a tool is what the user added the source with; a skill
            // that only moved to a new address is not first seen there.
            let by = match (any_before, confirmed_by) {
                (_, Some(by)) => Some(by),
                (false, None) => Some(FIRST_SEEN.to_string()),
                (true, None) => None,
            };
            t.execute(
                "INSERT INTO tool_versions (address, version, definition, read_only, first_seen_ms, confirmed_at_ms, confirmed_by, identity) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &seen.address,
                    &seen.version,
                    &seen.definition.to_string(),
                    &seen.read_only,
                    &signed(now_ms),
                    &by.is_some().then_some(signed(now_ms)),
                    &by,
                    &seen.identity,
                ],
            )?;
            by.is_some()
        }
    };
    if confirmed {
        return Ok(VersionState::Confirmed);
    }
    Ok(VersionState::Changed {
        confirmed: last_confirmed(t, &seen.address, seen.identity.as_deref())?.map(Box::new),
    })
}

/// The version of `address` confirmed last, else the one of `identity` under any address.
fn last_confirmed(
    c: &mut impl GenericClient,
    address: &str,
    identity: Option<&str>,
) -> Result<Option<ToolVersion>, postgres::Error> {
    let row = c.query_opt(
        "SELECT address, version, definition, read_only, first_seen_ms, confirmed_at_ms, confirmed_by FROM tool_versions
         WHERE (address = $1 OR identity = $2) AND confirmed_at_ms IS NOT NULL ORDER BY address = $1 DESC, confirmed_at_ms DESC, seq_no DESC LIMIT 1",
        &[&address, &identity],
    )?;
    Ok(row.map(|row| {
        let definition: String = row.get(2);
        ToolVersion {
            address: row.get(0),
            version: row.get(1),
            definition: serde_json::from_str(&definition).unwrap_or(serde_json::Value::Null),
            read_only: row.get(3),
            first_seen_ms: unsigned(row.get(4)),
            confirmed_at_ms: row.get::<_, Option<i64>>(5).map(unsigned),
            confirmed_by: row.get(6),
        }
    }))
}

const KEY_RECORD: &str = "SELECT s.value, k.value FROM meta s JOIN meta k ON k.name = 'key_check' WHERE s.name = 'key_source'";

fn key_record(row: &Row) -> (String, Vec<u8>) {
    let source: Vec<u8> = row.get(0);
    (String::from_utf8_lossy(&source).into_owned(), row.get(1))
}

impl KeyRecords for Postgres {
    fn key_record(&self) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        self.with(|c| Ok(c.query_opt(KEY_RECORD, &[])?.as_ref().map(key_record)))
    }

    fn record_key(&self, source: &str, check: &[u8]) -> Result<(String, Vec<u8>), StoreError> {
        self.write(|t| -> Result<(String, Vec<u8>), StoreError> {
            let mut step = || -> Result<(String, Vec<u8>), postgres::Error> {
                let inserted = t.execute(
                    "INSERT INTO meta (name, value) VALUES ('key_source', $1) ON CONFLICT DO NOTHING",
                    &[&source.as_bytes()],
                )?;
                if inserted == 1 {
                    t.execute(
                        "INSERT INTO meta (name, value) VALUES ('key_check', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                        &[&check],
                    )?;
                }
                Ok(key_record(&t.query_one(KEY_RECORD, &[])?))
            };
            step().map_err(|e| self.error(e))
        })
    }

    fn seal_clear_values(&self, _sealer: &Sealer<'_>) -> Result<(), StoreError> {
        // No version before encryption at rest wrote to PostgreSQL: nothing is in the clear.
        Ok(())
    }
}
