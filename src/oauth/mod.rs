//! OAuth connections: the sign-in of a Streamable HTTP source that answers 401 with a
//! `WWW-Authenticate` challenge ([`signin`]), where its tokens are kept ([`TokenStore`]: the
//! credential store, per connection, never the config or the state store), and what state a
//! connection's sign-in is in ([`SignInState`]) for `source list` and `doctor`.
//!
//! The protocol is rmcp's `transport::auth` (discovery, registration, PKCE, the resource
//! indicator, refresh before expiry and after a 401); `sources` sends requests through its
//! `AuthClient` when a connection has tokens. Tokens never leave this module and rmcp except as
//! the `Authorization` header of a request to the source they belong to; every token a
//! connection has held ([`HeldTokens`]) is blanked from what its upstream answers.

pub mod signin;
mod store;
#[cfg(test)]
pub(crate) use store::tests::{Memory, signed_in};

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, OAuthClientConfig,
};

pub use signin::{ClientIdentity, SIGN_IN_WAIT, SignIn, SignInError, begin, begin_described};
pub use store::{HeldTokens, TokenStore, Tokens, token_name};

use crate::config::{SourceSettings, Transport};
use crate::credentials::{Credentials, SecretLookup};

/// Where one connection's sign-in stands, from what the credential store holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInState {
    /// Nothing stored, or the tokens were dropped after the server refused a refresh.
    NeedsSignIn,
    /// Tokens are stored. `expires_at` (Unix seconds) is the access token's end when the server
    /// said; with `refreshable` a new one is fetched before then without the person.
    SignedIn {
        expires_at: Option<u64>,
        refreshable: bool,
    },
}

impl SignInState {
    /// One line for a person, e.g. `signed in; token expires in 4 min (refreshed by itself)`.
    pub fn describe(&self, now: u64) -> String {
        match self {
            SignInState::NeedsSignIn => "needs sign-in".into(),
            SignInState::SignedIn {
                expires_at,
                refreshable,
            } => {
                let refresh = if *refreshable {
                    " (refreshed by itself)"
                } else {
                    "; sign in again then"
                };
                match expires_at {
                    None => "signed in".into(),
                    Some(at) if *at <= now && *refreshable => {
                        "signed in; token expired, refreshed on the next call".into()
                    }
                    Some(at) if *at <= now => "token expired: needs sign-in".into(),
                    Some(at) => format!("signed in; token expires in {}{refresh}", span(at - now)),
                }
            }
        }
    }

    /// The word `source list --json` shows.
    pub fn word(&self) -> &'static str {
        match self {
            SignInState::NeedsSignIn => "needs_sign_in",
            SignInState::SignedIn { .. } => "signed_in",
        }
    }
}

fn span(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        _ => format!("{} h", seconds / 3600),
    }
}

/// The state of `source`'s `connection` sign-in, read from the credential store.
pub fn state(
    secrets: Arc<dyn SecretLookup>,
    source: &str,
    connection: &str,
) -> Result<SignInState, String> {
    let stored = TokenStore::new(secrets, source, connection).read()?;
    let Some(stored) = stored.filter(|s| s.token_response.is_some()) else {
        return Ok(SignInState::NeedsSignIn);
    };
    let tokens = Tokens::of(&stored);
    Ok(SignInState::SignedIn {
        expires_at: tokens.expires_at(),
        refreshable: tokens.refresh.is_some(),
    })
}

/// One connection's stored sign-in, for `source list` and `doctor`.
pub struct StoredSignIn {
    pub source: String,
    pub connection: String,
    /// Its state, or why the credential store could not say.
    pub state: Result<SignInState, String>,
}

/// The sign-in of every Streamable HTTP source's connection that has one stored (found in the
/// credential index, so no store is asked about a name it does not hold).
pub fn stored_sign_ins(
    credentials: &Arc<Credentials>,
    sources: &[SourceSettings],
) -> Vec<StoredSignIn> {
    let stored = credentials.list().unwrap_or_default();
    let mut out = Vec::new();
    for source in sources {
        if !matches!(
            source.transport,
            Transport::Http { .. } | Transport::OpenApi { .. }
        ) {
            continue;
        }
        for connection in &source.connections {
            let name = token_name(&source.name, &connection.name);
            if stored.iter().any(|(stored, _)| *stored == name) {
                out.push(StoredSignIn {
                    source: source.name.clone(),
                    connection: connection.name.clone(),
                    state: state(credentials.clone(), &source.name, &connection.name),
                });
            }
        }
    }
    out
}

