//! The hub side of the sandbox's [`Bridge`]: every call a script makes is looked up in the
//! catalogue, decided by policy on its own (approving a script never approves its calls
//! wholesale, and the policy is read again for each call), journaled as dispatched, sent to the
//! upstream through the source's chosen connection, and journaled with its answer. A call that
//! asks runs only on a person's decision about exactly its arguments, used once.
//!
//! Secrets stay on this side: a call whose arguments carry a stored secret's value (in any form
//! [`Redaction`] knows) is refused (credentials reach an upstream only through its connection's
//! headers or environment), and any secret an upstream echoes back, in any of those forms and
//! anywhere in its answer (content, `structuredContent`, `_meta`, resources, error messages),
//! is blanked before the script, the journal or the envelope sees it: inside the sandbox a
//! script could transform it past recognition.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::catalog::describe::{DEFAULT_BUDGET_TOKENS, describe};
use crate::catalog::live::LiveCatalog;
use crate::catalog::results::{SearchRequest, render_search};
use crate::config::LivePolicy;
use crate::config::SkillDirs;
use crate::credentials::{Redaction, Sent};
use crate::model::ToolDefinition;
use crate::model::json_size::{JsonSize, json_size};
use crate::model::tool::json_digest;
use crate::model::{Permits, Reader};
use crate::policy::Action;
use crate::runs::{
    Decision, Dispatch, DispatchError, PendingCall, Recorded, Store, TokenRecord, scope_of,
};
use crate::sandbox::{
    Bridge, BridgeError, CallFailure, CallOutcome, ErrorCode, ExecuteEnvelope, Limits, Pending,
    PendingKind, ReadRequest, ToolCall, unavailable,
};
use crate::skills::upstream::UpstreamSkill;
use crate::sources::{SourceError, login_arguments};

use super::freshness::{self, ConfirmedVersions, change_asks};
use super::preview::{preview, whole};
use super::recovery::{self, Delivery, Dispatched, Dispatches};
use super::replay::{Replay, Verdict};
use super::stored::read_page;

/// How many tools `hub.search` shows.
const HUB_SEARCH_LIMIT: usize = 10;

/// What a call that needs a person asks about.
struct Asked<'a> {
    address: &'a str,
    connection: Option<&'a str>,
    reason: &'a str,
    call_digest: &'a str,
    /// The version of the tool's definition the person decides on.
    tool_version: Option<String>,
}

/// The bridge of one attempt of a run; its calls run as futures of their own, so what they
/// share sits behind one `Arc`.
pub struct RunBridge {
    inner: Arc<Inner>,
}

struct Inner {
    run_id: String,
    /// This attempt's claim on the run: the journal sends calls for its owner only.
    owner: String,
    catalog: Arc<LiveCatalog>,
    policy: Arc<LivePolicy>,
    store: Store,
    /// The values of the secrets the config references.
    redaction: Arc<Redaction>,
    /// What a resumed run already did; empty for a new run.
    replay: Arc<Replay>,
    /// The bearer token of an HTTP client: each call is checked against its current record.
    token: Option<TokenRecord>,
    /// How far each call of this attempt got towards its upstream, for the recovery contract.
    dispatches: Dispatches,
    /// Whose stored results `hub.read` and `hub.get` may open: the token's, or the local user's.
    scope: String,
    /// The largest answer (as JSON) one call may bring back.
    tool_result_bytes: u64,
    /// The stored result read last, parsed: a script paging through one reads it again and again.
    last_read: Mutex<Option<(String, Arc<Value>)>>,
    /// Tool versions known to be confirmed, shared by every run of the process.
    confirmed: Arc<ConfirmedVersions>,
    /// Sources this attempt listed again after a call looked stale: once each is enough.
    relisted: Mutex<HashSet<String>>,
    /// The hints that gave a changed tool's new signature, so the run's error keeps them when
    /// its recovery advice replaces the hint.
    stale_hints: Mutex<Vec<String>>,
    /// The line `hub.search` starts with under a profile, naming it and its sources.
    search_header: Option<String>,
    /// Where the skills `hub.describe("skill:NAME")` reads are.
    skill_dirs: SkillDirs,
}

