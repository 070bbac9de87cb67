//! What a POST body must be before rmcp sees it: JSON sent as `application/json`, holding one
//! JSON-RPC message or a batch of them. A body that is not is refused here with HTTP 400 and a
//! JSON-RPC error (`-32700` when it is not JSON, `-32600` when it is not a JSON-RPC message,
//! `-32602` when a request's params do not fit its method), where rmcp would answer 415 in
//! plain text that a client cannot match to its request.
//!
//! A 2026-07-28 request (one with the per-request `_meta` protocol version) for `initialize`
//! gets 404 and `-32601`: that revision removed the method, and a dual-era hub still serves it
//! only to the clients that predate it, which send no such `_meta`.

use http::{HeaderValue, StatusCode};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

/// The `_meta` key that carries a request's protocol version from 2026-07-28 on.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// A POST body that is JSON.
pub enum Body {
    /// One message (as read); the body goes on to rmcp unchanged.
    One(Value),
    /// A JSON-RPC batch (an array of one or more messages).
    Batch(Vec<Value>),
}

/// A message refused before it reaches rmcp: the HTTP status and the JSON-RPC error, with the
/// request's id when it had a usable one.
#[derive(Debug)]
pub struct Refusal {
    pub status: StatusCode,
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl Refusal {
    fn new(status: StatusCode, id: Value, code: i64, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            id,
            code,
            message: message.into(),
        }
    }

    fn invalid(id: Value, message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, id, -32600, message)
    }

    /// The JSON-RPC error response.
    pub fn to_message(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// Reads a POST body: `Content-Type: application/json`, valid JSON, and a JSON-RPC message (or
/// a non-empty batch, whose messages [`check`] reads one by one).
pub fn read(content_type: Option<&HeaderValue>, bytes: &[u8]) -> Result<Body, Refusal> {
    let essence = content_type
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .map(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        });
    if !essence
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("application/json"))
    {
        let sent = essence.map_or("no Content-Type".to_string(), |e| {
            format!("`{}`", e.chars().take(60).collect::<String>())
        });
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            format!(
                "the body must be a JSON-RPC message sent with `Content-Type: application/json`; this request has {sent}"
            ),
        ));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32700,
            format!("the body is not valid JSON ({e}); send one JSON-RPC message"),
        )
    })?;
    // JSON leaves a repeated key's meaning open: we would read the last, rmcp refuses some,
    // and a person shown one value must not approve another.
    if let Err(e) = serde_json::from_slice::<UniqueKeys>(bytes) {
        let id = match &value {
            Value::Object(_) => reply_id(&value),
            _ => Value::Null,
        };
        return Err(Refusal::invalid(
            id,
            format!("the body {e}; send each key of an object once"),
        ));
    }
    match value {
        Value::Array(items) if items.is_empty() => Err(Refusal::invalid(
            Value::Null,
            "the body is an empty JSON-RPC batch; send one message, or a batch of at least one",
        )),
        Value::Array(items) => Ok(Body::Batch(items)),
        message => check(&message).map(|()| Body::One(message)),
    }
}

/// Checks that `message` is a JSON-RPC message rmcp can read: a request or notification
/// (`method`) or a response (`result` or `error`), with `"jsonrpc": "2.0"`, whose params fit
/// its method.
pub fn check(message: &Value) -> Result<(), Refusal> {
    let Value::Object(fields) = message else {
        return Err(Refusal::invalid(
            Value::Null,
            format!(
                "expected a JSON-RPC message: an object with \"jsonrpc\": \"2.0\", got {}",
                kind(message)
            ),
        ));
    };
    let id = reply_id(message);
    if fields.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(Refusal::invalid(
            id,
            "a JSON-RPC message needs \"jsonrpc\": \"2.0\"",
        ));
    }
    // rmcp reads a whole-numbered float (`80.0`) as the integer (80): two spellings of one id
    // would slip past the check for an id still in flight, and its answer would go astray.
    if let Some(Value::Number(number)) = fields.get("id")
        && number.as_i64().is_none()
    {
        return Err(Refusal::invalid(
            id,
            format!(
                "the id {number} is not one this hub can answer by: use a string, or a whole number written without a fraction or exponent (at most {})",
                i64::MAX
            ),
        ));
    }
    let method = match fields.get("method") {
        Some(Value::String(method)) => Some(method.as_str()),
        Some(other) => {
            return Err(Refusal::invalid(
                id,
                format!(
                    "a JSON-RPC message's `method` must be a string, got {}",
                    kind(other)
                ),
            ));
        }
        None if fields.contains_key("result") || fields.contains_key("error") => None,
        None => {
            return Err(Refusal::invalid(
                id,
                "the body is neither a JSON-RPC request or notification (`method`) nor a response (`result` or `error`)",
            ));
        }
    };
    if method == Some("initialize")
        && message
            .pointer("/params/_meta")
            .and_then(Value::as_object)
            .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION))
    {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            id,
            -32601,
            "MCP 2026-07-28 has no `initialize`: each request carries its protocol version in `_meta`, and `server/discover` lists what this hub supports. Clients of 2025-11-25 and earlier send `initialize` without that `_meta` and get a session",
        ));
    }
    if let Err(e) = serde_json::from_value::<ClientJsonRpcMessage>(message.clone()) {
        return Err(match (method, id) {
            (Some(method), id) if !id.is_null() => Refusal::new(
                StatusCode::BAD_REQUEST,
                id,
                -32602,
                format!("the params of `{method}` do not fit that method: {e}"),
            ),
            (_, id) => Refusal::invalid(id, format!("the body is not a valid MCP message: {e}")),
        });
    }
    Ok(())
}

