//! Direct mode (`mode = "direct"`, `hub serve --direct`): every tool of the served sources as
//! its own MCP tool, named by [`names`], with the upstream's title, description, schemas and
//! annotations. A call is an `execute` run of a generated one-call script (`script`), so policy,
//! approvals, the journal, audit, secret scrubbing and stored large results are the code mode's
//! own; `result` turns the run's envelope into the tool's answer. `follow` tells a client when
//! the list changed. Skills reach a client that does not know the Skills extension through
//! [`READ_SKILL`], whose description lists them.
//!
//! | file | owns |
//! |---|---|
//! | `names` | stable MCP-valid names from addresses |
//! | `script` | the one-call script of a call, and the arguments of the hub's own two tools |
//! | `result` | a run's envelope as a `CallToolResult` |
//! | `follow` | the watch behind `notifications/tools/list_changed` |

mod follow;
mod names;
mod result;
mod script;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::model::tool::json_digest;
use crate::model::{Permits, ToolDefinition};
use crate::policy::Policy;
use crate::skills::Skills;

pub use follow::follow;
pub use result::result;
pub use script::script;

/// The hub's own tool in direct mode: pages of a result too large to send.
pub const READ_RESULT: &str = "capabilities_read_result";

/// The hub's own tool in direct mode when there are skills: one skill's instructions or file,
/// as `describe("skill:…")` gives them in code mode.
pub const READ_SKILL: &str = "capabilities_read_skill";

/// At most this many skills are named in [`READ_SKILL`]'s description, each description cut
/// at [`SKILL_SUMMARY_CHARS`]: the list is in every `tools/list`.
const MAX_LISTED_SKILLS: usize = 40;
const SKILL_SUMMARY_CHARS: usize = 120;

/// What a direct tool name calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A catalogued tool, by address.
    Tool { address: String },
    /// [`READ_RESULT`].
    ReadResult,
    /// [`READ_SKILL`].
    ReadSkill,
}

/// One listed tool: its MCP definition and what it calls.
#[derive(Debug, Clone)]
pub struct DirectTool {
    pub tool: Tool,
    pub target: Target,
}

/// Every tool the client may see, in name order: the catalogue's tools the policy does not
/// deny and `permits` (a bearer token's patterns) allows, then [`READ_RESULT`], then
/// [`READ_SKILL`] when there are `skills`. Names are assigned over the whole catalogue, so
/// hiding one tool never renames another.
pub fn listing(
    catalog: &Catalog,
    policy: &Policy,
    permits: Permits,
    skills: &Skills,
) -> Vec<DirectTool> {
    let every: Vec<String> = catalog.tools().map(ToolDefinition::address).collect();
    let names = names::assign(every.iter().map(String::as_str), &[READ_RESULT, READ_SKILL]);
    let visible = catalog.visible_tools(policy, permits);
    let by_address: std::collections::BTreeMap<String, &ToolDefinition> =
        visible.iter().map(|t| (t.address(), t)).collect();
    let mut out: Vec<DirectTool> = names
        .into_iter()
        .filter_map(|(name, address)| {
            let tool = by_address.get(&address)?;
            Some(DirectTool {
                tool: mcp_tool(name, tool),
                target: Target::Tool { address },
            })
        })
        .collect();
    out.push(DirectTool {
        tool: read_result_tool(),
        target: Target::ReadResult,
    });
    if !skills.skills.is_empty() {
        out.push(DirectTool {
            tool: read_skill_tool(skills),
            target: Target::ReadSkill,
        });
    }
    out
}

/// A digest of what a listing shows, so a watcher can tell when it changed.
pub fn fingerprint(listing: &[DirectTool]) -> String {
    let tools: Vec<Value> = listing
        .iter()
        .map(|t| serde_json::to_value(&t.tool).unwrap_or(Value::Null))
        .collect();
    json_digest(&Value::Array(tools))
}

/// The upstream's definition under its direct name. The description says which source the
/// tool comes from, as the address does in code mode.
fn mcp_tool(name: String, tool: &ToolDefinition) -> Tool {
    let mut mcp = Tool::new(
        name,
        tool.description.clone(),
        Arc::new(object(&tool.input_schema)),
    );
    if let Some(title) = &tool.title {
        mcp = mcp.with_title(title.clone());
    }
    if let Some(output) = &tool.output_schema {
        mcp = mcp.with_raw_output_schema(Arc::new(object(output)));
    }
    let a = &tool.annotations;
    if !a.is_empty() {
        mcp = mcp.with_annotations(ToolAnnotations::from_raw(
            a.title.clone(),
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ));
    }
    mcp
}

/// A schema as an object; an upstream that sent another JSON value gets the schema that
/// accepts any object, which is what MCP requires a tool's input to be.
fn object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => map.clone(),
        _ => match json!({ "type": "object" }) {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        },
    }
}

