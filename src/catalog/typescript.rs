//! JSON Schema → TypeScript: the one-line signatures `search` prints and the `declare const
//! <namespace>` blocks `describe` prints. One [`NamespaceTypes`] model per namespace turns every
//! tool's input and output schema into TypeScript types and gives referenced, returned and deeply
//! nested types stable, collision-free names (`github.Issue`, `github.IssueUser`) so they can be
//! described on their own. Upstream schemas are untrusted: whatever cannot be understood renders
//! as `unknown`, and nothing here panics on a malformed schema.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::address::JS_RESERVED_WORDS;
use super::tool::ToolDefinition;

/// Objects nested this deep inside a declaration (the input, or a named interface, is depth 0)
/// become named interfaces, so signatures stay readable and each part can be described alone.
const INLINE_DEPTH: usize = 2;
/// Nested objects with more fields than this become named interfaces even when shallow.
const INLINE_FIELDS: usize = 8;
/// Nested objects whose one-line form would be longer than about this many characters become
/// named interfaces too.
const INLINE_WIDTH: usize = 120;
/// Schemas nested deeper than this render as `unknown`: a guard against hostile input, far
/// beyond what any real tool schema needs.
const MAX_NESTING: usize = 64;
/// Defaults longer than this (as JSON) are left out of the JSDoc; they cost tokens and rarely help.
const MAX_DEFAULT_CHARS: usize = 120;

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

/// A TypeScript type, before rendering.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
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
struct Object {
    fields: Vec<Field>,
    index: Option<Box<Ty>>,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    optional: bool,
    ty: Ty,
    doc: Vec<String>,
}

/// A type with a name of its own in the namespace.
#[derive(Debug, Clone)]
struct NamedType {
    name: String,
    doc: Vec<String>,
    ty: Ty,
}

/// One tool's types, ready to render.
#[derive(Debug, Clone)]
struct ToolTypes {
    name: String,
    doc: Vec<String>,
    input: Ty,
    /// True when every input field is optional, so a script may call the tool without arguments.
    input_optional: bool,
    /// The named return type, if the tool has a usable output schema.
    output: Option<String>,
}

/// The TypeScript view of one namespace: every tool's signature and the named types they use.
/// Building it is deterministic: the same tools give the same names and the same text.
#[derive(Debug, Clone)]
pub struct NamespaceTypes {
    namespace: String,
    tools: Vec<ToolTypes>,
    types: Vec<NamedType>,
    type_index: HashMap<String, usize>,
}

