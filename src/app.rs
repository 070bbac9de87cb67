//! The application context: what one process of `capabilities` knows — where its config and
//! data live and its credential stores — built once by `commands::run` and passed to every verb
//! (no process-wide statics), and the [`Engine`] (state store, sources, live catalogue, live
//! policy) that `exec` and `hub serve` start the same way.

use std::sync::{Arc, OnceLock};

use anyhow::bail;

use crate::catalog::cache::ListingCache;
use crate::catalog::live::LiveCatalog;
use crate::config::{LivePolicy, Paths, Settings};
use crate::credentials::{Credentials, SecretLookup, StoreKind};
use crate::execute::Executor;
use crate::runs::Store;
use crate::sources::Sources;

/// One process's context.
pub struct App {
    pub paths: Paths,
    /// Opened on first need: most verbs never touch a secret.
    credentials: OnceLock<Arc<Credentials>>,
}

impl App {
    pub fn new(paths: Paths) -> App {
        App {
            paths,
            credentials: OnceLock::new(),
        }
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

    /// The state store, its key kept in the user's credential store where one works.
    pub async fn store(&self) -> anyhow::Result<Store> {
        Ok(Store::open(&self.paths.state_database(), Some(self.credentials())).await?)
    }

    /// The state store if runs were ever recorded here: commands that only read or decide on
    /// runs say there are none rather than create an empty store.
    pub async fn existing_store(&self) -> anyhow::Result<Option<Store>> {
        if !self.paths.state_database().exists() {
            return Ok(None);
        }
        Ok(Some(self.store().await?))
    }

    /// Starts what runs scripts: the store, `settings`' sources (connecting in the background,
    /// only `profile`'s with one), the live catalogue that follows them, and the policy — the
    /// profile's — kept in step with the config file.
    pub async fn engine(
        &self,
        settings: Settings,
        profile: Option<&str>,
    ) -> anyhow::Result<Engine> {
        let settings = match profile {
            Some(profile) => for_profile(settings, profile)?,
            None => settings,
        };
        let settings = Arc::new(settings);
        let store = self.store().await?;
        let sources = Sources::start(settings.sources.clone(), self.secrets());
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
            profile.map(str::to_string),
            settings.policy.clone(),
        ));
        Ok(Engine {
            settings,
            store,
            sources,
            catalog,
            policy,
            profile: profile.map(str::to_string),
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

/// The settings with only the profile's sources, and the profile's policy.
fn for_profile(mut settings: Settings, name: &str) -> anyhow::Result<Settings> {
    let Some(profile) = settings.profiles.get(name).cloned() else {
        let known: Vec<&str> = settings.profiles.keys().map(String::as_str).collect();
        if known.is_empty() {
            bail!(
                "there is no profile `{name}`: the config defines none; add one, e.g. [profiles.{name}] sources = [\"…\"]"
            );
        }
        bail!(
            "there is no profile `{name}`; profiles in the config: {}",
            known.join(", ")
        );
    };
    settings
        .sources
        .retain(|s| profile.sources.contains(&s.name));
    settings.policy = profile.policy;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_keeps_only_its_sources_and_unknown_ones_are_named() {
        let path = std::path::Path::new("config.toml");
        let text = "[sources.a]\ncommand = \"x\"\n[sources.b]\ncommand = \"y\"\n[profiles.work]\nsources = [\"b\"]\n";
        let settings = crate::config::load::parse(path, text).unwrap();
        let work = for_profile(settings.clone(), "work").unwrap();
        assert_eq!(
            work.sources
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["b"]
        );
        let err = for_profile(settings, "home").unwrap_err().to_string();
        assert_eq!(
            err,
            "there is no profile `home`; profiles in the config: work"
        );
    }
}
