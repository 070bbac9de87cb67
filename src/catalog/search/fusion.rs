//! Reciprocal rank fusion: each ranking (BM25F, name coverage, the namespace prior, meaning, the
//! service meaning points to) adds `weight / (K + rank)` to a tool's score, so no ranking's scale
//! can swamp the others and a tool near the top of two rankings beats one at the top of only one.

use std::cmp::Ordering;

/// One candidate's score in each ranking; zero means absent from that ranking.
pub(super) struct Signals {
    pub bm25: f64,
    pub name: f64,
    pub prior: f64,
    /// The cosine of the tool's and the request's vectors, for the tools closest to the request
    /// in meaning only (a candidate can be one of them without sharing a word with it).
    pub semantic: f64,
    /// The rank of the tool's namespace among all searched, by how close its tools are to the
    /// request in meaning on average (1 is closest); 0 when meaning has nothing to say.
    pub service: usize,
}

/// The weights of the rankings and the rank offset.
pub(super) struct Weights {
    pub bm25: f64,
    pub name: f64,
    pub prior: f64,
    pub semantic: f64,
    pub service: f64,
    pub k: f64,
    /// How many of BM25F's best name coverage and the prior reorder; the rest keep BM25F's
    /// share only (and meaning's, for the few closest in meaning).
    pub depth: usize,
}

