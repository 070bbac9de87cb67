//! Scoring one namespace's documents in one pass over the query terms' postings, two ways: BM25F
//! over all fields, and how much of the tool's name the query covers (verb and object of
//! `createIssue` both asked for beats `createIssueLink`, where "link" was not).

use super::action::Kinds;
use super::{FIELD_PARAMS, FIELDS, Field, K1, NamespaceIndex, TermId};

/// How name coverage weighs: the square root, so covering half a name still counts for much.
const COVERAGE_EXPONENT: f64 = 0.5;

/// Multipliers of both scores by how the tool's action kind agrees with the request's: one
/// side without a kind, or the two disagreeing ("add" for `deleteLabel`). Tuned on the
/// development split.
const NEUTRAL: f64 = 0.8;
const CONFLICT: f64 = 0.7;

/// How much a title that is exactly the request multiplies BM25F by.
const EXACT_TITLE: f64 = 1.5;

/// A query term as scoring needs it.
pub(super) struct WeightedTerm {
    pub id: TermId,
    /// The term's query weight times its IDF.
    pub weight: f64,
    pub typed: bool,
}

/// One document matching at least one term, with both scores.
pub(super) struct Scored {
    pub doc: u32,
    pub bm25: f64,
    /// Zero when no query term is in the name.
    pub name: f64,
}

/// Buffers one search reuses from namespace to namespace: per-document accumulators sized to
/// the namespace at hand, and every namespace's scored documents one after another.
#[derive(Default)]
pub(super) struct Scratch {
    bm25: Vec<f64>,
    name: Vec<f64>,
    covered: Vec<u16>,
    covered_title: Vec<u16>,
    pub scored: Vec<Scored>,
}

/// Appends to `scratch.scored` every document of `index` that matches a term, in document
/// order.
pub(super) fn score_namespace(
    index: &NamespaceIndex,
    terms: &[WeightedTerm],
    averages: &[f64; FIELDS],
    kinds: Kinds,
    scratch: &mut Scratch,
) {
    // Dense per-namespace accumulators: one pass over postings, no map on the hot path. They
    // are sized when the first term matches, so a namespace that matches none costs neither
    // them nor a list of its matched terms.
    let docs = index.addresses.len();
    let Scratch {
        bm25,
        name,
        covered,
        covered_title,
        scored,
    } = scratch;
    let mut sized = false;
    for term in terms {
        let Some(postings) = index.postings.get(&term.id) else {
            continue;
        };
        if !sized {
            sized = true;
            bm25.clear();
            bm25.resize(docs, 0.0);
            name.clear();
            name.resize(docs, 0.0);
            covered.clear();
            covered.resize(docs, 0);
            covered_title.clear();
            covered_title.resize(docs, 0);
        }
        let common = index.common.contains(&term.id);
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
            bm25[doc] += term.weight * tf / (K1 + tf);
            let in_name = posting.tf[Field::Name as usize];
            // Only words the user typed cover a name: related words would cover the names of
            // whole families of tools ("get" for every question).
            if in_name > 0 && !common && term.typed {
                name[doc] += term.weight;
                covered[doc] = covered[doc].saturating_add(in_name);
            }
            if term.typed && posting.tf[Field::Title as usize] > 0 {
                covered_title[doc] = covered_title[doc].saturating_add(1);
            }
        }
    }
    if !sized {
        return;
    }
    let typed = terms.iter().filter(|t| t.typed).count();
    for doc in 0..docs {
        if bm25[doc] <= 0.0 {
            continue;
        }
        let length = index.name_lengths.get(doc).copied().unwrap_or(1).max(1);
        let coverage = f64::from(covered[doc].min(length)) / f64::from(length);
        let tool_kinds = index.actions.get(doc).copied().unwrap_or(0);
        let agreement = if tool_kinds & kinds != 0 {
            1.0
        } else if tool_kinds == 0 || kinds == 0 {
            NEUTRAL
        } else {
            CONFLICT
        };
        // A title that says exactly what was asked ("Create an issue" for "create an issue"):
        // every typed word in it, and nothing else in it.
        let title_length = index
            .lengths
            .get(doc)
            .map_or(0, |l| l[Field::Title as usize]);
        let exact_title = title_length > 0
            && usize::from(covered_title[doc]) == typed
            && covered_title[doc] == title_length;
        let title_bonus = if exact_title { EXACT_TITLE } else { 1.0 };
        scored.push(Scored {
            doc: u32::try_from(doc).unwrap_or(u32::MAX),
            bm25: bm25[doc] * agreement * title_bonus,
            name: name[doc] * coverage.powf(COVERAGE_EXPONENT) * agreement,
        });
    }
}
