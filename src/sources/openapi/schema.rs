//! OpenAPI schema objects → self-contained JSON Schema (2020-12) for a tool's input or output:
//! `#/components/schemas/NAME` references become `#/$defs/NAME` with the component (and every
//! component it reaches) copied into `$defs`, so the catalogue's TypeScript generator names the
//! types after the document's components and the call-time validator can resolve every
//! reference. Other local references are inlined, with a guard against cycles. OpenAPI 3.0's
//! dialect is translated: `nullable: true` adds `null` to the type, boolean
//! `exclusiveMinimum`/`exclusiveMaximum` become numbers.
//!
//! Each schema is converted within a budget: a document whose references fan out (eight
//! properties each referring to the next of twelve schemas is 8^12 copies) or that nests past
//! what the catalogue can store has its excess replaced by `{}`, which accepts anything there
//! (the API still checks what it is sent).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::spec::{Document, SpecError, Version, escape};

const COMPONENTS: &str = "#/components/schemas/";
/// How deep non-component references are inlined inside each other before the rest is left
/// untyped: a guard against a cycle through `#/paths/…` or `#/components/parameters/…`.
const MAX_INLINE_DEPTH: usize = 16;
/// How many schema objects one converted schema (a tool's input or output, or a component)
/// may hold: far more than any real one, far fewer than a reference bomb makes.
const MAX_NODES: usize = 20_000;
/// How deep schema objects nest inside each other (each level is one or two levels of JSON)
/// before the rest is `{}`: the catalogue is stored and read as JSON, which nests at most 128.
const MAX_NESTING: usize = 48;
/// How many schema objects the document's tools may hold in copies of components, all
/// together: each tool carries every component it reaches, so a large component behind
/// thousands of operations is copied thousands of times. Counted by [`weight`]: real documents
/// stay far below (GitHub's 1,223 operations copy about 300,000); past it, a component is
/// attached as `{}`.
const MAX_COPIED_NODES: usize = 1_000_000;
/// How many schema objects converting the whole document may walk, all schemas together: each
/// schema has [`MAX_NODES`], but a document of many operations whose schemas inline the same
/// large non-component reference would otherwise pay that many times over (50 such operations
/// took 3.5 GB and a minute). What a node carries besides subschemas (a long `enum`, `default`
/// or `description`) counts by its [`weight`]. Real documents walk far less (GitHub's 1,223
/// operations weigh about 54,000, each component walked once); past it, the rest is `{}`.
const MAX_WALKED_NODES: usize = 250_000;

/// Converts schemas of one document, each component once.
pub(crate) struct Schemas<'d> {
    document: &'d Document,
    /// Converted components, each once.
    components: HashMap<String, Component>,
    /// Schema objects the schema being converted may still hold ([`MAX_NODES`]).
    nodes_left: usize,
    /// Schema objects the walk is inside of now ([`MAX_NESTING`]).
    nesting: usize,
    /// Schema objects the tools may still hold in copies of components
    /// ([`MAX_COPIED_NODES`]).
    copies_left: usize,
    /// Schema objects the document's conversions may still walk ([`MAX_WALKED_NODES`]).
    walks_left: usize,
}

/// One converted component: its schema, the components it refers to directly, and how many
/// schema objects a copy of it holds ([`MAX_COPIED_NODES`]).
struct Component {
    schema: Value,
    refs: BTreeSet<String>,
    size: usize,
}

/// One converted schema and the components it refers to directly.
#[derive(Debug)]
pub(crate) struct Converted {
    pub(crate) schema: Value,
    pub(crate) refs: BTreeSet<String>,
}

impl<'d> Schemas<'d> {
    pub(crate) fn new(document: &'d Document) -> Self {
        Schemas {
            document,
            components: HashMap::new(),
            nodes_left: MAX_NODES,
            nesting: 0,
            copies_left: MAX_COPIED_NODES,
            walks_left: MAX_WALKED_NODES,
        }
    }

    /// `schema` (found at `pointer`) in JSON Schema, its components not yet attached.
    pub(crate) fn convert(
        &mut self,
        schema: &Value,
        pointer: &str,
    ) -> Result<Converted, SpecError> {
        let mut refs = BTreeSet::new();
        self.begin();
        let schema = self.walk(schema, pointer, &mut refs, 0)?;
        Ok(Converted { schema, refs })
    }

