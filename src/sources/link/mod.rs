//! One connection of one source (a "link") and the task that supervises it: connect within the
//! connect timeout, list the tools, serve requests until the upstream goes away, then reconnect
//! with backoff; or stop cleanly on shutdown. An OpenAPI source "connects" by reading its
//! document and has nothing to go away: it stays ready until shutdown. How it connects is in
//! `connect`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, RunningService};
use tokio::sync::{Semaphore, broadcast, watch};
use tokio::task::JoinHandle;

use rmcp::transport::auth::{AuthClient, AuthError};

use super::error::sign_in_message;
use super::handler::{UpstreamHandler, tools_changed};
use super::openapi::Api;
use super::resolve::{connection_secrets, env_credential_values, hub_secrets, resolve_all};
use super::status::{SourceEvent, SourceStatus};
use super::stdio::StdioChild;
use crate::config::template::Template;
use crate::config::{ConnectionSettings, SourceSettings};
use crate::credentials::{Redaction, Resolved, Secret, SecretLookup, Sent};
use crate::oauth::{self, HeldTokens, TokenStore};

mod connect;

use connect::connect;

/// The longest wait between two restart attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a graceful close of the rmcp service may take before we stop waiting for it.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// What every link shares: the secret store, the event channel, the shutdown signal, the
/// supervisor tasks (so shutdown can wait for them), and the pacing of starts and stops.
pub(crate) struct Shared {
    pub(crate) secrets: Arc<dyn SecretLookup>,
    pub(crate) events: broadcast::Sender<SourceEvent>,
    pub(crate) shutdown: watch::Receiver<bool>,
    pub(crate) tasks: Mutex<Vec<JoinHandle<()>>>,
    /// One permit per source allowed to be connecting at once.
    pub(crate) starting: Semaphore,
    pub(crate) idle_stop: Option<Duration>,
    /// The environment variables the config's sources read credentials from (see
    /// [`SourceSettings::env_credentials`]).
    pub(crate) env_credentials: Arc<[String]>,
    /// Every connection of every source of the config (with its source's name, and whether
    /// it may sign in with OAuth), for [`Shared::config_secrets`].
    pub(crate) every_connection: Vec<(String, ConnectionSettings, bool)>,
    pub(crate) config_secrets: Resolved,
    /// Every OAuth token any connection has held in this process: an upstream may echo
    /// another connection's token (one server behind two accounts), so each connection's
    /// answers are cleaned of them all.
    pub(crate) tokens: Arc<HeldTokens>,
}

impl Shared {
    /// The value of every reference the config makes, in every connection of every source,
    /// resolved when first needed: an upstream may echo what another connection sends (a
    /// shared file, a proxy, one server behind two accounts), so each connection's answers
    /// are cleaned of them all, not only of its own. The OAuth tokens stored for any
    /// connection are read into [`Shared::tokens`] at the same time, for the same reason: a
    /// connection not used yet in this process has tokens an upstream may hold all the same.
    /// All are read again once a secret is stored anew (`credential set` while a hub runs).
    fn config_secrets(&self) -> Arc<[Secret]> {
        let generation = self.secrets.generation();
        let resolve = || {
            for (source, connection, signs_in) in &self.every_connection {
                if *signs_in {
                    // Nothing stored, or no store to read: nothing to hold.
                    let _ = TokenStore::new(self.secrets.clone(), source, &connection.name)
                        .holding(self.tokens.clone())
                        .read();
                }
            }
            self.every_connection
                .iter()
                .flat_map(|(_, c, _)| connection_secrets(c, self.secrets.as_ref()))
                .collect()
        };
        self.config_secrets.at(generation, resolve).secrets
    }
}

/// What requests to a ready link go through.
#[derive(Clone)]
pub(crate) enum Client {
    Mcp(Peer<RoleClient>),
    OpenApi(Arc<Api>),
}

#[derive(Clone)]
pub(crate) enum LinkState {
    /// A lazy connection nobody has used yet.
    Idle,
    Connecting,
    Ready {
        client: Client,
        status: SourceStatus,
    },
    Failed(String),
    /// An OAuth connection with no usable sign-in; why, with the command that signs in. A
    /// request connects again first, in case a sign-in happened since.
    NeedsSignIn(String),
    Restarting {
        attempt: u32,
        last_error: String,
    },
    Stopped,
}

