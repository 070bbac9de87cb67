//! Reading `config.toml`: parse (toml, with spans), validate, and turn the options into settings.
//! Every problem becomes a `ConfigError` that names the file, the line and column, and the fix.
//! Sources and connections are read here; the policy and its rules in `policy`, the limits,
//! pacing, retention and credential store in `limits`.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

use super::options::{
    ConfigOptions, ConnectionOptions, OAuthOptions, SkillsOptions, SourceOptions,
};
use super::settings::*;
use super::template::{Part, Template};
use crate::model::address::namespace_problem;
use crate::policy::Policy;

mod limits;
mod policy;

/// A problem in a config file, with where it is and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    /// 1-based; 0 when the problem has no single place (e.g. an unreadable file).
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
    /// The offending line of the file, for display.
    pub excerpt: Option<String>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )?;
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)?;
        }
        if let Some(excerpt) = &self.excerpt {
            write!(f, "\n  | {excerpt}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Loads the config at `path`. A missing file is an empty config (no sources), so commands work
/// before `capabilities init`; callers that need sources say how to add one.
pub fn load(path: &Path) -> Result<Settings, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut settings = Settings::empty();
            settings.skill_dirs = SkillDirs::beside(path);
            return Ok(settings);
        }
        Err(e) => {
            return Err(ConfigError {
                file: path.to_path_buf(),
                line: 0,
                column: 0,
                message: format!("cannot read the config: {e}"),
                help: Some(
                    "check the file's permissions, or point --config at another file".into(),
                ),
                excerpt: None,
            });
        }
    };
    parse(path, &text)
}

/// Parses and validates config text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Settings, ConfigError> {
    let ctx = Ctx { path, text };
    let options: ConfigOptions = toml::from_str(text).map_err(|e| {
        let (message, help) = explain_toml_error(e.message());
        ctx.error(e.span(), message, help)
    })?;
    ctx.settings(options)
}

