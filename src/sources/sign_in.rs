//! Beginning the OAuth sign-in of one connection of a Streamable HTTP source, as the config
//! describes it: its URL, the client the config names (its secret resolved here, where secrets
//! are read), and the credential store its tokens go to. `source login`, the hub and the
//! dashboard all start sign-ins through [`begin_sign_in`].

use std::sync::Arc;

use super::resolve::client_identity;
use crate::config::{SourceSettings, Transport};
use crate::credentials::SecretLookup;
use crate::oauth::{self, SignIn, TokenStore};

/// Starts signing `connection` of `source` in: the returned sign-in's page is ready to open.
/// Errors are messages for the user.
pub async fn begin_sign_in(
    source: &SourceSettings,
    connection: &str,
    secrets: Arc<dyn SecretLookup>,
) -> Result<SignIn, String> {
    let Transport::Http { url } = &source.transport else {
        return Err(format!(
            "source `{}` is not a Streamable HTTP source; only those sign in with OAuth (others take `${{secret:NAME}}` in their env or headers)",
            source.name
        ));
    };
    let Some(settings) = source.connection(connection) else {
        let known: Vec<&str> = source.connections.iter().map(|c| c.name.as_str()).collect();
        return Err(format!(
            "source `{}` has no connection `{connection}`; its connections are: {}",
            source.name,
            known.join(", ")
        ));
    };
    let client = client_identity(settings, &source.name, secrets.as_ref())?;
    let store = TokenStore::new(secrets, &source.name, connection);
    oauth::begin(&source.name, url, store, client)
        .await
        .map_err(|e| e.to_string())
}
