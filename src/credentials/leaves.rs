//! The leaves of a JSON answer (its strings, and integers that are characters' codes) in the
//! orders a secret taken apart across them is read in (document order, and down each column of
//! a list of objects), and blanking the leaves a secret was found across. The redaction
//! (`Redaction::split_across_leaves`) searches them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::redaction::MASK;

/// The leaves of a JSON value, as `Redaction::split_across_leaves` reads them.
pub(super) struct Leaves<'a> {
    /// Whether integers are leaves.
    pub numbers: bool,
    /// The text of each leaf in document order: a string's bytes, and an integer that is a
    /// character's code as that character (nothing for another number).
    pub pieces: Vec<std::borrow::Cow<'a, [u8]>>,
    /// The leaves under one key of each object of a list, for each list and key that two or
    /// more of its objects have.
    pub columns: Vec<Vec<usize>>,
}

impl<'a> Leaves<'a> {
    /// Numbers the leaves of `value` on from those seen; the range of their numbers.
    pub fn walk(&mut self, value: &'a Value) -> std::ops::Range<usize> {
        let first = self.pieces.len();
        match value {
            Value::String(text) => self.pieces.push(text.as_bytes().into()),
            Value::Number(number) if self.numbers => {
                let code = number.as_u64().and_then(|n| u32::try_from(n).ok());
                let text = code.and_then(char::from_u32).map(String::from);
                self.pieces
                    .push(text.unwrap_or_default().into_bytes().into());
            }
            Value::Array(items) => {
                // Each key's leaves, and how many objects have it.
                let mut by_key: HashMap<&str, (Vec<usize>, usize)> = HashMap::new();
                for item in items {
                    match item {
                        Value::Object(map) => {
                            for (key, value) in map {
                                let range = self.walk(value);
                                let (leaves, holders) = by_key.entry(key).or_default();
                                leaves.extend(range);
                                *holders += 1;
                            }
                        }
                        other => {
                            self.walk(other);
                        }
                    }
                }
                self.columns.extend(
                    by_key
                        .into_values()
                        .filter(|(_, holders)| *holders > 1)
                        .map(|(leaves, _)| leaves),
                );
            }
            Value::Object(map) => map.values().for_each(|v| {
                self.walk(v);
            }),
            _ => {}
        }
        first..self.pieces.len()
    }
}

/// Replaces each leaf of `value` whose number (in [`Leaves`]' order, counted in `index`) is in
/// `split` by [`MASK`].
pub(super) fn mask_leaves(
    value: &mut Value,
    numbers: bool,
    split: &HashSet<usize>,
    index: &mut usize,
) {
    match value {
        Value::String(_) | Value::Number(_) if numbers || value.is_string() => {
            if split.contains(index) {
                *value = Value::String(MASK.to_string());
            }
            *index += 1;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| mask_leaves(v, numbers, split, index)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| mask_leaves(v, numbers, split, index)),
        _ => {}
    }
}
