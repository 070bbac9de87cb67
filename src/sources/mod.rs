//! Upstream MCP clients (rmcp): one [`Sources`] manager connects the enabled sources of the
//! config in the background, a few at a time ([`Pacing`]), over stdio (a child process in its
//! own process group) or Streamable HTTP, or reads an HTTP API's OpenAPI document (`openapi`,
//! whose operations answer as tools do), and keeps each one's [`SourceStatus`]. With
//! [`Sources::start`] every source's default connection connects at once; with
//! [`Sources::lazy`] only those asked for ([`Sources::connect`]) or called; other connections
//! on first use. Slow, hanging, crashing or noisy sources
//! fail on their own, with a message that says what happened and what to do; one that crashes
//! after it was ready is restarted with backoff.
//!
//! ```text
//! let sources = Sources::start(settings.sources, secrets);   // returns at once
//! let mut events = sources.subscribe();                      // StatusChanged, ToolsChanged
//! sources.wait_settled(Duration::from_secs(30)).await;       // every source ready or failed
//! let tools = sources.list_tools("everything").await?;
//! let result = sources.call_tool("everything", None, "echo", args).await?;
//! sources.shutdown().await;                                  // children and grandchildren gone
//! ```
//!
//! Stdio children run in process groups of their own, so a terminal's Ctrl-C does not reach
//! them, and inherit the hub's environment without its keys or the credentials other sources
//! read from it (see [`SourceSettings::env_credentials`]). A command that runs sources should wait for [`termination_signal`] beside its work, then
//! await [`Sources::shutdown`] and exit with the status it returned:
//!
//! ```text
//! tokio::select! {
//!     result = work => result,
//!     status = sources::termination_signal() => { sources.shutdown().await; exit(status) }
//! }
//! ```
//!
//! Where nothing can be awaited any more, [`kill_all`] kills every child process group at once;
//! dropping the last `Arc<Sources>` does the same for its own children.

mod decided;
mod error;
mod handler;
mod http;
mod link;
mod openapi;
// Signals whole process groups (`killpg`), which only libc offers.
#[allow(unsafe_code)]
mod process_group;
mod resolve;
mod sign_in;
mod signals;
mod status;
mod stdio;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, broadcast, watch};

pub use error::{SourceError, is_sign_in_message};
pub use openapi::document_tools;
pub use process_group::kill_all;
pub use resolve::{client_identity, connection_secrets, hub_secrets};
pub use sign_in::{begin_sign_in, login_arguments};
pub use signals::termination_signal;
pub use status::{SourceEvent, SourceStatus};

use self::link::{Client, Link, LinkState, Shared};
use self::openapi::CallError;
use crate::config::{Pacing, SourceSettings, Transport, env_credentials};
use crate::credentials::{Resolved, SecretLookup, Sent};
use crate::model::tool::UpstreamTool;

/// How many events a slow subscriber may fall behind before it misses some.
const EVENT_CAPACITY: usize = 256;
/// Extra time a request waits for a connecting source beyond its connect and list timeouts,
/// covering the time taken to explain a failure.
const SETTLE_SLACK: Duration = Duration::from_secs(10);

/// The connections to every configured source.
pub struct Sources {
    /// In config order.
    sources: Vec<Entry>,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
}

struct Entry {
    settings: Arc<SourceSettings>,
    /// Default connection first; empty for a disabled source.
    links: Vec<Arc<Link>>,
}

impl Sources {
    /// Starts connecting every enabled source's default connection (a few at a time) and
    /// returns at once. Must be called inside a tokio runtime.
    pub fn start(sources: Vec<SourceSettings>, secrets: Arc<dyn SecretLookup>) -> Arc<Sources> {
        Sources::start_paced(sources, secrets, Pacing::default())
    }

