//! The on-disk cache of tool listings: one JSON file per source in the data directory, holding
//! the definitions (with their hashes), when they were fetched, and a fingerprint of how the
//! source is reached, so `search` and `describe` answer without starting every server; and
//! beside them each source's last failed connect ([`FailedConnect`]), so separate processes
//! share it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::failures::FailedConnect;
use crate::config::SourceSettings;
use crate::config::edit::write_atomically;
use crate::model::tool::ToolDefinition;
use crate::skills::upstream::UpstreamSkill;

/// A listing older than this is fetched again.
pub const MAX_AGE: Duration = Duration::from_secs(6 * 60 * 60);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedListing {
    /// Seconds since the Unix epoch.
    pub fetched_at: u64,
    /// Changes when the source's command, arguments or URL change, which invalidates the listing.
    pub fingerprint: String,
    pub tools: Vec<ToolDefinition>,
    /// The skills it publishes under the Skills extension (none in a cache written before the
    /// hub listed skills).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<UpstreamSkill>,
}

impl CachedListing {
    pub fn new(source: &SourceSettings, tools: Vec<ToolDefinition>) -> Self {
        CachedListing {
            fetched_at: unix_now(),
            fingerprint: fingerprint(source),
            tools,
            skills: Vec::new(),
        }
    }

    pub fn with_skills(mut self, skills: Vec<UpstreamSkill>) -> Self {
        self.skills = skills;
        self
    }

    /// Fresh: fetched less than [`MAX_AGE`] ago, for the source as it is configured now.
    pub fn is_fresh_for(&self, source: &SourceSettings) -> bool {
        self.is_for(source) && unix_now().saturating_sub(self.fetched_at) < MAX_AGE.as_secs()
    }

    /// Listed from the source as it is configured now (its command or URL unchanged), however
    /// long ago.
    pub fn is_for(&self, source: &SourceSettings) -> bool {
        self.fingerprint == fingerprint(source)
    }

    pub fn fetched_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.fetched_at)
    }
}

/// What identifies the server behind a source. Env and header values are left out on purpose:
/// they may hold secrets, and a new token does not change the tools.
pub(super) fn fingerprint(source: &SourceSettings) -> String {
    let described = format!("{:?}", source.transport);
    Sha256::digest(described.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub struct ListingCache {
    dir: PathBuf,
}

impl ListingCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ListingCache { dir: dir.into() }
    }

    fn path(&self, source: &str) -> PathBuf {
        self.dir.join(format!("{source}.json"))
    }

    /// The cached listing of a source, if there is a readable one. A corrupt file is treated as
    /// missing (and logged): the source is simply listed again.
    pub fn read(&self, source: &str) -> Option<CachedListing> {
        let path = self.path(source);
        let text = std::fs::read_to_string(&path).ok()?;
        match serde_json::from_str(&text) {
            Ok(listing) => Some(listing),
            Err(e) => {
                tracing::warn!("ignoring unreadable cache {}: {e}", path.display());
                None
            }
        }
    }

    pub fn write(&self, source: &str, listing: &CachedListing) -> anyhow::Result<()> {
        let text = serde_json::to_string(listing)?;
        write_atomically(&self.path(source), &text)
    }

    pub fn remove(&self, source: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(source)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn failure_path(&self, source: &str) -> PathBuf {
        // Source names are identifiers, so no source's listing is called `NAME.failed`.
        self.dir.join(format!("{source}.failed.json"))
    }

    /// The last failed connect of `source` remembered, if any (however old).
    pub fn failure(&self, source: &str) -> Option<FailedConnect> {
        let text = std::fs::read_to_string(self.failure_path(source)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The failed connect that still holds for `source` as configured now (see
    /// [`FailedConnect::holds_for`]): it is not to be tried again by itself yet.
    pub fn holding_failure(&self, source: &SourceSettings) -> Option<FailedConnect> {
        self.failure(&source.name)
            .filter(|failed| failed.holds_for(source))
    }

    /// Remembers that `source` could not connect, `error` saying why.
    pub fn record_failure(&self, source: &SourceSettings, error: &str) {
        let failed = FailedConnect::new(source, error, self.failure(&source.name).as_ref());
        let written = serde_json::to_string(&failed)
            .map_err(anyhow::Error::from)
            .and_then(|text| write_atomically(&self.failure_path(&source.name), &text));
        if let Err(e) = written {
            tracing::warn!(
                "cannot remember that `{}` failed to connect: {e:#}",
                source.name
            );
        }
    }

    /// Forgets the failures of `source`: it connected.
    pub fn clear_failure(&self, source: &str) {
        match std::fs::remove_file(self.failure_path(source)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!("cannot forget the failed connect of `{source}`: {e}")
            }
            _ => {}
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Tells running hubs that listings were refreshed on demand (`source refresh`): they take
    /// the new listings from here instead of waiting for their own next listing.
    pub fn mark_refreshed(&self) -> anyhow::Result<()> {
        write_atomically(&self.dir.join(REFRESHED), &unix_now().to_string())
    }

    /// When listings were last refreshed on demand, if ever.
    pub fn refreshed_at(&self) -> Option<SystemTime> {
        std::fs::metadata(self.dir.join(REFRESHED))
            .and_then(|m| m.modified())
            .ok()
    }
}

/// The marker [`ListingCache::mark_refreshed`] writes.
const REFRESHED: &str = ".refreshed";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    fn source(command: &str) -> SourceSettings {
        let text = format!("[sources.a]\ncommand = \"{command}\"\n");
        parse(Path::new("c.toml"), &text).unwrap().sources.remove(0)
    }

    #[test]
    fn round_trip_and_freshness() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path().join("catalog"));
        assert!(cache.read("a").is_none());
        let listing = CachedListing::new(&source("x"), vec![]);
        cache.write("a", &listing).unwrap();
        let back = cache.read("a").unwrap();
        assert!(back.is_fresh_for(&source("x")));
        assert!(
            !back.is_fresh_for(&source("y")),
            "a changed command invalidates the listing"
        );
        let old = CachedListing {
            fetched_at: unix_now() - MAX_AGE.as_secs() - 1,
            ..back
        };
        assert!(!old.is_fresh_for(&source("x")));
    }

    #[test]
    fn corrupt_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ListingCache::new(dir.path());
        std::fs::write(dir.path().join("a.json"), "{not json").unwrap();
        assert!(cache.read("a").is_none());
        cache.remove("a").unwrap();
        cache.remove("a").unwrap();
    }
}
