//! BM25F ranking of catalogued tools for `search`: tokenising (case and separator splitting, stop
//! words, English stemming), the per-namespace inverted index with its incremental updates, and
//! scoring. It indexes only what a [`ToolDefinition`] says about a tool — name, namespace, title,
//! description and parameters — so connection names can never match.

use std::collections::{BTreeMap, HashMap};

use foldhash::fast::RandomState;

use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;

use crate::model::tool::ToolDefinition;

/// The fields of a tool document. Each has its own weight and length normalisation; the
/// discriminant is the field's slot in per-field arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// Words of the upstream tool name (`create_issue`, `getSum`, `API-post-search`).
    Name = 0,
    /// The namespace as a word, so "github" finds the tools of the `github` source.
    Namespace,
    Title,
    Description,
    /// Property names of the input schema, top-level and nested.
    Params,
    /// Descriptions of those properties: many words, weak evidence.
    ParamDescriptions,
}

const FIELDS: usize = 6;

/// Per-field weight and BM25 `b`, in slot order. Names and titles are short and say what the tool does, so they
/// weigh most; parameter descriptions are long and often generic ("the page number"), so least.
const FIELD_PARAMS: [(Field, f64, f64); FIELDS] = [
    (Field::Name, 3.0, 0.4),
    (Field::Namespace, 1.5, 0.0),
    (Field::Title, 2.0, 0.4),
    (Field::Description, 1.0, 0.75),
    (Field::Params, 0.6, 0.5),
    (Field::ParamDescriptions, 0.25, 0.75),
];

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;

/// How deep the schema walk goes; deeper properties rarely name what a tool does, and a bound
/// keeps hostile schemas from costing much.
const MAX_SCHEMA_DEPTH: usize = 6;

/// Words that say nothing about which tool is meant. Kept short on purpose: words like "all",
/// "new" or "get" do carry meaning in tool names.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please",
    "so", "some", "that", "the", "their", "then", "there", "this", "to", "was", "we", "what",
    "when", "which", "who", "will", "with", "you", "your",
];

/// Everyday words users type for what tool listings call otherwise ("folder" for "directory",
/// "PR" for "pull request"). A query word also searches its listed words, at
/// [`SYNONYM_WEIGHT`], so the literal word still ranks first. Sorted by the query word.
const SYNONYMS: &[(&str, &[&str])] = &[
    ("alert", &["dialog"]),
    ("coordinates", &["latitude", "longitude"]),
    ("db", &["database"]),
    ("dir", &["directory"]),
    ("doc", &["documentation"]),
    ("docs", &["documentation"]),
    ("documentation", &["docs"]),
    ("download", &["fetch"]),
    ("emoji", &["reaction"]),
    ("erase", &["delete"]),
    ("execute", &["run"]),
    ("find", &["search"]),
    ("folder", &["directory"]),
    ("go", &["navigate"]),
    ("js", &["javascript"]),
    ("lat", &["latitude", "coordinates"]),
    ("latitude", &["coordinates"]),
    ("link", &["relation"]),
    ("lng", &["longitude", "coordinates"]),
    ("longitude", &["coordinates"]),
    ("make", &["create"]),
    ("modal", &["dialog"]),
    ("mr", &["merge", "request"]),
    ("nearby", &["local", "near"]),
    ("open", &["create", "navigate"]),
    ("popup", &["dialog"]),
    ("post", &["send"]),
    ("pr", &["pull", "request"]),
    ("prs", &["pull", "request"]),
    ("react", &["reaction"]),
    ("remember", &["memory"]),
    ("remove", &["delete"]),
    ("rename", &["move"]),
    ("repo", &["repository"]),
    ("repos", &["repository"]),
    ("run", &["execute"]),
    ("send", &["post"]),
    ("site", &["page", "url"]),
    ("ticket", &["issue"]),
    ("visit", &["navigate"]),
    ("webpage", &["page", "url"]),
    ("website", &["page", "url"]),
];

