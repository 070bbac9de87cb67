//! OpenAPI sources: an HTTP API described by an OpenAPI 3.0 or 3.1 document, behind the same
//! seam as an MCP server. "Connecting" reads the document (a file, or a URL fetched within the
//! connect timeout, every time the source connects) and turns its operations into tools; the
//! catalogue caches that listing like any other, so search and describe do not wait for the
//! document. A call builds one HTTP request from the tool's arguments and answers with a
//! `CallToolResult`, as an MCP server would.
//!
//! | file            | owns                                                               |
//! |-----------------|--------------------------------------------------------------------|
//! | `mod.rs`        | [`Api`]: loading a document for one connection, the HTTP client, calls |
//! | `spec.rs`       | parsing JSON/YAML, version and shape checks, errors with pointer and line |
//! | `schema.rs`     | OpenAPI schemas → self-contained JSON Schema (`$defs`, 3.0 dialect) |
//! | `operations.rs` | operations → tools: names, input/output schemas, annotations        |
//! | `security.rs`   | `auth` credentials placed as the document's security schemes say    |
//! | `oauth.rs`      | signing a connection in through the document's OAuth scheme, its tokens |
//! | `request.rs`    | arguments → an HTTP request: path escaping, styles, bodies          |
//! | `response.rs`   | an HTTP response → a `CallToolResult`, failures with status and hint |

mod oauth;
mod operations;
mod request;
mod response;
mod schema;
mod security;
mod spec;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use self::oauth::{Access, Refusal, Scheme};
use self::operations::Operation;
use self::security::Credentials;
use crate::credentials::{Redaction, Sent};
use crate::model::tool::UpstreamTool;
use crate::oauth::{ClientIdentity, SignIn, TokenStore};

/// The tools an OpenAPI document's text describes, as a source reading it lists them: for the
/// benchmarks, and for anything that inspects a document without connecting.
pub fn document_tools(text: String) -> Result<Vec<UpstreamTool>, String> {
    let document = spec::parse(text).map_err(|error| error.to_string())?;
    let built = operations::operations(&document).map_err(|error| error.to_string())?;
    Ok(built.into_iter().map(|(_, tool)| tool).collect())
}

/// One connection's view of an API: its operations, where requests go, and with what.
pub(crate) struct Api {
    source: String,
    /// `OpenAPI 3.1.0`, for the source's status.
    pub(crate) protocol: String,
    pub(crate) title: Option<String>,
    pub(crate) version: Option<String>,
    tools: Vec<UpstreamTool>,
    operations: HashMap<String, Operation>,
    /// The API's root: `base_url`, else the document's first server. The source's
    /// credentials go to its origin and nowhere else.
    base_url: String,
    /// Whether `base_url` was configured: then it is where every request goes, whatever
    /// servers the document gives its operations.
    base_url_configured: bool,
    default_security: Option<Vec<Vec<String>>>,
    client: reqwest::Client,
    /// The connection's `headers`, resolved, sent on every request.
    headers: Vec<(String, String)>,
    credentials: Credentials,
    /// The connection's sign-in through the document's OAuth scheme, when it has one.
    access: Option<Access>,
    /// Blanks the connection's resolved headers and credentials: an error excerpt is cut
    /// from the answer, so it is scrubbed before the cut, which a later redaction of the
    /// whole answer could no longer match.
    redaction: Arc<Redaction>,
}

/// Why a call did not get an HTTP answer.
pub(crate) enum CallError {
    /// The arguments cannot make a request (the message says which).
    Request(String),
    /// No answer to a request that left (or may have left): reset, cut off, unreadable.
    Network(String),
    /// No request left: the API could not be reached (refused, unresolvable, its TLS
    /// handshake failed) or no request could be made of what the document says.
    Unsent(String),
    /// No tool of this name.
    Unknown(String),
    /// The connection needs the person to sign in (again); why. Nothing was acted on.
    SignIn(String),
    /// The connection's token could not be had (the authorization server did not answer, the
    /// credential store failed); nothing was sent.
    Token(String),
}

impl From<Refusal> for CallError {
    fn from(refusal: Refusal) -> CallError {
        match refusal {
            Refusal::SignIn(why) => CallError::SignIn(why),
            Refusal::Failed(reason) => CallError::Token(reason),
        }
    }
}

