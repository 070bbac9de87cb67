//! The search evaluation: 496 natural-language requests over the 94 recorded servers of
//! `tests/fixtures/search_eval/` (2,445 tools), split by a hash of each request into a
//! development half (the only one the ranker is tuned on) and a test half. Prints recall@1,
//! recall@3 and MRR per split and per difficulty; `SEARCH_EVAL_MISSES=dev` (or `test`) lists
//! that split's requests whose expected tool is not first. The floors guard against regressions
//! only; the figures themselves are the measurement (docs/search.md).

use std::collections::{BTreeMap, BTreeSet};

use capabilities::catalog::fixtures::{eval_catalog_dir, load_all, search_index};
use capabilities::catalog::search::Ranking;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Request {
    query: String,
    /// Any of these is a right answer (several servers can do the same job).
    expected: Vec<String>,
    difficulty: String,
    /// paraphrase, question, service, near (a sibling is the trap), typo.
    kind: String,
}

/// Which half a request is in: the top bit of its FNV-1a hash, so the split never depends on
/// the order of the file or on requests added later.
fn split(query: &str) -> &'static str {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in query.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    if hash >> 63 == 0 { "dev" } else { "test" }
}

#[derive(Default)]
struct Tally {
    count: usize,
    at1: usize,
    at3: usize,
    reciprocal: f64,
}

impl Tally {
    fn add(&mut self, rank: Option<usize>) {
        self.count += 1;
        if let Some(rank) = rank {
            self.at1 += usize::from(rank == 1);
            self.at3 += usize::from(rank <= 3);
            self.reciprocal += 1.0 / rank as f64;
        }
    }

    fn recall_at_3(&self) -> f64 {
        self.at3 as f64 / self.count.max(1) as f64
    }

    fn mrr(&self) -> f64 {
        self.reciprocal / self.count.max(1) as f64
    }

    fn row(&self, label: &str) -> String {
        let n = self.count.max(1) as f64;
        format!(
            "| {label} | {} | {:.3} | {:.3} | {:.3} |",
            self.count,
            self.at1 as f64 / n,
            self.recall_at_3(),
            self.mrr()
        )
    }
}

/// Floors under the test split's figures, well below what it reaches: a regression trips them,
/// noise does not.
const MIN_TEST_RECALL_AT_3: f64 = 0.85;
const MIN_TEST_MRR: f64 = 0.8;

#[test]
fn search_evaluation_over_94_recorded_servers() -> anyhow::Result<()> {
    let servers = load_all(&eval_catalog_dir())?;
    let (index, tools) = search_index(&servers);
    let known: BTreeSet<String> = tools.iter().map(|t| t.address()).collect();
    let path = eval_catalog_dir().join("../requests.json");
    let requests: Vec<Request> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;

    let show = std::env::var("SEARCH_EVAL_MISSES").ok();
    let mut tallies: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for request in &requests {
        for address in &request.expected {
            assert!(
                known.contains(address),
                "{:?} expects unknown tool {address}",
                request.query
            );
        }
        let ranked: Vec<String> = match index.search(&request.query, None) {
            Ranking::NoTerms => Vec::new(),
            Ranking::Ranked(hits) => hits.into_iter().map(|h| h.address.to_string()).collect(),
        };
        let rank = ranked
            .iter()
            .position(|a| request.expected.contains(a))
            .map(|i| i + 1);
        let half = split(&request.query);
        for group in [
            "all",
            request.difficulty.as_str(),
            &format!("kind {}", request.kind),
        ] {
            tallies
                .entry((half.to_string(), group.to_string()))
                .or_default()
                .add(rank);
        }
        if show.as_deref() == Some(half) && rank != Some(1) {
            let top: Vec<&str> = ranked.iter().take(3).map(String::as_str).collect();
            misses.push(format!(
                "  [{} {}] {:?}: rank {:?} of {:?}; top {:?}",
                request.difficulty, request.kind, request.query, rank, request.expected, top
            ));
        }
    }

    println!(
        "search evaluation: {} requests, {} tools of {} servers",
        requests.len(),
        tools.len(),
        servers.len()
    );
    println!("| split / group | requests | recall@1 | recall@3 | MRR |\n|---|---|---|---|---|");
    for half in ["dev", "test"] {
        for group in [
            "all",
            "easy",
            "medium",
            "hard",
            "kind near",
            "kind paraphrase",
            "kind question",
            "kind service",
            "kind typo",
        ] {
            if let Some(tally) = tallies.get(&(half.to_string(), group.to_string())) {
                println!("{}", tally.row(&format!("{half} {group}")));
            }
        }
    }
    for miss in &misses {
        println!("{miss}");
    }
    let test = &tallies[&("test".to_string(), "all".to_string())];
    assert!(
        test.recall_at_3() >= MIN_TEST_RECALL_AT_3 && test.mrr() >= MIN_TEST_MRR,
        "test split fell to recall@3 {:.3}, MRR {:.3}",
        test.recall_at_3(),
        test.mrr()
    );
    Ok(())
}
