//! Runs in PostgreSQL: the row of each run, its claim, and listings that count calls in one
//! query.

use super::{Postgres, sealed, signed, unsigned};
use crate::runs::backend::{RunRecords, StoredRun};
use crate::runs::error::StoreError;
use crate::runs::records::{ClaimRecord, NewRun, RunRecord, RunSummary};
use crate::runs::vault::Sealed;

impl RunRecords for Postgres {
    fn clock_ms(&self) -> Result<u64, StoreError> {
        let here = i64::try_from(crate::runs::now_ms()).unwrap_or(i64::MAX);
        Ok(unsigned(here.saturating_add(self.clock_offset()?)))
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
            c.execute(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms, client, profile, output_budget_bytes, owner, lease_until_ms, attempt)
                 VALUES ($1, 'running', $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, 1)",
                &[
                    &run.run_id,
                    &code.bytes(),
                    // The seed's bits, as SQLite keeps them.
                    &(run.seed as i64),
                    &signed(run.start_time_ms),
                    &signed(now_ms),
                    &run.client,
                    &run.profile,
                    &run.output_budget_bytes.map(signed),
                    &owner,
                    &signed(lease_until_ms),
                ],
            )
            .map(|_| ())
        })
    }

    fn run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                "SELECT run_id, status, code, seed, start_time_ms, created_at_ms, envelope, output_budget_bytes, profile, client FROM runs WHERE run_id = $1",
                &[&run_id],
            )?;
            Ok(row.map(|row| StoredRun {
                record: RunRecord {
                    run_id: row.get(0),
                    status: row.get(1),
                    code: String::new(),
                    seed: row.get::<_, i64>(3) as u64,
                    start_time_ms: unsigned(row.get(4)),
                    created_at_ms: unsigned(row.get(5)),
                    envelope: None,
                    output_budget_bytes: row.get::<_, Option<i64>>(7).map(unsigned),
                    profile: row.get(8),
                    client: row.get(9),
                },
                code: sealed(&row, 2).unwrap_or_else(|| Sealed::stored(Vec::new())),
                envelope: sealed(&row, 6),
            }))
        })
    }

    fn claim_record(&self, run_id: &str) -> Result<Option<ClaimRecord>, StoreError> {
        self.with(|c| {
            let row = c.query_opt(
                "SELECT status, owner, lease_until_ms, attempt FROM runs WHERE run_id = $1",
                &[&run_id],
            )?;
            Ok(row.map(|row| ClaimRecord {
                status: row.get(0),
                owner: row.get(1),
                lease_until_ms: row.get::<_, Option<i64>>(2).map(unsigned),
                attempt: unsigned(row.get(3)),
            }))
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
            c.execute(
                "UPDATE runs SET status = 'running', owner = $2, lease_until_ms = $3, attempt = attempt + 1, updated_at_ms = $4
                 WHERE run_id = $1 AND status = $5",
                &[&run_id, &owner, &signed(lease_until_ms), &signed(now_ms), &status],
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
            c.execute(
                "UPDATE runs SET owner = $2, lease_until_ms = $3, attempt = attempt + 1, updated_at_ms = $4
                 WHERE run_id = $1 AND status = 'running' AND owner IS NOT DISTINCT FROM $5
                   AND lease_until_ms IS NOT DISTINCT FROM $6 AND attempt = $7",
                &[
                    &run_id,
                    &owner,
                    &signed(lease_until_ms),
                    &signed(now_ms),
                    &seen.owner,
                    &seen.lease_until_ms.map(signed),
                    &signed(seen.attempt),
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
            c.execute(
                "INSERT INTO turns (key, owner, until_ms) VALUES ($1, $2, $4)
                 ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, until_ms = excluded.until_ms
                 WHERE turns.owner = excluded.owner OR turns.until_ms <= $3 OR turns.owner = $5",
                &[&key, &owner, &signed(now_ms), &signed(until_ms), &gone],
            )
        })?;
        Ok(changed == 1)
    }

    fn turn_holder(&self, key: &str) -> Result<Option<String>, StoreError> {
        let row = self.with(|c| c.query_opt("SELECT owner FROM turns WHERE key = $1", &[&key]))?;
        Ok(row.map(|row| row.get(0)))
    }

    fn end_turn(&self, key: &str, owner: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM turns WHERE key = $1 AND owner = $2",
                &[&key, &owner],
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
            c.execute(
                "UPDATE runs SET lease_until_ms = $3 WHERE run_id = $1 AND owner = $2 AND status = 'running'",
                &[&run_id, &owner, &signed(lease_until_ms)],
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
            c.execute(
                "UPDATE runs SET status = $3, envelope = $4, updated_at_ms = $5, owner = NULL, lease_until_ms = NULL
                 WHERE run_id = $1 AND owner = $2 AND status = 'running'",
                &[&run_id, &owner, &status, &envelope.bytes(), &signed(now_ms)],
            )
        })?;
        Ok(changed == 1)
    }

    fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(|c| {
            // left(), not LIKE: a prefix is matched as typed, `_` and `%` included.
            let rows = c.query(
                "SELECT run_id FROM runs WHERE left(run_id, length($1)) = $1
                 ORDER BY created_at_ms DESC, seq_no DESC LIMIT $2",
                &[&prefix, &limit],
            )?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn run_summaries(&self, limit: usize) -> Result<Vec<(RunSummary, ClaimRecord)>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(|c| {
            let rows = c.query(
                "SELECT r.run_id, r.status, r.created_at_ms, r.updated_at_ms,
                        (SELECT COUNT(*) FROM calls WHERE calls.run_id = r.run_id),
                        (SELECT address FROM calls WHERE calls.run_id = r.run_id ORDER BY seq DESC LIMIT 1),
                        r.client, r.profile, r.owner, r.lease_until_ms, r.attempt
                 FROM runs r ORDER BY r.created_at_ms DESC, r.seq_no DESC LIMIT $1",
                &[&limit],
            )?;
            Ok(rows
                .iter()
                .map(|row| {
                    let status: String = row.get(1);
                    let client: Option<String> = row.get(6);
                    let profile: Option<String> = row.get(7);
                    let claim = ClaimRecord {
                        status: status.clone(),
                        owner: row.get(8),
                        lease_until_ms: row.get::<_, Option<i64>>(9).map(unsigned),
                        attempt: unsigned(row.get(10)),
                    };
                    let summary = RunSummary {
                        run_id: row.get(0),
                        status,
                        created_at_ms: unsigned(row.get(2)),
                        updated_at_ms: unsigned(row.get(3)),
                        calls: unsigned(row.get(4)),
                        last_call: row.get(5),
                        origin: match (&client, &profile) {
                            (Some(client), Some(profile)) => format!("{client}/{profile}"),
                            (Some(client), None) => client.clone(),
                            (None, Some(profile)) => format!("?/{profile}"),
                            (None, None) => String::new(),
                        },
                        client,
                        profile,
                    };
                    (summary, claim)
                })
                .collect())
        })
    }

    fn clear_runs(&self) -> Result<usize, StoreError> {
        self.write(|t| -> Result<usize, StoreError> {
            let runs = t.execute("DELETE FROM runs", &[]).map_err(|e| self.error(e))?;
            t.batch_execute(
                "DELETE FROM calls; DELETE FROM approvals; DELETE FROM audit; DELETE FROM consumed_states; DELETE FROM meta; DELETE FROM stored_results; DELETE FROM turns;",
            )
            .map_err(|e| self.error(e))?;
            Ok(usize::try_from(runs).unwrap_or(usize::MAX))
        })
    }
}
