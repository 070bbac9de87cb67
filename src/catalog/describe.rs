//! `describe`: exact TypeScript declarations for tools, namespaces and named types, within a
//! token budget. Requested items come first, then the named types they need; whatever does not
//! fit is listed by name in a trailing comment so the model can ask for it in a follow-up call.

use std::collections::{HashMap, HashSet, VecDeque};

use super::typescript::NamespaceTypes;
use crate::error_text::echo;
use crate::model::Reader;
use crate::model::address::tool_name;
use crate::model::tool::ToolDefinition;
use crate::token_count;

/// The budget when the caller names none, in o200k_base tokens.
pub const DEFAULT_BUDGET_TOKENS: usize = 2_500;
/// The smallest and largest budget a caller may ask for, the hub's and the CLI's alike: at most
/// a tenth of a large context window, and enough for one tool's declaration at the least.
pub const MIN_BUDGET_TOKENS: u32 = 200;
pub const MAX_BUDGET_TOKENS: u32 = 20_000;
/// At most this many targets per call.
pub const MAX_TARGETS: usize = 10;
/// How many close matches an unknown target's error names.
const SUGGESTIONS: usize = 3;
/// Re-planning rounds when the assembled text overshoots the per-item estimate.
const PLAN_ROUNDS: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescribeError {
    #[error(
        "describe needs at least one target: an address (github.createIssue), a namespace (github) or a type named in an earlier declaration (github.Issue)"
    )]
    NoTargets,
    #[error("describe takes at most {MAX_TARGETS} targets, got {0}; split them over several calls")]
    TooManyTargets(usize),
    #[error("{}", unknown_message(.0, &Reader::Agent))]
    UnknownTargets(Vec<UnknownTarget>),
}

impl DescribeError {
    /// The message in `reader`'s words: an agent is pointed at the `search` tool, a person at
    /// `capabilities search`.
    pub fn message_for(&self, reader: &Reader) -> String {
        match self {
            DescribeError::UnknownTargets(unknown) => unknown_message(unknown, reader),
            other => other.to_string(),
        }
    }
}

/// The type of every tool function's optional second argument. It is the same in every
/// namespace, so signatures name it without a namespace and `describe CallOptions` shows it.
pub const CALL_OPTIONS: &str = "CallOptions";
const CALL_OPTIONS_DECLARATION: &str = "/** The optional second argument of every tool function. */\ninterface CallOptions {\n\t/** The connection to call through, one of the source's connections (search lists them; the starred one is the default). */\n\tconnection?: string;\n}\n";

/// A target that names no tool, namespace or type, with the closest names that exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget {
    pub target: String,
    pub closest: Vec<String>,
}

fn unknown_message(unknown: &[UnknownTarget], reader: &Reader) -> String {
    let mut lines: Vec<String> = unknown
        .iter()
        .map(|u| {
            if u.closest.is_empty() {
                format!("unknown target `{}`", echo(&u.target))
            } else {
                format!(
                    "unknown target `{}`; closest: {}",
                    echo(&u.target),
                    u.closest.join(", ")
                )
            }
        })
        .collect();
    lines.push(format!(
        "Pass an address (namespace.tool), a namespace, or a type named in an earlier declaration; {} finds addresses.",
        reader.search()
    ));
    lines.join("\n")
}

/// One thing to show, inside its namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Item {
    Tool(String),
    Type(String),
}

