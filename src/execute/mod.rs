//! One `execute`, from code to envelope: pick a run id, seed and start time, give the sandbox the
//! catalogue's tools, answer its calls through [`RunBridge`] (policy, then the upstream, then the
//! journal), and store the run. A failed run's error carries the recovery contract (may the
//! client send it again?) from what the bridge saw reach the upstreams. Shared by
//! `capabilities exec` and the hub. A result too large for the output budget is described,
//! fitted and paged by `stored` (pure functions; the store keeps the value).

mod bridge;
mod caller;
mod freshness;
mod keep;
mod lease;
pub mod mentions;
mod missing_source;
mod preview;
mod ran_nothing;
mod recovery;
mod replay;
pub(crate) mod stored;
mod tools;
mod twin;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use bridge::RunBridge;
pub use caller::caller;

use crate::catalog::changes::ChangedTools;
use crate::catalog::live::LiveCatalog;
use crate::config::{LivePolicy, Settings};
use crate::credentials::{Redaction, Resolved};
use crate::model::Permits;
use crate::policy::Policy;
use crate::runs::{
    Claim, NewRun, RunRecord, Store, StoreError, TokenRecord, new_run_id, new_seed, scope_of,
};
use crate::sandbox::{
    self, CancelToken, EnvelopeError, ErrorCode, ExecuteEnvelope, Namespaces, PendingKind,
    Recovery, RunRequest, Status,
};
use crate::sources::{connection_secrets, hub_secrets};

use self::freshness::ConfirmedVersions;
use self::lease::Lease;
use self::ran_nothing::{
    in_progress, journaled_calls, other_profile, stored_envelope, taken_over_envelope,
};
use self::recovery::Dispatched;
use self::replay::Replay;
use self::tools::Catalogued;

/// Runs scripts against the live catalogue and its sources, recording each run in the store.
pub struct Executor {
    catalog: Arc<LiveCatalog>,
    settings: Arc<Settings>,
    /// The policy each call is decided by, kept in step with the config.
    policy: Arc<LivePolicy>,
    store: Store,
    /// The values of the secrets the config references, read on the first run.
    redaction: Resolved,
    /// The profile the hub serves, recorded with each run.
    profile: Option<String>,
    /// The sandbox's view of the catalogue, built once per catalogue generation: building it
    /// renders every signature and compiles every input schema.
    namespaces: Mutex<Option<(u64, Arc<Catalogued>)>>,
    /// The last view a new run got, less what its policy and token hide, for the next run with
    /// the same catalogue, policy and token patterns: most runs of a hub share one.
    view: Mutex<Option<(ViewKey, Arc<Namespaces>)>>,
    /// Tool versions known to be confirmed, so calls of them skip the store.
    confirmed: Arc<ConfirmedVersions>,
    /// The last answer of [`Executor::changed_tools`], with the catalogue generation it was
    /// read at and when: searches come many a second, and a store read on each would cost
    /// more than the search.
    changed: Mutex<Option<(u64, Instant, Arc<ChangedTools>)>>,
    /// The turns identical direct calls take (`twin`).
    twin_turns: twin::Turns,
}

/// How long a search's `[changed]` marks may lag a confirmation made elsewhere (another
/// process's `source review`). A new listing is read at once.
const CHANGED_FRESH_FOR: Duration = Duration::from_secs(1);

impl Executor {
    pub fn new(catalog: Arc<LiveCatalog>, settings: Arc<Settings>, store: Store) -> Executor {
        Executor {
            catalog,
            policy: Arc::new(LivePolicy::fixed(settings.policy.clone())),
            settings,
            store,
            redaction: Resolved::default(),
            profile: None,
            namespaces: Mutex::new(None),
            view: Mutex::new(None),
            confirmed: Arc::default(),
            changed: Mutex::new(None),
            twin_turns: twin::Turns::default(),
        }
    }

