//! The size of a value as compact JSON, counted without writing the JSON: what the caps on tool
//! results, the final value and the envelope measure. Also whether a value is small and shallow
//! enough for code that recurses over it (serde's own serializing, cloning, comparing).

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

/// Whether `value` holds at most `nodes` values nested at most `depth` deep. It recurses not
/// itself and looks at no more than `nodes + 1` values, so it is safe on any value: ask it before
/// anything that recurses over a value from an upstream (a 10,000-deep schema would overflow the
/// stack of such code and abort the whole hub).
pub fn nests_within(value: &serde_json::Value, depth: usize, nodes: usize) -> bool {
    use serde_json::Value;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    let mut seen = 0usize;
    while let Some((value, level)) = stack.pop() {
        seen += 1;
        if seen > nodes || level > depth {
            return false;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            Value::Object(members) => stack.extend(members.values().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    true
}

/// Takes a value apart without recursion, for tests that build values deeper than dropping one
/// whole could go on a test thread's stack.
#[cfg(test)]
pub(crate) fn dismantle(value: serde_json::Value) {
    use serde_json::Value;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
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

    #[test]
    fn nesting_is_measured_without_recursion() {
        let shallow = json!({ "a": [1, { "b": null }] });
        assert!(nests_within(&shallow, 4, 10));
        assert!(!nests_within(&shallow, 3, 10), "four levels deep");
        assert!(!nests_within(&shallow, 4, 4), "five values");
        // Far deeper than any recursion over it could go on a test thread's stack.
        let mut deep = serde_json::Value::Null;
        for _ in 0..100_000 {
            // Not `json!([deep])`: it copies its argument with `to_value`, which recurses.
            deep = serde_json::Value::Array(vec![deep]);
        }
        assert!(!nests_within(&deep, 128, usize::MAX));
        assert!(nests_within(&deep, 100_001, usize::MAX));
        dismantle(deep);
    }
}
