//! Search quality over the recorded catalogue: natural-language queries a user or agent would type
//! (`tests/fixtures/search_queries.json`) must find their tool in the top three, with every
//! recorded server indexed at once.

use std::collections::BTreeSet;

use capabilities::catalog::fixtures::{fixture_dir, load_all, search_index};
use capabilities::catalog::search::Ranking;
use serde::Deserialize;

/// One query and the addresses that count as a right answer. Several servers can do the same job
/// (three browsers take screenshots), so any of the listed tools is a hit.
#[derive(Debug, Deserialize)]
struct Case {
    query: String,
    expected: Vec<String>,
}

const MIN_RECALL_AT_3: f64 = 0.9;

#[test]
fn recall_at_3_over_the_recorded_catalogue() -> anyhow::Result<()> {
    let servers = load_all(&fixture_dir())?;
    let (index, tools) = search_index(&servers);
    let known: BTreeSet<String> = tools.iter().map(|t| t.address()).collect();

    let path = fixture_dir().join("../search_queries.json");
    let cases: Vec<Case> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    assert!(cases.len() >= 40, "only {} queries", cases.len());
    let mut covered = BTreeSet::new();
    let mut misses = Vec::new();
    for case in &cases {
        for address in &case.expected {
            assert!(
                known.contains(address),
                "{:?} expects unknown tool {address}",
                case.query
            );
            covered.extend(address.split('.').next().map(str::to_string));
        }
        let top: Vec<String> = match index.search(&case.query, None) {
            Ranking::NoTerms => Vec::new(),
            Ranking::Ranked(hits) => hits
                .into_iter()
                .take(3)
                .map(|h| h.address.to_string())
                .collect(),
        };
        if !top.iter().any(|a| case.expected.contains(a)) {
            misses.push(format!(
                "{:?}: expected {:?}, got {:?}",
                case.query, case.expected, top
            ));
        }
    }
    let uncovered: Vec<&str> = servers
        .iter()
        .map(|s| s.namespace.as_str())
        .filter(|ns| !covered.contains(*ns))
        .collect();
    assert!(
        uncovered.is_empty(),
        "no query expects a tool of {uncovered:?}"
    );

    let recall = (cases.len() - misses.len()) as f64 / cases.len() as f64;
    println!(
        "recall@3 = {recall:.3} over {} queries, {} tools; misses:",
        cases.len(),
        tools.len()
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(
        recall >= MIN_RECALL_AT_3,
        "recall@3 {recall:.3} < {MIN_RECALL_AT_3}; misses:\n{}",
        misses.join("\n")
    );
    Ok(())
}
