//! The code-mode surface the hub serves: exactly three tools (`search`, `describe`, `execute`)
//! and the server instructions. Everything here is sent on every connection, so it is the hub's
//! fixed cost in the model's context: keep it short (a test holds it under 1,000 tokens).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::fields::{self, input_schema};

pub const SEARCH: &str = "search";
pub const DESCRIBE: &str = "describe";
pub const EXECUTE: &str = "execute";

pub const INSTRUCTIONS: &str = "The user's tools from all their MCP servers, used through code. search finds tools by task, \
describe shows their TypeScript types, execute runs one JavaScript script that calls them. Prefer one execute with several \
calls over many small steps.";

/// The instructions in direct mode, where the tools are the sources' own.
pub const DIRECT_INSTRUCTIONS: &str = "The user's tools from all their MCP servers, each named namespace_tool after the server \
it comes from. A call that needs the user's approval says so instead of running; once they allowed it, the same call runs.";

const SEARCH_DESCRIPTION: &str = "Find the user's tools and skills by what you want to do, e.g. \"create a GitHub issue\" or \"recent Slack messages\". \
Use an API's words, e.g. \"cancel Stripe subscription\" rather than \"stop a customer's plan\"; if nothing fits, search again. \
Returns tool addresses with one-line TypeScript signatures, best match first, and skill:NAME lines; [asks] marks tools that need the user's approval. \
Read full types with describe before writing code. Pass namespace to search or list one source.";

const DESCRIBE_DESCRIPTION: &str = "Get exact TypeScript declarations for tools: an address (github.createIssue), a whole namespace \
(github), or a type named in an earlier declaration (github.Issue). Write execute code against these types. \
A skill (skill:NAME) gives its instructions and files.";

const EXECUTE_DESCRIPTION: &str = "Run JavaScript in a sandbox where each of the user's sources is a global object of async functions: \
await github.createIssue({ owner, repo, title }). TypeScript annotations are allowed and stripped. Write the body of an async \
function and return what you need; run independent calls in parallel with Promise.all. There is no network or filesystem besides \
these functions. A result too large to send is stored: page through it with hub.read(resultRef, { path, fields, offset }) as the envelope's nextRequest shows, without calling the tools again. If a call needs the user's approval, the result says so: tell the user, then continue with { \"resume\": \"<runId>\" } after they decide. Never ask the user for passwords or \
tokens in chat. Send exactly one of code or resume.";

/// The three tools, in the order `tools/list` gives them.
pub fn tools() -> Vec<Tool> {
    vec![search(), describe(), execute()]
}

fn search() -> Tool {
    Tool::new(
        SEARCH,
        SEARCH_DESCRIPTION,
        object(input_schema(fields::SEARCH)),
    )
    .with_annotations(read_only())
}

fn describe() -> Tool {
    Tool::new(
        DESCRIBE,
        DESCRIBE_DESCRIPTION,
        object(input_schema(fields::DESCRIBE)),
    )
    .with_annotations(read_only())
}

fn execute() -> Tool {
    let annotations = ToolAnnotations::new().read_only(false).open_world(true);
    Tool::new(
        EXECUTE,
        EXECUTE_DESCRIPTION,
        object(input_schema(fields::EXECUTE)),
    )
    .with_raw_output_schema(object(envelope_schema()))
    .with_annotations(annotations)
}

/// The `ExecuteEnvelope` as JSON Schema: what `execute` returns as structured content.
fn envelope_schema() -> Value {
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    json!({
        "type": "object",
        "properties": {
            "runId": { "type": "string" },
            "status": { "enum": ["completed", "failed", "awaiting_approval", "awaiting_connection", "cancelled", "running"] },
            "result": {},
            "error": {
                "type": "object",
                "properties": {
                    "code": { "type": "string" },
                    "message": { "type": "string" },
                    "hint": { "type": "string" },
                    "recovery": {
                        "type": "object",
                        "properties": {
                            "code": { "type": "string" },
                            "execute_request": { "enum": ["correct_arguments", "do_not_replay", "unchanged", "adjust_projection", "use_next_request"] },
                            "provider_execution": { "enum": ["not_started", "unknown", "completed"] },
                            "automatic_replay": { "const": false },
                        },
                    },
                },
                "required": ["code", "message"],
            },
            "logs": strings,
            "calls": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "address": { "type": "string" },
                        "ok": { "type": "boolean" },
                        "ms": { "type": "integer" },
                        "outcome": { "enum": ["done", "failed", "not_sent", "unknown"] },
                    },
                },
            },
            "pending": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": { "type": "string" },
                        "kind": { "enum": ["approval", "connection"] },
                        "address": { "type": "string" },
                        "summary": { "type": "string" },
                        "message": { "type": "string" },
                        "connection": { "type": "string" },
                    },
                },
            },
            "truncated": { "type": "object", "properties": { "result": { "type": "boolean" }, "logs": { "type": "boolean" } } },
            "notices": strings,
            // Their fields are in the envelope itself and in the README; spelling them out here
            // would cost every session tokens for a case most runs never meet.
            "stored": { "type": "object" },
            "nextRequest": { "type": "object" },
            // A string; typed as anything to keep the surface within its 1,000 tokens.
            "profile": {},
        },
        "required": ["runId", "status", "calls"],
    })
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .idempotent(true)
        .open_world(false)
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        // Every schema above is an object literal.
        _ => Arc::new(JsonObject::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_surface_is_three_tools_with_the_spec_annotations() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [SEARCH, DESCRIBE, EXECUTE]);
        for tool in &tools[..2] {
            let a = tool.annotations.as_ref().unwrap();
            assert_eq!(
                (a.read_only_hint, a.idempotent_hint),
                (Some(true), Some(true)),
                "{}",
                tool.name
            );
            assert!(tool.output_schema.is_none());
        }
        let a = tools[2].annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.open_world_hint),
            (Some(false), Some(true))
        );
        assert!(tools[2].output_schema.is_some());
    }

    #[test]
    fn a_real_envelope_matches_the_output_schema() {
        use crate::sandbox::{EnvelopeError, ErrorCode, ExecuteEnvelope, Recovery};
        let schema = envelope_schema();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let mut envelope = ExecuteEnvelope::rejected(
            "run_x",
            EnvelopeError::new(ErrorCode::Timeout, "slow"),
            vec!["n".into()],
        );
        envelope.logs.push("log".into());
        envelope.truncated.result = true;
        envelope.profile = Some("work".into());
        let value = serde_json::to_value(&envelope).unwrap();
        assert!(validator.is_valid(&value), "{value}");
        for recovery in [
            Recovery::OUTCOME_UNKNOWN,
            Recovery::CORRECT_ARGUMENTS,
            Recovery::UNCHANGED,
        ] {
            envelope.error.as_mut().unwrap().recovery = Some(recovery);
            let value = serde_json::to_value(&envelope).unwrap();
            assert!(validator.is_valid(&value), "{value}");
        }
        let mut replayed = serde_json::to_value(&envelope).unwrap();
        replayed["error"]["recovery"]["automatic_replay"] = json!(true);
        assert!(!validator.is_valid(&replayed));
        assert!(!validator.is_valid(&json!({ "runId": "r", "status": "done", "calls": [] })));
    }
}
