//! The config after loading and validation (`*Settings`): what the rest of the program uses,
//! whole or narrowed to one profile (`--profile NAME`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Pacing;
use super::template::{Part, Template};
use crate::credentials::StoreKind;
use crate::policy::Policy;
use crate::runs::Retention;
use crate::sandbox::Limits;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Sources in name order.
    pub sources: Vec<SourceSettings>,
    pub profiles: BTreeMap<String, ProfileSettings>,
    pub policy: Policy,
    pub limits: Limits,
    /// How long and how many results too large to send are kept for `hub.read`.
    pub retention: Retention,
    /// A shared PostgreSQL state store (`[store] url`); `None` keeps the SQLite file.
    pub store_url: Option<Template>,
    /// The store new secrets go to (`[credentials] store`).
    pub credential_store: StoreKind,
    /// How many sources start at once and when an unused one stops (`[hub]`).
    pub pacing: Pacing,
    /// The profile `sources` and `policy` were narrowed to ([`Settings::for_profile`]); `None`
    /// for the whole config.
    pub profile: Option<String>,
    /// The config's sources the profile leaves out, so a script that names one can be told
    /// why it is not there; empty for the whole config.
    pub left_out: Vec<String>,
    /// How the hub serves these sources: the profile's `mode`, or `hub serve --direct`.
    pub mode: ServeMode,
    /// The folders skills are loaded from: the config directory's `skills/` (where
    /// `skill add` puts them), then each of `[skills] dirs`.
    pub skill_dirs: SkillDirs,
}

/// Where skills live.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillDirs {
    /// The config directory's `skills/`; it need not exist.
    pub home: std::path::PathBuf,
    /// `[skills] dirs`, resolved against the config file's folder.
    pub named: Vec<std::path::PathBuf>,
}

impl SkillDirs {
    /// The skills folder beside `config_file`.
    pub fn beside(config_file: &std::path::Path) -> SkillDirs {
        let dir = config_file
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        SkillDirs {
            home: dir.join("skills"),
            named: Vec::new(),
        }
    }
}

impl Settings {
    pub fn source(&self, name: &str) -> Option<&SourceSettings> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// An empty config: no sources, default policy and limits.
    pub fn empty() -> Self {
        Settings {
            sources: Vec::new(),
            profiles: BTreeMap::new(),
            policy: Policy::default(),
            limits: Limits::default(),
            retention: Retention::default(),
            store_url: None,
            credential_store: StoreKind::Keychain,
            pacing: hub_pacing(None),
            profile: None,
            left_out: Vec::new(),
            mode: ServeMode::Code,
            skill_dirs: SkillDirs::default(),
        }
    }

    /// These settings as `profile` sees them: only its sources, and its policy (the config's
    /// defaults with the profile's own rules); the whole config for `None`. One execution uses
    /// exactly one profile, so every verb that takes `--profile` narrows through here.
    pub fn for_profile(mut self, profile: Option<&str>) -> Result<Settings, UnknownProfile> {
        let Some(name) = profile else {
            return Ok(self);
        };
        let Some(chosen) = self.profiles.get(name).cloned() else {
            return Err(UnknownProfile {
                name: name.to_string(),
                known: self.profiles.keys().cloned().collect(),
            });
        };
        let (kept, left_out) = std::mem::take(&mut self.sources)
            .into_iter()
            .partition(|s| chosen.sources.contains(&s.name));
        self.sources = kept;
        self.left_out = left_out
            .into_iter()
            .map(|s: SourceSettings| s.name)
            .collect();
        self.policy = chosen.policy;
        self.mode = chosen.mode;
        self.profile = Some(name.to_string());
        Ok(self)
    }

    /// The line that tells a reader of search results (a person or a model) which part of the
    /// config they are looking at, e.g. `profile: work (sources: github, everything)`; `None`
    /// for the whole config, where there is nothing to say.
    pub fn profile_header(&self) -> Option<String> {
        self.profile_header_showing(|_| true)
    }

    /// [`profile_header`](Self::profile_header) naming only the sources `shown` (to a client
    /// whose token narrows what it sees).
    pub fn profile_header_showing(&self, shown: impl Fn(&str) -> bool) -> Option<String> {
        let name = self.profile.as_deref()?;
        let sources: Vec<&str> = self
            .sources
            .iter()
            .map(|s| s.name.as_str())
            .filter(|name| shown(name))
            .collect();
        Some(if sources.is_empty() {
            format!("profile: {name} (no sources)")
        } else {
            format!("profile: {name} (sources: {})", sources.join(", "))
        })
    }
}

/// A `--profile` the config does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", unknown_profile(name, known))]
pub struct UnknownProfile {
    pub name: String,
    /// The profiles the config defines, in name order.
    pub known: Vec<String>,
}

