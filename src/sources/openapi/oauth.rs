//! OAuth connections of an OpenAPI source. The document's `oauth2` scheme (its authorization
//! code flow) or `openIdConnect` scheme names the authorization server, so a connection signs in
//! through it as an MCP server's would (`source login`: PKCE, the redirect on a loopback port,
//! a configured client or dynamic registration) instead of taking a token in `auth`.
//! [`Scheme`] is what the document says; [`Access`] is one connection's sign-in while the
//! source runs: the access token for a request (refreshed before it expires, and after the API
//! refuses it), or why the person has to sign in (again).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationMetadata};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::spec::Document;
use crate::credentials::Redaction;
use crate::oauth::{self, ClientIdentity, TokenStore};

/// Where a provider publishes its OpenID Connect discovery document, after its issuer URL.
const OPENID_CONFIGURATION: &str = "/.well-known/openid-configuration";

/// The security scheme a connection signs in with, as the document describes it.
#[derive(Clone)]
pub(crate) struct Scheme {
    pub(crate) name: String,
    flow: Flow,
    /// Every scope the document's security requirements name for it, in document order: what
    /// a sign-in asks for, so that every operation the catalogue lists can be called.
    pub(crate) scopes: Vec<String>,
}

#[derive(Clone)]
enum Flow {
    /// `oauth2` with `flows.authorizationCode`: the endpoints are in the document.
    Code {
        authorization_url: String,
        token_url: String,
    },
    /// `openIdConnect`: the endpoints are in the discovery document it names.
    OpenIdConnect { discovery_url: String },
}

impl Scheme {
    /// The first scheme of the document (in its order) that signs in through a browser and
    /// that `auth` gives no token for: `oauth2` with an authorization code flow, or
    /// `openIdConnect`. Relative URLs are relative to `base` (the API's root). `None` when the
    /// document has none.
    pub(crate) fn find(
        document: &Document,
        base: &str,
        configured: &[String],
    ) -> Result<Option<Scheme>, String> {
        let Some(schemes) = document
            .root
            .pointer("/components/securitySchemes")
            .and_then(Value::as_object)
        else {
            return Ok(None);
        };
        for (name, definition) in schemes {
            if configured.contains(name) {
                continue;
            }
            let definition = match definition.get("$ref").and_then(Value::as_str) {
                Some(reference) => document.resolve(reference).unwrap_or(definition),
                None => definition,
            };
            let url = |value: Option<&Value>, field: &str| -> Result<String, String> {
                let Some(text) = value.and_then(Value::as_str).filter(|t| !t.is_empty()) else {
                    return Err(format!(
                        "the security scheme `{name}` has no `{field}`, so there is nowhere to sign in; fix the document, or give a token with `auth = {{ {name} = \"${{secret:NAME}}\" }}`"
                    ));
                };
                absolute(base, text).ok_or_else(|| {
                    format!(
                        "the `{field}` of security scheme `{name}` (`{text}`) is not a URL, nor one relative to the API's root {base}; fix the document"
                    )
                })
            };
            let flow = match definition.get("type").and_then(Value::as_str) {
                Some("oauth2") => {
                    let Some(code) = definition.pointer("/flows/authorizationCode") else {
                        // Client credentials, implicit or password flows sign no person in.
                        continue;
                    };
                    Flow::Code {
                        authorization_url: url(code.get("authorizationUrl"), "authorizationUrl")?,
                        token_url: url(code.get("tokenUrl"), "tokenUrl")?,
                    }
                }
                Some("openIdConnect") => Flow::OpenIdConnect {
                    discovery_url: url(definition.get("openIdConnectUrl"), "openIdConnectUrl")?,
                },
                _ => continue,
            };
            return Ok(Some(Scheme {
                scopes: scopes(&document.root, name),
                name: name.clone(),
                flow,
            }));
        }
        Ok(None)
    }

