//! One `execute`, from code to envelope: pick a run id, seed and start time, give the sandbox the
//! catalogue's tools, answer its calls through [`RunBridge`] (policy, then the upstream, then the
//! journal), and store the run. A failed run's error carries the recovery contract (may the
//! client send it again?) from what the bridge saw reach the upstreams. Shared by
//! `capabilities exec` and the hub.

mod bridge;
mod missing_source;
mod preview;
mod recovery;
mod replay;
mod tools;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

pub use bridge::RunBridge;

use crate::catalog::live::LiveCatalog;
use crate::config::Settings;
use crate::credentials::{Redaction, Secret};
use crate::runs::{RunOrigin, RunsStore, StoreError, TokenRecord, new_run_id, new_seed};
use crate::sandbox::{
    self, CancelToken, EnvelopeError, ErrorCode, ExecuteEnvelope, Namespaces, RunRequest, Status,
};

use self::recovery::Dispatched;
use self::replay::Replay;

/// Runs scripts against the live catalogue and its sources, recording each run in the store.
pub struct Executor {
    catalog: Arc<LiveCatalog>,
    settings: Arc<Settings>,
    store: Arc<RunsStore>,
    /// The values of the secrets the config references, read on the first run.
    redaction: OnceLock<Arc<Redaction>>,
    /// The profile the hub serves, recorded with each run.
    profile: Option<String>,
    /// The sandbox's view of the catalogue, built once per catalogue generation: building it
    /// renders every signature and compiles every input schema.
    namespaces: Mutex<Option<(u64, Arc<Namespaces>)>>,
}

impl Executor {
    pub fn new(
        catalog: Arc<LiveCatalog>,
        settings: Arc<Settings>,
        store: Arc<RunsStore>,
    ) -> Executor {
        Executor {
            catalog,
            settings,
            store,
            redaction: OnceLock::new(),
            profile: None,
            namespaces: Mutex::new(None),
        }
    }

