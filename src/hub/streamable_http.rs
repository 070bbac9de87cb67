//! The hub's Streamable HTTP transport (`hub serve --http`): rmcp's `StreamableHttpService` at
//! `/mcp`, serving the same [`Hub`] as stdio. 2026-07-28 requests are stateless; older clients
//! get sessions (`Mcp-Session-Id`). rmcp checks the MCP headers; this module adds what it does
//! not do, in this order:
//!
//! 1. the `Host` check (`host`, DNS-rebinding protection), then the `Origin` check (`origin`),
//!    both before the token: a page elsewhere can neither use a token it got hold of nor learn
//!    from 401-or-not whether a token is valid, and costs no lookup;
//! 2. every request needs `Authorization: Bearer <token>`, looked up by hash in the state store
//!    on each request (so `token revoke` in another process takes effect on the next one), and
//!    the accepted token rides in the request's extensions to the bridge, which checks it per
//!    call;
//! 3. a POST body is read within `--body-timeout` and must be JSON-RPC (`message`); batches are
//!    served in 2025-03-26 sessions (`batch`) and refused after;
//! 4. a request for an unknown or ended session gets 404 with `MCP_SESSION_UNAVAILABLE` and a
//!    recovery object instead of rmcp's plain-text body, and `DELETE` of a session 204.
//!
//! Connections are accepted by `connections`, which bounds their number and idle time.

mod batch;
mod connections;
mod host;
mod in_flight;
mod message;
mod origin;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures::StreamExt;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::Hub;
use crate::runs::{Store, TokenRecord};
pub use connections::Limits as HttpLimits;
pub use origin::Origin;
use origin::Origins;

/// JSON-RPC code of a refused bearer token (in the range MCP leaves to implementations).
const UNAUTHORIZED: i64 = -32001;
/// JSON-RPC code of an unknown or ended session (ditto).
const SESSION_UNAVAILABLE: i64 = -32002;
/// JSON-RPC code of a request from a web page the hub does not serve (ditto).
const ORIGIN_REFUSED: i64 = -32003;
/// JSON-RPC code of a request refused because the hub serves its most connections (ditto).
const OVERLOADED: i64 = -32004;
/// JSON-RPC code of a request whose body did not arrive in time (ditto).
const TOO_SLOW: i64 = -32005;
/// The largest request body read (rmcp's default limit, kept for both).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// What a 503 asks a client to wait before it tries again, in seconds.
const RETRY_AFTER_SECS: u64 = 2;

/// rmcp's Streamable HTTP service for the hub.
type Mcp = StreamableHttpService<Hub, LocalSessionManager>;

/// What the hub checks and serves on each request.
struct Door {
    store: Store,
    /// The profile this hub serves; a token bound to another profile is refused.
    profile: Option<String>,
    hosts: host::Hosts,
    origins: Origins,
    service: Mcp,
    sessions: Arc<LocalSessionManager>,
    /// Who opened each session and what it may send: a session id another token holder learns
    /// (a log, a proxy) does not let them send in it or end it.
    sessions_opened: std::sync::Mutex<HashMap<String, Opened>>,
    /// The ids of each session's requests still being answered.
    in_flight: in_flight::InFlight,
    body_timeout: Duration,
}

/// What the hub keeps of a session it opened.
#[derive(Clone)]
struct Opened {
    /// The token it was opened with (`name@created_at_ms`).
    owner: String,
    /// The protocol version its `initialize` asked for.
    version: Option<String>,
}

/// The version an `initialize` asked for, carried from the request to where the session it
/// opens is recorded. The hub answers with the version asked for whenever it knows it (rmcp's
/// negotiation), so this is the session's version.
#[derive(Clone)]
struct AskedVersion(String);

/// The versions of MCP that have JSON-RPC batches; 2025-06-18 removed them.
const VERSIONS_WITH_BATCHES: [&str; 2] = ["2024-11-05", "2025-03-26"];

/// How many sessions' records are kept before those of ended sessions are let go.
const OWNERS_KEPT: usize = 256;
/// How many sessions one token may hold open at once, and the hub in all (each holds about
/// 100 KB until it is ended or idles out after rmcp's five minutes): enough for every client
/// a person runs, few enough that opening sessions in a loop cannot exhaust memory.
const SESSIONS_PER_TOKEN: usize = 64;
const SESSIONS_IN_ALL: usize = 1024;