    /// Every catalogued tool as scripts could see it, rebuilt only when the catalogue changed.
    fn catalogued(&self) -> (u64, Arc<Catalogued>) {
        let generation = self.catalog.generation();
        let mut cached = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_for, catalogued)) = cached.as_ref()
            && *built_for == generation
        {
            return (generation, catalogued.clone());
        }
        let catalogued = Arc::new(self.catalog.read(|catalog, _| Catalogued::build(catalog)));
        *cached = Some((generation, catalogued.clone()));
        (generation, catalogued)
    }

    /// The profile line `hub.search` starts with, naming the sources `token`'s holder sees.
    fn search_header(&self, token: Option<&TokenRecord>) -> Option<String> {
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        self.catalog.read(|catalog, _| {
            self.settings
                .profile_header_showing(|name| catalog.shows_source(name, permits))
        })
    }

    /// The tools a run's script sees: those its caller sees in search and describe, under the
    /// policy as it is now and `token`'s patterns (see `tools`). A resumed run also keeps the
    /// tools it already called: those calls answer from its journal, as they did before.
    fn namespaces(&self, token: Option<&TokenRecord>, replay: &Replay) -> Arc<Namespaces> {
        let (generation, catalogued) = self.catalogued();
        let policy = self.policy.current();
        let allow = token.map(|t| t.allow.clone()).unwrap_or_default();
        let journaled: HashSet<&str> = replay.journal().map(|e| e.address.as_str()).collect();
        let key = ViewKey {
            generation,
            policy: policy.clone(),
            allow,
        };
        // A resumed run's view depends on its journal too: it is neither read nor kept here.
        if journaled.is_empty() {
            let cached = self.view.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((seen, view)) = cached.as_ref()
                && seen.same_as(&key)
            {
                return view.clone();
            }
        }
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        let view = catalogued.visible(&policy, permits, &|address| journaled.contains(address));
        if journaled.is_empty() {
            *self.view.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, view.clone()));
        }
        view
    }

    /// Decides calls by `policy` (one that follows the config file, in a hub) instead of the
    /// policy the settings held at the start.
    pub fn with_policy(mut self, policy: Arc<LivePolicy>) -> Executor {
        self.policy = policy;
        self
    }

    /// The policy calls are decided by now.
    pub fn policy(&self) -> &Arc<LivePolicy> {
        &self.policy
    }

    /// Records `profile` with every run (the hub's `--profile`).
    pub fn with_profile(mut self, profile: Option<String>) -> Executor {
        self.profile = profile;
        self
    }

    /// Every secret a connection of this config references, wherever it is used (see
    /// `connection_secrets`), and the hub's own keys, read again once one is stored anew. The
    /// lookup caches what the connections already resolved.
    fn redaction(&self) -> Arc<Redaction> {
        let lookup = self.catalog.sources().secrets().clone();
        let resolve = || {
            self.settings
                .sources
                .iter()
                .flat_map(|s| &s.connections)
                .flat_map(|c| connection_secrets(c, lookup.as_ref()))
                .chain(hub_secrets())
                .collect()
        };
        self.redaction.at(lookup.generation(), resolve).redaction
    }

    /// Runs `code` as a new run and returns the spec's envelope. `output_budget_bytes` is the
    /// client's `outputBudgetBytes` (clamped by the sandbox). Cancelling `cancel` stops the run
    /// and its pending upstream calls.
    pub async fn execute(
        &self,
        code: String,
        output_budget_bytes: Option<u64>,
        cancel: CancelToken,
    ) -> ExecuteEnvelope {
        self.execute_for(None, code, output_budget_bytes, cancel, None)
            .await
    }

    /// [`execute`](Self::execute) on behalf of a named client, recorded with the run so the
    /// dashboard can say who started it. With a `token` (a client of `hub serve --http`), every
    /// call the script makes must be one the token allows, checked against the store each time.
    pub async fn execute_for(
        &self,
        client: Option<&str>,
        code: String,
        output_budget_bytes: Option<u64>,
        cancel: CancelToken,
        token: Option<&TokenRecord>,
    ) -> ExecuteEnvelope {
        let run_id = new_run_id();
        let seed = new_seed();
        let start_time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        // A secret typed into a script is never stored (its calls are refused by the bridge).
        let stored_code = self.redaction().for_script().clean(&code);
        let new_run = NewRun {
            run_id: run_id.clone(),
            code: stored_code,
            seed,
            start_time_ms,
            client: caller(client, token),
            profile: self.profile.clone(),
            output_budget_bytes,
        };
        // Recorded while the script starts: the store does what it is asked in order, so the
        // script's first call is journaled after the record, or refused with it.
        let (owner, recorded) = self.store.runs().begin_queued(new_run);
        let run = Run {
            run_id,
            owner,
            code,
            seed,
            start_time_ms,
            output_budget_bytes,
        };
        self.run(run, recorded, Arc::new(Replay::default()), cancel, token)
            .await
    }

    /// The answer to a run the store could not record: a run that cannot be journaled could
    /// neither pause nor resume safely, so none of its calls went out, and whatever the script
    /// made of that is not its outcome. The message says how to make the store usable again.
    fn not_started(&self, run_id: &str, e: StoreError) -> ExecuteEnvelope {
        let mut error =
            EnvelopeError::new(ErrorCode::Internal, format!("the run was not started: {e}"));
        error.hint = Some(
            "Nothing ran. Tell the user the state store needs attention (the message says what to do); retrying will not help until then."
                .into(),
        );
        let mut envelope = ExecuteEnvelope::rejected(run_id, error, Vec::new());
        envelope.profile = self.profile.clone();
        envelope
    }

    /// Refuses, with nothing decided or run, a run `token`'s holder (none: the local user) may
    /// not resume here: one started under another profile ([`ResumeError::OtherProfile`]) or
    /// another token ([`ResumeError::OtherCaller`]), or none at all.
    pub async fn check_resumable(
        &self,
        run_id: &str,
        token: Option<&TokenRecord>,
    ) -> Result<(), ResumeError> {
        self.resumable(run_id, token).await.map(|_| ())
    }

    /// The sources resuming `run_id` may need: those its script names and those its journal
    /// called (a replayed call answers from the journal, but its source must be known). The run
    /// is checked as [`check_resumable`](Self::check_resumable) does for the local user.
    pub async fn sources_of_run(&self, run_id: &str) -> Result<Vec<String>, ResumeError> {
        let record = self.resumable(run_id, None).await?;
        let names = self.settings.sources.iter().map(|s| s.name.as_str());
        let mut sources = mentions::mentioned(&record.code, names);
        for entry in self.store.journal().entries(run_id).await? {
            let namespace = entry.address.split('.').next().unwrap_or_default();
            if !sources.iter().any(|s| s == namespace) {
                sources.push(namespace.to_string());
            }
        }
        Ok(sources)
    }

    /// The run `run_id`, if this executor may go on with it for `token`'s holder: one run, one
    /// profile, its sources and policy the ones it started with, and its caller's token (see
    /// [`caller`]).
    async fn resumable(
        &self,
        run_id: &str,
        token: Option<&TokenRecord>,
    ) -> Result<RunRecord, ResumeError> {
        let record = self
            .store
            .runs()
            .get(run_id)
            .await?
            .ok_or_else(|| ResumeError::UnknownRun(run_id.to_string()))?;
        // Whose the run is comes first: another token's holder learns nothing more of it, not
        // even the profile it was started under.
        if !caller::may_go_on(record.client.as_deref(), record.created_at_ms, token) {
            return Err(ResumeError::OtherCaller(run_id.to_string()));
        }
        if record.profile != self.profile {
            return Err(ResumeError::OtherProfile {
                run_id: run_id.to_string(),
                run: record.profile,
                here: self.profile.clone(),
            });
        }
        Ok(record)
    }

    /// The token a run started under, when the local user (`token` is `None`) resumes it: the
    /// script is the token holder's, and the person who approved one of its calls did not
    /// lift what the token forbids. A token since deleted, or replaced by another of its name,
    /// counts as revoked: its run's calls are refused.
    async fn token_of_run(
        &self,
        record: &RunRecord,
        token: Option<&TokenRecord>,
    ) -> Result<Option<TokenRecord>, ResumeError> {
        let (None, Some(name)) = (token, caller::token_of(record.client.as_deref())) else {
            return Ok(None);
        };
        let found = self.store.bearer_tokens().named(name).await?;
        Ok(Some(match found {
            Some(found) if found.created_at_ms <= record.created_at_ms => found,
            _ => TokenRecord {
                name: name.to_string(),
                profile: record.profile.clone(),
                allow: Vec::new(),
                created_at_ms: record.created_at_ms,
                expires_at_ms: None,
                revoked_at_ms: Some(record.created_at_ms),
            },
        }))
    }

    /// Continues a run. A run that paused for approval re-runs once every pending call has a
    /// decision (until then it returns the same pending envelope and runs nothing), with the
    /// same seed and clock: the journaled calls answer from the journal, and approved calls run
    /// once. A run whose process stopped mid-run (`kill -9`, a crash) is taken over the same
    /// way, and a write it left in flight is never sent again. A run that already ended returns
    /// its final envelope again. Only one resume runs a run at a time, across processes: the
    /// others return `running` and run nothing. New calls are checked against `token` as in
    /// [`execute_for`](Self::execute_for).
    pub async fn resume(
        &self,
        run_id: &str,
        cancel: CancelToken,
        token: Option<&TokenRecord>,
    ) -> Result<ExecuteEnvelope, ResumeError> {
        let record = self.resumable(run_id, token).await?;
        let of_run = self.token_of_run(&record, token).await?;
        let token = of_run.as_ref().or(token);
        let now = self.store.runs().clock_ms().await?;
        let claim = match record.status.as_str() {
            "awaiting_approval" => {
                let undecided: Vec<_> = self
                    .store
                    .approvals()
                    .of_run(run_id)
                    .await?
                    .into_iter()
                    .filter(|a| a.decision.is_none())
                    .collect();
                if let Some(expired) = undecided.iter().find(|a| a.is_expired_at(now)) {
                    let error = EnvelopeError::new(
                        ErrorCode::ApprovalExpired,
                        format!(
                            "nobody decided on `{}` within 30 minutes, so the run ended",
                            expired.address
                        ),
                    );
                    return self
                        .end_without_running(&record, "awaiting_approval", error)
                        .await;
                }
                if !undecided.is_empty() {
                    // Calls decided since the pause (one denied, another still open) no longer
                    // wait: only the undecided ones are listed as pending.
                    let mut envelope = stored_envelope(&record)?;
                    envelope.pending.retain(|pending| {
                        pending.kind != PendingKind::Approval
                            || undecided
                                .iter()
                                .any(|a| pending.id == format!("{run_id}/{}", a.seq))
                    });
                    return Ok(envelope);
                }
                self.store.runs().claim(run_id, "awaiting_approval").await?
            }
            // A connection needs a sign-in: run again, and the call pauses again if it still does.
            "awaiting_connection" => {
                self.list_signed_in(&record).await;
                self.store
                    .runs()
                    .claim(run_id, "awaiting_connection")
                    .await?
            }
            "running" => {
                let seen = self
                    .store
                    .runs()
                    .claim_record(run_id)
                    .await?
                    .ok_or_else(|| ResumeError::UnknownRun(run_id.to_string()))?;
                // By the store's clock, as the lease was written: another replica's may differ.
                let store_now = self.store.runs().clock_ms().await?;
                if !seen.is_interrupted_at(store_now) {
                    return Ok(in_progress(run_id, &record));
                }
                let claim = self.store.runs().take_over(run_id, &seen).await?;
                if matches!(claim, Claim::Won { .. }) {
                    let detail = serde_json::json!({ "previousOwner": seen.owner, "attempt": seen.attempt + 1 });
                    let audited = self
                        .store
                        .approvals()
                        .audit(Some(run_id), "taken_over", detail)
                        .await;
                    if let Err(e) = audited {
                        tracing::warn!("the takeover of run {run_id} is not audited: {e}");
                    }
                }
                claim
            }
            // Left running by a version that journaled calls only once answered: a write it had
            // in flight left no trace, so the run cannot go on safely.
            "interrupted" => {
                let mut error = EnvelopeError::new(
                    ErrorCode::Interrupted,
                    "the run was interrupted while an older version of capabilities ran it, and that version journaled calls only once answered: what it had sent is not known, so nothing more was sent",
                );
                error.recovery = Some(Recovery::OUTCOME_UNKNOWN);
                return self
                    .end_without_running(&record, "interrupted", error)
                    .await;
            }
            _ => return stored_envelope(&record),
        };
        let Claim::Won { owner } = claim else {
            return self.current(run_id).await;
        };
        let replay = Arc::new(Replay::load(&self.store, run_id).await?);
        // A call an interrupted attempt sent without an answer that must not go twice (a write
        // that may have acted, a call a person allowed once): the run stops here rather than
        // run its script again, whatever it would reach.
        if let Some(stop) = replay.unanswered_unrepeatable() {
            let mut envelope = ExecuteEnvelope::rejected(
                run_id,
                EnvelopeError::new(stop.code(), stop.message()),
                Vec::new(),
            );
            envelope.calls = journaled_calls(replay.journal());
            recovery::apply(&mut envelope, &Dispatched::earlier(replay.journal()));
            return Ok(self.finish(run_id, &owner, envelope).await);
        }
        let run = Run {
            run_id: run_id.to_string(),
            owner,
            code: record.code,
            seed: record.seed,
            start_time_ms: record.start_time_ms,
            output_budget_bytes: record.output_budget_bytes,
        };
        Ok(self
            .run(run, std::future::ready(Ok(())), replay, cancel, token)
            .await)
    }

    /// Lists again the sources a run waits to sign in to whose tools this process never saw:
    /// a sign-in given since (by `source login`, or a page this hub offered) makes their tools,
    /// and so the script's globals, available to the resume.
    async fn list_signed_in(&self, record: &RunRecord) {
        let Ok(paused) = stored_envelope(record) else {
            return;
        };
        for pending in paused
            .pending
            .iter()
            .filter(|p| p.kind == PendingKind::Connection)
        {
            let Some(address) = pending.address.as_deref() else {
                continue;
            };
            let namespace = address.split('.').next().unwrap_or(address);
            let unlisted = self.catalog.read(|catalog, _| {
                catalog
                    .namespace(namespace)
                    .is_some_and(|n| n.tools.is_empty())
            });
            if unlisted {
                self.catalog.relist(namespace).await;
            }
        }
    }

    /// Ends a run that is `status` (and not running) with `error`, without running any of it:
    /// claimed first, so two resumes do not both end it; the calls it made stay in the envelope.
    async fn end_without_running(
        &self,
        record: &RunRecord,
        status: &str,
        error: EnvelopeError,
    ) -> Result<ExecuteEnvelope, ResumeError> {
        let run_id = record.run_id.as_str();
        let claim = self.store.runs().claim(run_id, status).await?;
        let Claim::Won { owner } = claim else {
            return self.current(run_id).await;
        };
        let keep = error.recovery;
        let mut envelope = ExecuteEnvelope::rejected(run_id, error, Vec::new());
        let journal = self.store.journal().entries(run_id).await?;
        envelope.calls = journaled_calls(&journal);
        recovery::apply(&mut envelope, &Dispatched::earlier(&journal));
        if let (Some(recovery), Some(error)) = (keep, envelope.error.as_mut()) {
            error.recovery = Some(recovery);
        }
        Ok(self.finish(run_id, &owner, envelope).await)
    }

    /// What a resume that lost the race for a run returns: the run as it is now.
    async fn current(&self, run_id: &str) -> Result<ExecuteEnvelope, ResumeError> {
        let record = self
            .store
            .runs()
            .get(run_id)
            .await?
            .ok_or_else(|| ResumeError::UnknownRun(run_id.to_string()))?;
        match record.status.as_str() {
            "running" => Ok(in_progress(run_id, &record)),
            _ => stored_envelope(&record),
        }
    }

    /// Runs `run` once `recorded` (the store's record of it, or of the claim resumed) holds;
    /// a run the store did not record is stopped and answered with why.
    async fn run(
        &self,
        run: Run,
        recorded: impl Future<Output = Result<(), StoreError>>,
        replay: Arc<Replay>,
        cancel: CancelToken,
        token: Option<&TokenRecord>,
    ) -> ExecuteEnvelope {
        let namespaces = self.namespaces(token, &replay);
        let mut request = RunRequest::new(run.run_id.clone(), run.code, namespaces);
        request.limits = self.settings.limits;
        request.output_budget_bytes = run.output_budget_bytes;
        request.seed = run.seed;
        request.start_time_ms = run.start_time_ms;
        let bridge = Arc::new(
            RunBridge::new(
                run.run_id.clone(),
                run.owner.clone(),
                self.catalog.clone(),
                self.policy.clone(),
                self.store.clone(),
                self.redaction(),
                replay.clone(),
                token.cloned(),
            )
            .with_tool_result_cap(self.settings.limits.tool_result_bytes)
            .with_confirmed_versions(self.confirmed.clone())
            .with_search_header(self.search_header(token))
            .with_skill_dirs(self.settings.skill_dirs.clone()),
        );
        let lease = Lease::keep(
            self.store.clone(),
            run.run_id.clone(),
            run.owner.clone(),
            cancel.clone(),
        );
        let budget = request.result_budget();
        let recorded = async {
            let recorded = recorded.await;
            if recorded.is_err() {
                cancel.cancel();
            }
            recorded
        };
        let ran = sandbox::run_with_cancel(request, bridge.clone(), cancel.clone());
        let (mut envelope, recorded) = tokio::join!(ran, recorded);
        drop(lease);
        if let Err(e) = recorded {
            return self.not_started(&run.run_id, e);
        }
        // Named before bounding, so the envelope stays within its budget with the name in it.
        envelope.profile = self.profile.clone();
        {
            let permits = token.map_or(Permits::ALL, TokenRecord::permits);
            missing_source::explain(&mut envelope, &self.catalog, permits);
            missing_source::outside_profile(&mut envelope, &self.settings, token.is_some());
        }
        if let Some(stop) = replay.stopped() {
            // Whatever the script made of the refused call, the run must not look successful.
            envelope.status = Status::Failed;
            envelope.result = None;
            envelope.oversized = None;
            envelope.pending.clear();
            envelope.error = Some(EnvelopeError::new(stop.code(), stop.message()));
        }
        bridge.close(&mut envelope);
        // Bounded before a result is kept: bounding may hand over a result that only fit
        // without the rest of the envelope.
        envelope.bound(budget);
        keep::keep_oversized(
            &mut envelope,
            &self.store,
            self.redaction().for_script(),
            self.settings.retention,
            &scope_of(token),
            budget,
        )
        .await;
        // The sandbox aborts every call future when the run ends, so a call still marked in
        // flight now was cut off and counts as lost.
        recovery::apply(&mut envelope, &bridge.dispatched());
        // Whatever the recovery says to do first, a tool that changed under the script says
        // how to call it now.
        if let Some(error) = envelope.error.as_mut() {
            for stale in bridge.stale_hints() {
                match &mut error.hint {
                    Some(hint) if hint.contains(&stale) => {}
                    Some(hint) => *hint = format!("{hint} {stale}"),
                    None => error.hint = Some(stale),
                }
            }
        }
        envelope.bound(budget);
        self.finish(&run.run_id, &run.owner, envelope).await
    }

    /// Records how `owner`'s attempt ended and returns the envelope as stored, so the client and
    /// the store (the dashboard, a later resume) see the same one, with secrets blanked in both.
    /// An attempt that lost its claim meanwhile records nothing: the run's new owner decides
    /// how it ends, and the client is told to resume for that.
    async fn finish(
        &self,
        run_id: &str,
        owner: &str,
        mut envelope: ExecuteEnvelope,
    ) -> ExecuteEnvelope {
        envelope.profile = self.profile.clone();
        let status = serde_json::to_value(envelope.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut stored = match serde_json::to_value(&envelope) {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!("run {run_id} outcome is not recorded: {e}");
                return envelope;
            }
        };
        // The envelope's own numbers (call times, sizes, expiry) must stay numbers for it to
        // read back; what the script returned is blanked whole, numbers too. What upstreams
        // sent was blanked as it arrived; the rest the script wrote, where only whole values
        // are looked for (see `Redaction::for_script`).
        let redaction = self.redaction();
        if let Some(result) = stored.get_mut("result") {
            redaction.for_script().clean_json(result);
        }
        redaction.for_script().clean_json_strings(&mut stored);
        match self
            .store
            .runs()
            .finish(run_id, owner, &status, &stored)
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    "run {run_id} was taken over by another process while this one ran it; its outcome is that process's"
                );
                let mut taken = taken_over_envelope(run_id, envelope.calls);
                taken.profile = self.profile.clone();
                return taken;
            }
            Err(e) => tracing::warn!("run {run_id} outcome is not recorded: {e}"),
        }
        // Blanking rewrites only text inside strings and numbers of the result; were it ever
        // to break a field, the envelope as the run made it is better than none.
        serde_json::from_value(stored).unwrap_or(envelope)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The tools listed now whose definition changed since a person confirmed it. A store that
    /// cannot say is logged and counts as no change: calls still check each version themselves.
    /// Read from the store at most once a second per catalogue generation.
    pub async fn changed_tools(&self) -> Arc<ChangedTools> {
        let generation = self.catalog.generation();
        let cached = self
            .changed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some((seen, at, changed)) = cached
            && seen == generation
            && at.elapsed() < CHANGED_FRESH_FOR
        {
            return changed;
        }
        let changed = Arc::new(changed_tools(&self.store, &self.catalog).await);
        *self.changed.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((generation, Instant::now(), changed.clone()));
        changed
    }
}

