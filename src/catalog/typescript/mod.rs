//! JSON Schema → TypeScript: the one-line signatures `search` prints and the `declare const
//! <namespace>` blocks `describe` prints. One [`NamespaceTypes`] model per namespace turns every
//! tool's input and output schema into TypeScript types and gives referenced, returned and deeply
//! nested types stable, collision-free names (`github.Issue`, `github.IssueUser`) so they can be
//! described on their own. Upstream schemas are untrusted: whatever cannot be understood renders
//! as `unknown`, and nothing here panics on a malformed schema.
//!
//! One job per file; the public surface is only [`NamespaceTypes`], here.
//!
//! | file        | owns                                                                          |
//! |-------------|-------------------------------------------------------------------------------|
//! | `mod.rs`    | [`NamespaceTypes`]: building a namespace's model, signatures, members, blocks |
//! | `model.rs`  | the type model (`Ty`, objects, named types) and union/intersection algebra    |
//! | `walk.rs`   | the schema walk: JSON Schema → `Ty`, `$ref`s, what to inline and what to name |
//! | `schema.rs` | questions about a raw schema: `$ref` targets, recursion, shape, width         |
//! | `names.rs`  | type names: PascalCase, singulars, titles, reserved words, identifiers        |
//! | `render.rs` | `Ty` → TypeScript text: one-line and multi-line, named types' members         |
//! | `doc.rs`    | JSDoc text from descriptions, defaults and tool annotations                   |
//!
//! Each file's tests sit beside it. The snapshot tests of whole declarations stay here, in
//! `tests`, so their snapshots (in `typescript/snapshots/`) keep the names
//! `capabilities__catalog__typescript__tests__*`; `tests` also holds the helpers the other files'
//! tests share.

mod doc;
mod model;
mod names;
mod render;
mod schema;
mod walk;

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::model::tool::ToolDefinition;
use doc::tool_doc;
use model::{NamedType, ToolTypes, Ty, collect_refs, push_unique};
use names::pascal;
use render::{Style, render_named, write_doc, write_ty};
use walk::Builder;

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
                let cut = builder.was_cut();
                // Without required fields (or without a usable schema) a call needs no argument.
                let input_optional = match &input {
                    Ty::Object(object) => object.fields.iter().all(|f| f.optional),
                    other => *other == Ty::Unknown,
                };
                ToolTypes {
                    name: tool.name.clone(),
                    doc: tool_doc(tool, output.is_some(), cut),
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

    /// A stand-in for a tool's member when even that is too large to show: the first lines of
    /// its JSDoc, `note`, and its method with the input typed `unknown`.
    pub fn tool_stub(&self, tool: &str, note: &str) -> Option<String> {
        let tool = self.tool(tool)?;
        let output = match &tool.output {
            Some(name) => format!("{}.{name}", self.namespace),
            None => "unknown".to_string(),
        };
        Some(stub(
            &tool.doc,
            note,
            &format!(
                "{}(input: unknown, options?: CallOptions): Promise<{output}>;",
                tool.name
            ),
        ))
    }

    /// A stand-in for a named type's member when even that is too large to show.
    pub fn type_stub(&self, name: &str, note: &str) -> Option<String> {
        let named = self.named(name)?;
        Some(stub(
            &named.doc,
            note,
            &format!("type {} = unknown;", named.name),
        ))
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

/// A stub member: the start of `doc`, then `note`, over `line` (a method or a type alias).
fn stub(doc: &[String], note: &str, line: &str) -> String {
    let mut doc = short_doc(doc);
    doc.push(note.to_string());
    let mut out = String::new();
    write_doc(&mut out, &doc, 1);
    let _ = writeln!(out, "\t{line}");
    out
}

/// The start of a JSDoc for a stub: its first few lines, the last one cut short, so a stub stays
/// small whatever the upstream's description.
fn short_doc(doc: &[String]) -> Vec<String> {
    /// Lines and characters of the description a stub keeps.
    const LINES: usize = 3;
    const CHARS: usize = 300;
    let mut left = CHARS;
    let mut out = Vec::new();
    for line in doc.iter().take(LINES) {
        if left == 0 {
            break;
        }
        if line.len() <= left {
            left -= line.len();
            out.push(line.clone());
        } else {
            out.push(format!("{}…", &line[..line.floor_char_boundary(left)]));
            left = 0;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::fixtures::{definitions, fixture_dir, load_all};
    use crate::model::tool::Annotations;
    use serde_json::{Value, json};

    pub(super) fn tool(
        namespace: &str,
        name: &str,
        input: Value,
        output: Option<Value>,
    ) -> ToolDefinition {
        ToolDefinition {
            namespace: namespace.into(),
            name: name.into(),
            upstream_name: name.into(),
            title: None,
            description: String::new(),
            input_schema: input,
            output_schema: output,
            annotations: Annotations::default(),
            endpoint: None,
            hash: String::new(),
        }
    }

    /// The one-line signature of `t.run` with this input schema.
    pub(super) fn sig(input: Value) -> String {
        let tools = [tool("t", "run", input, None)];
        NamespaceTypes::build("t", &tools)
            .signature("run")
            .unwrap_or_default()
    }

    /// Only the input part of the signature, to keep assertions short.
    pub(super) fn input(input: Value) -> String {
        let full = sig(input);
        full.strip_prefix("t.run(input: ")
            .or_else(|| full.strip_prefix("t.run(input?: "))
            .and_then(|s| s.strip_suffix("): Promise<unknown>"))
            .unwrap_or(&full)
            .to_string()
    }

    /// The type of field `x`.
    pub(super) fn field(schema: Value) -> String {
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