/// Renders declarations for `targets` (addresses, namespaces or named types) out of `tools`,
/// every tool the caller may see, staying within `budget_tokens` (see [`DEFAULT_BUDGET_TOKENS`]).
/// The first requested item is always shown, without field docs if that is what it takes.
///
/// ```text
/// let text = describe(&tools, &["github.createIssue".into()], DEFAULT_BUDGET_TOKENS)?;
/// ```
pub fn describe(
    tools: &[ToolDefinition],
    targets: &[String],
    budget_tokens: usize,
) -> Result<String, DescribeError> {
    if targets.is_empty() {
        return Err(DescribeError::NoTargets);
    }
    if targets.len() > MAX_TARGETS {
        return Err(DescribeError::TooManyTargets(targets.len()));
    }
    let mut by_namespace: HashMap<&str, Vec<&ToolDefinition>> = HashMap::new();
    for tool in tools {
        by_namespace.entry(&tool.namespace).or_default().push(tool);
    }
    let mut models: HashMap<&str, NamespaceTypes> = HashMap::new();
    let mut requests: Vec<(String, Item)> = Vec::new();
    let mut unknown = Vec::new();
    let mut call_options = false;
    for raw in targets {
        let target = raw.trim();
        if target == CALL_OPTIONS {
            call_options = true;
            continue;
        }
        let (namespace, rest) = match target.split_once('.') {
            Some((namespace, rest)) => (namespace, Some(rest)),
            None => (target, None),
        };
        let (namespace, rest) = match by_namespace.get_key_value(namespace) {
            Some(_) => (namespace, rest),
            // A bare type name (`GetCurrentTimeResult`) stands for the one namespace that
            // declares it; when several do, the error lists each qualified name.
            None if rest.is_none() => match bare_type(&by_namespace, &mut models, target) {
                Ok(namespace) => (namespace, Some(target)),
                Err(owners) => {
                    let closest = if owners.is_empty() {
                        unknown_target(target, tools, None).closest
                    } else {
                        owners
                    };
                    unknown.push(UnknownTarget {
                        target: target.to_string(),
                        closest,
                    });
                    continue;
                }
            },
            None => (namespace, rest),
        };
        let Some((&namespace, defs)) = by_namespace.get_key_value(namespace) else {
            unknown.push(unknown_target(target, tools, None));
            continue;
        };
        let model = models
            .entry(namespace)
            .or_insert_with(|| NamespaceTypes::build(namespace, defs.iter().copied()));
        let items = match rest {
            None => model
                .tool_names()
                .map(|t| Item::Tool(t.to_string()))
                .collect(),
            Some(rest) => match resolve_item(model, defs, rest) {
                Some(item) => vec![item],
                None => {
                    unknown.push(unknown_target(target, tools, Some(model)));
                    continue;
                }
            },
        };
        for item in items {
            let request = (namespace.to_string(), item);
            if !requests.contains(&request) {
                requests.push(request);
            }
        }
    }
    if !unknown.is_empty() {
        return Err(DescribeError::UnknownTargets(unknown));
    }
    if requests.is_empty() {
        return Ok(CALL_OPTIONS_DECLARATION.to_string());
    }

    // Per-item token counts are an estimate of the whole; when the assembled text still
    // overshoots, plan again with the overshoot held back.
    let mut reserve = 0;
    let mut text = String::new();
    for _ in 0..PLAN_ROUNDS {
        let plan = plan(&models, &requests, budget_tokens.saturating_sub(reserve));
        text = plan.render(&models, budget_tokens);
        let used = token_count::count(&text);
        if used <= budget_tokens || plan.shown <= 1 {
            break;
        }
        // At least double the reserve: an overshoot of a token or two would otherwise take a
        // round each and could outlast the rounds.
        reserve += (used - budget_tokens).max(reserve).max(1);
    }
    if call_options {
        text.push('\n');
        text.push_str(CALL_OPTIONS_DECLARATION);
    }
    Ok(text)
}