/// [`Executor::changed_tools`], for the bridge too.
async fn changed_tools(store: &Store, catalog: &LiveCatalog) -> ChangedTools {
    match store.tool_versions().unconfirmed().await {
        Ok(unconfirmed) => catalog.read(|catalog, _| ChangedTools::listed(catalog, &unconfirmed)),
        Err(e) => {
            tracing::warn!("cannot read which tools changed: {e}");
            ChangedTools::default()
        }
    }
}

/// What a run's view of the tools was decided by.
struct ViewKey {
    generation: u64,
    policy: Arc<Policy>,
    /// The token's patterns; empty for the local user or a token that allows everything.
    allow: Vec<String>,
}

impl ViewKey {
    /// A policy read again from an unchanged file is another `Arc` with the same rules.
    fn same_as(&self, other: &ViewKey) -> bool {
        self.generation == other.generation
            && self.allow == other.allow
            && (Arc::ptr_eq(&self.policy, &other.policy) || self.policy == other.policy)
    }
}

/// What one (new or resumed) run needs.
struct Run {
    run_id: String,
    /// The claim this attempt holds on the run.
    owner: String,
    code: String,
    seed: u64,
    start_time_ms: u64,
    output_budget_bytes: Option<u64>,
}

/// Why a run cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "there is no run `{0}`; resume takes the runId of an execute that is awaiting approval"
    )]
    UnknownRun(String),
    #[error(
        "run `{0}` ended without an envelope to return (it was stored by an older version); run its script again as a new execute"
    )]
    NoEnvelope(String),
    #[error("{}", other_profile(run_id, run.as_deref(), here.as_deref()))]
    OtherProfile {
        run_id: String,
        run: Option<String>,
        here: Option<String>,
    },
    #[error(
        "run `{0}` was started by another client's token, so this one cannot go on with it; the client that started it resumes it, or the user does on the hub's machine (`capabilities exec --resume {0}`)"
    )]
    OtherCaller(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