impl LinkState {
    pub(crate) fn status(&self) -> SourceStatus {
        match self {
            LinkState::Idle => SourceStatus::Idle,
            LinkState::Connecting => SourceStatus::Connecting,
            LinkState::Ready { status, .. } => status.clone(),
            LinkState::Failed(error) | LinkState::NeedsSignIn(error) => SourceStatus::Failed {
                error: error.clone(),
            },
            LinkState::Restarting {
                attempt,
                last_error,
            } => SourceStatus::Restarting {
                attempt: *attempt,
                last_error: last_error.clone(),
            },
            LinkState::Stopped => SourceStatus::Failed {
                error: "stopped: the connections to the sources were shut down".into(),
            },
        }
    }

    /// True when a request has to wait for the state to change before it can be answered.
    pub(crate) fn is_pending(&self) -> bool {
        matches!(self, LinkState::Idle | LinkState::Connecting)
    }
}

pub(crate) struct Link {
    pub(crate) source: Arc<SourceSettings>,
    pub(crate) connection: String,
    pub(crate) is_default: bool,
    pub(crate) state: watch::Sender<LinkState>,
    /// Whether a supervisor runs; held while one is started or stopped for idleness, so a
    /// request never finds the link idle with no supervisor coming.
    started: Mutex<bool>,
    /// Requests in flight and when the last one ended: what an idle stop looks at.
    busy: Mutex<(usize, Instant)>,
    /// The process group of the current child of a stdio source, for a synchronous kill on drop.
    pgid: Mutex<Option<u32>>,
    /// The secrets this connection sent its upstream, as of its last connect: what it could
    /// echo back (in its tool listing, for one).
    redaction: Mutex<Cleaning>,
    /// The OAuth client of a signed-in connection, as of its last connect: what checks, and
    /// refreshes, its token before a call goes out.
    oauth: Mutex<Option<AuthClient<reqwest::Client>>>,
    /// The tools the MCP upstream listed on this connection, as of its last connect or
    /// listing: what a call decided on the catalogue's definition is checked against before it
    /// goes out (a server restarted since may define the tool otherwise).
    listed: Mutex<Option<Arc<Vec<serde_json::Value>>>>,
    /// Every OAuth token this process has held, across connects and connections (shared
    /// with every link): the current ones and those refreshes replaced, all of which an
    /// upstream could echo.
    tokens: Arc<HeldTokens>,
    shared: Arc<Shared>,
}

/// What a connection's answers are cleaned of, and what that was made from.
#[derive(Default)]
struct Cleaning {
    /// What the connection sent its upstream at its last connect.
    sent: Vec<Secret>,
    /// The store's generation the redaction was made at.
    generation: u64,
    redaction: Arc<Redaction>,
}

impl Link {
    pub(crate) fn new(
        source: Arc<SourceSettings>,
        connection: &ConnectionSettings,
        shared: Arc<Shared>,
    ) -> Arc<Self> {
        Arc::new(Link {
            source,
            connection: connection.name.clone(),
            is_default: connection.is_default,
            state: watch::Sender::new(LinkState::Idle),
            started: Mutex::new(false),
            busy: Mutex::new((0, Instant::now())),
            pgid: Mutex::new(None),
            redaction: Mutex::default(),
            oauth: Mutex::new(None),
            listed: Mutex::new(None),
            tokens: shared.tokens.clone(),
            shared,
        })
    }

    /// Starts the supervisor unless it already runs. Cheap; called before every request.
    pub(crate) fn ensure_started(self: &Arc<Self>) {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        if *started {
            return;
        }
        *started = true;
        // Connecting is visible at once, so a waiter never mistakes the link for idle.
        self.set(LinkState::Connecting);
        let task = tokio::spawn(supervise(self.clone()));
        self.shared
            .tasks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(task);
    }

