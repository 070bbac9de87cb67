//! The preview of a stored value: its shape, never its data. Keys, types and lengths are
//! structure and appear; strings, numbers and booleans of the value never do, so a preview can
//! travel in the envelope of a result that was stored precisely because it was large, and perhaps
//! sensitive.
//!
//! The format is `{"complete": false, "shape": "<text>"}`. `complete` is always false: a preview
//! is bounded and never the whole truth. When not even the smallest shape fits the budget,
//! `shape` is left out. The text reads like a TypeScript type:
//!
//! - `null`, `boolean`, `number`;
//! - `string(431 bytes)`: a string and its length in UTF-8 bytes (the unit of the budget);
//! - `{ id: number, "user-name": string(12 bytes), … 3 more }`: an object, its keys in order
//!   (quoted when not identifiers), the members left out counted at the end; `{}` when empty;
//! - `array(1200) of { … }`: an array, its length and the shape of its first element; when the
//!   first 32 elements are not all of one kind, the other kinds follow:
//!   `array(3) of ({ id: number } | string | null)`;
//! - past the depth bound, `object(12 keys)` and `array(1200)` give only the size.
//!
//! A key longer than 128 UTF-8 bytes is counted among the members left out, not shown.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::discover::MAX_NAME_BYTES;

/// How much of a value a preview shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Detail {
    /// Shapes written in all (each key's value, each array's first element, the root).
    nodes: usize,
    /// Levels below the root that are expanded.
    depth: usize,
    /// Members shown per object.
    keys: usize,
}

/// From the most detailed to the least; metadata fitting steps down through them.
pub(super) const LEVELS: [Detail; 6] = [
    Detail {
        nodes: 64,
        depth: 6,
        keys: 24,
    },
    Detail {
        nodes: 32,
        depth: 4,
        keys: 12,
    },
    Detail {
        nodes: 16,
        depth: 3,
        keys: 8,
    },
    Detail {
        nodes: 8,
        depth: 2,
        keys: 6,
    },
    Detail {
        nodes: 4,
        depth: 1,
        keys: 4,
    },
    Detail {
        nodes: 1,
        depth: 0,
        keys: 0,
    },
];

/// Elements of an array read for the kinds it holds.
const KINDS_SAMPLED: usize = 32;

/// The preview at `detail`; `None` leaves the shape out.
pub(super) fn preview_at(value: &Value, detail: Option<Detail>) -> Value {
    match detail {
        Some(detail) => {
            let mut render = Render {
                out: String::new(),
                nodes_left: detail.nodes,
                detail,
            };
            render.shape(value, 0);
            json!({ "complete": false, "shape": render.out })
        }
        None => json!({ "complete": false }),
    }
}

struct Render {
    out: String,
    nodes_left: usize,
    detail: Detail,
}

impl Render {
    fn shape(&mut self, value: &Value, depth: usize) {
        self.nodes_left = self.nodes_left.saturating_sub(1);
        let expand = depth < self.detail.depth && self.nodes_left > 0;
        // Writing to a String cannot fail.
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(_) => self.out.push_str("boolean"),
            Value::Number(_) => self.out.push_str("number"),
            Value::String(text) => {
                let bytes = text.len();
                let noun = if bytes == 1 { "byte" } else { "bytes" };
                let _ = write!(self.out, "string({bytes} {noun})");
            }
            Value::Array(items) => {
                let _ = write!(self.out, "array({})", items.len());
                let Some(first) = items.first().filter(|_| expand) else {
                    return;
                };
                self.out.push_str(" of ");
                let first_kind = kind(first);
                let mut others: Vec<&str> = Vec::new();
                for item in items.iter().take(KINDS_SAMPLED).skip(1) {
                    let other = kind(item);
                    if other != first_kind && !others.contains(&other) {
                        others.push(other);
                    }
                }
                if others.is_empty() {
                    self.shape(first, depth + 1);
                } else {
                    self.out.push('(');
                    self.shape(first, depth + 1);
                    for other in others {
                        let _ = write!(self.out, " | {other}");
                    }
                    self.out.push(')');
                }
            }
            Value::Object(members) if members.is_empty() => self.out.push_str("{}"),
            Value::Object(members) if !expand => {
                let count = members.len();
                let noun = if count == 1 { "key" } else { "keys" };
                let _ = write!(self.out, "object({count} {noun})");
            }
            Value::Object(members) => {
                self.out.push_str("{ ");
                let mut shown = 0;
                for (key, member) in members {
                    if shown == self.detail.keys || self.nodes_left == 0 {
                        break;
                    }
                    if key.len() > MAX_NAME_BYTES {
                        continue;
                    }
                    if shown > 0 {
                        self.out.push_str(", ");
                    }
                    write_key(&mut self.out, key);
                    self.out.push_str(": ");
                    self.shape(member, depth + 1);
                    shown += 1;
                }
                let left_out = members.len() - shown;
                if left_out > 0 {
                    if shown > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "… {left_out} more");
                }
                self.out.push_str(" }");
            }
        }
    }
}