impl NamespaceTypes {
    /// Builds the model of `namespace` from its tools; tools of other namespaces are ignored,
    /// and of two tools with one name only the first counts.
    pub fn build<'t>(namespace: &str, tools: impl IntoIterator<Item = &'t ToolDefinition>) -> Self {
        let mut tools: Vec<&ToolDefinition> = tools
            .into_iter()
            .filter(|t| t.namespace == namespace)
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools.dedup_by(|a, b| a.name == b.name);

        let mut builder = Builder::default();
        // Return types name themselves first, so the names signatures show most (`Issue`) are
        // the clean ones and inputs' definitions take suffixes when they collide.
        let outputs: Vec<Option<String>> = tools
            .iter()
            .map(|t| {
                t.output_schema
                    .as_ref()
                    .and_then(|schema| builder.output(schema, &pascal(&t.name)))
            })
            .collect();
        let entries = tools
            .iter()
            .zip(outputs)
            .map(|(tool, output)| {
                let input = builder.input(&tool.input_schema, &pascal(&tool.name));
                // Without required fields (or without a usable schema) a call needs no argument.
                let input_optional = match &input {
                    Ty::Object(object) => object.fields.iter().all(|f| f.optional),
                    other => *other == Ty::Unknown,
                };
                ToolTypes {
                    name: tool.name.clone(),
                    doc: tool_doc(tool, output.is_some()),
                    input,
                    input_optional,
                    output,
                }
            })
            .collect();
        let type_index = builder
            .types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        NamespaceTypes {
            namespace: namespace.to_string(),
            tools: entries,
            types: builder.types,
            type_index,
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Tool names (the part after the dot), sorted.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// Named types, in the order they were named.
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        self.types.iter().map(|t| t.name.as_str())
    }

    pub fn contains_tool(&self, tool: &str) -> bool {
        self.tool(tool).is_some()
    }

    pub fn contains_type(&self, name: &str) -> bool {
        self.type_index.contains_key(name)
    }

    /// The one-line signature search shows:
    /// `github.createIssue(input: { owner: string; title: string; body?: string }): Promise<Issue>`.
    pub fn signature(&self, tool: &str) -> Option<String> {
        let tool = self.tool(tool)?;
        let style = Style {
            qualify: None,
            multiline: false,
            docs: false,
        };
        let mut out = format!("{}.{}(", self.namespace, tool.name);
        out.push_str(if tool.input_optional {
            "input?: "
        } else {
            "input: "
        });
        write_ty(&mut out, &tool.input, style, 0);
        out.push_str("): Promise<");
        out.push_str(tool.output.as_deref().unwrap_or("unknown"));
        out.push('>');
        Some(out)
    }

    /// Every tool and every named type of the namespace, as `describe` would show them without a
    /// budget.
    pub fn declaration(&self) -> String {
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|t| self.render_tool(t, true))
            .collect();
        let types: Vec<String> = self.types.iter().map(|t| render_named(t, true)).collect();
        self.assemble(&tools, &types)
    }

    /// One member of the `declare const` block: the tool's JSDoc and method signature, tab
    /// indented, ending in a newline. `docs: false` leaves out the fields' JSDoc.
    pub fn tool_member(&self, tool: &str, docs: bool) -> Option<String> {
        Some(self.render_tool(self.tool(tool)?, docs))
    }

    /// One member of the `declare namespace` block: a named type's interface or alias.
    pub fn type_member(&self, name: &str, docs: bool) -> Option<String> {
        Some(render_named(self.named(name)?, docs))
    }

    /// The named types a tool's signature mentions directly, in order of appearance.
    pub fn tool_dependencies(&self, tool: &str) -> Vec<&str> {
        let mut refs = Vec::new();
        if let Some(tool) = self.tool(tool) {
            collect_refs(&tool.input, &mut refs);
            if let Some(output) = &tool.output {
                push_unique(&mut refs, output);
            }
        }
        refs
    }

    /// The named types a named type mentions directly (itself excluded), in order of appearance.
    pub fn type_dependencies(&self, name: &str) -> Vec<&str> {
        let mut refs = Vec::new();
        if let Some(named) = self.named(name) {
            collect_refs(&named.ty, &mut refs);
        }
        refs.retain(|r| *r != name);
        refs
    }

    /// Wraps members from [`tool_member`](Self::tool_member) and
    /// [`type_member`](Self::type_member) in `declare const <ns>: { … };` and
    /// `declare namespace <ns> { … }`; an empty list leaves its block out.
    pub fn assemble(&self, tool_members: &[String], type_members: &[String]) -> String {
        let mut out = String::new();
        if !tool_members.is_empty() {
            let _ = writeln!(out, "declare const {}: {{", self.namespace);
            tool_members.iter().for_each(|m| out.push_str(m));
            out.push_str("};\n");
        }
        if !type_members.is_empty() {
            let _ = writeln!(out, "declare namespace {} {{", self.namespace);
            type_members.iter().for_each(|m| out.push_str(m));
            out.push_str("}\n");
        }
        out
    }

    fn tool(&self, name: &str) -> Option<&ToolTypes> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.tools.get(i))
    }

    fn named(&self, name: &str) -> Option<&NamedType> {
        self.type_index.get(name).and_then(|&i| self.types.get(i))
    }

    fn render_tool(&self, tool: &ToolTypes, docs: bool) -> String {
        let style = Style {
            qualify: Some(&self.namespace),
            multiline: true,
            docs,
        };
        let mut out = String::new();
        write_doc(&mut out, &tool.doc, 1);
        out.push('\t');
        out.push_str(&tool.name);
        out.push_str(if tool.input_optional {
            "(input?: "
        } else {
            "(input: "
        });
        write_ty(&mut out, &tool.input, style, 1);
        out.push_str(", options?: CallOptions): Promise<");
        match &tool.output {
            Some(name) => write_ty(&mut out, &Ty::Named(name.clone()), style, 1),
            None => out.push_str("unknown"),
        }
        out.push_str(">;\n");
        out
    }
}

