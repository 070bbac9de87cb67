//! Which web pages may call the hub: the `Origin` check (the MCP transport asks servers to
//! validate it against DNS rebinding and cross-site requests) and the CORS answers for the
//! origins it lets through.
//!
//! A request without `Origin` comes from a program, not a page, and passes. A page may call the
//! hub when its origin is the hub's own, that is when it names the host and port the request is
//! addressed to (the `Host` header, which the `host` check limits to loopback and
//! `--allowed-host`), with the loopback names counting as one host; or when `--allow-origin`
//! lists it. Everything else, `Origin: null` included, is refused.

use http::{HeaderMap, HeaderValue, header};
use url::Url;

/// An origin as the browser serializes it: scheme, host and port (the scheme's default when
/// the origin names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Reads an `--allow-origin` value; the error says what to write instead.
    pub fn parse_allowed(text: &str) -> Result<Origin, String> {
        if text.trim().eq_ignore_ascii_case("null") {
            return Err(
                "--allow-origin null: `null` is the origin of sandboxed and local-file pages, so allowing it would let any such page call the hub; serve the page from a real origin and allow that one".into(),
            );
        }
        // A trailing slash is an easy slip when copying a page's address.
        Origin::parse(text.trim().trim_end_matches('/')).ok_or_else(|| {
            format!(
                "--allow-origin `{text}`: write an origin as scheme://host[:port], e.g. https://app.example.com or http://localhost:6274"
            )
        })
    }

    /// An origin exactly as a browser sends it: http or https, a host, maybe a port, nothing
    /// after (a path, even `/`, or credentials mean it is not an origin).
    fn parse(text: &str) -> Option<Origin> {
        let url = Url::parse(text).ok()?;
        let bare = url.path() == "/"
            && !text.ends_with('/')
            && url.query().is_none()
            && url.fragment().is_none()
            && url.username().is_empty()
            && url.password().is_none();
        if !bare || !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Origin {
            scheme: url.scheme().to_string(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }

    /// Whether this origin is the one the request is addressed to (`host` is its `Host`).
    fn is_addressed_by(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<http::uri::Authority>() else {
            return false;
        };
        let name = authority.host().to_ascii_lowercase();
        let default = if self.scheme == "https" { 443 } else { 80 };
        authority.port_u16().unwrap_or(default) == self.port
            && (name == self.host || (is_loopback(&name) && is_loopback(&self.host)))
    }
}

/// The loopback names the hub answers to by default; a page on one may call the hub on another.
fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// Why a request's `Origin` was refused, worded for the person who set up the page.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

/// The origins allowed besides the hub's own.
pub struct Origins {
    allowed: Vec<Origin>,
}

impl Origins {
    pub fn new(allowed: Vec<Origin>) -> Origins {
        Origins { allowed }
    }

    /// The request's `Origin` when it has one and may call the hub (for the CORS headers),
    /// `None` when it has none, or why it is refused.
    pub fn check(&self, headers: &HeaderMap) -> Result<Option<HeaderValue>, Refused> {
        let Some(value) = headers.get(header::ORIGIN) else {
            return Ok(None);
        };
        // A browser sends one; with two, checking either would let the other through.
        let sent = headers.get_all(header::ORIGIN).iter().count();
        if sent > 1 {
            return Err(Refused(format!(
                "the request carries {sent} Origin headers; send one (a browser always does)"
            )));
        }
        let text = String::from_utf8_lossy(value.as_bytes());
        let shown: String = text.chars().take(100).collect();
        if text == "null" {
            return Err(Refused(
                "the request's Origin is `null` (a sandboxed or local-file page); the hub refuses it because any such page sends it, and --allow-origin cannot allow it: serve the page from a real origin and pass --allow-origin with that".into(),
            ));
        }
        let Some(origin) = Origin::parse(&text) else {
            return Err(Refused(format!(
                "the request's Origin `{shown}` is not a web origin (scheme://host[:port]); the hub refuses requests from web pages it cannot place. A trusted page's origin can be allowed with --allow-origin"
            )));
        };
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        if host.is_some_and(|host| origin.is_addressed_by(host)) || self.allowed.contains(&origin) {
            return Ok(Some(value.clone()));
        }
        Err(Refused(format!(
            "a web page at `{shown}` may not call this hub (the Origin check guards against DNS rebinding and cross-site requests); if you trust that page, start the hub with `--allow-origin {shown}`"
        )))
    }
}

/// The headers that let the page at `origin` (already allowed) read the answer, and see the
/// session id a legacy client needs.
pub fn allow(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("mcp-session-id, mcp-protocol-version"),
    );
    headers.append(header::VARY, HeaderValue::from_static("origin"));
}