/// How much a synonym counts relative to the word the user typed.
const SYNONYM_WEIGHT: f64 = 0.5;

/// One ranked tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// `namespace.tool`.
    pub address: String,
    pub score: f64,
}

/// The outcome of [`SearchIndex::search`].
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// The query has no word to rank by (empty, or only stop words and punctuation). The caller
    /// decides what that means, e.g. listing the namespace it was given.
    NoTerms,
    /// Tools matching at least one query word, best first; equal scores by address.
    Ranked(Vec<Hit>),
}

/// How often one term occurs in each field of one document.
#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    tf: [u16; FIELDS],
}

/// The indexed tools of one namespace.
#[derive(Debug, Default)]
struct NamespaceIndex {
    addresses: Vec<String>,
    /// Token count per field, per document.
    lengths: Vec<[u16; FIELDS]>,
    postings: Map<TermId, Vec<Posting>>,
}

type TermId = u32;

/// Index builds hash every word of every tool, and SipHash was a fifth of the build time;
/// foldhash is several times faster and still seeded per map, so an upstream cannot precompute
/// colliding tool texts.
type Map<K, V> = HashMap<K, V, RandomState>;

/// Stemmed terms as small integers, with how many documents contain each, over all namespaces.
/// Ids of terms no document uses any more are reused, so replacing sources forever does not grow
/// it.
#[derive(Debug, Default)]
struct Vocabulary {
    ids: Map<String, TermId>,
    terms: Vec<String>,
    doc_freq: Vec<u32>,
    free: Vec<TermId>,
    /// Each lower-case word as it appears in tool texts → its term, or `None` for a stop word.
    /// Stemming and the stop-word check were half of an index build, and sources repeat each
    /// other's words, so this outlives one build. It is emptied whenever a term id is freed (an
    /// entry could otherwise point at a reused id), which also bounds it by the live words.
    words: Map<String, Option<TermId>>,
}

impl Vocabulary {
    fn id(&self, term: &str) -> Option<TermId> {
        self.ids.get(term).copied()
    }

    fn intern(&mut self, term: &str) -> TermId {
        if let Some(id) = self.id(term) {
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.terms[id as usize] = term.to_string();
                id
            }
            None => {
                // More distinct words than u32 ids cannot fit in memory first.
                let id = TermId::try_from(self.terms.len()).unwrap_or(TermId::MAX);
                self.terms.push(term.to_string());
                self.doc_freq.push(0);
                id
            }
        };
        self.ids.insert(term.to_string(), id);
        id
    }

    fn doc_freq(&self, id: TermId) -> u32 {
        self.doc_freq.get(id as usize).copied().unwrap_or(0)
    }

    fn add_docs(&mut self, id: TermId, count: u32) {
        if let Some(df) = self.doc_freq.get_mut(id as usize) {
            *df = df.saturating_add(count);
        }
    }

    fn remove_docs(&mut self, id: TermId, count: u32) {
        let Some(df) = self.doc_freq.get_mut(id as usize) else {
            return;
        };
        *df = df.saturating_sub(count);
        if *df == 0 {
            let term = std::mem::take(&mut self.terms[id as usize]);
            self.ids.remove(&term);
            self.free.push(id);
            self.words.clear();
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// A BM25F index over every namespace's tools, replaced namespace by namespace as sources are
/// (re)listed. Corpus statistics (document frequency, average field lengths) are global, so the
/// scores of one query are comparable across namespaces.
pub struct SearchIndex {
    namespaces: BTreeMap<String, NamespaceIndex>,
    vocabulary: Vocabulary,
    field_length_totals: [u64; FIELDS],
    doc_count: u64,
    stemmer: Stemmer,
}

impl Default for SearchIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("namespaces", &self.namespaces.len())
            .field("documents", &self.doc_count)
            .field("terms", &self.vocabulary.len())
            .finish()
    }
}

