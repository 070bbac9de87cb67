//! Reciprocal rank fusion: each ranking (BM25F, name coverage, the namespace prior) adds
//! `weight / (K + rank)` to a tool's score, so no ranking's scale can swamp the others and a tool
//! near the top of two rankings beats one at the top of only one.

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

/// The fused score of each candidate, in the candidates' order.
pub(super) fn fuse(candidates: &[Signals], weights: &Weights) -> Vec<f64> {
    let mut fused = vec![0.0; candidates.len()];
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    add_ranks(&mut fused, &mut order, weights.bm25, weights.k, |i| {
        (candidates[i].bm25, 0.0)
    });
    // `order` is now BM25F's ranking; the others see only its head.
    order.truncate(weights.depth);
    add_ranks(&mut fused, &mut order, weights.name, weights.k, |i| {
        (candidates[i].name, candidates[i].bm25)
    });
    // The prior orders the tools of named services by BM25F among themselves.
    add_ranks(&mut fused, &mut order, weights.prior, weights.k, |i| {
        (candidates[i].prior, candidates[i].bm25)
    });
    fused
}

/// Ranks the candidates by `key` (primary, then tie-break; both descending), skipping those
/// whose primary key is zero, and adds each ranked one's share to `fused`.
fn add_ranks(
    fused: &mut [f64],
    order: &mut [usize],
    weight: f64,
    k: f64,
    key: impl Fn(usize) -> (f64, f64),
) {
    if weight == 0.0 {
        return;
    }
    order.sort_by(|&a, &b| {
        let (a1, a2) = key(a);
        let (b1, b2) = key(b);
        b1.total_cmp(&a1).then(b2.total_cmp(&a2)).then(a.cmp(&b))
    });
    let mut rank = 0.0;
    for &i in order.iter() {
        if key(i).0 <= 0.0 {
            break;
        }
        rank += 1.0;
        fused[i] += weight / (k + rank);
    }
}
