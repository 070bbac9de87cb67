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

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::ids::new_run_id;
use super::records::ClaimRecord;

/// How long a claim lasts without renewal. Long enough that a busy machine renews in time,
/// short enough that a run whose process died is not stuck for long. Leases are written and
/// read by the store's clock (`RunRecords::clock_ms`), so replicas on several machines sharing
/// a PostgreSQL store agree on when one runs out whatever their own clocks say.
pub const LEASE: Duration = Duration::from_secs(30);

/// How often a running run renews its claim.
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

impl ClaimRecord {
    /// True when a `running` run has nobody running it any more: its lease ran out, or its
    /// owner's process is known to be dead.
    pub fn is_interrupted_at(&self, now_ms: u64) -> bool {
        self.status == "running"
            && (self.lease_until_ms.is_none_or(|until| until <= now_ms)
                || self.owner.as_deref().is_none_or(owner_is_gone))
    }
}

/// When a claim taken or renewed at `now_ms` runs out.
pub fn lease_end(now_ms: u64) -> u64 {
    now_ms.saturating_add(LEASE.as_millis() as u64)
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

/// True when process `pid` is known to be gone: no `/proc/<pid>`, or only its zombie (a killed
/// child its parent has not reaped yet runs nothing). Without `/proc` nothing is known.
fn process_is_dead(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim().chars().next())
            .is_some_and(|state| matches!(state, 'Z' | 'X')),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_run_is_interrupted_when_its_lease_ran_out_or_its_owner_died() {
        let live = ClaimRecord {
            status: "running".into(),
            owner: Some(new_owner()),
            lease_until_ms: Some(1_000),
            attempt: 1,
        };
        assert!(!live.is_interrupted_at(999));
        assert!(live.is_interrupted_at(1_000));
        let paused = ClaimRecord {
            status: "awaiting_approval".into(),
            ..live.clone()
        };
        assert!(!paused.is_interrupted_at(5_000), "only running runs");
        let ownerless = ClaimRecord {
            owner: None,
            ..live
        };
        assert!(ownerless.is_interrupted_at(0));
    }
}