impl SearchIndex {
    pub fn new() -> Self {
        Self {
            namespaces: BTreeMap::new(),
            vocabulary: Vocabulary::default(),
            field_length_totals: [0; FIELDS],
            doc_count: 0,
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// Number of indexed tools over all namespaces.
    pub fn len(&self) -> usize {
        usize::try_from(self.doc_count).unwrap_or(usize::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.doc_count == 0
    }

    /// Replaces the documents of `namespace` with `tools` (whose own `namespace` field is ignored
    /// in favour of the argument, so one listing can be indexed under the source's name).
    pub fn set_namespace(&mut self, namespace: &str, tools: &[ToolDefinition]) {
        self.remove_namespace(namespace);
        let mut index = NamespaceIndex::default();
        // The current document's terms, found through `slots` (by term id: which document last
        // saw the term, and where in `doc_terms` it is) rather than through a per-token hash.
        let mut doc_terms: Vec<(TermId, [u16; FIELDS])> = Vec::new();
        let mut slots: Vec<(u32, u32)> = Vec::new();
        let vocabulary = &mut self.vocabulary;
        let stemmer = &self.stemmer;
        for (doc, tool) in tools.iter().enumerate() {
            let Ok(doc_id) = u32::try_from(doc) else {
                break;
            };
            doc_terms.clear();
            let mut lengths = [0u16; FIELDS];
            let mut add = |field: Field, text: &str| {
                let slot = field as usize;
                for_each_token(text, |word| {
                    let id = match vocabulary.words.get(word) {
                        Some(Some(id)) => *id,
                        Some(None) => return,
                        None => {
                            let id = (!is_stop_word(word))
                                .then(|| vocabulary.intern(&stemmer.stem(word)));
                            vocabulary.words.insert(word.to_string(), id);
                            match id {
                                Some(id) => id,
                                None => return,
                            }
                        }
                    };
                    let i = id as usize;
                    if slots.len() <= i {
                        slots.resize(i + 1, (u32::MAX, 0));
                    }
                    if slots[i].0 != doc_id {
                        let at = u32::try_from(doc_terms.len()).unwrap_or(u32::MAX);
                        slots[i] = (doc_id, at);
                        doc_terms.push((id, [0; FIELDS]));
                    }
                    if let Some((_, tf)) = doc_terms.get_mut(slots[i].1 as usize) {
                        tf[slot] = tf[slot].saturating_add(1);
                    }
                    lengths[slot] = lengths[slot].saturating_add(1);
                });
            };
            add(Field::Name, &tool.upstream_name);
            add(Field::Namespace, namespace);
            if let Some(title) = tool.title.as_deref() {
                add(Field::Title, title);
            }
            add(Field::Description, &tool.description);
            walk_schema(&tool.input_schema, 0, &mut |name, description| {
                add(Field::Params, name);
                if let Some(description) = description {
                    add(Field::ParamDescriptions, description);
                }
            });
            for &(id, tf) in &doc_terms {
                vocabulary.add_docs(id, 1);
                index
                    .postings
                    .entry(id)
                    .or_default()
                    .push(Posting { doc: doc_id, tf });
            }
            for (total, len) in self.field_length_totals.iter_mut().zip(lengths) {
                *total += u64::from(len);
            }
            index.lengths.push(lengths);
            index.addresses.push(format!("{namespace}.{}", tool.name));
            self.doc_count += 1;
        }
        if !index.addresses.is_empty() {
            self.namespaces.insert(namespace.to_string(), index);
        }
    }

    /// Drops every document of `namespace`; unknown namespaces are a no-op.
    pub fn remove_namespace(&mut self, namespace: &str) {
        let Some(index) = self.namespaces.remove(namespace) else {
            return;
        };
        for (&id, postings) in &index.postings {
            let count = u32::try_from(postings.len()).unwrap_or(u32::MAX);
            self.vocabulary.remove_docs(id, count);
        }
        for lengths in &index.lengths {
            for (total, len) in self.field_length_totals.iter_mut().zip(lengths) {
                *total = total.saturating_sub(u64::from(*len));
            }
        }
        self.doc_count = self.doc_count.saturating_sub(index.lengths.len() as u64);
    }

    /// Ranks tools for `query`, over every namespace or only `namespace`.
    pub fn search(&self, query: &str, namespace: Option<&str>) -> Ranking {
        let terms = self.query_terms(query);
        if terms.is_empty() {
            return Ranking::NoTerms;
        }
        let averages = self.average_field_lengths();
        // Words no tool uses can match nothing; they still make the query non-empty.
        let weighted: Vec<(TermId, f64)> = terms
            .iter()
            .filter_map(|(term, weight)| {
                let id = self.vocabulary.id(term)?;
                Some((id, weight * self.idf(id)))
            })
            .collect();
        let mut hits = Vec::new();
        let scope: Box<dyn Iterator<Item = &NamespaceIndex>> = match namespace {
            Some(name) => Box::new(self.namespaces.get(name).into_iter()),
            None => Box::new(self.namespaces.values()),
        };
        for index in scope {
            score_namespace(index, &weighted, &averages, &mut hits);
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.address.cmp(&b.address))
        });
        Ranking::Ranked(hits)
    }

    /// The distinct stemmed words of a query with their weights, in order of first appearance:
    /// typed words at 1, their synonyms (when not typed too) at [`SYNONYM_WEIGHT`].
    fn query_terms(&self, query: &str) -> Vec<(String, f64)> {
        let mut typed: Vec<String> = Vec::new();
        let mut related: Vec<String> = Vec::new();
        for_each_token(query, |word| {
            if is_stop_word(word) {
                return;
            }
            push_unique(&mut typed, self.stemmer.stem(word).into_owned());
            if let Ok(i) = SYNONYMS.binary_search_by(|(w, _)| (*w).cmp(word)) {
                for synonym in SYNONYMS[i].1 {
                    push_unique(&mut related, self.stemmer.stem(synonym).into_owned());
                }
            }
        });
        related.retain(|t| !typed.contains(t));
        let typed = typed.into_iter().map(|t| (t, 1.0));
        typed
            .chain(related.into_iter().map(|t| (t, SYNONYM_WEIGHT)))
            .collect()
    }

    /// Robertson–Spärck Jones IDF, floored at zero by the `1 +` so common words never subtract.
    fn idf(&self, term: TermId) -> f64 {
        let n = self.doc_count as f64;
        let df = f64::from(self.vocabulary.doc_freq(term));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    fn average_field_lengths(&self) -> [f64; FIELDS] {
        let docs = self.doc_count.max(1) as f64;
        self.field_length_totals
            .map(|total| (total as f64 / docs).max(1.0))
    }
}

/// Adds the BM25F score of every document of `index` matching at least one term to `hits`.
fn score_namespace(
    index: &NamespaceIndex,
    terms: &[(TermId, f64)],
    averages: &[f64; FIELDS],
    hits: &mut Vec<Hit>,
) {
    // Dense per-namespace accumulator: one pass over postings, no map on the hot path.
    let mut scores = vec![0.0f64; index.addresses.len()];
    let mut any = false;
    for (term, idf) in terms {
        let Some(postings) = index.postings.get(term) else {
            continue;
        };
        any = true;
        for posting in postings {
            let doc = posting.doc as usize;
            let Some(lengths) = index.lengths.get(doc) else {
                continue;
            };
            let mut tf = 0.0;
            for (slot, (_, weight, b)) in FIELD_PARAMS.iter().enumerate() {
                let count = posting.tf[slot];
                if count == 0 {
                    continue;
                }
                let norm = 1.0 - b + b * f64::from(lengths[slot]) / averages[slot];
                tf += weight * f64::from(count) / norm;
            }
            if let Some(score) = scores.get_mut(doc) {
                *score += idf * tf / (K1 + tf);
            }
        }
    }
    if !any {
        return;
    }
    for (doc, score) in scores.into_iter().enumerate() {
        if score > 0.0 {
            hits.push(Hit {
                address: index.addresses[doc].clone(),
                score,
            });
        }
    }
}

fn push_unique(terms: &mut Vec<String>, term: String) {
    if !terms.contains(&term) {
        terms.push(term);
    }
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Calls `f` with each lower-case word of `text`. Words split at anything not alphanumeric
/// (`snake_case`, `kebab-case`, spaces, punctuation) and at case changes: `getFileInfo` gives
/// get/file/info and `URLFetch` gives url/fetch. Digits stay with their word (`base64`).
fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut prev = ' ';
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if !ch.is_alphanumeric() {
            flush(&mut word, &mut f);
        } else {
            if ch.is_uppercase() && !word.is_empty() {
                let next_lower = chars.peek().is_some_and(|c| c.is_lowercase());
                // camelCase boundary, or the last capital of an acronym followed by a new word.
                if prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower)
                {
                    flush(&mut word, &mut f);
                }
            }
            // Tool texts are nearly all ASCII; the general case builds an iterator per char.
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
        }
        prev = ch;
    }
    flush(&mut word, &mut f);
}