impl RunBridge {
    /// `replay` is empty for a new run and loaded from the store for a resumed one; `owner`
    /// holds the run's claim; with a `token` (an HTTP client's), every call must be one the
    /// token allows.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        run_id: String,
        owner: String,
        catalog: Arc<LiveCatalog>,
        policy: Arc<LivePolicy>,
        store: Store,
        redaction: Arc<Redaction>,
        replay: Arc<Replay>,
        token: Option<TokenRecord>,
    ) -> RunBridge {
        RunBridge {
            inner: Arc::new(Inner {
                run_id,
                owner,
                catalog,
                policy,
                store,
                redaction,
                replay,
                scope: scope_of(token.as_ref()),
                token,
                dispatches: Dispatches::default(),
                tool_result_bytes: Limits::default().tool_result_bytes,
                last_read: Mutex::new(None),
                confirmed: Arc::default(),
                relisted: Mutex::new(HashSet::new()),
                stale_hints: Mutex::new(Vec::new()),
                search_header: None,
                skill_dirs: SkillDirs::default(),
            }),
        }
    }

    /// Shares the process's record of confirmed tool versions (see `freshness`).
    pub(crate) fn with_confirmed_versions(
        mut self,
        confirmed: Arc<ConfirmedVersions>,
    ) -> RunBridge {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.confirmed = confirmed;
        }
        self
    }

    /// Refuses an upstream answer over `bytes` of JSON (the config's `tool_result_bytes`).
    pub fn with_tool_result_cap(mut self, bytes: u64) -> RunBridge {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.tool_result_bytes = bytes;
        }
        self
    }

    /// The new signatures of tools that turned out to have changed during the run.
    pub(crate) fn stale_hints(&self) -> Vec<String> {
        self.inner
            .stale_hints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts `hub.search` answers with `header` (the profile's, e.g. `profile: work (sources:
    /// github)`), as the hub's own search does.
    pub fn with_search_header(mut self, header: Option<String>) -> RunBridge {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.search_header = header;
        }
        self
    }

    /// Lets `hub.describe` read the skills in `dirs`.
    pub fn with_skill_dirs(mut self, dirs: SkillDirs) -> RunBridge {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.skill_dirs = dirs;
        }
        self
    }

    /// What the run sent upstream, this attempt and earlier ones; read once the run is over.
    pub(crate) fn dispatched(&self) -> Dispatched {
        self.inner.dispatches.summary(self.inner.replay.journal())
    }

    /// Ends the attempt (no call of it starts any more) and lists as `not_sent` each call in
    /// `envelope` that the run ended before it left the hub.
    pub(crate) fn close(&self, envelope: &mut ExecuteEnvelope) {
        let started = self.inner.dispatches.close();
        recovery::unsent(envelope, &started, self.inner.replay.journal());
    }
}

