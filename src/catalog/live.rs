//! A catalogue that follows its sources while a process runs (the hub): it starts from the
//! cached listings (an old one is served until the source is listed again), starts the sources
//! that need listing, lists a source again when it becomes ready with an old or missing listing,
//! after a restart, and whenever the upstream says `notifications/tools/list_changed`, and keeps
//! the search index and the on-disk cache in step.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::broadcast::error::RecvError;

use super::cache::{CachedListing, ListingCache};
use super::changes::skill_versions;
use super::load::{list_source, namespace_for};
use super::search::SearchIndex;
use super::{Catalog, Origin};
use crate::config::{Settings, SkillDirs};
use crate::model::tool::build_namespace;
use crate::model::{Permits, ToolDefinition};
use crate::policy::Policy;
use crate::runs::{Store, WeakStore};
use crate::skills::describe::{SourceSkills, split_skill_targets};
use crate::skills::upstream::{SkillTexts, UpstreamSkill};
use crate::sources::{SourceEvent, SourceStatus, Sources};

/// The catalogue and its index, replaced namespace by namespace.
pub struct LiveCatalog {
    state: RwLock<State>,
    sources: Arc<Sources>,
    settings: Settings,
    cache: ListingCache,
    /// Where each listing's tool versions are recorded, once a store is attached: the first
    /// version of a tool counts as confirmed only if it is recorded before a later one. Weak:
    /// the catalogue outlives the verb that uses the store (its follower task ends on its own),
    /// and must not keep the database open past it.
    versions: OnceLock<WeakStore>,
    /// The last on-demand refresh (`source refresh`) taken from the cache, and when the marker
    /// was last looked at.
    refresh_seen: Mutex<(Option<SystemTime>, Option<Instant>)>,
    skill_texts: SkillTexts,
}

/// How often a read looks for an on-demand refresh: one `stat` at most this often.
const REFRESH_CHECK: Duration = Duration::from_secs(1);

struct State {
    catalog: Catalog,
    index: SearchIndex,
    /// Sources listed live since this process started.
    listed: HashSet<String>,
    /// Sources served from an old cached listing until they are listed again.
    old: HashSet<String>,
    /// Goes up whenever the tools change, so derived data (the sandbox's tool specs) can be
    /// cached until then.
    generation: u64,
}

impl LiveCatalog {
    /// Builds the catalogue from the cache and starts following `sources`. Call inside a tokio
    /// runtime; the follower task ends when the sources shut down.
    pub fn start(
        settings: Settings,
        cache: ListingCache,
        sources: Arc<Sources>,
    ) -> Arc<LiveCatalog> {
        let mut index = SearchIndex::new();
        let mut old = HashSet::new();
        let namespaces = settings
            .sources
            .iter()
            .map(|source| {
                let (tools, skills, origin) = match (source.enabled, cache.read(&source.name)) {
                    (false, _) => (Vec::new(), Vec::new(), Origin::Disabled),
                    (true, Some(listing)) if listing.is_fresh_for(source) => {
                        let fetched_at = listing.fetched_at();
                        (listing.tools, listing.skills, Origin::Cached { fetched_at })
                    }
                    // Better old tools than none while it is listed again.
                    (true, Some(listing)) if listing.is_for(source) => {
                        old.insert(source.name.clone());
                        let fetched_at = listing.fetched_at();
                        (listing.tools, listing.skills, Origin::Cached { fetched_at })
                    }
                    // Not started until its backoff ends, or a call needs it.
                    (true, _) if let Some(failed) = cache.holding_failure(source) => (
                        Vec::new(),
                        Vec::new(),
                        Origin::Unavailable {
                            error: failed.explain(&source.name),
                        },
                    ),
                    (true, _) => (Vec::new(), Vec::new(), Origin::Connecting),
                };
                index.set_namespace(&source.name, &tools);
                let mut namespace = namespace_for(source, tools, origin);
                namespace.skills = skills;
                namespace
            })
            .collect();
        // Subscribe before looking at statuses so no change falls in between.
        let events = sources.subscribe();
        let live = Arc::new(LiveCatalog {
            state: RwLock::new(State {
                catalog: Catalog { namespaces },
                index,
                listed: HashSet::new(),
                old,
                generation: 0,
            }),
            sources,
            settings,
            refresh_seen: Mutex::new((cache.refreshed_at(), None)),
            skill_texts: SkillTexts::beside(cache.dir()),
            cache,
            versions: OnceLock::new(),
        });
        tokio::spawn(follow(live.clone(), events));
        live
    }