    /// Starts the supervisor again after a failed first connect or a missing sign-in; anything
    /// else is left alone.
    pub(crate) fn retry(self: &Arc<Self>) {
        let stopped = matches!(
            *self.state.borrow(),
            LinkState::Failed(_) | LinkState::NeedsSignIn(_)
        );
        if stopped {
            // The supervisor returned when it set `Failed`, so none runs now.
            *self.started.lock().unwrap_or_else(|p| p.into_inner()) = false;
            self.ensure_started();
        }
    }

    /// Lets a link that needed a sign-in connect again on this request.
    pub(crate) fn retry_sign_in(self: &Arc<Self>) {
        if matches!(*self.state.borrow(), LinkState::NeedsSignIn(_)) {
            self.retry();
        }
    }

    /// Marks a request in flight until the guard drops, so an idle stop waits for it. Taken
    /// before the link is started, so no stop falls between the start and the request.
    pub(crate) fn busy(self: &Arc<Self>) -> BusyGuard {
        self.busy.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
        BusyGuard { link: self.clone() }
    }

    /// When the link has been idle (no request in flight) since, if it is.
    fn idle_since(&self) -> Option<Instant> {
        let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        (busy.0 == 0).then_some(busy.1)
    }

    /// Lets the link start again on its next request, unless one is in flight; true when it
    /// was stopped.
    fn stop_for_idleness(&self) -> bool {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        if self.idle_since().is_none() {
            return false;
        }
        *started = false;
        self.set(LinkState::Idle);
        true
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        *self
            .pgid
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set_pid(&self, pid: Option<u32>) {
        *self
            .pgid
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = pid;
    }

    /// Resolves the connection's `env`, `headers` or `auth` (`what` names which in errors),
    /// adding the secrets it read to `resolved`.
    fn resolve(
        &self,
        values: &BTreeMap<String, Template>,
        what: &str,
        secrets: &dyn SecretLookup,
        resolved: &mut Vec<Secret>,
    ) -> Result<Vec<(String, String)>, String> {
        resolve_all(
            values,
            what,
            &self.source.name,
            &self.connection,
            secrets,
            resolved,
        )
    }

    /// The redaction of the secrets this connection last sent its upstream and of every other
    /// the config references, made anew once a secret is stored anew: a value set while the
    /// connection runs may reach its upstream some other way.
    pub(crate) fn redaction(&self) -> Arc<Redaction> {
        let generation = self.shared.secrets.generation();
        let mut cleaning = self
            .redaction
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if cleaning.generation != generation {
            let sent = std::mem::take(&mut cleaning.sent);
            *cleaning = self.cleaning(sent, generation);
        }
        cleaning.redaction.clone()
    }

    /// Blanks `secrets` (what this connection sends), every other secret the config references,
    /// every credential the config reads from the environment (which a stdio server could
    /// inherit) and the hub's own keys from what the upstream answers.
    fn set_redaction(&self, secrets: Vec<Secret>) -> Arc<Redaction> {
        let cleaning = self.cleaning(secrets, self.shared.secrets.generation());
        let redaction = cleaning.redaction.clone();
        *self
            .redaction
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = cleaning;
        redaction
    }

    fn cleaning(&self, sent: Vec<Secret>, generation: u64) -> Cleaning {
        let mut secrets = sent.clone();
        secrets.extend(self.shared.config_secrets().iter().cloned());
        secrets.extend(env_credential_values(&self.shared.env_credentials));
        secrets.extend(hub_secrets());
        Cleaning {
            sent,
            generation,
            redaction: Arc::new(Redaction::new(secrets)),
        }
    }

    /// The definition of `upstream_name` as the upstream last listed it on this connection;
    /// `None` when it has not listed since it connected, `Some(None)` when its listing lacks it.
    pub(crate) fn listed(&self, upstream_name: &str) -> Option<Option<serde_json::Value>> {
        let listed = self
            .listed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()?;
        Some(
            listed
                .iter()
                .find(|tool| {
                    tool.get("name").and_then(serde_json::Value::as_str) == Some(upstream_name)
                })
                .cloned(),
        )
    }

    /// Keeps what the upstream listed on this connection; `None` forgets it (a new connect).
    pub(crate) fn set_listed(&self, tools: Option<Vec<serde_json::Value>>) {
        *self
            .listed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = tools.map(Arc::new);
    }

    fn oauth(&self) -> Option<AuthClient<reqwest::Client>> {
        self.oauth
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn set_oauth(&self, client: Option<AuthClient<reqwest::Client>>) {
        *self
            .oauth
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = client;
    }

    /// Why this connection cannot be used until the person signs in, if that is so. A
    /// signed-in connection's token is checked, and refreshed when it is about to expire, here:
    /// before a call is journaled, so a refused refresh pauses the run instead of failing a
    /// call that was never sent.
    pub(crate) async fn sign_in_needed(&self) -> Option<String> {
        if let LinkState::NeedsSignIn(reason) = &*self.state.borrow() {
            return Some(reason.clone());
        }
        let client = self.oauth()?;
        match client.get_access_token().await {
            Err(AuthError::AuthorizationRequired) => {
                let reason =
                    self.sign_in_message("the authorization server refused to renew its sign-in");
                self.set(LinkState::NeedsSignIn(reason.clone()));
                Some(reason)
            }
            _ => None,
        }
    }

    /// Blanks every OAuth token this connection has held wherever `answer` holds it, in every
    /// form the redaction knows: the current access token, the refresh token (live for as long
    /// as the grant) and the tokens refreshes replaced (an access token replaced before its
    /// expiry still works). An upstream that echoes any of them must not hand it to the
    /// sandbox.
    pub(crate) fn clean_token(&self, answer: &mut serde_json::Value) {
        self.tokens.redaction().clean_json(answer);
    }

    /// [`clean_token`](Self::clean_token) for the answer to a call that sent `sent`: a piece
    /// of a token the arguments hold is the script's own guess echoed (see [`Sent`]).
    pub(crate) fn clean_token_answer(&self, answer: &mut serde_json::Value, sent: &Sent) {
        self.tokens.redaction().clean_json_answer(answer, sent);
    }

    /// `text` from this connection's upstream (an error's message) with its OAuth tokens and
    /// the secrets it was given blanked.
    pub(crate) fn clean_text(&self, text: &str) -> String {
        self.clean_answer_text(text, &Sent::NOTHING)
    }

    /// [`clean_text`](Self::clean_text) for an error answering a call that sent `sent`.
    pub(crate) fn clean_answer_text(&self, text: &str, sent: &Sent) -> String {
        let text = self.tokens.redaction().clean_answer(text, sent);
        self.redaction().clean_answer(&text, sent)
    }

    /// The store of this connection's OAuth tokens, keeping what it reads and writes among the
    /// tokens the connection has held.
    fn token_store(&self) -> TokenStore {
        TokenStore::new(
            self.shared.secrets.clone(),
            &self.source.name,
            &self.connection,
        )
        .holding(self.tokens.clone())
    }

    /// The redaction of every OAuth token this connection has held.
    pub(crate) fn token_redaction(&self) -> Arc<Redaction> {
        self.tokens.redaction()
    }

    pub(crate) fn sign_in_message(&self, why: &str) -> String {
        sign_in_message(&self.source.name, &self.connection, self.is_default, why)
    }

    /// Marks the connection as needing a sign-in after the server answered `request` 403
    /// `insufficient_scope`: the scope (when it named one) is remembered beside the tokens, so
    /// the next sign-in asks for it.
    pub(crate) fn lacks_scope(&self, scope: Option<&str>, request: &str) -> String {
        if let Some(scope) = scope
            && let Err(e) = self.token_store().want_scopes(scope)
        {
            tracing::warn!(source = %self.source.name, "the scope a call needs is not remembered: {e}");
        }
        let why = match scope {
            Some(scope) => format!(
                "{request} needs {}, which its sign-in was not granted; the next sign-in asks for it",
                oauth::name_scopes(scope)
            ),
            None => format!(
                "{request} needs a scope its sign-in was not granted, and the server did not say which"
            ),
        };
        let reason = self.sign_in_message(&why);
        self.set(LinkState::NeedsSignIn(reason.clone()));
        reason
    }

    /// Marks the connection as needing a sign-in after the server refused its token mid-call.
    pub(crate) fn lost_sign_in(&self) -> String {
        let reason = self.sign_in_message("the server no longer accepts its sign-in");
        self.set(LinkState::NeedsSignIn(reason.clone()));
        reason
    }

    fn set(&self, state: LinkState) {
        let status = state.status();
        let previous = self.state.send_replace(state).status();
        if self.is_default && previous != status {
            tracing::info!(source = %self.source.name, "{status}");
            // Nobody listening yet is fine; statuses() has the current value.
            let _ = self.shared.events.send(SourceEvent::StatusChanged {
                source: self.source.name.clone(),
                status,
            });
        }
    }

    fn connection_settings(&self) -> Option<&ConnectionSettings> {
        self.source.connection(&self.connection)
    }

    fn describe(&self) -> String {
        if self.source.connections.len() > 1 {
            format!(
                "source `{}` (connection `{}`)",
                self.source.name, self.connection
            )
        } else {
            format!("source `{}`", self.source.name)
        }
    }
}

/// A request in flight on a link; see [`Link::busy`].
pub(crate) struct BusyGuard {
    link: Arc<Link>,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut busy = self.link.busy.lock().unwrap_or_else(|p| p.into_inner());
        busy.0 = busy.0.saturating_sub(1);
        busy.1 = Instant::now();
    }
}

/// A connected upstream, for as long as it stays up.
// One per connection while it is up, moved once into its supervisor: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Live {
    Mcp {
        running: RunningService<RoleClient, UpstreamHandler>,
        child: Option<StdioChild>,
        /// The `subscriptions/listen` reader for a 2026-07-28 upstream, if one runs.
        listener: Option<JoinHandle<()>>,
    },
    OpenApi(Arc<Api>),
}