/// The answer to a browser's preflight from an allowed origin: the methods of the MCP endpoint
/// and the headers the page asked for (a page the user allowed may send any header).
pub fn preflight(request: &HeaderMap, origin: HeaderValue) -> http::Response<()> {
    let mut response = http::Response::new(());
    *response.status_mut() = http::StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    allow(headers, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE"),
    );
    if let Some(asked) = request.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(origin: &str, host: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        headers
    }

    #[test]
    fn the_hubs_own_origin_passes_under_each_loopback_name() {
        let origins = Origins::new(vec![]);
        for origin in [
            "http://127.0.0.1:8931",
            "http://localhost:8931",
            "http://[::1]:8931",
            "http://LOCALHOST:8931",
        ] {
            assert!(
                origins.check(&request(origin, "127.0.0.1:8931")).is_ok(),
                "{origin}"
            );
        }
        // Behind TLS termination: the page and the request name the same public host.
        assert!(
            origins
                .check(&request("https://hub.example.com", "hub.example.com"))
                .is_ok()
        );
        assert!(origins.check(&HeaderMap::new()).is_ok());
    }

    #[test]
    fn another_port_host_or_null_is_refused() {
        let origins = Origins::new(vec![]);
        for origin in [
            "http://127.0.0.1:1",
            "https://evil.example",
            "http://127.0.0.1.evil.example:8931",
            "null",
            "http://127.0.0.1:8931/",
            "file://",
            "not an origin",
        ] {
            let refused = origins.check(&request(origin, "127.0.0.1:8931"));
            assert!(refused.is_err(), "{origin}");
        }
        let Err(Refused(message)) = origins.check(&request("https://evil.example", "x:1")) else {
            panic!("refused");
        };
        assert!(
            message.contains("`https://evil.example`")
                && message.contains("--allow-origin https://evil.example"),
            "{message}"
        );
        // The hub's own origin first, another after: refused, whichever would be read.
        let mut twice = request("http://127.0.0.1:8931", "127.0.0.1:8931");
        twice.append(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        let Err(Refused(message)) = origins.check(&twice) else {
            panic!("two Origin headers are refused");
        };
        assert!(message.contains("2 Origin headers"), "{message}");
    }

    #[test]
    fn listed_origins_pass_and_null_cannot_be_listed() {
        let app = Origin::parse_allowed("https://App.example.com").unwrap();
        let origins = Origins::new(vec![app]);
        assert!(
            origins
                .check(&request("https://app.example.com", "127.0.0.1:8931"))
                .is_ok()
        );
        assert!(
            origins
                .check(&request("https://app.example.com:444", "127.0.0.1:8931"))
                .is_err()
        );
        let null = Origin::parse_allowed("null").unwrap_err();
        assert!(null.contains("sandboxed and local-file pages"), "{null}");
        for bad in ["app.example.com", "https://app.example.com/path", "ftp://x"] {
            let err = Origin::parse_allowed(bad).unwrap_err();
            assert!(err.contains("scheme://host[:port]"), "{bad}: {err}");
        }
    }
}
