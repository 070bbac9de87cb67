//! `capabilities hub serve`: the MCP server on stdin/stdout, or with `--http` on Streamable HTTP.
//! It answers at once from the cached catalogue while the sources connect in the background, and
//! closes every source (children and grandchildren) when the client closes stdin; Ctrl-C and
//! SIGTERM are handled by `run_async` (the only way an HTTP hub ends).

use super::output::eprint_line;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::net::TcpListener;

use crate::app::App;
use crate::cli::HubServeArgs;
use crate::config::ServeMode;
use crate::hub::{self, HttpLimits, HttpOptions, Hub, Origin, is_remote};
use crate::runs::Store;
use crate::sources::{SourceEvent, SourceStatus, Sources};
use tokio::sync::broadcast::error::RecvError;

pub async fn serve(app: &App, args: &HubServeArgs) -> anyhow::Result<ExitCode> {
    // Before anything starts: a refused origin or address must not leave sources running.
    let allowed_origins = args
        .allowed_origins
        .iter()
        .map(|text| Origin::parse_allowed(text).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let listener = match args.http {
        Some(address) => {
            let listener = bind(address, args.allow_remote).await?;
            // Room for every connection allowed, plus the sources' pipes and the store.
            ensure_open_files(args.max_connections as usize + 256);
            Some(listener)
        }
        None => None,
    };
    let mut settings = app.settings_for(args.profile.as_deref())?;
    if args.direct {
        settings.mode = ServeMode::Direct;
    }
    let engine = app.engine(settings).await?;
    // A replica of a shared store with the wrong key (or none) would fail every run it takes;
    // it refuses to start instead, saying why.
    if app.store_url()?.is_some() {
        engine.store.keys().unlock().await?;
    }
    if engine.settings.sources.is_empty() {
        match &engine.profile {
            Some(profile) => tracing::warn!(
                "profile `{profile}` has no sources in {}; the hub serves its tools but has nothing to search",
                app.paths.config_file.display()
            ),
            None => tracing::warn!(
                "no sources are configured in {}; the hub serves its tools but has nothing to search",
                app.paths.config_file.display()
            ),
        }
    }
    record_source_statuses(&engine.sources, engine.store.clone());
    // Sources with a listing start when a run calls them; the others must be listed first.
    engine.catalog.start_unlisted();
    let executor = Arc::new(engine.executor());
    let store = engine.store.clone();
    let sources = engine.sources.clone();
    let hub = Hub::new(engine.catalog, engine.settings, executor)
        .with_approval_page(app.paths.config_file.clone());
    let served = match listener {
        Some(listener) => {
            let options = HttpOptions {
                listener,
                extra_hosts: args.allowed_hosts.clone(),
                allowed_origins,
                profile: args.profile.clone(),
                limits: HttpLimits {
                    header_timeout: Duration::from_secs(args.header_timeout),
                    idle_timeout: Duration::from_secs(args.idle_timeout),
                    max_connections: args.max_connections as usize,
                },
                body_timeout: Duration::from_secs(args.body_timeout),
            };
            hub::serve_http(hub, store, options).await
        }
        None => {
            // Started by hand rather than by an MCP client: say what this is, once, on stderr
            // (stdout carries JSON-RPC only).
            if std::io::stdin().is_terminal() {
                eprint_line(format_args!(
                    "capabilities hub speaks MCP on stdin/stdout and waits for a client's JSON-RPC here; to connect a client, add the entry `{}` prints to its config (it starts the hub itself), or serve HTTP with `{}`. Ctrl-C stops it.",
                    app.command("install print"),
                    app.command("hub serve --http 127.0.0.1:8931")
                ));
            }
            let (stdin, stdout) = rmcp::transport::stdio_pipes();
            hub::serve(hub, stdin, stdout).await
        }
    };
    sources.shutdown().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Listens on `address`; one other machines can reach needs `--allow-remote`.
async fn bind(address: SocketAddr, allow_remote: bool) -> anyhow::Result<TcpListener> {
    if is_remote(&address) && !allow_remote {
        bail!(
            "refusing to serve on {address}: other machines can reach that address, and the hub runs tools with your credentials; bind 127.0.0.1, or pass --allow-remote (with TLS termination in front and --allowed-host for the name clients use)"
        );
    }
    let listener = TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    let bound = listener.local_addr().unwrap_or(address);
    crate::logging::notice(
        tracing::Level::INFO,
        &format!(
            "serving MCP at http://{bound}/mcp (every request needs a bearer token: `capabilities token create NAME`)"
        ),
    );
    Ok(listener)
}

/// Raises this process's soft limit on open files to `wanted` when it is lower (up to the hard
/// limit), as servers commonly do: the usual soft limit (1024, or 256 on macOS) would make
/// accepting fail well before `--max-connections` could answer 503. Says so when even the
/// hard limit is lower.
#[cfg(unix)]
fn ensure_open_files(wanted: usize) {
    let wanted = wanted as u64;
    match rlimit::increase_nofile_limit(wanted) {
        Ok(raised) if raised < wanted => tracing::warn!(
            "this process may open at most {raised} files, and --max-connections needs about {wanted} (one per connection, plus room for the sources and the store); near that, new connections wait to be accepted instead of getting 503: raise the hard limit (`ulimit -Hn`) or lower --max-connections"
        ),
        Ok(_) => {}
        Err(e) => tracing::debug!("the limit on open files was not raised: {e}"),
    }
}

#[cfg(not(unix))]
fn ensure_open_files(_wanted: usize) {}

/// Keeps each source's status in the store, where the dashboard (another process) reads it.
fn record_source_statuses(sources: &Arc<Sources>, store: Store) {
    let mut events = sources.subscribe();
    let initial = sources.statuses();
    tokio::spawn(async move {
        let record = async |name: &str, status: &SourceStatus| {
            let (word, tools, error) = match status {
                SourceStatus::Idle => ("idle", 0, None),
                SourceStatus::Connecting => ("connecting", 0, None),
                SourceStatus::Ready { tool_count, .. } => ("ready", *tool_count, None),
                SourceStatus::Failed { error } => ("failed", 0, Some(error.as_str())),
                SourceStatus::Restarting { last_error, .. } => {
                    ("restarting", 0, Some(last_error.as_str()))
                }
                SourceStatus::Disabled => ("disabled", 0, None),
            };
            let recorded = store.source_status().record(name, word, tools, error).await;
            if let Err(e) = recorded {
                tracing::debug!("cannot record the status of `{name}`: {e}");
            }
        };
        for (name, status) in initial {
            record(&name, &status).await;
        }
        loop {
            match events.recv().await {
                Ok(SourceEvent::StatusChanged { source, status }) => record(&source, &status).await,
                Ok(SourceEvent::ToolsChanged { .. }) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
}
