//! The dashboard's reads and writes: snapshots from the state store (shared in WAL mode with every
//! hub and `exec` on the machine, so it is the one source of truth), the configured sources with
//! their cached tool lists, and decisions made with channel `dashboard`. With a profile, only
//! that profile's runs, waiting calls and sources.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::snapshot::{ConfiguredSource, RunDetail, Snapshot, WaitingConnection, merge_sources};
use crate::approvals::{Channel, DecisionRequest, decide};
use crate::catalog::cache::ListingCache;
use crate::catalog::refresh::{refresh_sources, summary};
use crate::config::Paths;
use crate::credentials::Credentials;
use crate::runs::{Approval, Decision, Store, now_ms};
use crate::sandbox::{ExecuteEnvelope, PendingKind};

/// How many recent runs the runs pane lists.
const RUN_LIMIT: usize = 200;
/// Cached listings change only when some process re-lists a source; reading them this often
/// keeps tool counts current without parsing every listing on each poll.
const SOURCES_EVERY: Duration = Duration::from_secs(10);

pub struct Loader {
    paths: Paths,
    /// Where the state store's key may be kept, besides its key file.
    credentials: Option<Arc<Credentials>>,
    /// Opened on first use and again after a failure, so a dashboard started before the data
    /// directory exists (or while it is unreadable) recovers by itself.
    store: Option<Store>,
    configured: Vec<ConfiguredSource>,
    config_problem: Option<String>,
    /// `dashboard --profile`: the profile shown, and its sources as the config last said.
    profile: Option<(String, Vec<String>)>,
    /// The shared store's URL, when the runs live in PostgreSQL rather than the data directory.
    store_url: Option<String>,
    configured_at: Option<(Instant, Option<SystemTime>)>,
}

impl Loader {
    pub fn new(paths: Paths) -> Loader {
        Loader {
            paths,
            credentials: None,
            store: None,
            configured: Vec::new(),
            config_problem: None,
            profile: None,
            configured_at: None,
            store_url: None,
        }
    }

    /// Shows only `profile`'s runs, waiting calls and sources.
    pub fn with_profile(mut self, profile: Option<String>) -> Loader {
        self.profile = profile.map(|name| (name, Vec::new()));
        self
    }

    /// Opens the sign-in page `waiting` waits for (see [`super::sign_in`]).
    pub async fn sign_in(&self, waiting: &WaitingConnection) -> Result<String, String> {
        let Some(credentials) = self.credentials.clone() else {
            return Err(format!(
                "no credential store to keep a sign-in in; run `capabilities source login {}` in a terminal",
                crate::sources::login_arguments(&waiting.source, waiting.connection.as_deref())
            ));
        };
        super::sign_in::start(&self.paths.config_file, credentials, waiting).await
    }

    /// Reads the runs of the shared store at `url` (`[store] url`) instead of the SQLite file.
    pub fn with_store_url(mut self, url: Option<String>) -> Loader {
        self.store_url = url;
        self
    }

    /// Reads runs whose key is kept in these credential stores.
    pub fn with_credentials(mut self, credentials: Arc<Credentials>) -> Loader {
        self.credentials = Some(credentials);
        self
    }

    async fn store(&mut self) -> Result<Store, String> {
        if let Some(store) = &self.store {
            return Ok(store.clone());
        }
        let opened = match &self.store_url {
            Some(url) => {
                Store::open_shared(url, &self.paths.data_dir, self.credentials.clone()).await
            }
            None => Store::open(&self.paths.state_database(), self.credentials.clone()).await,
        };
        let store = opened.map_err(|e| e.to_string())?;
        self.store = Some(store.clone());
        Ok(store)
    }

    /// The time by the store's clock, which runs and approvals are dated and expire by (another
    /// hub on a shared store writes them too), or this machine's while no store is open.
    pub async fn clock_ms(&self) -> u64 {
        match &self.store {
            Some(store) => store.runs().clock_or_local_ms().await,
            None => now_ms(),
        }
    }

