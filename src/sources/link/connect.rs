//! Connecting a link: start the stdio child or open the Streamable HTTP session (signed in
//! with its stored OAuth tokens, or its configured credentials), or read an OpenAPI document;
//! then list the tools, all within the source's timeouts. What failed is said in words the
//! person can act on, with the connection's secrets blanked.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::auth::AuthClient;

use super::{ConnectError, Link, Live, listen_for_changes};
use crate::config::{ConnectionSettings, Transport};
use crate::credentials::SecretLookup;
use crate::oauth;
use crate::sources::error::{chain, handshake_cause, listing_failed, request_cause};
use crate::sources::handler::UpstreamHandler;
use crate::sources::openapi::{Api, Connect};
use crate::sources::resolve::client_identity;
use crate::sources::status::SourceStatus;
use crate::sources::{http, stdio};

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// The handshake for a server known to speak `server/discover`: the probe alone, no fallback.
fn discover_only() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Connects within the connect timeout, then lists the tools within the request timeout.
pub(super) async fn connect(link: &Arc<Link>) -> Result<(Live, SourceStatus), ConnectError> {
    let source = &link.source;
    let Some(connection) = link.connection_settings() else {
        return Err(ConnectError::Failed(format!(
            "{} has no connection `{}`",
            link.describe(),
            link.connection
        )));
    };
    // What an earlier process of the server listed says nothing about this one.
    link.set_listed(None);
    let secrets = link.shared.secrets.as_ref();
    let events = link.is_default.then(|| link.shared.events.clone());
    let limit = source.connect_timeout;
    let mut resolved = Vec::new();
    let (running, child) = match &source.transport {
        Transport::Stdio { command, args, cwd } => {
            let env = link.resolve(&connection.env, "env", secrets, &mut resolved)?;
            let redaction = link.set_redaction(resolved);
            let launch = stdio::Launch {
                command,
                args,
                cwd: cwd.as_deref(),
                env,
                withheld: &link.shared.env_credentials,
            };
            let (mut child, transport) =
                stdio::spawn(&source.name, launch.clone(), redaction.clone())?;
            link.set_pid(child.pid());
            let handler = UpstreamHandler::new(&source.name, events.clone());
            let first =
                tokio::time::timeout(limit, handler.serve_with_lifecycle(transport, lifecycle()))
                    .await;
            // rmcp probes with `server/discover` for 10 s, then sends `initialize`. A server slow
            // to start (a loaded machine) answers the probe after that, and rmcp takes the late
            // answer for a wrong one. The answer proves the server speaks `server/discover`:
            // a fresh process is asked with it alone, within the connect timeout again.
            let first = match first {
                Ok(Err(ClientInitializeError::ConflictInitResponseId(..))) => {
                    drop(child);
                    let (fresh, transport) = stdio::spawn(&source.name, launch, redaction)?;
                    child = fresh;
                    link.set_pid(child.pid());
                    let handler = UpstreamHandler::new(&source.name, events.clone());
                    tokio::time::timeout(
                        limit,
                        handler.serve_with_lifecycle(transport, discover_only()),
                    )
                    .await
                }
                other => other,
            };
            match first {
                Ok(Ok(running)) => (running, Some(child)),
                Ok(Err(error)) => {
                    let error = chain(handshake_cause(&error));
                    return Err(child
                        .explain_connect_failure(Some(error), limit)
                        .await
                        .into());
                }
                Err(_) => return Err(child.explain_connect_failure(None, limit).await.into()),
            }
        }
        Transport::OpenApi { spec, base_url } => {
            return connect_openapi(link, connection, spec, base_url.as_deref(), secrets)
                .await
                .map_err(ConnectError::Failed);
        }
        Transport::Http { url } => {
            let headers = link.resolve(&connection.headers, "header", secrets, &mut resolved)?;
            link.set_redaction(resolved);
            // A configured `Authorization` header is the user's choice of credential: OAuth
            // stays out of its way, and a 401 means that credential was refused.
            let static_auth = headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
            let oauth = if static_auth {
                None
            } else {
                signed_in_client(link, url).await?
            };
            link.set_oauth(oauth.clone());
            let serve = async |lifecycle: ClientLifecycleMode| -> Result<_, ConnectError> {
                let handler = UpstreamHandler::new(&source.name, events.clone());
                let headers = headers.clone();
                Ok(match &oauth {
                    Some(client) => {
                        let transport =
                            http::signed_in_transport(&source.name, url, headers, client.clone())?;
                        tokio::time::timeout(
                            limit,
                            handler.serve_with_lifecycle(transport, lifecycle),
                        )
                        .await
                    }
                    None => {
                        let transport = http::transport(&source.name, url, headers)?;
                        tokio::time::timeout(
                            limit,
                            handler.serve_with_lifecycle(transport, lifecycle),
                        )
                        .await
                    }
                })
            };
            let mut handshake = serve(lifecycle()).await?;
            // As with a stdio server (above): a server that answered rmcp's probe after the
            // `initialize` that followed it speaks `server/discover`, so it is asked with that
            // alone, on a fresh transport, within the connect timeout again.
            if matches!(
                handshake,
                Ok(Err(ClientInitializeError::ConflictInitResponseId(..)))
            ) {
                handshake = serve(discover_only()).await?;
            }
            match handshake {
                Ok(Ok(running)) => (running, None),
                Ok(Err(error)) if error.is_authorization_required() && !static_auth => {
                    let why = if link.oauth().is_some() {
                        "the server no longer accepts its sign-in"
                    } else {
                        "it has not signed in yet"
                    };
                    return Err(ConnectError::SignIn(link.sign_in_message(why)));
                }
                Ok(Err(error)) => {
                    return Err(ConnectError::Failed(http::explain_connect_failure(
                        &source.name,
                        url,
                        Some(&error),
                        limit,
                    )));
                }
                Err(_) => {
                    return Err(ConnectError::Failed(http::explain_connect_failure(
                        &source.name,
                        url,
                        None,
                        limit,
                    )));
                }
            }
        }
    };
    let info = running.peer().peer_info();
    let protocol_version = info.as_ref().map(|info| info.protocol_version.clone());
    let tools_capability = info
        .as_ref()
        .and_then(|info| info.capabilities.tools.clone());
    let tool_count = if tools_capability.is_some() {
        let listed =
            tokio::time::timeout(source.request_timeout, running.peer().list_all_tools()).await;
        match listed {
            Ok(Ok(tools)) => {
                link.set_listed(Some(
                    tools
                        .iter()
                        .filter_map(|tool| serde_json::to_value(tool).ok())
                        .collect(),
                ));
                tools.len()
            }
            Ok(Err(error)) => {
                return Err(ConnectError::Failed(listing_failed(&chain(request_cause(
                    &error,
                )))));
            }
            Err(_) => {
                return Err(ConnectError::Failed(format!(
                    "connected, but it did not list its tools within {} s (`request_timeout_secs`)",
                    source.request_timeout.as_secs_f64()
                )));
            }
        }
    } else {
        0
    };
    let listener = match (&protocol_version, &tools_capability) {
        (Some(version), Some(tools))
            if !version.has_initialize() && tools.list_changed == Some(true) && link.is_default =>
        {
            Some(tokio::spawn(listen_for_changes(
                running.peer().clone(),
                link.shared.events.clone(),
                source.name.clone(),
            )))
        }
        _ => None,
    };
    let server = info.as_ref().and_then(|info| info.server_info.as_ref());
    let status = SourceStatus::Ready {
        protocol_version: protocol_version
            .map(|v| v.as_str().to_string())
            .unwrap_or_else(|| "unknown".into()),
        // The server's own words, shown by `source test` and `source list`: blanked like
        // everything else it sends, since a careless one may put a secret it was given there.
        server_name: server.map(|s| link.clean_text(&s.name)),
        server_version: server.map(|s| link.clean_text(&s.version)),
        tool_count,
    };
    Ok((
        Live::Mcp {
            running,
            child,
            listener,
        },
        status,
    ))
}