impl Inner {
    /// What the run's token lets it call, for `hub.search` and `hub.describe` to show only that.
    fn token_permits(&self) -> Permits<'_> {
        self.token
            .as_ref()
            .map_or(Permits::ALL, TokenRecord::permits)
    }

    /// Why the run's token forbids calling `address` now, if it does. The token is read again
    /// from the store, so a revocation stops a script that is already running.
    async fn token_refusal(&self, address: &str) -> Option<CallFailure> {
        let token = self.token.as_ref()?;
        // A token of the same name created since is another token (the run's was revoked).
        let current = self
            .store
            .bearer_tokens()
            .active(&token.name)
            .await
            .map(|found| found.filter(|t| t.created_at_ms <= token.created_at_ms));
        let (message, hint) = match current {
            Ok(Some(current)) if current.allows(address) => return None,
            Ok(Some(current)) => (
                format!(
                    "the token `{}` may not call `{address}`; it allows only {}",
                    current.name,
                    current.allow.join(", ")
                ),
                "Use only the tools this token allows; ask the user for a token that allows this one.",
            ),
            Ok(None) => (
                format!(
                    "the token `{}` was revoked or has expired, so `{address}` was not called",
                    token.name
                ),
                "Stop; the user has to give this client a new token.",
            ),
            Err(e) => (
                format!("`{address}` was not called: the token cannot be checked ({e})"),
                "Try again later.",
            ),
        };
        let mut failure = CallFailure::new(ErrorCode::PolicyDenied, message);
        failure.hint = Some(hint.into());
        Some(failure)
    }

    /// The stored result `result_ref`, if this run's scope may read it. Kept parsed for the rest
    /// of the attempt: a script paging through one reads it again and again.
    async fn stored(&self, result_ref: &str) -> Result<Arc<Value>, CallFailure> {
        {
            let last = self.last_read.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((kept, value)) = last.as_ref()
                && kept == result_ref
            {
                return Ok(value.clone());
            }
        }
        let text = match self
            .store
            .stored_results()
            .read(&self.scope, result_ref)
            .await
        {
            Ok(Some(text)) => text,
            Ok(None) => return Err(unavailable(result_ref)),
            Err(e) => {
                return Err(CallFailure::new(
                    ErrorCode::Internal,
                    format!("the stored result `{result_ref}` cannot be read: {e}"),
                ));
            }
        };
        let value = Arc::new(serde_json::from_str::<Value>(&text).map_err(|e| {
            CallFailure::new(
                ErrorCode::Internal,
                format!("the stored result `{result_ref}` is not JSON any more: {e}"),
            )
        })?);
        *self.last_read.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((result_ref.to_string(), value.clone()));
        Ok(value)
    }

    /// Records that this call waits for a person (replacing what another call asked at the same
    /// step) and suspends it; the run pauses once nothing else is in flight.
    async fn ask(&self, call: &ToolCall, asked: Asked<'_>) -> CallOutcome {
        let Asked {
            address,
            connection,
            reason,
            call_digest,
            tool_version,
        } = asked;
        let preview = preview(&call.arguments);
        let pending = PendingCall {
            seq: call.seq,
            address: address.to_string(),
            connection: connection.map(str::to_string),
            preview: preview.clone(),
            whole: whole(&call.arguments, &preview),
            reason: reason.to_string(),
            call_digest: call_digest.to_string(),
            tool_version,
        };
        let recorded = match self
            .store
            .approvals()
            .record_pending(&self.run_id, &self.owner, pending)
            .await
        {
            Ok(recorded) => recorded,
            // Without a record nobody can decide: the call is refused rather than left waiting.
            Err(e) => return failed(not_sent(address, &e)),
        };
        let on = connection
            .map(|c| format!(" on connection `{c}`"))
            .unwrap_or_default();
        // The person who decided on this step before saw another call: say why they are asked
        // again.
        let again = if recorded == Recorded::Superseded {
            " (asked again: the call or its tool's definition changed since the earlier decision)"
        } else {
            ""
        };
        let pending = Pending {
            id: format!("{}/{}", self.run_id, call.seq),
            kind: PendingKind::Approval,
            address: Some(address.to_string()),
            // The reason's first line: a changed tool's diff is for the person deciding.
            summary: format!(
                "{address}{on} with {preview}: {}{again}",
                reason.lines().next().unwrap_or_default()
            ),
            message: Some(format!(
                "Tell the user that `{address}` needs their approval (`capabilities hub approve {}` in a terminal), then call execute with {{ \"resume\": \"{}\" }} once they have decided.",
                self.run_id, self.run_id
            )),
            connection: None,
        };
        CallOutcome::from(Err(BridgeError::Suspend(pending)))
    }

    /// The connection a call of `namespace` goes out on when it names none.
    fn default_connection(&self, namespace: &str) -> Option<String> {
        self.catalog.read(|catalog, _| {
            catalog
                .namespace(namespace)
                .and_then(|n| n.connections.first().cloned())
        })
    }

    /// Suspends a call whose connection needs a sign-in; the run pauses `awaiting_connection`.
    /// The model is told what to ask of the person, never where to sign in.
    fn await_connection(&self, call: &ToolCall, address: &str, reason: &str) -> CallOutcome {
        // A connection the script named, other than the source's default, is signed in by name.
        let default = self.default_connection(&call.namespace);
        let named = call
            .connection
            .clone()
            .filter(|named| Some(named) != default.as_ref());
        let login = login_arguments(&call.namespace, named.as_deref());
        let pending = Pending {
            id: format!("{}/{}", self.run_id, call.seq),
            kind: PendingKind::Connection,
            address: Some(address.to_string()),
            summary: format!("`{address}` waits for a sign-in: {reason}"),
            message: Some(format!(
                "Tell the user that `{}` needs them to sign in (`capabilities source login {login}` in a terminal), then call execute with {{ \"resume\": \"{}\" }} once they have.",
                call.namespace, self.run_id
            )),
            connection: named,
        };
        CallOutcome::from(Err(BridgeError::Suspend(pending)))
    }

    /// One call of the script, from the journal's answer (a resumed run) to the upstream's.
    async fn call(&self, call: ToolCall) -> CallOutcome {
        let address = call.address();
        // The connection the call goes out on: the one it names, or its source's default.
        let connection = call
            .connection
            .clone()
            .or_else(|| self.default_connection(&call.namespace));
        let call_digest = call_digest(&address, connection.as_deref(), &call.arguments);
        // A resumed run answers the calls it already made from its journal.
        if let Some(outcome) = self.replay.answer(call.seq, &address, &call_digest) {
            return cleaned(&self.redaction, outcome);
        }
        // Before policy: a call the token forbids must not reach the approval queue either.
        if let Some(failure) = self.token_refusal(&address).await {
            return failed(failure);
        }
        // Before policy: a refused call must not reach the approval queue with its arguments.
        // Whole values only: a piece found in what the script wrote would tell it a guess was
        // right (see `Redaction::for_script`).
        if self.redaction.for_script().found_in(&call.arguments) {
            let mut failure = CallFailure::new(
                ErrorCode::PolicyDenied,
                format!(
                    "`{address}` was called with the value of a stored secret in its arguments; credentials are never passed as tool arguments"
                ),
            );
            failure.hint = Some("Leave credentials out of the call: each connection sends its own (configured as `${secret:NAME}` in its headers or env). Pick another connection with `{ connection: \"name\" }`.".into());
            return failed(failure);
        }
        let found = self.catalog.read(|catalog, _| {
            let namespace = catalog.namespace(&call.namespace)?;
            namespace
                .tools
                .iter()
                .find(|t| t.name == call.tool)
                .cloned()
        });
        let Some(tool) = found else {
            return failed(CallFailure::new(
                ErrorCode::UnknownTool,
                format!("`{address}` is no longer in the catalogue"),
            ));
        };
        let arguments = match &call.arguments {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            other => {
                return failed(CallFailure::new(
                    ErrorCode::InvalidArguments,
                    format!("`{address}` takes an object of arguments, got {other}"),
                ));
            }
        };
        let verdict = self
            .replay
            .verdict(call.seq, &address, &call_digest, &tool.hash);
        // A person's "no" to this very call stands, whatever the policy says by now.
        if verdict == Verdict::Decided(Decision::Deny) {
            let mut failure = CallFailure::new(
                ErrorCode::PolicyDenied,
                format!("the user denied `{address}`"),
            );
            failure.hint =
                Some("Do not retry this call; tell the user what could not be done.".into());
            return failed(failure);
        }
        let annotations = tool.annotations.clone();
        // Read now, not when the hub started: a rule written since applies to this call.
        let policy = self.policy.current();
        let mut decision = policy.evaluate(&address, connection.as_deref(), &annotations);
        // A tool whose definition changed since a person confirmed it asks, whatever the rules
        // say: the rules were written for what it was.
        if decision.action != Action::Deny
            && let Some(reason) =
                change_asks(&self.store, &self.confirmed, &tool, policy.confirm_changes).await
        {
            decision.action = Action::Ask;
            decision.reason = reason;
        }
        // The person's decision on this very call (tool as defined now, connection and
        // arguments), if it runs on one and has not used it yet.
        let mut approved = None;
        match decision.action {
            Action::Deny => {
                let mut failure = CallFailure::new(
                    ErrorCode::PolicyDenied,
                    format!("policy denies `{address}`: {}", decision.reason),
                );
                failure.hint = Some("This tool may not be called; do the task another way or ask the user to change the policy.".into());
                return failed(failure);
            }
            Action::Ask => match verdict {
                Verdict::Decided(choice) => approved = Some(choice),
                Verdict::NotAsked
                    if self
                        .replay
                        .granted(&address, connection.as_deref(), &tool.hash) => {}
                // Never asked, still waiting, or asked about another call: a person decides on
                // exactly what this call would send.
                Verdict::NotAsked | Verdict::Waiting | Verdict::Changed => {
                    let asked = Asked {
                        address: &address,
                        connection: connection.as_deref(),
                        reason: &decision.reason,
                        call_digest: &call_digest,
                        // The decision holds for the version the person saw; "always"
                        // confirms it.
                        tool_version: Some(tool.hash.clone()),
                    };
                    return self.ask(&call, asked).await;
                }
            },
            Action::Allow => {}
        }
        // Before the journal: a call that cannot go out until the person signs in was never
        // sent, and the run waits for the sign-in as it waits for an approval.
        if let Some(reason) = self
            .catalog
            .sources()
            .sign_in_needed(
                &call.namespace,
                call.connection.as_deref(),
                &tool.upstream_name,
            )
            .await
        {
            return self.await_connection(&call, &address, &reason);
        }
        // As in MCP's defaults, a tool may write unless its upstream marks it read-only.
        let mutating = !annotations.is_read_only();
        let started = Instant::now();
        let dispatch = Dispatch {
            seq: call.seq,
            address: address.clone(),
            connection: connection.clone(),
            call_digest,
            mutating,
            uses_approval: approved.is_some(),
        };
        // A resumed run that found itself diverged while this call was checked sends nothing.
        if let Some(halted) = self.replay.halted() {
            return cleaned(&self.redaction, halted);
        }
        // Counted as on its way before the journal write: once the run is over, nothing starts,
        // and what started may have gone out.
        if !self.dispatches.start(call.seq, &address, mutating) {
            return failed(CallFailure::new(
                ErrorCode::Cancelled,
                format!("`{address}` was not sent: the run ended first"),
            ));
        }
        // Journaled before it leaves, for this run's owner only, using up its approval.
        if let Err(e) = self
            .store
            .journal()
            .dispatch(&self.run_id, &self.owner, dispatch)
            .await
        {
            self.dispatches.settle(call.seq, Delivery::NotSent);
            return failed(not_sent(&address, &e));
        }
        if approved == Some(Decision::AllowRun) {
            self.replay
                .grant(&address, connection.as_deref(), &tool.hash);
        }
        let outcome = self
            .catalog
            .sources()
            .call_decided_tool(
                &call.namespace,
                call.connection.as_deref(),
                &tool.upstream_name,
                arguments,
                &tool.hash,
            )
            .await;
        let stale = freshness::looks_stale(&outcome);
        let delivery = recovery::delivery(&outcome);
        self.dispatches.settle(call.seq, delivery);
        // The sign-in was lost while the run went on (the server refused the token and its
        // refresh was refused, or the call needs a scope the sign-in lacks): nothing acted on
        // the call, so it is taken back from the journal and waits for the sign-in as it would
        // have before it was sent. A resume then sends it once.
        if let Err(SourceError::NeedsSignIn { reason, .. }) = &outcome {
            match self
                .store
                .journal()
                .withdraw(&self.run_id, &self.owner, call.seq)
                .await
            {
                Ok(()) => return self.await_connection(&call, &address, reason),
                Err(e) => tracing::warn!(
                    "call {} of run {} waits for a sign-in but cannot be taken back from the journal: {e}",
                    call.seq,
                    self.run_id
                ),
            }
        }
        let ms = started.elapsed().as_millis() as u64;
        let cap = usize::try_from(self.tool_result_bytes).unwrap_or(usize::MAX);
        let (result, mut journaled, ok) = match outcome {
            // Refused before anything else looks at it: an answer this large would fill the
            // journal and the script's heap. The call did run upstream.
            Ok(raw) if json_size(&raw, cap).exceeds(cap) => {
                let failure = too_large_answer(&address, json_size(&raw, usize::MAX), cap);
                let journaled = json!({ "error": { "code": failure.code.as_str(), "message": failure.message } });
                (Err(BridgeError::Failed(failure)), journaled, false)
            }
            // What the call's own arguments hold is the script's, echoed (see `Sent`).
            Ok(mut raw) => {
                self.redaction
                    .clean_json_answer(&mut raw, &Sent::of(&call.arguments));
                let ok = raw.get("isError") != Some(&Value::Bool(true));
                (Ok(raw.clone()), raw, ok)
            }
            Err(error) => {
                let mut failure = failure_from(&error, delivery, mutating);
                let sent = Sent::of(&call.arguments);
                failure.message = self.redaction.clean_answer(&failure.message, &sent);
                let journaled = json!({ "error": { "code": failure.code.as_str(), "message": failure.message } });
                (Err(BridgeError::Failed(failure)), journaled, false)
            }
        };
        // So that a resumed run's recovery counts this call only if it may have acted.
        recovery::mark(&mut journaled, delivery, mutating);
        let answered = self
            .store
            .journal()
            .answer(&self.run_id, &self.owner, call.seq, &journaled, ok, ms)
            .await;
        if let Err(e) = answered {
            // The call stays journaled as dispatched: a resume treats it as interrupted.
            tracing::warn!(
                "the answer to call {} of run {} is not journaled: {e}",
                call.seq,
                self.run_id
            );
        }
        let result = if stale {
            self.explain_stale(&tool, result).await
        } else {
            result
        };
        CallOutcome {
            result,
            ms: Some(ms),
        }
    }

    /// A failure that looked like the script had an old definition in mind: the source is
    /// listed again (once per attempt), and when `tool` did change the failure says what it is
    /// now. The catalogue serves the new version from then on.
    async fn explain_stale(
        &self,
        tool: &ToolDefinition,
        result: Result<Value, BridgeError>,
    ) -> Result<Value, BridgeError> {
        let first = self
            .relisted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tool.namespace.clone());
        if !first {
            return result;
        }
        self.catalog.relist(&tool.namespace).await;
        let now = self.catalog.read(|catalog, _| {
            catalog.namespace(&tool.namespace).and_then(|n| {
                n.tools
                    .iter()
                    .find(|t| t.upstream_name == tool.upstream_name)
                    .cloned()
            })
        });
        let Some(hint) = freshness::stale_hint(tool, now.as_ref()) else {
            return result;
        };
        let mut failure = match result {
            Ok(answer) => CallFailure::new(ErrorCode::ToolError, freshness::error_text(&answer)),
            Err(BridgeError::Failed(failure)) => failure,
            suspended @ Err(BridgeError::Suspend(_)) => return suspended,
        };
        let hint = self.redaction.clean(&hint);
        self.stale_hints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(hint.clone());
        failure.hint = Some(hint);
        Err(BridgeError::Failed(failure))
    }
}

