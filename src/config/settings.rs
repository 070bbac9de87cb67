//! The config after loading and validation (`*Settings`): what the rest of the program uses.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::template::Template;
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
    /// The store new secrets go to (`[credentials] store`).
    pub credential_store: StoreKind,
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
            credential_store: StoreKind::Keychain,
        }
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
}

impl SourceSettings {
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

/// One credentialed instance of a source: the source's env/headers with its own laid over them.
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    pub name: String,
    pub is_default: bool,
    pub env: BTreeMap<String, Template>,
    pub headers: BTreeMap<String, Template>,
}

/// The name of the connection a source gets when the config declares none.
pub const IMPLICIT_CONNECTION: &str = "default";

#[derive(Debug, Clone, Default)]
pub struct ProfileSettings {
    pub sources: Vec<String>,
    pub policy: Policy,
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

pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
