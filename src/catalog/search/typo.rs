//! Typo tolerance: the indexed terms within a small edit distance of a query word no tool uses
//! ("ecko" → echo, "contaners" → container), with transpositions counting as one edit. A word
//! no tool uses is often no typo at all: "search for rust tutorials" is not about `must`, and
//! build 4512 is not build 512.

use super::semantic;

/// Whether `word` (lower case, one token), which no tool uses, may be a misspelling worth
/// correcting: not a number, and not a word the meaning model's vocabulary has whole ("rust",
/// "fake", "grab" are words; "descibe" and "contaners" are not).
pub(super) fn may_be_typo(word: &str) -> bool {
    !word.chars().any(|c| c.is_ascii_digit()) && !semantic::is_whole_word(word)
}

/// Edits allowed for a word of this many characters: none below four, where nearly every
/// word is one edit from another, and two from eight on.
pub(super) fn allowed_edits(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The optimal-string-alignment distance between `a` and `b`, or `None` once it must exceed
/// `max` (rows are abandoned as soon as every cell is over the bound).
pub(super) fn distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let width = b.len() + 1;
    let mut before: Vec<usize> = vec![0; width];
    let mut previous: Vec<usize> = (0..width).collect();
    let mut current: Vec<usize> = vec![0; width];
    for i in 1..=a.len() {
        current[0] = i;
        let mut row_min = current[0];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
            row_min = row_min.min(best);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    let d = previous[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_words_of_the_language_are_not_typos() {
        assert!(may_be_typo("descibe"));
        assert!(!may_be_typo("rust"));
        assert!(!may_be_typo("4512"));
        assert!(!may_be_typo("10am"));
    }

    #[test]
    fn counts_substitutions_insertions_and_transpositions_as_one() {
        assert_eq!(distance_within("ecko", "echo", 1), Some(1));
        assert_eq!(distance_within("crad", "card", 1), Some(1));
        assert_eq!(distance_within("kubctl", "kubectl", 1), Some(1));
        assert_eq!(distance_within("same", "same", 1), Some(0));
        assert_eq!(distance_within("tokyo", "token", 1), None);
        assert_eq!(distance_within("a", "abcd", 2), None);
    }
}
