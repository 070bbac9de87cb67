//! One `execute`, from code to envelope: pick a run id, seed and start time, give the sandbox the
//! catalogue's tools, answer its calls through [`RunBridge`] (policy, then the upstream, then the
//! journal), and store the run. Shared by `capabilities exec` and the hub.

mod bridge;
mod tools;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub use bridge::RunBridge;

use crate::catalog::live::LiveCatalog;
use crate::config::Settings;
use crate::runs::{RunsStore, new_run_id, new_seed};
use crate::sandbox::{self, CancelToken, ExecuteEnvelope, RunRequest};

/// Runs scripts against the live catalogue and its sources, recording each run in the store.
pub struct Executor {
    catalog: Arc<LiveCatalog>,
    settings: Arc<Settings>,
    store: Arc<RunsStore>,
}

impl Executor {
    pub fn new(catalog: Arc<LiveCatalog>, settings: Arc<Settings>, store: Arc<RunsStore>) -> Executor {
        Executor { catalog, settings, store }
    }

    /// Runs `code` and returns the spec's envelope. `output_budget_bytes` is the client's
    /// `outputBudgetBytes` (clamped by the sandbox). Cancelling `cancel` stops the run and its
    /// pending upstream calls.
    pub async fn execute(&self, code: String, output_budget_bytes: Option<u64>, cancel: CancelToken) -> ExecuteEnvelope {
        let run_id = new_run_id();
        let seed = new_seed();
        let start_time_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        if let Err(e) = self.store.begin_run(&run_id, &code, seed, start_time_ms) {
            tracing::warn!("run {run_id} is not recorded: {e}");
        }
        let namespaces = Arc::new(self.catalog.read(|catalog, _| tools::namespaces(catalog)));
        let mut request = RunRequest::new(run_id.clone(), code, namespaces);
        request.limits = self.settings.limits;
        request.output_budget_bytes = output_budget_bytes;
        request.seed = seed;
        request.start_time_ms = start_time_ms;
        let bridge = Arc::new(RunBridge::new(run_id.clone(), self.catalog.clone(), self.settings.clone(), self.store.clone()));
        let envelope = sandbox::run_with_cancel(request, bridge, cancel).await;
        let status = serde_json::to_value(envelope.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        let stored = serde_json::to_value(&envelope).unwrap_or_default();
        if let Err(e) = self.store.finish_run(&run_id, &status, &stored) {
            tracing::warn!("run {run_id} outcome is not recorded: {e}");
        }
        envelope
    }
}
