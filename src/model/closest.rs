//! "Did you mean": the names closest to a mistyped one, for unknown tools, targets and
//! addresses. Fuzzy matching (nucleo) finds abbreviations and missing letters; when it finds
//! nothing, edit distance catches swapped and wrong letters (`ecoh` → `echo`).

use nucleo::Matcher;
use nucleo::pattern::{CaseMatching, Normalization, Pattern};

/// Names longer than this are no typo of a tool's, type's or namespace's name (those are tens of
/// characters), and are not compared: matching a megabyte-long name against every address took
/// minutes of a core, in host code no run time limit interrupts.
const LONGEST_WANTED: usize = 256;

/// Up to `limit` candidates, best first.
pub fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<&'a str> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if wanted.trim().is_empty() || wanted.len() > LONGEST_WANTED {
        return Vec::new();
    }
    let mut matcher = Matcher::new(nucleo::Config::DEFAULT);
    let pattern = Pattern::parse(wanted, CaseMatching::Ignore, Normalization::Smart);
    let fuzzy: Vec<&str> = pattern
        .match_list(candidates.iter().copied(), &mut matcher)
        .into_iter()
        .take(limit)
        .map(|(c, _)| c)
        .collect();
    if !fuzzy.is_empty() {
        return fuzzy;
    }
    let wanted = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let distance = edit_distance(&wanted, &candidate.to_lowercase());
            let longest = wanted.chars().count().max(candidate.chars().count());
            (distance <= longest / 2).then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(limit).map(|(_, c)| c).collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(row[j + 1])
            };
            previous = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn fuzzy_then_edit_distance() {
        let tools = [
            "everything.echo",
            "everything.getSum",
            "time.getCurrentTime",
        ];
        assert_eq!(
            closest("getCurentTime", tools, 3),
            vec!["time.getCurrentTime"]
        );
        assert_eq!(closest("everything.ecoh", tools, 3)[0], "everything.echo");
        assert!(closest("zzzzzzzzzzzz", tools, 3).is_empty());
        assert!(closest("", tools, 3).is_empty());
    }

    #[test]
    fn a_name_far_longer_than_any_is_compared_with_nothing() {
        // Within the limit a long name is still matched; past it, not even to a name a few
        // letters away.
        let long = format!("ns.{}", "a".repeat(240));
        assert_eq!(
            closest(&format!("{long}bb"), [long.as_str()], 3),
            [long.as_str()]
        );
        assert!(closest(&format!("{long}{}", "b".repeat(20)), [long.as_str()], 3).is_empty());
        // A megabyte-long name is compared with nothing (it took minutes of edit distances).
        let huge = "x".repeat(1 << 20);
        let many: Vec<String> = (0..2_000).map(|i| format!("ns.tool{i}")).collect();
        assert!(closest(&huge, many.iter().map(String::as_str), 3).is_empty());
    }
}
