//! JSDoc text: a tool's description and annotations (`@readOnly`, `@destructive`, `@upstream`,
//! the warning when there is no output schema), a field's description, default and deprecation,
//! and a named type's description. Upstream text is trimmed and cannot close its comment.

use serde_json::Value;

use super::schema::{MAX_NESTING, bounded_json};
use super::walk::MAX_TOOL_CHARS;
use crate::model::tool::ToolDefinition;

/// The JSDoc line of a type the walk could not show whole: what was wrong, and how to learn the
/// rest.
pub(super) fn cut_note() -> String {
    format!(
        "@remarks The schema nests deeper than {MAX_NESTING} levels or is too large to show as a type (over {} characters), so parts of it are `unknown` here. The hub still checks arguments against the whole schema: a call with wrong arguments is refused with the path and the rule it breaks.",
        MAX_TOOL_CHARS
    )
}

/// Defaults longer than this (as JSON) are left out of the JSDoc; they cost tokens and rarely help.
const MAX_DEFAULT_CHARS: usize = 120;

/// The tool's JSDoc; `cut` when its input's type could not be shown whole.
pub(super) fn tool_doc(tool: &ToolDefinition, has_output: bool, cut: bool) -> Vec<String> {
    let description = if tool.description.trim().is_empty() {
        tool.title.as_deref().unwrap_or_default()
    } else {
        &tool.description
    };
    let mut doc = doc_lines(description);
    if tool.annotations.is_read_only() {
        doc.push("@readOnly".into());
    }
    if tool.annotations.is_destructive() {
        doc.push("@destructive".into());
    }
    if tool.upstream_name != tool.name {
        doc.push(format!("@upstream {}", escape_doc(&tool.upstream_name)));
    }
    if cut {
        doc.push(cut_note());
    }
    if !has_output {
        doc.push(
            "@returns unknown (no output schema): inspect the result before relying on its shape."
                .into(),
        );
    }
    doc
}

pub(super) fn field_doc(schema: &Value) -> Vec<String> {
    let mut doc = schema
        .get("description")
        .and_then(Value::as_str)
        .map(doc_lines)
        .unwrap_or_default();
    // Written only up to the cap: a definition used in many places is read again at each, and
    // a default of megabytes was serialised whole every time to be left out.
    if let Some(text) = schema
        .get("default")
        .and_then(|default| bounded_json(default, MAX_DEFAULT_CHARS))
    {
        doc.push(format!("@default {}", escape_doc(&text)));
    }
    if schema.get("deprecated") == Some(&Value::Bool(true)) {
        doc.push("@deprecated".into());
    }
    doc
}

/// A description as JSDoc lines: trailing spaces and blank edges trimmed, `*/` defused.
fn doc_lines(text: &str) -> Vec<String> {
    let lines: Vec<String> = text.lines().map(|l| escape_doc(l.trim_end())).collect();
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(start), Some(end)) => lines[start..=end].to_vec(),
        _ => Vec::new(),
    }
}

/// Upstream text must not close the comment it sits in.
fn escape_doc(text: &str) -> String {
    text.replace("*/", "*\\/")
}

/// A named type's JSDoc: just the description (its default belongs to the field using it).
pub(super) fn field_doc_description(schema: &Value) -> Vec<String> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(doc_lines)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::typescript::NamespaceTypes;
    use crate::catalog::typescript::tests::{parses, tool};
    use serde_json::json;

    #[test]
    fn jsdoc_carries_descriptions_defaults_and_annotations() {
        let mut t = tool(
            "everything",
            "getSum",
            json!({"type": "object", "properties": {
                "a": {"type": "number", "description": "First number"},
                "b": {"type": "number", "description": "Second\n\nnumber */ sneaky", "default": 2, "deprecated": true},
                "c": {"type": "string", "default": "x".repeat(MAX_DEFAULT_CHARS)}
            }, "required": ["a"]}),
            None,
        );
        t.upstream_name = "get-sum".into();
        t.description = "Adds two numbers.\n".into();
        t.annotations.read_only_hint = Some(true);
        let model = NamespaceTypes::build("everything", [&t]);
        let member = model.tool_member("getSum", true).unwrap_or_default();
        assert_eq!(
            member,
            "\t/**
\t * Adds two numbers.
\t * @readOnly
\t * @upstream get-sum
\t * @returns unknown (no output schema): inspect the result before relying on its shape.
\t */
\tgetSum(input: {
\t\t/** First number */
\t\ta: number;
\t\t/**
\t\t * Second
\t\t *
\t\t * number *\\/ sneaky
\t\t * @default 2
\t\t * @deprecated
\t\t */
\t\tb?: number;
\t\tc?: string;
\t}, options?: CallOptions): Promise<unknown>;
"
        );
        let bare = model.tool_member("getSum", false).unwrap_or_default();
        assert!(!bare.contains("First number") && bare.contains("Adds two numbers."));
        parses(&model.declaration());

        let mut destroy = tool(
            "fs",
            "remove",
            json!({"type": "object"}),
            Some(json!({"type": "object"})),
        );
        destroy.annotations.destructive_hint = Some(true);
        destroy.title = Some("Remove a file".into());
        let model = NamespaceTypes::build("fs", [&destroy]);
        assert_eq!(
            model.tool_member("remove", true).as_deref(),
            Some(
                "\t/**\n\t * Remove a file\n\t * @destructive\n\t */\n\tremove(input?: {}, options?: CallOptions): Promise<fs.RemoveResult>;\n"
            )
        );
    }
}
