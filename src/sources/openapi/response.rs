//! One HTTP response → the `CallToolResult` JSON every source answers with: a 2xx JSON body as
//! `structuredContent`, text as text; a binary body refused with its content type and size; any
//! other status an `isError` result whose text carries the status and a short excerpt of the
//! body, and whose `_meta` (under `model::tool::HTTP_META`) carries the status, whether a retry may work
//! (429 and 5xx) and a hint (with `Retry-After` when the server sent one), which the sandbox
//! turns into the script's `ToolError` fields.

use serde_json::{Value, json};

use crate::model::tool::HTTP_META;

/// The most of a body read into memory; a larger one is refused, not cut.
const MAX_BODY: usize = 32 * 1024 * 1024;
/// How much of an error body the message quotes.
const EXCERPT_CHARS: usize = 400;

/// The body of `response`, read as it arrives; `None` once it passes `max` bytes, which are
/// never all held.
pub(crate) async fn body_within(
    response: &mut reqwest::Response,
    max: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// Reads `response` to the end (up to [`MAX_BODY`]). `line` is the request line for messages;
/// `missing` the security schemes the call had no credential for; `scrub` blanks the
/// connection's secrets in a value, and runs on an error body before it is cut to an excerpt.
pub(crate) async fn read(
    mut response: reqwest::Response,
    line: &str,
    missing: &[String],
    source: &str,
    scrub: &(dyn Fn(&mut Value) + Sync),
) -> Result<Value, String> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let Some(body) = body_within(&mut response, MAX_BODY)
        .await
        .map_err(|error| format!("reading the answer to {line} failed: {error}"))?
    else {
        return Ok(failure(
            format!(
                "{line} answered with more than {} MiB; capabilities reads at most that much of one answer",
                MAX_BODY / (1024 * 1024)
            ),
            None,
            false,
            Some("Ask for less: a filter, a smaller page, fewer fields.".into()),
        ));
    };
    if status.is_success() {
        return Ok(success(line, &content_type, body));
    }
    let code = status.as_u16();
    let excerpt = excerpt(&body, scrub);
    let reason = status.canonical_reason().unwrap_or_default();
    let mut message = format!("{line} answered HTTP {code} {reason}");
    if !excerpt.is_empty() {
        message.push_str(": ");
        message.push_str(&excerpt);
    }
    let retryable = code == 429 || status.is_server_error();
    let hint = match (code, retry_after) {
        (_, Some(after)) if retryable => Some(format!(
            "The server asks to wait before retrying (Retry-After: {after}); the call may be retried after that."
        )),
        _ if retryable => {
            Some("The server may answer if the call is retried a little later.".into())
        }
        (401 | 403, _) if !missing.is_empty() => Some(format!(
            "The operation wants the security scheme {}, and source `{source}` has no credential for it: add `auth = {{ {} = \"${{secret:NAME}}\" }}` to [sources.{source}] and store it with `capabilities credential set NAME`.",
            missing.join(" or "),
            missing[0]
        )),
        (401 | 403, _) => Some(format!(
            "The server refused the credentials of source `{source}`; check them (`auth` or `headers` in its config)."
        )),
        (404, _) => Some(
            "Check the identifiers in the arguments; the server has nothing at this path.".into(),
        ),
        _ => None,
    };
    Ok(failure(message, Some(code), retryable, hint))
}

fn success(line: &str, content_type: &str, body: Vec<u8>) -> Value {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if body.is_empty() {
        return json!({ "content": [] });
    }
    let json_media = media == "application/json" || media.ends_with("+json");
    if json_media && let Ok(value) = serde_json::from_slice::<Value>(&body) {
        return json!({ "content": [], "structuredContent": value });
    }
    let textual = media.is_empty()
        || json_media
        || media.starts_with("text/")
        || media.ends_with("+xml")
        || media == "application/xml"
        || media == "application/javascript"
        || media == "application/x-www-form-urlencoded";
    let size = body.len();
    match String::from_utf8(body) {
        Ok(text) if textual => json!({ "content": [{ "type": "text", "text": text }] }),
        Ok(_) | Err(_) => {
            let kind = if content_type.is_empty() {
                "binary data"
            } else {
                content_type
            };
            failure(
                format!(
                    "{line} answered with {kind} ({size} bytes), which is binary; capabilities passes only JSON and text to scripts"
                ),
                None,
                false,
                Some("Use an operation that returns JSON or text, or fetch the file outside the script.".into()),
            )
        }
    }
}

fn failure(message: String, status: Option<u16>, retryable: bool, hint: Option<String>) -> Value {
    json!({
        "isError": true,
        "content": [{ "type": "text", "text": message }],
        "_meta": { HTTP_META: { "status": status, "retryable": retryable, "hint": hint } },
    })
}

/// The start of an error body on one line: JSON compacted, text with its whitespace folded.
/// The whole body is scrubbed first: a secret the cut ran through would no longer match, and
/// its start would reach the script.
fn excerpt(body: &[u8], scrub: &(dyn Fn(&mut Value) + Sync)) -> String {
    let mut value = serde_json::from_slice::<Value>(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    scrub(&mut value);
    let text = match value {
        Value::String(text) => text.split_whitespace().collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    };
    if text.chars().count() <= EXCERPT_CHARS {
        return text;
    }
    let cut: String = text.chars().take(EXCERPT_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::{Redaction, Secret};

    #[test]
    fn a_secret_the_excerpt_cut_runs_through_is_blanked_first() {
        let secret = "ghp_R3alT0kenValue9876543210abcdefXY";
        let redaction = Redaction::new([Secret::new(secret.to_string())]);
        let scrub = |value: &mut Value| redaction.clean_json(value);
        let cut_at = EXCERPT_CHARS - 10;
        let text = format!(
            "{}Authorization: Bearer {secret}\n{}",
            "x".repeat(cut_at - 22),
            "y".repeat(EXCERPT_CHARS)
        );
        let cut = excerpt(text.as_bytes(), &scrub);
        assert!(!cut.contains("ghp_"), "{cut}");
        assert!(cut.ends_with('…'), "{cut}");
        let json =
            serde_json::json!({ "pad": "x".repeat(cut_at - 20), "seen": secret }).to_string();
        let cut = excerpt(json.as_bytes(), &scrub);
        assert!(!cut.contains("ghp_"), "{cut}");
    }
}
