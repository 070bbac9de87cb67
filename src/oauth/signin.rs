//! Signing a connection in: ask the server for its challenge (401 + `WWW-Authenticate`), discover
//! the authorization server from the protected resource metadata (RFC 9728) and its own metadata
//! (RFC 8414 / OpenID discovery), identify the client (a client ID from the config, a client ID
//! metadata document, or dynamic registration, RFC 7591), and run the authorization code flow
//! with PKCE and the resource indicator (RFC 8707) in the person's browser, redirected back to a
//! one-time listener on 127.0.0.1. All of the protocol is rmcp's (`transport::auth`); this module
//! owns the listener and the words. The tokens go to the connection's [`TokenStore`].

use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Html;
use axum::routing::get;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, WWWAuthenticateParams,
};
use tokio::sync::{mpsc, oneshot};

use super::store::TokenStore;

/// How long a sign-in waits for the browser to come back before it gives up.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(600);

/// The redirect a client configured only to refresh names: a refresh sends none, but the
/// client needs one.
pub(crate) const REFRESH_REDIRECT: &str = "http://127.0.0.1/callback";

/// The client name a dynamically registered client gets; what the consent page shows.
const CLIENT_NAME: &str = "capabilities";

/// Why a sign-in did not finish. Never carries a token or a code.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error(
        "source `{source_name}` does not ask for a sign-in ({url} answered without a 401 challenge); it needs none, or takes a static header (`--header \"Authorization: Bearer ${{secret:NAME}}\"`)"
    )]
    NotOAuth { source_name: String, url: String },
    #[error("cannot reach source `{source_name}` at {url} to sign in: {reason}")]
    Unreachable {
        source_name: String,
        url: String,
        reason: String,
    },
    #[error("signing in to source `{source_name}` failed: {reason}")]
    Failed { source_name: String, reason: String },
    #[error(
        "the browser did not come back within {} minutes; run `capabilities source login {source_name}` again",
        .waited.as_secs() / 60
    )]
    TimedOut {
        source_name: String,
        waited: Duration,
    },
}

/// What the redirect brings back to the listener.
#[derive(Debug, Default)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
    /// Told whether the exchange that followed worked, so the page the browser shows says so.
    outcome: Option<oneshot::Sender<bool>>,
}

/// How long the browser's page waits for the code exchange to say how it went.
const OUTCOME_WAIT: Duration = Duration::from_secs(60);

/// How long a finished sign-in waits for the listener to write its last page.
const PAGE_DELIVERY: Duration = Duration::from_secs(5);

/// A sign-in whose page is ready to open; [`SignIn::finish`] waits for the browser.
pub struct SignIn {
    source: String,
    url: String,
    session: AuthorizationSession,
    callbacks: mpsc::Receiver<Callback>,
    stop: Option<oneshot::Sender<()>>,
    /// The listener, which finishes once the page it owes the browser is written.
    server: Option<tokio::task::JoinHandle<()>>,
}

/// A client configured for the connection instead of dynamic registration.
#[derive(Clone)]
pub enum ClientIdentity {
    /// An OAuth app registered for the user, with a confidential client's secret.
    Registered {
        client_id: String,
        client_secret: Option<String>,
    },
    /// The HTTPS URL of a client ID metadata document: the client's ID where the authorization
    /// server advertises support for such documents; rmcp registers dynamically elsewhere.
    MetadataDocument { url: String },
}

