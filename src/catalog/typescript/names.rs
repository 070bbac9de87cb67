//! Type names: turning tool, property and definition names into PascalCase type names,
//! naming one element of a list, taking a schema's `title` when it can name a type, and telling
//! which words are reserved. Who gets which name (and the suffixes that keep names apart) is the
//! walk's job; the tests of that outcome live here, beside the rules they rely on.

use serde_json::Value;

use crate::model::address::JS_RESERVED_WORDS;

/// Besides JavaScript's reserved words ([`JS_RESERVED_WORDS`]), words that cannot name a type:
/// TypeScript's keywords and built-in type names.
const RESERVED_TYPE_NAMES: &[&str] = &[
    "any",
    "as",
    "bigint",
    "boolean",
    "declare",
    "infer",
    "is",
    "keyof",
    "module",
    "namespace",
    "never",
    "number",
    "object",
    "readonly",
    "require",
    "string",
    "symbol",
    "type",
    "unique",
    "unknown",
];

pub(super) fn usable_title(schema: &Value) -> Option<String> {
    schema
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| is_type_name(t))
        .map(str::to_string)
}

/// An ASCII JavaScript identifier (non-ASCII names get quoted, which is always safe).
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

pub(super) fn is_type_name(name: &str) -> bool {
    is_identifier(name)
        && !JS_RESERVED_WORDS.contains(&name)
        && !RESERVED_TYPE_NAMES.contains(&name)
}

/// `create-issue`, `create_issue`, `createIssue` → `CreateIssue`; always a valid type name.
pub(super) fn pascal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut upper = true;
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(if upper { ch.to_ascii_uppercase() } else { ch });
            upper = false;
        } else {
            upper = true;
        }
    }
    if out.is_empty() {
        out.push_str("Type");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// The name of one element of a list: `IssueLabels` → `IssueLabel`, `Entries` → `Entry`.
pub(super) fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = name
        .strip_suffix("es")
        .filter(|s| s.ends_with("ss") || s.ends_with("us"))
    {
        stem.to_string()
    } else if name.ends_with("ss") {
        format!("{name}Item")
    } else if let Some(stem) = name.strip_suffix('s').filter(|s| !s.is_empty()) {
        stem.to_string()
    } else {
        format!("{name}Item")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::typescript::NamespaceTypes;
    use crate::catalog::typescript::tests::{parses, sig, tool};
    use serde_json::json;

    #[test]
    fn deep_objects_become_named_interfaces() {
        let issue = tool(
            "github",
            "getIssue",
            json!({"type": "object", "properties": {
                "filter": {"type": "object", "properties": {
                    "author": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}
                }}
            }}),
            Some(json!({"title": "Issue", "type": "object", "properties": {
                "user": {"type": "object", "description": "Who opened it.", "properties": {
                    "login": {"type": "string"},
                    "address": {"type": "object", "properties": {"city": {"type": "string"}}}
                }}
            }})),
        );
        let model = NamespaceTypes::build("github", [&issue]);
        assert_eq!(
            model.signature("getIssue").as_deref(),
            Some(
                "github.getIssue(input?: { filter?: { author?: GetIssueFilterAuthor } }): Promise<Issue>"
            )
        );
        let names: Vec<&str> = model.type_names().collect();
        assert_eq!(names, ["Issue", "IssueUserAddress", "GetIssueFilterAuthor"]);
        assert_eq!(
            model.tool_dependencies("getIssue"),
            ["GetIssueFilterAuthor", "Issue"]
        );
        assert_eq!(model.type_dependencies("Issue"), ["IssueUserAddress"]);
        assert_eq!(
            model.type_member("Issue", true).as_deref(),
            Some(
                "\tinterface Issue {\n\t\t/** Who opened it. */\n\t\tuser?: {\n\t\t\tlogin?: string;\n\t\t\taddress?: IssueUserAddress;\n\t\t};\n\t}\n"
            )
        );
        assert_eq!(
            model.type_member("IssueUserAddress", false).as_deref(),
            Some("\tinterface IssueUserAddress {\n\t\tcity?: string;\n\t}\n")
        );
        parses(&model.declaration());
    }
    #[test]
    fn array_items_take_singular_names() {
        let text = sig(json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}},
            "b": {"type": "object", "properties": {"addresses": {"type": "array", "items": {"type": "object", "properties": {"z": {"type": "string"}}}}}}
        }}));
        assert_eq!(
            text,
            "t.run(input?: { a?: { entries?: RunAEntry[] }; b?: { addresses?: RunBAddress[] } }): Promise<unknown>"
        );
        assert_eq!(singular("Labels"), "Label");
        assert_eq!(singular("Status"), "Statu");
        assert_eq!(singular("Statuses"), "Status");
        assert_eq!(singular("Class"), "ClassItem");
        assert_eq!(singular("Data"), "DataItem");
    }
    #[test]
    fn output_types_are_named() {
        let out = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        let tools = [
            tool(
                "t",
                "alpha",
                json!({}),
                Some(json!({"title": "Weather report", "type": "object"})),
            ),
            tool(
                "t",
                "beta",
                json!({}),
                Some(json!({"title": "string", "type": "object", "properties": {}})),
            ),
            tool("t", "gamma", json!({}), Some(out.clone())),
            tool("t", "delta", json!({}), Some(out)),
            tool("t", "empty", json!({}), Some(json!({}))),
            tool("t", "junk", json!({}), Some(json!("junk"))),
            tool(
                "t",
                "same",
                json!({}),
                Some(
                    json!({"title": "Report", "type": "object", "properties": {"a": {"type": "string"}}}),
                ),
            ),
            tool(
                "t",
                "other",
                json!({}),
                Some(
                    json!({"title": "Report", "type": "object", "properties": {"b": {"type": "string"}}}),
                ),
            ),
        ];
        let model = NamespaceTypes::build("t", &tools);
        let returns: Vec<String> = model
            .tool_names()
            .map(|t| {
                let s = model.signature(t).unwrap_or_default();
                format!("{t} {}", s.rsplit("Promise").next().unwrap_or_default())
            })
            .collect();
        assert_eq!(
            returns,
            [
                "alpha <AlphaResult>",
                "beta <BetaResult>",
                "delta <DeltaResult>",
                "empty <unknown>",
                "gamma <GammaResult>",
                "junk <unknown>",
                "other <Report>",
                "same <SameResult>",
            ]
        );
        parses(&model.declaration());
    }

    #[test]
    fn type_names_never_collide() {
        let a = tool(
            "t",
            "a",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Item"}}, "$defs": {"Item": {"type": "object", "properties": {"a": {"type": "string"}}}}}),
            None,
        );
        let b = tool(
            "t",
            "b",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Item"}}, "$defs": {"Item": {"type": "object", "properties": {"b": {"type": "string"}}}}}),
            None,
        );
        let c = tool(
            "t",
            "c",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Item"}}, "$defs": {"Item": {"type": "object", "properties": {"a": {"type": "string"}}}}}),
            None,
        );
        let d = tool(
            "t",
            "d",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Item"}}, "$defs": {"Item": {"type": "object", "properties": {"d": {"type": "string"}}}}}),
            Some(
                json!({"title": "BItem", "type": "object", "properties": {"d": {"type": "string"}}}),
            ),
        );
        let model = NamespaceTypes::build("t", [&d, &c, &b, &a]);
        let names: Vec<&str> = model.type_names().collect();
        assert_eq!(names, ["BItem", "Item", "BItem2", "DItem"]);
        assert_eq!(
            model.signature("c"),
            model.signature("a").map(|s| s.replace("t.a(", "t.c("))
        );
    }
}
