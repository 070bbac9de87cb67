//! Building the catalogue for a command. Without `--refresh` it answers from the cache at once:
//! a source with a cached listing (for its command line as configured now) is not started, even
//! when the listing is old (the command may refresh it in the background, see
//! [`old_listings`]); a source without one is listed live, waiting at most
//! [`FIRST_LISTING_WAIT`]; a source whose connect failed lately, or that did not answer within
//! that wait, is not tried (see `failures`). With `--refresh` every enabled source is listed live, each waited for its whole
//! connect timeout. A source that cannot be reached falls back to its old listing, marked
//! stale, and never blocks the others.

use std::sync::Arc;
use std::time::Duration;

use super::cache::{CachedListing, ListingCache};
use super::{Catalog, Namespace, Origin, UpstreamTool};
use crate::config::{Pacing, Settings, SourceSettings, settle_time};
use crate::credentials::SecretLookup;
use crate::model::tool::build_namespace;
use crate::skills::upstream::{self, UpstreamSkill};
use crate::sources::{SourceError, SourceStatus, Sources};

/// The longest a command without `--refresh` waits for a source it has no listing of: a
/// server slower than that is reported as not searched rather than holding up the answer.
pub const FIRST_LISTING_WAIT: Duration = Duration::from_secs(20);

/// Loads every configured source's tools. With `refresh`, every enabled source is listed live.
pub async fn load(
    settings: &Settings,
    cache: &ListingCache,
    refresh: bool,
    secrets: Arc<dyn SecretLookup>,
) -> Catalog {
    let mut cached = Vec::new();
    let mut held = Vec::new();
    let mut to_list = Vec::new();
    for source in &settings.sources {
        if !source.enabled {
            continue;
        }
        let listing = cache
            .read(&source.name)
            .filter(|listing| listing.is_for(source));
        match (listing, refresh) {
            (Some(listing), false) => cached.push((source.name.clone(), listing)),
            _ if !refresh && let Some(failed) = cache.holding_failure(source) => {
                held.push((source.name.clone(), failed.explain(&source.name)))
            }
            _ => to_list.push(source.clone()),
        }
    }
    let wait = if refresh {
        settle_time(&to_list)
    } else {
        settle_time(&to_list).min(FIRST_LISTING_WAIT)
    };
    let live = if to_list.is_empty() {
        Vec::new()
    } else {
        list_live(to_list, secrets, wait, settings.pacing).await
    };

    let namespaces = settings
        .sources
        .iter()
        .map(|source| {
            let (tools, skills, origin) = if !source.enabled {
                (Vec::new(), Vec::new(), Origin::Disabled)
            } else if let Some((_, listing)) = cached.iter().find(|(name, _)| *name == source.name)
            {
                (
                    listing.tools.clone(),
                    listing.skills.clone(),
                    Origin::Cached {
                        fetched_at: listing.fetched_at(),
                    },
                )
            } else if let Some((_, why)) = held.iter().find(|(name, _)| *name == source.name) {
                (
                    Vec::new(),
                    Vec::new(),
                    Origin::Unavailable { error: why.clone() },
                )
            } else {
                match live
                    .iter()
                    .find(|(name, _)| *name == source.name)
                    .map(|(_, r)| r)
                {
                    Some(Listed::Tools(tools, skills)) => {
                        let skills = skills.clone().unwrap_or_else(|| {
                            cache
                                .read(&source.name)
                                .map(|old| old.skills)
                                .unwrap_or_default()
                        });
                        // Addresses stay as the cached listing had them: rules and decisions name them.
                        let before = cache
                            .read(&source.name)
                            .map(|old| old.tools)
                            .unwrap_or_default();
                        let tools = build_namespace(&source.name, tools.clone(), &before);
                        let listing =
                            CachedListing::new(source, tools.clone()).with_skills(skills.clone());
                        if let Err(e) = cache.write(&source.name, &listing) {
                            tracing::warn!("cannot cache the tools of `{}`: {e:#}", source.name);
                        }
                        cache.clear_failure(&source.name);
                        (tools, skills.clone(), Origin::Live)
                    }
                    Some(Listed::Failed(error)) => {
                        cache.record_failure(source, error);
                        fallback(cache, &source.name, error)
                    }
                    Some(Listed::NotYet(error)) => fallback(cache, &source.name, error),
                    None => (
                        Vec::new(),
                        Vec::new(),
                        Origin::Unavailable {
                            error: "was not listed".into(),
                        },
                    ),
                }
            };
            let mut namespace = namespace_for(source, tools, origin);
            namespace.skills = skills;
            namespace
        })
        .collect();
    Catalog { namespaces }
}

