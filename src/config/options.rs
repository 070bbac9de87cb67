//! The config file as written (`*Options`): the serde shape of `config.toml`. Every table denies
//! unknown keys so a typo is an error that names the key and the line, not a silent no-op.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigOptions {
    #[serde(default)]
    pub sources: BTreeMap<String, SourceOptions>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileOptions>,
    #[serde(default)]
    pub policy: PolicyOptions,
    #[serde(default)]
    pub limits: LimitsOptions,
    #[serde(default)]
    pub credentials: CredentialsOptions,
    #[serde(default)]
    pub freshness: FreshnessOptions,
    #[serde(default)]
    pub store: StoreOptions,
    #[serde(default)]
    pub hub: HubOptions,
    #[serde(default)]
    pub skills: SkillsOptions,
}

/// Where skills are found besides the config directory's `skills/`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsOptions {
    /// Folders of skill folders: absolute, or relative to the config file's folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<Spanned<String>>,
}

/// How a long-running hub (and `exec`) paces its sources.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HubOptions {
    /// How many sources may be starting at the same time (default: one per core, 2 to 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_starting: Option<Spanned<u64>>,
    /// Seconds without a call after which a running source is stopped (default 600; 0 never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_stop_secs: Option<Spanned<u64>>,
}

/// Where runs, approvals and tokens are kept.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StoreOptions {
    /// A shared PostgreSQL store for several hubs (`postgres://USER:${secret:NAME}@HOST/DB`);
    /// without it, the SQLite file in the data directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Spanned<String>>,
}

/// What happens when a tool's definition changes after a person trusted it.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FreshnessOptions {
    /// Which changed tools ask before each call until the change is confirmed: `writes` (the
    /// default), `all` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Spanned<String>>,
}

/// One upstream: exactly one of `command` (an MCP server over stdio), `url` (an MCP server over
/// Streamable HTTP) or `openapi` (an HTTP API described by an OpenAPI document).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, Spanned<String>>,
    /// The OpenAPI 3.x document (a file path or an http(s) URL) whose operations become tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openapi: Option<Spanned<String>>,
    /// Where an OpenAPI source's requests go, instead of the document's first `servers` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<Spanned<String>>,
    /// An OpenAPI source's credentials, by the name of the document's security scheme
    /// (`components.securitySchemes`): an API key, a bearer token, or `user:password` for basic.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub auth: BTreeMap<String, Spanned<String>>,
    /// A Streamable HTTP server's OAuth client, registered with its authorization server
    /// beforehand, instead of dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<Spanned<OAuthOptions>>,
    /// Seconds to wait for the server to start and answer its first listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_secs: Option<Spanned<u64>>,
    /// Seconds to wait for any one request (a listing or a tool call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_secs: Option<Spanned<u64>>,
    /// Set to false to keep a source in the config without starting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connections: BTreeMap<String, ConnectionOptions>,
}

/// One credentialed instance of a source. Its `env`, `headers` and `auth` are laid over the
/// source's.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionOptions {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Spanned<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, Spanned<String>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub auth: BTreeMap<String, Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<Spanned<OAuthOptions>>,
}

/// The OAuth client a connection signs in as, as written in the config: an OAuth app registered
/// for the user (`client_id`), or a client ID metadata document the user hosts
/// (`client_metadata_url`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The HTTPS URL of a client ID metadata document, used as the client's ID where the
    /// authorization server supports such documents (dynamic registration elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// A confidential client's secret; `${secret:NAME}` keeps it in the credential store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Spanned<String>>,
}

/// A named subset of sources plus policy rules of its own (`hub serve --profile NAME`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileOptions {
    #[serde(default)]
    pub sources: Vec<Spanned<String>>,
    #[serde(default)]
    pub rules: Vec<RuleOptions>,
    /// How the hub serves the profile: `code` (search, describe, execute; the default) or
    /// `direct` (each tool as its own MCP tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyOptions {
    /// Action for tools the upstream marks read-only. Default: allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<Spanned<String>>,
    /// Action for tools the upstream marks destructive. Default: ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<Spanned<String>>,
    /// Action for every other tool. Default: ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Spanned<String>>,
    /// Whether a client signed in with a bearer token may decide its own calls that ask, over
    /// elicitation (one call or one run, never a rule). Default: true; false leaves every such
    /// decision to a person at the hub's machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_clients_approve: Option<Spanned<bool>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleOptions>,
}

/// `{ match = "github.create*", action = "ask", connection = "work" }`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleOptions {
    #[serde(rename = "match")]
    pub pattern: Spanned<String>,
    pub action: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<Spanned<String>>,
    /// The version of the tool's definition the rule was granted for (written by "always").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Spanned<String>>,
}

/// Run limits. Each may only lower the built-in default.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_secs: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_kib: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_bytes: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_bytes: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_value_bytes: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_bytes: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_results: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_kib: Option<Spanned<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_ttl_secs: Option<Spanned<u64>>,
}

/// Where `capabilities credential set` keeps secrets unless told otherwise.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialsOptions {
    /// `keychain` (the OS keychain, the default) or `file` (an encrypted file, for machines
    /// without a keychain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<Spanned<String>>,
}
