//! One line for an error and its causes, for messages a user reads, and the one way a message
//! repeats what the user sent ([`echo`]).

use std::borrow::Cow;

/// How much of the user's own input a message repeats, in bytes.
pub const ECHO_BYTES: usize = 80;

/// `input` as a message quotes it: whole when short, else its first [`ECHO_BYTES`] (cut on a
/// character boundary) and how much was left out. A megabyte-long query or name repeated in full
/// would bury the message and cost a model its context for nothing.
pub fn echo(input: &str) -> Cow<'_, str> {
    if input.len() <= ECHO_BYTES {
        return Cow::Borrowed(input);
    }
    let head = &input[..input.floor_char_boundary(ECHO_BYTES)];
    Cow::Owned(format!("{head}…(+{} bytes)", input.len() - head.len()))
}

/// Formats an error and every error in its `source()` chain, skipping a cause whose text the
/// message before it already contains (many libraries repeat their cause in their own message).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_keeps_short_input_and_cuts_long_input_on_a_char_boundary() {
        assert_eq!(echo("github.createIssue"), "github.createIssue");
        let exact = "a".repeat(ECHO_BYTES);
        assert_eq!(echo(&exact), exact.as_str());

        let long = "q".repeat(1_000_000);
        let cut = echo(&long);
        assert_eq!(
            cut,
            format!(
                "{}…(+{} bytes)",
                "q".repeat(ECHO_BYTES),
                1_000_000 - ECHO_BYTES
            )
        );

        // `é` is two bytes: a cut through the 80th byte falls back to the boundary before it.
        let accented = format!("{}{}", "a".repeat(ECHO_BYTES - 1), "é".repeat(100));
        let cut = echo(&accented);
        assert!(cut.starts_with(&"a".repeat(ECHO_BYTES - 1)), "{cut}");
        assert!(cut.ends_with(&format!("…(+{} bytes)", 200)), "{cut}");
        assert!(cut.len() < ECHO_BYTES + 20, "{cut}");
    }
}