    /// [`start`](Self::start), paced by `pacing` (the config's `[hub] max_starting`).
    pub fn start_paced(
        sources: Vec<SourceSettings>,
        secrets: Arc<dyn SecretLookup>,
        pacing: Pacing,
    ) -> Arc<Sources> {
        let manager = Sources::lazy(sources, secrets, pacing);
        for entry in &manager.sources {
            if let Some(default) = entry.links.first() {
                default.ensure_started();
            }
        }
        manager
    }

    /// A manager that starts nothing until a source is asked for ([`connect`](Self::connect))
    /// or called, paced by `pacing`. Must be called inside a tokio runtime.
    pub fn lazy(
        sources: Vec<SourceSettings>,
        secrets: Arc<dyn SecretLookup>,
        pacing: Pacing,
    ) -> Arc<Sources> {
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let shared = Arc::new(Shared {
            env_credentials: withheld(&sources),
            every_connection: sources
                .iter()
                .flat_map(|s| {
                    let signs_in = !matches!(s.transport, Transport::Stdio { .. });
                    s.connections
                        .iter()
                        .map(move |c| (s.name.clone(), c.clone(), signs_in))
                })
                .collect(),
            config_secrets: Resolved::default(),
            tokens: Arc::default(),
            secrets,
            events,
            shutdown: shutdown_rx,
            tasks: Mutex::new(Vec::new()),
            starting: Semaphore::new(pacing.max_starting.max(1)),
            idle_stop: pacing.idle_stop,
        });
        let sources: Vec<Entry> = sources
            .into_iter()
            .map(|settings| {
                let settings = Arc::new(settings);
                let mut links: Vec<Arc<Link>> = if settings.enabled {
                    settings
                        .connections
                        .iter()
                        .map(|connection| Link::new(settings.clone(), connection, shared.clone()))
                        .collect()
                } else {
                    Vec::new()
                };
                // The default first, so `links[0]` is the one that reports the source's status.
                links.sort_by_key(|link| !link.is_default);
                Entry { settings, links }
            })
            .collect();
        Arc::new(Sources {
            sources,
            shared,
            shutdown,
        })
    }

    /// Starts connecting the source's default connection unless it runs already; returns at
    /// once. A disabled or unknown source is an error.
    pub fn connect(&self, source: &str) -> Result<(), SourceError> {
        self.link(source, None)?.ensure_started();
        Ok(())
    }

    /// Where this manager's `${secret:NAME}` values come from: the bridge checks tool arguments
    /// and upstream answers against them.
    pub fn secrets(&self) -> &Arc<dyn SecretLookup> {
        &self.shared.secrets
    }

    /// Status changes and tool-list changes from now on. Subscribe first, then read
    /// [`statuses`](Self::statuses), so nothing falls between the two.
    pub fn subscribe(&self) -> broadcast::Receiver<SourceEvent> {
        self.shared.events.subscribe()
    }

    /// Every source's status (its default connection's), in config order.
    pub fn statuses(&self) -> Vec<(String, SourceStatus)> {
        self.sources
            .iter()
            .map(|entry| (entry.settings.name.clone(), entry.status()))
            .collect()
    }

    /// One source's status; `None` for a name not in the config.
    pub fn status(&self, source: &str) -> Option<SourceStatus> {
        self.entry(source).ok().map(Entry::status)
    }

    /// The process id (also its process group id) of a stdio source's running default
    /// connection, for diagnostics.
    pub fn pid(&self, source: &str) -> Option<u32> {
        self.entry(source).ok()?.links.first()?.pid()
    }

    /// Waits until every started source is ready or failed, or `timeout` passes, and returns
    /// the statuses at that point. Sources nothing started are not waited for.
    pub async fn wait_settled(&self, timeout: Duration) -> Vec<(String, SourceStatus)> {
        let all = async {
            for entry in &self.sources {
                if let Some(link) = entry.links.first() {
                    let mut state = link.state.subscribe();
                    // An error means the link is gone with the manager: nothing left to wait for.
                    let _ = state.wait_for(|state| state.status().is_settled()).await;
                }
            }
        };
        let _ = tokio::time::timeout(timeout, all).await;
        self.statuses()
    }

