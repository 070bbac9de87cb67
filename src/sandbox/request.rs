//! What one run needs: the code, the tools it may call, its limits, and the inputs that make it
//! deterministic (seed, start time).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;

/// A run's limits; the defaults are also the maxima (a config may lower them, never raise them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub run_timeout: Duration,
    pub max_calls: u64,
    pub memory_bytes: u64,
    pub stack_bytes: u64,
    pub result_bytes: u64,
    pub log_bytes: u64,
    pub code_bytes: u64,
    /// The largest final value a run may produce: one over the output budget but within this
    /// is stored for `hub.read` instead of sent; one over this fails with `result_too_large`.
    pub final_value_bytes: u64,
    /// The largest result one tool call may bring into the sandbox (as JSON).
    pub tool_result_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            run_timeout: Duration::from_secs(60),
            max_calls: 100,
            memory_bytes: 64 << 20,
            stack_bytes: 1 << 20,
            result_bytes: 16 << 10,
            log_bytes: 4 << 10,
            code_bytes: 64 << 10,
            final_value_bytes: 1 << 20,
            tool_result_bytes: 1 << 20,
        }
    }
}

/// The smallest and largest output budget a client may ask for, and the default.
pub const OUTPUT_BUDGET_MIN: u64 = 1_024;
pub const OUTPUT_BUDGET_MAX: u64 = 65_536;

/// Timers: the longest single delay and the most that may be pending at once.
pub const MAX_TIMER_MS: u64 = 30_000;
pub const MAX_PENDING_TIMERS: usize = 1_000;

/// One tool as the sandbox sees it.
#[derive(Debug)]
pub struct ToolSpec {
    /// The tool part of the address (`createIssue`).
    pub name: String,
    pub input_schema: Value,
    /// The one-line TypeScript signature, quoted in argument errors.
    pub signature: String,
    /// Connection names the script may pick with `{ connection }`; empty means any is passed on.
    pub connections: Vec<String>,
    /// Compiled once and reused by every run that shares this spec (keep specs in an `Arc`).
    validator: OnceLock<Option<jsonschema::Validator>>,
}

impl ToolSpec {
    pub fn new(name: impl Into<String>, input_schema: Value, signature: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            input_schema,
            signature: signature.into(),
            connections: Vec::new(),
            validator: OnceLock::new(),
        }
    }

    pub fn with_connections(mut self, connections: Vec<String>) -> Self {
        self.connections = connections;
        self
    }

    /// The compiled input schema, less any keyword of it that does not compile; `None` only
    /// when nothing of it does, and arguments then pass unchecked (the upstream validates them
    /// anyway).
    pub(crate) fn validator(&self) -> Option<&jsonschema::Validator> {
        self.validator
            .get_or_init(|| super::input_schema::compile(&self.name, &self.input_schema))
            .as_ref()
    }
}

/// The tools of one run: namespace → its tools. Build it once per catalogue version and share it.
pub type Namespaces = BTreeMap<String, Vec<Arc<ToolSpec>>>;

/// One `execute`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub run_id: String,
    pub code: String,
    pub namespaces: Arc<Namespaces>,
    pub limits: Limits,
    /// `outputBudgetBytes`, clamped to 1,024–65,536; `None` means `limits.result_bytes`.
    pub output_budget_bytes: Option<u64>,
    /// Seeds Math.random and crypto; the same seed gives the same numbers.
    pub seed: u64,
    /// The logical clock's start, in milliseconds since the Unix epoch.
    pub start_time_ms: u64,
}

impl RunRequest {
    /// A request with default limits, seed 0 and the epoch as start time.
    pub fn new(
        run_id: impl Into<String>,
        code: impl Into<String>,
        namespaces: Arc<Namespaces>,
    ) -> Self {
        RunRequest {
            run_id: run_id.into(),
            code: code.into(),
            namespaces,
            limits: Limits::default(),
            output_budget_bytes: None,
            seed: 0,
            start_time_ms: 0,
        }
    }

    /// The result budget in bytes: the client's choice within the allowed range, else the limit.
    pub fn result_budget(&self) -> usize {
        let budget = match self.output_budget_bytes {
            Some(asked) => asked.clamp(OUTPUT_BUDGET_MIN, OUTPUT_BUDGET_MAX),
            None => self.limits.result_bytes,
        };
        usize::try_from(budget).unwrap_or(usize::MAX)
    }

    pub fn timeout(&self) -> Duration {
        self.limits.run_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_budget_is_clamped_and_defaults_to_the_limit() {
        let mut request = RunRequest::new("r", "return 1", Arc::new(Namespaces::new()));
        assert_eq!(request.result_budget(), 16 << 10);
        request.output_budget_bytes = Some(10);
        assert_eq!(request.result_budget(), 1_024);
        request.output_budget_bytes = Some(1 << 30);
        assert_eq!(request.result_budget(), 65_536);
    }
}