/// Where a connection's document is and what it sends.
pub(crate) struct Connect<'a> {
    pub(crate) source: &'a str,
    pub(crate) spec: &'a str,
    pub(crate) base_url: Option<&'a str>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) auth: Vec<(String, String)>,
    pub(crate) connect_timeout: Duration,
    /// Where the connection's OAuth tokens are kept, and the client the config names; `None`
    /// without a credential store (then nothing signs in).
    pub(crate) sign_in: Option<(TokenStore, Option<ClientIdentity>)>,
    /// The connection's redaction of what it resolved (`headers`, `auth`).
    pub(crate) redaction: Arc<Redaction>,
}

/// A document read for one connection: what both connecting and signing in start from.
struct Loaded {
    client: reqwest::Client,
    document: spec::Document,
    base_url: String,
}

/// Fetches and parses the document, and works out the API's root.
async fn load(
    source: &str,
    location: &str,
    base_url: Option<&str>,
    headers: &[(String, String)],
    connect_timeout: Duration,
) -> Result<Loaded, String> {
    let client = client(source, connect_timeout)?;
    // The source's headers belong to the API: they go to the document only when it is
    // served from the API's own origin, and that is known before it is read only when
    // `base_url` says so.
    let document_headers = match base_url {
        Some(base) if same_origin(base, location) => headers,
        _ => &[],
    };
    let text = fetch(&client, location, document_headers, connect_timeout).await?;
    let document =
        spec::parse(text).map_err(|error| format!("the OpenAPI document {location}: {error}"))?;
    let base_url = match base_url {
        Some(base) => base.trim_end_matches('/').to_string(),
        None => server_url(&document.root, location)?,
    };
    Ok(Loaded {
        client,
        document,
        base_url,
    })
}

/// Starts signing a connection in through the document's OAuth scheme: the sign-in's page is
/// ready to open. Errors are messages for the user.
pub(crate) async fn begin_sign_in(
    connect: Connect<'_>,
    store: TokenStore,
    client: Option<ClientIdentity>,
) -> Result<SignIn, String> {
    let Connect {
        source,
        spec: location,
        base_url,
        headers,
        auth,
        connect_timeout,
        sign_in: _,
        redaction: _,
    } = connect;
    let loaded = load(source, location, base_url, &headers, connect_timeout).await?;
    let configured: Vec<String> = auth.into_iter().map(|(scheme, _)| scheme).collect();
    let scheme = Scheme::find(&loaded.document, &loaded.base_url, &configured)
        .map_err(|error| format!("source `{source}`: the OpenAPI document {location}: {error}"))?
        .ok_or_else(|| {
            let also = if configured.is_empty() {
                String::new()
            } else {
                " that `auth` gives no token for".to_string()
            };
            format!(
                "source `{source}` has nothing to sign in to: its OpenAPI document declares no `oauth2` scheme with an authorization code flow, nor an `openIdConnect` scheme,{also}; it takes its credentials in `auth` (`--auth 'SCHEME=${{secret:NAME}}'`)"
            )
        })?;
    // With the scopes an API asked for since the last sign-in (a 403 `insufficient_scope`).
    let mut scopes = scheme.scopes.clone();
    for wanted in store.wanted_scopes() {
        if !scopes.contains(&wanted) {
            scopes.push(wanted);
        }
    }
    let metadata = scheme
        .metadata(&loaded.client, connect_timeout)
        .await
        .map_err(|error| format!("cannot sign in to source `{source}`: {error}"))?;
    // The sign-in records where its tokens are refreshed: a document that later names
    // another token endpoint does not receive them.
    let store = store.bound_to(&metadata.token_endpoint);
    crate::oauth::begin_described(source, &loaded.base_url, metadata, &scopes, store, client)
        .await
        .map_err(|error| error.to_string())
}

