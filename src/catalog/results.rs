//! `search` answers in plain text, exactly in the spec's shape: a header per namespace (with its
//! connections, the default starred), a signature line and a description line per tool, `[asks]`
//! where policy wants a person, `[changed]` where the definition changed since it was confirmed, a count of tools a deny policy hides, and a hint when truncated.

use crate::error_text::echo;
use std::fmt::Write;

use super::changes::ChangedTools;
use super::search::{Hit, Ranking, SearchIndex};
use super::typescript::NamespaceTypes;
use super::{Catalog, Namespace, Origin, ToolDefinition};
use crate::model::{Permits, Reader};
use crate::policy::{Action, Policy};
use crate::skills::index::{INDEX_NAMESPACE, skill_of_hit};
use crate::skills::{PREFIX, Skill, Skills};

/// What to search for.
#[derive(Clone, Copy)]
pub struct SearchRequest<'a> {
    pub query: &'a str,
    pub namespace: Option<&'a str>,
    pub limit: usize,
    /// The addresses this client may call at all (a bearer token's patterns); the others are
    /// hidden like denied tools.
    pub permits: Permits<'a>,
    /// Tools whose definition changed since a person confirmed it: marked `[changed]`, and
    /// `[asks]` when the policy makes their calls ask until someone confirms.
    pub changed: Option<&'a ChangedTools>,
    /// Who reads the answer's hints: an agent gets argument names, a person flags.
    pub reader: &'a Reader,
    /// The skills the index holds documents of, to show the ones that match (`skill:NAME —
    /// description`); `None` shows none.
    pub skills: Option<&'a Skills>,
}

/// At most this many skills in one answer: they point the model at instructions, and a few
/// are enough to choose from.
const MAX_SKILLS: usize = 5;

/// A search that cannot run, with what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SearchError(pub String);

/// One tool in a search answer, as `--json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub address: String,
    pub namespace: String,
    /// The one-line TypeScript signature (cut inside a very long input type).
    pub signature: String,
    /// The first sentence of the description.
    pub summary: String,
    /// A call needs a person's decision.
    pub asks: bool,
    /// The definition changed since a person confirmed it.
    pub changed: bool,
}

/// A search's answer in parts: the results as text, the notes about sources that were not
/// searched (a person's terminal shows them on stderr, apart from the results), and the hits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchAnswer {
    /// What the spec's plain-text answer says before the notes: the hits grouped by
    /// namespace, or why there are none, and the counts of more and hidden tools.
    pub text: String,
    /// One line per source whose tools are missing or old; empty when every one was searched.
    pub notes: String,
    pub hits: Vec<SearchHit>,
}

/// Runs a search over `catalog` and renders the answer as one text, notes last.
pub fn render_search(
    catalog: &Catalog,
    index: &SearchIndex,
    policy: &Policy,
    request: &SearchRequest,
) -> Result<String, SearchError> {
    let answer = search_answer(catalog, index, policy, request)?;
    Ok(answer.text + &answer.notes)
}