    /// Records the versions of every tool listed now and at each listing from here on in
    /// `store`, so a tool that changes later is known to have changed.
    pub async fn record_versions(&self, store: Store) {
        // Attached before the catalogue is read: a listing that lands in between is then
        // recorded by its own relist, never by neither (a first version missed is a later
        // change taken for the first, trusted).
        let _ = self.versions.set(store.downgrade());
        let (tools, skills): (Vec<ToolDefinition>, Vec<UpstreamSkill>) = self.read(|catalog, _| {
            let tools = catalog
                .namespaces
                .iter()
                .flat_map(|n| n.tools.iter().cloned())
                .collect();
            (tools, catalog.upstream_skills())
        });
        record(&store, &tools, &skills).await;
    }

    /// A number that changes whenever any namespace's tools change.
    pub fn generation(&self) -> u64 {
        self.pick_up_refresh();
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .generation
    }

    /// Runs `f` over the current catalogue and index.
    pub fn read<T>(&self, f: impl FnOnce(&Catalog, &SearchIndex) -> T) -> T {
        self.pick_up_refresh();
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        f(&state.catalog, &state.index)
    }

    /// Waits (at most `timeout`) until every source is ready or failed, and makes sure each
    /// ready one is listed: for one-shot commands that need the whole catalogue before they start.
    pub async fn settle(&self, timeout: std::time::Duration) {
        for (name, status) in self.sources.wait_settled(timeout).await {
            match &status {
                SourceStatus::Ready { .. }
                    if self.needs_listing(&name) && !self.was_listed(&name) =>
                {
                    self.relist(&name).await
                }
                _ => settle(self, &name, &status).await,
            }
        }
    }

    /// Starts every source the catalogue has no fresh listing of, so it can be listed (the
    /// sources start a few at a time); a source with one starts when a run first calls it.
    pub fn start_unlisted(&self) {
        let old: Vec<String> = {
            let state = self.state.read().unwrap_or_else(|p| p.into_inner());
            state.old.iter().cloned().collect()
        };
        for name in self.unlisted(|_| true).into_iter().chain(old) {
            // Only configured, enabled sources have a namespace waiting for a listing.
            let _ = self.sources.connect(&name);
        }
    }

    /// Gets the sources `names` ready for a run: each one without a fresh listing is started
    /// and listed, waiting at most `timeout`; one with a listing starts when first called.
    /// Other sources are left alone, so a script that calls none starts none.
    pub async fn prepare(&self, names: &[String], timeout: std::time::Duration) {
        let unlisted = self.unlisted(|name| names.iter().any(|n| n == name));
        for name in &unlisted {
            let _ = self.sources.connect(name);
        }
        if !unlisted.is_empty() {
            self.settle(timeout).await;
        }
    }

    /// The namespaces among `wanted` still waiting for their first listing.
    fn unlisted(&self, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        self.read(|catalog, _| {
            catalog
                .namespaces
                .iter()
                .filter(|n| n.origin == Origin::Connecting && wanted(&n.name))
                .map(|n| n.name.clone())
                .collect()
        })
    }

    fn was_listed(&self, name: &str) -> bool {
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .listed
            .contains(name)
    }

    /// Puts `documents` (the skills', see `crate::skills::index`) in the search index in place
    /// of the skills indexed before. The tools' generation stays: scripts see no skills.
    pub fn set_skills(&self, documents: &[ToolDefinition]) {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        state
            .index
            .set_namespace(crate::skills::index::INDEX_NAMESPACE, documents);
    }

    pub fn sources(&self) -> &Arc<Sources> {
        &self.sources
    }

    /// Where the sources' skills' texts are kept once fetched (see `SkillTexts`).
    pub fn skill_texts(&self) -> &SkillTexts {
        &self.skill_texts
    }

