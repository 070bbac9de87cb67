//! Which sources a script can reach: a namespace is a global of the sandbox, so a script that
//! never names it as a whole identifier (`time.now()`, `time["x"]`, not `runtime`) never calls
//! it. `exec` and the hub start, or wait for, only those.

/// True when `code` uses `namespace` as an identifier, not merely as part of a longer name.
pub fn mentions(code: &str, namespace: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    code.match_indices(namespace).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + namespace.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The names among `namespaces` that `code` mentions, in their order.
pub fn mentioned<'a>(code: &str, namespaces: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    namespaces
        .into_iter()
        .filter(|namespace| mentions(code, namespace))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_is_mentioned_only_as_a_whole_identifier() {
        assert!(mentions("return await time.now()", "time"));
        assert!(mentions("const t = time", "time"));
        assert!(mentions("time[\"get-now\"]()", "time"));
        assert!(!mentions("const runtime = 1; timeline()", "time"));
        assert!(!mentions("$time._time", "time"));
    }

    #[test]
    fn only_the_mentioned_sources_are_named() {
        assert_eq!(
            mentioned("return 1", ["time", "everything"]),
            Vec::<String>::new()
        );
        assert_eq!(
            mentioned("await everything.echo({})", ["time", "everything"]),
            vec!["everything".to_string()]
        );
    }
}