impl Api {
    /// Reads the document and prepares the connection. Errors are whole sentences that name
    /// the document, the place in it and the fix.
    pub(crate) async fn connect(connect: Connect<'_>) -> Result<Api, String> {
        let Connect {
            source,
            spec: location,
            base_url,
            headers,
            auth,
            connect_timeout,
            sign_in,
            redaction,
        } = connect;
        let base_url_configured = base_url.is_some();
        let Loaded {
            client,
            document,
            base_url,
        } = load(source, location, base_url, &headers, connect_timeout).await?;
        let built = operations::operations(&document)
            .map_err(|error| format!("the OpenAPI document {location}: {error}"))?;
        let configured: Vec<String> = auth.iter().map(|(scheme, _)| scheme.clone()).collect();
        // A document whose sign-in scheme is broken still lists its operations; the sign-in
        // says what is wrong.
        let scheme = Scheme::find(&document, &base_url, &configured)
            .ok()
            .flatten()
            .filter(|_| sign_in.is_some());
        let credentials =
            Credentials::new(&document, auth, scheme.as_ref().map(|s| s.name.as_str()))
                .map_err(|error| format!("source `{source}`: {error}"))?;
        let access = match (scheme, sign_in) {
            (Some(scheme), Some((store, identity))) => Some(Access::new(
                scheme,
                &base_url,
                store,
                identity,
                client.clone(),
                connect_timeout,
            )),
            _ => None,
        };
        let info = |key: &str| {
            document
                .root
                .pointer(&format!("/info/{key}"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let protocol = document
            .root
            .get("openapi")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (operations, mut tools): (Vec<Operation>, Vec<UpstreamTool>) =
            built.into_iter().unzip();
        // Where each operation's requests go is part of its tool's version: a document that
        // moves an operation elsewhere changes the tool, which a person then confirms.
        for (operation, tool) in operations.iter().zip(&mut tools) {
            tool.endpoint = Some(operation_base(
                &base_url,
                base_url_configured,
                operation.server.as_deref(),
            ));
        }
        Ok(Api {
            source: source.to_string(),
            protocol: format!("OpenAPI {protocol}"),
            title: info("title"),
            version: info("version"),
            default_security: default_security(&document.root, &operations),
            operations: operations
                .into_iter()
                .map(|operation| (operation.name.clone(), operation))
                .collect(),
            tools,
            base_url,
            base_url_configured,
            client,
            headers,
            credentials,
            access,
            redaction,
        })
    }

    /// Why `name` cannot be called until the person signs in, if that is so: its operation
    /// needs the connection's OAuth token, and there is none to be had (the token is refreshed
    /// here when it is about to expire). Other trouble is left for the call to report.
    pub(crate) async fn sign_in_needed(&self, name: &str) -> Option<String> {
        let operation = self.operations.get(name)?;
        let access = self.access.as_ref()?;
        let requirements = operation
            .security
            .as_ref()
            .or(self.default_security.as_ref());
        if !self.credentials.uses_sign_in(requirements) {
            return None;
        }
        match access.token().await {
            Err(Refusal::SignIn(why)) => Some(why),
            _ => None,
        }
    }

    /// Every operation as a tool, in document order.
    pub(crate) fn tools(&self) -> &[UpstreamTool] {
        &self.tools
    }

    /// Sends one operation and reads its answer as a `CallToolResult`.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        sent: &Sent,
    ) -> Result<Value, CallError> {
        let Some(operation) = self.operations.get(name) else {
            return Err(CallError::Unknown(name.to_string()));
        };
        let base = operation_base(
            &self.base_url,
            self.base_url_configured,
            operation.server.as_deref(),
        );
        // (A root that does not parse is left for the request to report.)
        if base != self.base_url && !same_origin(&base, &self.base_url) {
            return Err(CallError::Request(format!(
                "`{} {}` is served at {base} (the OpenAPI document gives it `servers` of its own), not on the API's origin {}; capabilities sends a source's requests, with its credentials and the call's arguments, only to the API's origin, so it did not send this one. To call it, add its server as a source of its own: `capabilities source add NAME --openapi DOCUMENT --base-url {base}`",
                operation.method, operation.path, self.base_url
            )));
        }
        let requirements = operation
            .security
            .as_ref()
            .or(self.default_security.as_ref());
        let access = self
            .access
            .as_ref()
            .filter(|_| self.credentials.uses_sign_in(requirements));
        let token = match access {
            Some(access) => Some(access.token().await?),
            None => None,
        };
        let (mut response, mut line) = self
            .send(&base, operation, arguments, token.as_deref())
            .await?;
        // A refused token is renewed once and the request sent again: a 401 means the API
        // acted on nothing.
        if let (Some(access), Some(refused)) = (access, &token)
            && response.status() == reqwest::StatusCode::UNAUTHORIZED
        {
            let renewed = access.renew(refused).await?;
            (response, line) = self
                .send(&base, operation, arguments, Some(&renewed))
                .await?;
            if response.status() == reqwest::StatusCode::UNAUTHORIZED {
                access.forget().await;
                return Err(CallError::SignIn(
                    "the server no longer accepts its sign-in".into(),
                ));
            }
        }
        if let Some(access) = access
            && response.status() == reqwest::StatusCode::FORBIDDEN
            && let Some(scope) = missing_scope(&response, &base)
        {
            // The next sign-in asks for it too; until then the call waits.
            access.lacks(scope.as_deref()).await?;
            return Err(CallError::SignIn(match scope {
                Some(scope) => format!(
                    "`{line}` needs {}, which its sign-in was not granted; the next sign-in asks for it",
                    crate::oauth::name_scopes(&scope)
                ),
                None => format!(
                    "`{line}` needs a scope its sign-in was not granted, and the API did not say which"
                ),
            }));
        }
        let missing = self.credentials.missing(requirements);
        // An API that echoes a token must not hand it to the script: the one this request
        // carried, and every other the connection has held (its refresh token, the access
        // tokens refreshes replaced), whether or not this operation signs in.
        let tokens = self.access.as_ref().map(Access::held);
        // What the call's own arguments hold is the script's, echoed (see `Sent`).
        let scrub = |value: &mut Value| {
            self.redaction.clean_json_answer(value, sent);
            if let Some(tokens) = &tokens {
                tokens.clean_json_answer(value, sent);
            }
        };
        let mut answer = response::read(response, &line, &missing, &self.source, &scrub)
            .await
            .map_err(CallError::Network)?;
        if let Some(tokens) = &tokens {
            tokens.clean_json_answer(&mut answer, sent);
        }
        Ok(answer)
    }

    /// Builds and sends one request, with `token` as the connection's sign-in; the answer
    /// and the request line.
    async fn send(
        &self,
        base: &str,
        operation: &Operation,
        arguments: &Map<String, Value>,
        token: Option<&str>,
    ) -> Result<(reqwest::Response, String), CallError> {
        let built = request::build(
            &self.client,
            base,
            operation,
            arguments,
            &self.credentials,
            self.default_security.as_ref(),
            token,
        )
        .map_err(CallError::Request)?;
        let mut request = built.request;
        for (name, value) in &self.headers {
            let mut value = reqwest::header::HeaderValue::try_from(value.as_str()).map_err(|_| {
                CallError::Request(format!(
                    "the value of header `{name}` of source `{}` has characters a header cannot carry; check it for line breaks",
                    self.source
                ))
            })?;
            value.set_sensitive(true);
            request = request.header(name.as_str(), value);
        }
        let request = request
            .build()
            .map_err(|error| CallError::Unsent(network_reason(&error, base)))?;
        // A request that may write and whose connection failed is not taken for unsent: the
        // client follows same-origin redirects, and a redirect that cannot be followed fails
        // the same way after the API already had the request (reqwest names the first address
        // either way). A read may be sent again whatever happened.
        let reads = matches!(
            *request.method(),
            reqwest::Method::GET | reqwest::Method::HEAD | reqwest::Method::OPTIONS
        );
        let response = self.client.execute(request).await.map_err(|error| {
            let reason = network_reason(&error, base);
            if error.is_builder() || (error.is_connect() && reads) {
                CallError::Unsent(reason)
            } else {
                CallError::Network(reason)
            }
        })?;
        Ok((response, built.line))
    }
}

/// Whether a 403 is `WWW-Authenticate: Bearer error="insufficient_scope"` (RFC 6750 §3.1), and
/// the scope it names when it does.
fn missing_scope(response: &reqwest::Response, base: &str) -> Option<Option<String>> {
    let base = reqwest::Url::parse(base).ok()?;
    response
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| rmcp::transport::auth::WWWAuthenticateParams::parse(value, &base))
        .find(|params| params.is_insufficient_scope())
        .map(|params| params.scope)
}

/// The client of one connection: the process's rustls, connections kept alive and reused, a
/// connect timeout, and redirects followed only within the origin (a redirect elsewhere would
/// take the credentials along).
fn client(source: &str, connect_timeout: Duration) -> Result<reqwest::Client, String> {
    crate::tls::install_crypto_provider();
    const MAX_REDIRECTS: usize = 10;
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(redirects)
        .connect_timeout(connect_timeout)
        .user_agent(concat!("capabilities/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| {
            format!(
                "source `{source}`: {}",
                crate::tls::explain_setup_failure(&chain(&error))
            )
        })
}

/// The requirements of an operation that declares none: the document's; none at all when only
/// operations declare theirs (FastAPI's way), so a credential goes only where it is asked for;
/// `None` (every configured credential everywhere) when the document declares security nowhere.
fn default_security(root: &Value, operations: &[Operation]) -> Option<Vec<Vec<String>>> {
    match root.get("security") {
        Some(requirements) => Some(operations::requirements(requirements)),
        None if operations.iter().any(|o| o.security.is_some()) => Some(Vec::new()),
        None => None,
    }
}

/// Where an operation's requests go: the API's root, unless the document gives the operation
/// (or its path) an absolute server of its own and no `base_url` was configured. A configured
/// `base_url` wins outright: the person said where the API is, and a document (perhaps served
/// by someone else) must not send the source's credentials anywhere else.
fn operation_base(api: &str, configured: bool, server: Option<&str>) -> String {
    match server {
        Some(server)
            if !configured && (server.starts_with("http://") || server.starts_with("https://")) =>
        {
            server.trim_end_matches('/').to_string()
        }
        _ => api.to_string(),
    }
}

/// Whether two URLs share scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// The largest document read: several times the largest real ones (GitHub's is about 12 MiB),
/// and a bound on what a server answering without end can make the hub hold.
const MAX_DOCUMENT: usize = 64 * 1024 * 1024;

fn too_large(location: &str) -> String {
    format!(
        "the OpenAPI document {location} is larger than {} MiB, more than any API description needs; check that it is the right document",
        MAX_DOCUMENT / (1024 * 1024)
    )
}

/// The document's text, from a file or a URL. A URL is fetched with `headers` (the source's,
/// when the document is on the API's origin: an API may keep its description behind its own
/// authentication); the client follows redirects only within the origin, so they go nowhere
/// else. Either is read up to [`MAX_DOCUMENT`].
async fn fetch(
    client: &reqwest::Client,
    location: &str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<String, String> {
    if !(location.starts_with("http://") || location.starts_with("https://")) {
        let unreadable = |error: std::io::Error| match error.kind() {
            std::io::ErrorKind::NotFound => format!(
                "there is no OpenAPI document at {location}; fix `openapi` in the config (a file path or an http(s) URL)"
            ),
            _ => format!("cannot read the OpenAPI document {location}: {error}"),
        };
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(
                std::fs::File::open(location).map_err(unreadable)?,
                MAX_DOCUMENT as u64 + 1,
            ),
            &mut text,
        )
        .map_err(unreadable)?;
        if text.len() > MAX_DOCUMENT {
            return Err(too_large(location));
        }
        return Ok(text);
    }
    let mut request = client.get(location);
    for (name, value) in headers {
        let Ok(mut value) = reqwest::header::HeaderValue::try_from(value.as_str()) else {
            return Err(format!(
                "the value of header `{name}` has characters a header cannot carry; check it for line breaks"
            ));
        };
        value.set_sensitive(true);
        request = request.header(name.as_str(), value);
    }
    let fetched = async {
        let mut response = request.send().await?;
        let status = response.status();
        // Where a redirect the client did not follow (another origin) pointed: its origin only,
        // since the rest of the address is the server's to fill with anything.
        let elsewhere = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|target| target.to_str().ok())
            .and_then(|target| response.url().join(target).ok())
            .map(|target| target.origin().ascii_serialization());
        let body = response::body_within(&mut response, MAX_DOCUMENT).await?;
        Ok::<_, reqwest::Error>(body.map(|body| {
            (
                status,
                elsewhere,
                String::from_utf8_lossy(&body).into_owned(),
            )
        }))
    };
    match tokio::time::timeout(timeout, fetched).await {
        Err(_) => Err(format!(
            "no answer from {location} within {} s while fetching the OpenAPI document; check the URL, or raise `connect_timeout_secs`",
            timeout.as_secs_f64()
        )),
        Ok(Err(error)) => Err(format!(
            "cannot fetch the OpenAPI document from {location}: {}. Check that the server is running and the URL is right",
            network_reason(&error, location)
        )),
        Ok(Ok(None)) => Err(too_large(location)),
        Ok(Ok(Some((status, Some(elsewhere), _)))) if status.is_redirection() => Err(format!(
            "fetching the OpenAPI document from {location} answered HTTP {status}, a redirect to {elsewhere}: another origin, which is not followed (the source's headers would go along). If you trust it, give the address it redirects to as the document"
        )),
        Ok(Ok(Some((status, _, _))))
            if status == reqwest::StatusCode::UNAUTHORIZED
                || status == reqwest::StatusCode::FORBIDDEN =>
        {
            let fix = if headers.is_empty() {
                "no credentials were sent: the source's headers go to the document only when `base_url` (`--base-url`) is on the document's origin. Give the API's URL there and the credentials with `--header 'NAME=${secret:KEY}'`, or save the document and give its file path"
            } else {
                "the source's headers were sent and not accepted; check them, or save the document and give its file path"
            };
            Err(format!(
                "fetching the OpenAPI document from {location} answered HTTP {status}: the document itself needs credentials, and {fix}"
            ))
        }
        Ok(Ok(Some((status, _, _)))) if !status.is_success() => Err(format!(
            "fetching the OpenAPI document from {location} answered HTTP {status}; check the URL (FastAPI serves it at /openapi.json)"
        )),
        Ok(Ok(Some((_, _, text)))) => Ok(text),
    }
}

