//! The application context: what one process of `capabilities` knows — where its config and
//! data live and its credential stores — built once by `commands::run` and passed to every verb
//! (no process-wide statics), and the [`Engine`] (state store, sources, live catalogue, live
//! policy) that `exec` and `hub serve` start the same way.

use std::sync::{Arc, OnceLock};

use crate::catalog::cache::ListingCache;
use crate::catalog::live::LiveCatalog;
use crate::config::template::Part;
use crate::config::{LivePolicy, Paths, Settings};
use crate::credentials::{Credentials, SecretLookup, StoreKind};
use crate::execute::Executor;
use crate::model::Reader;
use crate::runs::Store;
use crate::sources::Sources;

/// One process's context.
pub struct App {
    pub paths: Paths,
    /// Opened on first need: most verbs never touch a secret.
    credentials: OnceLock<Arc<Credentials>>,
    /// Who reads the hints this process prints: a person at the command line, with the
    /// `--config FILE` they gave carried into each suggested command.
    pub reader: Reader,
    /// Colour on stderr and in the dashboard (`--color`, `NO_COLOR`, a terminal).
    pub color: bool,
    /// Long waits show a progress line on stderr: only when it is a terminal.
    pub progress: bool,
}

impl App {
    pub fn new(paths: Paths) -> App {
        App {
            paths,
            credentials: OnceLock::new(),
            reader: Reader::cli(None),
            color: false,
            progress: false,
        }
    }

    /// How this process speaks to the person: the reader of its hints, colour and progress.
    pub fn for_person(mut self, reader: Reader, color: bool, progress: bool) -> App {
        self.reader = reader;
        self.color = color;
        self.progress = progress;
        self
    }

    /// `capabilities [--config FILE] ARGS`, a command to suggest on the config in use.
    pub fn command(&self, args: &str) -> String {
        self.reader.command(args)
    }

    /// The credential stores: the keychain and the encrypted file of the data directory, new
    /// secrets going where `[credentials] store` says. One per process, so every connection
    /// shares one cache of the values read.
    pub fn credentials(&self) -> Arc<Credentials> {
        self.credentials
            .get_or_init(|| {
                // A broken config is reported by the verb that loads it; until then, the default.
                let store = crate::config::load(&self.paths.config_file)
                    .map(|s| s.credential_store)
                    .unwrap_or(StoreKind::Keychain);
                Arc::new(Credentials::new(&self.paths.data_dir, store))
            })
            .clone()
    }

    /// Where `${secret:NAME}` values come from.
    pub fn secrets(&self) -> Arc<dyn SecretLookup> {
        self.credentials()
    }

    /// The config, loaded and validated; its errors name the file, line and fix.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        Ok(crate::config::load(&self.paths.config_file)?)
    }

    /// The config as a verb's `--profile` sees it: only the profile's sources, under its
    /// policy; the whole config without one. An unknown profile is an error naming the known.
    pub fn settings_for(&self, profile: Option<&str>) -> anyhow::Result<Settings> {
        Ok(self.settings()?.for_profile(profile)?)
    }

    /// The state store: the shared PostgreSQL store when `CAPABILITIES_STORE_URL` or
    /// `[store] url` names one, else the SQLite file in the data directory; its key kept in
    /// the user's credential store where one works.
    pub async fn store(&self) -> anyhow::Result<Store> {
        match self.store_url()? {
            Some(url) => {
                Ok(
                    Store::open_shared(&url, &self.paths.data_dir, Some(self.credentials()))
                        .await?,
                )
            }
            None => Ok(Store::open(&self.paths.state_database(), Some(self.credentials())).await?),
        }
    }

    /// The state store if runs were ever recorded here: commands that only read or decide on
    /// runs say there are none rather than create an empty store. A shared store always is.
    pub async fn existing_store(&self) -> anyhow::Result<Option<Store>> {
        if self.store_url()?.is_none() && !self.paths.state_database().exists() {
            return Ok(None);
        }
        Ok(Some(self.store().await?))
    }

    /// The shared store's URL, its references resolved; `None` for the SQLite file. The
    /// environment wins over the config, so one replica can be pointed elsewhere.
    pub fn store_url(&self) -> anyhow::Result<Option<String>> {
        if let Ok(url) = std::env::var(crate::env_vars::CAPABILITIES_STORE_URL)
            && !url.trim().is_empty()
        {
            return Ok(Some(url));
        }
        if !self.paths.config_file.exists() {
            return Ok(None);
        }
        let Some(template) = self.settings()?.store_url else {
            return Ok(None);
        };
        let secrets = self.secrets();
        let url = template.resolve(|part| match part {
            Part::Literal(text) => Ok(text.clone()),
            Part::Env(var) => std::env::var(var).map_err(|_| {
                anyhow::anyhow!(
                    "`[store] url` refers to the environment variable `{var}`, which is not set"
                )
            }),
            Part::Secret(name) => secrets
                .secret(name)
                .map_err(|e| anyhow::anyhow!("`[store] url` refers to the secret `{name}`: {e}")),
        })?;
        Ok(Some(url))
    }

    /// Starts what runs scripts on `settings` (narrowed to a profile by
    /// [`settings_for`](Self::settings_for), or whole): the store, their sources (none running
    /// yet: each starts when it is called or its listing is needed, a few at a time, see
    /// [`LiveCatalog::start_unlisted`] and [`LiveCatalog::prepare`]), the live catalogue that
    /// follows them, and their policy, kept in step with the config file.
    pub async fn engine(&self, settings: Settings) -> anyhow::Result<Engine> {
        let settings = Arc::new(settings);
        let profile = settings.profile.clone();
        let store = self.store().await?;
        let sources = Sources::lazy(settings.sources.clone(), self.secrets(), settings.pacing);
        let catalog = LiveCatalog::start(
            (*settings).clone(),
            ListingCache::new(self.paths.catalog_cache_dir()),
            sources.clone(),
        );
        catalog.record_versions(store.clone()).await;
        // Rules written while it runs (`policy set`, "always allow" from any channel, an edit
        // by hand) apply to its next call.
        let policy = Arc::new(LivePolicy::watching(
            self.paths.config_file.clone(),
            profile.clone(),
            settings.policy.clone(),
        ));
        Ok(Engine {
            settings,
            store,
            sources,
            catalog,
            policy,
            profile,
        })
    }
}

/// What `exec` and `hub serve` run on.
pub struct Engine {
    /// The settings, narrowed to the profile's sources and policy.
    pub settings: Arc<Settings>,
    pub store: Store,
    pub sources: Arc<Sources>,
    pub catalog: Arc<LiveCatalog>,
    pub policy: Arc<LivePolicy>,
    pub profile: Option<String>,
}

impl Engine {
    /// Runs scripts on this engine, recording the profile with every run.
    pub fn executor(&self) -> Executor {
        Executor::new(
            self.catalog.clone(),
            self.settings.clone(),
            self.store.clone(),
        )
        .with_policy(self.policy.clone())
        .with_profile(self.profile.clone())
    }
}
