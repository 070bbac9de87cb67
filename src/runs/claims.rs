//! Who runs a run right now. Before any attempt of a run executes (the first, a resume, or a
//! takeover of an interrupted one) its owner claims the run's row with one compare-and-set in
//! the store every process shares; the claim carries a lease the owner renews while the run
//! goes on and gives up when the run ends. A second resume finds the run claimed and runs
//! nothing. A claim whose owner is gone — its lease ran out, or its process on this machine is
//! dead — may be taken over, again by compare-and-set, so exactly one process continues it.
//!
//! The claim is also the fence for every call: the store journals a call as dispatched only for
//! the run's current owner (see `record_dispatch`), so an owner that lost its claim while it
//! was stalled can never send another call.

use std::sync::OnceLock;
use std::time::Duration;

use rusqlite::{OptionalExtension, params};

use super::ids::new_run_id;
use super::store::{RunsStore, StoreError};

/// How long a claim lasts without renewal. Long enough that a busy machine renews in time,
/// short enough that a run whose process died is not stuck for long. Leases compare wall
/// clocks: the SQLite store lives on one machine, so they are one clock.
pub const LEASE: Duration = Duration::from_secs(30);

/// How often a running run renews its claim.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// The run's claim as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    pub status: String,
    pub owner: Option<String>,
    pub lease_until_ms: Option<u64>,
    pub attempt: u64,
}

impl ClaimRecord {
    /// True when a `running` run has nobody running it any more: its lease ran out, or its
    /// owner's process is known to be dead.
    pub fn is_interrupted_at(&self, now_ms: u64) -> bool {
        self.status == "running"
            && (self.lease_until_ms.is_none_or(|until| until <= now_ms)
                || self.owner.as_deref().is_none_or(owner_is_gone))
    }
}

/// What an attempt to claim a run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This caller owns the run now, as `owner`.
    Won { owner: String },
    /// The run was not in the state the caller expected (someone else claimed or finished it
    /// first); the caller reads it again and reports what it finds.
    Lost,
}

/// A new owner name for one claim: this process's identity and a fresh nonce, so two claims
/// by one process are still told apart by the dispatch fence.
pub fn new_owner() -> String {
    format!("{}|{}", process_identity(), new_run_id())
}

/// `host|boot id|pid namespace|pid`: enough to tell, from another process on the same machine,
/// whether this one still exists. Parts that cannot be read are left empty, and then only the
/// lease decides.
fn process_identity() -> &'static str {
    static IDENTITY: OnceLock<String> = OnceLock::new();
    IDENTITY.get_or_init(|| {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .map(|s| s.trim().replace('|', "_"))
                .unwrap_or_default()
        };
        let pid_namespace = std::fs::read_link("/proc/self/ns/pid")
            .map(|p| p.display().to_string().replace('|', "_"))
            .unwrap_or_default();
        format!(
            "{}|{}|{}|{}",
            read("/proc/sys/kernel/hostname"),
            read("/proc/sys/kernel/random/boot_id"),
            pid_namespace,
            std::process::id()
        )
    })
}

/// True when `owner` names a process on this machine (same host, boot and pid namespace) that
/// no longer exists. False whenever that cannot be known: another machine's process is only
/// ever judged by its lease.
pub fn owner_is_gone(owner: &str) -> bool {
    let mine: Vec<&str> = process_identity().split('|').collect();
    let theirs: Vec<&str> = owner.split('|').collect();
    if mine.len() != 4 || theirs.len() != 5 || mine[..3].iter().any(|part| part.is_empty()) {
        return false;
    }
    if mine[..3] != theirs[..3] {
        return false;
    }
    theirs[3].parse::<u32>().is_ok_and(process_is_dead)
}

#[cfg(unix)]
fn process_is_dead(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // A killed child its parent has not reaped yet still answers `kill`; it runs nothing.
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        && let Some(state) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim().chars().next())
    {
        return matches!(state, 'Z' | 'X');
    }
    // SAFETY: `kill` with signal 0 only checks that the process exists and may be signalled;
    // it sends nothing and touches no memory of ours.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_is_dead(_pid: u32) -> bool {
    false
}

