//! Which names the hub answers to: the `Host` check against DNS rebinding, made first, before
//! the `Origin` check and the token. A page that rebinds its own name to 127.0.0.1 is
//! same-origin with itself, so the `Origin` check lets it through; if the token were looked up
//! before its `Host` was refused, the page could tell a valid token from an invalid one by the
//! answer (401 or 403). rmcp checks `Host` too, but only once a request reaches it.
//!
//! The names are the loopback ones and `--allowed-host`'s, each with or without a port (with
//! one, only that port). A request with two `Host` headers is refused (RFC 9112 asks for 400):
//! which one a proxy and the hub would each read is not known.

use http::uri::Authority;
use http::{HeaderMap, Uri, header};

/// Why a request's `Host` is refused: the status and the words.
pub struct Refused {
    pub bad_request: bool,
    pub message: String,
}

/// The names the hub answers to.
pub struct Hosts(Vec<(String, Option<u16>)>);

impl Hosts {
    /// `names` as `host` or `host:port` (IPv6 in brackets); unreadable ones match nothing.
    pub fn new(names: &[String]) -> Hosts {
        Hosts(
            names
                .iter()
                .map(|name| match Authority::try_from(name.trim()) {
                    Ok(authority) => (normalized(authority.host()), authority.port_u16()),
                    Err(_) => (normalized(name.trim()), None),
                })
                .collect(),
        )
    }

    /// Lets a request through when its `Host` (or, over HTTP/2, `:authority`) is one of the
    /// names.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        let bad = |message: &str| Refused {
            bad_request: true,
            message: message.to_string(),
        };
        let mut given = headers.get_all(header::HOST).iter();
        let authority = match (given.next(), given.next()) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "the request has two Host headers; send one, naming the hub's address",
                ));
            }
            (Some(host), None) => host
                .to_str()
                .ok()
                .and_then(|host| Authority::try_from(host).ok())
                .ok_or_else(|| bad("the Host header is not a host name (and port)"))?,
            (None, _) => uri.authority().cloned().ok_or_else(|| {
                bad("the request has no Host header; send one naming the hub's address")
            })?,
        };
        let host = normalized(authority.host());
        let port = authority.port_u16();
        let known = self
            .0
            .iter()
            .any(|(name, only)| *name == host && only.is_none_or(|only| Some(only) == port));
        if known {
            return Ok(());
        }
        Err(Refused {
            bad_request: false,
            message: format!(
                "this hub does not answer to the name `{}` (a web page reaching it under another name, as DNS rebinding does, is refused); if that is how clients reach it, start it with `--allowed-host {}`",
                crate::error_text::echo(authority.as_str()),
                crate::error_text::echo(&host)
            ),
        })
    }
}

/// A host name as compared: lower case, an IPv6 address without its brackets.
fn normalized(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn check(hosts: &Hosts, given: &[&str]) -> Result<(), Refused> {
        let mut headers = HeaderMap::new();
        for host in given {
            headers.append(header::HOST, HeaderValue::from_str(host).expect("a header"));
        }
        hosts.check(&Uri::from_static("/mcp"), &headers)
    }

    #[test]
    fn loopback_and_allowed_names_pass_and_others_are_refused() {
        let hosts = Hosts::new(&[
            "localhost".into(),
            "127.0.0.1".into(),
            "::1".into(),
            "hub.internal:8443".into(),
        ]);
        for fine in [
            "127.0.0.1:8931",
            "LOCALHOST:1",
            "[::1]:8931",
            "localhost",
            "hub.internal:8443",
        ] {
            assert!(check(&hosts, &[fine]).is_ok(), "{fine}");
        }
        for (refused, bad_request) in [
            ("evil.example:8931", false),
            ("hub.internal:9999", false),
            ("hub.internal", false),
            ("a b", true),
        ] {
            let refusal = check(&hosts, &[refused]).expect_err(refused);
            assert_eq!(refusal.bad_request, bad_request, "{refused}");
        }
        let twice =
            check(&hosts, &["127.0.0.1:8931", "evil.example"]).expect_err("two Host headers");
        assert!(twice.bad_request && twice.message.contains("two Host headers"));
        let missing = check(&hosts, &[]).expect_err("no Host");
        assert!(missing.bad_request);
    }
}