/// toml/serde messages are good but terse; add the fix for the common ones.
fn explain_toml_error(message: &str) -> (String, Option<String>) {
    let message = message.trim().to_string();
    let help = if message.starts_with("unknown field") {
        Some("remove the key or fix its spelling; `capabilities init --reference` prints every key with a comment".to_string())
    } else if message.starts_with("invalid type") {
        Some("check the value's type against config-examples/reference.toml".to_string())
    } else if message.starts_with("missing field") {
        Some("add the missing key".to_string())
    } else {
        None
    };
    (message, help)
}

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn error(
        &self,
        span: Option<Range<usize>>,
        message: impl Into<String>,
        help: Option<String>,
    ) -> ConfigError {
        let (line, column, excerpt) = match span {
            Some(span) => {
                let start = span.start.min(self.text.len());
                let before = &self.text[..start];
                let line = before.matches('\n').count() + 1;
                let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
                let column = self.text[line_start..start].chars().count() + 1;
                let line_end = self.text[line_start..]
                    .find('\n')
                    .map(|i| line_start + i)
                    .unwrap_or(self.text.len());
                (
                    line,
                    column,
                    Some(self.text[line_start..line_end].trim_end().to_string()),
                )
            }
            None => (0, 0, None),
        };
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            column,
            message: message.into(),
            help,
            excerpt,
        }
    }

    fn at<T>(
        &self,
        spanned: &Spanned<T>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> ConfigError {
        self.error(Some(spanned.span()), message, Some(help.into()))
    }

    /// The position of a table header such as `[sources.NAME]` or a dotted key, for errors about
    /// a whole source; falls back to the first mention of the name.
    fn span_of_table(&self, prefix: &str, name: &str) -> Option<Range<usize>> {
        let candidates = [
            format!("[{prefix}.{name}]"),
            format!("[{prefix}.{name}."),
            format!("{prefix}.{name}"),
            name.to_string(),
        ];
        candidates
            .iter()
            .find_map(|needle| self.text.find(needle.as_str()).map(|i| i..i + needle.len()))
    }

    fn settings(&self, options: ConfigOptions) -> Result<Settings, ConfigError> {
        let mut sources = Vec::new();
        for (name, source) in &options.sources {
            sources.push(self.source(name, source)?);
        }
        let policy = self.policy(&options.policy, &options.freshness, &sources)?;
        let mut profiles = BTreeMap::new();
        for (name, profile) in &options.profiles {
            let mut names = Vec::new();
            for source in &profile.sources {
                if !sources.iter().any(|s| s.name == *source.get_ref()) {
                    return Err(self.at(
                        source,
                        format!(
                            "profile `{name}` names source `{}`, which is not in [sources]",
                            source.get_ref()
                        ),
                        known_names_help("sources", sources.iter().map(|s| s.name.as_str())),
                    ));
                }
                names.push(source.get_ref().clone());
            }
            let rules = self.rules(&profile.rules, &sources)?;
            let mode = match &profile.mode {
                None => ServeMode::Code,
                Some(mode) => mode.get_ref().parse().map_err(|e: String| {
                    self.at(
                        mode,
                        format!("profiles.{name}.mode: {e}"),
                        "write `mode = \"code\"` (search, describe and execute) or `mode = \"direct\"` (each tool as its own MCP tool)",
                    )
                })?,
            };
            profiles.insert(
                name.clone(),
                ProfileSettings {
                    mode,
                    sources: names,
                    policy: Policy {
                        rules,
                        ..policy.clone()
                    },
                },
            );
        }
        let limits = self.limits(&options.limits)?;
        let retention = self.retention(&options.limits)?;
        let store_url = match &options.store.url {
            None => None,
            Some(url) => {
                let mut one = BTreeMap::new();
                one.insert("store.url".to_string(), url.clone());
                self.templates(&one)?.remove("store.url")
            }
        };
        // The store's URL carries its password: a variable it is read from is withheld from
        // servers like a source's credential.
        let mut withheld: Vec<String> = env_credentials(&sources).to_vec();
        withheld.extend(
            store_url
                .iter()
                .flat_map(Template::parts)
                .filter_map(|part| match part {
                    Part::Env(var) if !is_process_basic(var) => Some(var.clone()),
                    _ => None,
                }),
        );
        withheld.sort();
        withheld.dedup();
        let withheld: Arc<[String]> = withheld.into();
        for source in &mut sources {
            source.env_credentials = withheld.clone();
        }
        let credential_store = self.credential_store(&options.credentials)?;
        let pacing = self.pacing(&options.hub)?;
        Ok(Settings {
            sources,
            profiles,
            policy,
            limits,
            retention,
            store_url,
            credential_store,
            pacing,
            profile: None,
            left_out: Vec::new(),
            mode: ServeMode::Code,
            skill_dirs: self.skill_dirs(&options.skills)?,
        })
    }

    /// The config directory's `skills/`, then `[skills] dirs` against the config's folder.
    fn skill_dirs(&self, options: &SkillsOptions) -> Result<SkillDirs, ConfigError> {
        let mut dirs = SkillDirs::beside(self.path);
        let base = self.path.parent().unwrap_or(Path::new(""));
        for dir in &options.dirs {
            let text = dir.get_ref().trim();
            if text.is_empty() {
                return Err(self.at(
                    dir,
                    "skills.dirs: an entry is empty".to_string(),
                    "name a folder of skill folders, e.g. dirs = [\"/home/me/team-skills\"]",
                ));
            }
            dirs.named.push(base.join(text));
        }
        Ok(dirs)
    }

    fn source(&self, name: &str, source: &SourceOptions) -> Result<SourceSettings, ConfigError> {
        let here = || self.span_of_table("sources", name);
        if let Some(problem) = namespace_problem(name) {
            return Err(self.error(here(), problem, Some("rename the [sources.…] table".into())));
        }
        if let Some(openapi) = &source.openapi {
            return self.openapi_source(name, source, openapi);
        }
        if let Some((key, value)) = source.auth.iter().next() {
            return Err(self.at(value, format!("auth `{key}` on source `{name}`, which is an MCP server: `auth` only goes with `openapi`"), "pass an MCP server's credentials with `headers` (HTTP) or `env` (stdio)"));
        }
        if let Some(oauth) = &source.oauth
            && source.url.is_none()
        {
            return Err(self.at(
                oauth,
                format!("source `{name}` has `oauth`, which only goes with `url` or `openapi`"),
                "only a Streamable HTTP server or an OpenAPI source signs in with OAuth; pass a stdio server's credentials with `env`",
            ));
        }
        if let Some(base_url) = &source.base_url {
            return Err(self.at(
                base_url,
                format!("source `{name}` has `base_url`, which only goes with `openapi`"),
                "remove it; an MCP server's address is its `url`",
            ));
        }
        let transport = match (&source.command, &source.url) {
            (Some(_), Some(_)) => {
                return Err(self.error(
                    here(),
                    format!("source `{name}` has both `command` and `url`"),
                    Some("keep `command` for a server started as a child process (stdio), or `url` for one reached over Streamable HTTP".into()),
                ));
            }
            (None, None) => {
                return Err(self.error(
                    here(),
                    format!("source `{name}` needs `command` (a server started over stdio), `url` (Streamable HTTP) or `openapi` (an HTTP API's OpenAPI document)"),
                    Some(format!("e.g. `command = \"npx\"` with `args = [\"-y\", \"@modelcontextprotocol/server-everything\"]`, `url = \"http://127.0.0.1:3001/mcp\"` or `openapi = \"https://api.example.com/openapi.json\"`; or run `capabilities source add {name} -- CMD ARGS…`")),
                ));
            }
            (Some(command), None) => {
                if let Some((key, value)) = source.headers.iter().next() {
                    return Err(self.at(value, format!("header `{key}` on source `{name}`, which is started over stdio: headers only go with `url`"), "use `env` to pass values to a stdio server"));
                }
                if command.trim().is_empty() {
                    return Err(self.error(
                        here(),
                        format!("source `{name}` has an empty `command`"),
                        Some("name the program to start, e.g. `npx` or `uvx`".into()),
                    ));
                }
                Transport::Stdio {
                    command: command.clone(),
                    args: source.args.clone(),
                    cwd: source.cwd.as_ref().map(PathBuf::from),
                }
            }
            (None, Some(url)) => {
                if !source.args.is_empty() || source.cwd.is_some() {
                    return Err(self.error(here(), format!("source `{name}` has `url` and also `args`/`cwd`, which only go with `command`"), Some("remove `args` and `cwd`, or use `command` instead of `url`".into())));
                }
                if let Some((key, value)) = source.env.iter().next() {
                    return Err(self.at(value, format!("env `{key}` on source `{name}`, which is reached over HTTP: env only goes with `command`"), "use `headers` to pass values to an HTTP server"));
                }
                if !is_http_url(url) {
                    return Err(self.error(here(), format!("source `{name}` has url `{url}`, which is not an http:// or https:// URL"), Some("write the server's full Streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`".into())));
                }
                Transport::Http { url: url.clone() }
            }
        };
        self.finish_source(name, source, transport)
    }

    /// `openapi = "FILE|URL"`: no command, no MCP `url`, no `env`; `headers` and `auth` go on
    /// every request as the document's security schemes say.
    fn openapi_source(
        &self,
        name: &str,
        source: &SourceOptions,
        openapi: &Spanned<String>,
    ) -> Result<SourceSettings, ConfigError> {
        let fix = "an OpenAPI source is `openapi = \"FILE or URL\"` with optional `base_url`, `headers` and `auth`";
        if source.command.is_some() || source.url.is_some() {
            return Err(self.at(
                openapi,
                format!("source `{name}` has `openapi` and also `command` or `url`"),
                format!("{fix}; keep `command` or `url` only for an MCP server"),
            ));
        }
        if !source.args.is_empty() || source.cwd.is_some() {
            return Err(self.at(
                openapi,
                format!("source `{name}` has `openapi` and also `args`/`cwd`, which only go with `command`"),
                fix,
            ));
        }
        if let Some((key, value)) = source.env.iter().next() {
            return Err(self.at(
                value,
                format!("env `{key}` on OpenAPI source `{name}`: env only goes with `command`"),
                "use `headers`, or `auth` for the document's security schemes",
            ));
        }
        if openapi.get_ref().trim().is_empty() {
            return Err(self.at(
                openapi,
                format!("source `{name}` has an empty `openapi`"),
                fix,
            ));
        }
        let base_url = match &source.base_url {
            Some(base) if !is_http_url(base.get_ref()) => {
                return Err(self.at(
                    base,
                    format!("source `{name}` has base_url `{}`, which is not an http:// or https:// URL", base.get_ref()),
                    "write the API's root, e.g. `https://api.example.com/v1`",
                ));
            }
            Some(base) => {
                // Caught here, not at the first call: a URL that does not parse would
                // otherwise be saved and reported ready, and fail every call.
                if let Err(error) = url::Url::parse(base.get_ref()) {
                    return Err(self.at(
                        base,
                        format!(
                            "source `{name}` has base_url `{}`, which is not a valid URL: {error}",
                            base.get_ref()
                        ),
                        "write the API's root, e.g. `https://api.example.com/v1` (an IPv6 host goes in brackets: `http://[::1]:8080`)",
                    ));
                }
                Some(base.get_ref().trim_end_matches('/').to_string())
            }
            None => None,
        };
        let spec = openapi.get_ref().trim();
        // A relative file is relative to the config, not to wherever a command runs.
        let spec = if spec.starts_with("http://") || spec.starts_with("https://") {
            spec.to_string()
        } else {
            match self.path.parent() {
                Some(dir) if Path::new(spec).is_relative() => dir.join(spec).display().to_string(),
                _ => spec.to_string(),
            }
        };
        let transport = Transport::OpenApi { spec, base_url };
        self.finish_source(name, source, transport)
    }

    fn finish_source(
        &self,
        name: &str,
        source: &SourceOptions,
        transport: Transport,
    ) -> Result<SourceSettings, ConfigError> {
        let env = self.templates(&source.env)?;
        self.header_names(name, &source.headers)?;
        let headers = self.templates(&source.headers)?;
        let auth = self.templates(&source.auth)?;
        let oauth = source
            .oauth
            .as_ref()
            .map(|oauth| self.oauth_client(oauth))
            .transpose()?;
        let connections = self.connections(name, source, &env, &headers, &auth, &oauth)?;
        Ok(SourceSettings {
            name: name.to_string(),
            transport,
            connections,
            connect_timeout: self.seconds(
                &source.connect_timeout_secs,
                DEFAULT_CONNECT_TIMEOUT,
                "connect_timeout_secs",
            )?,
            request_timeout: self.seconds(
                &source.request_timeout_secs,
                DEFAULT_REQUEST_TIMEOUT,
                "request_timeout_secs",
            )?,
            enabled: source.enabled.unwrap_or(true),
            env_credentials: Arc::from([]),
        })
    }

    fn seconds(
        &self,
        value: &Option<Spanned<u64>>,
        default: Duration,
        key: &str,
    ) -> Result<Duration, ConfigError> {
        match value {
            None => Ok(default),
            Some(v) if *v.get_ref() == 0 => Err(self.at(
                v,
                format!("`{key}` must be at least 1 second"),
                format!("remove it for the default of {} seconds", default.as_secs()),
            )),
            Some(v) => Ok(Duration::from_secs(*v.get_ref())),
        }
    }

    /// Every name of `headers` is one an HTTP header can have: a bad one would otherwise be
    /// saved and reported ready, and fail every call.
    fn header_names(
        &self,
        source: &str,
        headers: &BTreeMap<String, Spanned<String>>,
    ) -> Result<(), ConfigError> {
        for (key, value) in headers {
            if http::HeaderName::from_bytes(key.as_bytes()).is_err() {
                return Err(self.at(
                    value,
                    format!("header `{key}` of source `{source}` is not a valid HTTP header name"),
                    "a header name is letters, digits and `-` (or ``!#$%&'*+.^_`|~``), without spaces or `:`, e.g. `X-Api-Key`",
                ));
            }
        }
        Ok(())
    }

    fn templates(
        &self,
        values: &BTreeMap<String, Spanned<String>>,
    ) -> Result<BTreeMap<String, Template>, ConfigError> {
        let mut out = BTreeMap::new();
        for (key, value) in values {
            let template = Template::parse(value.get_ref()).map_err(|e| {
                // +1 skips the opening quote of a basic string.
                let start = value.span().start + 1 + e.offset;
                self.error(
                    Some(start..start + 1),
                    format!("in `{key}`: {}", e.message),
                    Some("references look like `${secret:NAME}` or `${env:VAR}`".into()),
                )
            })?;
            out.insert(key.clone(), template);
        }
        Ok(out)
    }

    /// A pre-registered OAuth client, its secret a reference like any header's.
    fn oauth_client(
        &self,
        oauth: &Spanned<OAuthOptions>,
    ) -> Result<OAuthClientSettings, ConfigError> {
        let options = oauth.get_ref();
        let client_id = match (&options.client_id, &options.client_metadata_url) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(self.at(
                    oauth,
                    "`oauth` needs one of `client_id` and `client_metadata_url`".to_string(),
                    "give `client_id` (the ID your OAuth app was registered with) or `client_metadata_url` (the HTTPS URL of the client ID metadata document you host), or remove `oauth` to register dynamically",
                ));
            }
            (None, Some(url)) => return self.metadata_document(oauth, url),
            (Some(id), None) => id.trim(),
        };
        if client_id.is_empty() {
            return Err(self.at(
                oauth,
                "`oauth` has an empty `client_id`".to_string(),
                "give the client ID your OAuth app was registered with, or remove `oauth` to register dynamically",
            ));
        }
        let client_secret = match &options.client_secret {
            Some(secret) => self
                .templates(&BTreeMap::from([(
                    "client_secret".to_string(),
                    secret.clone(),
                )]))?
                .remove("client_secret"),
            None => None,
        };
        Ok(OAuthClientSettings::Registered {
            client_id: client_id.to_string(),
            client_secret,
        })
    }

    /// A client ID metadata document's URL: HTTPS with a path (the spec's rule, which servers
    /// check), and no secret beside it (such a client is public).
    fn metadata_document(
        &self,
        oauth: &Spanned<OAuthOptions>,
        url: &str,
    ) -> Result<OAuthClientSettings, ConfigError> {
        if oauth.get_ref().client_secret.is_some() {
            return Err(self.at(
                oauth,
                "`oauth` has a `client_secret` beside `client_metadata_url`".to_string(),
                "a client known by its metadata document is public and has no secret; remove `client_secret`, or use the `client_id` of an app registered with one",
            ));
        }
        let parsed = url::Url::parse(url.trim()).ok();
        let fits = parsed.as_ref().is_some_and(|u| {
            u.scheme() == "https" && u.host_str().is_some() && !matches!(u.path(), "" | "/")
        });
        if !fits {
            return Err(self.at(
                oauth,
                format!("`client_metadata_url` `{url}` is not an HTTPS URL with a path"),
                "give the https:// address of the JSON document that describes the client, e.g. https://example.com/capabilities/client.json",
            ));
        }
        Ok(OAuthClientSettings::MetadataDocument {
            url: url.trim().to_string(),
        })
    }

    fn connections(
        &self,
        source: &str,
        options: &SourceOptions,
        env: &BTreeMap<String, Template>,
        headers: &BTreeMap<String, Template>,
        auth: &BTreeMap<String, Template>,
        oauth: &Option<OAuthClientSettings>,
    ) -> Result<Vec<ConnectionSettings>, ConfigError> {
        if options.connections.is_empty() {
            return Ok(vec![ConnectionSettings {
                name: IMPLICIT_CONNECTION.into(),
                is_default: true,
                env: env.clone(),
                headers: headers.clone(),
                auth: auth.clone(),
                oauth: oauth.clone(),
            }]);
        }
        let defaults: Vec<&String> = options
            .connections
            .iter()
            .filter(|(_, c)| c.default)
            .map(|(n, _)| n)
            .collect();
        if defaults.len() > 1 {
            return Err(self.error(
                self.span_of_table(&format!("sources.{source}.connections"), defaults[1]),
                format!(
                    "source `{source}` marks {} connections as default ({})",
                    defaults.len(),
                    defaults
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some("keep `default = true` on exactly one connection".into()),
            ));
        }
        if defaults.is_empty() && options.connections.len() > 1 {
            let first = options
                .connections
                .keys()
                .next()
                .map(String::as_str)
                .unwrap_or_default();
            return Err(self.error(
                self.span_of_table("sources", source),
                format!("source `{source}` has {} connections and none is marked default", options.connections.len()),
                Some(format!("add `default = true` to the one scripts should use when they do not pick one, e.g. [sources.{source}.connections.{first}]")),
            ));
        }
        let mut out = Vec::new();
        for (name, connection) in &options.connections {
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                || name.is_empty()
            {
                return Err(self.error(
                    self.span_of_table(&format!("sources.{source}.connections"), name),
                    format!(
                        "connection name `{name}` may only contain letters, digits, `_` and `-`"
                    ),
                    Some("rename the connection table".into()),
                ));
            }
            let ConnectionOptions {
                default,
                env: own_env,
                headers: own_headers,
                auth: own_auth,
                oauth: own_oauth,
            } = connection;
            if let Some(value) = own_oauth
                && options.url.is_none()
                && options.openapi.is_none()
            {
                return Err(self.at(
                    value,
                    format!(
                        "`oauth` on connection `{name}` of source `{source}`, which has no `url` or `openapi`"
                    ),
                    "only a Streamable HTTP server or an OpenAPI source signs in with OAuth",
                ));
            }
            let own_oauth = own_oauth
                .as_ref()
                .map(|oauth| self.oauth_client(oauth))
                .transpose()?;
            if let Some((key, value)) = own_auth.iter().next()
                && options.openapi.is_none()
            {
                return Err(self.at(
                    value,
                    format!("auth `{key}` on connection `{name}` of MCP source `{source}`"),
                    "`auth` only goes with `openapi`; use `headers` or `env`",
                ));
            }
            if !own_env.is_empty() && (options.url.is_some() || options.openapi.is_some()) {
                let (key, value) = own_env.iter().next().expect("checked non-empty");
                return Err(self.at(
                    value,
                    format!("env `{key}` on connection `{name}` of HTTP source `{source}`"),
                    "use `headers` for an HTTP source",
                ));
            }
            if !own_headers.is_empty() && options.command.is_some() {
                let (key, value) = own_headers.iter().next().expect("checked non-empty");
                return Err(self.at(
                    value,
                    format!("header `{key}` on connection `{name}` of stdio source `{source}`"),
                    "use `env` for a stdio source",
                ));
            }
            let mut merged_env = env.clone();
            merged_env.extend(self.templates(own_env)?);
            self.header_names(source, own_headers)?;
            let mut merged_headers = headers.clone();
            merged_headers.extend(self.templates(own_headers)?);
            let mut merged_auth = auth.clone();
            merged_auth.extend(self.templates(own_auth)?);
            out.push(ConnectionSettings {
                name: name.clone(),
                is_default: *default || options.connections.len() == 1,
                env: merged_env,
                headers: merged_headers,
                auth: merged_auth,
                oauth: own_oauth.or_else(|| oauth.clone()),
            });
        }
        out.sort_by_key(|c| !c.is_default);
        Ok(out)
    }
}