impl Bridge for RunBridge {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        let inner = self.inner.clone();
        async move { inner.call(call).await }.boxed()
    }

    fn search(&self, query: String) -> BoxFuture<'static, String> {
        let inner = self.inner.clone();
        async move {
            let changed = super::changed_tools(&inner.store, &inner.catalog).await;
            let text = inner.catalog.read(|catalog, index| {
                let permits = inner.token_permits();
                let request = SearchRequest {
                    query: &query,
                    namespace: None,
                    limit: HUB_SEARCH_LIMIT,
                    permits,
                    changed: Some(&changed),
                    reader: &Reader::Agent,
                    // Scripts call tools; skills are for the model, through the hub's search.
                    skills: None,
                };
                render_search(catalog, index, &inner.policy.current(), &request)
                    .unwrap_or_else(|e| e.to_string())
            });
            let text = match &inner.search_header {
                Some(header) => format!("{header}\n\n{text}"),
                None => text,
            };
            // Listings are blanked when they arrive; a cache written before that may not be. The
            // answer echoes the script's query, so only whole values are looked for here.
            inner.redaction.for_script().clean(&text)
        }
        .boxed()
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        let inner = self.inner.clone();
        async move {
            let changed = super::changed_tools(&inner.store, &inner.catalog).await;
            let policy = inner.policy.current();
            let confirm = policy.confirm_changes;
            let withheld = |skill: &UpstreamSkill| changed.withholds(skill, confirm);
            let permits = inner.token_permits();
            let split = inner.catalog.describe_skills(
                &inner.skill_dirs,
                &policy,
                permits,
                &withheld,
                &targets,
                DEFAULT_BUDGET_TOKENS,
            );
            let (skills, targets) = match split.await {
                Ok(split) => split,
                Err(e) => return e,
            };
            if targets.is_empty() {
                return skills;
            }
            let text = inner.catalog.read(|catalog, _| {
                let permits = inner.token_permits();
                let visible = catalog.visible_tools(&policy, permits);
                describe(&visible, &targets, DEFAULT_BUDGET_TOKENS)
                    .unwrap_or_else(|e| e.to_string())
            });
            let text = if skills.is_empty() {
                text
            } else {
                format!("{skills}\n{text}")
            };
            inner.redaction.for_script().clean(&text)
        }
        .boxed()
    }

    fn read(&self, request: ReadRequest) -> BoxFuture<'static, Result<Value, CallFailure>> {
        let inner = self.inner.clone();
        async move { read_page(&*inner.stored(&request.result_ref).await?, &request) }.boxed()
    }

    fn get(&self, result_ref: String) -> BoxFuture<'static, Result<Value, CallFailure>> {
        let inner = self.inner.clone();
        async move { Ok(Value::clone(&*inner.stored(&result_ref).await?)) }.boxed()
    }
}

