//! Rendering: [`Ty`] → TypeScript text. One-line for the signatures `search` shows, tab-indented
//! multi-line with the fields' JSDoc for `describe`; named types become an `interface` (objects)
//! or a `type` alias (everything else). Property names that are not identifiers get quoted.

use std::fmt::Write as _;

use serde_json::Value;

use super::model::{NamedType, Object, Ty};
use super::names::is_identifier;

pub(super) fn render_named(named: &NamedType, docs: bool) -> String {
    // Inside `declare namespace <ns>` the namespace's own names need no qualifier.
    let style = Style {
        qualify: None,
        multiline: true,
        docs,
    };
    let mut out = String::new();
    write_doc(&mut out, &named.doc, 1);
    if let Ty::Object(_) = named.ty {
        let _ = write!(out, "\tinterface {} ", named.name);
        write_ty(&mut out, &named.ty, style, 1);
        out.push('\n');
    } else {
        let _ = write!(out, "\ttype {} = ", named.name);
        write_ty(&mut out, &named.ty, style, 1);
        out.push_str(";\n");
    }
    out
}

#[derive(Clone, Copy)]
pub(super) struct Style<'a> {
    /// Prefix for named types (`github.`) outside their `declare namespace` block.
    pub(super) qualify: Option<&'a str>,
    pub(super) multiline: bool,
    /// Whether fields carry their JSDoc (multi-line only).
    pub(super) docs: bool,
}

pub(super) fn write_ty(out: &mut String, ty: &Ty, style: Style<'_>, indent: usize) {
    match ty {
        Ty::Unknown => out.push_str("unknown"),
        Ty::Never => out.push_str("never"),
        Ty::Keyword(keyword) => out.push_str(keyword),
        Ty::Literal(text) => out.push_str(text),
        Ty::Named(name) => {
            if let Some(namespace) = style.qualify {
                out.push_str(namespace);
                out.push('.');
            }
            out.push_str(name);
        }
        Ty::Array(inner) => {
            write_element(out, inner, style, indent);
            out.push_str("[]");
        }
        Ty::Tuple {
            items,
            required,
            rest,
        } => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_ty(out, item, style, indent);
                if i >= *required {
                    out.push('?');
                }
            }
            if let Some(rest) = rest {
                if !items.is_empty() {
                    out.push_str(", ");
                }
                out.push_str("...");
                write_element(out, rest, style, indent);
                out.push_str("[]");
            }
            out.push(']');
        }
        Ty::Union(members) => {
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                let parens = matches!(member, Ty::Intersection(_));
                write_wrapped(out, member, style, indent, parens);
            }
        }
        Ty::Intersection(members) => {
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(" & ");
                }
                let parens = matches!(member, Ty::Union(_));
                write_wrapped(out, member, style, indent, parens);
            }
        }
        Ty::Object(object) => write_object(out, object, style, indent),
    }
}

/// An array element: unions and intersections need parentheses before `[]`.
fn write_element(out: &mut String, ty: &Ty, style: Style<'_>, indent: usize) {
    let parens = matches!(ty, Ty::Union(_) | Ty::Intersection(_));
    write_wrapped(out, ty, style, indent, parens);
}

fn write_wrapped(out: &mut String, ty: &Ty, style: Style<'_>, indent: usize, parens: bool) {
    if parens {
        out.push('(');
    }
    write_ty(out, ty, style, indent);
    if parens {
        out.push(')');
    }
}

fn write_object(out: &mut String, object: &Object, style: Style<'_>, indent: usize) {
    if object.fields.is_empty() && object.index.is_none() {
        out.push_str("{}");
        return;
    }
    if !style.multiline {
        out.push_str("{ ");
        let mut first = true;
        for field in &object.fields {
            if !first {
                out.push_str("; ");
            }
            first = false;
            write_property_name(out, &field.name);
            out.push_str(if field.optional { "?: " } else { ": " });
            write_ty(out, &field.ty, style, indent);
        }
        if let Some(index) = &object.index {
            if !first {
                out.push_str("; ");
            }
            out.push_str("[key: string]: ");
            write_ty(out, index, style, indent);
        }
        out.push_str(" }");
        return;
    }
    out.push_str("{\n");
    let inner = indent + 1;
    for field in &object.fields {
        if style.docs {
            write_doc(out, &field.doc, inner);
        }
        push_tabs(out, inner);
        write_property_name(out, &field.name);
        out.push_str(if field.optional { "?: " } else { ": " });
        write_ty(out, &field.ty, style, inner);
        out.push_str(";\n");
    }
    if let Some(index) = &object.index {
        push_tabs(out, inner);
        out.push_str("[key: string]: ");
        write_ty(out, index, style, inner);
        out.push_str(";\n");
    }
    push_tabs(out, indent);
    out.push('}');
}

fn write_property_name(out: &mut String, name: &str) {
    if is_identifier(name) {
        out.push_str(name);
    } else {
        out.push_str(&Value::String(name.to_string()).to_string());
    }
}

pub(super) fn write_doc(out: &mut String, lines: &[String], indent: usize) {
    match lines {
        [] => {}
        [line] => {
            push_tabs(out, indent);
            let _ = writeln!(out, "/** {line} */");
        }
        lines => {
            push_tabs(out, indent);
            out.push_str("/**\n");
            for line in lines {
                push_tabs(out, indent);
                if line.is_empty() {
                    out.push_str(" *\n");
                } else {
                    let _ = writeln!(out, " * {line}");
                }
            }
            push_tabs(out, indent);
            out.push_str(" */\n");
        }
    }
}

fn push_tabs(out: &mut String, count: usize) {
    out.extend(std::iter::repeat_n('\t', count));
}

#[cfg(test)]
mod tests {
    use crate::catalog::typescript::tests::input;
    use serde_json::json;

    #[test]
    fn property_names_that_need_quotes() {
        assert_eq!(
            input(json!({"type": "object", "properties": {
                "plain": {"type": "string"},
                "with-dash": {"type": "string"},
                "1st": {"type": "string"},
                "$ok_1": {"type": "string"},
                "default": {"type": "string"},
                "naïve": {"type": "string"},
                "quote\"d": {"type": "string"}
            }})),
            r#"{ plain?: string; "with-dash"?: string; "1st"?: string; $ok_1?: string; default?: string; "naïve"?: string; "quote\"d"?: string }"#
        );
    }
}
