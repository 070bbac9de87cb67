//! The size of a value as compact JSON, counted without writing the JSON: what the caps on tool
//! results, the final value and the envelope measure.

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
    /// The bytes counted (all of them when exact).
    pub fn bytes(self) -> usize {
        match self {
            JsonSize::Exact(n) | JsonSize::AtLeast(n) => n,
        }
    }

    pub fn exceeds(self, max: usize) -> bool {
        match self {
            JsonSize::Exact(n) | JsonSize::AtLeast(n) => n > max,
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
}
