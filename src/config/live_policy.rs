//! The policy a long-running process follows, kept in step with the config file: a rule written
//! by `policy set`, by "always allow" from any approval channel (another process, often), or by
//! hand applies to the next call of every running hub, without a restart. Each look costs one
//! `stat`; the file is read again only when it changed, and parsed only when its bytes did. An
//! edit that does not load keeps the last good policy, and says why once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::load::parse;
use crate::policy::{Action, Policy};

/// A file changed within this long ago is read even when its size and time look the same:
/// file times are coarse (a few milliseconds), so two writes inside one tick look alike.
const SETTLED: Duration = Duration::from_secs(2);

/// The current policy, from a config file that is watched or fixed at the start.
pub struct LivePolicy {
    current: Mutex<Arc<Policy>>,
    watched: Option<Watched>,
}

struct Watched {
    path: PathBuf,
    /// The profile whose rules apply (a hub's `--profile`).
    profile: Option<String>,
    last: Mutex<LastRead>,
}

/// What the file looked like when it was last read.
#[derive(Default)]
struct LastRead {
    stamp: Option<Stamp>,
    /// When it was read: a stamp vouches for the bytes only if the file had settled by then.
    at: Option<SystemTime>,
    /// The bytes the current policy came from.
    loaded: Option<[u8; 32]>,
    /// Bytes that did not load, so the same broken edit is reported once.
    refused: Option<[u8; 32]>,
}

/// What `stat` says about the file: any write or replacement changes one of these, within the
/// clock's granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Status change time (seconds, nanoseconds): `cp -p` and `touch -r` can restore the
    /// modification time, never this.
    changed: (i64, i64),
    device: u64,
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let (changed, device, inode) = {
            use std::os::unix::fs::MetadataExt;
            ((meta.ctime(), meta.ctime_nsec()), meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (changed, device, inode) = ((0, 0), 0, 0);
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
            device,
            inode,
        })
    }
}

impl LastRead {
    /// True when the file is as it was read, and was read long enough after its last change
    /// that no second write could hide inside the same clock tick.
    fn still_current(&self, stamp: Option<Stamp>) -> bool {
        let (Some(stamp), Some(at)) = (stamp, self.at) else {
            return false;
        };
        self.stamp == Some(stamp)
            && stamp
                .modified
                .and_then(|modified| at.duration_since(modified).ok())
                .is_some_and(|settled| settled >= SETTLED)
    }
}

impl LivePolicy {
    /// A policy that never changes (tests, a config given on stdin).
    pub fn fixed(policy: Policy) -> LivePolicy {
        LivePolicy {
            current: Mutex::new(Arc::new(policy)),
            watched: None,
        }
    }

    /// `initial` (loaded from `path` at start-up), then whatever `path` says: the file is read
    /// again at the first look, since it may have changed between that load and now, and after
    /// every change; with a `profile`, that profile's policy.
    pub fn watching(path: PathBuf, profile: Option<String>, initial: Policy) -> LivePolicy {
        LivePolicy {
            current: Mutex::new(Arc::new(initial)),
            watched: Some(Watched {
                path,
                profile,
                last: Mutex::new(LastRead::default()),
            }),
        }
    }

