//! Keeps this process's memory and environment from the other processes of its user, which
//! include every stdio server it starts. An upstream runs as the same user, so by default it
//! could read `/proc/<hub>/environ` (where `CAPABILITIES_PASSPHRASE`, which opens every stored
//! secret, may be) or `/proc/<hub>/mem` (where the secrets are, decrypted). Marking the process
//! not dumpable, as ssh-agent and gpg-agent do, makes those files readable by root alone, and
//! writes no core dump holding them. A child gets its own setting back when it runs its program,
//! so an upstream is not changed by it.

/// Marks this process not dumpable (Linux); elsewhere, and where the kernel refuses, it stays
/// as it was and the reason is logged, since the hub works without it.
pub fn keep_private() {
    #[cfg(target_os = "linux")]
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!(
            "this process could not be made private to its user's other processes ({e}): a server it starts could read its memory"
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_process_is_not_dumpable_once_kept_private() {
        keep_private();
        assert_eq!(
            rustix::process::dumpable_behavior().ok(),
            Some(rustix::process::DumpableBehavior::NotDumpable)
        );
    }
}