impl Live {
    fn client(&self) -> Client {
        match self {
            Live::Mcp { running, .. } => Client::Mcp(running.peer().clone()),
            Live::OpenApi(api) => Client::OpenApi(api.clone()),
        }
    }
}

async fn supervise(link: Arc<Link>) {
    let mut shutdown = link.shared.shutdown.clone();
    let mut attempt: u32 = 0;
    loop {
        let connected = tokio::select! {
            // Checked first, so nothing is spawned once shutdown has begun.
            biased;
            _ = stopping(&mut shutdown) => break,
            // An upstream's refusal (an HTTP body, its stderr) may quote the secret it was
            // given; the error is shown to people, logged and stored as the source's status.
            connected = connect_in_turn(&link) => connected.map_err(|error| error.map(|text| link.redaction().clean(&text))),
        };
        let last_error = match connected {
            Ok((live, status)) => {
                attempt = 0;
                link.set(LinkState::Ready {
                    client: live.client(),
                    status,
                });
                match serve_until_closed(&link, live, &mut shutdown).await {
                    Closed::Gone(error) => link.redaction().clean(&error),
                    Closed::Shutdown => break,
                    // The next request starts a new supervisor.
                    Closed::Idle => {
                        link.set_pid(None);
                        return;
                    }
                }
            }
            // Only a person can fix this; the next request connects again in case they did.
            Err(ConnectError::SignIn(reason)) => {
                link.set(LinkState::NeedsSignIn(reason));
                link.set_pid(None);
                return;
            }
            // A source that never came up is left failed: retrying a wrong command or URL
            // forever would only bury the message. Requests report it.
            Err(ConnectError::Failed(error)) if attempt == 0 => {
                link.set(LinkState::Failed(error));
                link.set_pid(None);
                return;
            }
            Err(ConnectError::Failed(error)) => error,
        };
        link.set_pid(None);
        attempt += 1;
        tracing::warn!(
            "{} stopped: {last_error}; restarting (attempt {attempt})",
            link.describe()
        );
        link.set(LinkState::Restarting {
            attempt,
            last_error,
        });
        tokio::select! {
            _ = tokio::time::sleep(backoff(attempt)) => {}
            _ = stopping(&mut shutdown) => break,
        }
    }
    link.set_pid(None);
    link.set(LinkState::Stopped);
}