    /// The authorization server's metadata. For an `oauth2` scheme, the metadata the server
    /// publishes at its origin is used when its endpoints are the document's: it adds what a
    /// document cannot say (where a client registers itself, whether PKCE's S256 is supported).
    pub(crate) async fn metadata(
        &self,
        client: &reqwest::Client,
        timeout: Duration,
    ) -> Result<AuthorizationMetadata, String> {
        match &self.flow {
            Flow::OpenIdConnect { discovery_url } => {
                let found = get_json(client, discovery_url, timeout).await?;
                // OpenID Connect Discovery 4.3: the issuer is the URL the document was found
                // under, or the document is not the issuer's (RFC 8414 3.3 says the same).
                if let Some(expected) = discovery_url.strip_suffix(OPENID_CONFIGURATION) {
                    let issuer = found.get("issuer").and_then(Value::as_str);
                    if issuer != Some(expected) {
                        return Err(format!(
                            "the OpenID Connect discovery document {discovery_url} (security scheme `{}`) names the issuer {}, not {expected}, under which it was found, so it is not used: a sign-in through it could be another issuer's",
                            self.name,
                            issuer.map_or("none".to_string(), |i| format!("`{i}`")),
                        ));
                    }
                }
                serde_json::from_value(found).map_err(|error| {
                    format!(
                        "the OpenID Connect discovery document {discovery_url} (security scheme `{}`) is not usable: {error}",
                        self.name
                    )
                })
            }
            Flow::Code {
                authorization_url,
                token_url,
            } => {
                for published in well_known(token_url) {
                    let Ok(found) = get_json(client, &published, timeout).await else {
                        continue;
                    };
                    let same = found.get("authorization_endpoint")
                        == Some(&json!(authorization_url))
                        && found.get("token_endpoint") == Some(&json!(token_url));
                    if let Ok(metadata) = serde_json::from_value(found)
                        && same
                    {
                        return Ok(metadata);
                    }
                }
                serde_json::from_value(json!({
                    "authorization_endpoint": authorization_url,
                    "token_endpoint": token_url,
                }))
                .map_err(|error| format!("the security scheme `{}`: {error}", self.name))
            }
        }
    }
}

/// Every scope named for `scheme` in the document's and its operations' `security`.
fn scopes(root: &Value, scheme: &str) -> Vec<String> {
    let mut requirements: Vec<&Value> = root.get("security").into_iter().collect();
    let methods = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    for item in root
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|paths| paths.values())
    {
        for method in methods {
            if let Some(security) = item.get(method).and_then(|o| o.get("security")) {
                requirements.push(security);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for scope in requirements
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|requirement| requirement.get(scheme))
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_str)
    {
        if !out.iter().any(|known| known == scope) {
            out.push(scope.to_string());
        }
    }
    out
}

/// `text` as an absolute http(s) URL, relative ones resolved against `base`.
fn absolute(base: &str, text: &str) -> Option<String> {
    let joined = match reqwest::Url::parse(text) {
        Ok(url) => url,
        Err(_) => reqwest::Url::parse(&format!("{}/", base.trim_end_matches('/')))
            .ok()?
            .join(text)
            .ok()?,
    };
    matches!(joined.scheme(), "http" | "https").then(|| joined.to_string())
}

/// Where the server of `token_url` publishes its metadata (RFC 8414, then OpenID discovery).
fn well_known(token_url: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(token_url) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    vec![
        format!("{origin}/.well-known/oauth-authorization-server"),
        format!("{origin}{OPENID_CONFIGURATION}"),
    ]
}

async fn get_json(client: &reqwest::Client, url: &str, timeout: Duration) -> Result<Value, String> {
    let fetched = async {
        let response = client.get(url).send().await?.error_for_status()?;
        response.json::<Value>().await
    };
    match tokio::time::timeout(timeout, fetched).await {
        Err(_) => Err(format!(
            "no answer from {url} within {} s",
            timeout.as_secs_f64()
        )),
        Ok(Err(error)) => Err(format!(
            "cannot read {url}: {}",
            crate::error_text::chain(&error)
        )),
        Ok(Ok(value)) => Ok(value),
    }
}

