//! Text cut to fit a size (escapes counted as JSON writes them), and the numbers the size
//! messages print. Sizes themselves are measured with `crate::model::json_size`.

use crate::model::json_size::JsonSize;

/// The bytes one char takes inside a JSON string as serde_json escapes it.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
        c if c < ' ' => 6,
        c => c.len_utf8(),
    }
}

/// Cuts `text` so that it takes at most `max` bytes both as UTF-8 and inside a JSON string
/// (escapes counted), ending it with a marker that says how long it was. Text within `max` is
/// left as it is, so cutting twice with the same `max` changes nothing.
pub fn cut_text(text: &mut String, max: usize) {
    let json_bytes: usize = text.chars().map(escaped_len).sum();
    if json_bytes <= max {
        return;
    }
    let marker = format!("… [cut: {} bytes in all]", thousands(text.len()));
    let room = max.saturating_sub(marker.len());
    let mut used = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        used += escaped_len(c);
        if used > room {
            break;
        }
        end = at + c.len_utf8();
    }
    text.truncate(end);
    text.push_str(&marker);
}

/// `1,843,201` or `at least 67,108,865`, for messages.
pub fn describe(size: JsonSize) -> String {
    match size {
        JsonSize::Exact(n) => thousands(n),
        JsonSize::AtLeast(n) => format!("at least {}", thousands(n)),
    }
}

/// `1843201` → `1,843,201`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json_size::json_len;

    #[test]
    fn cut_text_counts_escapes_keeps_char_boundaries_and_says_how_long_it_was() {
        let mut short = "fits".to_string();
        cut_text(&mut short, 4);
        assert_eq!(short, "fits");

        let mut long = "é".repeat(10_000);
        cut_text(&mut long, 1_000);
        assert!(long.len() <= 1_000, "{}", long.len());
        assert!(long.ends_with("… [cut: 20,000 bytes in all]"), "{long}");
        let again = long.clone();
        cut_text(&mut long, 1_000);
        assert_eq!(long, again, "cutting twice changes nothing");

        // Control characters take six bytes each once escaped.
        let mut nul = "\0".repeat(1_000);
        cut_text(&mut nul, 600);
        assert!(json_len(&nul) <= 602, "{}", json_len(&nul));
        assert!(nul.ends_with("bytes in all]"));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_843_201), "1,843,201");
    }
}