/// The OAuth client of a connection with a stored sign-in; `None` without one (or without a
/// credential store to read it from).
async fn signed_in_client(
    link: &Link,
    url: &str,
) -> Result<Option<AuthClient<reqwest::Client>>, ConnectError> {
    if link.shared.secrets.vault().is_none() {
        return Ok(None);
    }
    let client = match link.connection_settings() {
        Some(connection) => {
            client_identity(connection, &link.source.name, link.shared.secrets.as_ref())?
        }
        None => None,
    };
    let manager = oauth::signed_in_manager(url, None, link.token_store(), client)
        .await
        .map_err(|error| {
            ConnectError::Failed(format!(
                "{}: its stored sign-in cannot be used: {}",
                link.describe(),
                oauth::signin::explain(&error)
            ))
        })?;
    match manager {
        Some(manager) => Ok(Some(http::oauth_client(&link.source.name, url, manager)?)),
        None => Ok(None),
    }
}

/// Reads an OpenAPI source's document with the connection's headers and credentials resolved.
async fn connect_openapi(
    link: &Arc<Link>,
    connection: &ConnectionSettings,
    spec: &str,
    base_url: Option<&str>,
    secrets: &dyn SecretLookup,
) -> Result<(Live, SourceStatus), String> {
    let source = &link.source;
    let mut resolved = Vec::new();
    let headers = link.resolve(&connection.headers, "header", secrets, &mut resolved)?;
    let auth = link.resolve(&connection.auth, "auth", secrets, &mut resolved)?;
    let redaction = link.set_redaction(resolved);
    let sign_in = match link.shared.secrets.vault() {
        Some(_) => Some((
            link.token_store(),
            client_identity(connection, &source.name, secrets)?,
        )),
        None => None,
    };
    let api = Api::connect(Connect {
        source: &source.name,
        spec,
        base_url,
        headers,
        auth,
        connect_timeout: source.connect_timeout,
        sign_in,
        redaction,
    })
    .await?;
    let status = SourceStatus::Ready {
        protocol_version: link.clean_text(&api.protocol),
        server_name: api.title.as_deref().map(|title| link.clean_text(title)),
        server_version: api
            .version
            .as_deref()
            .map(|version| link.clean_text(version)),
        tool_count: api.tools().len(),
    };
    Ok((Live::OpenApi(Arc::new(api)), status))
}
