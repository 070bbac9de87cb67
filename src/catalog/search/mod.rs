//! Ranking of catalogued tools for `search`: the per-namespace BM25F inverted index with its
//! incremental updates, and the search that reads it. Its parts: the words of texts and queries
//! (`tokens`) and the terms every namespace shares (`vocabulary`), what a query asks for (`query`, with the WordNet `lexicon` and `typo`
//! corrections), what names and requests do (`action`), per-document scores (`score`), a bonus
//! for names that have typed words in the order typed, what tools and requests mean
//! (`semantic`, with its inner loop in `dot`) and which service a request sounds like (each
//! namespace's tools' mean closeness to it), and the fusion by rank (`fusion`). It
//! indexes only what a [`ToolDefinition`] says about a tool — name, namespace, title,
//! description and parameters — so connection names can never match.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use foldhash::fast::RandomState;

use rust_stemmers::{Algorithm, Stemmer};

mod action;
// SSE2's multiply-add by hand for comparing a request with every tool; its `SAFETY` says why
// each load stays in bounds.
#[allow(unsafe_code)]
mod dot;
mod fusion;
mod lexicon;
mod query;
mod score;
mod semantic;
mod tokens;
mod typo;
mod vocabulary;

use fusion::{Signals, Weights};
use score::{WeightedTerm, score_namespace};
use tokens::{for_each_token, is_stop_word, walk_schema, words_of};
use vocabulary::Vocabulary;

use super::typescript::NamespaceTypes;
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
    /// Descriptions of those properties: many words, mostly generic ("the page number"). They
    /// weigh almost nothing, but their words count in how common each word is.
    ParamDescriptions,
}

const FIELDS: usize = 6;

/// Per-field weight and BM25 `b`, in slot order. Names, namespaces and titles are short and say
/// what the tool does, so they weigh most; descriptions say it in many more words. Tuned on the
/// development split of the search evaluation (docs/search.md).
const FIELD_PARAMS: [(Field, f64, f64); FIELDS] = [
    (Field::Name, 3.0, 0.4),
    (Field::Namespace, 3.0, 0.0),
    (Field::Title, 2.0, 0.4),
    (Field::Description, 0.7, 0.75),
    (Field::Params, 0.36, 0.5),
    (Field::ParamDescriptions, 0.02, 0.75),
];

/// How the rankings are fused: BM25F leads; name coverage and the namespace prior reorder its
/// best twenty; the service meaning points to orders them and the tools close in meaning by
/// namespace ("what did people say in #general" sounds like a chat server's tools, though it
/// names none). Tuned on the development sets.
const FUSION: Weights = Weights {
    bm25: 1.0,
    name: 0.2,
    prior: 0.3,
    semantic: 0.5,
    service: 0.6,
    k: 3.0,
    depth: 20,
};

/// How many tools meaning ranks: BM25F's best this many, and the this many closest in meaning
/// of every tool.
const CLOSEST: usize = 50;

/// How much meaning's weight in the fusion grows when BM25F's best tool has little of the
/// request's words: by this times the square of the share it lacks. "how high above sea level
/// is Denver" shares one common word with a thousand tools and none with `mapsElevation`, which
/// meaning ranks first; "create an issue in linear" needs no help. Tuned on the development
/// sets.
const MEANING_WHEN_WORDS_MISS: f64 = 1.0;

/// Below this share of a request's typed words in BM25F's best tool (`reached`),
/// words are taken to have found little, and meaning looks at every tool, not only at BM25F's
/// best. From 0.3 to 0.9 the second development set ranked alike; the comparison with every
/// tool is most of what meaning costs a search over 10,000 tools, and 0.3 spares it for about
/// two requests in three of the evaluation sets.
const WORDS_FIND_LITTLE: f64 = 0.3;

/// How close in meaning a tool that shares no word with a request must be to be found at all:
/// unrelated texts have cosines below about 0.3, and below 0.4 such tools were noise in the
/// development split.
const ALONE_IN_MEANING: f32 = 0.4;

/// How much BM25F is multiplied by for a tool whose name has two words the request typed one
/// after the other, in that order: "list call recordings" names `listCallRecording` more than
/// `listRecordingTranscription`, though both names have "list" and "recording". Tuned on the
/// development split.
const ADJACENT_IN_NAME: f64 = 1.2;