/// The candidates best first, each with its fused score. Equal fused scores are ordered by
/// BM25F (two rankings can cancel out exactly, one's first place against the other's second),
/// then by `tie` (by namespace and name, so the order never depends on how the index was built).
///
/// Only BM25F's best `depth` and the candidates close in meaning are re-ranked: the others'
/// fused score is BM25F's share alone, which falls with its rank, so they stay in BM25F's order
/// and are merged with the re-ranked ones; one sort of BM25F's ranking is all the fusion costs
/// there.
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
    // A candidate found by meaning alone has no BM25F, so no share of it.
    let mut ranked: Vec<(usize, f64)> = order
        .iter()
        .enumerate()
        .map(|(at, &candidate)| {
            let bm25 = candidates[candidate].bm25;
            (
                candidate,
                if bm25 > 0.0 {
                    share(weights.bm25, at + 1)
                } else {
                    0.0
                },
            )
        })
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
    // The service meaning points to ranks namespaces, not tools: every re-ranked tool of the
    // closest namespace has the first place's share, so it orders services, and the other
    // rankings the tools inside them.
    if weights.service != 0.0 {
        for (slot, entry) in ranked.iter_mut().enumerate() {
            let signals = &candidates[entry.0];
            if signals.service > 0 && (slot < head || signals.semantic > 0.0) {
                entry.1 += share(weights.service, signals.service);
            }
        }
    }
    // Meaning ranks its few candidates wherever BM25F put them.
    if weights.semantic != 0.0 {
        let mut close: Vec<usize> = (0..ranked.len())
            .filter(|&slot| candidates[ranked[slot].0].semantic > 0.0)
            .collect();
        close.sort_by(|&a, &b| {
            let (a, b) = (&candidates[ranked[a].0], &candidates[ranked[b].0]);
            b.semantic
                .total_cmp(&a.semantic)
                .then(b.bm25.total_cmp(&a.bm25))
        });
        for (at, &slot) in close.iter().enumerate() {
            ranked[slot].1 += share(weights.semantic, at + 1);
        }
    }
    let better = |a: &(usize, f64), b: &(usize, f64)| {
        b.1.total_cmp(&a.1)
            .then(candidates[b.0].bm25.total_cmp(&candidates[a.0].bm25))
            .then_with(|| tie(a.0, b.0))
    };
    // The re-ranked (the head, and the close ones below it) sorted; the rest already are.
    let mut moved: Vec<(usize, f64)> = ranked[..head].to_vec();
    let mut rest = Vec::with_capacity(ranked.len() - head);
    for entry in &ranked[head..] {
        if candidates[entry.0].semantic > 0.0 {
            moved.push(*entry);
        } else {
            rest.push(*entry);
        }
    }
    moved.sort_by(better);
    let mut merged = Vec::with_capacity(ranked.len());
    let (mut a, mut b) = (moved.into_iter().peekable(), rest.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        if better(x, y) == Ordering::Greater {
            merged.extend(b.next());
        } else {
            merged.extend(a.next());
        }
    }
    merged.extend(a);
    merged.extend(b);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEIGHTS: Weights = Weights {
        bm25: 1.0,
        name: 0.0,
        prior: 0.0,
        semantic: 0.5,
        service: 0.0,
        k: 3.0,
        depth: 20,
    };

    fn candidates(bm25: &[f64], semantic: &[f64]) -> Vec<Signals> {
        bm25.iter()
            .zip(semantic)
            .map(|(&bm25, &semantic)| Signals {
                bm25,
                name: 0.0,
                prior: 0.0,
                semantic,
                service: 0,
            })
            .collect()
    }

    fn order(ranked: &[(usize, f64)]) -> Vec<usize> {
        ranked.iter().map(|r| r.0).collect()
    }

    #[test]
    fn meaning_lifts_a_tool_whose_betters_by_words_mean_something_else() {
        // BM25F's third is the closest in meaning; its first two are not close at all.
        let signals = candidates(
            &[6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
            &[0.0, 0.0, 0.9, 0.8, 0.7, 0.6],
        );
        let ranked = rank(&signals, &WEIGHTS, |a, b| a.cmp(&b));
        assert_eq!(order(&ranked)[..2], [2, 0]);
        // Without meaning, BM25F's order.
        let words_only = Weights {
            semantic: 0.0,
            ..WEIGHTS
        };
        assert_eq!(
            order(&rank(&signals, &words_only, |a, b| a.cmp(&b))),
            [0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn a_tool_found_by_meaning_alone_has_only_meanings_share() {
        let signals = candidates(&[2.0, 1.0, 0.0], &[0.0, 0.0, 0.9]);
        let ranked = rank(&signals, &WEIGHTS, |a, b| a.cmp(&b));
        let alone = ranked.iter().find(|r| r.0 == 2).map(|r| r.1);
        assert_eq!(alone, Some(0.5 / 4.0));
        assert_eq!(order(&ranked), [0, 1, 2]);
    }

    #[test]
    fn below_the_head_the_close_in_meaning_merge_into_bm25s_order() {
        // Forty candidates, the head is two: those below it that are close in meaning move,
        // the rest keep BM25F's order, and every candidate is there once, best first.
        let bm25: Vec<f64> = (0..40).map(|i| 40.0 - f64::from(i)).chain([0.0]).collect();
        let mut semantic = vec![0.0; 41];
        semantic[30] = 0.9;
        semantic[40] = 0.8;
        semantic[5] = 0.7;
        let weights = Weights {
            depth: 2,
            ..WEIGHTS
        };
        let ranked = rank(&candidates(&bm25, &semantic), &weights, |a, b| a.cmp(&b));
        let mut seen = order(&ranked);
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1), "{ranked:?}");
        assert!(seen.iter().position(|&c| c == 30) < seen.iter().position(|&c| c == 29));
        seen.sort_unstable();
        assert_eq!(seen, (0..41).collect::<Vec<_>>());
    }

    #[test]
    fn the_service_meaning_points_to_lifts_its_tools_over_a_far_services() {
        // BM25F's first two are of the tenth-closest service, its third of the closest; its
        // fourth's service is not ranked.
        let mut signals = candidates(&[4.0, 3.9, 3.8, 1.0], &[0.0; 4]);
        for (signal, service) in signals.iter_mut().zip([10, 10, 1, 0]) {
            signal.service = service;
        }
        let weights = Weights {
            service: 0.6,
            ..WEIGHTS
        };
        let ranked = rank(&signals, &weights, |a, b| a.cmp(&b));
        // The closest service's tool first; the far service's two keep their order.
        assert_eq!(order(&ranked), [2, 0, 1, 3]);
        // A tool of an unranked service has BM25F's share alone.
        assert_eq!(
            ranked.iter().find(|r| r.0 == 3).map(|r| r.1),
            Some(1.0 / 7.0)
        );
        // Without it, BM25F's order.
        assert_eq!(
            order(&rank(&signals, &WEIGHTS, |a, b| a.cmp(&b))),
            [0, 1, 2, 3]
        );
    }
}
