//! Runs in SQLite: the row of each run, its claim (owner, lease, attempt), and listings that
//! count calls in one query (the dashboard asks every poll; a query per run would grow with the
//! history).

use rusqlite::{OptionalExtension, params};

use super::Cached;
use super::{Sqlite, sealed, unsigned};
use crate::runs::backend::{RunRecords, StoredRun};
use crate::runs::error::StoreError;
use crate::runs::records::{ClaimRecord, NewRun, RunRecord, RunSummary};
use crate::runs::vault::Sealed;

impl RunRecords for Sqlite {
    /// The store is a file on this machine, so every process sharing it has this clock.
    fn clock_ms(&self) -> Result<u64, StoreError> {
        Ok(crate::runs::now_ms())
    }

    fn insert_run(
        &self,
        run: &NewRun,
        code: &Sealed,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms, client, profile, output_budget_bytes, owner, lease_until_ms, attempt) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?10, 1)",
                params![
                    run.run_id,
                    code.bytes(),
                    run.seed as i64,
                    run.start_time_ms as i64,
                    now_ms as i64,
                    run.client,
                    run.profile,
                    run.output_budget_bytes.map(|b| b as i64),
                    owner,
                    lease_until_ms as i64
                ],
            )
            .map(|_| ())
        })
    }

    fn run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                "SELECT run_id, status, code, seed, start_time_ms, created_at_ms, envelope, output_budget_bytes, profile, client FROM runs WHERE run_id = ?1",
                params![run_id],
                |row| {
                    Ok(StoredRun {
                        record: RunRecord {
                            run_id: row.get(0)?,
                            status: row.get(1)?,
                            code: String::new(),
                            seed: row.get::<_, i64>(3)? as u64,
                            start_time_ms: unsigned(row.get(4)?),
                            created_at_ms: unsigned(row.get(5)?),
                            envelope: None,
                            output_budget_bytes: row.get::<_, Option<i64>>(7)?.map(unsigned),
                            profile: row.get(8)?,
                            client: row.get(9)?,
                        },
                        code: sealed(row, 2)?.unwrap_or_else(|| Sealed::stored(Vec::new())),
                        envelope: sealed(row, 6)?,
                    })
                },
            )
            .optional()
        })
    }

    fn claim_record(&self, run_id: &str) -> Result<Option<ClaimRecord>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                "SELECT status, owner, lease_until_ms, attempt FROM runs WHERE run_id = ?1",
                params![run_id],
                |row| {
                    Ok(ClaimRecord {
                        status: row.get(0)?,
                        owner: row.get(1)?,
                        lease_until_ms: row.get::<_, Option<i64>>(2)?.map(unsigned),
                        attempt: unsigned(row.get(3)?),
                    })
                },
            )
            .optional()
        })
    }

    fn claim(
        &self,
        run_id: &str,
        status: &str,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "UPDATE runs SET status = 'running', owner = ?2, lease_until_ms = ?3, attempt = attempt + 1, updated_at_ms = ?4
                 WHERE run_id = ?1 AND status = ?5",
                params![run_id, owner, lease_until_ms as i64, now_ms as i64, status],
            )
        })?;
        Ok(changed == 1)
    }

    fn take_over(
        &self,
        run_id: &str,
        seen: &ClaimRecord,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "UPDATE runs SET owner = ?2, lease_until_ms = ?3, attempt = attempt + 1, updated_at_ms = ?4
                 WHERE run_id = ?1 AND status = 'running' AND owner IS ?5 AND lease_until_ms IS ?6 AND attempt = ?7",
                params![
                    run_id,
                    owner,
                    lease_until_ms as i64,
                    now_ms as i64,
                    seen.owner,
                    seen.lease_until_ms.map(|v| v as i64),
                    seen.attempt as i64
                ],
            )
        })?;
        Ok(changed == 1)
    }

    fn take_turn(
        &self,
        key: &str,
        owner: &str,
        gone: Option<&str>,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "INSERT INTO turns (key, owner, until_ms) VALUES (?1, ?2, ?4)
                 ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, until_ms = excluded.until_ms
                 WHERE turns.owner = excluded.owner OR turns.until_ms <= ?3 OR turns.owner = ?5",
                params![key, owner, now_ms as i64, until_ms as i64, gone],
            )
        })?;
        Ok(changed == 1)
    }

    fn turn_holder(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            c.query_row_cached(
                "SELECT owner FROM turns WHERE key = ?1",
                params![key],
                |row| row.get(0),
            )
            .optional()
        })
    }

    fn end_turn(&self, key: &str, owner: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute_cached(
                "DELETE FROM turns WHERE key = ?1 AND owner = ?2",
                params![key, owner],
            )
        })?;
        Ok(())
    }

    fn renew_claim(
        &self,
        run_id: &str,
        owner: &str,
        lease_until_ms: u64,
    ) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "UPDATE runs SET lease_until_ms = ?3 WHERE run_id = ?1 AND owner = ?2 AND status = 'running'",
                params![run_id, owner, lease_until_ms as i64],
            )
        })?;
        Ok(changed == 1)
    }

    fn finish_run(
        &self,
        run_id: &str,
        owner: &str,
        status: &str,
        envelope: &Sealed,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute_cached(
                "UPDATE runs SET status = ?3, envelope = ?4, updated_at_ms = ?5, owner = NULL, lease_until_ms = NULL
                 WHERE run_id = ?1 AND owner = ?2 AND status = 'running'",
                params![run_id, owner, status, envelope.bytes(), now_ms as i64],
            )
        })?;
        Ok(changed == 1)
    }

    fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        self.with(|c| {
            // substr, not LIKE: a prefix is matched as typed, `_` and `%` included.
            let mut statement = c.prepare_cached(
                "SELECT run_id FROM runs WHERE substr(run_id, 1, length(?1)) = ?1
                 ORDER BY created_at_ms DESC, rowid DESC LIMIT ?2",
            )?;
            let rows = statement.query_map(params![prefix, limit as i64], |row| row.get(0))?;
            rows.collect()
        })
    }

    fn run_summaries(&self, limit: usize) -> Result<Vec<(RunSummary, ClaimRecord)>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT r.run_id, r.status, r.created_at_ms, r.updated_at_ms,
                        (SELECT COUNT(*) FROM calls WHERE calls.run_id = r.run_id),
                        (SELECT address FROM calls WHERE calls.run_id = r.run_id ORDER BY seq DESC LIMIT 1),
                        r.client, r.profile, r.owner, r.lease_until_ms, r.attempt
                 FROM runs r ORDER BY r.created_at_ms DESC, r.rowid DESC LIMIT ?1",
            )?;
            let rows = statement.query_map(params![limit as i64], |row| {
                let status: String = row.get(1)?;
                let client: Option<String> = row.get(6)?;
                let profile: Option<String> = row.get(7)?;
                let claim = ClaimRecord {
                    status: status.clone(),
                    owner: row.get(8)?,
                    lease_until_ms: row.get::<_, Option<i64>>(9)?.map(unsigned),
                    attempt: unsigned(row.get(10)?),
                };
                let summary = RunSummary {
                    run_id: row.get(0)?,
                    status,
                    created_at_ms: unsigned(row.get(2)?),
                    updated_at_ms: unsigned(row.get(3)?),
                    calls: unsigned(row.get(4)?),
                    last_call: row.get(5)?,
                    origin: match (&client, &profile) {
                        (Some(client), Some(profile)) => format!("{client}/{profile}"),
                        (Some(client), None) => client.clone(),
                        (None, Some(profile)) => format!("?/{profile}"),
                        (None, None) => String::new(),
                    },
                    client,
                    profile,
                };
                Ok((summary, claim))
            })?;
            rows.collect()
        })
    }

    fn clear_runs(&self) -> Result<usize, StoreError> {
        self.write(|t| -> Result<usize, StoreError> {
            let runs = t.execute("DELETE FROM runs", [])?;
            for table in [
                "calls",
                "approvals",
                "audit",
                "consumed_states",
                "meta",
                "stored_results",
                "turns",
            ] {
                t.execute(&format!("DELETE FROM {table}"), [])?;
            }
            Ok(runs)
        })
    }
}