    /// The policy to apply now.
    pub fn current(&self) -> Arc<Policy> {
        if let Some(watched) = &self.watched
            && let Some(policy) = watched.reload()
        {
            *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(policy);
        }
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Watched {
    /// The policy the file holds now, when it changed and loads.
    fn reload(&self) -> Option<Policy> {
        let mut seen = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let stamp = Stamp::of(&self.path);
        if seen.still_current(stamp) {
            return None;
        }
        seen.stamp = stamp;
        seen.at = Some(SystemTime::now());
        let Ok(bytes) = std::fs::read(&self.path) else {
            if seen.refused != Some([0; 32]) {
                seen.refused = Some([0; 32]);
                tracing::warn!(
                    "{} cannot be read any more; the policy stays as it was",
                    self.path.display()
                );
            }
            return None;
        };
        let now = digest(&bytes);
        if seen.loaded == Some(now) || seen.refused == Some(now) {
            return None;
        }
        let text = String::from_utf8_lossy(&bytes);
        let policy = parse(&self.path, &text)
            .map_err(|e| e.to_string())
            .map(|settings| match &self.profile {
                None => settings.policy,
                Some(name) => match settings.profiles.get(name) {
                    // A source the profile no longer lists is out of reach at once, as an
                    // operator who moved it out of a profile expects of that profile's tokens.
                    Some(profile) => Policy {
                        left_profile: settings
                            .sources
                            .iter()
                            .map(|s| s.name.clone())
                            .filter(|source| !profile.sources.contains(source))
                            .collect(),
                        ..profile.policy.clone()
                    },
                    None => {
                        tracing::warn!(
                            "{} no longer has the profile `{name}` this hub serves, so every call is denied until it is back or the hub restarts with another",
                            self.path.display()
                        );
                        Policy {
                            read_only: Action::Deny,
                            destructive: Action::Deny,
                            default: Action::Deny,
                            rules: Vec::new(),
                            confirm_changes: settings.policy.confirm_changes,
                            token_clients_approve: settings.policy.token_clients_approve,
                            left_profile: settings.sources.iter().map(|s| s.name.clone()).collect(),
                        }
                    }
                },
            });
        match policy {
            Ok(policy) => {
                // The first read only confirms what start-up loaded.
                if seen.loaded.replace(now).is_some() {
                    tracing::info!("policy reloaded from {}", self.path.display());
                }
                seen.refused = None;
                Some(policy)
            }
            Err(reason) => {
                seen.refused = Some(now);
                tracing::warn!(
                    "the edited {} does not load, so the policy stays as it was: {reason}",
                    self.path.display()
                );
                None
            }
        }
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tool::Annotations;
    use crate::policy::Action;

    fn action(policy: &LivePolicy, address: &str) -> Action {
        policy
            .current()
            .evaluate(address, None, &Annotations::default())
            .action
    }

    #[test]
    fn a_rule_written_later_applies_at_once_and_a_broken_edit_keeps_the_last_good_policy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let base = "[sources.gh]\ncommand = \"x\"\n";
        std::fs::write(&path, base).unwrap();
        let initial = parse(&path, base).unwrap().policy;
        let live = LivePolicy::watching(path.clone(), None, initial);
        assert_eq!(action(&live, "gh.createIssue"), Action::Ask);

        // Same length and, on a coarse clock, the same time: the bytes still tell.
        let allow =
            format!("{base}[[policy.rules]]\nmatch = \"gh.createIssue\"\naction = \"allow\"\n");
        std::fs::write(&path, &allow).unwrap();
        assert_eq!(action(&live, "gh.createIssue"), Action::Allow);
        let deny = allow.replace("\"allow\"", "\"deny\" ");
        std::fs::write(&path, &deny).unwrap();
        assert_eq!(action(&live, "gh.createIssue"), Action::Deny);

        std::fs::write(&path, format!("{deny}[[policy.rules]\n")).unwrap();
        assert_eq!(
            action(&live, "gh.createIssue"),
            Action::Deny,
            "a broken edit keeps the last good policy"
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(action(&live, "gh.createIssue"), Action::Deny);
    }

    #[test]
    fn an_edit_made_while_the_process_started_is_applied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let base = "[sources.gh]\ncommand = \"x\"\n";
        std::fs::write(&path, base).unwrap();
        let loaded_at_start = parse(&path, base).unwrap().policy;
        // Edited after start-up read the file, before the policy began watching it.
        std::fs::write(
            &path,
            format!("{base}[[policy.rules]]\nmatch = \"gh.*\"\naction = \"deny\"\n"),
        )
        .unwrap();
        let live = LivePolicy::watching(path, None, loaded_at_start);
        assert_eq!(action(&live, "gh.createIssue"), Action::Deny);
    }

    #[test]
    fn a_profile_follows_its_own_rules() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "[sources.gh]\ncommand = \"x\"\n[profiles.work]\nsources = [\"gh\"]\n";
        std::fs::write(&path, text).unwrap();
        let initial = parse(&path, text).unwrap().profiles["work"].policy.clone();
        let live = LivePolicy::watching(path.clone(), Some("work".into()), initial);
        std::fs::write(
            &path,
            format!("{text}[[profiles.work.rules]]\nmatch = \"gh.*\"\naction = \"deny\"\n"),
        )
        .unwrap();
        assert_eq!(action(&live, "gh.createIssue"), Action::Deny);
        std::fs::write(&path, "[sources.gh]\ncommand = \"x\"\n").unwrap();
        assert_eq!(
            action(&live, "gh.createIssue"),
            Action::Deny,
            "a config without the profile denies everything"
        );
    }

    #[test]
    fn a_source_moved_out_of_the_profile_is_denied_at_once_and_a_removed_profile_denies_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let sources = "[sources.gh]\ncommand = \"x\"\n[sources.prod]\ncommand = \"x\"\n";
        let both = format!(
            "{sources}[profiles.work]\nsources = [\"gh\", \"prod\"]\n[[profiles.work.rules]]\nmatch = \"prod.query\"\naction = \"allow\"\n"
        );
        std::fs::write(&path, &both).unwrap();
        let initial = parse(&path, &both).unwrap().profiles["work"].policy.clone();
        let live = LivePolicy::watching(path.clone(), Some("work".into()), initial);
        assert_eq!(action(&live, "prod.query"), Action::Allow);
        // `prod` leaves the profile; the rule that allowed its tool stays in the file.
        std::fs::write(
            &path,
            both.replace("[\"gh\", \"prod\"]", "[\"gh\"]        "),
        )
        .unwrap();
        let decided = live
            .current()
            .evaluate("prod.query", None, &Annotations::default());
        assert_eq!(decided.action, Action::Deny);
        assert!(
            decided.reason.contains("no longer in the profile"),
            "{}",
            decided.reason
        );
        assert_eq!(action(&live, "gh.createIssue"), Action::Ask);
        // The profile is gone: nothing it served may be called.
        std::fs::write(&path, sources).unwrap();
        assert_eq!(action(&live, "gh.list"), Action::Deny);
        let read_only = Annotations {
            read_only_hint: Some(true),
            ..Annotations::default()
        };
        assert_eq!(
            live.current().evaluate("gh.list", None, &read_only).action,
            Action::Deny
        );
    }
}