fn failed(failure: CallFailure) -> CallOutcome {
    CallOutcome::from(Err(BridgeError::Failed(failure)))
}

/// Why the journal refused a call, which was therefore never sent.
fn not_sent(address: &str, error: &DispatchError) -> CallFailure {
    let code = match error {
        DispatchError::NotApproved { .. } => ErrorCode::PolicyDenied,
        DispatchError::AlreadyJournaled { .. } => ErrorCode::ReplayDivergence,
        DispatchError::NotOwner { .. } => ErrorCode::RunInProgress,
        DispatchError::Store(_) => ErrorCode::Internal,
    };
    let mut failure = CallFailure::new(code, format!("`{address}` was not sent: {error}"));
    if matches!(error, DispatchError::Store(_)) {
        failure.hint = Some(
            "Nothing was sent. Tell the user the state store needs attention (the message says what to do).".into(),
        );
    }
    failure
}

/// A journaled answer as clean as a fresh one: a journal written by an older version, whose
/// redaction knew fewer forms of a secret, must not hand the others to the script.
fn cleaned(redaction: &Redaction, mut outcome: CallOutcome) -> CallOutcome {
    match &mut outcome.result {
        Ok(value) => redaction.clean_json(value),
        Err(BridgeError::Failed(failure)) => failure.message = redaction.clean(&failure.message),
        Err(BridgeError::Suspend(_)) => {}
    }
    outcome
}