/// Why a request cannot carry the connection's token.
pub(crate) enum Refusal {
    /// Only the person can fix it, by signing in; why (for the sign-in message).
    SignIn(String),
    /// Something else went wrong (the authorization server did not answer, the credential
    /// store failed): what, in words for the user.
    Failed(String),
}

/// One connection's sign-in through the document's OAuth scheme, while the source runs.
pub(crate) struct Access {
    pub(crate) scheme: Scheme,
    /// The API's root: the resource indicator (RFC 8707) the tokens are for.
    resource: String,
    store: TokenStore,
    client: Option<ClientIdentity>,
    http: reqwest::Client,
    timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    metadata: Option<AuthorizationMetadata>,
    /// rmcp's manager over the stored tokens, once some were found.
    manager: Option<Arc<Mutex<AuthorizationManager>>>,
}

impl Access {
    pub(crate) fn new(
        scheme: Scheme,
        resource: &str,
        store: TokenStore,
        client: Option<ClientIdentity>,
        http: reqwest::Client,
        timeout: Duration,
    ) -> Access {
        Access {
            scheme,
            resource: resource.to_string(),
            store,
            client,
            http,
            timeout,
            state: Mutex::new(State::default()),
        }
    }

    /// The redaction of every token this connection has held (see [`oauth::HeldTokens`]):
    /// the access token [`token`](Self::token) gives is among them, since it was read or
    /// written through the store.
    pub(crate) fn held(&self) -> Arc<Redaction> {
        self.store.held()
    }

    /// The access token for the next request, refreshed first when it is about to expire.
    pub(crate) async fn token(&self) -> Result<String, Refusal> {
        let manager = self.manager().await?;
        let token = manager.lock().await.get_access_token().await;
        match token {
            Ok(token) => Ok(token),
            Err(AuthError::AuthorizationRequired) => {
                self.forget().await;
                Err(Refusal::SignIn(
                    "the authorization server refused to renew its sign-in".into(),
                ))
            }
            Err(error) => Err(Refusal::Failed(oauth::signin::explain(&error))),
        }
    }