/// Where and for whom the hub listens.
pub struct HttpOptions {
    pub listener: TcpListener,
    /// Host names (or `host:port`) accepted in the `Host` header besides loopback.
    pub extra_hosts: Vec<String>,
    /// Web origins whose pages may call the hub besides its own (`--allow-origin`).
    pub allowed_origins: Vec<Origin>,
    pub profile: Option<String>,
    pub limits: HttpLimits,
    /// How long a request's body may take to arrive once its head has.
    pub body_timeout: Duration,
}

/// Serves `hub` on `options.listener` until the process ends.
pub async fn serve_http(hub: Hub, store: Store, options: HttpOptions) -> anyhow::Result<()> {
    // The first `execute` should not pay for making a JavaScript runtime.
    crate::sandbox::warm_up();
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(options.extra_hosts);
    let names = host::Hosts::new(&hosts);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(hub.clone()), sessions.clone(), config);
    let door = Arc::new(Door {
        store,
        profile: options.profile,
        hosts: names,
        origins: Origins::new(options.allowed_origins),
        service,
        sessions,
        sessions_opened: std::sync::Mutex::default(),
        in_flight: in_flight::InFlight::default(),
        body_timeout: options.body_timeout,
    });
    let limits = options.limits;
    let handle = move |request: Request<Incoming>| {
        let door = door.clone();
        async move { door.answer(request.map(Body::new)).await }
    };
    let busy = move || overloaded(limits.max_connections);
    connections::serve(options.listener, limits, handle, busy).await?;
    Ok(())
}

/// Whether binding `address` exposes the hub beyond this machine.
pub fn is_remote(address: &SocketAddr) -> bool {
    !address.ip().is_loopback()
}

