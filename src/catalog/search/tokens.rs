//! Words of tool texts and queries: splitting at separators and case changes, the stop words,
//! and the property names and descriptions of an input schema.

use serde_json::Value;

/// How deep the schema walk goes; deeper properties rarely name what a tool does, and a bound
/// keeps hostile schemas from costing much.
const MAX_SCHEMA_DEPTH: usize = 6;

/// Words that say nothing about which tool is meant. Kept short on purpose: words like "all",
/// "new" or "get" do carry meaning in tool names.
pub(super) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please",
    "so", "some", "that", "the", "their", "then", "there", "this", "to", "was", "we", "what",
    "when", "which", "who", "will", "with", "you", "your",
];

pub(super) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Calls `f` with each lower-case word of `text`. Words split at anything not alphanumeric
/// (`snake_case`, `kebab-case`, spaces, punctuation) and at case changes: `getFileInfo` gives
/// get/file/info and `URLFetch` gives url/fetch. Digits stay with their word (`base64`).
pub(super) fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut prev = ' ';
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if !ch.is_alphanumeric() {
            flush(&mut word, &mut f);
        } else {
            if ch.is_uppercase() && !word.is_empty() {
                let next_lower = chars.peek().is_some_and(|c| c.is_lowercase());
                // camelCase boundary, or the last capital of an acronym followed by a new word.
                if prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower)
                {
                    flush(&mut word, &mut f);
                }
            }
            // Tool texts are nearly all ASCII; the general case builds an iterator per char.
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
        }
        prev = ch;
    }
    flush(&mut word, &mut f);
}

/// The lower-case words of `text` (`getFileInfo`: "get file info"), one space apart.
pub(super) fn words_of(text: &str) -> String {
    let mut words = String::new();
    for_each_token(text, |word| {
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(word);
    });
    words
}

fn flush(word: &mut String, f: &mut impl FnMut(&str)) {
    if !word.is_empty() {
        f(word);
        word.clear();
    }
}

/// Calls `f` with the name and description of every property in a JSON Schema, descending into
/// nested objects, array items and combinators.
pub(super) fn walk_schema(schema: &Value, depth: usize, f: &mut impl FnMut(&str, Option<&str>)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, property) in properties {
            let description = property.get("description").and_then(Value::as_str);
            f(name, description);
            walk_schema(property, depth + 1, f);
        }
    }
    if let Some(items) = object.get("items") {
        walk_schema(items, depth + 1, f);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = object.get(key) {
            for variant in variants {
                walk_schema(variant, depth + 1, f);
            }
        }
    }
}
