//! One row per recent run with its call count and last call, in a single query, because the
//! dashboard asks for it every poll and a query per run would grow with the history; and a
//! run's calls without their (sealed) results, for listings that show only what ran. A run
//! whose process is gone mid-run is listed as `interrupted`.

use rusqlite::params;

use super::claims::ClaimRecord;
use super::store::{RunsStore, StoreError, now_ms};

/// A run as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub run_id: String,
    /// As stored, except that a `running` run nobody runs any more (its process died, or its
    /// lease ran out) is `interrupted`: resuming it takes it over.
    pub status: String,
    pub created_at_ms: u64,
    /// When the status last changed: the end of the run once it finished or paused.
    pub updated_at_ms: u64,
    /// Calls in the journal (those that ran, or failed upstream).
    pub calls: u64,
    /// The address of the latest journaled call.
    pub last_call: Option<String>,
    /// Who started it: `client/profile`, the client alone, or empty when not recorded.
    pub origin: String,
}

/// One call of a run as a listing shows it: what ran, not what it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRow {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    pub ok: bool,
    pub ms: u64,
}

impl RunsStore {
    /// The calls of a run in sequence order, read without opening their results.
    pub fn call_rows(&self, run_id: &str) -> Result<Vec<CallRow>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT seq, address, connection, ok, ms FROM calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![run_id], |row| {
                Ok(CallRow {
                    seq: row.get::<_, i64>(0)?.max(0) as u64,
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    ok: row.get(3)?,
                    ms: row.get::<_, i64>(4)?.max(0) as u64,
                })
            })?;
            rows.collect()
        })
    }

    /// The most recent runs, newest first.
    pub fn run_summaries(&self, limit: usize) -> Result<Vec<RunSummary>, StoreError> {
        self.with(|c| {
            let mut statement = c.prepare_cached(
                "SELECT r.run_id, r.status, r.created_at_ms, r.updated_at_ms,
                        (SELECT COUNT(*) FROM calls WHERE calls.run_id = r.run_id),
                        (SELECT address FROM calls WHERE calls.run_id = r.run_id ORDER BY seq DESC LIMIT 1),
                        r.client, r.profile, r.owner, r.lease_until_ms, r.attempt
                 FROM runs r ORDER BY r.created_at_ms DESC, r.rowid DESC LIMIT ?1",
            )?;
            let now = now_ms();
            let rows = statement.query_map(params![limit as i64], |row| {
                let claim = ClaimRecord {
                    status: row.get(1)?,
                    owner: row.get(8)?,
                    lease_until_ms: row.get::<_, Option<i64>>(9)?.map(|v| v.max(0) as u64),
                    attempt: row.get::<_, i64>(10)?.max(0) as u64,
                };
                Ok(RunSummary {
                    run_id: row.get(0)?,
                    status: if claim.is_interrupted_at(now) {
                        "interrupted".to_string()
                    } else {
                        claim.status
                    },
                    created_at_ms: row.get::<_, i64>(2)?.max(0) as u64,
                    updated_at_ms: row.get::<_, i64>(3)?.max(0) as u64,
                    calls: row.get::<_, i64>(4)?.max(0) as u64,
                    last_call: row.get(5)?,
                    origin: match (row.get::<_, Option<String>>(6)?, row.get::<_, Option<String>>(7)?) {
                        (Some(client), Some(profile)) => format!("{client}/{profile}"),
                        (Some(client), None) => client,
                        (None, Some(profile)) => format!("?/{profile}"),
                        (None, None) => String::new(),
                    },
                })
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::journal::tests::journal_call;
    use crate::runs::{CallState, JournalEntry};

    #[test]
    fn counts_calls_and_names_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        store.begin_run("run_b", "code", 1, 2).unwrap();
        for (seq, address) in [(0, "counter.write"), (1, "counter.publish")] {
            let entry = JournalEntry {
                seq,
                address: address.into(),
                connection: None,
                call_digest: "d".into(),
                result: serde_json::json!({}),
                ok: true,
                ms: 1,
                state: CallState::Answered,
                mutating: true,
            };
            journal_call(&store, "run_a", &owner, &entry);
        }
        let summaries = store.run_summaries(10).unwrap();
        let rows: Vec<_> = summaries
            .iter()
            .map(|s| (s.run_id.as_str(), s.calls, s.last_call.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [("run_b", 0, None), ("run_a", 2, Some("counter.publish"))]
        );
        assert_eq!(store.run_summaries(1).unwrap().len(), 1);

        // Listing calls opens no result: a result that would not open does not matter here.
        store
            .with(|c| c.execute("UPDATE calls SET result = x'00' WHERE seq = 0", []))
            .unwrap();
        let calls: Vec<_> = store
            .call_rows("run_a")
            .unwrap()
            .into_iter()
            .map(|c| (c.seq, c.address))
            .collect();
        assert_eq!(
            calls,
            [
                (0, "counter.write".to_string()),
                (1, "counter.publish".to_string())
            ]
        );
        assert!(store.journal("run_a").is_err());
    }

    #[test]
    fn a_run_nobody_runs_any_more_is_listed_as_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        store.begin_run("run_live", "code", 1, 2).unwrap();
        store.begin_run("run_dead", "code", 1, 2).unwrap();
        store
            .with(|c| {
                c.execute(
                    "UPDATE runs SET lease_until_ms = 1 WHERE run_id = 'run_dead'",
                    [],
                )
            })
            .unwrap();
        let statuses: Vec<(String, String)> = store
            .run_summaries(10)
            .unwrap()
            .into_iter()
            .map(|s| (s.run_id, s.status))
            .collect();
        assert!(
            statuses.contains(&("run_live".into(), "running".into())),
            "{statuses:?}"
        );
        assert!(
            statuses.contains(&("run_dead".into(), "interrupted".into())),
            "{statuses:?}"
        );
    }
}