/// Runs a search over `catalog` and returns its answer in parts.
pub fn search_answer(
    catalog: &Catalog,
    index: &SearchIndex,
    policy: &Policy,
    request: &SearchRequest,
) -> Result<SearchAnswer, SearchError> {
    let reader = request.reader;
    // What a client's token does not let it call does not exist for it: not listed, not
    // counted, not named among the sources.
    let sources = || known_sources(catalog, request.permits);
    if let Some(namespace) = request.namespace
        && !catalog
            .namespace(namespace)
            .is_some_and(|n| n.seen_by(request.permits))
    {
        return Err(SearchError(format!(
            "there is no source named `{}`; {}",
            echo(namespace),
            sources()
        )));
    }
    let query = request.query.trim();
    let ranking = index.search(query, request.namespace);
    let listing = ranking == Ranking::NoTerms;
    // Skills rank in the same index; they are shown apart from the tools, best first.
    // Taken out in place: a generic request ranks thousands of tools and a handful of skills.
    let (tool_hits, skill_hits): (Vec<Hit>, Vec<Hit>) = match ranking {
        // Without skills indexed there is nothing to take out, and looking at every hit's
        // address was about 2% of the hub's time in the 10,000-tool benchmark.
        Ranking::Ranked(hits) if !index.has_namespace(INDEX_NAMESPACE) => (hits, Vec::new()),
        Ranking::Ranked(mut hits) => {
            let skills = hits
                .extract_if(.., |hit| skill_of_hit(hit.address).is_some())
                .collect();
            (hits, skills)
        }
        Ranking::NoTerms => (Vec::new(), Vec::new()),
    };
    let skills: Vec<(&Skill, f64)> = match request.skills {
        Some(skills) => skill_hits
            .iter()
            .filter_map(|hit| Some((skills.get(skill_of_hit(hit.address)?)?, hit.score)))
            .take(MAX_SKILLS.min(request.limit))
            .collect(),
        None => Vec::new(),
    };
    let matches = if !listing {
        Matches::Ranked(&tool_hits)
    } else {
        // No words to rank by: list the namespace if one was given, else say what to do.
        let Some(namespace) = request.namespace.and_then(|n| catalog.namespace(n)) else {
            let what = if query.is_empty() {
                "the query is empty".to_string()
            } else {
                format!("the query \"{}\" has no words to search by", echo(query))
            };
            let list = match reader {
                Reader::Agent => "pass a namespace to list one source".to_string(),
                Reader::Cli { .. } => format!(
                    "list one source with `{}`",
                    reader.command("search '' --namespace NAME")
                ),
            };
            return Err(SearchError(format!(
                "{what}: say what you want to do, e.g. \"send a message\" or \"list open issues\", or {list}; {}",
                sources()
            )));
        };
        Matches::Listed(&namespace.tools)
    };

    let connection = |tool: &ToolDefinition| {
        catalog
            .namespace(&tool.namespace)
            .and_then(|n| n.connections.first())
            .map(String::as_str)
    };
    let denied = |tool: &ToolDefinition, address: &str| {
        policy.hides(address, connection(tool), &tool.annotations, Permits::ALL)
    };
    // What a shown tool's line says: a changed tool the policy allows asks until confirmed.
    let decide = |tool: &ToolDefinition, address: &str| {
        let action = policy.action(address, connection(tool), &tool.annotations);
        let changed = request
            .changed
            .is_some_and(|c| c.asks(tool, policy.confirm_changes));
        if action == Action::Allow && changed {
            Action::Ask
        } else {
            action
        }
    };
    // Only the shown tools are decided in full; the rest are only counted, and checked one by
    // one only when something can hide them.
    let mut shown: Vec<(&ToolDefinition, Action)> = Vec::new();
    let (found, visible) = if request.permits.narrows() || policy.may_deny() {
        let (mut found, mut visible) = (0, 0);
        for tool in matches.tools(catalog) {
            let address = tool.address();
            if !request.permits.allows(&address) {
                continue;
            }
            found += 1;
            if denied(tool, &address) {
                continue;
            }
            visible += 1;
            if shown.len() < request.limit {
                shown.push((tool, decide(tool, &address)));
            }
        }
        (found, visible)
    } else {
        // The index and the catalogue change together under one lock, so every hit is listed.
        for tool in matches.tools(catalog).take(request.limit) {
            shown.push((tool, decide(tool, &tool.address())));
        }
        (matches.len(), matches.len())
    };
    let hidden = found - visible;

    let mut out = String::new();
    if visible == 0 && skills.is_empty() {
        if found > 0 {
            let _ = writeln!(out, "Every matching tool is hidden by policy.");
        } else if listing {
            let _ = writeln!(
                out,
                "`{}` has no tools.",
                request.namespace.unwrap_or_default()
            );
        } else {
            let list = match reader {
                Reader::Agent => "list one source with namespace",
                Reader::Cli { .. } => "list one source with --namespace NAME and an empty query",
            };
            let _ = writeln!(
                out,
                "No tools match \"{}\". Try other words for what you want to do, or {list}; {}.",
                echo(query),
                sources()
            );
        }
    }
    // Namespaces appear in the order of their best match; tools keep their rank inside.
    let mut groups: Vec<(&str, Vec<(&ToolDefinition, Action)>)> = Vec::new();
    for (tool, action) in &shown {
        match groups.iter_mut().find(|(ns, _)| *ns == tool.namespace) {
            Some((_, tools)) => tools.push((tool, *action)),
            None => groups.push((&tool.namespace, vec![(tool, *action)])),
        }
    }
    let mut hits = Vec::new();
    // The skills come first when the best of them outranks the best tool.
    let skills_first = match (skills.first(), tool_hits.first()) {
        (Some((_, skill)), Some(tool)) => *skill > tool.score,
        (Some(_), None) => true,
        _ => false,
    };
    let changed_skill = |skill: &Skill| {
        request
            .changed
            .is_some_and(|c| c.contains(&format!("{PREFIX}{}", skill.name)))
    };
    if skills_first {
        render_skills(&skills, &changed_skill, &mut out, &mut hits);
    }
    for (name, tools) in &groups {
        let Some(namespace) = catalog.namespace(name) else {
            continue;
        };
        let _ = writeln!(out, "{}", header(namespace));
        // Built once per listing of the namespace and kept in the index; a namespace the index
        // lacks (never the case in a catalogue built with it) gets its types built here.
        let built;
        let signatures = match index.signatures(name, &namespace.tools) {
            Some(signatures) => signatures,
            None => {
                let types = NamespaceTypes::build(name, &namespace.tools);
                built = namespace
                    .tools
                    .iter()
                    .filter_map(|t| Some((t.name.clone(), types.signature(&t.name)?)))
                    .collect();
                &built
            }
        };
        for (tool, action) in tools {
            let signature = signatures
                .get(&tool.name)
                .map(|s| shorten_signature(s))
                .unwrap_or_else(|| format!("{}(input: unknown): Promise<unknown>", tool.address()));
            let asks = if *action == Action::Ask {
                "   [asks]"
            } else {
                ""
            };
            let changed = if request.changed.is_some_and(|c| c.contains(&tool.address())) {
                "   [changed]"
            } else {
                ""
            };
            let _ = writeln!(out, "  {signature}{asks}{changed}");
            let summary = summary(&tool.description);
            if !summary.is_empty() {
                let _ = writeln!(out, "    {summary}");
            }
            hits.push(SearchHit {
                address: tool.address(),
                namespace: tool.namespace.clone(),
                signature,
                summary,
                asks: !asks.is_empty(),
                changed: !changed.is_empty(),
            });
        }
    }
    if !skills_first {
        render_skills(&skills, &changed_skill, &mut out, &mut hits);
    }
    if visible == 0 && found > 0 && !skills.is_empty() {
        let _ = writeln!(out, "Every matching tool is hidden by policy.");
    }
    let more = visible - shown.len();
    if more > 0 {
        let _ = writeln!(
            out,
            "{more} more {}. Narrow the query, {} or {}.",
            if more == 1 { "match" } else { "matches" },
            reader.namespace_option(),
            reader.limit_option()
        );
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "{hidden} {} hidden by policy.",
            if hidden == 1 { "tool" } else { "tools" }
        );
    }
    Ok(SearchAnswer {
        text: out,
        notes: availability_notes(catalog, request.namespace, request.reader, request.permits),
        hits,
    })
}

