//! The related words of the query lexicon (`lexicon.txt`, generated from WordNet by
//! `scripts/search-lexicon.py`: synonyms of a word's most frequent senses and its derived forms,
//! only where the related word occurs in recorded tool catalogues), stemmed once per process.

use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

const LEXICON: &str = include_str!("lexicon.txt");

/// Stemmed word → stemmed related words, over every line of the lexicon. Words that stem alike
/// ("summarize", "summarized") share one entry.
pub(super) fn related(stem: &str) -> &'static [String] {
    table().get(stem).map_or(&[], Vec::as_slice)
}

/// Loads the lexicon now, so the first search does not pay for it (a few milliseconds).
pub(super) fn load() {
    table();
}

fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(build)
}

fn build() -> HashMap<String, Vec<String>> {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut table: HashMap<String, Vec<String>> = HashMap::new();
    for line in LEXICON.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split_whitespace();
        let Some(word) = words.next() else {
            continue;
        };
        let stem = stemmer.stem(word).into_owned();
        let entry = table.entry(stem.clone()).or_default();
        for other in words {
            let other = stemmer.stem(other).into_owned();
            if other != stem && !entry.contains(&other) {
                entry.push(other);
            }
        }
    }
    table
}