/// The namespace whose declarations name the type `name`, when exactly one does; else the
/// qualified names of all that do (none when no namespace has it).
fn bare_type<'t>(
    by_namespace: &HashMap<&'t str, Vec<&'t ToolDefinition>>,
    models: &mut HashMap<&'t str, NamespaceTypes>,
    name: &str,
) -> Result<&'t str, Vec<String>> {
    let mut owners: Vec<&'t str> = Vec::new();
    for (&namespace, defs) in by_namespace {
        let model = models
            .entry(namespace)
            .or_insert_with(|| NamespaceTypes::build(namespace, defs.iter().copied()));
        if model.contains_type(name) {
            owners.push(namespace);
        }
    }
    match owners.as_slice() {
        [only] => Ok(only),
        _ => {
            let mut names: Vec<String> = owners.iter().map(|ns| format!("{ns}.{name}")).collect();
            names.sort();
            Err(names)
        }
    }
}

/// `rest` of `namespace.rest`: a tool by its address name or its upstream name, else a type.
fn resolve_item(model: &NamespaceTypes, defs: &[&ToolDefinition], rest: &str) -> Option<Item> {
    if model.contains_tool(rest) {
        return Some(Item::Tool(rest.to_string()));
    }
    if let Some(def) = defs
        .iter()
        .find(|d| d.upstream_name == rest || tool_name(rest) == d.name)
    {
        return Some(Item::Tool(def.name.clone()));
    }
    model
        .contains_type(rest)
        .then(|| Item::Type(rest.to_string()))
}

fn unknown_target(
    target: &str,
    tools: &[ToolDefinition],
    model: Option<&NamespaceTypes>,
) -> UnknownTarget {
    let mut candidates: Vec<String> = tools.iter().map(ToolDefinition::address).collect();
    let namespaces: HashSet<&str> = tools.iter().map(|t| t.namespace.as_str()).collect();
    candidates.extend(namespaces.into_iter().map(str::to_string));
    if let Some(model) = model {
        candidates.extend(
            model
                .type_names()
                .map(|t| format!("{}.{t}", model.namespace())),
        );
    }
    candidates.sort();
    candidates.dedup();
    UnknownTarget {
        target: target.to_string(),
        closest: closest(target, &candidates),
    }
}

/// The best fuzzy matches; when the whole target matches nothing, its last part alone is tried
/// (a misspelt namespace should not hide the right tool).
fn closest(target: &str, candidates: &[String]) -> Vec<String> {
    let tail = target.rsplit('.').next().unwrap_or(target);
    [target, tail]
        .into_iter()
        .map(|query| {
            crate::model::closest::closest(
                query,
                candidates.iter().map(String::as_str),
                SUGGESTIONS,
            )
        })
        .find(|found| !found.is_empty())
        .map(|found| found.into_iter().map(String::from).collect())
        .unwrap_or_default()
}

/// What one round decided to show, per namespace in the order the targets touched them.
struct Plan {
    namespaces: Vec<String>,
    members: HashMap<String, (Vec<String>, Vec<String>)>,
    omitted: Vec<String>,
    shown: usize,
}