/// The authorization manager for a connection that has stored tokens, ready to put them on
/// requests and refresh them; `None` when there are none (or they belong to an authorization
/// server the resource no longer names), so the connection needs a sign-in. `metadata` is the
/// authorization server's when the resource's description names it (an OpenAPI document);
/// without it, it is discovered from `url`.
pub async fn signed_in_manager(
    url: &str,
    metadata: Option<AuthorizationMetadata>,
    store: TokenStore,
    client: Option<ClientIdentity>,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let Some(stored) = store
        .read()
        .map_err(AuthError::CredentialStoreError)?
        .filter(|stored| stored.token_response.is_some())
    else {
        return Ok(None);
    };
    // Tokens of another client than the config names now: the config changed since. A metadata
    // document's tokens belong to its URL where the server took that as the client's ID, or to
    // the client registered where it did not (an ID that is no URL).
    let changed = match &client {
        Some(ClientIdentity::Registered { client_id, .. }) => *client_id != stored.client_id,
        Some(ClientIdentity::MetadataDocument { url }) => {
            stored.client_id.starts_with("https://") && stored.client_id != *url
        }
        None => false,
    };
    if changed {
        return Ok(None);
    }
    // Read with the tokens: the secret of a client registered at sign-in.
    let registered_secret = store.client_secret();
    crate::tls::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store);
    let metadata = match metadata {
        Some(metadata) => metadata,
        None => manager.resolve_metadata().await?.metadata,
    };
    // A refresh sends the refresh token (and a client secret) to the token endpoint named now,
    // which may not be the one signed in at: held to the sign-in's rule before any is sent.
    signin::check_endpoints(&metadata).map_err(AuthError::MetadataError)?;
    manager.set_metadata(metadata);
    if !manager.initialize_from_store().await? {
        return Ok(None);
    }
    // A confidential client authenticates its refreshes with its secret: the configured one's,
    // or the one the server issued when the client registered itself.
    let confidential = match client {
        Some(ClientIdentity::Registered {
            client_id,
            client_secret,
        }) => client_secret.map(|secret| (client_id, secret)),
        _ => registered_secret.map(|secret| (stored.client_id, secret)),
    };
    if let Some((client_id, secret)) = confidential {
        manager.configure_client(
            OAuthClientConfig::new(client_id, signin::REFRESH_REDIRECT).with_client_secret(secret),
        )?;
    }
    Ok(Some(manager))
}

/// `scopes` as a challenge names them (space-separated), in words: "the scope `a`", "the
/// scopes `a`, `b`".
pub fn name_scopes(scopes: &str) -> String {
    let named: Vec<String> = scopes
        .split_whitespace()
        .map(|scope| format!("`{scope}`"))
        .collect();
    match named.as_slice() {
        [one] => format!("the scope {one}"),
        _ => format!("the scopes {}", named.join(", ")),
    }
}

/// The current Unix time in seconds.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_as_a_person_would_say_them() {
        let signed_in = |expires_at, refreshable| SignInState::SignedIn {
            expires_at,
            refreshable,
        };
        assert_eq!(SignInState::NeedsSignIn.describe(0), "needs sign-in");
        assert_eq!(signed_in(None, true).describe(0), "signed in");
        assert_eq!(
            signed_in(Some(1_000 + 300), true).describe(1_000),
            "signed in; token expires in 5 min (refreshed by itself)"
        );
        assert_eq!(
            signed_in(Some(1_000 + 30), false).describe(1_000),
            "signed in; token expires in 30 s; sign in again then"
        );
        assert_eq!(
            signed_in(Some(900), true).describe(1_000),
            "signed in; token expired, refreshed on the next call"
        );
        assert_eq!(
            signed_in(Some(900), false).describe(1_000),
            "token expired: needs sign-in"
        );
        assert_eq!(signed_in(Some(90_000), true).word(), "signed_in");
    }

    #[test]
    fn scopes_are_named_one_by_one() {
        assert_eq!(name_scopes("mcp:archive"), "the scope `mcp:archive`");
        assert_eq!(
            name_scopes("mcp  mcp:archive"),
            "the scopes `mcp`, `mcp:archive`"
        );
    }
}