/// The matching skills under a `skills` header, one line each: `skill:NAME — description`,
/// and `[changed]` after a source's skill that changed since a person confirmed it.
fn render_skills(
    skills: &[(&Skill, f64)],
    changed: &dyn Fn(&Skill) -> bool,
    out: &mut String,
    hits: &mut Vec<SearchHit>,
) {
    if skills.is_empty() {
        return;
    }
    let _ = writeln!(out, "skills (describe one for its instructions)");
    for (skill, _) in skills {
        let summary = summary(&skill.description);
        let changed = changed(skill);
        let mark = if changed { "   [changed]" } else { "" };
        let _ = writeln!(out, "  {PREFIX}{} — {summary}{mark}", skill.name);
        hits.push(SearchHit {
            address: format!("{PREFIX}{}", skill.name),
            namespace: "skills".into(),
            signature: String::new(),
            summary,
            asks: false,
            changed,
        });
    }
}

/// What a search found, before anything is resolved or checked: ranked hits, or a whole
/// namespace when the query has no words.
enum Matches<'a> {
    Ranked(&'a [Hit<'a>]),
    Listed(&'a [ToolDefinition]),
}

impl<'a> Matches<'a> {
    fn len(&self) -> usize {
        match self {
            Matches::Ranked(hits) => hits.len(),
            Matches::Listed(tools) => tools.len(),
        }
    }