/// The API's root: the document's first `servers` entry with its variables' defaults, made
/// absolute against the document's own URL when it is relative (FastAPI's is `/` or absent).
fn server_url(root: &Value, location: &str) -> Result<String, String> {
    let url = operations::first_server(root.get("servers")).unwrap_or_else(|| "/".into());
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(url.trim_end_matches('/').to_string());
    }
    let remote = location.starts_with("http://") || location.starts_with("https://");
    match reqwest::Url::parse(location).and_then(|base| base.join(&url)) {
        Ok(joined) if remote => Ok(joined.as_str().trim_end_matches('/').to_string()),
        _ => Err(format!(
            "the OpenAPI document {location} gives no absolute server URL (its `servers` says `{url}`), so capabilities does not know where to send requests; set `base_url` for the source (`--base-url URL`)"
        )),
    }
}

/// A network failure in plain words: what happened, without reqwest's layers.
fn network_reason(error: &reqwest::Error, target: &str) -> String {
    if let Some(reason) = crate::tls::explain_handshake_failure(error) {
        return format!("cannot connect securely to {target}: {reason}");
    }
    if error.is_timeout() {
        return format!("the connection to {target} timed out");
    }
    let innermost = chain(error);
    if error.is_connect() {
        return format!("cannot connect to {target}: {innermost}");
    }
    format!("the request to {target} failed: {innermost}")
}

fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(cause) = current.source() {
        current = cause;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_base_url_wins_over_the_servers_of_an_operation() {
        let api = "https://api.example/v1";
        let elsewhere = Some("https://evil.example/");
        assert_eq!(operation_base(api, true, elsewhere), api);
        assert_eq!(
            operation_base(api, true, Some("https://api.example/v2")),
            api
        );
        // Without one, the document's own server for the operation, whose origin the call
        // then checks against the API's.
        let moved = operation_base(api, false, elsewhere);
        assert_eq!(moved, "https://evil.example");
        assert!(!same_origin(&moved, api));
        let beside = operation_base(api, false, Some("https://api.example/v2"));
        assert!(same_origin(&beside, api));
        // A relative server is no server of its own.
        assert_eq!(operation_base(api, false, Some("/v2")), api);
    }
}
