//! RFC 6901 JSON Pointers, the paths `stored.collections` advertises and `hub.read` takes:
//! escaping an object key into a token and parsing a path back into keys.

/// A key as one pointer token: `~` becomes `~0` and `/` becomes `~1` (in that order, so that
/// `~1` in a key is not read back as `/`).
pub(super) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The pointer of `key` under the pointer `parent`.
pub(super) fn child(parent: &str, key: &str) -> String {
    let mut path = String::with_capacity(parent.len() + key.len() + 1);
    path.push_str(parent);
    path.push('/');
    path.push_str(&escape(key));
    path
}

/// Splits a pointer into its unescaped tokens: `""` is the whole value (no tokens), anything
/// else starts with `/`. The error says what is wrong with the text, for a message that shows
/// the path too.
pub(super) fn parse(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "a JSON Pointer starts with `/` (like `/{}`), or is \"\" for a root array",
            escape(path)
        ));
    };
    rest.split('/').map(unescape).collect()
}

fn unescape(token: &str) -> Result<String, String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => {
                return Err(format!(
                    "in the token `{token}`, `~` must be followed by 0 (for `~`) or 1 (for `/`)"
                ));
            }
        }
    }
    Ok(out)
}

/// A token as an array index: decimal digits without a leading zero (RFC 6901); `None` for
/// anything else, `-` included (it names the row after the last, which never exists here).
pub(super) fn as_index(token: &str) -> Option<usize> {
    let leading_zero = token.len() > 1 && token.starts_with('0');
    if token.is_empty() || leading_zero || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tilde_before_slash() {
        assert_eq!(escape("a/b"), "a~1b");
        assert_eq!(escape("m~n"), "m~0n");
        assert_eq!(escape("~1"), "~01");
        assert_eq!(child("", "a/b"), "/a~1b");
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!(parse(""), Ok(vec![]));
        assert_eq!(parse("/"), Ok(vec![String::new()]));
        assert_eq!(
            parse("/a~1b/m~0n/~01"),
            Ok(vec!["a/b".to_string(), "m~n".to_string(), "~1".to_string()])
        );
        let Err(no_slash) = parse("messages") else {
            panic!("a path without / parsed");
        };
        assert!(no_slash.contains("`/messages`"), "{no_slash}");
        let Err(bad_tilde) = parse("/a~2") else {
            panic!("~2 parsed");
        };
        assert!(bad_tilde.contains("`a~2`"), "{bad_tilde}");
        assert!(parse("/a~").is_err());
    }

    #[test]
    fn indexes_are_plain_decimals() {
        assert_eq!(as_index("0"), Some(0));
        assert_eq!(as_index("17"), Some(17));
        assert_eq!(as_index("017"), None);
        assert_eq!(as_index("-"), None);
        assert_eq!(as_index("+1"), None);
        assert_eq!(as_index(""), None);
    }
}
