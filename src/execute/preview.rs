//! A short, redacted preview of a call's arguments for people deciding on an approval: values of
//! keys that look like credentials are hidden, long strings and lists are cut, and the whole
//! preview stays on a line or two.

use serde_json::Value;

/// Longest preview, in characters.
const MAX_PREVIEW: usize = 300;
/// Longest string value shown.
const MAX_STRING: usize = 80;
/// Most items of a list or object shown.
const MAX_ITEMS: usize = 8;

/// Keys whose values are never shown, whatever they hold.
fn is_sensitive(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace(['_', '-'], "");
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "auth",
        "cookie",
        "credential",
        "privatekey",
        "passphrase",
    ]
    .iter()
    .any(|word| key.contains(word))
}

pub fn preview(arguments: &Value) -> String {
    let mut out = String::new();
    write(arguments, &mut out, 0);
    if out.chars().count() > MAX_PREVIEW {
        let cut: String = out.chars().take(MAX_PREVIEW - 1).collect();
        format!("{cut}…")
    } else {
        out
    }
}

fn write(value: &Value, out: &mut String, depth: usize) {
    match value {
        Value::String(text) => {
            let shown: String = text.chars().take(MAX_STRING).collect();
            out.push_str(&serde_json::to_string(&shown).unwrap_or_default());
            if text.chars().count() > MAX_STRING {
                out.push('…');
            }
        }
        Value::Array(items) if depth > 2 => out.push_str(&format!("[{} items]", items.len())),
        Value::Object(map) if depth > 2 => out.push_str(&format!("{{{} keys}}", map.len())),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().take(MAX_ITEMS).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out, depth + 1);
            }
            if items.len() > MAX_ITEMS {
                out.push_str(&format!(", … {} more", items.len() - MAX_ITEMS));
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("{ ");
            for (i, (key, item)) in map.iter().take(MAX_ITEMS).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push_str(": ");
                if is_sensitive(key) {
                    out.push_str("•••");
                } else {
                    write(item, out, depth + 1);
                }
            }
            if map.len() > MAX_ITEMS {
                out.push_str(&format!(", … {} more", map.len() - MAX_ITEMS));
            }
            out.push_str(" }");
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hides_credentials_and_cuts_long_values() {
        let text = preview(
            &json!({ "title": "Bug", "api_key": "sk-123", "Authorization": "Bearer x", "body": "a".repeat(500) }),
        );
        assert!(text.contains("title: \"Bug\""), "{text}");
        assert!(
            !text.contains("sk-123") && !text.contains("Bearer"),
            "{text}"
        );
        assert!(text.contains("api_key: •••"), "{text}");
        assert!(text.chars().count() <= MAX_PREVIEW, "{text}");
    }

    #[test]
    fn nested_and_long_lists_stay_short() {
        let text = preview(
            &json!({ "items": (0..20).collect::<Vec<_>>(), "deep": { "a": { "b": { "c": { "d": 1 } } } } }),
        );
        assert!(text.contains("… 12 more"), "{text}");
        assert!(text.contains("{1 keys}"), "{text}");
    }
}
