//! One `request` span per MCP request the hub answers, over stdio and HTTP alike, and the access
//! log written inside it. The span carries a fresh `request_id` (the client's JSON-RPC id is
//! unique only per client, so it rides along as `jsonrpc_id`), the method, the tool of a
//! `tools/call`, the client's name, and for `execute` the run's id and status once the run has
//! them; the sandbox's `run` span and the upstream calls it spawns sit inside it. At info level
//! each request writes "request received", then "request finished" with its outcome and
//! duration. Arguments, scripts and results are never put on a span or a line.

use std::time::Instant;

use rmcp::model::{
    CallToolResponse, CustomResult, DiscoverResult, InitializeResult, ListToolsResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tracing::field::{Empty, display};
use tracing::{Instrument, Span};

use crate::logging::new_request_id;
use crate::sandbox::ExecuteEnvelope;

/// The most characters of client-chosen text (a tool or client name, an id) a span copies, so a
/// client cannot blow up every log line.
const LONGEST_COPIED: usize = 64;

/// How a request ended, for the access log and the span's `outcome`.
pub(super) trait Outcome {
    fn outcome(&self) -> &'static str {
        "ok"
    }
}

impl Outcome for CallToolResponse {
    fn outcome(&self) -> &'static str {
        match self {
            CallToolResponse::Complete(result) if result.is_error == Some(true) => "tool_error",
            CallToolResponse::InputRequired(_) => "input_required",
            _ => "ok",
        }
    }
}

impl Outcome for ListToolsResult {}
impl Outcome for InitializeResult {}
impl Outcome for DiscoverResult {}
impl Outcome for CustomResult {}
impl Outcome for () {}
impl Outcome for rmcp::model::ListSkillsResult {}
impl Outcome for rmcp::model::GetSkillResult {}
impl Outcome for rmcp::model::ReadResourceResponse {}
impl Outcome for rmcp::model::ListResourcesResult {}

/// The span of one request for `method` (and `tool`, for `tools/call`).
pub(super) fn request_span(
    method: &str,
    tool: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> Span {
    let tool = tool.map(short);
    let client = context.client_info().map(|info| short(&info.name));
    // A root of its own rather than a child of rmcp's serve loop, which lives as long as the
    // connection: one exported trace per request.
    tracing::info_span!(
        parent: None,
        "request",
        request_id = %new_request_id(),
        method = %short(method),
        tool = tool.as_deref().map(display),
        jsonrpc_id = %short(&context.id.to_string()),
        client = client.as_deref().map(display),
        run_id = Empty,
        run_status = Empty,
        outcome = Empty,
    )
}

/// Runs `work` inside `span`, between the two lines of the access log.
pub(super) async fn traced<T: Outcome>(
    span: Span,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    async move {
        tracing::info!("request received");
        let started = Instant::now();
        let result = work.await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let outcome = match &result {
            Ok(value) => {
                let outcome = value.outcome();
                tracing::info!(outcome, duration_ms, "request finished");
                outcome
            }
            Err(error) => {
                tracing::info!(
                    outcome = "error",
                    error_code = error.code.0,
                    duration_ms,
                    "request finished"
                );
                "error"
            }
        };
        // For the exported span; the line above already says it.
        Span::current().record("outcome", display(outcome));
        result
    }
    .instrument(span)
    .await
}

/// Puts a run's id and status on the current request's span, for the lines still to come and
/// for the exported trace.
pub(super) fn record_run(envelope: &ExecuteEnvelope) {
    let span = Span::current();
    span.record("run_id", display(&envelope.run_id));
    if let Ok(Value::String(status)) = serde_json::to_value(envelope.status) {
        span.record("run_status", display(status));
    }
}

/// What the client sent, as the log copies it: its first characters, with control characters
/// written as escapes, so that a newline in a method, id or client name cannot start a line of
/// its own that reads like the hub's.
fn short(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(LONGEST_COPIED) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_sent_is_copied_on_one_line() {
        let copied = short("ping\n2026-12-04T00:00:00Z  INFO token revoked\r\u{1b}[31m\u{85}");
        assert!(!copied.chars().any(char::is_control), "{copied}");
        assert!(copied.starts_with("ping\\n2026"), "{copied}");
        assert_eq!(short(&"é".repeat(1000)).chars().count(), LONGEST_COPIED);
    }
}
