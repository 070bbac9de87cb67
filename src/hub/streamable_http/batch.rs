//! JSON-RPC batches. MCP 2025-03-26 lets a client POST an array of messages and requires a
//! server to accept one; 2025-06-18 removed batching. rmcp reads single messages only, so a
//! batch in a 2025-03-26 session is served here: each message goes to rmcp on its own, as if
//! posted alone with the batch's headers, and the answers come back on one event stream
//! (what the revision asks for: one response per request, in any order, with the server's own
//! requests and notifications in between). Messages that are not valid are answered there with
//! a JSON-RPC error, as JSON-RPC 2.0 answers each bad element of a batch; `initialize` may not
//! be batched.

use std::pin::Pin;

use axum::body::{Body, Bytes};
use futures::stream::{self, BoxStream, Stream, StreamExt};
use http::request::Parts;
use http::{HeaderValue, Request, Response, StatusCode, header};
use serde_json::{Value, json};

use super::message::{self, Refusal};
use super::{Mcp, is_session_not_found, session_unavailable};

/// The most bytes of an rmcp refusal read to relay it inside the batch's stream.
const REFUSAL_BYTES: usize = 64 * 1024;

/// What one message of a batch produced.
enum Answer {
    /// A notification or response rmcp accepted: nothing to send back.
    Nothing,
    /// rmcp's event stream for a request.
    Stream(Body),
    /// One JSON-RPC message to send back (an error, or a plain JSON answer).
    Message(Value),
    /// The session the batch names is unknown or has ended.
    SessionGone,
}

/// The answer to a batch: 202 when it held only notifications and responses, the session's
/// 404 when it has ended, or 200 with an event stream carrying every answer.
pub async fn serve(service: &Mcp, parts: Parts, items: Vec<Value>) -> Response<Body> {
    let answers =
        futures::future::join_all(items.into_iter().map(|item| one(service, &parts, item))).await;
    if answers.iter().any(|a| matches!(a, Answer::SessionGone)) {
        return session_unavailable();
    }
    let mut events: Vec<BoxStream<'static, Result<Bytes, axum::Error>>> = Vec::new();
    for answer in answers {
        match answer {
            Answer::Nothing | Answer::SessionGone => {}
            Answer::Message(message) => {
                let event = Bytes::from(format!("data: {message}\n\n"));
                events.push(stream::once(async move { Ok(event) }).boxed());
            }
            Answer::Stream(body) => events.push(whole_events(body).boxed()),
        }
    }
    if events.is_empty() {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::ACCEPTED;
        return response;
    }
    let mut response = Response::new(Body::from_stream(stream::select_all(events)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Serves one message of a batch.
async fn one(service: &Mcp, parts: &Parts, item: Value) -> Answer {
    let id = message::reply_id(&item);
    if item.get("method").and_then(Value::as_str) == Some("initialize") {
        return Answer::Message(
            Refusal {
                status: StatusCode::BAD_REQUEST,
                id,
                code: -32600,
                message: "`initialize` may not be part of a JSON-RPC batch (MCP 2025-03-26); send it alone".into(),
            }
            .to_message(),
        );
    }
    if let Err(refusal) = message::check(&item) {
        return Answer::Message(refusal.to_message());
    }
    let request = Request::from_parts(parts.clone(), Body::from(item.to_string()));
    let response = service.handle(request).await;
    let status = response.status();
    if is_session_not_found(&response) {
        return Answer::SessionGone;
    }
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if status == StatusCode::ACCEPTED {
        return Answer::Nothing;
    }
    if status == StatusCode::OK && is_stream {
        return Answer::Stream(Body::new(response.into_body()));
    }
    let text = axum::body::to_bytes(Body::new(response.into_body()), REFUSAL_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    match serde_json::from_str::<Value>(&text) {
        // A JSON-RPC answer (a result, or an error rmcp worded): keep it, under this id.
        Ok(mut answer) if answer.get("result").is_some() || answer.get("error").is_some() => {
            answer["id"] = id;
            Answer::Message(answer)
        }
        // A refusal of a notification has no one to go to.
        _ if id.is_null() => Answer::Nothing,
        _ => Answer::Message(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": -32600, "message": format!("HTTP {status}: {}", text.trim()) },
        })),
    }
}

/// `body`'s event stream cut at event boundaries (a blank line), so that events of several
/// streams interleave whole.
fn whole_events(body: Body) -> impl Stream<Item = Result<Bytes, axum::Error>> + Send {
    struct State {
        body: Pin<Box<dyn Stream<Item = Result<Bytes, axum::Error>> + Send>>,
        pending: Vec<u8>,
        done: bool,
    }
    let state = State {
        body: Box::pin(body.into_data_stream()),
        pending: Vec::new(),
        done: false,
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(end) = state.pending.windows(2).position(|w| w == b"\n\n") {
                let rest = state.pending.split_off(end + 2);
                let event = std::mem::replace(&mut state.pending, rest);
                return Some((Ok(Bytes::from(event)), state));
            }
            if state.done {
                if state.pending.is_empty() {
                    return None;
                }
                let tail = std::mem::take(&mut state.pending);
                return Some((Ok(Bytes::from(tail)), state));
            }
            match state.body.next().await {
                Some(Ok(chunk)) => state.pending.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    state.done = true;
                    state.pending.clear();
                    return Some((Err(e), state));
                }
                None => state.done = true,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn events_are_cut_at_blank_lines_whatever_the_chunks() {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"id: 1\ndata: {\"a\"")),
            Ok(Bytes::from_static(b":1}\n\n:\n\ndata: {}\n")),
            Ok(Bytes::from_static(b"\n")),
        ];
        let body = Body::from_stream(stream::iter(chunks));
        let events: Vec<Bytes> = whole_events(body)
            .map(|event| event.unwrap())
            .collect()
            .await;
        assert_eq!(
            events,
            [
                Bytes::from_static(b"id: 1\ndata: {\"a\":1}\n\n"),
                Bytes::from_static(b":\n\n"),
                Bytes::from_static(b"data: {}\n\n"),
            ]
        );
    }
}
