//! The process's time zone: UTC for every script, the user's own for every program we start.
//!
//! A run must replay the same on any machine and under any `TZ` (a run paused by a hub in one
//! zone may resume in a shell, or a replica, in another), and the sandbox must not tell a script
//! where its host is (a source it calls may). The sandbox's engine reads local time
//! (`getHours`, `new Date(2024, 0, 1)`, the zone-less `Date.parse("2024-01-01T10:00")`) from the
//! C library, which follows `TZ`; so [`pin_utc`] sets `TZ=UTC` for this process, [`give_back`]
//! hands each child the zone the user started us with (an upstream server or a browser keeps its
//! own local time), and [`user_var`] reads it for a config's `${env:TZ}`.

use std::env::VarError;
use std::ffi::OsString;
use std::process::Command;
use std::sync::OnceLock;

/// The variable the C library reads the zone from.
const TZ: &str = "TZ";

/// `TZ` as this process started, `None` where it was unset.
static HOST_TZ: OnceLock<Option<OsString>> = OnceLock::new();

/// Sets `TZ=UTC` for this process, remembering the user's. Called by [`crate::run`] before it
/// starts any thread; a second call changes nothing.
pub fn pin_utc() {
    HOST_TZ.get_or_init(|| {
        let host = std::env::var_os(TZ);
        // SAFETY: `run` calls this first, on the main thread, before any other thread exists,
        // so nothing reads or writes the environment at the same time.
        unsafe { std::env::set_var(TZ, "UTC") };
        host
    });
}

/// The user's own zone, for `command`: a program we start should not inherit our UTC.
pub fn give_back(command: &mut Command) -> &mut Command {
    match host() {
        Some(tz) => command.env(TZ, tz),
        None => command.env_remove(TZ),
    }
}

/// `std::env::var(name)` as the user's environment has it: `TZ` is theirs, not our UTC (a
/// config's `${env:TZ}` means the user's zone).
pub fn user_var(name: &str) -> Result<String, VarError> {
    if name != TZ {
        return std::env::var(name);
    }
    match host() {
        Some(tz) => tz.into_string().map_err(VarError::NotUnicode),
        None => Err(VarError::NotPresent),
    }
}

/// `TZ` as the user set it; where [`pin_utc`] never ran (a test in-process), as it is now.
fn host() -> Option<OsString> {
    match HOST_TZ.get() {
        Some(host) => host.clone(),
        None => std::env::var_os(TZ),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    fn tz_of(command: &Command) -> Option<Option<&OsStr>> {
        command
            .get_envs()
            .find(|(name, _)| *name == OsStr::new(TZ))
            .map(|(_, value)| value)
    }

    #[test]
    fn a_child_gets_the_zone_it_would_have_had() {
        let mut command = Command::new("true");
        give_back(&mut command);
        // Either way the child's TZ is decided, never left to inherit ours.
        match std::env::var_os(TZ) {
            Some(tz) => assert_eq!(tz_of(&command), Some(Some(tz.as_os_str()))),
            None => assert_eq!(tz_of(&command), Some(None)),
        }
    }
}
