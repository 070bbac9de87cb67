//! One catalogued tool: its address, what the upstream said about it, and a hash of that definition.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `_meta` key under which a failed call's result carries what an HTTP answer says about
/// the failure (`status`, `retryable`, `hint`); OpenAPI sources set it, the sandbox reads it
/// into the script's `ToolError`.
pub const HTTP_META: &str = "capabilities/http";

/// A tool as an upstream server lists it, before the catalogue gives it an address.
/// Kept as plain JSON-friendly data so the cache can store it and tests can load recorded fixtures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
    /// Where calls of the tool are sent, when the hub rather than the upstream decides it (an
    /// OpenAPI operation's base URL). Part of the definition hash, so a tool whose requests
    /// (and credentials) would go somewhere else counts as changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

/// MCP tool annotations. All are hints from the upstream and untrusted; absent means "not said".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    pub fn is_empty(&self) -> bool {
        *self == Annotations::default()
    }

    /// True when the upstream marks the tool read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }

    /// True when the tool may destroy data. MCP's default for a tool that is not read-only is
    /// "destructive", but only an explicit hint marks it `@destructive` in declarations.
    pub fn is_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive_hint == Some(true)
    }
}

/// A catalogued tool under its address `namespace.name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The source's name from the config; a JavaScript identifier.
    pub namespace: String,
    /// The tool part of the address: lowerCamelCase of the upstream name, unique in its namespace.
    pub name: String,
    /// What the upstream calls the tool; used on the wire.
    pub upstream_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
    /// Where calls are sent, when the hub decides it (see [`UpstreamTool::endpoint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// SHA-256 over the upstream definition, so a changed signature can be noticed.
    pub hash: String,
}

impl ToolDefinition {
    /// `namespace.name`, the one name scripts, search and describe use.
    pub fn address(&self) -> String {
        format!("{}.{}", self.namespace, self.name)
    }
}

/// Hex SHA-256 of an upstream definition in a canonical JSON form (object keys sorted), so the
/// same definition hashes the same whatever order the upstream sent its keys in.
pub fn definition_hash(tool: &UpstreamTool) -> String {
    let value = serde_json::to_value(tool).unwrap_or(Value::Null);
    json_digest(&value)
}

/// Hex SHA-256 of a JSON value in canonical form (object keys sorted), e.g. a call's arguments.
pub fn json_digest(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A JSON value as text with object keys sorted, so equal values read alike whatever order
/// their keys came in.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Gives every upstream tool of one namespace its address (see
/// [`assign_tool_names`](super::address::assign_tool_names)): the one it had in the
/// namespace's previous listing `before` where it had one, else deterministically; and hashes
/// its definition. The result is sorted by address.
pub fn build_namespace(
    namespace: &str,
    tools: Vec<UpstreamTool>,
    before: &[ToolDefinition],
) -> Vec<ToolDefinition> {
    let before: BTreeMap<&str, &str> = before
        .iter()
        .map(|tool| (tool.upstream_name.as_str(), tool.name.as_str()))
        .collect();
    let names = super::address::assign_tool_names(tools.iter().map(|t| t.name.as_str()), &before);
    let mut out: Vec<ToolDefinition> = tools
        .into_iter()
        .filter_map(|tool| {
            // A duplicate upstream name was already assigned; keep the first definition only.
            let name = names.get(&tool.name)?.clone();
            let hash = definition_hash(&tool);
            Some(ToolDefinition {
                namespace: namespace.to_string(),
                name,
                upstream_name: tool.name,
                title: tool.title.or_else(|| tool.annotations.title.clone()),
                description: tool.description.unwrap_or_default(),
                input_schema: tool.input_schema,
                output_schema: tool.output_schema,
                annotations: tool.annotations,
                endpoint: tool.endpoint,
                hash,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> UpstreamTool {
        UpstreamTool {
            name: "echo".into(),
            title: None,
            description: Some("Echo".into()),
            input_schema: schema,
            output_schema: None,
            annotations: Annotations::default(),
            endpoint: None,
        }
    }

    #[test]
    fn hash_ignores_key_order() {
        let a = tool(
            json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}}}),
        );
        let b = tool(
            json!({"properties":{"b":{"type":"number"},"a":{"type":"string"}},"type":"object"}),
        );
        assert_eq!(definition_hash(&a), definition_hash(&b));
    }

    #[test]
    fn hash_changes_with_the_schema() {
        let a = tool(json!({"type":"object","properties":{"a":{"type":"string"}}}));
        let b = tool(json!({"type":"object","properties":{"a":{"type":"number"}}}));
        assert_ne!(definition_hash(&a), definition_hash(&b));
    }

    #[test]
    fn hash_changes_with_where_calls_go() {
        let schema = json!({"type":"object"});
        let mut a = tool(schema.clone());
        let none = definition_hash(&a);
        a.endpoint = Some("https://api.example.com".into());
        let api = definition_hash(&a);
        a.endpoint = Some("https://evil.example".into());
        assert_ne!(none, api);
        assert_ne!(api, definition_hash(&a));
        // A tool whose upstream decides where calls go hashes as it always did.
        assert_eq!(none, definition_hash(&tool(schema)));
    }
}