/// A key as TypeScript would write it: bare when an identifier, JSON-quoted otherwise.
fn write_key(out: &mut String, key: &str) {
    let mut chars = key.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        out.push_str(key);
    } else {
        out.push_str(&Value::String(key.to_string()).to_string());
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(value: &Value, detail: Option<Detail>) -> String {
        let preview = preview_at(value, detail);
        assert_eq!(preview["complete"], json!(false));
        preview["shape"].as_str().unwrap_or_default().to_string()
    }

    #[test]
    fn writes_keys_types_and_lengths() {
        let value = json!({
            "messages": [{ "id": 1, "text": "héllo", "read": true }, { "id": 2 }],
            "user-name": "ann",
            "next": null,
            "empty": {},
            "none": []
        });
        assert_eq!(
            shape(&value, Some(LEVELS[0])),
            "{ messages: array(2) of { id: number, text: string(6 bytes), read: boolean }, \
             \"user-name\": string(3 bytes), next: null, empty: {}, none: array(0) }"
        );
    }

    #[test]
    fn mixed_arrays_name_the_other_kinds() {
        let value = json!([{ "a": 1 }, "x", null, "y", 3]);
        assert_eq!(
            shape(&value, Some(LEVELS[0])),
            "array(5) of ({ a: number } | string | null | number)"
        );
    }

    #[test]
    fn smaller_levels_say_less() {
        let value = json!({ "a": { "b": { "c": [1] } }, "d": 1, "e": 2, "f": 3, "g": 4, "h": 5 });
        assert_eq!(
            shape(&value, Some(LEVELS[4])),
            "{ a: object(1 key), d: number, e: number, … 3 more }"
        );
        assert_eq!(shape(&value, Some(LEVELS[5])), "object(6 keys)");
        assert_eq!(shape(&json!([1, 2]), Some(LEVELS[5])), "array(2)");
        assert_eq!(preview_at(&value, None), json!({ "complete": false }));
    }

    #[test]
    fn key_bound_cuts_members() {
        let mut members = serde_json::Map::new();
        for i in 0..100 {
            members.insert(format!("k{i}"), json!({ "x": 1 }));
        }
        let text = shape(&Value::Object(members), Some(LEVELS[0]));
        // 24 members shown at the first level.
        assert!(text.ends_with("k23: { x: number }, … 76 more }"), "{text}");
    }

    #[test]
    fn node_bound_stops_expanding() {
        let mut members = serde_json::Map::new();
        for i in 0..100 {
            members.insert(format!("k{i}"), json!({ "x": { "y": { "z": 1 } } }));
        }
        let text = shape(&Value::Object(members), Some(LEVELS[0]));
        // 64 nodes: the root, then 4 per member for 15 members, and the 16th runs out inside.
        assert!(
            text.ends_with(
                "k14: { x: { y: { z: number } } }, k15: { x: { y: object(1 key) } }, … 84 more }"
            ),
            "{text}"
        );
    }

    #[test]
    fn long_keys_are_counted_not_shown() {
        let long = "k".repeat(129);
        let text = shape(&json!({ long.clone(): 1, "ok": 2 }), Some(LEVELS[0]));
        assert_eq!(text, "{ ok: number, … 1 more }");
    }

    #[test]
    fn never_shows_a_scalar_of_the_data() {
        let value = json!({
            "secret": "SECRET-TEXT-alpha",
            "rows": [
                { "body": "hunter2-password", "amount": 987654321, "ratio": 6.02214, "flag": true },
                { "body": "second-row-text", "amount": -55555, "flag": false }
            ],
            "nested": { "deep": { "deeper": ["needle-in-array", 424242] } },
            "unicode": "ünïcødé-marker",
            "tuple": [777333, "mixed-marker", false]
        });
        for detail in LEVELS.iter().copied().map(Some).chain([None]) {
            let written = preview_at(&value, detail).to_string();
            for needle in [
                "SECRET-TEXT",
                "hunter2",
                "987654321",
                "6.02214",
                "second-row",
                "55555",
                "needle",
                "424242",
                "ünïcødé",
                "777333",
                "mixed-marker",
                "true",
            ] {
                assert!(!written.contains(needle), "{needle} in {written}");
            }
            let text = preview_at(&value, detail)["shape"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(!text.contains("false"), "{text}");
        }
    }
}