fn unknown_profile(name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!(
            "there is no profile `{name}`: the config defines none; add one, e.g. [profiles.{name}] sources = [\"…\"]"
        )
    } else {
        format!(
            "there is no profile `{name}`; profiles in the config: {}",
            known.join(", ")
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
    },
    /// No MCP server: an HTTP API whose OpenAPI document (`spec`, a path or a URL) says what
    /// its operations are; each operation is a tool.
    OpenApi {
        spec: String,
        /// Overrides the document's `servers`.
        base_url: Option<String>,
    },
}

impl Transport {
    /// A short human description: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url } => url.clone(),
            Transport::OpenApi { spec, base_url } => match base_url {
                Some(base) => format!("openapi {spec} (at {base})"),
                None => format!("openapi {spec}"),
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct SourceSettings {
    pub name: String,
    pub transport: Transport,
    /// At least one; exactly one has `is_default`. Sorted with the default first.
    pub connections: Vec<ConnectionSettings>,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub enabled: bool,
    /// The environment variables the config's sources (and its store's URL) read credentials
    /// from (`${env:VAR}`), all of them: a stdio server inherits the hub's environment, so its process gets none of
    /// these unless its own `env` names them, and all are blanked from what it sends. Kept on
    /// each source, as a command often connects only some of them.
    pub env_credentials: Arc<[String]>,
}

/// Variables every process needs and that hold no credential: a config may build on them
/// (`PATH = "${env:PATH}:/opt/bin"`), and keeping them from other servers would break those.
const PROCESS_BASICS: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "PWD",
];

/// Whether `var` is one of a process's basics (`PATH`, `HOME`, `LC_*`, `XDG_*`, …), which a
/// config may read with `${env:…}` and which is no credential.
pub fn is_process_basic(var: &str) -> bool {
    PROCESS_BASICS.contains(&var) || var.starts_with("LC_") || var.starts_with("XDG_")
}

/// The environment variables any connection of `sources` reads a credential from, each once
/// (see [`SourceSettings::env_credentials`]); a process's basics are none.
pub fn env_credentials(sources: &[SourceSettings]) -> Arc<[String]> {
    let mut names: Vec<String> = sources
        .iter()
        .flat_map(|source| &source.connections)
        .flat_map(|connection| connection.templates().flat_map(Template::parts))
        .filter_map(|part| match part {
            Part::Env(var) if !is_process_basic(var) => Some(var.clone()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names.into()
}

impl SourceSettings {
    /// Whether the config names this source's connections (`[sources.NAME.connections.…]`),
    /// rather than giving it the one implicit connection.
    pub fn has_named_connections(&self) -> bool {
        !(self.connections.len() == 1 && self.connections[0].name == IMPLICIT_CONNECTION)
    }

    pub fn default_connection(&self) -> &ConnectionSettings {
        self.connections
            .iter()
            .find(|c| c.is_default)
            .unwrap_or(&self.connections[0])
    }

    pub fn connection(&self, name: &str) -> Option<&ConnectionSettings> {
        self.connections.iter().find(|c| c.name == name)
    }
}

/// One credentialed instance of a source: the source's env/headers/auth with its own laid over
/// them.
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    pub name: String,
    pub is_default: bool,
    pub env: BTreeMap<String, Template>,
    pub headers: BTreeMap<String, Template>,
    /// An OpenAPI source's credentials by security scheme name.
    pub auth: BTreeMap<String, Template>,
    /// The OAuth client a Streamable HTTP connection signs in as, when the config names one.
    pub oauth: Option<OAuthClientSettings>,
}

impl ConnectionSettings {
    /// Every value of this connection that can hold a reference (`${secret:…}`, `${env:…}`):
    /// its environment, headers, credentials and OAuth client secret. What is a secret of the
    /// connection is found here, so a new kind of value is not missed by the redaction.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        self.env
            .values()
            .chain(self.headers.values())
            .chain(self.auth.values())
            .chain(
                self.oauth
                    .as_ref()
                    .and_then(OAuthClientSettings::client_secret),
            )
    }
}

/// The OAuth client a connection signs in as, when the config names one.
#[derive(Debug, Clone)]
pub enum OAuthClientSettings {
    /// An OAuth app registered for the user: its ID, and a confidential client's secret (a
    /// reference).
    Registered {
        client_id: String,
        client_secret: Option<Template>,
    },
    /// A client ID metadata document at an HTTPS URL the user hosts: the client's ID where the
    /// authorization server supports such documents; elsewhere the client registers itself.
    MetadataDocument { url: String },
}

impl OAuthClientSettings {
    /// The registered app's ID.
    pub fn client_id(&self) -> Option<&str> {
        match self {
            OAuthClientSettings::Registered { client_id, .. } => Some(client_id),
            OAuthClientSettings::MetadataDocument { .. } => None,
        }
    }

    /// The registered app's secret, a reference.
    pub fn client_secret(&self) -> Option<&Template> {
        match self {
            OAuthClientSettings::Registered { client_secret, .. } => client_secret.as_ref(),
            OAuthClientSettings::MetadataDocument { .. } => None,
        }
    }
}

/// The name of the connection a source gets when the config declares none.
pub const IMPLICIT_CONNECTION: &str = "default";

#[derive(Debug, Clone, Default)]
pub struct ProfileSettings {
    pub sources: Vec<String>,
    pub policy: Policy,
    pub mode: ServeMode,
}

/// What the hub serves an MCP client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServeMode {
    /// Three tools (search, describe, execute): a fixed cost whatever the sources.
    #[default]
    Code,
    /// Every tool of the sources as its own MCP tool, for clients and models that do better
    /// that way.
    Direct,
}

impl std::str::FromStr for ServeMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "code" => Ok(ServeMode::Code),
            "direct" => Ok(ServeMode::Direct),
            other => Err(format!("unknown mode `{other}`")),
        }
    }
}