impl Door {
    /// Answers one request: the Host and Origin checks, a CORS preflight, the token, then
    /// rmcp.
    async fn answer(&self, request: Request<Body>) -> Response<Body> {
        if let Err(refused) = self.hosts.check(request.uri(), request.headers()) {
            tracing::info!("refused a request by its Host: {}", refused.message);
            let status = if refused.bad_request {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::FORBIDDEN
            };
            return error_response(status, ORIGIN_REFUSED, &refused.message, None);
        }
        let path = request.uri().path();
        if path != "/mcp" && path != "/mcp/" {
            return error_response(
                StatusCode::NOT_FOUND,
                -32601,
                "the MCP endpoint of this hub is /mcp",
                None,
            );
        }
        let origin = match self.origins.check(request.headers()) {
            Ok(origin) => origin,
            Err(origin::Refused(message)) => {
                tracing::info!("refused a request from a web page: {message}");
                return error_response(StatusCode::FORBIDDEN, ORIGIN_REFUSED, &message, None);
            }
        };
        let mut response = match &origin {
            // A browser's preflight carries no token: answered for an allowed origin alone.
            Some(origin)
                if request.method() == Method::OPTIONS
                    && request
                        .headers()
                        .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) =>
            {
                return origin::preflight(request.headers(), origin.clone())
                    .map(|()| Body::empty());
            }
            _ => self.authorized(request).await,
        };
        if let Some(origin) = origin {
            origin::allow(response.headers_mut(), origin);
        }
        response
    }

    /// Lets a request through only with an active bearer token for this hub's profile.
    async fn authorized(&self, mut request: Request<Body>) -> Response<Body> {
        let owner = match self.token(request.headers()).await {
            Ok(token) => {
                let owner = format!("{}@{}", token.name, token.created_at_ms);
                request.extensions_mut().insert(token);
                owner
            }
            Err(refusal) => return *refusal,
        };
        let session = session_id(request.headers());
        if let Some(session) = &session
            && self
                .opened_as(session)
                .is_some_and(|opened| opened.owner != owner)
        {
            // Answered as an unknown session: whose sessions exist is not for other tokens to
            // learn.
            tracing::info!("refused a request in a session another token opened");
            return session_unavailable();
        }
        let had_session = session.is_some();
        let is_delete = request.method() == Method::DELETE;
        // Ending a session that does not exist is answered as ending another token's is: which
        // sessions exist is not for a token holder to probe.
        if is_delete
            && let Some(session) = &session
            && !self
                .sessions
                .sessions
                .read()
                .await
                .contains_key(session.as_str())
        {
            return session_unavailable();
        }
        let is_post = request.method() == Method::POST;
        let response = if is_post {
            self.post(request).await
        } else {
            self.service.handle(request).await.map(Body::new)
        };
        if had_session && is_session_not_found(&response) {
            return session_unavailable();
        }
        if !is_post && response.status() == StatusCode::BAD_REQUEST && !is_json(&response) {
            return plain_refusal_as_json(response, had_session).await;
        }
        if !had_session && let Some(opened) = session_id(response.headers()) {
            if let Some(refusal) = self.over_session_limit(&opened, &owner).await {
                return refusal;
            }
            let version = response
                .extensions()
                .get::<AskedVersion>()
                .map(|asked| asked.0.clone());
            self.opened(opened, Opened { owner, version }).await;
        }
        // rmcp answers an ended session 202; clients (the Python SDK among them) expect the
        // 200 or 204 of a completed DELETE and warn on anything else.
        if is_delete && response.status() == StatusCode::ACCEPTED {
            let mut ended = Response::new(Body::empty());
            *ended.status_mut() = StatusCode::NO_CONTENT;
            return ended;
        }
        response
    }

    fn opened_as(&self, session: &str) -> Option<Opened> {
        self.sessions_opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    /// The refusal of the session `owner` just opened when it is one too many (then ended at
    /// once): for the token ([`SESSIONS_PER_TOKEN`]) or for the hub ([`SESSIONS_IN_ALL`]).
    async fn over_session_limit(&self, opened: &str, owner: &str) -> Option<Response<Body>> {
        let message = {
            let live = self.sessions.sessions.read().await;
            let owners = self
                .sessions_opened
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let held = owners
                .iter()
                .filter(|(id, opened)| opened.owner == owner && live.contains_key(id.as_str()))
                .count();
            if held >= SESSIONS_PER_TOKEN {
                format!(
                    "this token already holds {held} open sessions on this hub, the most one token may; end the ones a client no longer uses (DELETE /mcp with their Mcp-Session-Id), or wait for idle ones to close after five minutes"
                )
            } else if live.len() > SESSIONS_IN_ALL {
                format!(
                    "this hub already holds {SESSIONS_IN_ALL} open sessions, the most it keeps; try again once clients end theirs or idle ones close after five minutes"
                )
            } else {
                return None;
            }
        };
        tracing::warn!("refused a new session: {message}");
        if let Err(e) = self.sessions.close_session(&opened.into()).await {
            tracing::debug!("cannot end the refused session: {e}");
        }
        Some(error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            OVERLOADED,
            &message,
            None,
        ))
    }

    /// Records `session` as `opened`, letting go of the records of ended sessions once there
    /// are many.
    async fn opened(&self, session: String, opened: Opened) {
        let full = self
            .sessions_opened
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
            >= OWNERS_KEPT;
        let live: Option<Vec<String>> = if full {
            let sessions = self.sessions.sessions.read().await;
            Some(sessions.keys().map(|id| id.to_string()).collect())
        } else {
            None
        };
        let mut owners = self
            .sessions_opened
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(live) = live {
            owners.retain(|id, _| live.contains(id));
        }
        owners.insert(session, opened);
    }

    /// The token of the request, or the refusal to send.
    async fn token(&self, headers: &http::HeaderMap) -> Result<TokenRecord, Box<Response<Body>>> {
        let Some(secret) = bearer(headers) else {
            return Err(Box::new(unauthorized(
                "this hub needs `Authorization: Bearer <token>`; create a token with `capabilities token create NAME`",
            )));
        };
        let token = match self.store.bearer_tokens().for_secret(secret).await {
            Ok(Some(token)) => token,
            Ok(None) => {
                return Err(Box::new(unauthorized(
                    "the bearer token is unknown, revoked or expired; `capabilities token list` shows the valid ones",
                )));
            }
            Err(e) => {
                tracing::warn!("cannot check a bearer token: {e}");
                return Err(Box::new(error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    UNAUTHORIZED,
                    "the hub cannot read its token store right now; try again",
                    None,
                )));
            }
        };
        if let Some(profile) = &token.profile
            && self.profile.as_ref() != Some(profile)
        {
            let serving = self
                .profile
                .as_deref()
                .map_or("no profile".to_string(), |p| format!("profile `{p}`"));
            return Err(Box::new(error_response(
                StatusCode::FORBIDDEN,
                UNAUTHORIZED,
                &format!(
                    "the token `{}` is for profile `{profile}`, and this hub serves {serving}; use a token for this hub or start `hub serve --profile {profile}`",
                    token.name
                ),
                None,
            )));
        }
        Ok(token)
    }

    /// A POST: its body read in time, checked, and handed to rmcp (a batch message by message).
    async fn post(&self, request: Request<Body>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body, &parts.headers, self.body_timeout).await {
            Ok(bytes) => bytes,
            Err(refusal) => return refusal,
        };
        match message::read(parts.headers.get(header::CONTENT_TYPE), &bytes) {
            Err(refusal) => refusal_response(&refusal),
            Ok(message::Body::One(message)) => {
                let claims = match self.claim_ids(&parts.headers, std::slice::from_ref(&message)) {
                    Ok(claims) => claims,
                    Err(refusal) => return refusal_response(&refusal),
                };
                let asked = asked_version(&parts.headers, &message);
                let request = Request::from_parts(parts, Body::from(bytes));
                let mut response = self.service.handle(request).await.map(Body::new);
                if let Some(asked) = asked {
                    response.extensions_mut().insert(asked);
                }
                in_flight::held(response, claims)
            }
            Ok(message::Body::Batch(items)) => {
                let session = session_id(&parts.headers).and_then(|id| self.opened_as(&id));
                if let Some(refusal) = batch_refusal(&parts.headers, session.as_ref(), &items) {
                    return refusal_response(&refusal);
                }
                match self.claim_ids(&parts.headers, &items) {
                    Ok(claims) => {
                        in_flight::held(batch::serve(&self.service, parts, items).await, claims)
                    }
                    Err(refusal) => refusal_response(&refusal),
                }
            }
        }
    }

    /// Holds the ids of the requests among `messages` in their session until they are
    /// answered, or refuses them all (nothing runs) when one of those ids is still in flight
    /// there. Outside a session (a 2026-07-28 request stands alone) nothing is held.
    fn claim_ids(
        &self,
        headers: &http::HeaderMap,
        messages: &[Value],
    ) -> Result<Vec<in_flight::Claim>, message::Refusal> {
        let Some(session) = headers.get("mcp-session-id") else {
            return Ok(Vec::new());
        };
        let session = String::from_utf8_lossy(session.as_bytes());
        let mut claims = Vec::new();
        for message in messages.iter().filter(|m| m.get("method").is_some()) {
            let id = message::reply_id(message);
            if id.is_null() {
                continue;
            }
            match self.in_flight.claim(&session, &id) {
                Some(claim) => claims.push(claim),
                None => {
                    return Err(message::Refusal {
                        status: StatusCode::BAD_REQUEST,
                        id: id.clone(),
                        code: -32600,
                        message: format!(
                            "a request with the id {id} is still being answered in this session, so this one was not run; give each request its own id"
                        ),
                    });
                }
            }
        }
        Ok(claims)
    }
}

