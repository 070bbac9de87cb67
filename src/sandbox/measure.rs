//! Sizes as JSON without building the JSON: what the caps on tool results, the final value and
//! the envelope are measured with, and the numbers their messages print.

use std::io;

use serde::Serialize;

/// The size of a value as compact JSON (serde_json), counted up to a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonSize {
    Exact(usize),
    /// Counting stopped here: the JSON is at least this long.
    AtLeast(usize),
}

impl JsonSize {
    pub fn exceeds(self, max: usize) -> bool {
        match self {
            JsonSize::Exact(n) | JsonSize::AtLeast(n) => n > max,
        }
    }

    /// `1,843,201` or `at least 67,108,865`, for messages.
    pub fn describe(self) -> String {
        match self {
            JsonSize::Exact(n) => thousands(n),
            JsonSize::AtLeast(n) => format!("at least {}", thousands(n)),
        }
    }
}

/// Counts the bytes written and gives up once past `stop_after`, so measuring a huge value costs
/// no memory and at most `stop_after` bytes of work.
struct Counter {
    bytes: usize,
    stop_after: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes = self.bytes.saturating_add(buf.len());
        if self.bytes > self.stop_after {
            return Err(io::Error::other("past the measuring limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The JSON size of `value`, exact when it is at most `stop_after` bytes.
pub fn json_size<T: Serialize + ?Sized>(value: &T, stop_after: usize) -> JsonSize {
    let mut counter = Counter {
        bytes: 0,
        stop_after,
    };
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => JsonSize::Exact(counter.bytes),
        // Only the counter fails, and only past its limit (serde_json cannot fail on a `Value`
        // or on the envelope's plain types otherwise).
        Err(_) => JsonSize::AtLeast(counter.bytes),
    }
}

/// The exact JSON size of a small value (an envelope, one of its parts).
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    match json_size(value, usize::MAX) {
        JsonSize::Exact(n) | JsonSize::AtLeast(n) => n,
    }
}

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
    use serde_json::json;

    use super::*;

    #[test]
    fn sizes_match_serde_json_and_stop_early() {
        let value = json!({ "a": [1, "x\n\"y"], "é": null });
        let text = value.to_string();
        assert_eq!(json_size(&value, usize::MAX), JsonSize::Exact(text.len()));
        assert_eq!(json_len(&value), text.len());
        let stopped = json_size(&value, 4);
        assert!(matches!(stopped, JsonSize::AtLeast(n) if n > 4 && n <= text.len()));
        assert!(stopped.exceeds(4));
        assert!(!JsonSize::Exact(4).exceeds(4));
    }

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
