//! The schema walk: one [`Builder`] per namespace converts every tool's input and output JSON
//! Schema into [`Ty`]s, follows local `$ref`s, decides which objects stay inline and which become
//! named types, and hands out those names so they never collide and identical schemas share one.
//!
//! Upstream schemas are hostile input, so the walk is metered: one tool's types may cost at most
//! [`MAX_TOOL_CHARS`] (an estimate of their rendered length), and whatever is past that, or
//! nested deeper than [`MAX_NESTING`], is `unknown`. A schema whose `anyOf`s each inline the next
//! level (directly or through `$ref`s) would otherwise expand combinatorially.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::doc::{cut_note, field_doc, field_doc_description};
use super::model::{Field, NamedType, Object, Ty, intersection, literal, union};
use super::names::{is_type_name, pascal, singular, usable_title};
use super::schema::{
    MAX_NESTING, bounded_json, estimated_width, has_type_info, is_bare_object, is_object_schema,
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

/// The most one tool's types (its input, its output and the named types they build) may cost,
/// in estimated characters of TypeScript. `describe` shows at most 20,000 tokens (about 80,000
/// characters), so nothing larger could be shown whole anyway; the bound keeps the walk's time,
/// memory and output linear in it whatever the schema.
pub(super) const MAX_TOOL_CHARS: usize = 100_000;
/// What one step of the walk costs on the meter besides its names and text: about the length
/// of `; x?: string` in a rendering.
const STEP_CHARS: usize = 8;
/// The longest type name, in characters: longer titles and field paths are cut to this.
const MAX_TYPE_NAME_CHARS: usize = 64;
/// Schemas whose JSON is longer than this are not compared with others to share a name: the
/// comparison would cost more than the name saves.
const KEY_BYTES: usize = 16 * 1024;
/// A tool's whole schema up to this length keys what its references mean.
const ROOT_KEY_BYTES: usize = 1024 * 1024;

/// Schema-derived names share one namespace; this hands them out.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) types: Vec<NamedType>,
    by_name: HashMap<String, usize>,
    /// What each named type was built from, so identical schemas share one name.
    by_key: HashMap<String, String>,
    meter: Meter,
    /// Numbers the schemas too large to key, so each gets a name of its own.
    unkeyed: usize,
}

/// What is left of one tool's [`MAX_TOOL_CHARS`], and whether the walk had to leave a part out.
#[derive(Default)]
struct Meter {
    left: usize,
    cut: bool,
    /// A part was left out that no named type's JSDoc mentions yet: the innermost type around
    /// a cut says so, not every type around it.
    unreported: bool,
}

impl Meter {
    /// Takes `chars` from what is left; false (and the cut noted) when not that much is left.
    fn spend(&mut self, chars: usize) -> bool {
        match self.left.checked_sub(chars) {
            Some(left) => {
                self.left = left;
                true
            }
            None => {
                self.left = 0;
                self.note_cut();
                false
            }
        }
    }

    fn note_cut(&mut self) {
        self.cut = true;
        self.unreported = true;
    }
}

/// The schema document a `$ref` resolves against, and what its references are already called.
struct Root<'s> {
    schema: &'s Value,
    /// PascalCase tool name, the prefix of fallback names for things this schema defines.
    owner: String,
    refs: HashMap<String, String>,
    /// The whole schema's JSON (or a number of its own when it is too long), for keys of parts
    /// whose `$ref`s mean something only inside it.
    key: String,
    /// Whether each non-object definition reaches itself, asked once per reference.
    reaching: HashMap<String, bool>,
}

impl<'s> Root<'s> {
    fn new(builder: &mut Builder, schema: &'s Value, owner: &str) -> Self {
        let key = bounded_json(schema, ROOT_KEY_BYTES).unwrap_or_else(|| builder.unkeyed());
        Root {
            schema,
            owner: owner.to_string(),
            refs: HashMap::new(),
            key,
            reaching: HashMap::new(),
        }
    }
}

