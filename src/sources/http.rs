//! A Streamable HTTP source: the rmcp reqwest transport with the connection's headers (references
//! resolved) on every request, over TLS for an `https://` URL (see [`crate::tls`]), and
//! plain-language reasons when it cannot connect.

use std::collections::HashMap;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::ClientInitializeError;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};

use super::error::{chain, handshake_cause, io_kind};

/// Builds the transport for `url` with `headers` sent on every request. Header errors name the
/// header, never its value (which may hold a secret).
pub(crate) fn transport(
    source: &str,
    url: &str,
    headers: Vec<(String, String)>,
) -> Result<impl Transport<RoleClient> + 'static, String> {
    Ok(StreamableHttpClientTransport::with_client(
        client(source, url)?,
        config(source, url, headers)?,
    ))
}

/// [`transport`] for a signed-in OAuth connection: `oauth` puts its access token on every
/// request, refreshes it before it expires, and once after the server refuses it.
pub(crate) fn signed_in_transport(
    source: &str,
    url: &str,
    headers: Vec<(String, String)>,
    oauth: AuthClient<reqwest::Client>,
) -> Result<impl Transport<RoleClient> + 'static, String> {
    Ok(StreamableHttpClientTransport::with_client(
        oauth,
        config(source, url, headers)?,
    ))
}

/// The OAuth client of a connection signed in through `manager`.
pub(crate) fn oauth_client(
    source: &str,
    url: &str,
    manager: AuthorizationManager,
) -> Result<AuthClient<reqwest::Client>, String> {
    Ok(AuthClient::new(client(source, url)?, manager))
}

fn config(
    source: &str,
    url: &str,
    headers: Vec<(String, String)>,
) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str()).map_err(|_| {
            format!(
                "source `{source}`: `{name}` is not a valid HTTP header name; fix it in the config"
            )
        })?;
        let mut value = HeaderValue::try_from(value).map_err(|_| {
            format!(
                "source `{source}`: the value of header `{name}` is not a valid HTTP header value (after resolving its references); check it for line breaks or control characters"
            )
        })?;
        // Keeps credentials out of any debug output of the request.
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom))
}

/// The HTTP client for one source: rmcp's default client (same-origin 307/308 redirects only;
/// no idle connection pool over plain HTTP), built here because rmcp's panics when it cannot be
/// built, which happens when the trust store holds no certificate (a wrong `SSL_CERT_FILE`, a
/// machine without CA certificates). Over HTTPS idle connections are kept: without them every
/// request pays a new TCP and TLS handshake, round trips to a remote server that cost far more
/// than the stall rmcp avoids (300 sequential calls to a local HTTPS server: 0.65 s without the
/// pool, 0.48 s with it, and no stall).
fn client(source: &str, url: &str) -> Result<reqwest::Client, String> {
    crate::tls::install_crypto_provider();
    let builder = reqwest::Client::builder().redirect(same_origin_redirects());
    let builder = if url.starts_with("https://") {
        builder
    } else {
        // rmcp's choice: reusing a connection whose last body was not read to the end stalls
        // ~40 ms on delayed ACKs.
        let builder = builder.pool_max_idle_per_host(0);
        // Plain HTTP never uses the trust store, so it need not load one (nor fail without
        // one); with no trusted authority, TLS could never succeed on this client anyway.
        builder.tls_certs_only([])
    };
    builder.build().map_err(|error| {
        format!(
            "source `{source}`: {}",
            crate::tls::explain_setup_failure(&innermost(&error))
        )
    })
}

/// rmcp's redirect policy (private there): follow only 307 and 308, which keep the method and
/// body, and only to the same origin, which keeps the session id and the custom headers (often
/// credentials) from reaching another host; at most 10 hops.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    const MAX_REDIRECTS: usize = 10;
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            // Only paths: the origin is unchanged, and a query string may carry credentials.
            tracing::debug!(
                status = %attempt.status(),
                from = attempt.previous().last().map(|url| url.path()).unwrap_or_default(),
                to = attempt.url().path(),
                "following a same-origin redirect; configure the new URL to skip it"
            );
            attempt.follow()
        }
    })
}

/// Why connecting to `url` failed, in words a user can act on.
pub(crate) fn explain_connect_failure(
    source: &str,
    url: &str,
    error: Option<&ClientInitializeError>,
    timeout: Duration,
) -> String {
    let Some(error) = error else {
        return format!(
            "no answer from {url} within {} s; check that the server is running and the URL is right, or raise `connect_timeout_secs` for source `{source}`",
            timeout.as_secs_f64()
        );
    };
    if error.is_authorization_required() {
        return format!(
            "{url} asks for authorization; give source `{source}` a header such as `Authorization = \"Bearer ${{secret:NAME}}\"` and store the token with `capabilities credential set NAME`"
        );
    }
    let cause = handshake_cause(error);
    let retry = format!("run `capabilities source test {source}` to try again");
    if let Some(reason) = crate::tls::explain_handshake_failure(cause) {
        return format!("cannot connect securely to {url}: {reason}; {retry}");
    }
    match cause.downcast_ref::<reqwest::Error>() {
        Some(network) if network.is_connect() || network.is_timeout() => {
            let reason = match io_kind(cause) {
                Some(std::io::ErrorKind::ConnectionRefused) => "connection refused".to_string(),
                Some(std::io::ErrorKind::TimedOut) => "the connection timed out".to_string(),
                // The innermost cause ("failed to lookup address information: …") says it all;
                // the layers above repeat the URL.
                _ => innermost(cause),
            };
            format!(
                "cannot connect to {url}: {reason}. Check that the server is running and the URL is right; {retry}"
            )
        }
        Some(_) => format!("the request to {url} failed: {}; {retry}", chain(cause)),
        // Anything past the network layer means something answered, just not MCP.
        None => format!(
            "{url} answered, but not as an MCP server ({}). Check the URL: a Streamable HTTP endpoint usually ends in `/mcp`; {retry}",
            chain(cause)
        ),
    }
}

fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(cause) = current.source() {
        current = cause;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::response::Redirect;
    use axum::routing::any;

    use super::*;

    /// The copy of rmcp's redirect policy follows what keeps the request whole and stays on the
    /// origin, and hands every other redirect back.
    #[tokio::test]
    async fn only_same_origin_307_and_308_redirects_are_followed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let port = listener.local_addr().expect("its address").port();
        let elsewhere = format!("http://localhost:{port}/mcp");
        let app = Router::new()
            .route("/mcp", any(|| async { "here" }))
            .route("/moved", any(|| async { Redirect::permanent("/mcp") }))
            .route(
                "/found",
                any(|| async { (StatusCode::FOUND, [(header::LOCATION, "/mcp")]) }),
            )
            .route(
                "/elsewhere",
                any(move || async move { Redirect::temporary(&elsewhere) }),
            );
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let base = format!("http://127.0.0.1:{port}");
        let client = client("test", &base).expect("a client");
        let status = |path: &'static str| {
            let request = client.post(format!("{base}{path}")).body("{}");
            async move { request.send().await.expect("an answer").status() }
        };
        assert_eq!(status("/moved").await, StatusCode::OK);
        // A 302 would turn the POST into a GET without its message.
        assert_eq!(status("/found").await, StatusCode::FOUND);
        // Another origin (localhost is not 127.0.0.1) would receive the session and headers.
        assert_eq!(status("/elsewhere").await, StatusCode::TEMPORARY_REDIRECT);
        server.abort();
    }
}
