//! The search evaluation over the 94 recorded servers of `tests/fixtures/search_eval/` (2,445
//! tools): 496 natural-language requests split by a hash of each request into a development half
//! (`dev`) and a test half, a second development set of 266 requests weighted to paraphrases and
//! questions (`dev2`), and 306 requests written blind to the ranker that are only ever read
//! (`held-out`). The ranker is tuned on the development sets only. Prints recall@1, recall@3 and
//! MRR per split, difficulty and kind; `SEARCH_EVAL_MISSES=dev` (or `dev2`, `test`) lists that
//! split's requests whose expected tool is not first. The floors guard against regressions only;
//! the figures themselves are the measurement (docs/search.md).

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

/// Floors (recall@3, MRR) under the read-only splits' figures, well below what they reach: a
/// regression trips them, noise does not.
const FLOORS: [(&str, f64, f64); 2] = [("test", 0.87, 0.8), ("held-out", 0.77, 0.69)];

/// How a request is assigned its split, from its text.
type Assign = fn(&str) -> &'static str;

/// The request files and how each of their requests is assigned its split.
const SETS: [(&str, Assign); 3] = [
    ("requests.json", split),
    ("requests-dev-2.json", |_| "dev2"),
    ("requests-held-out.json", |_| "held-out"),
];

#[test]
fn search_evaluation_over_94_recorded_servers() -> anyhow::Result<()> {
    let servers = load_all(&eval_catalog_dir())?;
    let (index, tools) = search_index(&servers);
    let known: BTreeSet<String> = tools.iter().map(|t| t.address()).collect();
    let mut requests = Vec::new();
    for (file, assign) in SETS {
        let path = eval_catalog_dir().join("..").join(file);
        let set: Vec<Request> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        requests.extend(
            set.into_iter()
                .map(|request| (assign(&request.query), request)),
        );
    }

    let show = std::env::var("SEARCH_EVAL_MISSES").ok();
    let mut tallies: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut misses = Vec::new();
    for (half, request) in &requests {
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
        if show.as_deref() == Some(*half) && rank != Some(1) {
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
    for half in ["dev", "dev2", "test", "held-out"] {
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
    for (half, recall_at_3, mrr) in FLOORS {
        let tally = &tallies[&(half.to_string(), "all".to_string())];
        assert!(
            tally.recall_at_3() >= recall_at_3 && tally.mrr() >= mrr,
            "the {half} split fell to recall@3 {:.3}, MRR {:.3}",
            tally.recall_at_3(),
            tally.mrr()
        );
    }
    Ok(())
}