    /// Attaches every component `refs` reaches as `$defs` of `schema` (an object schema at the
    /// root of a tool's input or output); once the document's copies are spent, as `{}`.
    pub(crate) fn attach(
        &mut self,
        schema: &mut Value,
        refs: &BTreeSet<String>,
    ) -> Result<(), SpecError> {
        let mut defs = BTreeMap::new();
        let mut queue: Vec<String> = refs.iter().cloned().collect();
        while let Some(name) = queue.pop() {
            if defs.contains_key(&name) {
                continue;
            }
            let left = self.copies_left;
            let component = self.component(&name)?;
            if component.size > left {
                defs.insert(name, json!({}));
                continue;
            }
            let (copy, size) = (component.schema.clone(), component.size);
            queue.extend(
                component
                    .refs
                    .iter()
                    .filter(|n| !defs.contains_key(*n))
                    .cloned(),
            );
            self.copies_left -= size;
            defs.insert(name, copy);
        }
        if defs.is_empty() {
            return Ok(());
        }
        if let Value::Object(map) = schema {
            map.insert("$defs".into(), Value::Object(defs.into_iter().collect()));
        }
        Ok(())
    }

    fn component(&mut self, name: &str) -> Result<&Component, SpecError> {
        if self.components.contains_key(name) {
            return Ok(&self.components[name]);
        }
        let pointer = format!("/components/schemas/{}", escape(name));
        let Some(raw) = self.document.root.pointer(&pointer) else {
            return Err(self.document.error(
                "/components/schemas",
                format!("a `$ref` names the schema `{name}`, which is not in components.schemas"),
            ));
        };
        // Placed before the walk, so a component that refers to itself finds itself done.
        let placeholder = Component {
            schema: Value::Bool(true),
            refs: BTreeSet::new(),
            size: 0,
        };
        self.components.insert(name.to_string(), placeholder);
        let mut refs = BTreeSet::new();
        self.begin();
        let schema = self.walk(raw, &pointer, &mut refs, 0)?;
        let size = weight(&schema);
        let done = Component { schema, refs, size };
        Ok(self
            .components
            .entry(name.to_string())
            .insert_entry(done)
            .into_mut())
    }

    /// A fresh budget for the next schema converted.
    fn begin(&mut self) {
        self.nodes_left = MAX_NODES;
        self.nesting = 0;
    }

    /// `schema` converted, or `{}` once the budget of the schema being converted is spent.
    fn walk(
        &mut self,
        schema: &Value,
        pointer: &str,
        refs: &mut BTreeSet<String>,
        depth: usize,
    ) -> Result<Value, SpecError> {
        if self.nodes_left == 0 || self.walks_left == 0 || self.nesting >= MAX_NESTING {
            return Ok(json!({}));
        }
        self.nodes_left -= 1;
        self.walks_left -= 1;
        self.nesting += 1;
        let converted = self.walk_within(schema, pointer, refs, depth);
        self.nesting -= 1;
        converted
    }

