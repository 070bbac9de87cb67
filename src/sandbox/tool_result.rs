//! Turns a raw MCP `CallToolResult` into the value a script sees: `structuredContent` when
//! present, else text parsed as JSON when it is JSON, else the text; images, audio and resources
//! as typed objects; `isError: true` becomes a failure for a `ToolError`, with the HTTP status,
//! retryability and hint an OpenAPI source puts in the result's `_meta`.

use serde_json::{Map, Value, json};

/// What the script gets from one successful bridge answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Unwrapped {
    Value(Value),
    /// The tool reported `isError: true`.
    ToolFailed(ToolFailure),
}

/// A tool's own failure: its text, and what an HTTP API's answer adds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolFailure {
    pub message: String,
    pub status: Option<i64>,
    pub retryable: bool,
    pub hint: Option<String>,
}

pub fn unwrap_result(raw: Value) -> Unwrapped {
    let Value::Object(mut result) = raw else {
        // Not a CallToolResult: hand it over as it is rather than lose it.
        return Unwrapped::Value(raw);
    };
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let content = match result.remove("content") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    if is_error {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        let message = if text.is_empty() {
            result.get("structuredContent").map_or_else(
                || "the tool reported an error".to_string(),
                Value::to_string,
            )
        } else {
            text.join("\n")
        };
        let http = result
            .get("_meta")
            .and_then(|meta| meta.get(crate::model::tool::HTTP_META));
        let field = |key: &str| http.and_then(|http| http.get(key));
        return Unwrapped::ToolFailed(ToolFailure {
            message,
            status: field("status").and_then(Value::as_i64),
            retryable: field("retryable").and_then(Value::as_bool) == Some(true),
            hint: field("hint").and_then(Value::as_str).map(str::to_string),
        });
    }
    if let Some(structured) = result.remove("structuredContent").filter(|v| !v.is_null()) {
        return Unwrapped::Value(structured);
    }
    let mut items: Vec<Value> = content.into_iter().map(unwrap_content).collect();
    Unwrapped::Value(match items.len() {
        0 => Value::Null,
        1 => items.remove(0),
        _ => Value::Array(items),
    })
}

fn unwrap_content(item: Value) -> Value {
    let Value::Object(mut item) = item else {
        return item;
    };
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match kind.as_str() {
        "text" => {
            let text = match item.remove("text") {
                Some(Value::String(text)) => text,
                _ => String::new(),
            };
            parse_json_text(text)
        }
        "image" | "audio" => typed(&kind, &mut item, &["data", "mimeType"]),
        "resource" => {
            let mut resource = match item.remove("resource") {
                Some(Value::Object(resource)) => resource,
                _ => Map::new(),
            };
            typed(
                "resource",
                &mut resource,
                &["uri", "mimeType", "text", "blob"],
            )
        }
        "resource_link" => typed(
            "resource_link",
            &mut item,
            &["uri", "name", "title", "description", "mimeType", "size"],
        ),
        _ => Value::Object(item),
    }
}

/// `{ type, …fields }` with only the fields that are present, in a fixed order.
fn typed(kind: &str, from: &mut Map<String, Value>, fields: &[&str]) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    for field in fields {
        if let Some(value) = from.remove(*field) {
            out.insert((*field).to_string(), value);
        }
    }
    Value::Object(out)
}

/// Text that is a JSON object or array becomes that value; anything else stays text, so a
/// tool answering `"42"` or `"true"` as prose keeps it as a string.
fn parse_json_text(text: String) -> Value {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str(&text)
    {
        return value;
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_structured_content() {
        let raw = json!({ "content": [{ "type": "text", "text": "{\"a\":1}" }], "structuredContent": { "b": 2 } });
        assert_eq!(unwrap_result(raw), Unwrapped::Value(json!({ "b": 2 })));
    }

    #[test]
    fn parses_json_text_and_keeps_plain_text() {
        let raw = json!({ "content": [{ "type": "text", "text": "[1,2]" }] });
        assert_eq!(unwrap_result(raw), Unwrapped::Value(json!([1, 2])));
        let raw = json!({ "content": [{ "type": "text", "text": "hello" }] });
        assert_eq!(unwrap_result(raw), Unwrapped::Value(json!("hello")));
        let raw = json!({ "content": [{ "type": "text", "text": "{broken" }] });
        assert_eq!(unwrap_result(raw), Unwrapped::Value(json!("{broken")));
    }

    #[test]
    fn types_images_and_resources() {
        let raw = json!({ "content": [
            { "type": "text", "text": "see" },
            { "type": "image", "data": "AAA=", "mimeType": "image/png", "annotations": {} },
            { "type": "resource", "resource": { "uri": "file:///a", "text": "x" } }
        ] });
        assert_eq!(
            unwrap_result(raw),
            Unwrapped::Value(json!([
                "see",
                { "type": "image", "data": "AAA=", "mimeType": "image/png" },
                { "type": "resource", "uri": "file:///a", "text": "x" }
            ]))
        );
    }

    #[test]
    fn is_error_becomes_a_failure() {
        let raw =
            json!({ "isError": true, "content": [{ "type": "text", "text": "no such repo" }] });
        assert_eq!(
            unwrap_result(raw),
            Unwrapped::ToolFailed(ToolFailure {
                message: "no such repo".into(),
                ..ToolFailure::default()
            })
        );
        let raw = json!({ "isError": true, "content": [{ "type": "text", "text": "busy" }],
            "_meta": { "capabilities/http": { "status": 429, "retryable": true, "hint": "wait" } } });
        assert_eq!(
            unwrap_result(raw),
            Unwrapped::ToolFailed(ToolFailure {
                message: "busy".into(),
                status: Some(429),
                retryable: true,
                hint: Some("wait".into()),
            })
        );
        assert_eq!(
            unwrap_result(json!({ "content": [] })),
            Unwrapped::Value(Value::Null)
        );
    }
}
