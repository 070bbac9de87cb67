//! The hub side of the sandbox's [`Bridge`]: every call a script makes is looked up in the
//! catalogue, decided by policy on its own (approving a script never approves its calls
//! wholesale), sent to the upstream through the source's chosen connection, and journaled.

use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::catalog::describe::{DEFAULT_BUDGET_TOKENS, describe};
use crate::catalog::live::LiveCatalog;
use crate::catalog::results::{SearchRequest, render_search};
use crate::catalog::tool::json_digest;
use crate::config::Settings;
use crate::policy::Action;
use crate::runs::{JournalEntry, RunsStore};
use crate::sandbox::{Bridge, BridgeError, CallFailure, CallOutcome, ErrorCode, Pending, PendingKind, ToolCall};
use crate::sources::SourceError;

/// How many tools `hub.search` shows.
const HUB_SEARCH_LIMIT: usize = 10;

pub struct RunBridge {
    run_id: String,
    catalog: Arc<LiveCatalog>,
    settings: Arc<Settings>,
    store: Arc<RunsStore>,
}

impl RunBridge {
    pub fn new(run_id: String, catalog: Arc<LiveCatalog>, settings: Arc<Settings>, store: Arc<RunsStore>) -> RunBridge {
        RunBridge { run_id, catalog, settings, store }
    }
}

impl Bridge for RunBridge {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        let address = call.address();
        let found = self.catalog.read(|catalog, _| {
            let namespace = catalog.namespace(&call.namespace)?;
            let tool = namespace.tools.iter().find(|t| t.name == call.tool)?;
            let default_connection = namespace.connections.first().cloned();
            Some((tool.upstream_name.clone(), tool.annotations.clone(), default_connection))
        });
        let Some((upstream_name, annotations, default_connection)) = found else {
            let failure = CallFailure::new(ErrorCode::UnknownTool, format!("`{address}` is no longer in the catalogue"));
            return futures::future::ready(CallOutcome::from(Err(BridgeError::Failed(failure)))).boxed();
        };
        let connection = call.connection.clone().or(default_connection);
        let decision = self.settings.policy.evaluate(&address, connection.as_deref(), &annotations);
        match decision.action {
            Action::Deny => {
                let mut failure = CallFailure::new(ErrorCode::PolicyDenied, format!("policy denies `{address}`: {}", decision.reason));
                failure.hint = Some("This tool may not be called; do the task another way or ask the user to change the policy.".into());
                return futures::future::ready(CallOutcome::from(Err(BridgeError::Failed(failure)))).boxed();
            }
            Action::Ask => {
                let pending = Pending {
                    id: format!("{}/{}", self.run_id, call.seq),
                    kind: PendingKind::Approval,
                    address: Some(address.clone()),
                    summary: format!("{address} needs approval: {}", decision.reason),
                    message: Some(format!(
                        "Tell the user that `{address}` needs their approval. They can allow it with a policy rule, e.g. `capabilities policy` rules in config.toml ([[policy.rules]] match = \"{address}\", action = \"allow\")."
                    )),
                };
                return futures::future::ready(CallOutcome::from(Err(BridgeError::Suspend(pending)))).boxed();
            }
            Action::Allow => {}
        }
        let sources = self.catalog.sources().clone();
        let store = self.store.clone();
        let run_id = self.run_id.clone();
        async move {
            let started = Instant::now();
            let arguments = match &call.arguments {
                Value::Object(map) => map.clone(),
                Value::Null => serde_json::Map::new(),
                other => {
                    let failure = CallFailure::new(ErrorCode::InvalidArguments, format!("`{address}` takes an object of arguments, got {other}"));
                    return CallOutcome::from(Err(BridgeError::Failed(failure)));
                }
            };
            let outcome = sources.call_tool(&call.namespace, call.connection.as_deref(), &upstream_name, arguments).await;
            let ms = started.elapsed().as_millis() as u64;
            let (result, journaled, ok) = match outcome {
                Ok(raw) => {
                    let ok = raw.get("isError") != Some(&Value::Bool(true));
                    (Ok(raw.clone()), raw, ok)
                }
                Err(error) => {
                    let failure = failure_from(&error);
                    let journaled = json!({ "error": { "code": failure.code.as_str(), "message": failure.message } });
                    (Err(BridgeError::Failed(failure)), journaled, false)
                }
            };
            let entry = JournalEntry {
                seq: call.seq,
                address,
                connection: call.connection.clone(),
                args_digest: json_digest(&call.arguments),
                result: journaled,
                ok,
                ms,
            };
            if let Err(e) = store.record_call(&run_id, &entry) {
                tracing::warn!("call {} of run {run_id} is not journaled: {e}", call.seq);
            }
            CallOutcome { result, ms: Some(ms) }
        }
        .boxed()
    }

    fn search(&self, query: String) -> BoxFuture<'static, String> {
        let text = self.catalog.read(|catalog, index| {
            let request = SearchRequest { query: &query, namespace: None, limit: HUB_SEARCH_LIMIT };
            render_search(catalog, index, &self.settings.policy, &request).unwrap_or_else(|e| e.to_string())
        });
        futures::future::ready(text).boxed()
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        let policy = &self.settings.policy;
        let text = self.catalog.read(|catalog, _| {
            let visible: Vec<_> = catalog
                .namespaces
                .iter()
                .flat_map(|n| {
                    let connection = n.connections.first().cloned();
                    n.tools.iter().filter(move |t| policy.evaluate(&t.address(), connection.as_deref(), &t.annotations).action != Action::Deny)
                })
                .cloned()
                .collect();
            describe(&visible, &targets, DEFAULT_BUDGET_TOKENS).unwrap_or_else(|e| e.to_string())
        });
        futures::future::ready(text).boxed()
    }
}

/// An upstream failure as the script's `ToolError` shows it.
fn failure_from(error: &SourceError) -> CallFailure {
    let code = match error {
        SourceError::UnknownConnection { .. } => ErrorCode::InvalidArguments,
        SourceError::Upstream { .. } => ErrorCode::UpstreamError,
        _ => ErrorCode::UpstreamUnavailable,
    };
    let mut failure = CallFailure::new(code, error.to_string());
    failure.retryable = code == ErrorCode::UpstreamUnavailable;
    failure
}