/// How long to wait for `sources` to settle (ready or failed): the longest connect timeout, plus
/// a second for the failure to be explained.
pub fn settle_time(sources: &[SourceSettings]) -> Duration {
    sources
        .iter()
        .map(|s| s.connect_timeout)
        .max()
        .unwrap_or(Duration::ZERO)
        + Duration::from_secs(1)
}

/// A source nobody called for this long is stopped by a running hub.
pub const DEFAULT_IDLE_STOP: Duration = Duration::from_secs(600);

/// The hub's pacing: `max_starting` when the config sets it (else one per core), and the
/// idle stop of [`DEFAULT_IDLE_STOP`].
pub fn hub_pacing(max_starting: Option<usize>) -> Pacing {
    let by_cores = Pacing::by_cores();
    Pacing {
        max_starting: max_starting.unwrap_or(by_cores.max_starting),
        idle_stop: Some(DEFAULT_IDLE_STOP),
    }
}

pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        let path = std::path::Path::new("config.toml");
        let text = "[sources.a]\ncommand = \"x\"\n[sources.b]\ncommand = \"y\"\n[policy]\ndefault = \"deny\"\n[[policy.rules]]\nmatch = \"a.*\"\naction = \"allow\"\n[profiles.work]\nsources = [\"b\"]\n[[profiles.work.rules]]\nmatch = \"b.*\"\naction = \"ask\"\n";
        crate::config::load::parse(path, text).unwrap()
    }

    #[test]
    fn every_source_knows_the_credentials_any_reads_from_the_environment_but_not_basics() {
        let text = "[store]\nurl = \"${env:PG_URL}\"\n[sources.a]\ncommand = \"x\"\nenv = { T = \"${env:A_TOKEN}\", PATH = \"${env:PATH}:/opt\", L = \"${env:LC_ALL}\" }\n[sources.b]\nurl = \"http://h/mcp\"\nheaders = { Authorization = \"Bearer ${env:B_TOKEN}\" }\n[sources.c]\ncommand = \"z\"\n";
        let settings = crate::config::load::parse(std::path::Path::new("c.toml"), text).unwrap();
        for source in &settings.sources {
            assert_eq!(
                &*source.env_credentials,
                [
                    "A_TOKEN".to_string(),
                    "B_TOKEN".to_string(),
                    "PG_URL".to_string()
                ],
                "{}",
                source.name
            );
        }
    }

    #[test]
    fn a_profile_keeps_only_its_sources_and_its_rules_over_the_defaults() {
        let work = settings().for_profile(Some("work")).unwrap();
        let names: Vec<&str> = work.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert_eq!(work.policy.rules.len(), 1);
        assert_eq!(work.policy.rules[0].pattern, "b.*");
        assert_eq!(work.policy.default, crate::policy::Action::Deny);
        assert_eq!(work.profile.as_deref(), Some("work"));
        assert_eq!(work.left_out, ["a"]);
        assert_eq!(
            work.profile_header().as_deref(),
            Some("profile: work (sources: b)")
        );
        let whole = settings().for_profile(None).unwrap();
        assert_eq!(whole.sources.len(), 2);
        assert_eq!(whole.profile_header(), None);
    }

    #[test]
    fn an_unknown_profile_names_the_known_ones() {
        let err = settings().for_profile(Some("home")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "there is no profile `home`; profiles in the config: work"
        );
        let none = Settings::empty().for_profile(Some("home")).unwrap_err();
        assert!(
            none.to_string().contains("the config defines none"),
            "{none}"
        );
    }
}