/// Why a batch may not be served with these headers in this `session`: batches exist up to MCP
/// 2025-03-26 (2025-06-18 removed them), and only inside a session, since `initialize` may not
/// be batched. A 2025-03-26 client sends no `MCP-Protocol-Version` (the header came with
/// 2025-06-18), so without it the version the session was opened with decides. Two requests with one id
/// are refused before either runs: answers find their request by id, so one of the two would
/// run and never be answered.
fn batch_refusal(
    headers: &http::HeaderMap,
    session: Option<&Opened>,
    items: &[Value],
) -> Option<message::Refusal> {
    let refuse = |message: String| message::Refusal {
        status: StatusCode::BAD_REQUEST,
        id: Value::Null,
        code: -32600,
        message,
    };
    let removed = |what: &str, version: &str| {
        let shown: String = version.chars().take(40).collect();
        Some(refuse(format!(
            "JSON-RPC batches were removed in MCP 2025-06-18, and {what} {shown}; send one message per POST"
        )))
    };
    if let Some(version) = headers.get("mcp-protocol-version") {
        let version = String::from_utf8_lossy(version.as_bytes());
        if version != "2025-03-26" {
            return removed("this request is", &version);
        }
    }
    // Without the header, the version the session was opened with decides: the transport's
    // "assume 2025-03-26" is for a server with no other way to know.
    if let Some(version) = session.and_then(|opened| opened.version.as_deref())
        && !VERSIONS_WITH_BATCHES.contains(&version)
    {
        return removed("this session was opened with", version);
    }
    if !headers.contains_key("mcp-session-id") {
        return Some(refuse(
            "a JSON-RPC batch (MCP 2025-03-26) belongs to a session: send `initialize` on its own first, then the batch with the `Mcp-Session-Id` it returns".into(),
        ));
    }
    let mut ids = std::collections::HashSet::new();
    for item in items.iter().filter(|item| item.get("method").is_some()) {
        let id = message::reply_id(item);
        if !id.is_null() && !ids.insert(id.to_string()) {
            return Some(refuse(format!(
                "two requests of this batch have the id {id}; give each request its own id (nothing in the batch was run)"
            )));
        }
    }
    None
}

