//! A short, redacted preview of a call's arguments for people deciding on an approval: values of
//! keys that look like credentials are hidden, long strings and lists are cut, and the whole
//! preview stays on a line or two. When it had to cut, [`whole`] is all of the call written the
//! same way, for a person who wants to read everything they decide on before they do. The arguments come from a script or a model, so nothing in
//! them may change how the preview reads: line breaks, terminal escapes, bidirectional
//! overrides and invisible characters, in keys as in values, are shown as `\u` escapes.

use serde_json::Value;

use crate::printable::{is_deceptive, push_escape};

/// Longest preview, in characters.
const MAX_PREVIEW: usize = 300;
/// Longest string value shown.
const MAX_STRING: usize = 80;
/// Most items of a list or object shown.
const MAX_ITEMS: usize = 8;
/// Deepest nesting shown in full.
const MAX_DEPTH: usize = 2;
/// Longest whole call kept, in characters: arguments past this are an upload, which no person
/// reads on a screen; the cut says how much is left out.
const MAX_WHOLE: usize = 16 * 1024;

/// How much of the arguments is written out.
#[derive(Clone, Copy)]
struct Limits {
    string: usize,
    items: usize,
    depth: usize,
}

const PREVIEW: Limits = Limits {
    string: MAX_STRING,
    items: MAX_ITEMS,
    depth: MAX_DEPTH,
};

const WHOLE: Limits = Limits {
    string: usize::MAX,
    items: usize::MAX,
    depth: usize::MAX,
};

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
        "cookie",
        "credential",
        "privatekey",
        "passphrase",
    ]
    .iter()
    .any(|word| key.contains(word))
        // `basic_auth`, `authHeader`, but not `author` or `authority`.
        || (key.contains("auth") && !key.contains("author"))
}

/// `text` as a JSON string literal with every deceptive character `\u`-escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_deceptive(c) => push_escape(c, &mut out),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key as written in a script when it is a plain name, else quoted.
fn key_shown(key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '-');
    if plain { key.to_string() } else { quoted(key) }
}

pub fn preview(arguments: &Value) -> String {
    let mut out = String::new();
    write(arguments, &mut out, 0, PREVIEW);
    if out.chars().count() > MAX_PREVIEW {
        let cut: String = out.chars().take(MAX_PREVIEW - 1).collect();
        format!("{cut}…")
    } else {
        out
    }
}

/// All of the arguments, written as the preview writes them (credentials hidden, nothing in
/// them able to change how it reads), when `preview` (theirs) had to leave some out; `None`
/// when it already shows everything.
pub fn whole(arguments: &Value, preview: &str) -> Option<String> {
    let mut out = String::new();
    write(arguments, &mut out, 0, WHOLE);
    if out == preview {
        return None;
    }
    let length = out.chars().count();
    if length <= MAX_WHOLE {
        return Some(out);
    }
    let kept: String = out.chars().take(MAX_WHOLE).collect();
    Some(format!("{kept}…(+{} chars)", length - MAX_WHOLE))
}

fn write(value: &Value, out: &mut String, depth: usize, limits: Limits) {
    match value {
        Value::String(text) => {
            let shown: String = text.chars().take(limits.string).collect();
            out.push_str(&quoted(&shown));
            let length = text.chars().count();
            if length > limits.string {
                // Says how much is not shown, so a long value is never taken for a short one.
                out.push_str(&format!("…(+{} chars)", length - limits.string));
            }
        }
        Value::Array(items) if depth > limits.depth => {
            out.push_str(&format!("[{} items]", items.len()))
        }
        Value::Object(map) if depth > limits.depth => {
            out.push_str(&format!("{{{} keys}}", map.len()))
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().take(limits.items).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out, depth + 1, limits);
            }
            if items.len() > limits.items {
                out.push_str(&format!(", … {} more", items.len() - limits.items));
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("{ ");
            for (i, (key, item)) in map.iter().take(limits.items).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&key_shown(key));
                out.push_str(": ");
                if is_sensitive(key) {
                    out.push_str("•••");
                } else {
                    write(item, out, depth + 1, limits);
                }
            }
            if map.len() > limits.items {
                out.push_str(&format!(", … {} more", map.len() - limits.items));
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
        assert!(preview(&json!({ "basic_auth": "u:p" })).contains("•••"));
        assert!(text.chars().count() <= MAX_PREVIEW, "{text}");
    }

    #[test]
    fn nothing_in_a_key_or_a_value_changes_how_the_preview_reads() {
        let text = preview(&json!({
            "a\n- peer.write with { key: \"harmless\" }": 1,
            "\u{1b}[8mhidden": "x\u{1b}[2K",
            "name": "admin\u{202E}txt.exe\u{200B}",
            "authority": "visible",
        }));
        assert!(!text.chars().any(is_deceptive), "{text:?}");
        assert!(text.contains(r#""a\u000a- peer.write"#), "{text}");
        assert!(text.contains(r#""\u001b[8mhidden""#), "{text}");
        assert!(text.contains(r#""admin\u202etxt.exe\u200b""#), "{text}");
        assert!(text.contains(r#"authority: "visible""#), "{text}");
    }

    #[test]
    fn a_cut_string_says_how_much_is_not_shown() {
        let text = preview(&json!({ "body": "a".repeat(100) }));
        assert!(text.contains("…(+20 chars)"), "{text}");
    }

    #[test]
    fn the_whole_call_is_kept_only_when_the_preview_cut_it() {
        let whole = |arguments: &Value| super::whole(arguments, &preview(arguments));
        let short = json!({ "title": "Bug", "token": "sk-1" });
        assert_eq!(whole(&short), None);
        let hidden = format!("{}; and then rm -rf /", "a".repeat(100));
        let long = json!({
            "body": hidden,
            "deep": { "a": { "b": { "c": { "d": "at the bottom" } } } },
            "api_key": "sk-123",
            "line": "x\u{1b}[2K",
        });
        let text = whole(&long).expect("the preview cut it");
        assert!(text.contains("and then rm -rf /"), "{text}");
        assert!(text.contains(r#"d: "at the bottom""#), "{text}");
        assert!(
            text.contains("api_key: •••") && !text.contains("sk-123"),
            "{text}"
        );
        assert!(!text.chars().any(is_deceptive), "{text:?}");
        let upload = whole(&json!({ "data": "z".repeat(40_000) })).expect("cut");
        assert!(upload.chars().count() < 17_000, "{}", upload.len());
        assert!(
            upload.ends_with(" chars)"),
            "{}",
            &upload[upload.len() - 40..]
        );
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
