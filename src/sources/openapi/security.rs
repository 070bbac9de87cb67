//! Credentials for an OpenAPI source: each `auth` entry of the config names one of the
//! document's `components.securitySchemes`, and its resolved value goes where that scheme says
//! (an API key's header, query parameter or cookie; `Authorization: Bearer …`; `Authorization:
//! Basic …` from `user:password`). A call sends the credentials of the first of its security
//! requirements that every scheme of it has a credential for. The scheme a connection signs in
//! with (OAuth, see `oauth.rs`) has a credential too: its access token, given per request.

use percent_encoding::utf8_percent_encode;
use serde_json::Value;

use super::operations;
use super::request::UNRESERVED;
use super::spec::Document;

enum Placement {
    Header(String),
    Query(String),
    Cookie(String),
    Bearer,
    Basic,
}

// No `Debug`: `value` is a secret.
struct Credential {
    scheme: String,
    placement: Placement,
    /// `None` for the scheme the connection signs in with: its token is fetched per request.
    value: Option<String>,
}

/// The resolved credentials of one connection.
pub(crate) struct Credentials {
    credentials: Vec<Credential>,
}

/// What [`Credentials::apply`] adds to a request.
#[derive(Default)]
pub(crate) struct Added {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) query: Vec<String>,
    pub(crate) cookies: Vec<String>,
    /// Header names whose values are secret.
    pub(crate) sensitive: Vec<String>,
}

impl Credentials {
    /// Matches `auth` (scheme name → resolved value) with the document's schemes; `signed_in`
    /// names the scheme whose token the connection's OAuth sign-in gives.
    pub(crate) fn new(
        document: &Document,
        auth: Vec<(String, String)>,
        signed_in: Option<&str>,
    ) -> Result<Self, String> {
        let schemes = document
            .root
            .pointer("/components/securitySchemes")
            .and_then(Value::as_object);
        let known = || {
            let names: Vec<&str> = schemes
                .map(|s| s.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if names.is_empty() {
                "the document defines no security schemes; send credentials with `headers` instead"
                    .to_string()
            } else {
                format!("its security schemes are: {}", names.join(", "))
            }
        };
        let mut credentials = Vec::new();
        for (scheme, value) in auth {
            let Some(definition) = schemes.and_then(|s| s.get(&scheme)) else {
                return Err(format!(
                    "`auth` names the security scheme `{scheme}`, which the document does not define; {}",
                    known()
                ));
            };
            let definition = match definition.get("$ref").and_then(Value::as_str) {
                Some(reference) => document.resolve(reference).unwrap_or(definition),
                None => definition,
            };
            let kind = definition
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let placement = match kind {
                "apiKey" => {
                    let name = definition
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    match definition.get("in").and_then(Value::as_str) {
                        Some("query") => Placement::Query(name),
                        Some("cookie") if is_cookie_name(&name) => Placement::Cookie(name),
                        Some("cookie") => {
                            return Err(format!(
                                "the security scheme `{scheme}` names the cookie `{}`, which is not a cookie name (it has a space, `;`, `=` or a control character), so the key cannot be sent; ask the API's owners to fix the document",
                                name.escape_debug()
                            ));
                        }
                        _ if operations::frames_the_request(&name) => {
                            return Err(format!(
                                "the security scheme `{scheme}` puts its key in the header `{}`, which routes or frames the request rather than authenticates it, so capabilities does not send a credential there; ask the API's owners to fix the document",
                                name.escape_debug()
                            ));
                        }
                        _ => Placement::Header(name),
                    }
                }
                "http" => match definition
                    .get("scheme")
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    Some("basic") => Placement::Basic,
                    Some("bearer") => Placement::Bearer,
                    other => {
                        return Err(format!(
                            "the security scheme `{scheme}` is HTTP `{}` authentication, which capabilities does not speak; set the header yourself with `headers`",
                            other.unwrap_or("?")
                        ));
                    }
                },
                // An access token got elsewhere is sent as a bearer token.
                "oauth2" | "openIdConnect" => Placement::Bearer,
                other => {
                    return Err(format!(
                        "the security scheme `{scheme}` is of type `{other}`, which capabilities cannot send; set what it needs with `headers`"
                    ));
                }
            };
            credentials.push(Credential {
                scheme,
                placement,
                value: Some(value),
            });
        }
        if let Some(scheme) = signed_in {
            credentials.push(Credential {
                scheme: scheme.to_string(),
                placement: Placement::Bearer,
                value: None,
            });
        }
        Ok(Credentials { credentials })
    }