/// 1 s, 2 s, 4 s, … up to [`MAX_BACKOFF`].
fn backoff(attempt: u32) -> Duration {
    let exponent = attempt.saturating_sub(1).min(5);
    Duration::from_secs(1 << exponent).min(MAX_BACKOFF)
}

/// Resolves when shutdown is requested or the manager is gone.
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    // An error means the sender dropped with the manager: stop as well.
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Why a connect did not succeed.
enum ConnectError {
    /// What went wrong and what to do.
    Failed(String),
    /// The server wants a sign-in this connection does not have.
    SignIn(String),
}

impl ConnectError {
    fn map(self, change: impl FnOnce(String) -> String) -> ConnectError {
        match self {
            ConnectError::Failed(text) => ConnectError::Failed(change(text)),
            ConnectError::SignIn(text) => ConnectError::SignIn(change(text)),
        }
    }
}

impl From<String> for ConnectError {
    fn from(text: String) -> ConnectError {
        ConnectError::Failed(text)
    }
}

/// Waits for a connect permit (see [`Shared::starting`]), then connects.
async fn connect_in_turn(link: &Arc<Link>) -> Result<(Live, SourceStatus), ConnectError> {
    // The semaphore is never closed; were it, connecting anyway is the safe side.
    let _permit = link.shared.starting.acquire().await.ok();
    connect(link).await
}

