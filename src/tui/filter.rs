//! Fuzzy filtering of runs, approvals and tools (nucleo, the matcher of the helix editor): `pub`
//! finds `counter.publish`, and a space separates words that must all match.

use nucleo::pattern::{CaseMatching, Normalization, Pattern};
use nucleo::{Matcher, Utf32Str};

/// A compiled filter; an empty one matches everything.
pub struct Filter {
    pattern: Option<Pattern>,
    matcher: Matcher,
    buffer: Vec<char>,
}

impl Filter {
    pub fn new(text: &str) -> Filter {
        let pattern = (!text.trim().is_empty())
            .then(|| Pattern::parse(text, CaseMatching::Smart, Normalization::Smart));
        Filter {
            pattern,
            matcher: Matcher::new(nucleo::Config::DEFAULT),
            buffer: Vec::new(),
        }
    }

    /// True when the filter is empty or matches any of `fields`.
    pub fn matches<'a>(&mut self, fields: impl IntoIterator<Item = &'a str>) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        fields.into_iter().any(|field| {
            pattern
                .score(Utf32Str::new(field, &mut self.buffer), &mut self.matcher)
                .is_some()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Filter;

    #[test]
    fn fuzzy_words_match_and_empty_matches_all() {
        let mut filter = Filter::new("pub");
        assert!(filter.matches(["counter.publish"]));
        assert!(!filter.matches(["counter.write", "run_abc"]));
        let mut words = Filter::new("cnt wrt");
        assert!(words.matches(["counter.write"]));
        let mut empty = Filter::new("  ");
        assert!(empty.matches(["anything"]));
    }
}