fn flush(word: &mut String, f: &mut impl FnMut(&str)) {
    if !word.is_empty() {
        f(word);
        word.clear();
    }
}

/// Calls `f` with the name and description of every property in a JSON Schema, descending into
/// nested objects, array items and combinators.
fn walk_schema(schema: &Value, depth: usize, f: &mut impl FnMut(&str, Option<&str>)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, property) in properties {
            let description = property.get("description").and_then(Value::as_str);
            f(name, description);
            walk_schema(property, depth + 1, f);
        }
    }
    if let Some(items) = object.get("items") {
        walk_schema(items, depth + 1, f);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = object.get(key) {
            for variant in variants {
                walk_schema(variant, depth + 1, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tool::{UpstreamTool, build_namespace};
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> UpstreamTool {
        UpstreamTool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: schema,
            output_schema: None,
            annotations: Default::default(),
        }
    }

    fn index(sources: &[(&str, Vec<UpstreamTool>)]) -> SearchIndex {
        let mut index = SearchIndex::new();
        for (namespace, tools) in sources {
            index.set_namespace(namespace, &build_namespace(namespace, tools.clone()));
        }
        index
    }

    fn addresses(ranking: &Ranking) -> Vec<&str> {
        match ranking {
            Ranking::NoTerms => Vec::new(),
            Ranking::Ranked(hits) => hits.iter().map(|h| h.address.as_str()).collect(),
        }
    }

    fn tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_token(text, |w| out.push(w.to_string()));
        out
    }

    #[test]
    fn field_table_is_in_slot_order() {
        assert!(
            FIELD_PARAMS
                .iter()
                .enumerate()
                .all(|(i, (field, _, _))| *field as usize == i)
        );
    }

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(SYNONYMS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn splits_camel_snake_and_kebab_case() {
        assert_eq!(tokens("getFileInfo"), ["get", "file", "info"]);
        assert_eq!(tokens("create_pull_request"), ["create", "pull", "request"]);
        assert_eq!(tokens("API-post-search"), ["api", "post", "search"]);
        assert_eq!(tokens("URLFetch base64"), ["url", "fetch", "base64"]);
    }

    #[test]
    fn finds_tools_by_words_of_a_camel_case_name() {
        let index = index(&[(
            "fs",
            vec![
                tool("getFileInfo", "Metadata", json!({"type": "object"})),
                tool("listDirectory", "Entries", json!({"type": "object"})),
            ],
        )]);
        assert_eq!(
            addresses(&index.search("file info", None)),
            ["fs.getFileInfo"]
        );
        assert_eq!(
            addresses(&index.search("directories", None)),
            ["fs.listDirectory"]
        );
    }

    #[test]
    fn a_name_match_outweighs_a_description_match() {
        let index = index(&[(
            "ns",
            vec![
                tool(
                    "archive",
                    "Stores a report somewhere",
                    json!({"type": "object"}),
                ),
                tool("report", "Makes something", json!({"type": "object"})),
            ],
        )]);
        assert_eq!(
            addresses(&index.search("report", None)),
            ["ns.report", "ns.archive"]
        );
    }

    #[test]
    fn parameter_names_are_searchable_including_nested_ones() {
        let schema = json!({
            "type": "object",
            "properties": {"options": {"type": "object", "properties": {"timezone": {"type": "string"}}}}
        });
        let index = index(&[(
            "t",
            vec![
                tool("now", "Current moment", schema),
                tool("other", "x", json!({})),
            ],
        )]);
        assert_eq!(addresses(&index.search("timezone", None)), ["t.now"]);
    }

    #[test]
    fn namespace_filter_and_namespace_word() {
        let index = index(&[
            (
                "github",
                vec![tool("create_issue", "Create an issue", json!({}))],
            ),
            (
                "gitlab",
                vec![tool("create_issue", "Create an issue", json!({}))],
            ),
        ]);
        assert_eq!(
            addresses(&index.search("create issue", Some("gitlab"))),
            ["gitlab.createIssue"]
        );
        assert_eq!(
            addresses(&index.search("create issue", Some("nope"))),
            Vec::<&str>::new()
        );
        assert_eq!(
            addresses(&index.search("github issue", None))[0],
            "github.createIssue"
        );
    }

    #[test]
    fn equal_scores_are_ordered_by_address_and_repeatable() {
        let tools = vec![
            tool("b", "send mail", json!({})),
            tool("a", "send mail", json!({})),
        ];
        let index = index(&[("z", tools.clone()), ("m", tools)]);
        let first = index.search("send mail", None);
        assert_eq!(addresses(&first), ["m.a", "m.b", "z.a", "z.b"]);
        assert_eq!(first, index.search("send mail", None));
    }

    #[test]
    fn replacing_and_removing_a_namespace_updates_the_index() {
        let mut index = index(&[
            ("one", vec![tool("alpha", "first", json!({}))]),
            ("two", vec![tool("beta", "second", json!({}))]),
        ]);
        index.set_namespace(
            "one",
            &build_namespace("one", vec![tool("gamma", "third", json!({}))]),
        );
        assert_eq!(addresses(&index.search("alpha", None)), Vec::<&str>::new());
        assert_eq!(addresses(&index.search("gamma", None)), ["one.gamma"]);
        assert_eq!(index.len(), 2);
        index.remove_namespace("one");
        assert_eq!(addresses(&index.search("gamma", None)), Vec::<&str>::new());
        assert_eq!(index.len(), 1);
        assert_eq!(index.vocabulary.id("gamma"), None);
        // "third" is gone too and its id was recycled for nothing else yet.
        assert_eq!(index.vocabulary.id("third"), None);
        assert_eq!(index.vocabulary.len(), 3);
    }

    #[test]
    fn empty_and_stop_word_queries_have_no_terms() {
        let index = index(&[("ns", vec![tool("echo", "Echo", json!({}))])]);
        assert_eq!(index.search("", Some("ns")), Ranking::NoTerms);
        assert_eq!(index.search("  the of ?", None), Ranking::NoTerms);
    }

    #[test]
    fn connection_names_are_never_matched() {
        // Connections live in the config, not in tool definitions, so a query naming a connection
        // finds nothing even when the namespace has connections of that name.
        let index = index(&[(
            "slack",
            vec![tool("post_message", "Post a message", json!({}))],
        )]);
        assert_eq!(
            addresses(&index.search("work personal", None)),
            Vec::<&str>::new()
        );
    }
}