    fn walk_within(
        &mut self,
        schema: &Value,
        pointer: &str,
        refs: &mut BTreeSet<String>,
        depth: usize,
    ) -> Result<Value, SpecError> {
        let Value::Object(map) = schema else {
            // `true`, `false`, or something malformed that the generator renders as `unknown`.
            return Ok(schema.clone());
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            // Said where the reference is written, not where its target is missing.
            let Some(target) = self.document.resolve(reference) else {
                return Err(self.document.error(
                    &format!("{pointer}/$ref"),
                    format!("`$ref: {reference}` points at nothing in this document; capabilities resolves references within the document only"),
                ));
            };
            if let Some(name) = reference.strip_prefix(COMPONENTS) {
                let name = percent_encoding::percent_decode_str(name)
                    .decode_utf8_lossy()
                    .replace("~1", "/")
                    .replace("~0", "~");
                refs.insert(name.clone());
                let mut out = map.clone();
                out.insert(
                    "$ref".into(),
                    Value::String(format!("#/$defs/{}", escape(&name))),
                );
                return Ok(Value::Object(out));
            }
            if depth >= MAX_INLINE_DEPTH {
                return Ok(json!({}));
            }
            let target = target.clone();
            let inner = reference.trim_start_matches('#').to_string();
            return self.walk(&target, &inner, refs, depth + 1);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape(key));
            let converted = match key.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => match value {
                    Value::Object(members) => {
                        let mut converted = Map::new();
                        for (name, member) in members {
                            let inner = format!("{here}/{}", escape(name));
                            converted.insert(name.clone(), self.walk(member, &inner, refs, depth)?);
                        }
                        Value::Object(converted)
                    }
                    other => other.clone(),
                },
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => match value {
                    Value::Array(items) => Value::Array(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, item)| self.walk(item, &format!("{here}/{i}"), refs, depth))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other.clone(),
                },
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "additionalItems" => match value {
                    // 3.0 allowed an array of `items`; 2020-12 calls that `prefixItems`.
                    Value::Array(items) if key == "items" => {
                        out.insert(
                            "prefixItems".into(),
                            Value::Array(
                                items
                                    .iter()
                                    .enumerate()
                                    .map(|(i, item)| {
                                        self.walk(item, &format!("{here}/{i}"), refs, depth)
                                    })
                                    .collect::<Result<_, _>>()?,
                            ),
                        );
                        continue;
                    }
                    other => self.walk(other, &here, refs, depth)?,
                },
                // Vendor extensions and OpenAPI-only annotations say nothing JSON Schema reads.
                key if key.starts_with("x-") => continue,
                "discriminator" | "xml" | "externalDocs" => continue,
                // What would reach outside the document (a remote `$dynamicRef`, a `$schema` the
                // validator would fetch) or move the base its `#/$defs/…` resolve against
                // (`$id`): left out, so that the schema still compiles and arguments are
                // checked; references within the document were resolved above.
                "$id" | "$schema" | "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef"
                | "$recursiveAnchor" => continue,
                // An `enum` of 20,000 values or a 2 MB `description` costs what it weighs: one
                // such node behind every operation would otherwise be copied at the price of one.
                _ => {
                    let cost = weight(value);
                    if cost > self.walks_left {
                        self.walks_left = 0;
                        continue;
                    }
                    self.walks_left -= cost;
                    value.clone()
                }
            };
            out.insert(key.clone(), converted);
        }
        if self.document.version == Version::V30 {
            translate_30(&mut out);
        }
        Ok(Value::Object(out))
    }
}

