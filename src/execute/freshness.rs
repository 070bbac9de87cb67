//! Definition freshness on the call path. Before a call, a tool whose definition changed since a
//! person confirmed it asks again, whatever the allow rules say (`[freshness] confirm`), with a
//! reason that says what changed. After a call that failed as if the script had an old
//! definition in mind (an unknown tool, arguments the upstream rejects), the source is listed
//! again once, and when the definition did change the failure's hint carries the new signature;
//! `search` and `describe` serve it at once.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::Value;

use crate::catalog::changes::{one_line, review_diff, what_changed};
use crate::model::ToolDefinition;
use crate::policy::ConfirmChanges;
use crate::runs::{Store, VersionState};
use crate::sources::SourceError;

/// The most of a definition's diff an approval's reason carries.
const MAX_DIFF_BYTES: usize = 3_000;

/// The versions this process knows are confirmed: confirmation is never taken back, so once
/// seen confirmed a version is not looked up again (a call costs no store write for it).
#[derive(Default)]
pub struct ConfirmedVersions(Mutex<HashSet<(String, String)>>);

impl ConfirmedVersions {
    fn contains(&self, tool: &ToolDefinition) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&(tool.address(), tool.hash.clone()))
    }

    fn insert(&self, tool: &ToolDefinition) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((tool.address(), tool.hash.clone()));
    }
}

/// Why a call of `tool` must ask because its definition changed, or `None` when it need not:
/// the version is confirmed (or the first one seen), or `confirm` lets this change through.
pub async fn change_asks(
    store: &Store,
    confirmed: &ConfirmedVersions,
    tool: &ToolDefinition,
    confirm: ConfirmChanges,
) -> Option<String> {
    if confirmed.contains(tool) {
        return None;
    }
    let states = match store
        .tool_versions()
        .observe(std::slice::from_ref(tool))
        .await
    {
        Ok(states) => states,
        Err(e) => {
            // The journal needs the same store and will refuse the call with the reason.
            tracing::warn!("cannot check the version of `{}`: {e}", tool.address());
            return None;
        }
    };
    match states.into_iter().next() {
        Some(VersionState::Changed { confirmed: before }) => {
            let read_only_before = before.as_ref().map(|b| b.read_only);
            let before: Option<ToolDefinition> =
                before.and_then(|b| serde_json::from_value(b.definition).ok());
            if !asks(confirm, before.as_ref(), read_only_before, tool) {
                return None;
            }
            // The one line first (lists show it), then the diff a person decides on.
            let mut diff = review_diff(before.as_ref(), tool);
            if diff.len() > MAX_DIFF_BYTES {
                let mut end = MAX_DIFF_BYTES;
                while !diff.is_char_boundary(end) {
                    end -= 1;
                }
                diff.truncate(end);
                diff.push_str("\n… (the whole diff: `capabilities source review`)\n");
            }
            Some(format!(
                "`{}` changed upstream: {}. Check the change (`capabilities source review {}`) before allowing it\n{}",
                tool.address(),
                what_changed(before.as_ref(), tool),
                tool.namespace,
                diff.trim_end()
            ))
        }
        _ => {
            confirmed.insert(tool);
            None
        }
    }
}

/// Whether a call of the changed `tool` asks, under `confirm`, given the version a person last
/// confirmed (`before`, read-only or not). A tool whose requests now go somewhere else (an
/// OpenAPI operation's server) asks even when it only reads: its credentials would follow.
fn asks(
    confirm: ConfirmChanges,
    before: Option<&ToolDefinition>,
    read_only_before: Option<bool>,
    tool: &ToolDefinition,
) -> bool {
    let moved = before.is_some_and(|before| before.endpoint != tool.endpoint);
    confirm.asks(tool.annotations.is_read_only(), read_only_before)
        || (moved && confirm != ConfirmChanges::None)
}

/// Whether a call's failure reads like the script used a definition the upstream no longer has:
/// an unknown tool, or arguments it rejects. A guess from the message: it only decides whether
/// the source is listed again, which costs one listing when it is wrong.
pub fn looks_stale(outcome: &Result<Value, SourceError>) -> bool {
    let text = match outcome {
        Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => error_text(result),
        Err(SourceError::Upstream { message, .. }) => message.clone(),
        // Refused unsent because the upstream defines the tool otherwise now: certainly stale.
        Err(SourceError::Changed { .. }) => return true,
        _ => return false,
    };
    let text = text.to_lowercase();
    [
        "-32602",
        "invalid params",
        "invalid arguments",
        "unknown tool",
        "tool not found",
        "validation error",
        "field required",
        "is required",
        "required property",
        "unexpected keyword",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

/// The text blocks of a tool's error answer, as one message.
pub fn error_text(answer: &Value) -> String {
    answer
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The hint for a call that failed because its tool changed, from the definition the script
/// was written against (`before`) and the one listed now (`after`, `None` when it is gone).
/// `None` when nothing changed: the failure is the script's own.
pub fn stale_hint(before: &ToolDefinition, after: Option<&ToolDefinition>) -> Option<String> {
    match after {
        None => Some(format!(
            "`{}` is no longer offered by its source; search again for the tool to use.",
            before.address()
        )),
        Some(after) if after.hash != before.hash => Some(format!(
            "`{}` changed upstream; it is now {}. Call it that way (describe shows the full types).",
            after.address(),
            one_line(after)
        )),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_read_only_tool_whose_requests_moved_asks() {
        let tool = |endpoint: &str| -> ToolDefinition {
            serde_json::from_value(serde_json::json!({
                "namespace": "api", "name": "status", "upstreamName": "status",
                "description": "", "inputSchema": { "type": "object" },
                "annotations": { "readOnlyHint": true }, "endpoint": endpoint, "hash": "h",
            }))
            .unwrap()
        };
        let before = tool("https://api.example.com");
        let same = tool("https://api.example.com");
        let moved = tool("https://elsewhere.example.net");
        let writes = ConfirmChanges::Writes;
        assert!(!asks(writes, Some(&before), Some(true), &same));
        assert!(asks(writes, Some(&before), Some(true), &moved));
        assert!(!asks(
            ConfirmChanges::None,
            Some(&before),
            Some(true),
            &moved
        ));
    }

    #[test]
    fn rejected_arguments_and_unknown_tools_look_stale_and_other_failures_do_not() {
        let tool_error = |text: &str| {
            Ok(json!({ "isError": true, "content": [{ "type": "text", "text": text }] }))
        };
        assert!(looks_stale(&tool_error(
            "Error executing tool needs: 1 validation error for needsArguments\nreason\n  Field required"
        )));
        assert!(looks_stale(&tool_error("Unknown tool: nope")));
        assert!(looks_stale(&Err(SourceError::Upstream {
            name: "s".into(),
            request: "tools/call".into(),
            message: "MCP error -32602: Invalid arguments for tool echo".into(),
        })));
        assert!(!looks_stale(&tool_error("the repository is archived")));
        assert!(!looks_stale(&Ok(json!({ "content": [] }))));
        assert!(!looks_stale(&Err(SourceError::ShutDown)));
    }
}
