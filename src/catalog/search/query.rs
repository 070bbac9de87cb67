//! What a query asks for, as weighted stemmed terms: the words typed, and at lower weights the
//! words they stand for — the hand-kept synonyms below, the WordNet lexicon (`lexicon`), the
//! intent of a question ("how many" → count), words written apart that an indexed name writes as
//! one ("who am I" → whoami), a service's words that its namespace abbreviates ("google drive" →
//! gdrive), and for a word no tool uses, the indexed terms it is a typo of (`typo`).

use rust_stemmers::Stemmer;

use super::tokens::{for_each_token, is_stop_word};
use super::{lexicon, typo};

/// Everyday words users type for what tool listings call otherwise ("folder" for "directory",
/// "PR" for "pull request"). A query word also searches its listed words, at
/// [`SYNONYM_WEIGHT`], so the literal word still ranks first. Sorted by the query word.
pub(super) const SYNONYMS: &[(&str, &[&str])] = &[
    ("alert", &["dialog"]),
    ("appointment", &["event"]),
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
    ("inbox", &["mail", "message"]),
    ("javascript", &["script", "evaluate"]),
    ("js", &["javascript"]),
    ("lat", &["latitude", "coordinates"]),
    ("latitude", &["coordinates"]),
    ("link", &["relation"]),
    ("lng", &["longitude", "coordinates"]),
    ("longitude", &["coordinates"]),
    ("make", &["create"]),
    ("meeting", &["event"]),
    ("meetings", &["event"]),
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
    ("slow", &["performance"]),
    ("ticket", &["issue"]),
    ("visit", &["navigate"]),
    ("webpage", &["page", "url"]),
    ("website", &["page", "url"]),
];

/// How much a synonym counts relative to the word the user typed.
pub(super) const SYNONYM_WEIGHT: f64 = 0.5;

/// How much a WordNet synonym or derived form counts.
pub(super) const LEXICON_WEIGHT: f64 = 0.35;

/// How much a likely correction of a typo counts.
pub(super) const TYPO_WEIGHT: f64 = 0.8;

/// How much a word written as two or three ("who am I" for `whoami`, "set up" for `setup`)
/// counts: as much as a typed word, since the tool's name says exactly what was typed.
pub(super) const COMPOUND_WEIGHT: f64 = 1.0;

/// How much an intent read from a question counts.
pub(super) const INTENT_WEIGHT: f64 = 0.6;

/// Words opening a question or a request to be shown something: the tool reads (get, list)
/// rather than changes anything.
const QUESTION_WORDS: &[&str] = &[
    "any", "are", "did", "does", "how", "is", "show", "what", "whats", "when", "where", "which",
    "who", "whose", "why",
];

/// Phrases whose intent the tool texts say in other words, and the words they say it with.
const INTENTS: &[(&[&str], &[&str])] = &[
    (&["how", "many"], &["count", "number"]),
    (&["number", "of"], &["count"]),
    (&["right", "now"], &["current"]),
    (&["now"], &["current"]),
    (&["money", "back"], &["refund"]),
    (&["how", "far"], &["distance"]),
    (&["what", "happened"], &["history", "log", "activity"]),
    (&["has", "access"], &["member", "permission"]),
];

/// How many unknown words of one request are looked for among the indexed terms: each look
/// compares the word with every term, and a request of hundreds of made-up words held the hub
/// for seconds. A request has a typo or two.
const MOST_CORRECTED: usize = 4;

/// One term of an analysed query.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct QueryTerm {
    pub stem: String,
    pub weight: f64,
    /// Typed (or the correction of a typed word), not only related to one.
    pub typed: bool,
}

