//! One line for an error and its causes, for messages a user reads.

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
