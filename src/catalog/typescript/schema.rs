//! Questions asked of a raw JSON Schema, before or instead of converting it: where a local
//! `$ref` points, whether a definition can reach itself, whether a schema describes an object or
//! says anything about a shape at all, and roughly how wide its one-line rendering would be.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::model::json_size::{JsonSize, json_size, nests_within};

/// Schemas nested deeper than this render as `unknown`: a guard against hostile input, far
/// beyond what any real tool schema needs.
pub(super) const MAX_NESTING: usize = 64;

/// Resolves a local `$ref` (`#`, `#/$defs/Issue`, `#/definitions/a~1b`) to its target and the
/// last pointer segment (empty for the root). Remote references resolve to nothing.
pub(super) fn resolve<'s>(root: &'s Value, reference: &str) -> Option<(&'s Value, String)> {
    let pointer = percent_decode(reference.strip_prefix('#')?)?;
    if pointer.is_empty() {
        return Some((root, String::new()));
    }
    let target = root.pointer(&pointer)?;
    let segment = pointer
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~");
    Some((target, segment))
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The length of `value` as compact JSON when that is at most `cap` bytes; counted, never
/// written, and stopped at the cap, so a huge schema costs no more than a small one.
fn bounded_len(value: &Value, cap: usize) -> Option<usize> {
    // Every value writes at least a byte, and serde recurses as deep as the value is.
    if !nests_within(value, 2 * MAX_NESTING, cap) {
        return None;
    }
    match json_size(value, cap) {
        JsonSize::Exact(len) => Some(len),
        JsonSize::AtLeast(_) => None,
    }
}

/// `value` as JSON when that is at most `cap` bytes long: measured first, so only a value known
/// to be short is written.
pub(super) fn bounded_json(value: &Value, cap: usize) -> Option<String> {
    bounded_len(value, cap)?;
    serde_json::to_string(value).ok()
}

/// Whether following the references inside `schema` leads back to `reference`. `visits` is how
/// many more values it may look at.
pub(super) fn reaches(
    root: &Value,
    schema: &Value,
    reference: &str,
    visited: &mut HashSet<String>,
    nesting: usize,
    visits: &mut usize,
) -> bool {
    if nesting > MAX_NESTING || *visits == 0 {
        // Too deep or too large to tell: treat as recursive, which only costs a name.
        return true;
    }
    *visits -= 1;
    match schema {
        Value::Object(map) => {
            if let Some(next) = map.get("$ref").and_then(Value::as_str) {
                if next == reference {
                    return true;
                }
                if visited.insert(next.to_string())
                    && let Some((target, _)) = resolve(root, next)
                    && reaches(root, target, reference, visited, nesting + 1, visits)
                {
                    return true;
                }
            }
            map.values()
                .any(|v| reaches(root, v, reference, visited, nesting + 1, visits))
        }
        Value::Array(items) => items
            .iter()
            .any(|v| reaches(root, v, reference, visited, nesting + 1, visits)),
        _ => false,
    }
}

/// A rough length of a schema's one-line rendering, so a nested object that would swamp a
/// signature can be named before it is converted. Only whether it passes `cap` matters, so it
/// stops counting there: a huge schema costs no more to measure than a wide one.
pub(super) fn estimated_width(schema: &Value, nesting: usize, cap: usize) -> usize {
    const SHORT: usize = 7;
    let Some(map) = schema.as_object().filter(|_| nesting <= MAX_NESTING) else {
        return SHORT;
    };
    if map.contains_key("$ref") {
        return 2 * SHORT;
    }
    let mut width = 0;
    if let Some(Value::Array(values)) = map.get("enum") {
        for value in values {
            width += 3 + bounded_len(value, cap).unwrap_or(cap);
            if width > cap {
                break;
            }
        }
        return width;
    }
    let mut parts: Vec<(usize, &Value)> = Vec::new();
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        width += 4;
        parts.extend(properties.iter().map(|(name, v)| (name.len() + 4, v)));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = map.get(key).filter(|v| v.is_object()) {
            parts.push((2, inner));
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            parts.extend(branches.iter().map(|b| (3, b)));
        }
    }
    for (extra, part) in parts {
        if width > cap {
            break;
        }
        width += extra + estimated_width(part, nesting + 1, cap.saturating_sub(width));
    }
    width.max(SHORT)
}

