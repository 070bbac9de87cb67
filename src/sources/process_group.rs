//! Process groups of stdio sources. Every child starts as the leader of its own group, so one
//! signal reaches everything it spawned (`npx` runs node as a grandchild, shells fork helpers).
//! A process-wide registry remembers the live groups so that an exit path with no time for an
//! async shutdown (a signal handler, a panic) can still take them all down with [`kill_all`].

use std::collections::BTreeSet;
use std::sync::Mutex;

/// Groups started by this process and not yet known to be gone.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    // A panic while holding this lock cannot leave the set inconsistent, so keep using it.
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn register(pgid: i32) {
    live().insert(pgid);
}

pub(crate) fn unregister(pgid: i32) {
    live().remove(&pgid);
}

/// Sends SIGKILL to every process group of every stdio source this process started and still
/// runs. Synchronous and safe to call from any thread; meant for exit paths, e.g. after Ctrl-C
/// when [`Sources::shutdown`](super::Sources::shutdown) cannot be awaited.
pub fn kill_all() {
    let groups: Vec<i32> = live().iter().copied().collect();
    for pgid in groups {
        signal(pgid, Signal::Kill);
        unregister(pgid);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    Term,
    Kill,
}

/// Signals the whole group; returns false when no process of the group is left.
#[cfg(unix)]
pub(crate) fn signal(pgid: i32, signal: Signal) -> bool {
    // A pgid of 0 or less would address our own group or every process we may signal.
    if pgid <= 0 {
        return false;
    }
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: killpg has no memory-safety preconditions; the pgid is a group we created.
    unsafe { libc::killpg(pgid, sig) == 0 }
}

#[cfg(not(unix))]
pub(crate) fn signal(_pgid: i32, _signal: Signal) -> bool {
    // Without process groups the child is killed directly (see `stdio::StdioChild`).
    false
}
