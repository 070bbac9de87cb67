//! Reciprocal rank fusion: each ranking (BM25F, name coverage, the namespace prior) adds
//! `weight / (K + rank)` to a tool's score, so no ranking's scale can swamp the others and a tool
//! near the top of two rankings beats one at the top of only one.

use std::cmp::Ordering;

/// One candidate's score in each ranking; zero means absent from that ranking.
pub(super) struct Signals {
    pub bm25: f64,
    pub name: f64,
    pub prior: f64,
}

/// The weights of the rankings and the rank offset.
pub(super) struct Weights {
    pub bm25: f64,
    pub name: f64,
    pub prior: f64,
    pub k: f64,
    /// How many of BM25F's best the other rankings reorder; the rest keep BM25F's share only.
    pub depth: usize,
}

/// The candidates best first, each with its fused score. Equal fused scores are ordered by
/// BM25F (two rankings can cancel out exactly, one's first place against the other's second),
/// then by `tie` (by address, so the order never depends on how the index was built).
///
/// Only BM25F's best `depth` are re-ranked: below them a candidate's fused score is BM25F's
/// share alone, which falls with its rank and is below every re-ranked candidate's, so the tail
/// stays in BM25F's order and one sort of it is all the fusion costs there.
pub(super) fn rank(
    candidates: &[Signals],
    weights: &Weights,
    tie: impl Fn(usize, usize) -> Ordering,
) -> Vec<(usize, f64)> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        candidates[b]
            .bm25
            .total_cmp(&candidates[a].bm25)
            .then_with(|| tie(a, b))
    });
    let share = |weight: f64, rank: usize| weight / (weights.k + rank as f64);
    let mut ranked: Vec<(usize, f64)> = order
        .iter()
        .enumerate()
        .map(|(at, &candidate)| (candidate, share(weights.bm25, at + 1)))
        .collect();
    let head = ranked.len().min(weights.depth);
    for (weight, key) in [
        (weights.name, (|s: &Signals| s.name) as fn(&Signals) -> f64),
        // The prior orders the tools of named services by BM25F among themselves.
        (weights.prior, |s: &Signals| s.prior),
    ] {
        if weight == 0.0 {
            continue;
        }
        let mut reranked: Vec<usize> = (0..head).collect();
        // Stable, so candidates equal in this ranking keep BM25F's order.
        reranked.sort_by(|&a, &b| {
            let (a, b) = (&candidates[ranked[a].0], &candidates[ranked[b].0]);
            key(b).total_cmp(&key(a)).then(b.bm25.total_cmp(&a.bm25))
        });
        for (at, &slot) in reranked.iter().enumerate() {
            if key(&candidates[ranked[slot].0]) <= 0.0 {
                break;
            }
            ranked[slot].1 += share(weight, at + 1);
        }
    }
    ranked[..head].sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(candidates[b.0].bm25.total_cmp(&candidates[a.0].bm25))
            .then_with(|| tie(a.0, b.0))
    });
    ranked
}