enum Claim {
    /// A type built from the same schema already has this name.
    Existing(String),
    /// A fresh name, reserved with an empty body for the caller to fill (so recursion finds it).
    New(String),
}

impl Builder {
    /// Starts the meter of one tool's input or output.
    fn begin(&mut self) {
        self.meter = Meter {
            left: MAX_TOOL_CHARS,
            ..Meter::default()
        };
    }

    /// Whether the walk since [`begin`](Self::begin) left a part out (too deep or too large).
    pub(super) fn was_cut(&self) -> bool {
        self.meter.cut
    }

    fn unkeyed(&mut self) -> String {
        self.unkeyed += 1;
        format!("#{}", self.unkeyed)
    }

    pub(super) fn output(&mut self, schema: &Value, owner: &str) -> Option<String> {
        self.begin();
        // An output schema that says nothing about the shape is no better than none.
        if !has_type_info(schema) {
            return None;
        }
        let title = usable_title(schema);
        let json = bounded_json(schema, ROOT_KEY_BYTES).unwrap_or_else(|| self.unkeyed());
        // Tools that return the same titled type share it; an untitled result is named after
        // its tool, and `readFile` returning `CreateDirectoryResult` would mislead.
        let key = match &title {
            Some(_) => format!("output:{json}"),
            None => format!("output:{owner}:{json}"),
        };
        let mut candidates: Vec<String> = title.into_iter().collect();
        candidates.push(format!("{owner}Result"));
        match self.claim(&candidates, key) {
            Claim::Existing(name) => Some(name),
            Claim::New(name) => {
                let mut root = Root::new(self, schema, owner);
                root.refs.insert("#".to_string(), name.clone());
                let ty = self.convert(&mut root, schema, &name, 0, 0);
                self.fill(&name, ty, field_doc_description(schema));
                Some(name)
            }
        }
    }