fn plan(
    models: &HashMap<&str, NamespaceTypes>,
    requests: &[(String, Item)],
    budget: usize,
) -> Plan {
    let mut plan = Plan {
        namespaces: Vec::new(),
        members: HashMap::new(),
        omitted: Vec::new(),
        shown: 0,
    };
    let mut used = 0;
    let mut seen: HashSet<(String, Item)> = HashSet::new();
    let mut dependencies: VecDeque<(String, Item)> = VecDeque::new();
    let mut queue: VecDeque<(String, Item)> = requests.iter().cloned().collect();
    // Requested items first, in order; then the types they need, breadth first.
    while let Some((namespace, item)) = queue.pop_front().or_else(|| dependencies.pop_front()) {
        if !seen.insert((namespace.clone(), item.clone())) {
            continue;
        }
        let Some(model) = models.get(namespace.as_str()) else {
            continue;
        };
        let shown_here = plan.members.get(&namespace);
        let first_of_kind = match &item {
            Item::Tool(_) => shown_here.is_none_or(|(tools, _)| tools.is_empty()),
            Item::Type(_) => shown_here.is_none_or(|(_, types)| types.is_empty()),
        };
        let Some(member) = render_item(model, &item, true) else {
            continue;
        };
        // The block around the first member of its kind costs tokens too.
        let wrapper = if first_of_kind {
            let empty = [String::new()];
            let text = match item {
                Item::Tool(_) => model.assemble(&empty, &[]),
                Item::Type(_) => model.assemble(&[], &empty),
            };
            token_count::count(&text)
        } else {
            0
        };
        let cost = token_count::count(&member) + wrapper;
        let counted = |m: String| {
            let cost = token_count::count(&m) + wrapper;
            (m, cost)
        };
        // The member, its cost, and whether it is a stub: a stub stands for the whole item, so
        // the types its declaration would name are not shown.
        let member = if used + cost <= budget {
            Some((member, cost, false))
        } else if plan.shown == 0 {
            // Something must be shown, or the model could never see this item at all: without
            // its fields' docs, or else as a stub that says how large it is.
            match render_item(model, &item, false).map(counted) {
                Some((_, bare_cost)) if bare_cost > budget => stub_item(model, &item, cost, budget)
                    .map(counted)
                    .map(|(m, cost)| (m, cost, true)),
                bare => bare.map(|(m, cost)| (m, cost, false)),
            }
        } else {
            None
        };
        let Some((member, cost, stubbed)) = member else {
            plan.omitted.push(match &item {
                Item::Tool(name) | Item::Type(name) => format!("{namespace}.{name}"),
            });
            continue;
        };
        used += cost;
        plan.shown += 1;
        if !plan.namespaces.contains(&namespace) {
            plan.namespaces.push(namespace.clone());
        }
        let entry = plan.members.entry(namespace.clone()).or_default();
        let needs = match &item {
            Item::Tool(name) => {
                entry.0.push(member);
                model.tool_dependencies(name)
            }
            Item::Type(name) => {
                entry.1.push(member);
                model.type_dependencies(name)
            }
        };
        if !stubbed {
            dependencies.extend(
                needs
                    .into_iter()
                    .map(|t| (namespace.clone(), Item::Type(t.to_string()))),
            );
        }
    }
    plan
}

/// The start of a stub's note.
const STUB_MARK: &str = "@remarks Its declaration is about ";

/// An item whose declaration (`tokens` long) is over `budget` even without its fields' docs:
/// its description and signature with the input `unknown`, and a note on what to do.
fn stub_item(model: &NamespaceTypes, item: &Item, tokens: usize, budget: usize) -> Option<String> {
    let advice = if tokens < MAX_BUDGET_TOKENS as usize {
        format!(
            "describe it alone with a budget of {} or more",
            thousands(tokens.next_multiple_of(100) + 100)
        )
    } else {
        format!(
            "no budget is that large (at most {}); a call with wrong arguments is refused with the path and the rule it breaks",
            thousands(MAX_BUDGET_TOKENS as usize)
        )
    };
    let note = format!(
        "{STUB_MARK}{} tokens, over the {}-token budget, so its type is not shown: {advice}.",
        thousands(tokens),
        thousands(budget)
    );
    match item {
        Item::Tool(name) => model.tool_stub(name, &note),
        Item::Type(name) => model.type_stub(name, &note),
    }
}

fn render_item(model: &NamespaceTypes, item: &Item, docs: bool) -> Option<String> {
    match item {
        Item::Tool(name) => model.tool_member(name, docs),
        Item::Type(name) => model.type_member(name, docs),
    }
}

