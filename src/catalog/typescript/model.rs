//! The type model: a TypeScript type before it is rendered ([`Ty`]), the objects and named
//! types it is built from, one tool's types ([`ToolTypes`]), and the algebra that keeps types
//! small as the walk builds them: literals from JSON values, flattened unions, merged
//! intersections, and the named types a type mentions.

use std::collections::HashSet;

use serde_json::Value;

/// The most members other than literals a union keeps; past it the union is `unknown`.
const MAX_UNION_SHAPES: usize = 256;

/// A TypeScript type, before rendering.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ty {
    Unknown,
    Never,
    /// `string`, `number`, `boolean`, `null`.
    Keyword(&'static str),
    /// A literal type, already in TypeScript syntax (`"open"`, `42`, `true`).
    Literal(String),
    Array(Box<Ty>),
    Tuple {
        items: Vec<Ty>,
        /// Elements from this index on are optional.
        required: usize,
        rest: Option<Box<Ty>>,
    },
    Object(Object),
    Union(Vec<Ty>),
    Intersection(Vec<Ty>),
    /// A named type of the same namespace.
    Named(String),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Object {
    pub(super) fields: Vec<Field>,
    pub(super) index: Option<Box<Ty>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    pub(super) name: String,
    pub(super) optional: bool,
    pub(super) ty: Ty,
    pub(super) doc: Vec<String>,
}

/// A type with a name of its own in the namespace.
#[derive(Debug, Clone)]
pub(super) struct NamedType {
    pub(super) name: String,
    pub(super) doc: Vec<String>,
    pub(super) ty: Ty,
}

/// One tool's types, ready to render.
#[derive(Debug, Clone)]
pub(super) struct ToolTypes {
    pub(super) name: String,
    pub(super) doc: Vec<String>,
    pub(super) input: Ty,
    /// True when every input field is optional, so a script may call the tool without arguments.
    pub(super) input_optional: bool,
    /// The named return type, if the tool has a usable output schema.
    pub(super) output: Option<String>,
}

/// A JSON value as a literal type. Arrays and objects have no literal form and widen.
pub(super) fn literal(value: &Value) -> Ty {
    match value {
        Value::Null => Ty::Keyword("null"),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => Ty::Literal(value.to_string()),
        Value::Array(_) => Ty::Array(Box::new(Ty::Unknown)),
        Value::Object(_) => Ty::Object(Object {
            fields: Vec::new(),
            index: Some(Box::new(Ty::Unknown)),
        }),
    }
}

/// A union, flattened and without repeats; `unknown` swallows it (and it turns `unknown` past
/// [`MAX_UNION_SHAPES`] members other than literals), `never` vanishes from it.
pub(super) fn union(members: Vec<Ty>) -> Ty {
    let mut out: Vec<Ty> = Vec::new();
    // Literals, the members an enum brings by the thousand, are told apart by their text in a
    // set: comparing each with every member before it made a union of 13,000 literals, flattened
    // again at each of 64 levels, cost billions of comparisons.
    let mut literals: HashSet<String> = HashSet::new();
    for member in members {
        let flat = match member {
            Ty::Union(inner) => inner,
            Ty::Unknown => return Ty::Unknown,
            Ty::Never => continue,
            other => vec![other],
        };
        for ty in flat {
            let new = match &ty {
                Ty::Literal(text) => literals.insert(text.clone()),
                other => !out.contains(other),
            };
            if new {
                out.push(ty);
            }
        }
        // Other members are compared one by one, so their number is bounded: a union of more
        // shapes than this says nothing a reader could use.
        if out.len() - literals.len() > MAX_UNION_SHAPES {
            return Ty::Unknown;
        }
    }
    match out.len() {
        0 => Ty::Never,
        1 => out.pop().unwrap_or(Ty::Never),
        _ => Ty::Union(out),
    }
}

/// An intersection; `unknown` parts vanish, and plain objects merge into one so `allOf` of
/// objects reads as a single object.
pub(super) fn intersection(members: Vec<Ty>) -> Ty {
    let mut out: Vec<Ty> = Vec::new();
    for member in members {
        match member {
            Ty::Unknown => {}
            Ty::Never => return Ty::Never,
            Ty::Intersection(inner) => out.extend(inner),
            other => {
                if !out.contains(&other) {
                    out.push(other);
                }
            }
        }
    }
    let all_plain_objects = out.len() > 1
        && out
            .iter()
            .all(|t| matches!(t, Ty::Object(o) if o.index.is_none()));
    if all_plain_objects {
        let mut merged = Object::default();
        for ty in out {
            let Ty::Object(object) = ty else { continue };
            for field in object.fields {
                match merged.fields.iter_mut().find(|f| f.name == field.name) {
                    Some(existing) => {
                        existing.optional &= field.optional;
                        existing.ty = intersection(vec![existing.ty.clone(), field.ty]);
                        if existing.doc.is_empty() {
                            existing.doc = field.doc;
                        }
                    }
                    None => merged.fields.push(field),
                }
            }
        }
        merged.fields.sort_by_key(|f| f.optional);
        return Ty::Object(merged);
    }
    match out.len() {
        0 => Ty::Unknown,
        1 => out.pop().unwrap_or(Ty::Unknown),
        _ => Ty::Intersection(out),
    }
}

pub(super) fn collect_refs<'t>(ty: &'t Ty, out: &mut Vec<&'t str>) {
    match ty {
        Ty::Named(name) => push_unique(out, name),
        Ty::Array(inner) => collect_refs(inner, out),
        Ty::Tuple { items, rest, .. } => {
            items.iter().for_each(|t| collect_refs(t, out));
            if let Some(rest) = rest {
                collect_refs(rest, out);
            }
        }
        Ty::Object(object) => {
            object.fields.iter().for_each(|f| collect_refs(&f.ty, out));
            if let Some(index) = &object.index {
                collect_refs(index, out);
            }
        }
        Ty::Union(members) | Ty::Intersection(members) => {
            members.iter().for_each(|t| collect_refs(t, out));
        }
        Ty::Unknown | Ty::Never | Ty::Keyword(_) | Ty::Literal(_) => {}
    }
}