/// What a source that could not be listed shows: its old listing, marked stale, if there is
/// one; else nothing, with the error.
fn fallback(
    cache: &ListingCache,
    name: &str,
    error: &str,
) -> (Vec<super::ToolDefinition>, Vec<UpstreamSkill>, Origin) {
    match cache.read(name) {
        Some(old) => (
            old.tools.clone(),
            old.skills.clone(),
            Origin::Stale {
                fetched_at: old.fetched_at(),
                error: error.to_string(),
            },
        ),
        None => (
            Vec::new(),
            Vec::new(),
            Origin::Unavailable {
                error: error.to_string(),
            },
        ),
    }
}

/// The enabled sources whose cached listing is there but old: what a command answering from the
/// cache may refresh in the background.
pub fn old_listings(settings: &Settings, cache: &ListingCache) -> Vec<String> {
    settings
        .sources
        .iter()
        .filter(|source| source.enabled)
        .filter(|source| {
            cache
                .read(&source.name)
                .is_some_and(|listing| listing.is_for(source) && !listing.is_fresh_for(source))
        })
        .map(|source| source.name.clone())
        .collect()
}

/// A namespace for `source` with these tools.
pub fn namespace_for(
    source: &SourceSettings,
    tools: Vec<super::ToolDefinition>,
    origin: Origin,
) -> Namespace {
    let named_connections = source.has_named_connections();
    Namespace {
        name: source.name.clone(),
        connections: source.connections.iter().map(|c| c.name.clone()).collect(),
        named_connections,
        tools,
        skills: Vec::new(),
        origin,
    }
}

/// Lists one source's tools and, when it declares the Skills extension, its skills (`None`
/// when that listing failed: logged, and the caller keeps the skills it had, since the tools
/// are what the source is for and one failed request should not drop its skills).
pub async fn list_source(
    sources: &Sources,
    name: &str,
) -> Result<(Vec<UpstreamTool>, Option<Vec<UpstreamSkill>>), SourceError> {
    let tools = sources.list_tools(name).await?;
    let skills = match sources.list_skills(name).await {
        Ok(entries) => Some(upstream::from_listing(name, entries)),
        Err(e) => {
            tracing::warn!(
                "cannot list the skills of `{name}`; keeping the ones listed before: {e}"
            );
            None
        }
    };
    Ok((tools, skills))
}

/// What listing one source live found.
enum Listed {
    Tools(Vec<UpstreamTool>, Option<Vec<UpstreamSkill>>),
    /// It could not connect or list: remembered, so later commands do not wait for it again.
    Failed(String),
    /// It had not had its turn to connect when the wait ended: not its fault, so not remembered.
    NotYet(String),
}

/// Connects to `sources` (a few at a time), lists each one that comes up within `wait`, and
/// shuts them all down.
async fn list_live(
    sources: Vec<SourceSettings>,
    secrets: Arc<dyn SecretLookup>,
    wait: Duration,
    pacing: Pacing,
) -> Vec<(String, Listed)> {
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    // When all start at once, one still connecting at the end had the whole wait: it is as
    // good as failed (else every later command would wait for it again). Paced, it may have
    // waited for its turn.
    let all_at_once = sources.len() <= pacing.max_starting;
    let manager = Sources::start_paced(sources, secrets, pacing);
    manager.wait_settled(wait).await;
    let statuses = manager.statuses();
    let mut results = Vec::new();
    for name in names {
        let status = statuses
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.clone());
        let result = match status {
            Some(SourceStatus::Ready { .. }) => match list_source(&manager, &name).await {
                Ok((tools, skills)) => Listed::Tools(tools, skills),
                Err(e) => Listed::Failed(e.to_string()),
            },
            Some(SourceStatus::Failed { error }) => Listed::Failed(error),
            Some(SourceStatus::Connecting | SourceStatus::Idle) => {
                let error = format!(
                    "it did not answer within {} s; `capabilities source test {name}` waits for its whole connect timeout",
                    wait.as_secs()
                );
                if all_at_once {
                    Listed::Failed(error)
                } else {
                    Listed::NotYet(error)
                }
            }
            Some(other) => Listed::NotYet(format!("not ready ({other})")),
            None => Listed::NotYet("was not started".into()),
        };
        results.push((name, result));
    }
    manager.shutdown().await;
    results
}