impl RunsStore {
    /// The run's status and claim, without opening anything sealed.
    pub fn claim_record(&self, run_id: &str) -> Result<Option<ClaimRecord>, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT status, owner, lease_until_ms, attempt FROM runs WHERE run_id = ?1",
                params![run_id],
                |row| {
                    Ok(ClaimRecord {
                        status: row.get(0)?,
                        owner: row.get(1)?,
                        lease_until_ms: row.get::<_, Option<i64>>(2)?.map(|v| v.max(0) as u64),
                        attempt: row.get::<_, i64>(3)?.max(0) as u64,
                    })
                },
            )
            .optional()
        })
    }

    /// Claims a run that is not running (it paused for approval, or an older version left it
    /// `interrupted`) while it is still `status`, so this caller alone goes on with it.
    pub fn claim(&self, run_id: &str, status: &str, now_ms: u64) -> Result<Claim, StoreError> {
        let owner = new_owner();
        let changed = self.with(|c| {
            c.execute(
                "UPDATE runs SET status = 'running', owner = ?2, lease_until_ms = ?3, attempt = attempt + 1, updated_at_ms = ?4
                 WHERE run_id = ?1 AND status = ?5",
                params![run_id, owner, lease_end(now_ms), now_ms as i64, status],
            )
        })?;
        Ok(claimed(owner, changed))
    }

    /// Takes over a `running` run whose owner is gone, as `seen` showed it: the claim changes
    /// only if nobody renewed, finished or took over the run since.
    pub fn take_over(
        &self,
        run_id: &str,
        seen: &ClaimRecord,
        now_ms: u64,
    ) -> Result<Claim, StoreError> {
        if !seen.is_interrupted_at(now_ms) {
            return Ok(Claim::Lost);
        }
        let owner = new_owner();
        let changed = self.with(|c| {
            c.execute(
                "UPDATE runs SET owner = ?2, lease_until_ms = ?3, attempt = attempt + 1, updated_at_ms = ?4
                 WHERE run_id = ?1 AND status = 'running' AND owner IS ?5 AND lease_until_ms IS ?6 AND attempt = ?7",
                params![
                    run_id,
                    owner,
                    lease_end(now_ms),
                    now_ms as i64,
                    seen.owner,
                    seen.lease_until_ms.map(|v| v as i64),
                    seen.attempt as i64
                ],
            )
        })?;
        Ok(claimed(owner, changed))
    }

    /// Extends `owner`'s lease; false when the run is no longer its (taken over, or finished).
    pub fn renew_claim(&self, run_id: &str, owner: &str, now_ms: u64) -> Result<bool, StoreError> {
        let changed = self.with(|c| {
            c.execute(
                "UPDATE runs SET lease_until_ms = ?3 WHERE run_id = ?1 AND owner = ?2 AND status = 'running'",
                params![run_id, owner, lease_end(now_ms)],
            )
        })?;
        Ok(changed == 1)
    }
}

fn claimed(owner: String, changed: usize) -> Claim {
    if changed == 1 {
        Claim::Won { owner }
    } else {
        Claim::Lost
    }
}

pub(super) fn lease_end(now_ms: u64) -> i64 {
    now_ms.saturating_add(LEASE.as_millis() as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, RunsStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        (dir, store)
    }

    fn pause(store: &RunsStore, run_id: &str, owner: &str) {
        store
            .finish_run(
                run_id,
                owner,
                "awaiting_approval",
                &serde_json::json!({"status": "awaiting_approval"}),
            )
            .unwrap();
    }

    #[test]
    fn only_one_of_many_resumes_claims_a_paused_run() {
        let (_dir, store) = store();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        pause(&store, "run_a", &owner);
        let won: Vec<Claim> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| store.claim("run_a", "awaiting_approval", 1_000).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<&Claim> = won
            .iter()
            .filter(|c| matches!(c, Claim::Won { .. }))
            .collect();
        assert_eq!(winners.len(), 1, "{won:?}");
        assert_eq!(store.claim_record("run_a").unwrap().unwrap().attempt, 2);
    }

    #[test]
    fn a_live_claim_is_never_taken_over_and_an_expired_one_once() {
        let (_dir, store) = store();
        let first = store.begin_run("run_a", "code", 1, 2).unwrap();
        let now = super::super::now_ms();
        let seen = store.claim_record("run_a").unwrap().unwrap();
        assert!(!seen.is_interrupted_at(now), "this process is alive");
        assert_eq!(store.take_over("run_a", &seen, now).unwrap(), Claim::Lost);

        let later = now + LEASE.as_millis() as u64 + 1;
        assert!(seen.is_interrupted_at(later));
        let second = match store.take_over("run_a", &seen, later).unwrap() {
            Claim::Won { owner } => owner,
            Claim::Lost => panic!("an expired lease is taken over"),
        };
        assert_eq!(store.claim_record("run_a").unwrap().unwrap().attempt, 2);
        // A second taker saw the same, now stale, record.
        assert_eq!(store.take_over("run_a", &seen, later).unwrap(), Claim::Lost);
        // The old owner can neither renew nor finish: its claim is gone.
        assert!(!store.renew_claim("run_a", &first, later).unwrap());
        assert!(store.renew_claim("run_a", &second, later).unwrap());
        assert!(
            !store
                .finish_run("run_a", &first, "completed", &serde_json::json!({}))
                .unwrap()
        );
        assert_eq!(
            store.run_status("run_a").unwrap().as_deref(),
            Some("running")
        );
    }

    #[test]
    fn a_dead_process_on_this_machine_is_gone_and_a_live_or_foreign_one_is_not() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let identity = process_identity();
        let parts: Vec<&str> = identity.split('|').collect();
        let dead = format!("{}|{}|{}|{pid}|n", parts[0], parts[1], parts[2]);
        if parts[..3].iter().all(|p| !p.is_empty()) {
            assert!(owner_is_gone(&dead), "{dead}");
        }
        assert!(!owner_is_gone(&new_owner()), "this process is alive");
        let elsewhere = format!("other-host|{}|{}|{pid}|n", parts[1], parts[2]);
        assert!(!owner_is_gone(&elsewhere));
        assert!(!owner_is_gone("garbage"));
    }
}