    /// The matching tools in rank order; a hit the catalogue does not list is skipped.
    fn tools(&self, catalog: &'a Catalog) -> Box<dyn Iterator<Item = &'a ToolDefinition> + 'a> {
        match *self {
            Matches::Ranked(hits) => {
                Box::new(hits.iter().filter_map(|hit| catalog.tool(hit.address)))
            }
            Matches::Listed(tools) => Box::new(tools.iter()),
        }
    }
}

/// `github  (connections: personal*, work)`, or just the name when the source has one implicit
/// connection.
fn header(namespace: &Namespace) -> String {
    if !namespace.named_connections {
        return namespace.name.clone();
    }
    let connections: Vec<String> = namespace
        .connections
        .iter()
        .enumerate()
        .map(|(i, c)| if i == 0 { format!("{c}*") } else { c.clone() })
        .collect();
    format!(
        "{}  (connections: {})",
        namespace.name,
        connections.join(", ")
    )
}

/// Longest signature line search prints; `describe` has the whole type.
const MAX_SIGNATURE: usize = 240;

/// Cuts a very long one-line signature inside its input type, at a field boundary, keeping the
/// return type: `ns.tool(input: { a: string; b: number; … }): Promise<R>`.
fn shorten_signature(signature: &str) -> String {
    if signature.chars().count() <= MAX_SIGNATURE {
        return signature.to_string();
    }
    let tail_start = signature.rfind("): Promise<").unwrap_or(signature.len());
    let (head, tail) = signature.split_at(tail_start);
    let budget = MAX_SIGNATURE.saturating_sub(tail.chars().count() + 6);
    let cut: String = head.chars().take(budget).collect();
    match cut.rfind("; ") {
        Some(boundary) => format!("{}; … }}{tail}", &cut[..boundary]),
        None => format!("{cut}…{tail}"),
    }
}

