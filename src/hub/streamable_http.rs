//! The hub's Streamable HTTP transport (`hub serve --http`): rmcp's `StreamableHttpService` at
//! `/mcp`, serving the same [`Hub`] as stdio. 2026-07-28 requests are stateless; older clients
//! get sessions (`Mcp-Session-Id`). rmcp checks `Host` against the allowed hosts (DNS-rebinding
//! protection) and the MCP headers; this module adds what it does not do:
//!
//! - every request needs `Authorization: Bearer <token>`, looked up by hash in the state store
//!   on each request (so `token revoke` in another process takes effect on the next one), and the
//!   accepted token rides in the request's extensions to the bridge, which checks it per call;
//! - a request for an unknown or ended session gets 404 with `MCP_SESSION_UNAVAILABLE` and a
//!   recovery object instead of rmcp's plain-text body.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::Hub;
use crate::runs::RunsStore;

/// JSON-RPC code of a refused bearer token (in the range MCP leaves to implementations).
const UNAUTHORIZED: i64 = -32001;
/// JSON-RPC code of an unknown or ended session (ditto).
const SESSION_UNAVAILABLE: i64 = -32002;

/// What the door checks on each request.
struct Door {
    store: Arc<RunsStore>,
    /// The profile this hub serves; a token bound to another profile is refused.
    profile: Option<String>,
}

/// Where and for whom the hub listens.
pub struct HttpOptions {
    pub listener: TcpListener,
    /// Host names (or `host:port`) accepted in the `Host` header besides loopback.
    pub extra_hosts: Vec<String>,
    pub profile: Option<String>,
}

/// Serves `hub` on `options.listener` until the process ends.
pub async fn serve_http(
    hub: Hub,
    store: Arc<RunsStore>,
    options: HttpOptions,
) -> anyhow::Result<()> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(options.extra_hosts);
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let service = StreamableHttpService::new(
        move || Ok(hub.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let door = Arc::new(Door {
        store,
        profile: options.profile,
    });
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(door, authorize));
    axum::serve(options.listener, router).await?;
    Ok(())
}

/// Whether binding `address` exposes the hub beyond this machine.
pub fn is_remote(address: &SocketAddr) -> bool {
    !address.ip().is_loopback()
}

/// Lets a request through only with an active bearer token for this hub's profile, and turns
/// rmcp's plain "session not found" into the recovery contract.
async fn authorize(State(door): State<Arc<Door>>, mut request: Request, next: Next) -> Response {
    let Some(secret) = bearer(request.headers()) else {
        return unauthorized(
            "this hub needs `Authorization: Bearer <token>`; create a token with `capabilities token create NAME`",
        );
    };
    let token = match door.store.token_for_secret(secret) {
        Ok(Some(token)) => token,
        Ok(None) => {
            return unauthorized(
                "the bearer token is unknown, revoked or expired; `capabilities token list` shows the valid ones",
            );
        }
        Err(e) => {
            tracing::warn!("cannot check a bearer token: {e}");
            return error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                UNAUTHORIZED,
                "the hub cannot read its token store right now; try again",
                None,
            );
        }
    };
    if let Some(profile) = &token.profile
        && door.profile.as_ref() != Some(profile)
    {
        let serving = door
            .profile
            .as_deref()
            .map_or("no profile".to_string(), |p| format!("profile `{p}`"));
        return error_response(
            StatusCode::FORBIDDEN,
            UNAUTHORIZED,
            &format!(
                "the token `{}` is for profile `{profile}`, and this hub serves {serving}; use a token for this hub or start `hub serve --profile {profile}`",
                token.name
            ),
            None,
        );
    }
    let had_session = request.headers().contains_key("mcp-session-id");
    request.extensions_mut().insert(token);
    let response = next.run(request).await;
    // rmcp answers an unknown session with 404 and a text body; a 404 for a modern request
    // (unknown method) is JSON and stays as it is.
    let is_text = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_none_or(|v| v.as_bytes().starts_with(b"text/plain"));
    if had_session && response.status() == StatusCode::NOT_FOUND && is_text {
        return session_unavailable();
    }
    response
}

/// The token of an `Authorization: Bearer …` header (the scheme is case-insensitive).
fn bearer(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn unauthorized(message: &str) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, UNAUTHORIZED, message, None);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// 404 with the spec's recovery contract. It names neither the session id nor the token.
fn session_unavailable() -> Response {
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
fn error_response(status: StatusCode, code: i64, message: &str, data: Option<Value>) -> Response {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": error });
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
