//! The schema walk: one [`Builder`] per namespace converts every tool's input and output JSON
//! Schema into [`Ty`]s, follows local `$ref`s, decides which objects stay inline and which become
//! named types, and hands out those names so they never collide and identical schemas share one.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::doc::{field_doc, field_doc_description};
use super::model::{Field, NamedType, Object, Ty, intersection, literal, union};
use super::names::{is_type_name, pascal, singular, usable_title};
use super::schema::{
    MAX_NESTING, contains_ref, estimated_width, has_type_info, is_bare_object, is_object_schema,
    reaches, resolve,
};

/// Objects nested this deep inside a declaration (the input, or a named interface, is depth 0)
/// become named interfaces, so signatures stay readable and each part can be described alone.
const INLINE_DEPTH: usize = 2;
/// Nested objects with more fields than this become named interfaces even when shallow.
const INLINE_FIELDS: usize = 8;
/// Nested objects whose one-line form would be longer than about this many characters become
/// named interfaces too.
const INLINE_WIDTH: usize = 120;

/// Schema-derived names share one namespace; this hands them out.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) types: Vec<NamedType>,
    by_name: HashMap<String, usize>,
    /// What each named type was built from, so identical schemas share one name.
    by_key: HashMap<String, String>,
}

/// The schema document a `$ref` resolves against, and what its references are already called.
struct Root<'s> {
    schema: &'s Value,
    /// PascalCase tool name, the prefix of fallback names for things this schema defines.
    owner: String,
    refs: HashMap<String, String>,
}

enum Claim {
    /// A type built from the same schema already has this name.
    Existing(String),
    /// A fresh name, reserved with an empty body for the caller to fill (so recursion finds it).
    New(String),
}

impl Builder {
    pub(super) fn output(&mut self, schema: &Value, owner: &str) -> Option<String> {
        // An output schema that says nothing about the shape is no better than none.
        if !has_type_info(schema) {
            return None;
        }
        let title = usable_title(schema);
        // Tools that return the same titled type share it; an untitled result is named after
        // its tool, and `readFile` returning `CreateDirectoryResult` would mislead.
        let key = match &title {
            Some(_) => format!("output:{schema}"),
            None => format!("output:{owner}:{schema}"),
        };
        let mut candidates: Vec<String> = title.into_iter().collect();
        candidates.push(format!("{owner}Result"));
        match self.claim(&candidates, key) {
            Claim::Existing(name) => Some(name),
            Claim::New(name) => {
                let mut root = Root {
                    schema,
                    owner: owner.to_string(),
                    refs: HashMap::from([("#".to_string(), name.clone())]),
                };
                let ty = self.convert(&mut root, schema, &name, 0, 0);
                self.fill(&name, ty, field_doc_description(schema));
                Some(name)
            }
        }
    }

    pub(super) fn input(&mut self, schema: &Value, owner: &str) -> Ty {
        let mut root = Root {
            schema,
            owner: owner.to_string(),
            refs: HashMap::new(),
        };
        let mut ty = self.convert(&mut root, schema, owner, 0, 0);
        // Tools without parameters often send a bare `{ "type": "object" }`: that means "no
        // arguments", not "a map of anything".
        if let Ty::Object(object) = &mut ty
            && object.fields.is_empty()
            && schema.get("additionalProperties").is_none()
            && schema.get("patternProperties").is_none()
        {
            object.index = None;
        }
        ty
    }

    fn claim(&mut self, candidates: &[String], key: String) -> Claim {
        if let Some(name) = self.by_key.get(&key) {
            return Claim::Existing(name.clone());
        }
        let free = candidates
            .iter()
            .find(|c| is_type_name(c) && !self.by_name.contains_key(c.as_str()))
            .cloned();
        let name = free.unwrap_or_else(|| {
            let base = candidates
                .last()
                .filter(|c| is_type_name(c))
                .cloned()
                .unwrap_or_else(|| "Type".to_string());
            (2..)
                .map(|n| format!("{base}{n}"))
                .find(|c| !self.by_name.contains_key(c))
                .unwrap_or(base)
        });
        self.by_name.insert(name.clone(), self.types.len());
        self.by_key.insert(key, name.clone());
        self.types.push(NamedType {
            name: name.clone(),
            doc: Vec::new(),
            ty: Ty::Unknown,
        });
        Claim::New(name)
    }

    fn fill(&mut self, name: &str, ty: Ty, doc: Vec<String>) {
        if let Some(named) = self.by_name.get(name).and_then(|&i| self.types.get_mut(i)) {
            named.ty = ty;
            named.doc = doc;
        }
    }