/// The first sentence (or line) of a description, kept short for a one-line summary.
pub fn summary(description: &str) -> String {
    const MAX: usize = 160;
    let first_line = description.trim().lines().next().unwrap_or("").trim();
    let sentence_end = first_line
        .find(". ")
        .map(|i| i + 1)
        .unwrap_or(first_line.len());
    let sentence = &first_line[..sentence_end];
    if sentence.chars().count() <= MAX {
        sentence.to_string()
    } else {
        let cut: String = sentence.chars().take(MAX - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The sources a client sees (all, or those with a tool its token `permits`), with how many
/// of their tools it may call.
fn known_sources(catalog: &Catalog, permits: Permits) -> String {
    let list: Vec<String> = catalog
        .namespaces
        .iter()
        .filter(|n| n.seen_by(permits))
        .map(|n| format!("{} ({} tools)", n.name, n.callable_by(permits)))
        .collect();
    match (list.is_empty(), permits.narrows()) {
        (true, true) => "there is no source this client may use".into(),
        (true, false) => {
            "there are no sources yet: add one with `capabilities source add NAME -- COMMAND ARGS…`"
                .into()
        }
        (false, _) => format!("sources: {}", list.join(", ")),
    }
}

/// One line about the sources whose tools are missing or old, so fewer results are never
/// silent, and never a line per source: with ninety sources down, the answer stays short.
pub fn availability_notes(
    catalog: &Catalog,
    only: Option<&str>,
    reader: &Reader,
    permits: Permits,
) -> String {
    let mut connecting: Vec<&str> = Vec::new();
    let mut missing: Vec<(&str, &str)> = Vec::new();
    let mut old: Vec<(&str, &str)> = Vec::new();
    for namespace in catalog
        .namespaces
        .iter()
        .filter(|n| only.is_none_or(|o| o == n.name) && n.seen_by(permits))
    {
        match &namespace.origin {
            Origin::Unavailable { error } => missing.push((&namespace.name, error)),
            Origin::Connecting => connecting.push(&namespace.name),
            Origin::Stale { error, .. } => old.push((&namespace.name, error)),
            Origin::Live | Origin::Cached { .. } | Origin::Disabled => {}
        }
    }
    let mut parts = Vec::new();
    let connecting_count = connecting.len();
    match (connecting.as_slice(), missing.as_slice()) {
        ([], []) => {}
        ([name], []) => parts.push(format!(
            "Not searched yet: `{name}` is still connecting; search again in a moment"
        )),
        ([], [(name, why)]) => parts.push(format!("Not searched: `{name}` ({why})")),
        (connecting, missing) => {
            let total = connecting.len() + missing.len();
            let connecting = format!(
                "still connecting ({})",
                some_names(connecting.iter().copied())
            );
            let missing_names = some_names(missing.iter().map(|(name, _)| *name));
            parts.push(match (connecting_count, missing.len()) {
                (_, 0) => format!("Not searched: {total} sources {connecting}"),
                (0, _) => format!("Not searched: {total} sources unavailable ({missing_names})"),
                (c, m) => format!(
                    "Not searched: {total} sources, {c} {connecting} and {m} unavailable ({missing_names})"
                ),
            });
        }
    }
    match old.as_slice() {
        [] => {}
        [(name, why)] => parts.push(format!(
            "`{name}` did not answer ({why}); its tools are from an older listing"
        )),
        many => parts.push(format!(
            "{} sources did not answer ({}); their tools are from older listings",
            many.len(),
            some_names(many.iter().map(|(name, _)| *name))
        )),
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "{}; `{}` says why.\n",
        parts.join("; "),
        reader.command("source list")
    )
}

/// `` `a`, `b`, `c` and 4 more ``: enough names to recognise, in a line that stays short.
fn some_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    const SHOWN: usize = 3;
    let more = names.len().saturating_sub(SHOWN);
    let shown: Vec<String> = names.take(SHOWN).map(|name| format!("`{name}`")).collect();
    match more {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_signatures_are_cut_at_a_field_and_keep_the_return_type() {
        let fields: Vec<String> = (0..60).map(|i| format!("field{i}: string")).collect();
        let long = format!(
            "ns.tool(input: {{ {} }}): Promise<Result>",
            fields.join("; ")
        );
        let short = shorten_signature(&long);
        assert!(short.chars().count() <= MAX_SIGNATURE, "{short}");
        assert!(short.ends_with("; … }): Promise<Result>"), "{short}");
        assert!(
            short.starts_with("ns.tool(input: { field0: string; "),
            "{short}"
        );
        assert_eq!(
            shorten_signature("a.b(input: { x: string }): Promise<unknown>"),
            "a.b(input: { x: string }): Promise<unknown>"
        );
    }

    /// A catalogue of one namespace with `count` tools named `sendMessage0…`.
    fn catalog(count: usize) -> Catalog {
        let tools = crate::model::tool::build_namespace(
            "chat",
            (0..count)
                .map(|i| crate::model::UpstreamTool {
                    name: format!("sendMessage{i}"),
                    title: None,
                    description: Some("Send a message to a channel.".into()),
                    input_schema: serde_json::json!({"type": "object"}),
                    output_schema: None,
                    annotations: Default::default(),
                    endpoint: None,
                })
                .collect(),
            &[],
        );
        Catalog {
            namespaces: vec![Namespace {
                name: "chat".into(),
                connections: vec!["default".into()],
                named_connections: false,
                tools,
                skills: Vec::new(),
                origin: Origin::Live,
            }],
        }
    }

    fn answer(catalog: &Catalog, query: &str, limit: usize, reader: &Reader) -> SearchAnswer {
        let mut index = SearchIndex::new();
        for namespace in &catalog.namespaces {
            index.set_namespace(&namespace.name, &namespace.tools);
        }
        let request = SearchRequest {
            query,
            namespace: None,
            limit,
            permits: Permits::ALL,
            changed: None,
            reader,
            skills: None,
        };
        search_answer(catalog, &index, &Policy::default(), &request).unwrap_or_default()
    }

    #[test]
    fn skills_rank_in_the_same_index_and_show_one_line_each() {
        use crate::skills::index::{INDEX_NAMESPACE, documents};
        use crate::skills::{Skill, Skills};
        let catalog = catalog(5);
        let skills = Skills {
            skills: vec![Skill {
                name: "pdf-forms".into(),
                description: "Fill in PDF forms. Use when a PDF has form fields.".into(),
                body: String::new(),
                dir: std::path::PathBuf::new(),
                files: Vec::new(),
                upstream: None,
            }],
            problems: Vec::new(),
        };
        let mut index = SearchIndex::new();
        for namespace in &catalog.namespaces {
            index.set_namespace(&namespace.name, &namespace.tools);
        }
        index.set_namespace(INDEX_NAMESPACE, &documents(&skills));
        let search = |query: &str, skills: Option<&Skills>| {
            let request = SearchRequest {
                query,
                namespace: None,
                limit: 5,
                permits: Permits::ALL,
                changed: None,
                reader: &Reader::Agent,
                skills,
            };
            search_answer(&catalog, &index, &Policy::default(), &request).unwrap_or_default()
        };
        let found = search("fill a pdf form", Some(&skills));
        assert!(
            found.text.starts_with(
                "skills (describe one for its instructions)\n  skill:pdf-forms — Fill in PDF forms.\n"
            ),
            "{}",
            found.text
        );
        assert_eq!(found.hits[0].address, "skill:pdf-forms");
        // Without the skills at hand (a script's hub.search) the hit is left out.
        let without = search("fill a pdf form", None);
        assert!(!without.text.contains("skill:"), "{}", without.text);
        // A query that matches tools only shows no skills.
        let tools = search("send message", Some(&skills));
        assert!(!tools.text.contains("skill:"), "{}", tools.text);
    }

    #[test]
    fn hints_name_arguments_for_agents_and_flags_for_people() {
        let catalog = catalog(5);
        let agent = answer(&catalog, "send message", 2, &Reader::Agent);
        assert!(
            agent
                .text
                .contains("3 more matches. Narrow the query, pass namespace or raise limit."),
            "{}",
            agent.text
        );
        assert_eq!(agent.hits.len(), 2);
        let person = answer(&catalog, "send message", 2, &Reader::cli(None));
        assert!(
            person.text.contains(
                "3 more matches. Narrow the query, pass --namespace NAME or raise --limit."
            ),
            "{}",
            person.text
        );
        let none = answer(&catalog, "zzqx", 2, &Reader::cli(None));
        assert!(none.hits.is_empty());
        assert!(none.text.contains("--namespace NAME"), "{}", none.text);
        let none = answer(&catalog, "zzqx", 2, &Reader::Agent);
        assert!(
            none.text.contains("list one source with namespace;"),
            "{}",
            none.text
        );
    }

    /// Only the shown tools are decided in full, yet the counts of more and hidden tools still
    /// cover every match, past the limit too; what the client's token forbids is not counted.
    #[test]
    fn counts_cover_the_matches_past_the_limit() {
        let catalog = catalog(10);
        let mut index = SearchIndex::new();
        index.set_namespace("chat", &catalog.namespaces[0].tools);
        let policy = Policy {
            rules: vec![crate::policy::Rule {
                pattern: "chat.sendMessage1*".into(),
                action: Action::Deny,
                connection: None,
                version: None,
            }],
            ..Policy::default()
        };
        let permits = |address: &str| !address.ends_with('9');
        let request = SearchRequest {
            query: "send message",
            namespace: None,
            limit: 3,
            permits: Permits::only(&permits),
            changed: None,
            reader: &Reader::Agent,
            skills: None,
        };
        let answer = search_answer(&catalog, &index, &policy, &request).unwrap_or_default();
        assert_eq!(answer.hits.len(), 3, "{}", answer.text);
        assert!(
            answer.text.contains("5 more matches.")
                && answer.text.contains("1 tool hidden by policy."),
            "{}",
            answer.text
        );
        assert!(
            !answer.text.contains("sendMessage1(") && !answer.text.contains("sendMessage9("),
            "{}",
            answer.text
        );
    }

    #[test]
    fn a_source_a_token_may_call_nothing_of_does_not_exist_for_its_client() {
        let mut catalog = catalog(2);
        let mut payroll = catalog.namespaces[0].clone();
        payroll.name = "payroll".into();
        for tool in &mut payroll.tools {
            tool.namespace = "payroll".into();
        }
        catalog.namespaces.push(payroll);
        let mut index = SearchIndex::new();
        for namespace in &catalog.namespaces {
            index.set_namespace(&namespace.name, &namespace.tools);
        }
        let permits = |address: &str| address.starts_with("chat.");
        let search = |query: &str, namespace: Option<&str>| {
            let request = SearchRequest {
                query,
                namespace,
                limit: 10,
                permits: Permits::only(&permits),
                changed: None,
                reader: &Reader::Agent,
                skills: None,
            };
            search_answer(&catalog, &index, &Policy::default(), &request)
        };
        let unknown = |namespace: &str| match search("", Some(namespace)) {
            Err(SearchError(message)) => message,
            Ok(answer) => panic!("listed {namespace}: {}", answer.text),
        };
        // Named as it is, or as a name that never existed: the same answer.
        let forbidden = unknown("payroll");
        assert_eq!(
            forbidden.replace("payroll", "nothing"),
            unknown("nothing"),
            "{forbidden}"
        );
        assert!(
            forbidden.ends_with("sources: chat (2 tools)"),
            "{forbidden}"
        );
        // Its matches are neither shown nor counted.
        let answer = search("send message", None).unwrap_or_default();
        assert_eq!(answer.hits.len(), 2, "{}", answer.text);
        assert!(
            !answer.text.contains("payroll") && !answer.text.contains("hidden"),
            "{}",
            answer.text
        );
        // Without a token, the same search sees both.
        let request = SearchRequest {
            query: "send message",
            namespace: None,
            limit: 10,
            permits: Permits::ALL,
            changed: None,
            reader: &Reader::Agent,
            skills: None,
        };
        let all = search_answer(&catalog, &index, &Policy::default(), &request).unwrap_or_default();
        assert_eq!(all.hits.len(), 4, "{}", all.text);
    }

    #[test]
    fn notes_about_sources_come_apart_from_the_results() {
        let mut catalog = catalog(1);
        catalog.namespaces.push(Namespace {
            name: "web".into(),
            connections: vec!["default".into()],
            named_connections: false,
            tools: Vec::new(),
            skills: Vec::new(),
            origin: Origin::Unavailable {
                error: "no answer".into(),
            },
        });
        let answer = answer(&catalog, "send message", 10, &Reader::Agent);
        assert!(!answer.text.contains("web"), "{}", answer.text);
        assert!(answer.notes.contains("`web`"), "{}", answer.notes);
    }

    #[test]
    fn many_sources_not_searched_make_one_short_line() {
        let mut catalog = catalog(1);
        for i in 0..94 {
            catalog.namespaces.push(Namespace {
                name: format!("down{i}"),
                connections: vec!["default".into()],
                named_connections: false,
                tools: Vec::new(),
                skills: Vec::new(),
                origin: Origin::Unavailable {
                    error: "did not answer within 30 s".into(),
                },
            });
        }
        let answer = answer(&catalog, "send message", 10, &Reader::Agent);
        assert_eq!(answer.notes.lines().count(), 1, "{}", answer.notes);
        assert!(
            answer.notes.starts_with(
                "Not searched: 94 sources unavailable (`down0`, `down1`, `down2` and 91 more); `capabilities source list` says why."
            ),
            "{}",
            answer.notes
        );
        assert!(answer.notes.len() < 200, "{}", answer.notes);
    }

    #[test]
    fn summaries_take_the_first_sentence() {
        assert_eq!(summary("Echoes back. Then more."), "Echoes back.");
        assert_eq!(summary("  first line\nsecond"), "first line");
        assert!(summary(&"x".repeat(500)).ends_with('…'));
    }
}