    /// A new access token after the API refused `refused` (401): refreshed once, unless another
    /// request already did.
    pub(crate) async fn renew(&self, refused: &str) -> Result<String, Refusal> {
        let manager = self.manager().await?;
        let manager = manager.lock().await;
        if let Ok(current) = manager.get_access_token().await
            && current != refused
        {
            return Ok(current);
        }
        match manager.refresh_token().await {
            // The refreshed token is stored: read it back as any request would.
            Ok(_) => manager
                .get_access_token()
                .await
                .map_err(|error| Refusal::Failed(oauth::signin::explain(&error))),
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                drop(manager);
                self.forget().await;
                Err(Refusal::SignIn(
                    "the server no longer accepts its sign-in".into(),
                ))
            }
            Err(error) => Err(Refusal::Failed(oauth::signin::explain(&error))),
        }
    }

    /// The API refused a request for want of a scope (`None`: it did not say which): the
    /// next sign-in asks for it, and the next request reads the credential store again.
    pub(crate) async fn lacks(&self, scope: Option<&str>) -> Result<(), Refusal> {
        if let Some(scope) = scope {
            self.store.want_scopes(scope).map_err(Refusal::Failed)?;
        }
        self.forget().await;
        Ok(())
    }

    /// Drops the manager, so the next request reads the credential store again (a sign-in
    /// from `source login` lands there).
    pub(crate) async fn forget(&self) {
        self.state.lock().await.manager = None;
    }

    async fn manager(&self) -> Result<Arc<Mutex<AuthorizationManager>>, Refusal> {
        let mut state = self.state.lock().await;
        if let Some(manager) = &state.manager {
            return Ok(manager.clone());
        }
        // Before the metadata, which may take a request: most often there is nothing stored.
        let stored = self.store.read().map_err(Refusal::Failed)?;
        if stored.is_none_or(|s| s.token_response.is_none()) {
            return Err(Refusal::SignIn("it has not signed in yet".into()));
        }
        let metadata = match &state.metadata {
            Some(metadata) => metadata.clone(),
            None => {
                let metadata = self
                    .scheme
                    .metadata(&self.http, self.timeout)
                    .await
                    .map_err(Refusal::Failed)?;
                state.metadata = Some(metadata.clone());
                metadata
            }
        };
        // The document says where tokens are refreshed, and a document can change (or be
        // served by someone else): the refresh token and the client secret go only to the
        // endpoint the person signed in at. A sign-in stored before endpoints were recorded
        // is taken as it is, and records the endpoint with its next refresh.
        if let Some(recorded) = self.store.recorded_endpoint()
            && recorded != metadata.token_endpoint
        {
            return Err(Refusal::SignIn(format!(
                "its OpenAPI document now names the token endpoint {}, not {recorded}, where it signed in; its tokens are sent only where it signed in, so sign in again if the new one is right",
                metadata.token_endpoint
            )));
        }
        let manager = oauth::signed_in_manager(
            &self.resource,
            Some(metadata.clone()),
            self.store.clone().bound_to(&metadata.token_endpoint),
            self.client.clone(),
        )
        .await
        .map_err(|error| Refusal::Failed(oauth::signin::explain(&error)))?
        .ok_or_else(|| Refusal::SignIn("it has not signed in yet".into()))?;
        let manager = Arc::new(Mutex::new(manager));
        state.manager = Some(manager.clone());
        Ok(manager)
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::parse;
    use super::*;

    fn document(schemes: Value) -> Document {
        parse(
            json!({
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "security": [{"code": ["notes:read"]}],
                "paths": {"/notes": {
                    "get": {"responses": {"200": {"description": "ok"}}},
                    "post": {"security": [{"code": ["notes:write", "notes:read"]}, {"oidc": ["openid"]}],
                             "responses": {"200": {"description": "ok"}}}
                }},
                "components": {"securitySchemes": schemes}
            })
            .to_string(),
        )
        .expect("valid")
    }

    #[test]
    fn the_first_browser_scheme_without_a_token_signs_in_and_asks_for_its_scopes() {
        let doc = document(json!({
            "machine": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "/t", "scopes": {}}}},
            "code": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://as.example/authorize", "tokenUrl": "oauth/token", "scopes": {}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://id.example/.well-known/openid-configuration"}
        }));
        let scheme = Scheme::find(&doc, "https://api.example/v1", &[])
            .expect("valid")
            .expect("found");
        assert_eq!(scheme.name, "code");
        assert_eq!(scheme.scopes, ["notes:read", "notes:write"]);
        let Flow::Code {
            authorization_url,
            token_url,
        } = &scheme.flow
        else {
            panic!("the authorization code flow");
        };
        assert_eq!(authorization_url, "https://as.example/authorize");
        // Relative to the API's root.
        assert_eq!(token_url, "https://api.example/v1/oauth/token");
        assert_eq!(
            well_known(token_url),
            [
                "https://api.example/.well-known/oauth-authorization-server",
                "https://api.example/.well-known/openid-configuration"
            ]
        );
        // A token in `auth` for it: the next one signs in.
        let next = Scheme::find(&doc, "https://api.example/v1", &["code".into()])
            .expect("valid")
            .expect("found");
        assert_eq!(next.name, "oidc");
        assert_eq!(next.scopes, ["openid"]);
        let none = Scheme::find(&doc, "https://api.example", &["code".into(), "oidc".into()]);
        assert!(matches!(none, Ok(None)));
    }

    #[test]
    fn a_scheme_without_its_endpoint_says_what_is_missing() {
        let doc = document(json!({
            "code": {"type": "oauth2", "flows": {"authorizationCode": {"tokenUrl": "https://as.example/t"}}}
        }));
        let Err(error) = Scheme::find(&doc, "https://api.example", &[]) else {
            panic!("refused");
        };
        assert!(
            error.contains("`code` has no `authorizationUrl`"),
            "{error}"
        );
        assert!(error.contains("auth = { code ="), "{error}");
        let doc = document(json!({
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "ftp://id.example/config"}
        }));
        let Err(error) = Scheme::find(&doc, "https://api.example", &[]) else {
            panic!("refused");
        };
        assert!(
            error.contains("`openIdConnectUrl` of security scheme `oidc` (`ftp://id.example/config`) is not a URL"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_sign_in_is_not_refreshed_at_a_token_endpoint_it_was_not_given_at() {
        use crate::oauth::{Memory, signed_in};
        use rmcp::transport::auth::CredentialStore;
        crate::tls::install_crypto_provider();
        let memory = std::sync::Arc::new(Memory::default());
        let store = TokenStore::new(memory, "notes", "default");
        // Signed in at the document's first token endpoint.
        store
            .clone()
            .bound_to("http://127.0.0.1:9/token")
            .save(signed_in("access-one-value"))
            .await
            .expect("saved");
        // Nothing listens on port 9, so no published metadata: the document's endpoints.
        let moved = document(json!({
            "code": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "http://127.0.0.1:9/authorize", "tokenUrl": "http://127.0.0.1:9/elsewhere"}}}
        }));
        let scheme = Scheme::find(&moved, "http://127.0.0.1:9", &[])
            .expect("valid")
            .expect("found");
        let access = Access::new(
            scheme,
            "http://127.0.0.1:9",
            store,
            None,
            reqwest::Client::new(),
            Duration::from_secs(5),
        );
        let Err(Refusal::SignIn(why)) = access.token().await else {
            panic!("the token is not handed out");
        };
        assert!(
            why.contains("now names the token endpoint http://127.0.0.1:9/elsewhere, not http://127.0.0.1:9/token"),
            "{why}"
        );
    }

    /// Serves the JSON `body` makes of its origin to one request, on a port of its own; the
    /// origin.
    async fn serve_once(body: impl FnOnce(&str) -> Value + Send + 'static) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let body = body(&origin).to_string();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut request).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer.as_bytes()).await;
        });
        origin
    }

    #[tokio::test]
    async fn a_discovery_document_must_name_the_issuer_it_was_found_under() {
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::new();
        // The issuer each document names, given the origin it is served from: another's, none,
        // its own.
        type Names = fn(&str) -> Option<String>;
        let cases: [(Names, bool); 3] = [
            (|_| Some("https://accounts.evil.example".into()), false),
            (|_| None, false),
            (|origin| Some(origin.to_string()), true),
        ];
        for (issuer, usable) in cases {
            let origin = serve_once(move |origin| {
                let mut metadata = json!({
                    "authorization_endpoint": "https://id.example/authorize",
                    "token_endpoint": "https://id.example/token",
                });
                if let Some(issuer) = issuer(origin) {
                    metadata["issuer"] = json!(issuer);
                }
                metadata
            })
            .await;
            let discovery = format!("{origin}/.well-known/openid-configuration");
            let doc = document(json!({
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": discovery}
            }));
            let scheme = Scheme::find(&doc, "https://api.example", &[])
                .expect("valid")
                .expect("found");
            match (
                usable,
                scheme.metadata(&client, Duration::from_secs(5)).await,
            ) {
                (true, Ok(_)) => {}
                (false, Err(error)) => assert!(error.contains("names the issuer"), "{error}"),
                (usable, found) => panic!("usable {usable}, got {found:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_discovery_document_that_does_not_answer_says_where_it_was_looked_for() {
        let doc = document(json!({
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "http://127.0.0.1:9/.well-known/openid-configuration"}
        }));
        let scheme = Scheme::find(&doc, "https://api.example", &[])
            .expect("valid")
            .expect("found");
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::new();
        let Err(error) = scheme.metadata(&client, Duration::from_secs(5)).await else {
            panic!("nothing answers there");
        };
        assert!(
            error.contains("cannot read http://127.0.0.1:9/.well-known/openid-configuration"),
            "{error}"
        );
    }
}