    /// Everything the main screen shows, read now. What cannot be read becomes a problem line
    /// instead of an error, so the rest of the screen stays live.
    pub async fn snapshot(&mut self) -> Snapshot {
        self.refresh_configured();
        let mut snapshot = Snapshot::default();
        let filtering = self.profile.is_some();
        let read = async {
            let store = self.store().await?;
            let text = |e: crate::runs::StoreError| e.to_string();
            let approvals = store.approvals().pending().await.map_err(text)?;
            let runs = store.runs().summaries(RUN_LIMIT).await.map_err(text)?;
            let connections = waiting_connections(&store, &runs).await.map_err(text)?;
            let reported = store.source_status().list().await.map_err(text)?;
            let run_profiles = if filtering {
                run_profiles(&store, &runs, &approvals)
                    .await
                    .map_err(text)?
            } else {
                HashMap::new()
            };
            Ok::<_, String>((approvals, runs, connections, reported, run_profiles))
        }
        .await;
        let (reported, run_profiles) = match read {
            Ok((approvals, runs, connections, reported, run_profiles)) => {
                snapshot.approvals = approvals;
                snapshot.runs = runs;
                snapshot.connections = connections;
                (reported, run_profiles)
            }
            Err(e) => {
                // Reopen next time: the file may have been replaced or its directory created.
                self.store = None;
                snapshot.problems.push(e);
                (Vec::new(), HashMap::new())
            }
        };
        snapshot.problems.extend(self.config_problem.clone());
        snapshot.sources = merge_sources(self.configured.clone(), reported);
        if let Some((profile, sources)) = &self.profile {
            snapshot.keep_profile(profile, sources, &run_profiles);
        }
        snapshot
    }

    /// Reads the cached listings again at the next snapshot: the sources were just re-listed.
    pub fn forget_configured(&mut self) {
        self.configured_at = None;
    }

    /// Re-reads the config and the cached listings when the config changed or a while passed.
    fn refresh_configured(&mut self) {
        let modified = std::fs::metadata(&self.paths.config_file)
            .and_then(|m| m.modified())
            .ok();
        if self
            .configured_at
            .is_some_and(|(at, seen)| seen == modified && at.elapsed() < SOURCES_EVERY)
        {
            return;
        }
        self.configured_at = Some((Instant::now(), modified));
        let profile = self.profile.as_ref().map(|(name, _)| name.clone());
        let loaded = crate::config::load(&self.paths.config_file)
            .map_err(|e| e.to_string())
            .and_then(|settings| {
                settings
                    .for_profile(profile.as_deref())
                    .map_err(|e| e.to_string())
            });
        match loaded {
            Ok(settings) => {
                if let Some((_, sources)) = &mut self.profile {
                    *sources = settings.sources.iter().map(|s| s.name.clone()).collect();
                }
                let cache = ListingCache::new(self.paths.catalog_cache_dir());
                self.configured = settings
                    .sources
                    .iter()
                    .map(|source| ConfiguredSource {
                        name: source.name.clone(),
                        enabled: source.enabled,
                        tools: cache.read(&source.name).map(|listing| {
                            listing
                                .tools
                                .iter()
                                .map(|t| format!("{}.{}", t.namespace, t.name))
                                .collect()
                        }),
                    })
                    .collect();
                self.config_problem = None;
            }
            // A profile removed from the config keeps showing what it had, with this line.
            Err(e) => {
                let first = e.lines().next().unwrap_or_default().to_string();
                self.config_problem = Some(first);
            }
        }
    }

    pub async fn detail(&mut self, run_id: &str) -> Result<Option<RunDetail>, String> {
        let store = self.store().await?;
        let read = async {
            let Some(run) = store.runs().get(run_id).await? else {
                return Ok(None);
            };
            Ok(Some(RunDetail {
                journal: store.journal().entries(run_id).await?,
                approvals: store.approvals().of_run(run_id).await?,
                audit: store.approvals().audit_log(run_id).await?,
                run,
            }))
        };
        read.await
            .map_err(|e: crate::runs::StoreError| e.to_string())
    }