    /// The `skill:…` targets among `targets` described, each within `budget_tokens`, and the
    /// other targets left for the tool catalogue: local skills from `dirs`, and the skills of
    /// the sources `policy` and `permits` (a bearer token's patterns) leave visible (see
    /// [`Catalog::reachable_skills`](super::Catalog::reachable_skills)), less those `withheld`
    /// until a person confirms their change.
    pub fn describe_skills<'a>(
        &'a self,
        dirs: &'a SkillDirs,
        policy: &Policy,
        permits: Permits,
        withheld: &'a (dyn Fn(&UpstreamSkill) -> bool + Sync),
        targets: &'a [String],
        budget_tokens: usize,
    ) -> impl Future<Output = Result<(String, Vec<String>), String>> + Send + 'a {
        // Read before the future: the listing is all it needs of the catalogue.
        let listed = self.read(|catalog, _| catalog.reachable_skills(policy, permits));
        async move {
            let source_skills = SourceSkills {
                listed: &listed,
                sources: &self.sources,
                texts: &self.skill_texts,
                withheld,
            };
            split_skill_targets(dirs, &source_skills, targets, budget_tokens).await
        }
    }

    /// Lists one source now and replaces its namespace; on failure keeps what it had, marked
    /// stale, with the error.
    pub async fn relist(&self, name: &str) {
        let Some(source) = self.settings.source(name) else {
            return;
        };
        let listed = list_source(&self.sources, name).await;
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        let State {
            catalog,
            index,
            listed: listed_names,
            old,
            generation,
        } = &mut *state;
        let Some(namespace) = catalog.namespaces.iter_mut().find(|n| n.name == name) else {
            return;
        };
        match listed {
            Ok((tools, skills)) => {
                let skills = skills.unwrap_or_else(|| namespace.skills.clone());
                // Addresses stay as the namespace had them: rules and decisions name them.
                let tools = build_namespace(name, tools, &namespace.tools);
                let listing = CachedListing::new(source, tools.clone()).with_skills(skills.clone());
                if let Err(e) = self.cache.write(name, &listing) {
                    tracing::warn!("cannot cache the tools of `{name}`: {e:#}");
                }
                index.set_namespace(name, &tools);
                self.cache.clear_failure(name);
                if let Some(store) = self.versions.get().and_then(WeakStore::upgrade) {
                    let (tools, skills) = (tools.clone(), skills.clone());
                    tokio::spawn(async move { record(&store, &tools, &skills).await });
                }
                namespace.tools = tools;
                namespace.skills = skills;
                namespace.origin = Origin::Live;
                listed_names.insert(name.to_string());
                old.remove(name);
                *generation += 1;
            }
            // The command is ending and took the connection with it: nothing failed.
            Err(_) if self.sources.is_shutting_down() => {}
            Err(error) => {
                tracing::warn!("cannot list the tools of `{name}`: {error}");
                namespace.origin = match self.cache.read(name) {
                    Some(old) if !namespace.tools.is_empty() => Origin::Stale {
                        fetched_at: old.fetched_at(),
                        error: error.to_string(),
                    },
                    _ => Origin::Unavailable {
                        error: error.to_string(),
                    },
                };
            }
        }
    }

    fn mark_failed(&self, name: &str, error: &str) {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        let cache = &self.cache;
        if let Some(namespace) = state.catalog.namespaces.iter_mut().find(|n| n.name == name) {
            namespace.origin = match cache.read(name) {
                Some(old) if !namespace.tools.is_empty() => Origin::Stale {
                    fetched_at: old.fetched_at(),
                    error: error.to_string(),
                },
                _ => Origin::Unavailable {
                    error: error.to_string(),
                },
            };
        }
    }

    /// Takes the listings `source refresh` wrote, once per refresh: each namespace whose fresh
    /// cached listing differs from what this process serves is replaced by it.
    fn pick_up_refresh(&self) {
        {
            let mut seen = self.refresh_seen.lock().unwrap_or_else(|p| p.into_inner());
            if seen.1.is_some_and(|at| at.elapsed() < REFRESH_CHECK) {
                return;
            }
            seen.1 = Some(Instant::now());
            let marker = self.cache.refreshed_at();
            if marker.is_none() || marker == seen.0 {
                return;
            }
            seen.0 = marker;
        }
        let mut replaced = Vec::new();
        let mut replaced_skills = Vec::new();
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        let State {
            catalog,
            index,
            generation,
            ..
        } = &mut *state;
        for source in self.settings.sources.iter().filter(|s| s.enabled) {
            let Some(listing) = self.cache.read(&source.name) else {
                continue;
            };
            let Some(namespace) = catalog
                .namespaces
                .iter_mut()
                .find(|n| n.name == source.name)
            else {
                continue;
            };
            let hashes = |tools: &[ToolDefinition]| -> Vec<String> {
                tools.iter().map(|t| t.hash.clone()).collect()
            };
            if !listing.is_fresh_for(source)
                || (hashes(&listing.tools) == hashes(&namespace.tools)
                    && listing.skills == namespace.skills)
            {
                continue;
            }
            namespace.skills = listing.skills.clone();
            replaced_skills.extend(listing.skills.iter().cloned());
            index.set_namespace(&source.name, &listing.tools);
            namespace.origin = Origin::Cached {
                fetched_at: listing.fetched_at(),
            };
            namespace.tools = listing.tools;
            replaced.extend(namespace.tools.iter().cloned());
            *generation += 1;
        }
        drop(state);
        if let (Some(store), false) = (
            self.versions.get().and_then(WeakStore::upgrade),
            replaced.is_empty() && replaced_skills.is_empty(),
        ) && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { record(&store, &replaced, &replaced_skills).await });
        }
    }

    /// True when the namespace should be listed on becoming ready: never listed by this process
    /// and its cached listing is not fresh, or it was listed before (so this is a restart).
    fn needs_listing(&self, name: &str) -> bool {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        if state.listed.contains(name) || state.old.contains(name) {
            return true;
        }
        !matches!(
            state.catalog.namespace(name).map(|n| &n.origin),
            Some(Origin::Cached { .. })
        )
    }
}