/// The version an `initialize` outside a session asks for.
fn asked_version(headers: &http::HeaderMap, message: &Value) -> Option<AskedVersion> {
    if headers.contains_key("mcp-session-id")
        || message.get("method").and_then(Value::as_str) != Some("initialize")
    {
        return None;
    }
    let asked = message.pointer("/params/protocolVersion")?.as_str()?;
    Some(AskedVersion(asked.to_string()))
}

fn is_json<B>(response: &Response<B>) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

/// rmcp's plain-text 400 to a GET or DELETE as a JSON-RPC error a client can read, with what to
/// send instead when it was the session id that was missing.
async fn plain_refusal_as_json(response: Response<Body>, had_session: bool) -> Response<Body> {
    let said = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let message = if !had_session && said.contains("Session ID is required") {
        "a GET (the session's event stream) or DELETE (ending the session) needs the `Mcp-Session-Id` header that `initialize` answered with; a 2026-07-28 client has no session and sends neither".to_string()
    } else {
        said
    };
    error_response(StatusCode::BAD_REQUEST, -32600, &message, None)
}

/// The body of a POST, whole, or the answer when it is too large or too slow.
async fn read_body(
    body: Body,
    headers: &http::HeaderMap,
    deadline: Duration,
) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            &format!(
                "the request body is larger than {} MiB; send a shorter message (a script that fetches its data through the tools rather than carrying it)",
                MAX_BODY_BYTES / (1024 * 1024)
            ),
            None,
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut chunks = body.into_data_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| {
                error_response(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    &format!("the request body could not be read: {e}"),
                    None,
                )
            })?;
            if bytes.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(bytes))
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(read) => read,
        Err(_) => {
            let mut response = error_response(
                StatusCode::REQUEST_TIMEOUT,
                TOO_SLOW,
                &format!(
                    "the request body did not arrive within {} s of its head (--body-timeout); send the whole message at once",
                    deadline.as_secs()
                ),
                None,
            );
            // The rest of the body may still trickle in: the connection is not reused.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
    }
}

/// Whether `response` is rmcp's plain-text 404 for an unknown session (a 404 for a modern
/// request, an unknown method, is JSON and stays as it is).
fn is_session_not_found<B>(response: &Response<B>) -> bool {
    response.status() == StatusCode::NOT_FOUND
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_none_or(|v| v.as_bytes().starts_with(b"text/plain"))
}

/// 503 for a connection past `--max-connections`.
fn overloaded(max_connections: usize) -> Response<Body> {
    let mut response = error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        OVERLOADED,
        &format!(
            "the hub is serving its most connections at once ({max_connections}); try again shortly, or start it with a higher --max-connections"
        ),
        None,
    );
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The token of an `Authorization: Bearer …` header (the scheme is case-insensitive).
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn unauthorized(message: &str) -> Response<Body> {
    let mut response = error_response(StatusCode::UNAUTHORIZED, UNAUTHORIZED, message, None);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The `Mcp-Session-Id` of a request or response.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// 404 with the spec's recovery contract. It names neither the session id nor the token.
fn session_unavailable() -> Response<Body> {
    error_response(
        StatusCode::NOT_FOUND,
        SESSION_UNAVAILABLE,
        "MCP_SESSION_UNAVAILABLE: this session is unknown or has ended; initialize a new one",
        Some(json!({
            "code": "MCP_SESSION_UNAVAILABLE",
            "recovery": {
                "action": "initialize_new_session",
                "execute_request": "unchanged",
                "provider_execution": "not_started",
                "note": "Scripts that do not depend on earlier session state can be sent again unchanged."
            }
        })),
    )
}

/// A JSON-RPC error (id null: the request was not read) with an HTTP status.
fn error_response(
    status: StatusCode,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response<Body> {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json_response(
        status,
        &json!({ "jsonrpc": "2.0", "id": null, "error": error }),
    )
}

/// A message refused before rmcp saw it, answered with its id.
fn refusal_response(refusal: &message::Refusal) -> Response<Body> {
    json_response(refusal.status, &refusal.to_message())
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_a_bearer_token() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  cap_x "),
        );
        assert_eq!(bearer(&headers), Some("cap_x"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn only_loopback_addresses_are_local() {
        assert!(!is_remote(&"127.0.0.1:1".parse().unwrap()));
        assert!(!is_remote(&"[::1]:1".parse().unwrap()));
        assert!(is_remote(&"0.0.0.0:1".parse().unwrap()));
        assert!(is_remote(&"192.168.1.2:1".parse().unwrap()));
    }
}