/// Asks `url` for its challenge, discovers its authorization server, identifies the client and
/// prepares the authorization URL; the redirect listener runs from now until `finish` returns.
pub async fn begin(
    source: &str,
    url: &str,
    store: TokenStore,
    client: Option<ClientIdentity>,
) -> Result<SignIn, SignInError> {
    let failed = |reason: String| SignInError::Failed {
        source_name: source.to_string(),
        reason,
    };
    let challenge = challenge(source, url).await?;
    let (listener, redirect_uri) = listen(source).await?;
    let wanted = store.wanted_scopes();
    // `challenge` installed the TLS crypto provider rmcp's own HTTP client needs.
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(explain(&e)))?;
    manager.set_credential_store(store.clone());
    let metadata = manager
        .resolve_metadata_from_challenge(Some(&challenge))
        .await
        .map_err(|e| failed(explain(&e)))?;
    check_endpoints(&metadata.metadata).map_err(failed)?;
    let documents = takes_metadata_documents(&metadata.metadata);
    manager.set_metadata(metadata.metadata);
    let mut request = AuthorizationRequest::new(&redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_challenge(&challenge);
    // Scopes a call was refused for since the last sign-in (step-up): asked for on top of what
    // rmcp would choose from the challenge and the metadata.
    if !wanted.is_empty() {
        let named = url::Url::parse(url)
            .ok()
            .and_then(|base| WWWAuthenticateParams::parse(&challenge, &base).scope);
        let mut scopes = manager.select_scopes(named.as_deref(), &[]);
        for scope in wanted {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        request = request.with_scopes(scopes);
    }
    start(source, manager, request, client, documents, store, listener).await
}

/// [`begin`] for a resource whose authorization server its description names (an OpenAPI
/// document's security scheme) instead of a challenge: `metadata` says where to sign in, and
/// `scopes` what to ask for (the server's choice when empty). `resource` is the RFC 8707
/// indicator the tokens are asked for.
pub async fn begin_described(
    source: &str,
    resource: &str,
    metadata: AuthorizationMetadata,
    scopes: &[String],
    store: TokenStore,
    client: Option<ClientIdentity>,
) -> Result<SignIn, SignInError> {
    crate::tls::install_crypto_provider();
    check_endpoints(&metadata).map_err(|reason| SignInError::Failed {
        source_name: source.to_string(),
        reason,
    })?;
    let (listener, redirect_uri) = listen(source).await?;
    let mut manager =
        AuthorizationManager::new(resource)
            .await
            .map_err(|e| SignInError::Failed {
                source_name: source.to_string(),
                reason: explain(&e),
            })?;
    manager.set_credential_store(store.clone());
    let documents = takes_metadata_documents(&metadata);
    manager.set_metadata(metadata);
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name(CLIENT_NAME);
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    start(source, manager, request, client, documents, store, listener).await
}

/// A one-time listener on 127.0.0.1 for the redirect, and the redirect URI that reaches it.
async fn listen(source: &str) -> Result<(tokio::net::TcpListener, String), SignInError> {
    let failed = |e: std::io::Error| SignInError::Failed {
        source_name: source.to_string(),
        reason: format!("cannot listen on 127.0.0.1 for the redirect: {e}"),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(failed)?;
    let port = listener.local_addr().map_err(failed)?.port();
    Ok((listener, format!("http://127.0.0.1:{port}/callback")))
}

/// Identifies the client (the configured one, by its metadata document where the server
/// `documents` takes one, or by registration), prepares the authorization URL and serves the
/// redirect listener until the sign-in finishes.
async fn start(
    source: &str,
    mut manager: AuthorizationManager,
    mut request: AuthorizationRequest,
    client: Option<ClientIdentity>,
    documents: bool,
    store: TokenStore,
    listener: tokio::net::TcpListener,
) -> Result<SignIn, SignInError> {
    // Only a client registered by this sign-in has a secret stored with its tokens.
    store.keep_client_secret(None);
    match client {
        Some(ClientIdentity::Registered {
            client_id,
            client_secret,
        }) => {
            request = request.with_preregistered_client(client_id);
            if let Some(secret) = client_secret {
                request = request.with_client_secret(secret);
            }
        }
        Some(ClientIdentity::MetadataDocument { url }) if documents => {
            request = request.with_client_metadata_url(url);
        }
        Some(ClientIdentity::MetadataDocument { .. }) | None => {
            request = register(source, &mut manager, request, &store).await?;
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| SignInError::Failed {
            source_name: source.to_string(),
            reason: explain(&e),
        })?;
    let url = session.get_authorization_url().to_string();
    // The page is opened in the person's browser by the hub itself, on a model's call: an
    // address the authorization server chose must not start another handler (`file:`, `smb:`,
    // an app's own scheme) on the desktop.
    browsable(&url).map_err(|reason| SignInError::Failed {
        source_name: source.to_string(),
        reason,
    })?;
    // Only the redirect carrying this sign-in's `state` reaches the exchange: any web page the
    // person visits can send a request to a port on 127.0.0.1, and one that could end the
    // sign-in (an `error`, a made-up code) would be a way to stop it from the outside.
    let Some(state) = url::Url::parse(&url).ok().and_then(|page| {
        page.query_pairs()
            .find(|(key, _)| key == "state")
            .map(|(_, value)| value.into_owned())
    }) else {
        return Err(SignInError::Failed {
            source_name: source.to_string(),
            reason: "the authorization page carries no `state` to match the redirect with".into(),
        });
    };
    let (sender, callbacks) = mpsc::channel(4);
    let (stop, stopped) = oneshot::channel();
    let app = Router::new()
        .route("/callback", get(callback))
        .with_state(Redirects { sender, state });
    let server = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        if let Err(e) = serve.await {
            tracing::warn!("the sign-in redirect listener stopped: {e}");
        }
    });
    Ok(SignIn {
        source: source.to_string(),
        url,
        session,
        callbacks,
        stop: Some(stop),
        server: Some(server),
    })
}

/// True when an authorization server with `metadata` takes a client metadata document's URL as
/// a client's ID.
fn takes_metadata_documents(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// Registers the client with the authorization server (RFC 7591) for this sign-in, and names it
/// in `request` as the client to sign in with. Done here rather than by rmcp, which keeps a
/// secret the server issues to the client in memory only: `store` keeps it beside the tokens,
/// for a later process's refreshes to authenticate with.
async fn register(
    source: &str,
    manager: &mut AuthorizationManager,
    request: AuthorizationRequest,
    store: &TokenStore,
) -> Result<AuthorizationRequest, SignInError> {
    // The scopes rmcp registers with: those the sign-in asks for, and the one that gets a
    // refresh token where the server offers it.
    let chosen = manager.select_scopes(None, &[]);
    let mut scopes = if request.scopes.is_empty() {
        chosen.clone()
    } else {
        request.scopes.clone()
    };
    if chosen.iter().any(|scope| scope == OFFLINE_ACCESS)
        && !scopes.iter().any(|scope| scope == OFFLINE_ACCESS)
    {
        scopes.push(OFFLINE_ACCESS.to_string());
    }
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let redirect_uri = request.redirect_uri.clone();
    let registered = manager
        .register_client(CLIENT_NAME, &redirect_uri, &scopes)
        .await
        .map_err(|e| {
            let e = match e {
                AuthError::RegistrationFailed(_) | AuthError::PkceUnsupported => e,
                other => AuthError::RegistrationFailed(other.to_string()),
            };
            SignInError::Failed {
                source_name: source.to_string(),
                reason: explain(&e),
            }
        })?;
    store.keep_client_secret(registered.client_secret.as_deref());
    let mut request = request.with_preregistered_client(registered.client_id);
    if let Some(secret) = registered.client_secret {
        request = request.with_client_secret(secret);
    }
    Ok(request)
}

/// The scope that asks an authorization server for a refresh token (OpenID Connect).
const OFFLINE_ACCESS: &str = "offline_access";

impl SignIn {
    /// The page the person signs in on. It carries no secret (PKCE keeps the verifier here),
    /// but it is for the person: never for the model.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits (up to `wait`) for the browser to come back, exchanges the code for tokens and
    /// stores them.
    pub async fn finish(mut self, wait: Duration) -> Result<(), SignInError> {
        let outcome = tokio::time::timeout(wait, self.exchange()).await;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // A redirect that came after the one exchanged (a browser sending it again) is told
        // at once that it finished nothing, rather than waiting for an outcome.
        self.callbacks.close();
        while self.callbacks.try_recv().is_ok() {}
        // The browser's page says how the exchange went, so it is written after it: wait for
        // the listener to deliver it before this process (a `source login`) may exit.
        if let Some(server) = self.server.take() {
            let _ = tokio::time::timeout(PAGE_DELIVERY, server).await;
        }
        match outcome {
            Ok(result) => result,
            Err(_) => Err(SignInError::TimedOut {
                source_name: self.source.clone(),
                waited: wait,
            }),
        }
    }

    async fn exchange(&mut self) -> Result<(), SignInError> {
        let failed = |reason: String| SignInError::Failed {
            source_name: self.source.clone(),
            reason,
        };
        let Some(mut callback) = self.callbacks.recv().await else {
            return Err(failed("the redirect listener stopped".into()));
        };
        let outcome = callback.outcome.take();
        let exchanged = self.exchange_code(callback).await;
        if let Some(outcome) = outcome {
            let _ = outcome.send(exchanged.is_ok());
        }
        exchanged
    }

    async fn exchange_code(&mut self, callback: Callback) -> Result<(), SignInError> {
        let failed = |reason: String| SignInError::Failed {
            source_name: self.source.clone(),
            reason,
        };
        if let Some(error) = callback.error {
            let detail = callback
                .error_description
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(failed(format!(
                "the authorization server answered `{error}`{detail}"
            )));
        }
        let (Some(code), Some(state)) = (callback.code, callback.state) else {
            return Err(failed(
                "the browser came back without a code; start the sign-in again".into(),
            ));
        };
        // rmcp logs the code at debug as it exchanges it; it is a bearer credential until then.
        crate::credentials::remember(&crate::credentials::Secret::new(code.clone()));
        self.session
            .handle_callback_with_issuer(&code, &state, callback.iss.as_deref())
            .await
            .map(|_| ())
            .map_err(|e| failed(explain(&e)))
    }
}

/// `Ok` for an address a browser may be sent to for a sign-in: `https`, or `http` on this
/// machine (a local authorization server, as OAuth 2.1 allows); why not otherwise.
fn browsable(url: &str) -> Result<(), String> {
    secure(url, "sign-in page", "opened")
}

/// The authorization server's token and registration endpoints held to the sign-in page's
/// rule: they receive the code, its PKCE verifier, refresh tokens and client secrets, which
/// plain http to another machine would hand to anyone on the way.
pub(super) fn check_endpoints(metadata: &AuthorizationMetadata) -> Result<(), String> {
    secure(&metadata.token_endpoint, "token endpoint", "used")?;
    match &metadata.registration_endpoint {
        Some(registration) => secure(registration, "registration endpoint", "used"),
        None => Ok(()),
    }
}

/// `Ok` when `url` is `https`, or `http` on this machine; else why the `what` it is was not
/// `done` ("opened", "used").
fn secure(url: &str, what: &str, done: &str) -> Result<(), String> {
    let page = url::Url::parse(url).map_err(|e| {
        format!(
            "the authorization server's {what} is not an address ({e}); ask the server's operators"
        )
    })?;
    let local = match page.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match page.scheme() {
        "https" if page.host().is_some() => Ok(()),
        "http" if local => Ok(()),
        scheme => Err(format!(
            "the authorization server names a {what} at a `{scheme}:` address{}, which is not {done}: a {what} must be https (or http on this machine); ask the server's operators",
            page.host_str()
                .map(|host| format!(" on `{host}`"))
                .unwrap_or_default()
        )),
    }
}

/// Where the listener hands the redirect on, and the `state` a redirect must carry to be it.
#[derive(Clone)]
struct Redirects {
    sender: mpsc::Sender<Callback>,
    state: String,
}

async fn callback(
    State(redirects): State<Redirects>,
    RawQuery(query): RawQuery,
) -> (StatusCode, Html<&'static str>) {
    let mut callback = Callback::default();
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let value = Some(value.into_owned());
        match key.as_ref() {
            "code" => callback.code = value,
            "state" => callback.state = value,
            "iss" => callback.iss = value,
            "error" => callback.error = value,
            "error_description" => callback.error_description = value,
            _ => {}
        }
    }
    if callback.state.as_deref() != Some(redirects.state.as_str()) {
        return (
            StatusCode::BAD_REQUEST,
            Html(
                "<!doctype html><title>capabilities</title><p>This address waits for the sign-in capabilities started, and this request did not come from it, so it was ignored. Finish the sign-in on the page the terminal printed.</p>",
            ),
        );
    }
    let (told, outcome) = oneshot::channel();
    callback.outcome = Some(told);
    // A full channel means earlier redirects are still unread: this one adds nothing.
    let _ = redirects.sender.try_send(callback);
    // The page says what happened only once the code was exchanged: a server that refuses it
    // must not leave the person reading "Signed in".
    let page = match tokio::time::timeout(OUTCOME_WAIT, outcome).await {
        Ok(Ok(true)) => {
            "<!doctype html><title>capabilities</title><p>Signed in. You can close this tab.</p>"
        }
        Ok(Ok(false)) => {
            "<!doctype html><title>capabilities</title><p>Sign-in was not completed. You can close this tab; the terminal says what happened.</p>"
        }
        // Already ended by an earlier redirect, or still going: the terminal has the outcome.
        _ => {
            "<!doctype html><title>capabilities</title><p>This sign-in is not finished by this page. You can close this tab; the terminal says how it ends.</p>"
        }
    };
    (StatusCode::OK, Html(page))
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated MCP request.
async fn challenge(source: &str, url: &str) -> Result<String, SignInError> {
    crate::tls::install_crypto_provider();
    let unreachable = |reason: String| SignInError::Unreachable {
        source_name: source.to_string(),
        url: url.to_string(),
        reason,
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| unreachable(crate::tls::explain_setup_failure(&e.to_string())))?;
    let probe = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") } }
    });
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&probe)
        .send()
        .await
        .map_err(|e| unreachable(crate::error_text::chain(&e)))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Err(SignInError::NotOAuth {
            source_name: source.to_string(),
            url: url.to_string(),
        });
    }
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("Bearer")
        .to_string())
}

