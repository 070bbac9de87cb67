//! Keeping stored secrets out of what scripts, models and logs see: refusing tool arguments
//! that carry a secret's value, blanking values an upstream echoes back in results or errors,
//! and blanking every value this process has read from a store out of its log lines (a
//! dependency logging a raw upstream message at trace level would otherwise print it).

use std::io::Write;
use std::sync::RwLock;

use serde_json::Value;

use super::Secret;

/// What replaces a secret's value.
pub const MASK: &str = "•••";

/// Values shorter than this are left alone: blanking them would mangle ordinary text and hide
/// little.
const SHORTEST: usize = 4;

/// A set of secret values to look for.
#[derive(Default)]
pub struct Redaction {
    secrets: Vec<Secret>,
}

impl Redaction {
    pub fn new(secrets: impl IntoIterator<Item = Secret>) -> Redaction {
        let mut secrets: Vec<Secret> = secrets
            .into_iter()
            .filter(|s| s.expose().len() >= SHORTEST)
            .collect();
        // Longest first, so a secret that contains another is blanked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
        Redaction { secrets }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// True when any string in `value` (keys included) contains a secret.
    pub fn found_in(&self, value: &Value) -> bool {
        match value {
            Value::String(text) => self.found_in_text(text),
            Value::Array(items) => items.iter().any(|v| self.found_in(v)),
            Value::Object(map) => map
                .iter()
                .any(|(k, v)| self.found_in_text(k) || self.found_in(v)),
            _ => false,
        }
    }

    fn found_in_text(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.expose()))
    }

    /// `text` with every secret replaced by [`MASK`].
    pub fn clean(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.expose()) {
                out = out.replace(secret.expose(), MASK);
            }
        }
        out
    }

    /// Blanks secrets in every string of `value`, keys included.
    pub fn clean_json(&self, value: &mut Value) {
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(text) if self.found_in_text(text) => *text = self.clean(text),
            Value::Array(items) => items.iter_mut().for_each(|v| self.clean_json(v)),
            Value::Object(map) => {
                if map.keys().any(|k| self.found_in_text(k)) {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.clean(&k), v))
                        .collect();
                }
                map.values_mut().for_each(|v| self.clean_json(v));
            }
            _ => {}
        }
    }
}

/// Every secret value this process has read from a store, for [`RedactingStderr`].
static SEEN: RwLock<Vec<Secret>> = RwLock::new(Vec::new());

/// Remembers a value read from a store, as written and in every escaped form a log line can
/// hold it in: `{:?}` (a dependency's debug output), JSON (`--log-format json`), and JSON of the
/// debug form (a debug-printed message inside a JSON line).
pub(crate) fn remember(secret: &Secret) {
    if secret.expose().len() < SHORTEST {
        return;
    }
    let mut seen = SEEN.write().unwrap_or_else(|p| p.into_inner());
    let raw = secret.expose().to_string();
    let debug = unquote(format!("{raw:?}"));
    let json_of = |text: &str| unquote(serde_json::to_string(text).unwrap_or_default());
    let forms = [json_of(&raw), json_of(&debug), raw, debug];
    for form in forms {
        if !form.is_empty() && !seen.iter().any(|s| s.expose() == form) {
            seen.push(Secret::new(form));
        }
    }
    seen.sort_by_key(|s| std::cmp::Reverse(s.expose().len()));
}

/// A quoted string literal without its quotes.
fn unquote(literal: String) -> String {
    literal
        .strip_prefix('"')
        .and_then(|l| l.strip_suffix('"'))
        .map(str::to_string)
        .unwrap_or(literal)
}

/// Standard error with every value in [`SEEN`] blanked: the log writer. The log formatter
/// writes each event in one call, so a value is never split across two writes.
pub struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let seen = SEEN.read().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(buf);
        if seen.iter().any(|s| text.contains(s.expose())) {
            let mut clean = text.into_owned();
            for secret in seen.iter() {
                clean = clean.replace(secret.expose(), MASK);
            }
            std::io::stderr().write_all(clean.as_bytes())?;
        } else {
            std::io::stderr().write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_and_blanks_secrets_anywhere() {
        let redaction =
            Redaction::new([Secret::new("tok-123456".into()), Secret::new("ab".into())]);
        let mut value = json!({ "a": ["x", "Bearer tok-123456"], "tok-123456": 1, "ab": "ab" });
        assert!(redaction.found_in(&value));
        redaction.clean_json(&mut value);
        assert_eq!(
            value,
            json!({ "a": ["x", "Bearer •••"], "•••": 1, "ab": "ab" })
        );
        assert!(!redaction.found_in(&value));
        assert_eq!(
            redaction.clean("401: token tok-123456 rejected"),
            "401: token ••• rejected"
        );
    }

    #[test]
    fn a_remembered_secret_is_known_in_its_escaped_forms() {
        let secret = "quote\"back\\slash\ttab-7f3a";
        remember(&Secret::new(secret.into()));
        let json = serde_json::to_string(secret).unwrap();
        let debug = format!("{secret:?}");
        let json_of_debug = serde_json::to_string(&debug).unwrap();
        let seen = SEEN.read().unwrap_or_else(|p| p.into_inner());
        for line in [secret, &json, &debug, &json_of_debug] {
            assert!(
                seen.iter()
                    .any(|s| s.expose().len() >= secret.len() && line.contains(s.expose())),
                "no remembered form is in {line}"
            );
        }
    }
}