/// Records the versions of `tools` and `skills`; a store that cannot is logged (each call checks
/// its tool's version again before it runs).
async fn record(store: &Store, tools: &[ToolDefinition], skills: &[UpstreamSkill]) {
    if let Err(e) = store.tool_versions().observe(tools).await {
        tracing::warn!("cannot record the versions of the tools listed: {e}");
    }
    if let Err(e) = store
        .tool_versions()
        .observe_seen(skill_versions(skills))
        .await
    {
        tracing::warn!("cannot record the versions of the skills listed: {e}");
    }
}

async fn follow(live: Arc<LiveCatalog>, mut events: tokio::sync::broadcast::Receiver<SourceEvent>) {
    // Sources that settled before we subscribed.
    for (name, status) in live.sources.statuses() {
        settle(&live, &name, &status).await;
    }
    loop {
        match events.recv().await {
            Ok(SourceEvent::ToolsChanged { source }) => live.relist(&source).await,
            Ok(SourceEvent::StatusChanged { source, status }) => {
                settle(&live, &source, &status).await
            }
            // Missed events: re-list everything that is ready so nothing stays stale.
            Err(RecvError::Lagged(_)) => {
                for (name, status) in live.sources.statuses() {
                    if status.is_ready() {
                        live.relist(&name).await;
                    }
                }
            }
            Err(RecvError::Closed) => break,
        }
    }
}

async fn settle(live: &LiveCatalog, name: &str, status: &SourceStatus) {
    match status {
        SourceStatus::Ready { .. } if live.needs_listing(name) => live.relist(name).await,
        SourceStatus::Failed { error } => {
            // Remembered, so other processes (and this hub's next start) wait it out; not when
            // it failed because this process is closing its sources.
            if let Some(source) = live.settings.source(name)
                && !live.sources.is_shutting_down()
            {
                live.cache.record_failure(source, error);
            }
            live.mark_failed(name, error)
        }
        SourceStatus::Restarting {
            last_error: error, ..
        } => live.mark_failed(name, error),
        _ => {}
    }
}