    /// `depth` counts enclosing objects within the current declaration; `nesting` counts every
    /// step into the schema and only bounds the recursion.
    fn convert<'s>(
        &mut self,
        root: &mut Root<'s>,
        schema: &'s Value,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        if nesting > MAX_NESTING {
            return Ty::Unknown;
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(false) => return Ty::Never,
            _ => return Ty::Unknown,
        };
        let ty = self.convert_map(root, schema, map, hint, depth, nesting);
        if map.get("nullable") == Some(&Value::Bool(true)) {
            union(vec![ty, Ty::Keyword("null")])
        } else {
            ty
        }
    }

    fn convert_map<'s>(
        &mut self,
        root: &mut Root<'s>,
        schema: &'s Value,
        map: &'s Map<String, Value>,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(root, reference, hint, depth, nesting);
        }
        if let Some(value) = map.get("const") {
            return literal(value);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return union(values.iter().map(literal).collect());
        }
        let composed = ["anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| map.get(*k).is_some_and(Value::is_array));
        let mut parts = Vec::new();
        // `{ "type": "object", "anyOf": [...] }` says nothing beyond its branches; an index
        // signature for it would only add noise to the intersection.
        if !(composed && is_bare_object(map))
            && let Some(base) = self.typed(root, schema, map, hint, depth, nesting)
        {
            parts.push(base);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                // Branches only need telling apart when more than one of them could be named.
                let objects = branches.iter().filter(|b| is_object_schema(b)).count();
                let members = branches
                    .iter()
                    .enumerate()
                    .map(|(i, branch)| {
                        let hint = if objects > 1 {
                            format!("{hint}Variant{}", i + 1)
                        } else {
                            hint.to_string()
                        };
                        self.convert(root, branch, &hint, depth, nesting + 1)
                    })
                    .collect();
                parts.push(union(members));
            }
        }
        if let Some(Value::Array(branches)) = map.get("allOf") {
            for branch in branches {
                parts.push(self.convert(root, branch, hint, depth, nesting + 1));
            }
        }
        intersection(parts)
    }

    /// The type from `type` (or implied by `properties` / `items`); `None` when the schema has
    /// neither.
    fn typed<'s>(
        &mut self,
        root: &mut Root<'s>,
        schema: &'s Value,
        map: &'s Map<String, Value>,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Option<Ty> {
        let mut kinds: Vec<&str> = match map.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if kinds.is_empty() {
            if ["properties", "additionalProperties", "patternProperties"]
                .iter()
                .any(|k| map.contains_key(*k))
            {
                kinds.push("object");
            } else if map.contains_key("items") || map.contains_key("prefixItems") {
                kinds.push("array");
            } else {
                return None;
            }
        }
        let members = kinds
            .into_iter()
            .map(|kind| match kind {
                "string" => Ty::Keyword("string"),
                "number" | "integer" => Ty::Keyword("number"),
                "boolean" => Ty::Keyword("boolean"),
                "null" => Ty::Keyword("null"),
                "object" => self.object(root, schema, map, hint, depth, nesting),
                "array" => self.array(root, map, hint, depth, nesting),
                _ => Ty::Unknown,
            })
            .collect();
        Some(union(members))
    }

    fn object<'s>(
        &mut self,
        root: &mut Root<'s>,
        schema: &'s Value,
        map: &'s Map<String, Value>,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        let fields = map
            .get("properties")
            .and_then(Value::as_object)
            .map_or(0, Map::len);
        let too_deep = depth >= INLINE_DEPTH
            || (depth > 0 && (fields > INLINE_FIELDS || estimated_width(schema, 0) > INLINE_WIDTH));
        if fields == 0 || !too_deep {
            return self.object_body(root, map, hint, depth, nesting);
        }
        let mut candidates = Vec::new();
        if let Some(title) = usable_title(schema) {
            candidates.push(title);
        }
        candidates.push(pascal(hint));
        match self.claim(&candidates, self.key("object", root, schema)) {
            Claim::Existing(name) => Ty::Named(name),
            Claim::New(name) => {
                let ty = self.object_body(root, map, &name, 0, nesting + 1);
                self.fill(&name, ty, field_doc_description(schema));
                Ty::Named(name)
            }
        }
    }

    fn object_body<'s>(
        &mut self,
        root: &mut Root<'s>,
        map: &'s Map<String, Value>,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = map.get("properties").and_then(Value::as_object);
        let mut fields: Vec<Field> = properties
            .into_iter()
            .flatten()
            .map(|(name, schema)| {
                let hint = format!("{hint}{}", pascal(name));
                Field {
                    name: name.clone(),
                    optional: !required.contains(name.as_str()),
                    ty: self.convert(root, schema, &hint, depth + 1, nesting + 1),
                    doc: field_doc(schema),
                }
            })
            .collect();
        // Required fields first; the sort is stable, so schema order holds within each group.
        fields.sort_by_key(|f| f.optional);

        let value_hint = format!("{hint}Value");
        let mut extra: Vec<Ty> = Vec::new();
        match map.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => {
                extra.push(self.convert(root, schema, &value_hint, depth + 1, nesting + 1));
            }
            Some(Value::Bool(true)) if fields.is_empty() => extra.push(Ty::Unknown),
            None if properties.is_none() => extra.push(Ty::Unknown),
            _ => {}
        }
        if let Some(patterns) = map.get("patternProperties").and_then(Value::as_object) {
            for schema in patterns.values() {
                extra.push(self.convert(root, schema, &value_hint, depth + 1, nesting + 1));
            }
        }
        let index = (!extra.is_empty()).then(|| {
            // TypeScript wants every property assignable to the index signature.
            extra.extend(fields.iter().map(|f| f.ty.clone()));
            Box::new(union(extra))
        });
        Ty::Object(Object { fields, index })
    }

    fn array<'s>(
        &mut self,
        root: &mut Root<'s>,
        map: &'s Map<String, Value>,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        // 2020-12 tuples use `prefixItems` + `items`; draft-04..2019 use an `items` array +
        // `additionalItems`.
        let (prefix, rest) = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), items) => (Some(prefix), items),
            (_, Some(Value::Array(prefix))) => (Some(prefix), map.get("additionalItems")),
            (_, items) => (None, items),
        };
        let Some(prefix) = prefix else {
            let item = rest.map_or(Ty::Unknown, |schema| {
                self.convert(root, schema, &singular(hint), depth, nesting + 1)
            });
            return Ty::Array(Box::new(item));
        };
        let items: Vec<Ty> = prefix
            .iter()
            .enumerate()
            .map(|(i, schema)| {
                let hint = format!("{hint}Item{}", i + 1);
                self.convert(root, schema, &hint, depth, nesting + 1)
            })
            .collect();
        let required = map
            .get("minItems")
            .and_then(Value::as_u64)
            .and_then(|m| usize::try_from(m).ok())
            .map_or(items.len(), |m| m.min(items.len()));
        // Without a word on extra items a tuple reads as closed; that is what schemas mean.
        let rest = match rest {
            None | Some(Value::Bool(false)) => None,
            Some(schema) => Some(Box::new(self.convert(
                root,
                schema,
                &singular(hint),
                depth,
                nesting + 1,
            ))),
        };
        Ty::Tuple {
            items,
            required,
            rest,
        }
    }

    fn reference<'s>(
        &mut self,
        root: &mut Root<'s>,
        reference: &str,
        hint: &str,
        depth: usize,
        nesting: usize,
    ) -> Ty {
        if let Some(name) = root.refs.get(reference) {
            return Ty::Named(name.clone());
        }
        let Some((target, segment)) = resolve(root.schema, reference) else {
            return Ty::Unknown;
        };
        // A definition that is no object and cannot reach itself (an enum, a string format, an
        // alias of another field) reads better inline.
        if !is_object_schema(target)
            && !reaches(root.schema, target, reference, &mut HashSet::new(), 0)
        {
            return self.convert(root, target, hint, depth, nesting + 1);
        }
        let mut candidates = Vec::new();
        if segment.is_empty() {
            candidates.extend(usable_title(target));
            candidates.push(format!("{}Input", root.owner));
        } else {
            candidates.push(pascal(&segment));
            candidates.extend(usable_title(target));
            candidates.push(format!("{}{}", root.owner, pascal(&segment)));
        }
        let key = if contains_ref(target, 0) {
            // What a definition with references means depends on the document around it.
            format!("ref:{}#{reference}", root.schema)
        } else {
            format!("ref:{target}")
        };
        match self.claim(&candidates, key) {
            Claim::Existing(name) => {
                root.refs.insert(reference.to_string(), name.clone());
                Ty::Named(name)
            }
            Claim::New(name) => {
                root.refs.insert(reference.to_string(), name.clone());
                let ty = self.convert(root, target, &name, 0, nesting + 1);
                self.fill(&name, ty, field_doc_description(target));
                Ty::Named(name)
            }
        }
    }

    fn key(&self, kind: &str, root: &Root<'_>, schema: &Value) -> String {
        if contains_ref(schema, 0) {
            format!("{kind}:{}@{schema}", root.schema)
        } else {
            format!("{kind}:{schema}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::typescript::tests::{field, input, sig};
    use serde_json::{Map, Value, json};

    #[test]
    fn primitives() {
        assert_eq!(field(json!({"type": "string"})), "string");
        assert_eq!(field(json!({"type": "integer"})), "number");
        assert_eq!(field(json!({"type": "number"})), "number");
        assert_eq!(field(json!({"type": "boolean"})), "boolean");
        assert_eq!(field(json!({"type": "null"})), "null");
        assert_eq!(
            field(json!({"type": ["string", "integer"]})),
            "string | number"
        );
    }

    #[test]
    fn missing_empty_and_malformed_schemas_are_unknown() {
        assert_eq!(field(json!({})), "unknown");
        assert_eq!(field(json!(true)), "unknown");
        assert_eq!(field(json!(false)), "never");
        assert_eq!(field(json!(42)), "unknown");
        assert_eq!(field(json!({"type": 5})), "unknown");
        assert_eq!(field(json!({"type": "uuid"})), "unknown");
        assert_eq!(field(json!({"enum": "nope", "type": "string"})), "string");
        assert_eq!(field(json!({"$ref": 7})), "unknown");
        assert_eq!(input(json!(null)), "unknown");
        assert_eq!(input(json!("garbage")), "unknown");
        assert_eq!(
            input(json!({"type": "object", "properties": "x", "required": "y"})),
            "{}"
        );
        assert_eq!(
            input(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": [1, null]})
            ),
            "{ a?: string }"
        );
    }
    #[test]
    fn arrays_and_tuples() {
        assert_eq!(field(json!({"type": "array"})), "unknown[]");
        assert_eq!(field(json!({"items": {"type": "string"}})), "string[]");
        assert_eq!(
            field(
                json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}})
            ),
            "number[][]"
        );
        assert_eq!(
            field(
                json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false})
            ),
            "[number, number]"
        );
        assert_eq!(
            field(
                json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}})
            ),
            "[string, ...number[]]"
        );
        assert_eq!(
            field(
                json!({"type": "array", "items": [{"type": "string"}, {"type": "boolean"}], "minItems": 1})
            ),
            "[string, boolean?]"
        );
        assert_eq!(
            field(
                json!({"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "null"}})
            ),
            "[string, ...null[]]"
        );
    }

    #[test]
    fn maps_and_index_signatures() {
        assert_eq!(
            field(json!({"type": "object"})),
            "{ [key: string]: unknown }"
        );
        assert_eq!(
            field(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            "{ [key: string]: string }"
        );
        assert_eq!(
            field(
                json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "additionalProperties": {"type": "string"}})
            ),
            "{ n: number; [key: string]: string | number }"
        );
        assert_eq!(
            field(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            "{}"
        );
        assert_eq!(
            field(json!({"type": "object", "patternProperties": {"^x-": {"type": "boolean"}}})),
            "{ [key: string]: unknown }"
        );
        assert_eq!(
            field(
                json!({"type": "object", "additionalProperties": false, "patternProperties": {"^x-": {"type": "boolean"}}})
            ),
            "{ [key: string]: boolean }"
        );
        // A tool without parameters takes no arguments, not a map of anything.
        assert_eq!(input(json!({"type": "object"})), "{}");
        assert_eq!(
            sig(json!({"type": "object"})),
            "t.run(input?: {}): Promise<unknown>"
        );
    }
    #[test]
    fn required_fields_come_first_in_schema_order() {
        assert_eq!(
            input(json!({"type": "object", "properties": {
                "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}, "d": {"type": "string"}
            }, "required": ["d", "b"]})),
            "{ b: string; d: string; a?: string; c?: string }"
        );
        assert!(
            sig(json!({"type": "object", "properties": {"a": {"type": "string"}}}))
                .starts_with("t.run(input?: ")
        );
        assert!(sig(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})).starts_with("t.run(input: "));
    }
    #[test]
    fn wide_nested_objects_become_named_and_titles_name_them() {
        let properties: Map<String, Value> = (0..=INLINE_FIELDS)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        let text = sig(json!({"type": "object", "properties": {
            "options": {"type": "object", "properties": properties},
            "labels": {"type": "array", "items": {"type": "object", "properties": properties}},
            "target": {"type": "object", "title": "Target", "properties": properties}
        }}));
        assert_eq!(
            text,
            "t.run(input?: { options?: RunOptions; labels?: RunOptions[]; target?: Target }): Promise<unknown>"
        );
    }
    #[test]
    fn hostile_nesting_ends_in_unknown() {
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let text = field(schema);
        assert!(
            text.starts_with("unknown[]") || text.ends_with("unknown[]"),
            "{text}"
        );
    }
}