/// Analyses `query` into terms, typed ones first. `known` says whether the index has a term;
/// `near` lists the indexed terms within `edits` of a stem, for words no tool uses;
/// `service` says whether a stem is a word of some namespace.
pub(super) fn analyse(
    query: &str,
    stemmer: &Stemmer,
    known: impl Fn(&str) -> bool,
    near: impl Fn(&str, usize) -> Vec<String>,
    service: impl Fn(&str) -> bool,
) -> Vec<QueryTerm> {
    let mut words: Vec<String> = Vec::new();
    for_each_token(query, |w| words.push(w.to_string()));
    let names = proper_names(query);
    let mut terms: Vec<QueryTerm> = Vec::new();
    let mut related: Vec<(String, f64)> = Vec::new();
    let mut corrected = 0;
    for word in &words {
        if is_stop_word(word) {
            continue;
        }
        let stem = stemmer.stem(word).into_owned();
        if !known(&stem) && !names.contains(word) {
            // The typed word's length: stemming shortens "isue" to "isu", below any allowance.
            let edits = typo::allowed_edits(word.chars().count());
            let corrections = if edits > 0 && corrected < MOST_CORRECTED && typo::may_be_typo(word)
            {
                corrected += 1;
                near(&stem, edits)
            } else {
                Vec::new()
            };
            if !corrections.is_empty() {
                for correction in corrections {
                    push_term(&mut terms, correction, TYPO_WEIGHT);
                }
                continue;
            }
        }
        if let Ok(i) = SYNONYMS.binary_search_by(|(w, _)| (*w).cmp(word)) {
            for synonym in SYNONYMS[i].1 {
                related.push((stemmer.stem(synonym).into_owned(), SYNONYM_WEIGHT));
            }
        }
        for other in lexicon::related(&stem) {
            related.push((other.clone(), LEXICON_WEIGHT));
        }
        push_term(&mut terms, stem, 1.0);
    }
    // Stop words count here: "who am I" and "log in" are made of them.
    for width in 2..=3 {
        for window in words.windows(width) {
            let joined: String = window.concat();
            let stem = stemmer.stem(&joined).into_owned();
            if known(&stem) {
                push_term(&mut terms, stem, COMPOUND_WEIGHT);
            }
        }
    }
    // A namespace that writes a service's first word as its initial: "google drive" → gdrive.
    // Both must be namespace words, so "get driving" is not `gdrive`.
    for window in words.windows(2) {
        let [first, second] = window else {
            continue;
        };
        if is_stop_word(first) || is_stop_word(second) || first.len() < 3 {
            continue;
        }
        let Some(initial) = first.chars().next() else {
            continue;
        };
        let stem = stemmer.stem(&format!("{initial}{second}")).into_owned();
        if known(&stem) && service(&stem) && service(&stemmer.stem(first)) {
            push_term(&mut terms, stem, COMPOUND_WEIGHT);
        }
    }
    if words
        .first()
        .is_some_and(|w| QUESTION_WORDS.binary_search(&w.as_str()).is_ok())
    {
        related.push(("get".to_string(), INTENT_WEIGHT));
        related.push(("list".to_string(), INTENT_WEIGHT));
    }
    for (phrase, meaning) in INTENTS {
        if words.windows(phrase.len()).any(|w| w == *phrase) {
            for m in *meaning {
                related.push((stemmer.stem(m).into_owned(), INTENT_WEIGHT));
            }
        }
    }
    for term in &mut terms {
        term.typed = true;
    }
    for (stem, weight) in related {
        match terms.iter_mut().find(|t| t.stem == stem) {
            Some(t) => t.weight = t.weight.max(weight),
            None => terms.push(QueryTerm {
                stem,
                weight,
                typed: false,
            }),
        }
    }
    terms
}

/// Capitalised words after the first ("Alice", "Tokyo"): names of people and places, which no
/// tool text uses and which are not typos of words that some tool does.
fn proper_names(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .skip(1)
        .filter(|w| {
            let mut chars = w.chars();
            chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
        })
        .map(str::to_lowercase)
        .collect()
}

