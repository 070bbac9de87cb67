//! A Streamable HTTP source: the rmcp reqwest transport with the connection's headers (references
//! resolved) on every request, and plain-language reasons when it cannot connect.

use std::collections::HashMap;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::service::ClientInitializeError;
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
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::from_config(config))
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
            "no answer from {url} within {} s; check that the server is running and the URL is right, or raise `connect_timeout` for source `{source}`",
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