impl Plan {
    fn render(&self, models: &HashMap<&str, NamespaceTypes>, budget: usize) -> String {
        let mut blocks: Vec<String> = self
            .namespaces
            .iter()
            .filter_map(|namespace| {
                let model = models.get(namespace.as_str())?;
                let (tools, types) = self.members.get(namespace)?;
                Some(model.assemble(tools, types))
            })
            .collect();
        if !self.omitted.is_empty() {
            // Naming hundreds of omitted items would itself blow the budget; a few, and a count.
            let named: Vec<&str> = self
                .omitted
                .iter()
                .take(MAX_NAMED_OMISSIONS)
                .map(String::as_str)
                .collect();
            let more = self.omitted.len() - named.len();
            let rest = if more > 0 {
                format!(" and {more} more (search with a namespace lists them)")
            } else {
                String::new()
            };
            blocks.push(format!(
                "// Not shown within the {}-token budget: {}{rest} — describe them by name.\n",
                thousands(budget),
                named.join(", ")
            ));
        }
        blocks.join("\n").trim_end().to_string()
    }
}

/// How many omitted tools and types the trailing comment names.
const MAX_NAMED_OMISSIONS: usize = 12;

/// `2500` → `2,500`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::fixtures::{definitions, fixture_dir, load_all};
    use crate::catalog::typescript::tests::parses;
    use crate::model::tool::{UpstreamTool, build_namespace};
    use serde_json::json;

    fn fixtures() -> Vec<ToolDefinition> {
        definitions(&load_all(&fixture_dir()).unwrap_or_default())
    }

    fn targets(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    /// A small `github` namespace with an output type that has a nested, named part.
    fn github() -> Vec<ToolDefinition> {
        let issue = json!({
            "title": "Issue",
            "type": "object",
            "properties": {
                "number": {"type": "integer"},
                "user": {"type": "object", "properties": {
                    "login": {"type": "string"},
                    "address": {"type": "object", "properties": {"city": {"type": "string"}}}
                }}
            },
            "required": ["number"]
        });
        let tool =
            |name: &str, description: &str, output: Option<serde_json::Value>| UpstreamTool {
                name: name.into(),
                title: None,
                description: Some(description.into()),
                input_schema: json!({"type": "object", "properties": {
                "owner": {"type": "string", "description": "Who owns the repository."},
                "repo": {"type": "string"}
            }, "required": ["owner", "repo"]}),
                output_schema: output,
                annotations: Default::default(),
                endpoint: None,
            };
        build_namespace(
            "github",
            vec![
                tool(
                    "createIssue",
                    "Create an issue in a repository.",
                    Some(issue.clone()),
                ),
                tool("get_issue", "Get one issue.", Some(issue)),
                tool("listRepos", "List repositories.", None),
            ],
            &[],
        )
    }

    #[test]
    fn a_bare_type_name_resolves_when_one_namespace_declares_it() {
        let tools = github();
        let bare = describe(&tools, &targets(&["Issue"]), 2_500).unwrap();
        let qualified = describe(&tools, &targets(&["github.Issue"]), 2_500).unwrap();
        assert_eq!(bare, qualified);
        let mut twice = tools.clone();
        twice.extend(github().into_iter().map(|mut t| {
            t.namespace = "gitlab".into();
            t
        }));
        let err = describe(&twice, &targets(&["Issue"]), 2_500).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("closest: github.Issue, gitlab.Issue"),
            "an ambiguous name lists each qualified one: {text}"
        );
    }

    #[test]
    fn call_options_can_be_described_alone_or_with_tools() {
        let alone = describe(&github(), &targets(&["CallOptions"]), 2_500).unwrap();
        assert!(alone.contains("interface CallOptions {"), "{alone}");
        assert!(alone.contains("connection?: string;"), "{alone}");
        parses(&alone);
        let both = describe(
            &github(),
            &targets(&["github.listRepos", "CallOptions"]),
            2_500,
        )
        .unwrap();
        assert!(
            both.contains("listRepos(") && both.contains("interface CallOptions"),
            "{both}"
        );
    }

    #[test]
    fn unknown_targets_point_each_reader_at_its_own_search() {
        let err = describe(&github(), &targets(&["github.nope"]), 2_500).unwrap_err();
        let agent = err.message_for(&Reader::Agent);
        assert!(agent.ends_with("; search finds addresses."), "{agent}");
        let person = err.message_for(&Reader::cli(Some(std::path::Path::new("/x.toml"))));
        assert!(
            person.contains("`capabilities --config /x.toml search WORDS` finds addresses"),
            "{person}"
        );
    }

    #[test]
    fn target_count_is_checked() {
        let tools = github();
        assert_eq!(describe(&tools, &[], 2_500), Err(DescribeError::NoTargets));
        let many = vec!["github".to_string(); MAX_TARGETS + 1];
        let err = describe(&tools, &many, 2_500).unwrap_err();
        assert_eq!(err, DescribeError::TooManyTargets(11));
        assert!(err.to_string().contains("at most 10"), "{err}");
        assert!(describe(&tools, &vec!["github".to_string(); MAX_TARGETS], 2_500).is_ok());
    }

    #[test]
    fn unknown_targets_name_the_closest_addresses() {
        let tools = github();
        let err = describe(
            &tools,
            &targets(&["githb.createIsue", "github.listRepos", "nothing"]),
            2_500,
        )
        .unwrap_err();
        let DescribeError::UnknownTargets(unknown) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(unknown.len(), 2);
        assert_eq!(unknown[0].target, "githb.createIsue");
        assert_eq!(
            unknown[0].closest.first().map(String::as_str),
            Some("github.createIssue")
        );
        assert_eq!(unknown[1].target, "nothing");
        let message = err.to_string();
        assert!(
            message.contains("unknown target `githb.createIsue`; closest: github.createIssue"),
            "{message}"
        );
        assert!(message.contains("search finds addresses"), "{message}");
        // A misspelt namespace still finds the tool by its own name.
        let err = describe(&tools, &targets(&["gitlab.getIssue"]), 2_500).unwrap_err();
        assert!(err.to_string().contains("github.getIssue"), "{err}");
        // Types of the namespace are suggested too.
        let err = describe(&tools, &targets(&["github.Isue"]), 2_500).unwrap_err();
        assert!(err.to_string().contains("github.Issue"), "{err}");
    }

    #[test]
    fn an_address_brings_the_types_it_needs() {
        let text =
            describe(&github(), &targets(&["github.createIssue"]), 2_500).unwrap_or_default();
        assert_eq!(
            text,
            "declare const github: {
\t/** Create an issue in a repository. */
\tcreateIssue(input: {
\t\t/** Who owns the repository. */
\t\towner: string;
\t\trepo: string;
\t}, options?: CallOptions): Promise<github.Issue>;
};
declare namespace github {
\tinterface Issue {
\t\tnumber: number;
\t\tuser?: {
\t\t\tlogin?: string;
\t\t\taddress?: IssueUserAddress;
\t\t};
\t}
\tinterface IssueUserAddress {
\t\tcity?: string;
\t}
}"
        );
        parses(&text);
    }

    #[test]
    fn types_upstream_names_and_repeats_resolve() {
        let tools = github();
        let text = describe(
            &tools,
            &targets(&[
                " github.IssueUserAddress ",
                "github.get_issue",
                "github.getIssue",
            ]),
            2_500,
        )
        .unwrap_or_default();
        assert_eq!(text.matches("getIssue(").count(), 1, "{text}");
        assert!(text.contains("interface IssueUserAddress"), "{text}");
        assert!(text.contains("interface Issue {"), "{text}");
        assert!(!text.contains("createIssue"), "{text}");
        parses(&text);
    }

    #[test]
    fn a_type_alone_is_a_namespace_block() {
        let text =
            describe(&github(), &targets(&["github.IssueUserAddress"]), 2_500).unwrap_or_default();
        assert_eq!(
            text,
            "declare namespace github {\n\tinterface IssueUserAddress {\n\t\tcity?: string;\n\t}\n}"
        );
    }

    #[test]
    fn what_does_not_fit_is_named_for_a_follow_up() {
        let tools = github();
        let full = describe(&tools, &targets(&["github"]), 2_500).unwrap_or_default();
        assert!(!full.contains("Not shown"), "{full}");
        let budget = token_count::count(&full) - 20;
        let text = describe(&tools, &targets(&["github"]), budget).unwrap_or_default();
        assert!(
            token_count::count(&text) <= budget,
            "{} > {budget}\n{text}",
            token_count::count(&text)
        );
        // The return type is the last thing requested, so it is what gives way; the type only
        // it needs is not listed, since describing `github.Issue` brings it along.
        assert!(
            text.ends_with(&format!(
                "// Not shown within the {budget}-token budget: github.Issue — describe them by name."
            )),
            "{text}"
        );
        parses(&text);
    }

    #[test]
    fn a_huge_namespace_stays_within_the_budget() {
        let tools: Vec<ToolDefinition> = (0..300)
            .flat_map(|i| {
                build_namespace(
                    "big",
                    vec![UpstreamTool {
                        name: format!("tool_number_{i}"),
                        title: None,
                        description: Some(format!("Does thing number {i} with care.")),
                        input_schema: json!({"type": "object", "properties": {"value": {"type": "string", "description": "The value."}}, "required": ["value"]}),
                        output_schema: None,
                        annotations: Default::default(),
                        endpoint: None,
                    }], &[],
                )
            })
            .collect();
        let text = describe(&tools, &targets(&["big"]), DEFAULT_BUDGET_TOKENS).unwrap_or_default();
        assert!(
            token_count::count(&text) <= DEFAULT_BUDGET_TOKENS,
            "{} tokens",
            token_count::count(&text)
        );
        assert!(
            text.contains("more (search with a namespace lists them)"),
            "{text}"
        );
        parses(&text);
    }

    #[test]
    fn five_hundred_real_tools_in_one_namespace_stay_within_the_budget() {
        let servers = load_all(&fixture_dir()).unwrap_or_default();
        let upstream: Vec<UpstreamTool> = servers
            .iter()
            .flat_map(|s| {
                s.tools
                    .iter()
                    .map(move |t| (s.namespace.clone(), t.clone()))
            })
            .cycle()
            .take(500)
            .enumerate()
            .map(|(i, (ns, mut tool))| {
                tool.name = format!("{ns}_{}_{i}", tool.name);
                tool
            })
            .collect();
        let tools = build_namespace("big", upstream, &[]);
        for budget in [DEFAULT_BUDGET_TOKENS, 1_000, 4_000] {
            let text = describe(&tools, &targets(&["big"]), budget).unwrap_or_default();
            assert!(
                token_count::count(&text) <= budget,
                "{} > {budget}",
                token_count::count(&text)
            );
        }
    }

    #[test]
    fn the_first_item_shows_even_over_a_tiny_budget() {
        // Field docs are the first thing to go.
        let bare = describe(&github(), &targets(&["github.createIssue"]), 50).unwrap_or_default();
        assert!(
            bare.contains("createIssue(input: {\n\t\towner: string;"),
            "{bare}"
        );
        assert!(!bare.contains("Who owns"), "{bare}");
        // Then the type itself: a stub says how large it is and what to ask for.
        let text = describe(
            &github(),
            &targets(&["github.createIssue", "github.listRepos"]),
            10,
        )
        .unwrap_or_default();
        assert!(
            text.contains("createIssue(input: unknown, options?: CallOptions)"),
            "{text}"
        );
        assert!(text.contains(STUB_MARK), "{text}");
        assert!(
            text.contains("describe it alone with a budget of"),
            "{text}"
        );
        assert!(
            // A stub names no type, so none is owed.
            text.ends_with(
                "// Not shown within the 10-token budget: github.listRepos — describe them by name."
            ),
            "{text}"
        );
    }

    #[test]
    fn namespaces_come_in_target_order() {
        let mut tools = github();
        tools.extend(build_namespace(
            "slack",
            vec![UpstreamTool {
                name: "post_message".into(),
                title: None,
                description: Some("Post a message.".into()),
                input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                output_schema: None,
                annotations: Default::default(),
                endpoint: None,
            }], &[],
        ));
        let text = describe(
            &tools,
            &targets(&["slack.postMessage", "github.listRepos"]),
            2_500,
        )
        .unwrap_or_default();
        let slack = text.find("declare const slack").unwrap_or(usize::MAX);
        let github = text.find("declare const github").unwrap_or(0);
        assert!(slack < github, "{text}");
        parses(&text);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2_500), "2,500");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    /// Every recorded namespace described whole, at the default budget: valid TypeScript that
    /// stays within the budget.
    #[test]
    fn fixture_namespaces_describe_within_budget() {
        let tools = fixtures();
        let mut namespaces: Vec<&str> = tools.iter().map(|t| t.namespace.as_str()).collect();
        namespaces.dedup();
        assert!(!namespaces.is_empty());
        for namespace in namespaces {
            let text = describe(&tools, &[namespace.to_string()], DEFAULT_BUDGET_TOKENS)
                .unwrap_or_default();
            assert!(
                token_count::count(&text) <= DEFAULT_BUDGET_TOKENS,
                "{namespace}: {}",
                token_count::count(&text)
            );
            parses(&text);
        }
    }

    #[test]
    fn fixture_describe_snapshots() {
        let tools = fixtures();
        let cases: [&[&str]; 3] = [
            &["github"],
            &[
                "everything.getStructuredContent",
                "fs.readMediaFile",
                "everything.echo",
            ],
            &["notion.API-create-a-comment", "firecrawl.firecrawlScrape"],
        ];
        for case in cases {
            let text = describe(&tools, &targets(case), DEFAULT_BUDGET_TOKENS)
                .unwrap_or_else(|e| e.to_string());
            insta::assert_snapshot!(format!("describe_{}", case.join("+")), text);
        }
    }

    /// A tool whose input nests `anyOf` 16 levels deep through `$defs`, each level's three
    /// branches holding the next: tiny as JSON, combinatorial once inlined.
    fn branching_tool() -> Vec<ToolDefinition> {
        let mut defs = serde_json::Map::new();
        for i in 0..16 {
            let next = json!({"$ref": format!("#/$defs/L{}", i + 1)});
            defs.insert(
                format!("L{i}"),
                json!({"anyOf": [next, {"type": "array", "items": next}, {"type": "object", "properties": {"n": next}}]}),
            );
        }
        defs.insert("L16".into(), json!({"type": "string"}));
        build_namespace(
            "hostile",
            vec![UpstreamTool {
                name: "branches".into(),
                title: None,
                description: Some("Takes a deeply branching value.".into()),
                input_schema: json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/L0"}}, "$defs": defs}),
                output_schema: None,
                annotations: Default::default(),
                endpoint: None,
            }],
            &[],
        )
    }

    #[test]
    fn a_hostile_declaration_stays_within_the_budget() {
        let tools = branching_tool();
        for budget in [200, 2_500] {
            let text = describe(&tools, &targets(&["hostile.branches"]), budget).unwrap();
            let used = token_count::count(&text);
            assert!(
                used <= budget,
                "{used} tokens at a budget of {budget}:\n{text}"
            );
            assert!(text.contains("branches("), "{text}");
            parses(&text);
        }
    }

    #[test]
    fn unknown_targets_are_echoed_short() {
        let long = format!("github.{}", "x".repeat(1_000_000));
        let err = describe(&github(), &targets(&[&long]), 2_500).unwrap_err();
        let text = err.to_string();
        assert!(text.len() < 1_000, "{} bytes", text.len());
        assert!(text.contains("…(+"), "{text}");
    }
}
