//! Building the catalogue for a command: cached listings when they are fresh, live listings
//! (through [`Sources`]) for sources whose cache is missing, old, for another command line, or
//! when the user asks for `--refresh`. A source that cannot be reached falls back to its old
//! listing, marked stale, and never blocks the others.

use std::sync::Arc;

use super::cache::{CachedListing, ListingCache};
use super::{Catalog, Namespace, Origin};
use crate::config::{IMPLICIT_CONNECTION, Settings, SourceSettings, settle_time};
use crate::credentials::SecretLookup;
use crate::model::tool::build_namespace;
use crate::sources::{SourceStatus, Sources};

/// Loads every configured source's tools. With `refresh`, every enabled source is listed live.
pub async fn load(
    settings: &Settings,
    cache: &ListingCache,
    refresh: bool,
    secrets: Arc<dyn SecretLookup>,
) -> Catalog {
    let mut cached = Vec::new();
    let mut to_list = Vec::new();
    for source in &settings.sources {
        if !source.enabled {
            continue;
        }
        match cache.read(&source.name) {
            Some(listing) if !refresh && listing.is_fresh_for(source) => {
                cached.push((source.name.clone(), listing))
            }
            _ => to_list.push(source.clone()),
        }
    }
    let live = if to_list.is_empty() {
        Vec::new()
    } else {
        list_live(to_list, secrets).await
    };

    let namespaces = settings
        .sources
        .iter()
        .map(|source| {
            let (tools, origin) = if !source.enabled {
                (Vec::new(), Origin::Disabled)
            } else if let Some((_, listing)) = cached.iter().find(|(name, _)| *name == source.name)
            {
                (
                    listing.tools.clone(),
                    Origin::Cached {
                        fetched_at: listing.fetched_at(),
                    },
                )
            } else {
                match live
                    .iter()
                    .find(|(name, _)| *name == source.name)
                    .map(|(_, r)| r)
                {
                    Some(Ok(tools)) => {
                        let tools = build_namespace(&source.name, tools.clone());
                        if let Err(e) =
                            cache.write(&source.name, &CachedListing::new(source, tools.clone()))
                        {
                            tracing::warn!("cannot cache the tools of `{}`: {e:#}", source.name);
                        }
                        (tools, Origin::Live)
                    }
                    Some(Err(error)) => match cache.read(&source.name) {
                        Some(old) => (
                            old.tools.clone(),
                            Origin::Stale {
                                fetched_at: old.fetched_at(),
                                error: error.clone(),
                            },
                        ),
                        None => (
                            Vec::new(),
                            Origin::Unavailable {
                                error: error.clone(),
                            },
                        ),
                    },
                    None => (
                        Vec::new(),
                        Origin::Unavailable {
                            error: "was not listed".into(),
                        },
                    ),
                }
            };
            namespace_for(source, tools, origin)
        })
        .collect();
    Catalog { namespaces }
}

/// A namespace for `source` with these tools.
pub fn namespace_for(
    source: &SourceSettings,
    tools: Vec<super::ToolDefinition>,
    origin: Origin,
) -> Namespace {
    let named_connections =
        !(source.connections.len() == 1 && source.connections[0].name == IMPLICIT_CONNECTION);
    Namespace {
        name: source.name.clone(),
        connections: source.connections.iter().map(|c| c.name.clone()).collect(),
        named_connections,
        tools,
        origin,
    }
}

/// Connects to `sources` at once, lists each one that comes up, and shuts them all down.
async fn list_live(
    sources: Vec<SourceSettings>,
    secrets: Arc<dyn SecretLookup>,
) -> Vec<(String, Result<Vec<super::UpstreamTool>, String>)> {
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let settle = settle_time(&sources);
    let manager = Sources::start(sources, secrets);
    manager.wait_settled(settle).await;
    let statuses = manager.statuses();
    let mut results = Vec::new();
    for name in names {
        let status = statuses
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.clone());
        let result = match status {
            Some(SourceStatus::Ready { .. }) => {
                manager.list_tools(&name).await.map_err(|e| e.to_string())
            }
            Some(SourceStatus::Failed { error }) => Err(error),
            Some(other) => Err(format!("not ready ({other})")),
            None => Err("was not started".into()),
        };
        results.push((name, result));
    }
    manager.shutdown().await;
    results
}
