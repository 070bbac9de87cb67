//! `capabilities hub serve`: the MCP server on stdin/stdout, or with `--http` on Streamable HTTP.
//! It answers at once from the cached catalogue while the sources connect in the background, and
//! closes every source (children and grandchildren) when the client closes stdin; Ctrl-C and
//! SIGTERM are handled by `run_async` (the only way an HTTP hub ends).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::net::TcpListener;

use super::{Engine, load_settings, start_engine};
use crate::cli::HubServeArgs;
use crate::config::{LivePolicy, Paths, Settings};
use crate::execute::Executor;
use crate::hub::{self, HttpLimits, HttpOptions, Hub, Origin, is_remote};
use crate::runs::RunsStore;
use crate::sources::{SourceEvent, SourceStatus, Sources};
use tokio::sync::broadcast::error::RecvError;

pub async fn serve(paths: &Paths, args: &HubServeArgs) -> anyhow::Result<ExitCode> {
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
    let settings = load_settings(paths)?;
    let settings = Arc::new(match &args.profile {
        Some(profile) => for_profile(settings, profile)?,
        None => settings,
    });
    if settings.sources.is_empty() {
        tracing::warn!(
            "no sources are configured in {}; the hub serves its tools but has nothing to search",
            paths.config_file.display()
        );
    }
    let Engine {
        store,
        sources,
        catalog,
    } = start_engine(paths, &settings)?;
    record_source_statuses(&sources, store.clone());
    // Rules written while the hub runs (`policy set`, "always allow" from any channel, an edit
    // by hand) apply to its next call.
    let policy = LivePolicy::watching(
        paths.config_file.clone(),
        args.profile.clone(),
        settings.policy.clone(),
    );
    let executor = Arc::new(
        Executor::new(catalog.clone(), settings.clone(), store.clone())
            .with_policy(Arc::new(policy))
            .with_profile(args.profile.clone()),
    );
    let hub = Hub::new(catalog, settings, executor).with_approval_page(paths.config_file.clone());
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
    let wanted = wanted as libc::rlim_t;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    let current = limit.rlim_cur;
    if current >= wanted {
        return;
    }
    let raised = wanted.min(limit.rlim_max);
    if raised > current {
        let mut new = limit;
        new.rlim_cur = raised;
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
            return;
        }
    }
    if raised < wanted {
        tracing::warn!(
            "this process may open at most {raised} files, and --max-connections needs about {wanted} (one per connection, plus room for the sources and the store); near that, new connections wait to be accepted instead of getting 503: raise the hard limit (`ulimit -Hn`) or lower --max-connections"
        );
    }
}

#[cfg(not(unix))]
fn ensure_open_files(_wanted: usize) {}

/// Keeps each source's status in the store, where the dashboard (another process) reads it.
fn record_source_statuses(sources: &Arc<Sources>, store: Arc<RunsStore>) {
    let mut events = sources.subscribe();
    let record = move |name: &str, status: &SourceStatus| {
        let (word, tools, error) = match status {
            SourceStatus::Connecting => ("connecting", 0, None),
            SourceStatus::Ready { tool_count, .. } => ("ready", *tool_count, None),
            SourceStatus::Failed { error } => ("failed", 0, Some(error.as_str())),
            SourceStatus::Restarting { last_error, .. } => {
                ("restarting", 0, Some(last_error.as_str()))
            }
            SourceStatus::Disabled => ("disabled", 0, None),
        };
        if let Err(e) = store.record_source_status(name, word, tools, error) {
            tracing::debug!("cannot record the status of `{name}`: {e}");
        }
    };
    for (name, status) in sources.statuses() {
        record(&name, &status);
    }
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(SourceEvent::StatusChanged { source, status }) => record(&source, &status),
                Ok(SourceEvent::ToolsChanged { .. }) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// The settings with only the profile's sources, and the profile's policy.
fn for_profile(mut settings: Settings, name: &str) -> anyhow::Result<Settings> {
    let Some(profile) = settings.profiles.get(name).cloned() else {
        let known: Vec<&str> = settings.profiles.keys().map(String::as_str).collect();
        if known.is_empty() {
            bail!(
                "there is no profile `{name}`: the config defines none; add one, e.g. [profiles.{name}] sources = [\"…\"]"
            );
        }
        bail!(
            "there is no profile `{name}`; profiles in the config: {}",
            known.join(", ")
        );
    };
    settings
        .sources
        .retain(|s| profile.sources.contains(&s.name));
    settings.policy = profile.policy;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_keeps_only_its_sources_and_unknown_ones_are_named() {
        let path = std::path::Path::new("config.toml");
        let text = "[sources.a]\ncommand = \"x\"\n[sources.b]\ncommand = \"y\"\n[profiles.work]\nsources = [\"b\"]\n";
        let settings = crate::config::load::parse(path, text).unwrap();
        let work = for_profile(settings.clone(), "work").unwrap();
        assert_eq!(
            work.sources
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["b"]
        );
        let err = for_profile(settings, "home").unwrap_err().to_string();
        assert_eq!(
            err,
            "there is no profile `home`; profiles in the config: work"
        );
    }
}