fn push_term(terms: &mut Vec<QueryTerm>, stem: String, weight: f64) {
    match terms.iter_mut().find(|t| t.stem == stem) {
        Some(t) => t.weight = t.weight.max(weight),
        None => terms.push(QueryTerm {
            stem,
            weight,
            typed: true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capitalised_words_after_the_first_are_names() {
        assert_eq!(proper_names("Remember that Alice works at ACME"), ["alice"]);
    }

    #[test]
    fn words_written_apart_find_the_name_written_as_one() {
        let stemmer = Stemmer::create(rust_stemmers::Algorithm::English);
        let known = |stem: &str| ["whoami", "setup"].contains(&stem);
        let terms = analyse(
            "who am I logged in as",
            &stemmer,
            known,
            |_, _| Vec::new(),
            |_| false,
        );
        let whoami = terms.iter().find(|t| t.stem == "whoami");
        assert!(whoami.is_some_and(|t| t.typed && t.weight == COMPOUND_WEIGHT));
        // Only words the index has: "logged in" joins to nothing any tool is named.
        assert!(!terms.iter().any(|t| t.stem.starts_with("loggedin")));
        let terms = analyse(
            "set up the repo",
            &stemmer,
            known,
            |_, _| Vec::new(),
            |_| false,
        );
        assert!(terms.iter().any(|t| t.stem == "setup"));
    }

    #[test]
    fn a_service_written_out_finds_the_namespace_abbreviating_it() {
        let stemmer = Stemmer::create(rust_stemmers::Algorithm::English);
        let services = |stem: &str| ["googl", "gdrive"].contains(&stem);
        let analysed = |query: &str| {
            analyse(query, &stemmer, services, |_, _| Vec::new(), services)
                .into_iter()
                .any(|t| t.stem == "gdrive" && t.typed)
        };
        assert!(analysed("search google drive"));
        // "get" names no service.
        assert!(!analysed("get driving directions"));
    }

    /// A `near` that corrects every stem to "fixed" and the stem, counting its looks.
    fn counted_near(looked: &std::cell::Cell<usize>) -> impl Fn(&str, usize) -> Vec<String> + '_ {
        move |stem, _| {
            looked.set(looked.get() + 1);
            vec![format!("fixed{stem}")]
        }
    }

    #[test]
    fn only_a_requests_first_few_unknown_words_are_corrected() {
        let stemmer = Stemmer::create(rust_stemmers::Algorithm::English);
        let looked = std::cell::Cell::new(0);
        let near = counted_near(&looked);
        let query = "qwertz asdfgh yxcvbn poiuzt lkjhgf mnbvcx wertzu sdfghj";
        let terms = analyse(query, &stemmer, |_| false, near, |_| false);
        assert_eq!(looked.get(), MOST_CORRECTED);
        // The first ones are corrected; the rest stay as typed, found by nothing.
        assert!(terms.iter().any(|t| t.stem == "fixedqwertz"));
        assert!(terms.iter().any(|t| t.stem == "wertzu"));
    }

    #[test]
    fn words_of_the_language_and_numbers_are_not_corrected() {
        let stemmer = Stemmer::create(rust_stemmers::Algorithm::English);
        let looked = std::cell::Cell::new(0);
        let near = counted_near(&looked);
        // Only "rust", "rsut" and "4512" are words no tool uses.
        let known = |stem: &str| !["rust", "rsut", "4512"].contains(&stem);
        let terms = analyse(
            "rust tutorials for build 4512",
            &stemmer,
            known,
            &near,
            |_| false,
        );
        assert_eq!(looked.get(), 0);
        assert!(!terms.iter().any(|t| t.stem.starts_with("fixed")));
        assert!(terms.iter().any(|t| t.stem == "rust" && t.typed));
        // A misspelling still is.
        let terms = analyse("rsut tutorials", &stemmer, known, near, |_| false);
        assert_eq!(looked.get(), 1);
        assert!(terms.iter().any(|t| t.stem == "fixedrsut"));
    }

    #[test]
    fn word_lists_are_sorted_for_binary_search() {
        assert!(SYNONYMS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(QUESTION_WORDS.windows(2).all(|w| w[0] < w[1]));
    }
}