fn is_http_url(url: &str) -> bool {
    (url.starts_with("http://") || url.starts_with("https://")) && url.len() >= "http://x".len()
}

fn known_names_help<'a>(what: &str, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        format!("there are no {what} yet")
    } else {
        format!("known {what}: {}", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::StoreKind;

    fn err(text: &str) -> ConfigError {
        parse(Path::new("/home/u/.config/capabilities/config.toml"), text).unwrap_err()
    }

    #[test]
    fn unknown_key_names_file_line_and_fix() {
        let e = err("[sources.a]\ncomand = \"x\"\n");
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("unknown field `comand`"), "{e}");
        assert!(
            e.to_string()
                .starts_with("/home/u/.config/capabilities/config.toml:2:1: "),
            "{e}"
        );
        assert!(e.help.unwrap().contains("fix its spelling"));
    }

    #[test]
    fn the_hub_table_paces_sources_and_refuses_zero_starts() {
        let path = Path::new("c.toml");
        let settings = parse(path, "[hub]\nmax_starting = 3\nidle_stop_secs = 0\n").unwrap();
        assert_eq!(settings.pacing.max_starting, 3);
        assert_eq!(settings.pacing.idle_stop, None);
        let settings = parse(path, "").unwrap();
        assert_eq!(settings.pacing.idle_stop, Some(DEFAULT_IDLE_STOP));
        let e = err("[hub]\nmax_starting = 0\n");
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("hub.max_starting must be at least 1"),
            "{e}"
        );
        assert!(
            e.help
                .as_deref()
                .is_some_and(|h| h.contains("one source per core")),
            "{e}"
        );
    }

    #[test]
    fn bad_values_are_errors_with_lines() {
        let e = err("[sources.a]\ncommand = \"x\"\n[policy]\ndefault = \"maybe\"\n");
        assert_eq!(e.line, 4);
        assert!(e.message.contains("`maybe` is not an action"), "{e}");
        let e = err("[sources.a]\ncommand = 42\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("invalid type"), "{e}");
        let e = err("[limits]\nmax_calls = 500\n");
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("above the built-in maximum of 100"),
            "{e}"
        );
        assert!(e.help.unwrap().contains("never raise"));
        let e = err("[sources.a]\ncommand = \"x\"\nconnect_timeout_secs = 0\n");
        assert_eq!(e.line, 3);
    }

    #[test]
    fn missing_sources_are_named() {
        let e = err("[sources.a]\ncommand = \"x\"\n[profiles.p]\nsources = [\"a\", \"b\"]\n");
        assert_eq!(e.line, 4);
        assert!(e.message.contains("source `b`"), "{e}");
        assert!(e.help.unwrap().contains("known sources: a"));
        let e = err(
            "[sources.a]\ncommand = \"x\"\n[[policy.rules]]\nmatch = \"gitlab.*\"\naction = \"deny\"\n",
        );
        assert_eq!(e.line, 4);
        assert!(e.message.contains("source `gitlab`"), "{e}");
        let e = err(
            "[sources.a]\ncommand = \"x\"\n[[policy.rules]]\nmatch = \"a.*\"\naction = \"deny\"\nconnection = \"work\"\n",
        );
        assert_eq!(e.line, 6);
        assert!(e.message.contains("connection `work`"), "{e}");
    }

    #[test]
    fn transport_shape_is_checked() {
        let e = err("[sources.a]\nargs = [\"x\"]\n");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("needs `command`"), "{e}");
        let e = err("[sources.a]\ncommand = \"x\"\nurl = \"http://x/mcp\"\n");
        assert!(e.message.contains("both"), "{e}");
        let e = err("[sources.a]\nurl = \"ftp://x\"\n");
        assert!(e.message.contains("not an http"), "{e}");
        let e = err("[sources.a]\ncommand = \"x\"\nheaders = { A = \"b\" }\n");
        assert_eq!(e.line, 3);
        let e = err("[sources.my-server]\ncommand = \"x\"\n");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("letters, digits and `_`"), "{e}");
    }

    #[test]
    fn source_names_every_object_has_are_refused_with_a_fix() {
        for name in [
            "__proto__",
            "constructor",
            "toString",
            "valueOf",
            "hasOwnProperty",
        ] {
            let e = err(&format!(
                "[sources.ok]\ncommand = \"x\"\n[sources.{name}]\ncommand = \"x\"\n"
            ));
            assert_eq!(e.line, 3, "{e}");
            assert!(
                e.message
                    .contains(&format!("source name `{name}` is reserved"))
                    && e.message.contains("Object.prototype")
                    && e.message.contains("_source`"),
                "{e}"
            );
            assert!(e.help.is_some_and(|h| h.contains("rename")), "{name}");
        }
    }

    #[test]
    fn reference_syntax_errors_point_into_the_value() {
        let e = err("[sources.a]\ncommand = \"x\"\nenv = { TOKEN = \"abc ${sekret:t}\" }\n");
        assert_eq!(e.line, 3);
        assert_eq!(e.column, 22);
        assert!(e.message.contains("in `TOKEN`"), "{e}");
    }

    #[test]
    fn an_oauth_client_goes_with_a_url_and_connections_may_have_their_own() {
        let ok = parse(
            Path::new("/c.toml"),
            "[sources.gh]\nurl = \"https://gh.example/mcp\"\noauth = { client_id = \"app-1\", client_secret = \"${secret:gh-app}\" }\n\n[sources.gh.connections.me]\ndefault = true\n\n[sources.gh.connections.work]\noauth = { client_id = \"app-2\" }\n",
        )
        .unwrap();
        let gh = ok.source("gh").unwrap();
        let me = gh
            .connection("me")
            .and_then(|c| c.oauth.clone())
            .expect("the source's client");
        assert_eq!(me.client_id(), Some("app-1"));
        assert_eq!(
            me.client_secret().map(|t| t.secrets().collect::<Vec<_>>()),
            Some(vec!["gh-app"])
        );
        let work = gh
            .connection("work")
            .and_then(|c| c.oauth.clone())
            .expect("its own client");
        assert_eq!(work.client_id(), Some("app-2"));
        assert!(work.client_secret().is_none());
        // An OpenAPI source signs in through its document's OAuth scheme with a client too.
        let api = parse(
            Path::new("/c.toml"),
            "[sources.api]\nopenapi = \"https://api.example/openapi.json\"\noauth = { client_id = \"app-3\" }\n\n[sources.api.connections.work]\noauth = { client_id = \"app-4\" }\n",
        )
        .unwrap();
        let api = api.source("api").unwrap();
        let own = |name: &str| api.connection(name).and_then(|c| c.oauth.clone());
        assert_eq!(
            own("work").and_then(|c| c.client_id().map(str::to_string)),
            Some("app-4".into())
        );
        let first = api.connections.iter().find(|c| c.name != "work");
        assert!(
            first.is_none_or(|c| c
                .oauth
                .as_ref()
                .is_some_and(|o| o.client_id() == Some("app-3"))),
            "the source's client"
        );
        for (text, expected) in [
            (
                "[sources.s]\ncommand = \"x\"\noauth = { client_id = \"a\" }\n",
                "only goes with `url`",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_id = \" \" }\n",
                "empty `client_id`",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_id = \"a\", client_secret = \"${secret:}\" }\n",
                "client_secret",
            ),
            (
                "[sources.s]\ncommand = \"x\"\n[sources.s.connections.c]\noauth = { client_id = \"a\" }\n",
                "which has no `url`",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { }\n",
                "needs one of `client_id` and `client_metadata_url`",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_id = \"a\", client_metadata_url = \"https://x.example/c.json\" }\n",
                "needs one of `client_id` and `client_metadata_url`",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_metadata_url = \"http://x.example/c.json\" }\n",
                "is not an HTTPS URL with a path",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_metadata_url = \"https://x.example/\" }\n",
                "is not an HTTPS URL with a path",
            ),
            (
                "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_metadata_url = \"https://x.example/c.json\", client_secret = \"s\" }\n",
                "beside `client_metadata_url`",
            ),
        ] {
            let error = parse(Path::new("/c.toml"), text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
        let documented = parse(
            Path::new("/c.toml"),
            "[sources.s]\nurl = \"http://x/mcp\"\noauth = { client_metadata_url = \"https://x.example/c.json\" }\n",
        )
        .unwrap();
        assert!(matches!(
            documented.source("s").unwrap().default_connection().oauth,
            Some(OAuthClientSettings::MetadataDocument { ref url }) if url == "https://x.example/c.json"
        ));
    }

    #[test]
    fn openapi_sources_take_headers_and_auth_and_nothing_of_a_process() {
        let ok = parse(
            Path::new("/home/me/.config/capabilities/config.toml"),
            "[sources.shop]\nopenapi = \"specs/shop.yaml\"\nbase_url = \"https://shop.example/api/\"\nheaders = { A = \"1\" }\nauth = { key = \"${secret:k}\" }\n",
        )
        .unwrap();
        let shop = ok.source("shop").unwrap();
        assert_eq!(
            shop.transport,
            Transport::OpenApi {
                spec: "/home/me/.config/capabilities/specs/shop.yaml".into(),
                base_url: Some("https://shop.example/api".into()),
            }
        );
        assert_eq!(shop.default_connection().auth.len(), 1);
        let e = err("[sources.a]\nopenapi = \"s.json\"\ncommand = \"x\"\n");
        assert!(
            e.message
                .contains("has `openapi` and also `command` or `url`"),
            "{e}"
        );
        let e = err("[sources.a]\nopenapi = \"s.json\"\nenv = { A = \"1\" }\n");
        assert!(e.message.contains("env `A` on OpenAPI source"), "{e}");
        let e = err("[sources.a]\nopenapi = \"s.json\"\nbase_url = \"ftp://x\"\n");
        assert!(e.message.contains("not an http:// or https:// URL"), "{e}");
        assert_eq!(e.line, 3);
        let e = err("[sources.a]\nopenapi = \"s.json\"\nbase_url = \"http://[::1\"\n");
        assert!(
            e.message
                .contains("base_url `http://[::1`, which is not a valid URL"),
            "{e}"
        );
        assert_eq!(e.line, 3);
        let e = err("[sources.a]\nopenapi = \"s.json\"\nheaders = { \"Bad Name\" = \"x\" }\n");
        assert!(
            e.message
                .contains("header `Bad Name` of source `a` is not a valid HTTP header name"),
            "{e}"
        );
        let e = err(
            "[sources.a]\nurl = \"http://h/mcp\"\n[sources.a.connections.w]\nheaders = { \"a:b\" = \"x\" }\n",
        );
        assert!(e.message.contains("header `a:b` of source `a`"), "{e}");
        let e = err("[sources.a]\ncommand = \"x\"\nauth = { k = \"v\" }\n");
        assert!(e.message.contains("`auth` only goes with `openapi`"), "{e}");
        let e = err("[sources.a]\nurl = \"http://h/mcp\"\nbase_url = \"http://h\"\n");
        assert!(e.message.contains("only goes with `openapi`"), "{e}");
    }

    #[test]
    fn connections_need_one_default() {
        let e = err(
            "[sources.a]\nurl = \"http://h/mcp\"\n[sources.a.connections.x]\n[sources.a.connections.y]\n",
        );
        assert!(e.message.contains("none is marked default"), "{e}");
        let e = err(
            "[sources.a]\nurl = \"http://h/mcp\"\n[sources.a.connections.x]\ndefault = true\n[sources.a.connections.y]\ndefault = true\n",
        );
        assert!(e.message.contains("2 connections as default"), "{e}");
        let ok = parse(Path::new("c.toml"), "[sources.a]\nurl = \"http://h/mcp\"\nheaders = { A = \"1\", B = \"2\" }\n[sources.a.connections.x]\nheaders = { B = \"3\" }\n").unwrap();
        let c = ok.sources[0].default_connection();
        assert_eq!(c.name, "x");
        assert_eq!(c.headers["A"].raw(), "1");
        assert_eq!(c.headers["B"].raw(), "3");
    }

    #[test]
    fn credential_store_is_checked() {
        let e = err("[credentials]\nstore = \"vault\"\n");
        assert_eq!((e.line, e.column), (2, 9));
        assert!(
            e.message.contains("`vault` is not a credential store"),
            "{e}"
        );
        assert!(e.help.unwrap().contains("store = \"file\""));
        let e = err("[credentials]\npath = \"x\"\n");
        assert!(e.message.contains("unknown field `path`"), "{e}");
        let file = parse(Path::new("c.toml"), "[credentials]\nstore = \"file\"\n").unwrap();
        assert_eq!(file.credential_store, StoreKind::File);
        assert_eq!(
            parse(Path::new("c.toml"), "").unwrap().credential_store,
            StoreKind::Keychain
        );
    }

    #[test]
    fn a_missing_file_is_an_empty_config() {
        let dir = tempfile::tempdir().unwrap();
        let settings = load(&dir.path().join("nope.toml")).unwrap();
        assert!(settings.sources.is_empty());
    }
}