fn render_named(named: &NamedType, docs: bool) -> String {
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

fn tool_doc(tool: &ToolDefinition, has_output: bool) -> Vec<String> {
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
    if !has_output {
        doc.push(
            "@returns unknown (no output schema): inspect the result before relying on its shape."
                .into(),
        );
    }
    doc
}

fn field_doc(schema: &Value) -> Vec<String> {
    let mut doc = schema
        .get("description")
        .and_then(Value::as_str)
        .map(doc_lines)
        .unwrap_or_default();
    if let Some(default) = schema.get("default") {
        let text = default.to_string();
        if text.len() <= MAX_DEFAULT_CHARS {
            doc.push(format!("@default {}", escape_doc(&text)));
        }
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

/// Schema-derived names share one namespace; this hands them out.
#[derive(Default)]
struct Builder {
    types: Vec<NamedType>,
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
    fn output(&mut self, schema: &Value, owner: &str) -> Option<String> {
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

    fn input(&mut self, schema: &Value, owner: &str) -> Ty {
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

/// A named type's JSDoc: just the description (its default belongs to the field using it).
fn field_doc_description(schema: &Value) -> Vec<String> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(doc_lines)
        .unwrap_or_default()
}

/// Resolves a local `$ref` (`#`, `#/$defs/Issue`, `#/definitions/a~1b`) to its target and the
/// last pointer segment (empty for the root). Remote references resolve to nothing.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<(&'s Value, String)> {
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

fn contains_ref(value: &Value, nesting: usize) -> bool {
    if nesting > MAX_NESTING {
        // Too deep to tell: treat as recursive, which only costs a name.
        return true;
    }
    match value {
        Value::Object(map) => {
            map.contains_key("$ref") || map.values().any(|v| contains_ref(v, nesting + 1))
        }
        Value::Array(items) => items.iter().any(|v| contains_ref(v, nesting + 1)),
        _ => false,
    }
}

/// Whether following the references inside `schema` leads back to `reference`.
fn reaches(
    root: &Value,
    schema: &Value,
    reference: &str,
    visited: &mut HashSet<String>,
    nesting: usize,
) -> bool {
    if nesting > MAX_NESTING {
        // Too deep to tell: treat as recursive, which only costs a name.
        return true;
    }
    match schema {
        Value::Object(map) => {
            if let Some(next) = map.get("$ref").and_then(Value::as_str) {
                if next == reference {
                    return true;
                }
                if visited.insert(next.to_string())
                    && let Some((target, _)) = resolve(root, next)
                    && reaches(root, target, reference, visited, nesting + 1)
                {
                    return true;
                }
            }
            map.values()
                .any(|v| reaches(root, v, reference, visited, nesting + 1))
        }
        Value::Array(items) => items
            .iter()
            .any(|v| reaches(root, v, reference, visited, nesting + 1)),
        _ => false,
    }
}

/// A rough length of a schema's one-line rendering, so a nested object that would swamp a
/// signature can be named before it is converted.
fn estimated_width(schema: &Value, nesting: usize) -> usize {
    const SHORT: usize = 7;
    let Some(map) = schema.as_object().filter(|_| nesting <= MAX_NESTING) else {
        return SHORT;
    };
    if map.contains_key("$ref") {
        return 2 * SHORT;
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return values.iter().map(|v| v.to_string().len() + 3).sum();
    }
    let mut width = 0;
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        width += 4 + properties
            .iter()
            .map(|(name, v)| name.len() + 4 + estimated_width(v, nesting + 1))
            .sum::<usize>();
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = map.get(key).filter(|v| v.is_object()) {
            width += 2 + estimated_width(inner, nesting + 1);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            width += branches
                .iter()
                .map(|b| 3 + estimated_width(b, nesting + 1))
                .sum::<usize>();
        }
    }
    width.max(SHORT)
}

fn is_object_schema(schema: &Value) -> bool {
    let declares_object = match schema.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "object"),
        _ => false,
    };
    declares_object || schema.get("properties").is_some()
}

fn is_bare_object(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object")
        && !["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
}

fn has_type_info(schema: &Value) -> bool {
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

fn usable_title(schema: &Value) -> Option<String> {
    schema
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| is_type_name(t))
        .map(str::to_string)
}

/// A JSON value as a literal type. Arrays and objects have no literal form and widen.
fn literal(value: &Value) -> Ty {
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

/// A union, flattened and without repeats; `unknown` swallows it, `never` vanishes from it.
fn union(members: Vec<Ty>) -> Ty {
    let mut out: Vec<Ty> = Vec::new();
    for member in members {
        let flat = match member {
            Ty::Union(inner) => inner,
            Ty::Unknown => return Ty::Unknown,
            Ty::Never => continue,
            other => vec![other],
        };
        for ty in flat {
            if !out.contains(&ty) {
                out.push(ty);
            }
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
fn intersection(members: Vec<Ty>) -> Ty {
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

fn collect_refs<'t>(ty: &'t Ty, out: &mut Vec<&'t str>) {
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

fn push_unique<'t>(out: &mut Vec<&'t str>, name: &'t str) {
    if !out.contains(&name) {
        out.push(name);
    }
}

#[derive(Clone, Copy)]
struct Style<'a> {
    /// Prefix for named types (`github.`) outside their `declare namespace` block.
    qualify: Option<&'a str>,
    multiline: bool,
    /// Whether fields carry their JSDoc (multi-line only).
    docs: bool,
}

fn write_ty(out: &mut String, ty: &Ty, style: Style<'_>, indent: usize) {
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

fn write_doc(out: &mut String, lines: &[String], indent: usize) {
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

/// An ASCII JavaScript identifier (non-ASCII names get quoted, which is always safe).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn is_type_name(name: &str) -> bool {
    is_identifier(name)
        && !JS_RESERVED_WORDS.contains(&name)
        && !RESERVED_TYPE_NAMES.contains(&name)
}

/// `create-issue`, `create_issue`, `createIssue` → `CreateIssue`; always a valid type name.
fn pascal(text: &str) -> String {
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
fn singular(name: &str) -> String {
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
pub(crate) mod tests {
    use super::*;
    use crate::catalog::fixtures::{definitions, fixture_dir, load_all};
    use crate::catalog::tool::Annotations;
    use serde_json::json;

    fn tool(namespace: &str, name: &str, input: Value, output: Option<Value>) -> ToolDefinition {
        ToolDefinition {
            namespace: namespace.into(),
            name: name.into(),
            upstream_name: name.into(),
            title: None,
            description: String::new(),
            input_schema: input,
            output_schema: output,
            annotations: Annotations::default(),
            hash: String::new(),
        }
    }

    /// The one-line signature of `t.run` with this input schema.
    fn sig(input: Value) -> String {
        let tools = [tool("t", "run", input, None)];
        NamespaceTypes::build("t", &tools)
            .signature("run")
            .unwrap_or_default()
    }

    /// Only the input part of the signature, to keep assertions short.
    fn input(input: Value) -> String {
        let full = sig(input);
        full.strip_prefix("t.run(input: ")
            .or_else(|| full.strip_prefix("t.run(input?: "))
            .and_then(|s| s.strip_suffix("): Promise<unknown>"))
            .unwrap_or(&full)
            .to_string()
    }

    /// The type of field `x`.
    fn field(schema: Value) -> String {
        let text = input(json!({"type": "object", "properties": {"x": schema}, "required": ["x"]}));
        text.strip_prefix("{ x: ")
            .and_then(|s| s.strip_suffix(" }"))
            .unwrap_or(&text)
            .to_string()
    }

    /// Asserts that `text` parses as a TypeScript declaration file.
    pub(crate) fn parses(text: &str) {
        let allocator = oxc_allocator::Allocator::default();
        let parsed =
            oxc_parser::Parser::new(&allocator, text, oxc_span::SourceType::d_ts()).parse();
        let errors: Vec<String> = parsed.diagnostics.errors().map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty() && !parsed.panicked,
            "{errors:?}\n---\n{text}"
        );
    }

    #[test]
    fn one_liners_match_the_spec() {
        let echo = tool(
            "everything",
            "echo",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            Some(json!({"type": "object", "properties": {"echo": {"type": "string"}}})),
        );
        let model = NamespaceTypes::build("everything", [&echo]);
        assert_eq!(
            model.signature("echo").as_deref(),
            Some("everything.echo(input: { message: string }): Promise<EchoResult>")
        );

        let create = tool(
            "github",
            "createIssue",
            json!({
                "type": "object",
                "properties": {
                    "owner": {"type": "string"},
                    "body": {"type": "string"},
                    "repo": {"type": "string"},
                    "labels": {"type": "array", "items": {"type": "string"}},
                    "title": {"type": "string"}
                },
                "required": ["owner", "repo", "title"]
            }),
            Some(
                json!({"title": "Issue", "type": "object", "properties": {"number": {"type": "integer"}}}),
            ),
        );
        let model = NamespaceTypes::build("github", [&create]);
        assert_eq!(
            model.signature("createIssue").as_deref(),
            Some(
                "github.createIssue(input: { owner: string; repo: string; title: string; body?: string; labels?: string[] }): Promise<Issue>"
            )
        );
        assert_eq!(model.signature("missing"), None);
    }

    #[test]
    fn declaration_matches_the_spec() {
        let mut search = tool(
            "github",
            "searchIssues",
            json!({
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Search query, GitHub syntax."},
                    "perPage": {"type": "number"},
                    "page": {"type": "number"}
                },
                "required": ["q"]
            }),
            Some(
                json!({"title": "IssueSearchResult", "type": "object", "properties": {"total_count": {"type": "integer"}}}),
            ),
        );
        search.description = "Search issues and pull requests.".into();
        let model = NamespaceTypes::build("github", [&search]);
        let member = model.tool_member("searchIssues", true).unwrap_or_default();
        assert_eq!(
            model.assemble(&[member], &[]),
            "declare const github: {
\t/** Search issues and pull requests. */
\tsearchIssues(input: {
\t\t/** Search query, GitHub syntax. */
\t\tq: string;
\t\tperPage?: number;
\t\tpage?: number;
\t}, options?: CallOptions): Promise<github.IssueSearchResult>;
};
"
        );
        assert_eq!(
            model.type_member("IssueSearchResult", true).as_deref(),
            Some("\tinterface IssueSearchResult {\n\t\ttotal_count?: number;\n\t}\n")
        );
        parses(&model.declaration());
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
        assert_eq!(
            model.type_member("Ping", false).as_deref(),
            Some("\ttype Ping = Pong | null;\n")
        );
        assert_eq!(model.type_dependencies("Node"), Vec::<&str>::new());
        parses(&model.declaration());
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

    #[test]
    fn models_are_deterministic() {
        let servers = load_all(&fixture_dir()).unwrap_or_default();
        let tools = definitions(&servers);
        for server in &servers {
            let mut reversed: Vec<&ToolDefinition> = tools
                .iter()
                .filter(|t| t.namespace == server.namespace)
                .collect();
            reversed.reverse();
            let forward = NamespaceTypes::build(&server.namespace, &tools).declaration();
            let backward = NamespaceTypes::build(&server.namespace, reversed).declaration();
            assert_eq!(forward, backward, "{}", server.namespace);
        }
    }

    /// Every recorded server's declarations and one-line signatures, reviewed by eye.
    #[test]
    fn fixture_snapshots() {
        let servers = load_all(&fixture_dir()).unwrap_or_default();
        assert!(
            !servers.is_empty(),
            "no fixtures in {}",
            fixture_dir().display()
        );
        let tools = definitions(&servers);
        for server in &servers {
            let model = NamespaceTypes::build(&server.namespace, &tools);
            let signatures: Vec<String> = model
                .tool_names()
                .filter_map(|t| model.signature(t))
                .collect();
            insta::assert_snapshot!(
                format!("signatures_{}", server.namespace),
                signatures.join("\n")
            );
            insta::assert_snapshot!(
                format!("declaration_{}", server.namespace),
                model.declaration()
            );
        }
    }

    /// Whatever the upstream sends, the declarations stay valid TypeScript.
    #[test]
    fn fixture_declarations_parse_as_typescript() {
        let servers = load_all(&fixture_dir()).unwrap_or_default();
        let tools = definitions(&servers);
        for server in &servers {
            let model = NamespaceTypes::build(&server.namespace, &tools);
            parses(&model.declaration());
            for t in model.tool_names() {
                let signature = model.signature(t).unwrap_or_default();
                // A one-liner is an expression-shaped call signature; wrap it to parse it.
                parses(&format!(
                    "declare const x: {{ {} }};",
                    signature.replacen(&format!("{}.", server.namespace), "", 1)
                ));
            }
        }
    }
}
