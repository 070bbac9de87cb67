//! Failed connects, remembered across processes beside the cached listings: a source that did
//! not answer is left alone for a while (30 s, doubling with each failure in a row, up to
//! 30 min), so it does not cost every later `search`, `exec` or hub its whole connect timeout.
//! `source test` and `--refresh` try it again at once, and so does any change to how the source
//! is configured (the fix for what failed); a success forgets the failure.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

use super::cache::unix_now;
use crate::config::SourceSettings;

/// How long a first failure is left alone.
const FIRST_BACKOFF: Duration = Duration::from_secs(30);
/// The longest a source is left alone before it is tried again by itself.
const MAX_BACKOFF: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedConnect {
    /// Seconds since the Unix epoch.
    pub failed_at: u64,
    pub error: String,
    /// Failures in a row, this one included.
    pub attempts: u32,
    /// How the source was configured: a changed command, URL, environment, header or timeout
    /// is tried again at once.
    pub fingerprint: String,
}

impl FailedConnect {
    /// A failure of `source` now, after `previous` (the last one remembered, if any).
    pub fn new(source: &SourceSettings, error: &str, previous: Option<&FailedConnect>) -> Self {
        let fingerprint = fingerprint(source);
        let attempts = previous
            .filter(|p| p.fingerprint == fingerprint)
            .map_or(1, |p| p.attempts.saturating_add(1));
        FailedConnect {
            failed_at: unix_now(),
            error: error.to_string(),
            attempts,
            fingerprint,
        }
    }

    /// How long after this failure the source is left alone.
    pub fn backoff(&self) -> Duration {
        let doublings = self.attempts.saturating_sub(1).min(10);
        FIRST_BACKOFF
            .saturating_mul(1 << doublings)
            .min(MAX_BACKOFF)
    }

    /// True while `source`, configured as it is now, should not be tried again by itself.
    pub fn holds_for(&self, source: &SourceSettings) -> bool {
        self.fingerprint == fingerprint(source)
            && unix_now() < self.failed_at.saturating_add(self.backoff().as_secs())
    }

    /// `failed 20 s ago: ERROR`, what `source list` and the "not searched" notes say.
    pub fn describe(&self) -> String {
        let failed_at = UNIX_EPOCH + Duration::from_secs(self.failed_at);
        let ago = SystemTime::now()
            .duration_since(failed_at)
            .unwrap_or_default()
            .as_secs();
        let ago = match ago {
            0..120 => format!("{ago} s"),
            120..7200 => format!("{} min", ago / 60),
            _ => format!("{} h", ago / 3600),
        };
        format!("failed {ago} ago: {}", self.error)
    }

    /// [`describe`](Self::describe), and how to try `source` again without waiting (unless the
    /// error already says).
    pub fn explain(&self, source: &str) -> String {
        let command = format!("capabilities source test {source}");
        if self.error.contains(&command) {
            return self.describe();
        }
        format!("{}; `{command}` tries it again now", self.describe())
    }
}

/// A digest of everything in `source`'s settings a person edits to make a connect work: the
/// transport, each connection's environment, headers and credentials (as written in the config:
/// references, not the secrets), and the connect timeout.
fn fingerprint(source: &SourceSettings) -> String {
    let described = format!(
        "{:?}|{:?}|{:?}",
        source.transport, source.connections, source.connect_timeout
    );
    Sha256::digest(described.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    fn source(command: &str) -> SourceSettings {
        configured(&format!("command = \"{command}\"\n"))
    }

    fn configured(table: &str) -> SourceSettings {
        let text = format!("[sources.a]\n{table}");
        parse(std::path::Path::new("c.toml"), &text)
            .unwrap()
            .sources
            .remove(0)
    }

    #[test]
    fn a_source_configured_anew_is_tried_again_at_once() {
        let failed = FailedConnect::new(&source("x"), "KeyError: 'TOKEN'", None);
        for fixed in [
            "command = \"x\"\nenv = { TOKEN = \"t\" }\n",
            "command = \"x\"\nconnect_timeout_secs = 90\n",
            "command = \"x\"\n[sources.a.connections.work]\nenv = { TOKEN = \"${secret:t}\" }\n",
        ] {
            assert!(!failed.holds_for(&configured(fixed)), "{fixed}");
        }
        assert!(failed.holds_for(&configured("command = \"x\"\n")));
    }

    #[test]
    fn each_failure_in_a_row_doubles_the_wait_up_to_a_limit() {
        let first = FailedConnect::new(&source("x"), "no answer", None);
        assert_eq!(first.backoff(), FIRST_BACKOFF);
        let second = FailedConnect::new(&source("x"), "no answer", Some(&first));
        assert_eq!(second.backoff(), FIRST_BACKOFF * 2);
        let many = FailedConnect {
            attempts: 40,
            ..second.clone()
        };
        assert_eq!(many.backoff(), MAX_BACKOFF);
        // Another command is another server: its first failure.
        let moved = FailedConnect::new(&source("y"), "no answer", Some(&second));
        assert_eq!(moved.attempts, 1);
    }

    #[test]
    fn a_failure_holds_for_its_backoff_and_its_own_command_only() {
        let failed = FailedConnect::new(&source("x"), "no answer", None);
        assert!(failed.holds_for(&source("x")));
        assert!(!failed.holds_for(&source("y")));
        let long_ago = FailedConnect {
            failed_at: unix_now() - 31,
            ..failed.clone()
        };
        assert!(!long_ago.holds_for(&source("x")));
        assert!(
            long_ago
                .describe()
                .starts_with("failed 31 s ago: no answer"),
            "{}",
            long_ago.describe()
        );
    }
}