/// Whether two consecutive terms of `sequence` are consecutive in `name` too.
fn has_typed_pair(name: &[TermId], sequence: &[TermId]) -> bool {
    sequence
        .windows(2)
        .any(|pair| name.windows(2).any(|at| at == pair))
}

/// How close in meaning document `doc` of `index` is to a request, by the two vectors' cosine
/// (`whole`) and word by word, as meaning ranks it.
fn closeness(index: &NamespaceIndex, doc: u32, whole: f32, meaning: &semantic::Query) -> f64 {
    f64::from(whole + index.vectors.word_similarity(doc, meaning))
}

/// How much of the request's typed words BM25F's best tool has: the share of `most`, what a
/// tool with every typed word would score, that it does score. A word no tool has counts: for a
/// user with a few sources, most words of a request are such words.
fn reached(signals: &[Signals], most: f64) -> f64 {
    let best = signals.iter().map(|s| s.bm25).fold(0.0, f64::max);
    if most > 0.0 {
        (best / most).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The fusion's weights for one request: meaning weighs more the less of the request's typed
/// words BM25F's best tool has (`reached`).
fn weights_for(reached: f64) -> Weights {
    Weights {
        semantic: FUSION.semantic + MEANING_WHEN_WORDS_MISS * (1.0 - reached).powi(2),
        ..FUSION
    }
}

/// Each namespace of `scope`'s rank (1 is first) by how close its tools are to `meaning` on
/// average, ties by slot: what service a request sounds like when it names none.
fn services_by_meaning(scope: &[&NamespaceIndex], meaning: &semantic::Query) -> Vec<usize> {
    let closeness: Vec<f32> = scope
        .iter()
        .map(|index| index.vectors.mean_similarity(meaning))
        .collect();
    let mut order: Vec<usize> = (0..scope.len()).collect();
    order.sort_by(|&a, &b| closeness[b].total_cmp(&closeness[a]).then(a.cmp(&b)));
    let mut ranks = vec![0; scope.len()];
    for (rank, at) in order.into_iter().enumerate() {
        ranks[at] = rank + 1;
    }
    ranks
}

/// Document `doc` of namespace slot `at`'s cosine if it is among `closest`, else 0; taking it
/// marks it found, so that only the ones BM25F did not find join as candidates of their own.
fn close_in_meaning(closest: &mut [(usize, u32, f32)], at: usize, doc: u32) -> f32 {
    match closest.binary_search_by_key(&(at, doc), |&(a, d, _)| (a, d)) {
        Ok(i) => std::mem::replace(&mut closest[i].2, 0.0),
        Err(_) => 0.0,
    }
}

/// How much of a request search reads: a request says what it wants in a sentence, and every
/// further word costs time on the request's thread (a word no tool uses is compared with every
/// indexed term), so a 100 KB request held the hub for seconds.
pub const LONGEST_QUERY: usize = 2_000;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;

/// One ranked tool, borrowed from the index: a generic request matches thousands of tools, and
/// an owned address for each was most of an answer's time.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    /// `namespace.tool`.
    pub address: &'a str,
    pub score: f64,
}

/// The outcome of [`SearchIndex::search`].
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking<'a> {
    /// The query has no word to rank by (empty, or only stop words and punctuation). The caller
    /// decides what that means, e.g. listing the namespace it was given.
    NoTerms,
    /// Tools matching at least one query word, best first; equal scores by namespace, then by
    /// tool name.
    Ranked(Vec<Hit<'a>>),
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
    /// Stems of the namespace's own words (`aws-cloudwatch`: aws, cloudwatch), for the prior.
    words: Vec<String>,
    addresses: Vec<String>,
    /// Each document's place among the namespace's tool names in order: equal scores are
    /// ordered by namespace, then by this, an integer comparison where comparing addresses was
    /// a fifth of a generic request's time over 10,000 tools.
    name_order: Vec<u32>,
    /// What each tool's name does to its object (`action`), per document.
    actions: Vec<action::Kinds>,
    /// Name words per document, less those most of the namespace's names share (`asana` of
    /// `asanaCreateTask`): the length name coverage is measured against.
    name_lengths: Vec<u16>,
    /// Terms in more than half the namespace's tool names.
    common: Vec<TermId>,
    /// Each document's name terms in order, stop words left out (`addCardToList`: add, card,
    /// list), one after another; `name_starts[doc]` is where the document's begin.
    name_terms: Vec<TermId>,
    name_starts: Vec<u32>,
    /// Token count per field, per document.
    lengths: Vec<[u16; FIELDS]>,
    /// What each document means, as a vector.
    vectors: semantic::Vectors,
    postings: Map<TermId, Vec<Posting>>,
    /// Each tool's one-line TypeScript signature by tool name, built the first time an answer
    /// shows one of the namespace's tools and dropped with this index when the namespace is
    /// listed again: answers render from it instead of rebuilding the namespace's types.
    signatures: OnceLock<HashMap<String, String>>,
}

impl NamespaceIndex {
    /// Fills `common` and `name_lengths` once every document is in.
    fn find_common_name_terms(&mut self) {
        let docs = self.addresses.len();
        self.name_lengths = self
            .lengths
            .iter()
            .map(|l| l[Field::Name as usize])
            .collect();
        // A namespace of a few tools has no naming convention to discount.
        if docs < 4 {
            return;
        }
        for (&id, postings) in &self.postings {
            let named = postings
                .iter()
                .filter(|p| p.tf[Field::Name as usize] > 0)
                .count();
            if named * 2 > docs {
                self.common.push(id);
                for posting in postings {
                    if let Some(length) = self.name_lengths.get_mut(posting.doc as usize) {
                        *length = length.saturating_sub(posting.tf[Field::Name as usize]);
                    }
                }
            }
        }
    }

    /// The share of the namespace's words the query typed: 1 for "in Stripe" and `stripe`,
    /// 0.5 for "google" and `google-maps`.
    fn prior(&self, typed: &[&str]) -> f64 {
        if self.words.is_empty() {
            return 0.0;
        }
        let named = self
            .words
            .iter()
            .filter(|w| typed.contains(&w.as_str()))
            .count();
        named as f64 / self.words.len() as f64
    }

    /// The terms of `doc`'s name, in order.
    fn name_of(&self, doc: u32) -> &[TermId] {
        let at = |doc: usize| {
            self.name_starts
                .get(doc)
                .map_or(self.name_terms.len(), |&start| start as usize)
        };
        let doc = doc as usize;
        self.name_terms.get(at(doc)..at(doc + 1)).unwrap_or(&[])
    }
}

type TermId = u32;

/// Index builds hash every word of every tool, and SipHash was a fifth of the build time;
/// foldhash is several times faster and still seeded per map, so an upstream cannot precompute
/// colliding tool texts.
type Map<K, V> = HashMap<K, V, RandomState>;

/// The heap a `String` holds, for [`SearchIndex::heap_bytes`].
fn heap_string(text: &String) -> usize {
    text.capacity()
}

/// The bytes of a hash map entry with a `key` and `value` of these sizes, its control byte
/// included, for [`SearchIndex::heap_bytes`].
fn map_entry_bytes(key: usize, value: usize) -> usize {
    key + value + 1
}

/// A BM25F index over every namespace's tools, replaced namespace by namespace as sources are
/// (re)listed. Corpus statistics (document frequency, average field lengths) are global, so the
/// scores of one query are comparable across namespaces.
pub struct SearchIndex {
    namespaces: BTreeMap<String, NamespaceIndex>,
    vocabulary: Vocabulary,
    /// The word pieces of the words tool texts use, for their vectors and requests'.
    pieces: semantic::Pieces,
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
            pieces: semantic::Pieces::default(),
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

    /// Whether `namespace` has indexed tools.
    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.namespaces.contains_key(namespace)
    }

    /// The one-line signatures of `namespace`'s tools by name, from `tools` (what the catalogue
    /// lists for it now, the tools this index was built from). `None` for a namespace the index
    /// does not have.
    pub fn signatures(
        &self,
        namespace: &str,
        tools: &[ToolDefinition],
    ) -> Option<&HashMap<String, String>> {
        let index = self.namespaces.get(namespace)?;
        Some(index.signatures.get_or_init(|| {
            let types = NamespaceTypes::build(namespace, tools);
            tools
                .iter()
                .filter_map(|tool| Some((tool.name.clone(), types.signature(&tool.name)?)))
                .collect()
        }))
    }

    /// The heap the index holds, in bytes, estimated from its containers' capacities (a hash
    /// map entry counted with its control byte), for the benchmark report.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let (string, map_entry) = (heap_string, map_entry_bytes);
        let mut bytes = 0;
        for index in self.namespaces.values() {
            bytes += index.words.iter().map(string).sum::<usize>()
                + index.words.capacity() * size_of::<String>()
                + index.addresses.iter().map(string).sum::<usize>()
                + index.addresses.capacity() * size_of::<String>()
                + index.name_order.capacity() * size_of::<u32>()
                + index.actions.capacity()
                + index.name_lengths.capacity() * size_of::<u16>()
                + index.common.capacity() * size_of::<TermId>()
                + index.name_terms.capacity() * size_of::<TermId>()
                + index.name_starts.capacity() * size_of::<u32>()
                + index.lengths.capacity() * size_of::<[u16; FIELDS]>()
                + index.vectors.heap_bytes()
                + index.postings.capacity()
                    * map_entry(size_of::<TermId>(), size_of::<Vec<Posting>>())
                + index
                    .postings
                    .values()
                    .map(|p| p.capacity() * size_of::<Posting>())
                    .sum::<usize>()
                + index.signatures.get().map_or(0, |signatures| {
                    signatures.capacity() * map_entry(2 * size_of::<String>(), 0)
                        + signatures
                            .iter()
                            .map(|(k, v)| k.capacity() + v.capacity())
                            .sum::<usize>()
                });
        }
        bytes += self.vocabulary.heap_bytes() + self.pieces.heap_bytes();
        bytes
    }

    /// Replaces the documents of `namespace` with `tools` (whose own `namespace` field is ignored
    /// in favour of the argument, so one listing can be indexed under the source's name).
    pub fn set_namespace(&mut self, namespace: &str, tools: &[ToolDefinition]) {
        self.remove_namespace(namespace);
        lexicon::load();
        let mut index = NamespaceIndex::default();
        for_each_token(namespace, |word| {
            if !is_stop_word(word) {
                index.words.push(self.stemmer.stem(word).into_owned());
            }
        });
        // The current document's terms, found through `slots` (by term id: which document last
        // saw the term, and where in `doc_terms` it is) rather than through a per-token hash.
        let mut doc_terms: Vec<(TermId, [u16; FIELDS])> = Vec::new();
        let mut slots: Vec<(u32, u32)> = Vec::new();
        let vocabulary = &mut self.vocabulary;
        let stemmer = &self.stemmer;
        // Every tool's vector says which service it belongs to, in the same words.
        let namespace_words = words_of(namespace);
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
            let mut name_words = Vec::new();
            for_each_token(&tool.upstream_name, |w| name_words.push(w.to_string()));
            index.vectors.push(
                &mut self.pieces,
                &semantic::tool_text(
                    &words_of(&tool.name),
                    &namespace_words,
                    tool.title.as_deref(),
                    &tool.description,
                ),
            );
            index.actions.push(action::of_tool(
                name_words.iter().map(String::as_str),
                &tool.description,
            ));
            index
                .name_starts
                .push(u32::try_from(index.name_terms.len()).unwrap_or(u32::MAX));
            // Every name word went through `add` above, so each is in the word cache.
            index.name_terms.extend(
                name_words
                    .iter()
                    .filter_map(|w| vocabulary.words.get(w.as_str()).copied().flatten()),
            );
            index.addresses.push(format!("{namespace}.{}", tool.name));
            self.doc_count += 1;
        }
        index.find_common_name_terms();
        let mut by_name: Vec<usize> = (0..index.addresses.len()).collect();
        by_name.sort_by(|&a, &b| index.addresses[a].cmp(&index.addresses[b]));
        index.name_order = vec![0; by_name.len()];
        for (place, doc) in (0u32..).zip(by_name) {
            index.name_order[doc] = place;
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

    /// Ranks tools for `query`, over every namespace or only `namespace`. Only the request's
    /// first [`LONGEST_QUERY`] bytes are read.
    pub fn search(&self, query: &str, namespace: Option<&str>) -> Ranking<'_> {
        let query = &query[..query.floor_char_boundary(LONGEST_QUERY)];
        let mut words = Vec::new();
        for_each_token(query, |w| words.push(w.to_string()));
        let kinds = action::of_request(&words);
        let terms = query::analyse(
            query,
            &self.stemmer,
            |stem| self.vocabulary.id(stem).is_some(),
            |stem, edits| self.corrections(stem, edits),
            |stem| {
                self.namespaces
                    .values()
                    .any(|index| index.words.iter().any(|w| w == stem))
            },
        );
        if terms.is_empty() {
            return Ranking::NoTerms;
        }
        let averages = self.average_field_lengths();
        // What a tool with every typed word would score (each word's weight, as if every field
        // had it many times), a word no tool has at the IDF of the rarest word: the measure of
        // how much of the request BM25F's best tool has (`reached`).
        let mut most = 0.0;
        // Words no tool uses can match nothing; they still make the query non-empty.
        let weighted: Vec<WeightedTerm> = terms
            .iter()
            .filter_map(|term| {
                let id = self.vocabulary.id(&term.stem);
                let idf = self.idf(id.map_or(0, |id| self.vocabulary.doc_freq(id)));
                if term.typed {
                    most += term.weight * idf;
                }
                Some(WeightedTerm {
                    id: id?,
                    weight: term.weight * idf,
                    typed: term.typed,
                })
            })
            .collect();
        let typed: Vec<&str> = terms
            .iter()
            .filter(|t| t.typed)
            .map(|t| t.stem.as_str())
            .collect();
        let sequence = self.typed_sequence(&words);
        let scope: Vec<&NamespaceIndex> = match namespace {
            Some(name) => self.namespaces.get(name).into_iter().collect(),
            None => self.namespaces.values().collect(),
        };
        let mut scratch = score::Scratch::default();
        let mut found: Vec<&str> = Vec::new();
        // Each candidate's namespace (its slot in `scope`) and document.
        let mut docs: Vec<(usize, u32)> = Vec::new();
        // Each candidate's place in the order of equal scores: its namespace's slot (`scope` is
        // in namespace order), then its name's place in the namespace.
        let place = |at: usize, doc: u32| -> u64 {
            let in_namespace = scope[at].name_order.get(doc as usize).copied();
            ((at as u64) << 32) | u64::from(in_namespace.unwrap_or(u32::MAX))
        };
        let mut places: Vec<u64> = Vec::new();
        let mut signals: Vec<Signals> = Vec::new();
        for (at, index) in scope.iter().enumerate() {
            let prior = index.prior(&typed);
            let start = scratch.scored.len();
            score_namespace(index, &weighted, &averages, kinds, &mut scratch);
            for scored in &scratch.scored[start..] {
                found.push(index.addresses[scored.doc as usize].as_str());
                docs.push((at, scored.doc));
                places.push(place(at, scored.doc));
                signals.push(Signals {
                    bm25: scored.bm25,
                    name: scored.name,
                    prior,
                    semantic: 0.0,
                    service: 0,
                });
            }
        }
        let reached = reached(&signals, most);
        let meaning = semantic::Query::new(&self.pieces, query);
        if let Some(meaning) = &meaning {
            Self::rank_by_meaning(&scope, &docs, &mut signals, meaning);
        }
        if let Some(meaning) = meaning
            .as_ref()
            .filter(|_| reached < WORDS_FIND_LITTLE || signals.len() < CLOSEST)
        {
            // Words found little: every tool is compared as a whole too, the closest that
            // BM25F ranked low are ranked by meaning as well, and those very close that no word
            // found join.
            let mut closest = Self::closest(&scope, meaning);
            for (signal, &(at, doc)) in signals.iter_mut().zip(&docs) {
                let whole = close_in_meaning(&mut closest, at, doc);
                if signal.semantic == 0.0 && whole > 0.0 {
                    signal.semantic = closeness(scope[at], doc, whole, meaning);
                }
            }
            for &(at, doc, whole) in closest.iter().filter(|c| c.2 >= ALONE_IN_MEANING) {
                found.push(scope[at].addresses[doc as usize].as_str());
                docs.push((at, doc));
                places.push(place(at, doc));
                signals.push(Signals {
                    bm25: 0.0,
                    name: 0.0,
                    prior: 0.0,
                    semantic: closeness(scope[at], doc, whole, meaning),
                    service: 0,
                });
            }
        }
        if sequence.len() >= 2 {
            // Only BM25F's best `depth` are re-ranked by the fusion, so only their names are
            // looked at; raising their BM25F keeps them the best `depth`.
            let mut order: Vec<usize> = (0..signals.len()).collect();
            let depth = FUSION.depth.min(order.len());
            if depth > 0 && depth < order.len() {
                order.select_nth_unstable_by(depth - 1, |&a, &b| {
                    signals[b].bm25.total_cmp(&signals[a].bm25)
                });
            }
            for &candidate in &order[..depth] {
                let (at, doc) = docs[candidate];
                if has_typed_pair(scope[at].name_of(doc), &sequence) {
                    signals[candidate].bm25 *= ADJACENT_IN_NAME;
                }
            }
        }
        // One namespace is all one service: ranking it would only lift the re-ranked over the
        // rest.
        if let Some(meaning) = meaning.as_ref().filter(|_| scope.len() > 1) {
            let services = services_by_meaning(&scope, meaning);
            for (signal, &(at, _)) in signals.iter_mut().zip(&docs) {
                signal.service = services[at];
            }
        }
        let weights = weights_for(reached);
        let hits = fusion::rank(&signals, &weights, |a, b| places[a].cmp(&places[b]))
            .into_iter()
            .map(|(candidate, score)| Hit {
                address: found[candidate],
                score,
            })
            .collect();
        Ranking::Ranked(hits)
    }

    /// Gives BM25F's best `CLOSEST` candidates their closeness to `meaning` (the fusion ranks
    /// them by it): comparing word by word costs a comparison per word of each tool, so only
    /// these and the closest of every tool as a whole (`closest`) are compared that way.
    fn rank_by_meaning(
        scope: &[&NamespaceIndex],
        docs: &[(usize, u32)],
        signals: &mut [Signals],
        meaning: &semantic::Query,
    ) {
        let mut best: Vec<usize> = (0..signals.len()).collect();
        if best.len() > CLOSEST {
            best.select_nth_unstable_by(CLOSEST - 1, |&a, &b| {
                signals[b].bm25.total_cmp(&signals[a].bm25)
            });
            best.truncate(CLOSEST);
        }
        for candidate in best {
            let (at, doc) = docs[candidate];
            let whole = scope[at].vectors.similarity(doc, meaning);
            // Zero is "not ranked by meaning"; a tool unrelated in meaning is not ranked by it.
            signals[candidate].semantic = closeness(scope[at], doc, whole, meaning).max(0.0);
        }
    }

    /// The `CLOSEST` tools of `scope` closest to `meaning` (positive cosine only), as (namespace
    /// slot in `scope`, document, cosine), ordered by slot and document.
    fn closest(scope: &[&NamespaceIndex], meaning: &semantic::Query) -> Vec<(usize, u32, f32)> {
        let mut all: Vec<(usize, u32, f32)> = Vec::new();
        for (at, index) in scope.iter().enumerate() {
            for doc in 0..index.addresses.len() {
                let doc = u32::try_from(doc).unwrap_or(u32::MAX);
                let similarity = index.vectors.similarity(doc, meaning);
                if similarity > 0.0 {
                    all.push((at, doc, similarity));
                }
            }
        }
        if all.len() > CLOSEST {
            all.select_nth_unstable_by(CLOSEST - 1, |a, b| b.2.total_cmp(&a.2));
            all.truncate(CLOSEST);
        }
        all.sort_unstable_by_key(|&(at, doc, _)| (at, doc));
        all
    }

    /// The typed words of a request that are indexed terms, in the order typed, stop words left
    /// out.
    fn typed_sequence(&self, words: &[String]) -> Vec<TermId> {
        words
            .iter()
            .filter(|w| !is_stop_word(w))
            .filter_map(|w| self.vocabulary.id(&self.stemmer.stem(w)))
            .collect()
    }

    /// The indexed terms closest to `stem` within `edits`, most used first, at most three.
    fn corrections(&self, stem: &str, edits: usize) -> Vec<String> {
        let mut best: Vec<(usize, u32, &str)> = Vec::new();
        for (term, df) in self.vocabulary.terms() {
            if let Some(d) = typo::distance_within(stem, term, edits) {
                best.push((d, df, term));
            }
        }
        best.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let closest = best.first().map_or(0, |b| b.0);
        best.iter()
            .take_while(|b| b.0 == closest)
            .take(3)
            .map(|b| b.2.to_string())
            .collect()
    }

    /// Robertson–Spärck Jones IDF, floored at zero by the `1 +` so common words never subtract.
    /// The IDF of a term in `df` documents (0 for a word no tool has: the rarest).
    fn idf(&self, df: u32) -> f64 {
        let n = self.doc_count as f64;
        let df = f64::from(df);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    fn average_field_lengths(&self) -> [f64; FIELDS] {
        let docs = self.doc_count.max(1) as f64;
        self.field_length_totals
            .map(|total| (total as f64 / docs).max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tool::{UpstreamTool, build_namespace};
    use serde_json::{Value, json};

    fn tool(name: &str, description: &str, schema: Value) -> UpstreamTool {
        UpstreamTool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: schema,
            output_schema: None,
            annotations: Default::default(),
            endpoint: None,
        }
    }

    fn index(sources: &[(&str, Vec<UpstreamTool>)]) -> SearchIndex {
        let mut index = SearchIndex::new();
        for (namespace, tools) in sources {
            index.set_namespace(namespace, &build_namespace(namespace, tools.clone(), &[]));
        }
        index
    }

    fn addresses<'a>(ranking: &Ranking<'a>) -> Vec<&'a str> {
        match ranking {
            Ranking::NoTerms => Vec::new(),
            Ranking::Ranked(hits) => hits.iter().map(|h| h.address).collect(),
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
        assert!(tokens::STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
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
    fn a_title_that_is_exactly_the_request_comes_first() {
        let titled = |name: &str, title: &str, description: &str| UpstreamTool {
            title: Some(title.into()),
            ..tool(
                name,
                description,
                json!({ "type": "object", "properties": { "issue_number": {} } }),
            )
        };
        let tools = vec![
            // Shorter, and its parameter names the issue too: BM25F alone prefers it.
            titled(
                "reactionsCreateForIssue",
                "Create reaction for an issue",
                "Create a reaction to an issue.",
            ),
            UpstreamTool {
                input_schema: json!({ "type": "object", "properties": { "title": {} } }),
                ..titled(
                    "issuesCreate",
                    "Create an issue",
                    "Any user with pull access to a repository can create an issue. If issues are disabled in the repository, the API returns a 410 Gone status. This endpoint triggers notifications; creating content too quickly may result in secondary rate limiting.",
                )
            },
        ];
        let index = index(&[("gh", tools)]);
        assert_eq!(
            addresses(&index.search("create an issue", None))[0],
            "gh.issuesCreate"
        );
        // Only an exact title counts: another request ranks as BM25F says.
        assert_eq!(
            addresses(&index.search("create issue reaction", None))[0],
            "gh.reactionsCreateForIssue"
        );
    }

    #[test]
    fn words_typed_one_after_the_other_in_a_name_count_more() {
        // Both names have both words; the shorter one has more BM25F, the other has them in
        // the order they were typed.
        let tools = vec![
            tool("recording_for_call", "Stored audio.", json!({})),
            tool("call_recording_list", "Stored audio.", json!({})),
        ];
        let index = index(&[("t", tools)]);
        assert_eq!(
            addresses(&index.search("call recording", None)),
            ["t.callRecordingList", "t.recordingForCall"]
        );
    }

    #[test]
    fn equal_scores_are_ordered_by_namespace_then_name_and_repeatable() {
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
            &build_namespace("one", vec![tool("gamma", "third", json!({}))], &[]),
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
    fn a_request_finds_the_tool_it_means_without_a_word_in_common() {
        let index = index(&[
            (
                "weather",
                vec![tool(
                    "get_forecast",
                    "Get the weather forecast for a location.",
                    json!({}),
                )],
            ),
            (
                "time",
                vec![tool(
                    "get_current_time",
                    "Get the current time in a timezone.",
                    json!({}),
                )],
            ),
            (
                "stripe",
                vec![tool(
                    "create_refund",
                    "Refund a charge that was previously created.",
                    json!({}),
                )],
            ),
        ]);
        let found = index.search("will it rain tomorrow", None);
        assert_eq!(addresses(&found), ["weather.getForecast"]);
        // Only a close meaning counts: gibberish and far-fetched requests find nothing.
        assert_eq!(
            addresses(&index.search("xyzzy plugh", None)),
            Vec::<&str>::new()
        );
        assert_eq!(
            addresses(&index.search("personal", None)),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn meaning_outweighs_words_that_find_little() {
        let index = index(&[
            (
                "logs",
                vec![
                    tool("set_level", "Set the logging level.", json!({})),
                    tool("get_level", "Get the logging level.", json!({})),
                    tool("battery_level", "Read the battery level.", json!({})),
                ],
            ),
            (
                "maps",
                vec![tool(
                    "elevation",
                    "Get the elevation of locations on the earth.",
                    json!({}),
                )],
            ),
        ]);
        // "level" is the one word any tool has, and not the tool meant: the tool closest in
        // meaning comes straight after BM25F's first (with meaning at its usual weight, it
        // came last).
        let found = index.search("how high above sea level is Denver", None);
        assert_eq!(addresses(&found)[1], "maps.elevation");
        // A request whose words a tool has keeps that tool first.
        let found = index.search("get the logging level", None);
        assert_eq!(addresses(&found)[0], "logs.getLevel");
    }

    #[test]
    fn a_request_that_names_no_service_finds_the_service_it_sounds_like() {
        let index = index(&[
            (
                "chat",
                vec![
                    tool(
                        "channel_history",
                        "Messages posted in a channel.",
                        json!({}),
                    ),
                    tool("post_message", "Post a message to a channel.", json!({})),
                    tool("list_channels", "List the workspace's channels.", json!({})),
                ],
            ),
            (
                "github",
                vec![
                    tool(
                        "list_recent_commits",
                        "List the most recent commits.",
                        json!({}),
                    ),
                    tool(
                        "list_releases",
                        "List the releases of a repository.",
                        json!({}),
                    ),
                ],
            ),
            (
                "calendar",
                vec![
                    tool(
                        "list_recent_events",
                        "Recent events on your calendar.",
                        json!({}),
                    ),
                    tool("create_event", "Create an event.", json!({})),
                ],
            ),
            (
                "weather",
                vec![tool("get_forecast", "Get the weather forecast.", json!({}))],
            ),
            (
                "payments",
                vec![tool("create_refund", "Refund a charge.", json!({}))],
            ),
            (
                "files",
                vec![tool("read_file", "Read a file from disk.", json!({}))],
            ),
            (
                "maps",
                vec![tool(
                    "directions",
                    "Directions between two places.",
                    json!({}),
                )],
            ),
        ]);
        let request = "show me the latest chatter in #random";
        // The chat server's tools, together, are what the request is about.
        let meaning = semantic::Query::new(&index.pieces, request).expect("known words");
        let scope: Vec<&NamespaceIndex> = index.namespaces.values().collect();
        let services = services_by_meaning(&scope, &meaning);
        let closest = scope.iter().zip(&services).find(|&(_, &rank)| rank == 1);
        assert_eq!(
            closest.map(|(ns, _)| ns.addresses[0].as_str()),
            Some("chat.channelHistory")
        );
        // So its tools hold the first two places; by words and meaning alone, the calendar's
        // recent events came second.
        let found = index.search(request, None);
        assert_eq!(
            addresses(&found)[..2],
            ["chat.channelHistory", "chat.listChannels"],
            "{:?}",
            addresses(&found)
        );
        // Searched inside one namespace, the service is all there is: its tools are found alike.
        let found = index.search(request, Some("calendar"));
        assert_eq!(addresses(&found), ["calendar.listRecentEvents"]);
    }

    #[test]
    fn only_a_requests_first_two_thousand_bytes_are_read() {
        let index = index(&[(
            "notes",
            vec![
                tool("archiveNote", "Archive a note.", json!({})),
                tool("pinNote", "Pin a note.", json!({})),
            ],
        )]);
        // "pin" within the limit finds its tool; the same word past it is not read.
        let padding = "é".repeat(LONGEST_QUERY / 2 - 2);
        let within = format!("{padding} pin");
        assert!(within.len() <= LONGEST_QUERY);
        assert_eq!(addresses(&index.search(&within, None))[0], "notes.pinNote");
        let past = format!("{padding}  archive pin");
        assert!(!addresses(&index.search(&past, None)).contains(&"notes.pinNote"));
        // A cut inside a character is moved back to its start rather than panicking.
        let odd = format!("a{}", "é".repeat(LONGEST_QUERY));
        assert!(!odd.is_char_boundary(LONGEST_QUERY));
        assert!(addresses(&index.search(&odd, None)).is_empty());
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