fn read_result_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "resultRef": { "type": "string", "description": "The resultRef of a stored result." },
            "path": { "type": "string", "description": "JSON Pointer to an array in it, e.g. /items (the tool's answer lists them); leave it out when the result is itself an array." },
            "fields": { "type": "array", "items": { "type": "string" }, "description": "Keep only these keys of each row." },
            "offset": { "type": "integer", "minimum": 0, "description": "The first row of the page." }
        },
        "required": ["resultRef"],
        "additionalProperties": false
    });
    Tool::new(
        READ_RESULT,
        "Read a page of a tool result too large to send at once: a tool's answer gives its resultRef and the arrays in it.",
        Arc::new(object(&schema)),
    )
    .with_annotations(ToolAnnotations::new().read_only(true))
}

/// [`READ_SKILL`], its description naming the skills (a source's as `SOURCE.NAME`).
fn read_skill_tool(skills: &Skills) -> Tool {
    let mut description = String::from(
        "Read a skill: instructions for a kind of task, written by the user or by one of their sources (SOURCE.NAME). Read one before a task it fits. Skills:\n",
    );
    for skill in skills.skills.iter().take(MAX_LISTED_SKILLS) {
        let summary: String = skill
            .description
            .chars()
            .take(SKILL_SUMMARY_CHARS)
            .collect();
        description.push_str(&format!("- {}: {summary}\n", skill.name));
    }
    if let Some(more) = skills.skills.len().checked_sub(MAX_LISTED_SKILLS)
        && more > 0
    {
        description.push_str(&format!("({more} more not listed here.)\n"));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "A skill's name as listed; NAME/PATH for one of the files its instructions list." }
        },
        "required": ["name"],
        "additionalProperties": false
    });
    Tool::new(READ_SKILL, description, Arc::new(object(&schema)))
        .with_annotations(ToolAnnotations::new().read_only(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::fixtures::{RecordedServer, fixture_dir, load_all};
    use crate::catalog::{Namespace, Origin};
    use crate::model::tool::build_namespace;

    /// The recorded listings of real servers as one catalogue.
    pub(crate) fn recorded_catalog() -> Catalog {
        let servers: Vec<RecordedServer> = load_all(&fixture_dir()).expect("recorded listings");
        Catalog {
            namespaces: servers
                .into_iter()
                .map(|s| Namespace {
                    tools: build_namespace(&s.namespace, s.tools, &[]),
                    name: s.namespace,
                    connections: vec!["default".into()],
                    named_connections: false,
                    skills: Vec::new(),
                    origin: Origin::Live,
                })
                .collect(),
        }
    }

    #[test]
    fn every_name_is_valid_and_maps_back_to_its_address() {
        let catalog = recorded_catalog();
        let all = listing(
            &catalog,
            &Policy::default(),
            Permits::ALL,
            &Skills::default(),
        );
        assert_eq!(all.len(), catalog.tools().count() + 1);
        for tool in &all {
            let name = &tool.tool.name;
            assert!(
                name.len() <= 64
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{name}"
            );
            if let Target::Tool { address } = &tool.target {
                let definition = catalog.tool(address).expect("catalogued");
                assert_eq!(
                    tool.tool.input_schema.as_ref(),
                    definition.input_schema.as_object().expect("object")
                );
            }
        }
    }

    /// Direct mode's fixed cost is the reason code mode exists: for the recorded servers it is
    /// many times the three tools'.
    #[test]
    fn direct_mode_lists_far_more_than_the_code_modes_surface() {
        use crate::hub::surface;
        use crate::token_count::count;
        let tools: Vec<Tool> = listing(
            &recorded_catalog(),
            &Policy::default(),
            Permits::ALL,
            &Skills::default(),
        )
        .into_iter()
        .map(|t| t.tool)
        .collect();
        let direct = count(&serde_json::to_string(&tools).unwrap_or_default())
            + count(surface::DIRECT_INSTRUCTIONS);
        let code = count(&serde_json::to_string(&surface::tools()).unwrap_or_default())
            + count(surface::INSTRUCTIONS);
        assert!(direct > 20 * code, "direct {direct}, code {code}");
    }

    #[test]
    fn denied_and_unpermitted_tools_are_not_listed() {
        let catalog = recorded_catalog();
        let all = listing(
            &catalog,
            &Policy::default(),
            Permits::ALL,
            &Skills::default(),
        );
        assert!(all.len() > 2, "{all:?}");
        let first = match &all[0].target {
            Target::Tool { address } => address.clone(),
            Target::ReadResult | Target::ReadSkill => panic!("the hub's tools come last"),
        };
        let permits = |address: &str| address != first;
        let narrowed = listing(
            &catalog,
            &Policy::default(),
            Permits::only(&permits),
            &Skills::default(),
        );
        assert_eq!(narrowed.len(), all.len() - 1);
        // The others keep their names.
        assert_eq!(
            narrowed.iter().map(|t| &t.tool.name).collect::<Vec<_>>(),
            all[1..].iter().map(|t| &t.tool.name).collect::<Vec<_>>()
        );
        assert_ne!(fingerprint(&narrowed), fingerprint(&all));
    }
}