    pub(super) fn input(&mut self, schema: &Value, owner: &str) -> Ty {
        self.begin();
        let mut root = Root::new(self, schema, owner);
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
        // A name comes from a title or from the fields it sits under, both the upstream's to
        // choose: a 40,000-character one, repeated wherever the type is used, made a signature
        // of megabytes that the meter never saw.
        let candidates: Vec<String> = candidates
            .iter()
            .map(|c| c.chars().take(MAX_TYPE_NAME_CHARS).collect())
            .collect();
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

    /// A use of the named type `name`, paid for on the meter like the text it renders: a type
    /// used thousands of times costs its name each time.
    fn named(&mut self, name: String) -> Ty {
        if self.meter.spend(name.len()) {
            Ty::Named(name)
        } else {
            Ty::Unknown
        }
    }

    /// Gives a claimed name its type; when a part of it was left out, its JSDoc says so.
    fn fill(&mut self, name: &str, ty: Ty, mut doc: Vec<String>) {
        if std::mem::take(&mut self.meter.unreported) {
            doc.push(cut_note());
        }
        // The description is rendered too; it is paid for after the fact, since the type is
        // already built, and only shortens what the rest of the walk may show.
        let spent = doc.iter().map(String::len).sum();
        self.meter.spend(spent);
        let ty = self.without_alias_cycle(name, ty);
        if let Some(named) = self.by_name.get(name).and_then(|&i| self.types.get_mut(i)) {
            named.ty = ty;
            named.doc = doc;
        }
    }

    /// `ty`, the type of `name`, with `unknown` for each bare reference (outside any object,
    /// array or tuple) that leads back to `name` through bare references alone: a schema that
    /// is only a `$ref` to itself, or two that are each other, would render as `type B = B;`,
    /// which TypeScript refuses as a circular alias.
    fn without_alias_cycle(&self, name: &str, ty: Ty) -> Ty {
        match ty {
            Ty::Named(other) if self.alias_reaches(&other, name, &mut HashSet::new()) => {
                Ty::Unknown
            }
            Ty::Union(members) => Ty::Union(
                members
                    .into_iter()
                    .map(|member| self.without_alias_cycle(name, member))
                    .collect(),
            ),
            Ty::Intersection(members) => Ty::Intersection(
                members
                    .into_iter()
                    .map(|member| self.without_alias_cycle(name, member))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Whether the named type `from` is `to`, or reaches it through bare references.
    fn alias_reaches(&self, from: &str, to: &str, seen: &mut HashSet<String>) -> bool {
        if from == to {
            return true;
        }
        if !seen.insert(from.to_string()) {
            return false;
        }
        let Some(named) = self.by_name.get(from).and_then(|&i| self.types.get(i)) else {
            return false;
        };
        bare_names(&named.ty)
            .iter()
            .any(|next| self.alias_reaches(next, to, seen))
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
            self.meter.note_cut();
            return Ty::Unknown;
        }
        if !self.meter.spend(STEP_CHARS) {
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
            return self.literals(std::slice::from_ref(value));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return self.literals(values);
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

    /// The union of `values` as literal types, or `unknown` when they cost more than is left.
    fn literals(&mut self, values: &[Value]) -> Ty {
        let mut members = Vec::new();
        for value in values {
            let ty = literal(value);
            let chars = match &ty {
                Ty::Literal(text) => text.len(),
                _ => STEP_CHARS,
            };
            if !self.meter.spend(chars + 3) {
                return Ty::Unknown;
            }
            members.push(ty);
        }
        union(members)
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
            || (depth > 0
                && (fields > INLINE_FIELDS
                    || estimated_width(schema, 0, INLINE_WIDTH) > INLINE_WIDTH));
        if fields == 0 || !too_deep {
            return self.object_body(root, map, hint, depth, nesting);
        }
        let mut candidates = Vec::new();
        if let Some(title) = usable_title(schema) {
            candidates.push(title);
        }
        candidates.push(pascal(hint));
        let key = self.key("object", root, schema);
        match self.claim(&candidates, key) {
            Claim::Existing(name) => self.named(name),
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
        let mut fields: Vec<Field> = Vec::new();
        // Fields past the meter are not listed; the index signature below then says that the
        // object may hold more than it shows.
        let mut unlisted = false;
        for (name, schema) in properties.into_iter().flatten() {
            let doc = field_doc(schema);
            let text: usize = doc.iter().map(String::len).sum();
            if !self.meter.spend(name.len() + text) {
                unlisted = true;
                break;
            }
            let hint = format!("{hint}{}", pascal(name));
            fields.push(Field {
                name: name.clone(),
                optional: !required.contains(name.as_str()),
                ty: self.convert(root, schema, &hint, depth + 1, nesting + 1),
                doc,
            });
        }
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
            _ if unlisted => extra.push(Ty::Unknown),
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
            return self.named(name.clone());
        }
        let Some((target, segment)) = resolve(root.schema, reference) else {
            return Ty::Unknown;
        };
        // A definition that is no object and cannot reach itself (an enum, a string format, an
        // alias of another field) reads better inline. Inlining is paid for on the meter like
        // any other step, so definitions whose `anyOf`s each inline the next cannot multiply.
        if !is_object_schema(target) && !self.reaches_itself(root, target, reference) {
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
        let key = match bounded_json(target, KEY_BYTES) {
            Some(json) if !json.contains("\"$ref\"") => format!("ref:{json}"),
            // What a definition with references means depends on the document around it.
            _ => format!("ref:{}#{reference}", root.key),
        };
        match self.claim(&candidates, key) {
            Claim::Existing(name) => {
                root.refs.insert(reference.to_string(), name.clone());
                self.named(name)
            }
            Claim::New(name) => {
                root.refs.insert(reference.to_string(), name.clone());
                let ty = self.convert(root, target, &name, 0, nesting + 1);
                self.fill(&name, ty, field_doc_description(target));
                Ty::Named(name)
            }
        }
    }

    /// Whether `target`, what `reference` names, leads back to it; asked once per reference,
    /// since the answer needs a walk of the whole document.
    fn reaches_itself(&mut self, root: &mut Root<'_>, target: &Value, reference: &str) -> bool {
        if let Some(&known) = root.reaching.get(reference) {
            return known;
        }
        let mut visits = MAX_TOOL_CHARS / STEP_CHARS;
        let answer = reaches(
            root.schema,
            target,
            reference,
            &mut HashSet::new(),
            0,
            &mut visits,
        );
        root.reaching.insert(reference.to_string(), answer);
        answer
    }

    /// What identifies `schema` for sharing a name: its JSON, with the whole document's when
    /// its references make it mean something only there; a schema too long to compare gets a
    /// key of its own.
    fn key(&mut self, kind: &str, root: &Root<'_>, schema: &Value) -> String {
        match bounded_json(schema, KEY_BYTES) {
            Some(json) if json.contains("\"$ref\"") => format!("{kind}:{}@{json}", root.key),
            Some(json) => format!("{kind}:{json}"),
            None => format!("{kind}:{}", self.unkeyed()),
        }
    }
}

/// The named types `ty` is made of bare: itself, or the members of its unions and intersections.
fn bare_names(ty: &Ty) -> Vec<&str> {
    match ty {
        Ty::Named(name) => vec![name.as_str()],
        Ty::Union(members) | Ty::Intersection(members) => {
            members.iter().flat_map(bare_names).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::typescript::NamespaceTypes;
    use crate::catalog::typescript::tests::{field, input, sig};
    use serde_json::{Map, Value, json};

    #[test]
    fn a_definition_that_is_only_itself_or_its_partners_alias_is_unknown() {
        let tools = [crate::catalog::typescript::tests::tool(
            "t",
            "run",
            json!({
                "type": "object",
                "properties": {
                    "b": {"$ref": "#/$defs/B"},
                    "c": {"$ref": "#/$defs/C"},
                    "list": {"$ref": "#/$defs/List"}
                },
                "$defs": {
                    "B": {"$ref": "#/$defs/B"},
                    "C": {"anyOf": [{"$ref": "#/$defs/D"}, {"type": "string"}]},
                    "D": {"$ref": "#/$defs/C"},
                    "List": {"type": "array", "items": {"$ref": "#/$defs/List"}}
                }
            }),
            None,
        )];
        let declaration = super::super::NamespaceTypes::build("t", &tools).declaration();
        for circular in ["type B = B;", "type D = C;\n\ttype C = D", "C = D | string"] {
            assert!(!declaration.contains(circular), "{declaration}");
        }
        assert!(declaration.contains("type B = unknown;"), "{declaration}");
        // Recursion through an array is a type TypeScript takes: it stays.
        assert!(declaration.contains("type List = List[];"), "{declaration}");
    }

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
    /// `levels` of `anyOf`, each branch holding the next level: inline (shared in memory but
    /// 3^levels large as a tree), or through `$defs` (small, but as large once inlined).
    fn branching(levels: usize, by_ref: bool) -> Value {
        if by_ref {
            let mut defs = Map::new();
            for i in 0..levels {
                let next = json!({"$ref": format!("#/$defs/L{}", i + 1)});
                defs.insert(
                    format!("L{i}"),
                    json!({"anyOf": [next, {"type": "array", "items": next}, {"type": "null"}]}),
                );
            }
            defs.insert(format!("L{levels}"), json!({"type": "string"}));
            return json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/L0"}}, "$defs": defs});
        }
        let mut level = json!({"type": "string"});
        for _ in 0..levels {
            level = json!({"anyOf": [
                {"type": "object", "properties": {"a": level, "b": {"type": "number"}}},
                {"type": "array", "items": level},
                {"type": "object", "properties": {"c": level}, "additionalProperties": {"type": "string"}}
            ]});
        }
        json!({"type": "object", "properties": {"v": level}})
    }

    #[test]
    fn branching_schemas_render_within_the_meter_and_say_so() {
        let cases = [
            ("inline", branching(9, false)),
            ("ref", branching(16, true)),
        ];
        for (shape, schema) in cases {
            let tools = [crate::catalog::typescript::tests::tool(
                "t", "run", schema, None,
            )];
            let model = NamespaceTypes::build("t", &tools);
            let declaration = model.declaration();
            assert!(
                declaration.len() < 2 * MAX_TOOL_CHARS,
                "{shape}: {} characters",
                declaration.len()
            );
            // Inline copies share named types, so only the `$ref` shape needs cutting.
            assert!(
                shape == "inline" || declaration.contains("too large to show"),
                "{shape}: no note"
            );
            let signature = model.signature("run").unwrap_or_default();
            assert!(
                signature.len() < 2 * MAX_TOOL_CHARS,
                "{shape}: {}",
                signature.len()
            );
            crate::catalog::typescript::tests::parses(&declaration);
        }
    }

    #[test]
    fn long_type_names_are_cut_and_every_use_is_paid_for() {
        // A nine-field object under a 40,000-character property becomes a named type named
        // after it; 4,600 siblings of the same shape use that name.
        let shape = json!({
            "type": "object",
            "properties": (1..=9).map(|i| (format!("f{i}"), json!({"type": "string"}))).collect::<Map<String, Value>>(),
        });
        let mut properties = Map::new();
        properties.insert("a".repeat(40_000), shape.clone());
        for i in 0..4_600 {
            properties.insert(format!("a{i}"), shape.clone());
        }
        let schema = json!({"type": "object", "properties": properties});
        let tools = [crate::catalog::typescript::tests::tool(
            "t", "run", schema, None,
        )];
        let model = NamespaceTypes::build("t", &tools);
        let signature = model.signature("run").unwrap_or_default();
        assert!(
            signature.len() < 2 * MAX_TOOL_CHARS,
            "{} characters",
            signature.len()
        );
        let declaration = model.declaration();
        assert!(
            declaration.len() < 3 * MAX_TOOL_CHARS,
            "{} characters",
            declaration.len()
        );
        // The type is named `RunAaa…` after the field; the field keeps its whole name.
        assert!(
            declaration.contains("RunAaa")
                && !declaration.contains(&format!("A{}", "a".repeat(MAX_TYPE_NAME_CHARS))),
            "a type name longer than {MAX_TYPE_NAME_CHARS} characters"
        );
        crate::catalog::typescript::tests::parses(&declaration);
    }

    #[test]
    fn small_schemas_are_not_cut() {
        let tools = [crate::catalog::typescript::tests::tool(
            "t",
            "run",
            branching(3, true),
            None,
        )];
        let declaration = NamespaceTypes::build("t", &tools).declaration();
        assert!(!declaration.contains("too large to show"), "{declaration}");
    }

    #[test]
    fn deep_objects_end_in_unknown_without_overflowing_the_stack() {
        for levels in [100, 10_000] {
            let mut schema = json!({"type": "string"});
            for _ in 0..levels {
                // Not `json!` around `schema`: it copies it with `to_value`, which recurses.
                let mut level = json!({"type": "object", "properties": {}, "required": ["a"]});
                level["properties"]["a"] = schema;
                schema = level;
            }
            let tools = [crate::catalog::typescript::tests::tool(
                "t", "run", schema, None,
            )];
            let model = NamespaceTypes::build("t", &tools);
            let declaration = model.declaration();
            assert!(declaration.contains("unknown"), "{levels}");
            assert!(
                declaration.contains("nests deeper than"),
                "{levels}: no note"
            );
            assert!(declaration.len() < 2 * MAX_TOOL_CHARS, "{levels}");
            crate::catalog::typescript::tests::parses(&declaration);
            let [tool] = tools;
            crate::model::json_size::dismantle(tool.input_schema);
        }
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