    /// The work of the `u` key, to run in the background: lists every source of the config
    /// (a profile's, under `--profile`) again, as `capabilities source refresh` does, and
    /// returns a one-line summary for the status line.
    pub async fn refresh_task(
        &mut self,
    ) -> impl std::future::Future<Output = Result<String, String>> + Send + 'static {
        let paths = self.paths.clone();
        let profile = self.profile.as_ref().map(|(name, _)| name.clone());
        let store = self.store().await;
        let credentials = self.credentials.clone();
        async move {
            let store = store?;
            let settings = crate::config::load(&paths.config_file)
                .map_err(|e| e.to_string())
                .and_then(|s| s.for_profile(profile.as_deref()).map_err(|e| e.to_string()))?;
            let secrets: Arc<dyn crate::credentials::SecretLookup> = match credentials {
                Some(credentials) => credentials,
                None => Arc::new(Credentials::new(&paths.data_dir, settings.credential_store)),
            };
            let cache = ListingCache::new(paths.catalog_cache_dir());
            let results = refresh_sources(&settings, &cache, &store, secrets)
                .await
                .map_err(|e| e.to_string())?;
            Ok(summary(&results))
        }
    }

    /// Records a decision as the `dashboard` channel through the one [`decide`], bound to the
    /// call the dashboard showed; "always" writes its rule with it, or decides nothing.
    pub async fn decide(&mut self, approval: &Approval, decision: Decision) -> Result<(), String> {
        let config_file = self.paths.config_file.clone();
        let store = self.store().await?;
        let request = DecisionRequest {
            run_id: &approval.run_id,
            seen: vec![approval.seen()],
            decision,
            channel: Channel::Dashboard,
        };
        decide(&store, Some(&config_file), &request)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// The listed runs that wait for a sign-in, with the source each waits for (from the pending
/// item of its stored envelope).
async fn waiting_connections(
    store: &Store,
    runs: &[crate::runs::RunSummary],
) -> Result<Vec<WaitingConnection>, crate::runs::StoreError> {
    let mut out = Vec::new();
    for run in runs.iter().filter(|r| r.status == "awaiting_connection") {
        let Some(record) = store.runs().get(&run.run_id).await? else {
            continue;
        };
        let Ok(paused) =
            serde_json::from_value::<ExecuteEnvelope>(record.envelope.unwrap_or_default())
        else {
            continue;
        };
        let waiting = paused
            .pending
            .iter()
            .filter(|p| p.kind == PendingKind::Connection)
            .filter_map(|p| Some((p.address.as_deref()?.split('.').next()?, p)));
        for (source, pending) in waiting {
            out.push(WaitingConnection {
                run_id: run.run_id.clone(),
                source: source.to_string(),
                connection: pending.connection.clone(),
            });
        }
    }
    Ok(out)
}

/// The profile of every run listed or waiting: the listing has it, and a waiting call of a run
/// too old to be listed is looked up on its own.
async fn run_profiles(
    store: &Store,
    runs: &[crate::runs::RunSummary],
    approvals: &[Approval],
) -> Result<HashMap<String, Option<String>>, crate::runs::StoreError> {
    let mut profiles: HashMap<String, Option<String>> = runs
        .iter()
        .map(|run| (run.run_id.clone(), run.profile.clone()))
        .collect();
    for approval in approvals {
        if profiles.contains_key(&approval.run_id) {
            continue;
        }
        if let Some(run) = store.runs().get(&approval.run_id).await? {
            profiles.insert(approval.run_id.clone(), run.profile);
        }
    }
    Ok(profiles)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::runs::testing::{begin, pending};

    fn paths(dir: &Path) -> Paths {
        Paths {
            config_file: dir.join("config.toml"),
            data_dir: dir.join("data"),
        }
    }

    #[tokio::test]
    async fn runs_waiting_for_a_sign_in_name_their_source() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::write(
            &paths.config_file,
            "[sources.peer]\nurl = \"http://x/mcp\"\n",
        )
        .unwrap();
        let mut loader = Loader::new(paths.clone());
        let store = Store::open(&paths.state_database(), None).await.unwrap();
        let owner = begin(&store, "run_w", "code").await;
        let paused = serde_json::json!({
            "runId": "run_w", "status": "awaiting_connection", "calls": [],
            "pending": [
                { "id": "run_w/0", "kind": "connection", "address": "peer.echo", "summary": "s" },
                { "id": "run_w/1", "kind": "connection", "address": "peer.echo", "summary": "s", "connection": "work" },
            ],
        });
        store
            .runs()
            .finish("run_w", &owner, "awaiting_connection", &paused)
            .await
            .unwrap();
        let waiting = loader.snapshot().await.connections;
        assert_eq!(
            waiting,
            vec![
                WaitingConnection {
                    run_id: "run_w".into(),
                    source: "peer".into(),
                    connection: None,
                },
                WaitingConnection {
                    run_id: "run_w".into(),
                    source: "peer".into(),
                    connection: Some("work".into()),
                },
            ]
        );
    }

    #[tokio::test]
    async fn decisions_are_recorded_as_the_dashboard_and_always_writes_a_rule() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::write(&paths.config_file, "[sources.counter]\ncommand = \"x\"\n").unwrap();
        let mut loader = Loader::new(paths.clone());
        assert!(
            loader.snapshot().await.approvals.is_empty(),
            "an empty home is an empty dashboard"
        );
        let store = Store::open(&paths.state_database(), None).await.unwrap();
        let owner = begin(&store, "run_a", "code").await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(0, "counter.publish", "d"))
            .await
            .unwrap();
        store
            .approvals()
            .record_pending("run_a", &owner, pending(1, "counter.write", "d"))
            .await
            .unwrap();
        let waiting = loader.snapshot().await.approvals;
        assert_eq!(waiting.len(), 2);
        loader
            .decide(&waiting[0], Decision::AllowAlways)
            .await
            .unwrap();
        assert!(
            std::fs::read_to_string(&paths.config_file)
                .unwrap()
                .contains("counter.publish")
        );
        loader.decide(&waiting[1], Decision::Deny).await.unwrap();
        let decided = store.approvals().of_run("run_a").await.unwrap();
        assert!(
            decided
                .iter()
                .all(|a| a.decided_by.as_deref() == Some(Channel::Dashboard.as_str()))
        );
        let again = loader
            .decide(&waiting[0], Decision::AllowAlways)
            .await
            .unwrap_err();
        assert!(again.contains("no call waiting"), "{again}");
        let detail = loader.detail("run_a").await.unwrap().unwrap();
        assert_eq!(detail.audit.len(), 2);
        assert!(loader.detail("run_zzz").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_profile_dashboard_reads_only_that_profile_s_runs_calls_and_sources() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::write(
            &paths.config_file,
            "[sources.counter]\ncommand = \"x\"\n[sources.time]\ncommand = \"y\"\n[profiles.work]\nsources = [\"counter\"]\n",
        )
        .unwrap();
        let store = Store::open(&paths.state_database(), None).await.unwrap();
        for (run_id, profile) in [("run_work", Some("work")), ("run_home", None)] {
            let run = crate::runs::NewRun {
                run_id: run_id.into(),
                code: "code".into(),
                profile: profile.map(String::from),
                ..crate::runs::NewRun::default()
            };
            let owner = store.runs().begin(run).await.unwrap();
            store
                .approvals()
                .record_pending(run_id, &owner, pending(0, "counter.write", "d"))
                .await
                .unwrap();
        }
        store
            .source_status()
            .record("time", "ready", 2, None)
            .await
            .unwrap();
        let mut work = Loader::new(paths.clone()).with_profile(Some("work".into()));
        let snapshot = work.snapshot().await;
        let waiting: Vec<&str> = snapshot
            .approvals
            .iter()
            .map(|a| a.run_id.as_str())
            .collect();
        assert_eq!(waiting, ["run_work"]);
        let runs: Vec<&str> = snapshot.runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(runs, ["run_work"]);
        let sources: Vec<&str> = snapshot.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(sources, ["counter"]);
        let mut whole = Loader::new(paths.clone());
        let everything = whole.snapshot().await;
        assert_eq!(
            (
                everything.approvals.len(),
                everything.runs.len(),
                everything.sources.len()
            ),
            (2, 2, 2)
        );
        // A profile that leaves the config is a problem line; its runs still show, and still
        // nothing of the others.
        std::fs::write(&paths.config_file, "[sources.counter]\ncommand = \"x\"\n").unwrap();
        let mut gone = Loader::new(paths).with_profile(Some("work".into()));
        let snapshot = gone.snapshot().await;
        assert!(
            snapshot
                .problems
                .iter()
                .any(|p| p.contains("no profile `work`")),
            "{:?}",
            snapshot.problems
        );
        assert_eq!(
            (
                snapshot.approvals.len(),
                snapshot.runs.len(),
                snapshot.sources.len()
            ),
            (1, 1, 0)
        );
    }

    #[tokio::test]
    async fn a_broken_config_is_a_problem_line_and_blocks_always() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::write(&paths.config_file, "[sources.x\n").unwrap();
        let mut loader = Loader::new(paths.clone());
        let snapshot = loader.snapshot().await;
        assert_eq!(snapshot.problems.len(), 1, "{:?}", snapshot.problems);
        let store = Store::open(&paths.state_database(), None).await.unwrap();
        let owner = begin(&store, "run_a", "code").await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(0, "counter.publish", "d"))
            .await
            .unwrap();
        let waiting = loader.snapshot().await.approvals;
        let err = loader
            .decide(&waiting[0], Decision::AllowAlways)
            .await
            .unwrap_err();
        assert!(
            err.contains("was not written") && err.contains("nothing was decided"),
            "{err}"
        );
        let approval = store.approvals().get("run_a", 0).await.unwrap().unwrap();
        assert!(approval.decision.is_none(), "the call still waits");
    }

    #[tokio::test]
    async fn configured_sources_show_their_cached_tools() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::write(&paths.config_file, "[sources.time]\ncommand = \"x\"\n").unwrap();
        let mut loader = Loader::new(paths);
        let sources = loader.snapshot().await.sources;
        assert_eq!(sources.len(), 1);
        assert_eq!(
            (sources[0].status.as_str(), sources[0].tool_count),
            ("configured", None)
        );
    }

    #[tokio::test]
    async fn an_unusable_data_directory_is_a_problem_line() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the data directory should be: the store cannot be created under it.
        std::fs::write(dir.path().join("data"), "").unwrap();
        let mut loader = Loader::new(paths(dir.path()));
        let snapshot = loader.snapshot().await;
        assert!(
            snapshot.problems.iter().any(|p| p.contains("state store")),
            "{:?}",
            snapshot.problems
        );
    }
}