/// Why a connected upstream was left.
enum Closed {
    /// It went away by itself; why.
    Gone(String),
    /// Shutdown was requested, and it was closed.
    Shutdown,
    /// Nobody called it for the idle stop time, and it was closed.
    Idle,
}

/// Runs until the upstream goes away, shutdown is requested, or (with an idle stop) nobody has
/// used it for that long; closes it in the last two cases.
async fn serve_until_closed(
    link: &Link,
    live: Live,
    shutdown: &mut watch::Receiver<bool>,
) -> Closed {
    let (running, mut child, listener) = match live {
        Live::Mcp {
            running,
            child,
            listener,
        } => (running, child, listener),
        // Nothing runs between calls (each one is its own HTTP request), so nothing idles.
        Live::OpenApi(_) => {
            stopping(shutdown).await;
            return Closed::Shutdown;
        }
    };
    let token = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let closed = tokio::select! {
        _ = &mut waiting => None,
        _ = stopping(shutdown) => Some(Closed::Shutdown),
        () = idle_for_long(link) => Some(Closed::Idle),
    };
    if let Some(listener) = listener {
        listener.abort();
    }
    if let Some(closed) = closed {
        // Cancelling closes the transport: for stdio that closes the child's stdin, which is
        // how MCP asks a stdio server to exit.
        token.cancel();
        let _ = tokio::time::timeout(CLOSE_GRACE, waiting).await;
        if let Some(child) = child.as_mut() {
            child.terminate().await;
        }
        return closed;
    }
    Closed::Gone(match child.as_mut() {
        Some(child) => child.explain_exit().await,
        None => "the server closed the connection".to_string(),
    })
}

/// Resolves once the link has had no request for its idle stop time and was marked idle (so
/// the next request starts it again); never without an idle stop.
async fn idle_for_long(link: &Link) {
    let Some(limit) = link.shared.idle_stop else {
        return std::future::pending().await;
    };
    loop {
        let due = link
            .idle_since()
            .map_or(limit, |since| limit.saturating_sub(since.elapsed()));
        tokio::time::sleep(due.max(Duration::from_millis(100))).await;
        if link
            .idle_since()
            .is_some_and(|since| since.elapsed() >= limit)
            && link.stop_for_idleness()
        {
            tracing::info!(source = %link.source.name, "stopped after {} s without a call", limit.as_secs());
            return;
        }
    }
}

/// A 2026-07-28 upstream sends list-changed notifications only on a `subscriptions/listen`
/// stream; relay them until the stream ends (it ends with the connection).
async fn listen_for_changes(
    peer: Peer<RoleClient>,
    events: broadcast::Sender<SourceEvent>,
    source: String,
) {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(error) => {
            tracing::debug!(source = %source, "subscriptions/listen failed: {error}");
            return;
        }
    };
    while let Ok(Some(notification)) = subscription.next().await {
        if matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ) {
            tools_changed(&events, &source);
        }
    }
}