/// What copying `value` costs against the document's budgets, counted in schema objects: one
/// per JSON value in it, and one per 64 bytes of text, so a long `enum`, `default` or
/// `description` weighs what it holds.
fn weight(value: &Value) -> usize {
    match value {
        Value::String(text) => 1 + text.len() / 64,
        Value::Array(items) => 1 + items.iter().map(weight).sum::<usize>(),
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(key, value)| key.len() / 64 + weight(value))
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// OpenAPI 3.0's schema dialect → JSON Schema 2020-12, in place.
fn translate_30(schema: &mut Map<String, Value>) {
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        let kind = schema
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string);
        match kind {
            Some(kind) => {
                schema.insert("type".into(), json!([kind, "null"]));
                schema.remove("nullable");
            }
            None if schema.contains_key("enum") => {
                schema.remove("nullable");
            }
            // `nullable` beside `allOf`/`$ref`: the TypeScript generator reads it, and a
            // validator ignores it, so it stays.
            None => {}
        }
        // An enum lists every allowed value, so `null` joins it.
        if let Some(Value::Array(values)) = schema.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    } else if schema.get("nullable") == Some(&Value::Bool(false)) {
        schema.remove("nullable");
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match schema.get(flag) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = schema.remove(bound) {
                    schema.insert(flag.into(), limit);
                } else {
                    schema.remove(flag);
                }
            }
            Some(Value::Bool(false)) => {
                schema.remove(flag);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::parse;
    use super::*;

    /// The objects in `value` (its schema objects, and the maps of `properties` and the like).
    fn nodes(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(nodes).sum::<usize>(),
            Value::Array(items) => items.iter().map(nodes).sum(),
            _ => 0,
        }
    }

    fn document(components: Value, version: &str) -> Document {
        let text = json!({
            "openapi": version,
            "info": {"title": "t", "version": "1"},
            "paths": {},
            "components": {"schemas": components}
        })
        .to_string();
        parse(text).expect("a valid document")
    }

    #[test]
    fn keywords_that_reach_outside_the_document_are_left_out_and_arguments_stay_checked() {
        let doc = document(json!({}), "3.1.0");
        let mut schemas = Schemas::new(&doc);
        let schema = json!({
            "type": "object",
            "$id": "https://elsewhere.example/schema",
            "$schema": "https://elsewhere.example/meta",
            "properties": {
                "x": {"type": "integer", "$dynamicRef": "http://127.0.0.1:9/spec.json#meta"},
                "y": {"$recursiveRef": "#", "$dynamicAnchor": "meta", "type": "string"},
            },
        });
        let converted = schemas.convert(&schema, "/x").expect("converts");
        let text = converted.schema.to_string();
        for keyword in [
            "$id",
            "$schema",
            "$dynamicRef",
            "$recursiveRef",
            "$dynamicAnchor",
        ] {
            assert!(!text.contains(keyword), "{keyword} in {text}");
        }
        let validator = jsonschema::validator_for(&converted.schema).expect("compiles");
        assert!(validator.is_valid(&json!({"x": 1, "y": "a"})));
        assert!(!validator.is_valid(&json!({"x": "one"})), "still checked");
    }

    #[test]
    fn components_become_defs_with_everything_they_reach_and_cycles_end() {
        let doc = document(
            json!({
                "Pet": {"type": "object", "properties": {"owner": {"$ref": "#/components/schemas/Person"}, "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}}}},
                "Person": {"type": "object", "properties": {"pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}},
                "Tag": {"type": "string", "x-internal": true},
                "Unused": {"type": "integer"}
            }),
            "3.1.0",
        );
        let mut schemas = Schemas::new(&doc);
        let converted = schemas
            .convert(&json!({"$ref": "#/components/schemas/Pet"}), "/x")
            .expect("converts");
        let mut root = json!({"type": "object", "properties": {"body": converted.schema}});
        schemas
            .attach(&mut root, &converted.refs)
            .expect("attaches");
        assert_eq!(root["properties"]["body"], json!({"$ref": "#/$defs/Pet"}));
        let defs = root["$defs"].as_object().expect("defs");
        let names: Vec<&String> = defs.keys().collect();
        assert_eq!(names, ["Person", "Pet", "Tag"]);
        assert_eq!(defs["Tag"], json!({"type": "string"}));
        let validator = jsonschema::validator_for(&root).expect("a valid JSON Schema");
        assert!(validator.is_valid(&json!({"body": {"owner": {"pets": [{"tags": ["a"]}]}}})));
        assert!(!validator.is_valid(&json!({"body": {"tags": [1]}})));
    }

    #[test]
    fn openapi_30_nullable_and_exclusive_bounds_are_translated() {
        let doc = document(json!({}), "3.0.3");
        let mut schemas = Schemas::new(&doc);
        let converted = schemas
            .convert(
                &json!({"type": "object", "properties": {
                    "a": {"type": "string", "nullable": true},
                    "b": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                    "c": {"enum": ["x"], "nullable": true}
                }}),
                "/x",
            )
            .expect("converts");
        let p = &converted.schema["properties"];
        assert_eq!(p["a"], json!({"type": ["string", "null"]}));
        assert_eq!(p["b"], json!({"type": "integer", "exclusiveMinimum": 0}));
        assert_eq!(p["c"], json!({"enum": ["x", null]}));
    }

    #[test]
    fn a_dangling_ref_is_named_where_it_is_written() {
        let doc = document(json!({}), "3.1.0");
        let mut schemas = Schemas::new(&doc);
        let error = schemas
            .convert(&json!({"$ref": "#/components/schemas/Nope"}), "/x")
            .expect_err("dangling");
        assert_eq!(error.pointer, "/x/$ref");
        assert!(error.message.contains("schemas/Nope"), "{error}");
        let error = schemas
            .convert(&json!({"$ref": "#/components/parameters/gone"}), "/y")
            .expect_err("dangling");
        assert_eq!(error.pointer, "/y/$ref");
    }

    fn depth(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// A document whose `x-s/s0` has eight properties that are each `s1`, and so on down to
    /// `s{levels}`, a string: 8^levels schema objects once inlined, outside `components`.
    fn fanned_out(levels: usize) -> Document {
        let mut chain = Map::new();
        for i in 0..levels {
            let properties: Map<String, Value> = (0..8)
                .map(|k| {
                    (
                        format!("p{k}"),
                        json!({ "$ref": format!("#/x-s/s{}", i + 1) }),
                    )
                })
                .collect();
            chain.insert(
                format!("s{i}"),
                json!({ "type": "object", "properties": properties }),
            );
        }
        chain.insert(format!("s{levels}"), json!({ "type": "string" }));
        let text = json!({
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1"},
            "paths": {},
            "x-s": chain
        })
        .to_string();
        parse(text).expect("a valid document")
    }

    #[test]
    fn references_that_fan_out_stop_at_the_budget() {
        let doc = fanned_out(12);
        let converted = Schemas::new(&doc)
            .convert(&json!({ "$ref": "#/x-s/s0" }), "/x")
            .expect("converts");
        let held = nodes(&converted.schema);
        assert!(held <= 2 * MAX_NODES, "{held} schema objects");
        // What fits is typed as written.
        assert_eq!(
            converted.schema["properties"]["p0"]["properties"]["p0"]["type"],
            "object"
        );
    }

    /// What `reference` converts to for each of 200 operations, in order, with one document-wide
    /// budget.
    fn converted_by_200_operations(doc: &Document, reference: &str) -> Vec<Value> {
        let mut schemas = Schemas::new(doc);
        (0..200)
            .map(|operation| {
                schemas
                    .convert(&json!({ "$ref": reference }), &format!("/p{operation}"))
                    .expect("converts")
                    .schema
            })
            .collect()
    }

    #[test]
    fn a_large_inlined_reference_behind_many_operations_is_walked_within_the_documents_budget() {
        let doc = fanned_out(11);
        let held = converted_by_200_operations(&doc, "#/x-s/s0");
        let total: usize = held.iter().map(nodes).sum();
        assert!(total <= MAX_WALKED_NODES + 1_000, "{total} schema objects");
        // The first operations are typed as written; the last are anything.
        assert_eq!(held[0]["properties"]["p0"]["type"], "object");
        assert_eq!(held[199], json!({}));
    }

    #[test]
    fn a_long_enum_behind_many_operations_costs_what_it_weighs() {
        let values: Vec<String> = (0..20_000).map(|i| format!("v{i:07}")).collect();
        let text = json!({
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1"},
            "paths": {},
            "x-big": { "type": "string", "enum": values }
        })
        .to_string();
        let doc = parse(text).expect("a valid document");
        let held = converted_by_200_operations(&doc, "#/x-big");
        let total: usize = held.iter().map(weight).sum();
        assert!(total <= MAX_WALKED_NODES + 30_000, "{total} weighed");
        // The first operations keep the enum; the last take any string, or anything.
        assert_eq!(held[0]["enum"].as_array().map(Vec::len), Some(20_000));
        assert!(held[199].get("enum").is_none(), "{}", held[199]);
    }

    #[test]
    fn a_component_copied_into_every_tool_stops_being_copied_past_the_documents_budget() {
        let properties: Map<String, Value> = (0..2_000)
            .map(|i| (format!("f{i}"), json!({ "type": "string" })))
            .collect();
        let doc = document(
            json!({ "Wide": { "type": "object", "properties": properties } }),
            "3.1.0",
        );
        let mut schemas = Schemas::new(&doc);
        let mut attached = Vec::new();
        for tool in 0..1_000 {
            let mut converted = schemas
                .convert(
                    &json!({ "$ref": "#/components/schemas/Wide" }),
                    &format!("/t{tool}"),
                )
                .expect("converts");
            schemas
                .attach(&mut converted.schema, &converted.refs)
                .expect("attaches");
            attached.push(converted.schema);
        }
        let held: usize = attached.iter().map(nodes).sum();
        assert!(held <= MAX_COPIED_NODES + 10_000, "{held} objects held");
        // The first tools carry it typed; the last still resolve it, as anything.
        assert_eq!(attached[0]["$defs"]["Wide"]["type"], "object");
        assert_eq!(attached[999]["$defs"]["Wide"], json!({}));
        assert_eq!(attached[999]["$ref"], "#/$defs/Wide");
    }

    #[test]
    fn schemas_nested_past_what_the_catalogue_stores_end_in_anything() {
        let mut deep = json!({ "type": "string" });
        for _ in 0..120 {
            deep = json!({ "type": "array", "items": deep });
        }
        let doc = document(json!({ "Deep": deep }), "3.1.0");
        let mut schemas = Schemas::new(&doc);
        let mut converted = schemas
            .convert(&json!({ "$ref": "#/components/schemas/Deep" }), "/x")
            .expect("converts");
        schemas
            .attach(&mut converted.schema, &converted.refs)
            .expect("attaches");
        let levels = depth(&converted.schema);
        assert!(levels < 110, "{levels} levels");
        // Stored and read back as the catalogue does.
        let text = serde_json::to_string(&converted.schema).expect("serialises");
        serde_json::from_str::<Value>(&text).expect("reads back");
    }
}