pub(super) fn push_unique<'t>(out: &mut Vec<&'t str>, name: &'t str) {
    if !out.contains(&name) {
        out.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::typescript::tests::{field, input};
    use serde_json::json;

    #[test]
    fn enums_and_consts_are_literal_unions() {
        assert_eq!(
            field(json!({"type": "string", "enum": ["open", "closed"]})),
            r#""open" | "closed""#
        );
        assert_eq!(
            field(json!({"enum": [1, 2.5, -3, true, null]})),
            "1 | 2.5 | -3 | true | null"
        );
        assert_eq!(field(json!({"enum": ["a", "a"]})), r#""a""#);
        assert_eq!(field(json!({"const": "fixed"})), r#""fixed""#);
        assert_eq!(
            field(json!({"enum": [[1], {"a": 1}]})),
            "unknown[] | { [key: string]: unknown }"
        );
        assert_eq!(field(json!({"enum": ["say \"hi\""]})), r#""say \"hi\"""#);
    }

    #[test]
    fn unions_of_many_members_stay_cheap_and_bounded() {
        // Thousands of literals, flattened into a union again and again, keep each once.
        let literals: Vec<Ty> = (0..13_000).map(|i| Ty::Literal(i.to_string())).collect();
        let mut ty = union(literals.clone());
        for _ in 0..64 {
            ty = union(vec![ty, Ty::Keyword("null")]);
        }
        match &ty {
            Ty::Union(members) => assert_eq!(members.len(), 13_001),
            other => panic!("{other:?}"),
        }
        // Shapes beyond the bound say nothing a reader could use.
        let shapes: Vec<Ty> = (0..=MAX_UNION_SHAPES)
            .map(|i| Ty::Array(Box::new(Ty::Literal(i.to_string()))))
            .collect();
        assert_eq!(
            union(shapes[..MAX_UNION_SHAPES].to_vec()),
            Ty::Union(shapes[..MAX_UNION_SHAPES].to_vec())
        );
        assert_eq!(union(shapes), Ty::Unknown);
    }

    #[test]
    fn unions_and_intersections() {
        assert_eq!(
            field(json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
            "string | number"
        );
        assert_eq!(
            field(json!({"anyOf": [{"type": "string"}, {"type": "null"}], "default": null})),
            "string | null"
        );
        // A branch that only adds constraints cannot narrow the type: the base stays.
        assert_eq!(
            input(json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "anyOf": [{"required": ["a"]}, {"required": ["b"]}]
            })),
            "{ a?: string; b?: string }"
        );
        // allOf of plain objects merges into one object.
        assert_eq!(
            field(json!({"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "number"}, "a": {"type": "string"}}}
            ]})),
            "{ a: string; b?: number }"
        );
        assert_eq!(
            field(json!({"allOf": [{"type": "string"}, {"minLength": 1}]})),
            "string"
        );
        assert_eq!(
            field(json!({"type": "object", "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}
            ]})),
            r#"{ kind: "a" } | { kind: "b" }"#
        );
        assert_eq!(
            field(
                json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}})
            ),
            "(string | number)[]"
        );
        assert_eq!(field(json!({"anyOf": [{"type": "string"}, {}]})), "unknown");
    }

    #[test]
    fn nullable() {
        assert_eq!(field(json!({"type": ["string", "null"]})), "string | null");
        assert_eq!(
            field(json!({"type": "string", "nullable": true})),
            "string | null"
        );
        assert_eq!(
            field(json!({"type": "array", "items": {"type": "integer", "nullable": true}})),
            "(number | null)[]"
        );
        assert_eq!(
            field(json!({"enum": ["a", "b"], "nullable": true})),
            r#""a" | "b" | null"#
        );
    }
}
