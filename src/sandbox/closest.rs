//! "Did you mean": the names closest to a mistyped tool name, for unknown-tool errors.

/// Up to `limit` candidates ranked by similarity to `wanted`, best first; candidates that share
/// nothing recognisable with it are left out.
pub fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<&'a str> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let distance = edit_distance(&wanted_lower, &lower);
            let contains = lower.contains(&wanted_lower) || wanted_lower.contains(&lower);
            let close = distance <= wanted_lower.chars().count().max(lower.chars().count()) / 2;
            (contains || close)
                .then_some((if contains { distance.min(1) } else { distance }, candidate))
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
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_typos_and_substrings() {
        let tools = ["createIssue", "getIssue", "searchIssues", "listRepos"];
        assert_eq!(closest("createIssues", tools, 3)[0], "createIssue");
        assert_eq!(closest("issue", tools, 3).len(), 3);
        assert!(closest("zzzzzz", tools, 3).is_empty());
    }
}
