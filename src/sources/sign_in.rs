//! Beginning the OAuth sign-in of one connection of a Streamable HTTP source or an OpenAPI
//! source, as the config describes it: its URL or document, the client the config names (its
//! secret resolved here, where secrets are read), and the credential store its tokens go to. `source login`, the hub and the
//! dashboard all start sign-ins through [`begin_sign_in`].

use std::sync::Arc;

use super::openapi::{self, Connect};
use super::resolve::{client_identity, resolve_all};
use crate::config::{SourceSettings, Transport};
use crate::credentials::{Redaction, SecretLookup};
use crate::oauth::{self, SignIn, TokenStore};

/// What follows `capabilities source login` to sign in `connection` of `source`: the source
/// alone for its default connection (`None`), else `SOURCE --connection NAME`.
pub fn login_arguments(source: &str, connection: Option<&str>) -> String {
    match connection {
        Some(named) => format!("{source} --connection {named}"),
        None => source.to_string(),
    }
}

/// Starts signing `connection` of `source` in: the returned sign-in's page is ready to open.
/// Errors are messages for the user.
pub async fn begin_sign_in(
    source: &SourceSettings,
    connection: &str,
    secrets: Arc<dyn SecretLookup>,
) -> Result<SignIn, String> {
    let Some(settings) = source.connection(connection) else {
        let known: Vec<&str> = source.connections.iter().map(|c| c.name.as_str()).collect();
        return Err(format!(
            "source `{}` has no connection `{connection}`; its connections are: {}",
            source.name,
            known.join(", ")
        ));
    };
    let client = client_identity(settings, &source.name, secrets.as_ref())?;
    let store = TokenStore::new(secrets.clone(), &source.name, connection);
    match &source.transport {
        Transport::Http { url } => oauth::begin(&source.name, url, store, client)
            .await
            .map_err(|e| e.to_string()),
        Transport::OpenApi { spec, base_url } => {
            // The document names the authorization server; fetching it may take the
            // connection's headers, and `auth` says which schemes already have a token.
            let mut resolved = Vec::new();
            let headers = resolve_all(
                &settings.headers,
                "header",
                &source.name,
                connection,
                secrets.as_ref(),
                &mut resolved,
            )?;
            let auth = resolve_all(
                &settings.auth,
                "auth",
                &source.name,
                connection,
                secrets.as_ref(),
                &mut resolved,
            )?;
            let connect = Connect {
                source: &source.name,
                spec,
                base_url: base_url.as_deref(),
                headers,
                auth,
                connect_timeout: source.connect_timeout,
                sign_in: None,
                redaction: Arc::new(Redaction::new(resolved)),
            };
            openapi::begin_sign_in(connect, store, client).await
        }
        Transport::Stdio { .. } => Err(format!(
            "source `{}` is not a Streamable HTTP source nor an OpenAPI source; only those sign in with OAuth (a local process takes `${{secret:NAME}}` in its env)",
            source.name
        )),
    }
}