    /// The credentials of the first alternative of `requirements` that every scheme of has one
    /// (`None`: the document declares security nowhere, so every configured credential goes
    /// along, as the user asked for them).
    fn chosen(&self, requirements: Option<&Vec<Vec<String>>>) -> Vec<&Credential> {
        match requirements {
            None => self.credentials.iter().collect(),
            Some(alternatives) => alternatives
                .iter()
                .find_map(|schemes| {
                    schemes
                        .iter()
                        .map(|scheme| self.credentials.iter().find(|c| &c.scheme == scheme))
                        .collect::<Option<Vec<_>>>()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether a request with these requirements carries the connection's OAuth token.
    pub(crate) fn uses_sign_in(&self, requirements: Option<&Vec<Vec<String>>>) -> bool {
        self.chosen(requirements)
            .iter()
            .any(|credential| credential.value.is_none())
    }

    /// The credentials for an operation with these requirements, `token` standing for the
    /// connection's sign-in (see [`uses_sign_in`](Self::uses_sign_in)).
    pub(crate) fn apply(
        &self,
        requirements: Option<&Vec<Vec<String>>>,
        token: Option<&str>,
    ) -> Added {
        let chosen = self.chosen(requirements);
        let mut added = Added::default();
        for credential in chosen {
            let Some(value) = credential.value.as_deref().or(token) else {
                continue;
            };
            match &credential.placement {
                Placement::Header(name) => {
                    added.sensitive.push(name.clone());
                    added.headers.push((name.clone(), value.to_string()));
                }
                Placement::Query(name) => added.query.push(format!(
                    "{}={}",
                    utf8_percent_encode(name, UNRESERVED),
                    utf8_percent_encode(value, UNRESERVED)
                )),
                Placement::Cookie(name) => added.cookies.push(format!("{name}={value}")),
                Placement::Bearer => {
                    added.sensitive.push("Authorization".into());
                    added
                        .headers
                        .push(("Authorization".into(), format!("Bearer {value}")));
                }
                Placement::Basic => {
                    added.sensitive.push("Authorization".into());
                    let encoded = data_encoding::BASE64.encode(value.as_bytes());
                    added
                        .headers
                        .push(("Authorization".into(), format!("Basic {encoded}")));
                }
            }
        }
        added
    }

    /// The schemes `requirements` asks for that have no credential, for the hint of a 401 or
    /// 403 answer: empty when some alternative is met (or nothing is required).
    pub(crate) fn missing(&self, requirements: Option<&Vec<Vec<String>>>) -> Vec<String> {
        let Some(alternatives) = requirements else {
            return Vec::new();
        };
        let met = alternatives.iter().any(|schemes| {
            schemes
                .iter()
                .all(|scheme| self.credentials.iter().any(|c| &c.scheme == scheme))
        });
        if met || alternatives.is_empty() {
            return Vec::new();
        }
        let mut missing: Vec<String> = alternatives
            .iter()
            .flatten()
            .filter(|scheme| !self.credentials.iter().any(|c| &c.scheme == *scheme))
            .cloned()
            .collect();
        missing.dedup();
        missing
    }
}

/// Whether `name` can be a cookie's name (RFC 6265's token): anything else would split the
/// `Cookie` header into other cookies of the document's choosing.
fn is_cookie_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::spec::parse;
    use super::*;

    fn document() -> Document {
        parse(
            json!({
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {},
                "components": {"securitySchemes": {
                    "key": {"type": "apiKey", "in": "query", "name": "api_key"},
                    "token": {"type": "http", "scheme": "bearer"},
                    "login": {"type": "http", "scheme": "basic"}
                }}
            })
            .to_string(),
        )
        .expect("valid")
    }

    #[test]
    fn a_key_for_a_header_that_routes_the_request_or_a_cookie_that_is_no_name_is_refused() {
        let hostile = parse(
            json!({
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {},
                "components": {"securitySchemes": {
                    "host": {"type": "apiKey", "in": "header", "name": "Host"},
                    "proxy": {"type": "apiKey", "in": "header", "name": "Proxy-Authorization"},
                    "split": {"type": "apiKey", "in": "cookie", "name": "c; admin=1"},
                    "fine": {"type": "apiKey", "in": "cookie", "name": "session_id"},
                    "header": {"type": "apiKey", "in": "header", "name": "X-API-Key"}
                }}
            })
            .to_string(),
        )
        .expect("valid");
        for (scheme, said) in [
            (
                "host",
                "the header `Host`, which routes or frames the request",
            ),
            ("proxy", "the header `Proxy-Authorization`"),
            (
                "split",
                "the cookie `c; admin=1`, which is not a cookie name",
            ),
        ] {
            let refused = Credentials::new(&hostile, vec![(scheme.into(), "k".into())], None)
                .err()
                .unwrap_or_else(|| panic!("{scheme} is refused"));
            assert!(refused.contains(said), "{refused}");
        }
        for scheme in ["fine", "header"] {
            assert!(Credentials::new(&hostile, vec![(scheme.into(), "k".into())], None).is_ok());
        }
    }

    #[test]
    fn credentials_go_where_their_scheme_says() {
        let credentials = Credentials::new(
            &document(),
            vec![
                ("key".into(), "k 1".into()),
                ("login".into(), "ann:pw".into()),
            ],
            None,
        )
        .expect("known schemes");
        let added = credentials.apply(Some(&vec![vec!["token".into()], vec!["key".into()]]), None);
        assert_eq!(added.query, ["api_key=k%201"]);
        assert!(added.headers.is_empty());
        let added = credentials.apply(Some(&vec![vec!["login".into()]]), None);
        assert_eq!(
            added.headers,
            [("Authorization".to_string(), "Basic YW5uOnB3".to_string())]
        );
        assert!(credentials.apply(Some(&vec![]), None).headers.is_empty());
        assert_eq!(
            credentials.missing(Some(&vec![vec!["token".into()]])),
            ["token"]
        );
    }

    #[test]
    fn the_signed_in_scheme_carries_the_token_given_per_request() {
        let credentials =
            Credentials::new(&document(), vec![("key".into(), "k".into())], Some("token"))
                .expect("known schemes");
        let token_first = vec![vec!["token".to_string()], vec!["key".to_string()]];
        assert!(credentials.uses_sign_in(Some(&token_first)));
        assert!(!credentials.uses_sign_in(Some(&vec![vec!["key".to_string()]])));
        assert!(!credentials.uses_sign_in(Some(&vec![])));
        let added = credentials.apply(Some(&token_first), Some("access-1"));
        assert_eq!(
            added.headers,
            [("Authorization".to_string(), "Bearer access-1".to_string())]
        );
        assert!(added.sensitive.contains(&"Authorization".to_string()));
        // Met by the sign-in: no scheme is named as missing.
        assert!(credentials.missing(Some(&token_first)).is_empty());
    }

    #[test]
    fn an_unknown_scheme_names_the_known_ones() {
        let Err(error) = Credentials::new(&document(), vec![("nope".into(), "x".into())], None)
        else {
            panic!("an unknown scheme is refused");
        };
        assert!(error.contains("`nope`"), "{error}");
        assert!(error.contains("key, token, login"), "{error}");
    }
}
