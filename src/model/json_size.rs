//! The size of a JSON value as compact UTF-8 text, without building the text: how the limits on
//! results (a tool call's, a run's) measure what they cap.

use serde_json::Value;

/// Counts bytes written and drops them.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(bytes.len() as u64);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `serde_json::to_string(value)` in bytes.
pub fn json_size(value: &Value) -> u64 {
    let mut counter = Counter(0);
    // Writing a `Value` fails only when the writer does, and this one never does.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::json_size;

    #[test]
    fn the_size_is_that_of_the_compact_text() {
        for value in [
            json!(null),
            json!("é\"\n\u{1F600}"),
            json!({"a": [1, 2.5, {"b": "x"}], "c": true}),
        ] {
            let text = serde_json::to_string(&value).unwrap();
            assert_eq!(json_size(&value), text.len() as u64, "{text}");
        }
    }
}