/// rmcp's error, in words that say what to do.
pub fn explain(error: &AuthError) -> String {
    match error {
        AuthError::PkceUnsupported => "the authorization server does not support PKCE with S256, which MCP requires; ask the server's operators".into(),
        AuthError::RegistrationFailed(reason) => format!(
            "the authorization server would not register capabilities as a client ({reason}); set a client ID for this connection in the config instead"
        ),
        AuthError::NoAuthorizationSupport => "the server publishes no OAuth metadata, so there is nothing to sign in to".into(),
        // Ours (an endpoint refused by `check_endpoints`) or rmcp's, each a whole sentence.
        AuthError::MetadataError(reason) => reason.clone(),
        other => crate::error_text::chain(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_pages_are_sent_to_the_browser() {
        for page in [
            "https://auth.example.com/authorize?x=1",
            "http://127.0.0.1:8080/authorize",
            "http://localhost/authorize",
            "http://[::1]:9/authorize",
        ] {
            assert_eq!(browsable(page), Ok(()), "{page}");
        }
        for (page, named) in [
            ("file:///tmp/evil.desktop", "`file:`"),
            (
                "smb://attacker.example/share",
                "`smb:` address on `attacker.example`",
            ),
            (
                "http://auth.example.com/authorize",
                "`http:` address on `auth.example.com`",
            ),
            ("vscode://x/y", "`vscode:`"),
            ("javascript:alert(1)", "`javascript:`"),
        ] {
            let refused = browsable(page).expect_err(page);
            assert!(refused.contains(named), "{page}: {refused}");
        }
        assert!(browsable("not a url").is_err());
    }

    #[test]
    fn the_code_and_tokens_go_only_to_https_endpoints_or_this_machine() {
        let metadata = |token: &str, registration: Option<&str>| {
            let mut metadata: AuthorizationMetadata = serde_json::from_value(serde_json::json!({
                "authorization_endpoint": "https://auth.example.com/authorize",
                "token_endpoint": token,
            }))
            .expect("metadata");
            metadata.registration_endpoint = registration.map(str::to_string);
            metadata
        };
        assert_eq!(
            check_endpoints(&metadata("https://auth.example.com/token", None)),
            Ok(())
        );
        assert_eq!(
            check_endpoints(&metadata(
                "http://127.0.0.1:9/token",
                Some("http://localhost:9/register")
            )),
            Ok(())
        );
        let token = check_endpoints(&metadata("http://192.0.2.2:18850/token", None))
            .expect_err("plain http elsewhere");
        assert!(
            token.contains("token endpoint at a `http:` address on `192.0.2.2`, which is not used"),
            "{token}"
        );
        let registration = check_endpoints(&metadata(
            "https://auth.example.com/token",
            Some("http://192.0.2.2/register"),
        ))
        .expect_err("plain http elsewhere");
        assert!(
            registration.contains("registration endpoint"),
            "{registration}"
        );
    }
}