    /// Every tool the source lists (`tools/list`, all pages, or an OpenAPI document's
    /// operations), through its default connection.
    pub async fn list_tools(&self, source: &str) -> Result<Vec<UpstreamTool>, SourceError> {
        let link = self.link(source, None)?;
        let _busy = link.busy();
        let request = "tools/list";
        let tools: Vec<Value> = match ready_client(&link).await? {
            Client::Mcp(peer) => with_timeout(&link, request, peer.list_all_tools())
                .await?
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()
                .inspect(|tools: &Vec<Value>| link.set_listed(Some(tools.clone()))),
            Client::OpenApi(api) => api.tools().iter().map(serde_json::to_value).collect(),
        }
        .map_err(|error| SourceError::Upstream {
            name: source.to_string(),
            request: request.to_string(),
            message: format!("its tool listing cannot be read: {error}"),
        })?;
        tools
            .into_iter()
            .map(|tool| blanked(&link, tool))
            .map(|tool| {
                let name = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                serde_json::from_value(tool).map_err(|error| SourceError::Upstream {
                    name: source.to_string(),
                    request: request.to_string(),
                    message: format!("its definition of tool `{name}` cannot be read: {error}"),
                })
            })
            .collect()
    }

    /// The skills the source publishes under the Skills extension (`skills/list`, all pages),
    /// through its default connection, redacted like its tools; none when it does not declare
    /// the extension (or is an OpenAPI document).
    pub async fn list_skills(&self, source: &str) -> Result<Vec<rmcp::model::Skill>, SourceError> {
        let link = self.link(source, None)?;
        let _busy = link.busy();
        let request = "skills/list";
        let Client::Mcp(peer) = ready_client(&link).await? else {
            return Ok(Vec::new());
        };
        if !peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_skills())
        {
            return Ok(Vec::new());
        }
        let skills = with_timeout(&link, request, peer.list_all_skills()).await?;
        let mut out = Vec::with_capacity(skills.len());
        for skill in skills {
            let value = serde_json::to_value(&skill).map_err(|error| SourceError::Upstream {
                name: source.to_string(),
                request: request.to_string(),
                message: format!("its skill listing cannot be read: {error}"),
            })?;
            let value = blanked(&link, value);
            out.push(
                serde_json::from_value(value).map_err(|error| SourceError::Upstream {
                    name: source.to_string(),
                    request: request.to_string(),
                    message: format!("its skill listing cannot be read: {error}"),
                })?,
            );
        }
        Ok(out)
    }

    /// `bytes` from the source with every secret it was given (and its sign-in token) blanked,
    /// as its tool listings and results are: for a file read from it some other way, checked
    /// first against a digest that needs the bytes as they came. Text or not: a file that is
    /// not UTF-8 is served too, and holds a secret's forms as bytes all the same.
    pub async fn scrub(&self, source: &str, bytes: Vec<u8>) -> Vec<u8> {
        let Ok(link) = self.link(source, None) else {
            return bytes;
        };
        let bytes = link.redaction().clean_bytes(bytes);
        link.token_redaction().clean_bytes(bytes)
    }

    /// The bytes of the resource `uri` (`resources/read`) of the source, through its default
    /// connection: a text content as UTF-8, a blob decoded. Not scrubbed: a caller checks them
    /// against a digest first, then scrubs them ([`scrub`](Self::scrub)).
    pub async fn read_resource(&self, source: &str, uri: &str) -> Result<Vec<u8>, SourceError> {
        let link = self.link(source, None)?;
        let _busy = link.busy();
        let request = format!("resources/read `{uri}`");
        let Client::Mcp(peer) = ready_client(&link).await? else {
            return Err(SourceError::Upstream {
                name: source.to_string(),
                request,
                message: "it is an OpenAPI document, which has no resources".into(),
            });
        };
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_string());
        let result = with_timeout(&link, &request, peer.read_resource(params)).await?;
        let unreadable = |message: String| SourceError::Upstream {
            name: source.to_string(),
            request: request.clone(),
            message,
        };
        let value = serde_json::to_value(&result).map_err(|e| unreadable(e.to_string()))?;
        let contents = value
            .get("contents")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
                    .or(c.first())
            })
            .ok_or_else(|| unreadable("it answered with no contents".into()))?;
        if let Some(text) = contents.get("text").and_then(Value::as_str) {
            return Ok(text.as_bytes().to_vec());
        }
        let blob = contents
            .get("blob")
            .and_then(Value::as_str)
            .ok_or_else(|| unreadable("its contents have neither text nor blob".into()))?;
        data_encoding::BASE64
            .decode(blob.as_bytes())
            .map_err(|e| unreadable(format!("its blob is not base64: {e}")))
    }

    /// Calls `upstream_name` on the source through `connection` (the default when `None`) and
    /// returns the upstream's `CallToolResult` as JSON, `isError` results included. Each call
    /// writes one info line (source, tool, outcome, duration; never arguments or results), in
    /// the span of the request and run that made it.
    pub async fn call_tool(
        &self,
        source: &str,
        connection: Option<&str>,
        upstream_name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, SourceError> {
        self.call_logged(source, connection, upstream_name, arguments, None)
            .await
    }

    /// [`call_tool`](Self::call_tool) for a call decided on the catalogued definition whose
    /// hash is `decided_on` (policy, a person's approval and freshness all judged that one).
    /// An OpenAPI source reads its document again when it connects, and the hub builds the
    /// request from it: an operation the document now describes otherwise (a GET turned
    /// DELETE, requests moved to another server) is not sent, and the answer says so.
    pub async fn call_decided_tool(
        &self,
        source: &str,
        connection: Option<&str>,
        upstream_name: &str,
        arguments: Map<String, Value>,
        decided_on: &str,
    ) -> Result<Value, SourceError> {
        self.call_logged(
            source,
            connection,
            upstream_name,
            arguments,
            Some(decided_on),
        )
        .await
    }

    async fn call_logged(
        &self,
        source: &str,
        connection: Option<&str>,
        upstream_name: &str,
        arguments: Map<String, Value>,
        decided_on: Option<&str>,
    ) -> Result<Value, SourceError> {
        let started = std::time::Instant::now();
        let result = self
            .call_tool_unlogged(source, connection, upstream_name, arguments, decided_on)
            .await;
        let outcome = match &result {
            Ok(answer) if answer.get("isError") == Some(&Value::Bool(true)) => "tool_error",
            Ok(_) => "ok",
            Err(_) => "error",
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        tracing::info!(
            source,
            tool = upstream_name,
            outcome,
            duration_ms,
            "upstream call finished"
        );
        result
    }

    async fn call_tool_unlogged(
        &self,
        source: &str,
        connection: Option<&str>,
        upstream_name: &str,
        arguments: Map<String, Value>,
        decided_on: Option<&str>,
    ) -> Result<Value, SourceError> {
        let link = self.link(source, connection)?;
        let _busy = link.busy();
        let request = format!("tools/call `{upstream_name}`");
        let peer = match ready_client(&link).await? {
            Client::Mcp(peer) => {
                // A server that restarted since the catalogue listed it may define the tool
                // otherwise; its connect listed it again.
                if let Some(decided_on) = decided_on {
                    self.check_decided_listing(&link, &peer, upstream_name, decided_on)
                        .await?;
                }
                peer
            }
            Client::OpenApi(api) => {
                if let Some(decided_on) = decided_on {
                    let listed = api
                        .tools()
                        .iter()
                        .find(|t| t.name == upstream_name)
                        .and_then(|t| serde_json::to_value(t).ok());
                    self.check_decided(source, upstream_name, listed, decided_on)
                        .await?;
                }
                let sent = Sent::of_map(&arguments);
                let call = api.call(upstream_name, &arguments, &sent);
                let timeout = link.source.request_timeout;
                let answer = tokio::time::timeout(timeout, call).await.map_err(|_| {
                    SourceError::Timeout {
                        name: source.to_string(),
                        request: request.clone(),
                        timeout,
                    }
                })?;
                return match answer {
                    Ok(result) => Ok(result),
                    // Arguments the schema let through but no request can carry: the
                    // script's mistake, told as a tool error it can correct.
                    Err(CallError::Request(message)) => {
                        Ok(tool_error(format!("{upstream_name}: {message}")))
                    }
                    Err(CallError::Network(message)) => Err(SourceError::Transport {
                        name: source.to_string(),
                        request,
                        message,
                    }
                    .blanked(|text| link.clean_answer_text(text, &sent))),
                    Err(CallError::Unsent(reason)) => Err(SourceError::Unavailable {
                        name: source.to_string(),
                        reason: format!("{reason}; nothing was sent"),
                    }
                    .blanked(|text| link.clean_answer_text(text, &sent))),
                    Err(CallError::SignIn(why)) => Err(SourceError::NeedsSignIn {
                        name: source.to_string(),
                        connection: link.connection.clone(),
                        reason: link.sign_in_message(&why),
                    }),
                    Err(CallError::Token(reason)) => Err(SourceError::Unavailable {
                        name: source.to_string(),
                        reason: format!("its sign-in cannot be used: {reason}"),
                    }),
                    Err(CallError::Unknown(name)) => Err(SourceError::Upstream {
                        name: source.to_string(),
                        request,
                        message: format!(
                            "its OpenAPI document has no operation `{name}` (any more); `capabilities source refresh {source}` lists it again"
                        ),
                    }),
                };
            }
        };
        let sent = Sent::of_map(&arguments);
        let params =
            CallToolRequestParams::new(upstream_name.to_string()).with_arguments(arguments);
        let call = peer.call_tool_once(params);
        let response = answered(&link, &request, call, &sent).await?;
        let unsupported = |what: &str| SourceError::Upstream {
            name: source.to_string(),
            request: request.clone(),
            message: format!("it answered with {what}, which capabilities cannot relay yet"),
        };
        match response {
            CallToolResponse::Complete(result) => {
                let mut answer =
                    serde_json::to_value(&result).map_err(|error| SourceError::Upstream {
                        name: source.to_string(),
                        request: request.clone(),
                        message: format!("its result cannot be read: {error}"),
                    })?;
                link.clean_token_answer(&mut answer, &sent);
                Ok(answer)
            }
            CallToolResponse::InputRequired(_) => Err(unsupported("a request for more input")),
            CallToolResponse::Task(_) => Err(unsupported("a task to poll")),
            _ => Err(unsupported("a kind of result")),
        }
    }

    /// Why `source`'s `connection` (its default when `None`) cannot be called until the person
    /// signs in, if that is so: it connects (or connects again) first, and checks a signed-in
    /// connection's token, refreshing it when it is about to expire. Any other trouble is left
    /// for the call to report.
    ///
    /// An OpenAPI source lists its operations without a sign-in: only a call to `upstream_name`
    /// whose operation needs the connection's OAuth token waits for one.
    pub async fn sign_in_needed(
        &self,
        source: &str,
        connection: Option<&str>,
        upstream_name: &str,
    ) -> Option<String> {
        let link = self.link(source, connection).ok()?;
        let _busy = link.busy();
        match ready_client(&link).await {
            Err(SourceError::NeedsSignIn { reason, .. }) => Some(reason),
            Ok(Client::OpenApi(api)) => api
                .sign_in_needed(upstream_name)
                .await
                .map(|why| link.sign_in_message(&why)),
            Ok(Client::Mcp(_)) => link.sign_in_needed().await,
            Err(_) => None,
        }
    }

    /// Connects again a source whose connection failed (after the user fixed the server or the
    /// network came back); other states are left alone. Returns at once: follow
    /// [`statuses`](Self::statuses) or the events.
    pub fn retry(&self, source: &str) -> Result<(), SourceError> {
        let entry = self.entry(source)?;
        if entry.links.is_empty() {
            return Err(SourceError::Disabled {
                name: source.to_string(),
            });
        }
        for link in &entry.links {
            link.retry();
        }
        Ok(())
    }

    /// True once [`shutdown`](Self::shutdown) began: a source that fails from then on was
    /// stopped by us, which says nothing about whether it works.
    pub fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Closes every connection: stdio children get their stdin closed, then SIGTERM, then
    /// SIGKILL for their whole process group; returns when all are gone.
    pub async fn shutdown(&self) {
        self.shutdown.send_replace(true);
        loop {
            let tasks: Vec<_> = std::mem::take(
                &mut *self
                    .shared
                    .tasks
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            );
            if tasks.is_empty() {
                break;
            }
            for task in tasks {
                // A supervisor that panicked has dropped its child, which killed the group.
                let _ = task.await;
            }
        }
    }

    fn entry(&self, source: &str) -> Result<&Entry, SourceError> {
        self.sources
            .iter()
            .find(|entry| entry.settings.name == source)
            .ok_or_else(|| {
                let known: Vec<&str> = self
                    .sources
                    .iter()
                    .map(|e| e.settings.name.as_str())
                    .collect();
                SourceError::UnknownSource {
                    name: source.to_string(),
                    known: if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    },
                }
            })
    }

    fn link(&self, source: &str, connection: Option<&str>) -> Result<Arc<Link>, SourceError> {
        let entry = self.entry(source)?;
        if entry.links.is_empty() {
            return Err(SourceError::Disabled {
                name: source.to_string(),
            });
        }
        let found = match connection {
            None => entry.links.first(),
            Some(name) => entry.links.iter().find(|link| link.connection == name),
        };
        found
            .cloned()
            .ok_or_else(|| SourceError::UnknownConnection {
                name: source.to_string(),
                connection: connection.unwrap_or_default().to_string(),
                known: entry
                    .links
                    .iter()
                    .map(|link| {
                        if link.is_default {
                            format!("{} (default)", link.connection)
                        } else {
                            link.connection.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl Entry {
    fn status(&self) -> SourceStatus {
        match self.links.first() {
            Some(link) => link.state.borrow().status(),
            None => SourceStatus::Disabled,
        }
    }
}

impl Drop for Sources {
    fn drop(&mut self) {
        // The supervisors close their connections in the background when they see this; the
        // synchronous kill below makes sure no child outlives us even if they never run again.
        self.shutdown.send_replace(true);
        for link in self.sources.iter().flat_map(|entry| &entry.links) {
            if let Some(pid) = link.pid().and_then(|pid| i32::try_from(pid).ok()) {
                process_group::signal(pid, process_group::Signal::Kill);
                process_group::unregister(pid);
            }
        }
    }
}

/// Starts the link if needed and waits until it is ready; errors say why it is not. A link
/// that needed a sign-in connects again: the person may have signed in since.
async fn ready_client(link: &Arc<Link>) -> Result<Client, SourceError> {
    link.retry_sign_in();
    link.ensure_started();
    let name = link.source.name.clone();
    let bound = link.source.connect_timeout + link.source.request_timeout + SETTLE_SLACK;
    let mut watcher = link.state.subscribe();
    let state =
        match tokio::time::timeout(bound, watcher.wait_for(|state| !state.is_pending())).await {
            Ok(Ok(state)) => state.clone(),
            Ok(Err(_)) => return Err(SourceError::ShutDown),
            Err(_) => {
                return Err(SourceError::Unavailable {
                    name,
                    reason: "it is still connecting; try again in a moment".into(),
                });
            }
        };
    match state {
        LinkState::Ready { client, .. } => Ok(client),
        // A failed connect's reason can quote the upstream.
        LinkState::Failed(reason) => Err(SourceError::Unavailable {
            name,
            reason: link.clean_text(&reason),
        }),
        LinkState::NeedsSignIn(reason) => Err(SourceError::NeedsSignIn {
            name,
            connection: link.connection.clone(),
            reason,
        }),
        LinkState::Restarting {
            attempt,
            last_error,
        } => Err(SourceError::Unavailable {
            name,
            reason: format!(
                "it stopped ({last_error}) and is restarting (attempt {attempt}); try again in a moment"
            ),
        }),
        LinkState::Stopped => Err(SourceError::ShutDown),
        LinkState::Idle | LinkState::Connecting => Err(SourceError::Unavailable {
            name,
            reason: "it is still connecting; try again in a moment".into(),
        }),
    }
}

/// Runs one request under the source's request timeout and turns rmcp's errors into ours.
async fn with_timeout<T>(
    link: &Link,
    request: &str,
    future: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, SourceError> {
    answered(link, request, future, &Sent::NOTHING).await
}

/// [`with_timeout`] for a call that sent `sent`, which an error may echo (see [`Sent`]).
async fn answered<T>(
    link: &Link,
    request: &str,
    future: impl Future<Output = Result<T, ServiceError>>,
    sent: &Sent,
) -> Result<T, SourceError> {
    let name = link.source.name.clone();
    let timeout = link.source.request_timeout;
    let outcome =
        tokio::time::timeout(timeout, future)
            .await
            .map_err(|_| SourceError::Timeout {
                name: name.clone(),
                request: request.to_string(),
                timeout,
            })?;
    outcome.map_err(|error| {
        if let ServiceError::TransportSend(_) = &error
            && let Some(scope) = error::missing_scope(error::request_cause(&error))
        {
            return SourceError::NeedsSignIn {
                name: name.clone(),
                connection: link.connection.clone(),
                reason: link.lacks_scope(scope.as_deref(), request),
            };
        }
        refused(error, link, name, request).blanked(|text| link.clean_answer_text(text, sent))
    })
}

/// rmcp's error of a request, as ours.
fn refused(error: ServiceError, link: &Link, name: String, request: &str) -> SourceError {
    match error {
        ServiceError::TransportSend(_) if error::is_auth_required(error::request_cause(&error)) => {
            SourceError::NeedsSignIn {
                name,
                connection: link.connection.clone(),
                reason: link.lost_sign_in(),
            }
        }
        ServiceError::McpError(data) => SourceError::Upstream {
            name,
            request: request.to_string(),
            message: format!("{} (JSON-RPC error {})", data.message, data.code.0),
        },
        ServiceError::Timeout { timeout } => SourceError::Timeout {
            name,
            request: request.to_string(),
            timeout,
        },
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => SourceError::Transport {
            name,
            request: request.to_string(),
            message: format!(
                "{}; `capabilities source list` shows whether it is restarting",
                error::chain(error::request_cause(&error))
            ),
        },
        other => SourceError::Upstream {
            name,
            request: request.to_string(),
            message: error::chain(&other),
        },
    }
}

/// The credentials from the environment that `sources` know of: the config's (each source
/// carries the list) and any its connections read.
fn withheld(sources: &[SourceSettings]) -> Arc<[String]> {
    let mut names: Vec<String> = sources
        .iter()
        .flat_map(|source| source.env_credentials.iter())
        .chain(env_credentials(sources).iter())
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names.into()
}

/// `value` from `link`'s upstream with every secret the connection was given and every sign-in
/// token it has held blanked, in every form the redaction knows. An upstream can echo its token into a
/// description, a schema's default or a skill; blanked here, it reaches neither the cache on
/// disk, nor search, describe or the sandbox.
fn blanked(link: &Link, mut value: Value) -> Value {
    link.clean_token(&mut value);
    link.redaction().clean_json(&mut value);
    value
}

/// A `CallToolResult` that failed with `text`, as an upstream's own tool error reads.
fn tool_error(text: String) -> Value {
    serde_json::json!({
        "isError": true,
        "content": [{ "type": "text", "text": text }],
    })
}