/// The digest a journal entry and a person's decision are bound to: the tool, the connection the
/// call goes out on, and its exact arguments. Another connection or another tool at the same
/// step is another call.
fn call_digest(address: &str, connection: Option<&str>, arguments: &Value) -> String {
    json_digest(&json!({ "address": address, "connection": connection, "arguments": arguments }))
}

/// An answer over the per-call cap, which the script never sees.
fn too_large_answer(address: &str, size: JsonSize, cap: usize) -> CallFailure {
    let mut failure = CallFailure::new(
        ErrorCode::ResultTooLarge,
        format!(
            "`{address}` answered with {} bytes of JSON; one call may bring back at most {cap} bytes, so the answer was dropped (the call did run)",
            size.bytes()
        ),
    );
    failure.hint = Some(
        "Ask the tool for less: a filter, a smaller page, fewer fields. Do not repeat a call that changes something just to see its answer.".into(),
    );
    failure
}

/// An upstream failure as the script's `ToolError` shows it, with how far the call got
/// (`delivery`). A call of a `mutating` tool that was sent and never answered may have acted, so
/// it is not retryable: sending it again could do it twice.
fn failure_from(error: &SourceError, delivery: Delivery, mutating: bool) -> CallFailure {
    let code = match error {
        SourceError::UnknownConnection { .. } => ErrorCode::InvalidArguments,
        SourceError::Upstream { .. } | SourceError::Changed { .. } => ErrorCode::UpstreamError,
        _ => ErrorCode::UpstreamUnavailable,
    };
    let mut failure = CallFailure::new(code, error.to_string());
    if let SourceError::Changed { .. } = error {
        failure.hint = Some(
            "Nothing was sent. The tool changed upstream after the call was decided; run the script again, and the call goes (or asks a person) by the tool's current definition.".into(),
        );
    }
    recovery::settle(&mut failure, delivery, mutating);
    failure
}