pub(super) fn is_object_schema(schema: &Value) -> bool {
    let declares_object = match schema.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "object"),
        _ => false,
    };
    declares_object || schema.get("properties").is_some()
}

pub(super) fn is_bare_object(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object")
        && !["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
}

pub(super) fn has_type_info(schema: &Value) -> bool {
    schema.as_object().is_some_and(|map| {
        [
            "type",
            "properties",
            "additionalProperties",
            "items",
            "prefixItems",
            "$ref",
            "anyOf",
            "oneOf",
            "allOf",
            "enum",
            "const",
        ]
        .iter()
        .any(|k| map.contains_key(*k))
    })
}

#[cfg(test)]
mod tests {
    use crate::catalog::typescript::NamespaceTypes;
    use crate::catalog::typescript::tests::{parses, tool};
    use serde_json::json;

    #[test]
    fn local_refs_become_named_types() {
        let schema = json!({
            "type": "object",
            "properties": {
                "owner": {"$ref": "#/$defs/user"},
                "reviewers": {"type": "array", "items": {"$ref": "#/definitions/User"}},
                "state": {"$ref": "#/$defs/State"},
                "odd": {"$ref": "#/$defs/a~1b%20c"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "dangling": {"$ref": "#/$defs/Nope"}
            },
            "required": ["owner"],
            "$defs": {
                "user": {"type": "object", "description": "A person.", "properties": {"login": {"type": "string"}}},
                "State": {"type": "string", "enum": ["open", "closed"]},
                "a/b c": {"type": "object", "properties": {"v": {"type": "number"}}}
            },
            "definitions": {
                "User": {"type": "object", "properties": {"id": {"type": "integer"}}}
            }
        });
        let tools = [tool("t", "run", schema, None)];
        let model = NamespaceTypes::build("t", &tools);
        assert_eq!(
            model.signature("run").as_deref(),
            Some(
                r#"t.run(input: { owner: User; reviewers?: RunUser[]; state?: "open" | "closed"; odd?: ABC; remote?: unknown; dangling?: unknown }): Promise<unknown>"#
            )
        );
        assert_eq!(
            model.type_member("User", true).as_deref(),
            Some("\t/** A person. */\n\tinterface User {\n\t\tlogin?: string;\n\t}\n")
        );
        parses(&model.declaration());
    }

    #[test]
    fn all_of_a_reference_and_an_object_is_an_intersection() {
        let schema = json!({
            "type": "object",
            "properties": {
                "x": {"allOf": [{"$ref": "#/$defs/Base"}, {"type": "object", "properties": {"extra": {"type": "string"}}}]},
                "y": {"allOf": [{"$ref": "#/$defs/Base"}], "description": "Just the base."}
            },
            "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
        });
        let tools = [tool("t", "run", schema, None)];
        let model = NamespaceTypes::build("t", &tools);
        assert_eq!(
            model.signature("run").as_deref(),
            Some("t.run(input?: { x?: Base & { extra?: string }; y?: Base }): Promise<unknown>")
        );
        parses(&model.declaration());
    }

    #[test]
    fn recursive_refs_do_not_loop() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tree": {"$ref": "#/$defs/Node"},
                "self": {"$ref": "#"},
                "ping": {"$ref": "#/$defs/Ping"}
            },
            "$defs": {
                "Node": {"type": "object", "properties": {
                    "value": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }},
                "Ping": {"anyOf": [{"$ref": "#/$defs/Pong"}, {"type": "null"}]},
                "Pong": {"anyOf": [{"$ref": "#/$defs/Ping"}, {"type": "string"}]}
            }
        });
        let tools = [tool("t", "run", schema, None)];
        let model = NamespaceTypes::build("t", &tools);
        assert_eq!(
            model.signature("run").as_deref(),
            Some("t.run(input?: { tree?: Node; self?: RunInput; ping?: Ping }): Promise<unknown>")
        );
        assert_eq!(
            model.type_member("Node", false).as_deref(),
            Some("\tinterface Node {\n\t\tvalue?: string;\n\t\tchildren?: Node[];\n\t}\n")
        );
        // Ping and Pong are each other's alias with nothing in between, which TypeScript
        // refuses as circular: the reference that closes the circle is `unknown`.
        assert_eq!(
            model.type_member("Ping", false).as_deref(),
            Some("\ttype Ping = unknown | null;\n")
        );
        assert_eq!(model.type_dependencies("Node"), Vec::<&str>::new());
        parses(&model.declaration());
    }
}