/// JSON whose objects name each key once; reading it fails at the first key named twice.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<UniqueKeys>()?;
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format_args!(
                    "names the key {key:?} twice in one object"
                )));
            }
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
}

/// The id to answer `message` with: its own when it is a string or a number, else null.
pub fn reply_id(message: &Value) -> Value {
    match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// The JSON type of `value`, for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_type() -> HeaderValue {
        HeaderValue::from_static("application/json; charset=utf-8")
    }

    fn refused(content_type: Option<&HeaderValue>, body: &str) -> Refusal {
        match read(content_type, body.as_bytes()) {
            Err(refusal) => refusal,
            Ok(_) => panic!("{body} was accepted"),
        }
    }

    #[test]
    fn what_is_not_json_is_a_parse_error() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let plain = HeaderValue::from_static("text/plain");
        for refusal in [
            refused(Some(&plain), body),
            refused(None, body),
            refused(Some(&json_type()), "{\"jsonrpc\":"),
        ] {
            assert_eq!(
                (refusal.status, refusal.code, &refusal.id),
                (StatusCode::BAD_REQUEST, -32700, &Value::Null)
            );
        }
        assert!(matches!(
            read(Some(&json_type()), body.as_bytes()),
            Ok(Body::One(_))
        ));
    }

    #[test]
    fn a_key_sent_twice_is_an_invalid_request_with_its_id() {
        for (body, id, key) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}"#,
                json!(7),
                "method",
            ),
            // Deep in a call's arguments too: the approval must show what the tool gets.
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"execute","arguments":{"code":"1","code":"2"}}}"#,
                json!("a"),
                "code",
            ),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","id":3}]"#,
                Value::Null,
                "id",
            ),
        ] {
            let refusal = refused(Some(&json_type()), body);
            assert_eq!(
                (refusal.status, refusal.code, &refusal.id),
                (StatusCode::BAD_REQUEST, -32600, &id),
                "{body}"
            );
            assert!(
                refusal
                    .message
                    .contains(&format!("names the key \"{key}\" twice")),
                "{}",
                refusal.message
            );
        }
        // The same key in two objects is no repeat.
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"name":"x"}}}"#;
        assert!(matches!(
            read(Some(&json_type()), body.as_bytes()),
            Ok(Body::One(_))
        ));
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request_with_its_id() {
        for (body, id) in [
            ("42", Value::Null),
            ("[]", Value::Null),
            (r#"{"hello":"world"}"#, Value::Null),
            (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, json!(3)),
            (r#"{"jsonrpc":"2.0","id":"a","method":5}"#, json!("a")),
            // One id, one spelling: rmcp reads 8.0 as 8.
            (r#"{"jsonrpc":"2.0","id":8.0,"method":"ping"}"#, json!(8.0)),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, json!(1.5)),
            (r#"{"jsonrpc":"2.0","id":1e2,"method":"ping"}"#, json!(1e2)),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
                json!(u64::MAX),
            ),
        ] {
            let refusal = refused(Some(&json_type()), body);
            assert_eq!((refusal.code, refusal.id), (-32600, id), "{body}");
        }
        let refusal = refused(
            Some(&json_type()),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#,
        );
        assert_eq!((refusal.code, refusal.id), (-32602, json!(7)));
        for id in ["-3", "9223372036854775807", "\"8.0\""] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert!(read(Some(&json_type()), body.as_bytes()).is_ok(), "{body}");
        }
    }

    #[test]
    fn a_modern_initialize_is_method_not_found_and_a_legacy_one_passes() {
        let modern = r#"{"jsonrpc":"2.0","id":500,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let refusal = refused(Some(&json_type()), modern);
        assert_eq!(
            (refusal.status, refusal.code, refusal.id),
            (StatusCode::NOT_FOUND, -32601, json!(500))
        );
        let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        assert!(matches!(
            read(Some(&json_type()), legacy.as_bytes()),
            Ok(Body::One(_))
        ));
    }

    #[test]
    fn a_batch_is_read_whole() {
        let body = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
        let Ok(Body::Batch(items)) = read(Some(&json_type()), body.as_bytes()) else {
            panic!("a batch");
        };
        assert_eq!(items.len(), 2);
    }
}