    /// The tools scripts see, rebuilt only when the catalogue changed.
    fn namespaces(&self) -> Arc<Namespaces> {
        let generation = self.catalog.generation();
        let mut cached = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_for, namespaces)) = cached.as_ref()
            && *built_for == generation
        {
            return namespaces.clone();
        }
        let namespaces = Arc::new(self.catalog.read(|catalog, _| tools::namespaces(catalog)));
        *cached = Some((generation, namespaces.clone()));
        namespaces
    }

    /// Records `profile` with every run (the hub's `--profile`).
    pub fn with_profile(mut self, profile: Option<String>) -> Executor {
        self.profile = profile;
        self
    }

    /// Every secret a connection of this config references. The lookup caches what the
    /// connections already resolved; one that cannot be read is skipped (it cannot leak
    /// through us: no connection could have sent it).
    fn redaction(&self) -> Arc<Redaction> {
        self.redaction
            .get_or_init(|| {
                let lookup = self.catalog.sources().secrets().clone();
                let mut names: Vec<&str> = self
                    .settings
                    .sources
                    .iter()
                    .flat_map(|s| &s.connections)
                    .flat_map(|c| c.env.values().chain(c.headers.values()))
                    .flat_map(|t| t.secrets())
                    .collect();
                names.sort_unstable();
                names.dedup();
                Arc::new(Redaction::new(
                    names
                        .into_iter()
                        .filter_map(|name| lookup.secret(name).ok().map(Secret::new)),
                ))
            })
            .clone()
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
        let stored_code = self.redaction().clean(&code);
        let origin = RunOrigin {
            client,
            profile: self.profile.as_deref(),
            output_budget_bytes,
        };
        let recorded =
            self.store
                .begin_run_from(&run_id, &stored_code, seed, start_time_ms, &origin);
        if let Err(e) = recorded {
            // A run that cannot be journaled could neither pause nor resume safely, so nothing
            // of it runs; the message says how to make the store usable again.
            let mut error =
                EnvelopeError::new(ErrorCode::Internal, format!("the run was not started: {e}"));
            error.hint = Some(
                "Nothing ran. Tell the user the state store needs attention (the message says what to do); retrying will not help until then."
                    .into(),
            );
            return ExecuteEnvelope::rejected(&run_id, error, Vec::new());
        }
        let run = Run {
            run_id,
            code,
            seed,
            start_time_ms,
            output_budget_bytes,
        };
        self.run(run, Arc::new(Replay::default()), cancel, token)
            .await
    }

    /// Continues a run that paused for approval. Until every pending call has a decision it
    /// returns the same pending envelope and runs nothing; a run that already ended returns its
    /// final envelope again. Otherwise the script re-runs with the same seed and clock, the
    /// journaled calls answer from the journal, and approved calls run once. New calls are
    /// checked against `token` as in [`execute_for`](Self::execute_for).
    pub async fn resume(
        &self,
        run_id: &str,
        cancel: CancelToken,
        token: Option<&TokenRecord>,
    ) -> Result<ExecuteEnvelope, ResumeError> {
        let record = self
            .store
            .run(run_id)?
            .ok_or_else(|| ResumeError::UnknownRun(run_id.to_string()))?;
        let stored = record
            .envelope
            .as_ref()
            .and_then(|e| serde_json::from_value::<ExecuteEnvelope>(e.clone()).ok());
        if record.status != "awaiting_approval" {
            return stored.ok_or_else(|| ResumeError::StillRunning(run_id.to_string()));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let undecided: Vec<_> = self
            .store
            .approvals(run_id)?
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
            let mut envelope = ExecuteEnvelope::rejected(run_id, error, Vec::new());
            if let Some(previous) = stored {
                envelope.calls = previous.calls;
            }
            let journal = self.store.journal(run_id)?;
            let dispatched = Dispatched::earlier(&journal);
            recovery::apply(&mut envelope, &dispatched);
            return Ok(self.finish(run_id, envelope));
        }
        if !undecided.is_empty() {
            return stored.ok_or_else(|| ResumeError::StillRunning(run_id.to_string()));
        }
        let replay = Arc::new(Replay::load(&self.store, run_id)?);
        let run = Run {
            run_id: run_id.to_string(),
            code: record.code,
            seed: record.seed,
            start_time_ms: record.start_time_ms,
            output_budget_bytes: record.output_budget_bytes,
        };
        Ok(self.run(run, replay, cancel, token).await)
    }

    async fn run(
        &self,
        run: Run,
        replay: Arc<Replay>,
        cancel: CancelToken,
        token: Option<&TokenRecord>,
    ) -> ExecuteEnvelope {
        let namespaces = self.namespaces();
        let mut request = RunRequest::new(run.run_id.clone(), run.code, namespaces);
        request.limits = self.settings.limits;
        request.output_budget_bytes = run.output_budget_bytes;
        request.seed = run.seed;
        request.start_time_ms = run.start_time_ms;
        let bridge = Arc::new(
            RunBridge::new(
                run.run_id.clone(),
                self.catalog.clone(),
                self.settings.clone(),
                self.store.clone(),
                self.redaction(),
                replay.clone(),
            )
            .with_token(token.cloned()),
        );
        let mut envelope = sandbox::run_with_cancel(request, bridge.clone(), cancel).await;
        missing_source::explain(&mut envelope, self.catalog.sources());
        if let Some(divergence) = replay.divergence() {
            // Whatever the script made of the refused call, the run must not look successful.
            envelope.status = Status::Failed;
            envelope.result = None;
            envelope.pending.clear();
            envelope.error = Some(EnvelopeError::new(ErrorCode::ReplayDivergence, divergence));
        }
        // The sandbox aborts every call future when the run ends, so a call still marked in
        // flight now was cut off and counts as lost.
        recovery::apply(&mut envelope, &bridge.dispatched());
        self.finish(&run.run_id, envelope)
    }

    /// Records how the run ended and returns the envelope as stored, so the client and the
    /// store (the dashboard, a later resume) see the same one, with secrets blanked in both.
    fn finish(&self, run_id: &str, envelope: ExecuteEnvelope) -> ExecuteEnvelope {
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
        self.redaction().clean_json(&mut stored);
        if let Err(e) = self.store.finish_run(run_id, &status, &stored) {
            tracing::warn!("run {run_id} outcome is not recorded: {e}");
        }
        // Blanking only rewrites text inside strings; were it ever to break a field, the
        // envelope as the run made it is better than none.
        serde_json::from_value(stored).unwrap_or(envelope)
    }

    pub fn store(&self) -> &Arc<RunsStore> {
        &self.store
    }
}

/// What one (new or resumed) run needs.
struct Run {
    run_id: String,
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
    #[error("run `{0}` has not finished its first attempt yet; wait for its envelope, then resume")]
    StillRunning(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
