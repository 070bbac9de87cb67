//! The hub's stdio transport: newline-delimited JSON-RPC on stdin and stdout. It differs from
//! rmcp's own in what it does with bad input: a line that is not JSON gets a `-32700` parse
//! error, and a malformed message or an oversized line gets a `-32600` that says what is wrong
//! (rmcp drops the first silently and answers the others with a bare "Invalid request"). Either
//! way the connection stays open. Nothing but JSON-RPC is ever written to stdout.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest message accepted, in bytes (rmcp's own limit). A 10 MB script still arrives and
/// is refused by `execute` with a message about its size.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

pub struct StdioTransport<R, W> {
    reader: BufReader<R>,
    /// The line read so far. Kept across calls because `receive` runs inside a `select!` and may
    /// be dropped halfway through a line.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    writer: Arc<Mutex<W>>,
}

enum LineRead {
    Line,
    Oversized,
    Eof,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(reader: R, writer: W) -> Self {
        StdioTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(writer)),
        }
    }

    /// Reads up to the next newline without holding more than [`MAX_LINE_BYTES`]. Safe to drop
    /// at any await: bytes are moved from the reader's buffer to `line` with no await between.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let (consumed, done) = {
                let available = self.reader.fill_buf().await?;
                if available.is_empty() {
                    return Ok(LineRead::Eof);
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + take > MAX_LINE_BYTES {
                    self.line.clear();
                    self.discarding = newline.is_none();
                    (take, Some(LineRead::Oversized))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| LineRead::Line))
                }
            };
            self.reader.consume(consumed);
            if let Some(done) = done {
                return Ok(done);
            }
        }
    }

    /// Writes an error reply from a task of its own, so dropping `receive` cannot cut it short.
    fn reply_error(&self, id: Value, code: i64, message: String) {
        let reply =
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
        let writer = self.writer.clone();
        tokio::spawn(async move {
            if let Err(e) = write_line(&writer, &reply).await {
                tracing::debug!("cannot write an error reply: {e}");
            }
        });
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move { write_line(&writer, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized) => {
                    self.reply_error(
                        Value::Null,
                        INVALID_REQUEST,
                        format!("the message is larger than {MAX_LINE_BYTES} bytes and was dropped; send less at once"),
                    );
                    continue;
                }
                Ok(LineRead::Eof) => return None,
                Err(e) => {
                    tracing::warn!("cannot read standard input: {e}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let text = trim(&line);
            if text.is_empty() {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
                Ok(message) => return Some(message),
                Err(error) => match diagnose(text, &error) {
                    Some((id, code, message)) => self.reply_error(id, code, message),
                    None => {
                        tracing::debug!("ignoring a malformed notification or response: {error}")
                    }
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    message: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// The line without its newline, a carriage return, or a UTF-8 byte order mark.
fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line.trim_ascii()
}

/// What to answer a line that is not a message rmcp understands: the id to answer (null when
/// unknown), the JSON-RPC code, and a message that says what is wrong. `None` for notifications
/// and responses, which JSON-RPC never answers.
fn diagnose(line: &[u8], error: &serde_json::Error) -> Option<(Value, i64, String)> {
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(e) => {
            return Some((
                Value::Null,
                PARSE_ERROR,
                format!(
                    "parse error: the line is not JSON ({e}); send one JSON-RPC 2.0 message per line"
                ),
            ));
        }
    };
    let invalid =
        |id: Value, what: String| Some((id, INVALID_REQUEST, format!("invalid request: {what}")));
    let Value::Object(message) = value else {
        if value.is_array() {
            return invalid(
                Value::Null,
                "batches are not supported; send one JSON-RPC message per line".into(),
            );
        }
        return invalid(
            Value::Null,
            "a JSON-RPC message is an object with `jsonrpc`, `id`, `method` and `params`".into(),
        );
    };
    let id = match message.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(other) => {
            return invalid(
                Value::Null,
                format!("`id` must be a string or a number, got {other}"),
            );
        }
    };
    let is_response = message.contains_key("result") || message.contains_key("error");
    // Notifications and responses get no answer, by JSON-RPC's rules.
    let id = match id {
        Some(id) if !is_response => id,
        _ => return None,
    };
    if message.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return invalid(id, "`jsonrpc` must be \"2.0\"".into());
    }
    match message.get("method") {
        None => return invalid(id, "a request needs a `method`".into()),
        Some(Value::String(_)) => {}
        Some(other) => return invalid(id, format!("`method` must be a string, got {other}")),
    }
    match message.get("params") {
        None | Some(Value::Object(_)) => invalid(
            id,
            format!("the message does not fit the MCP schema: {error}"),
        ),
        Some(other) => invalid(
            id,
            format!("`params` must be an object, got {}", short(other)),
        ),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 40 {
        text
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Option<(Value, i64, String)> {
        let error = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(line).err()?;
        diagnose(line.as_bytes(), &error)
    }

    #[test]
    fn bad_lines_get_errors_that_say_what_is_wrong() {
        let (id, code, message) = answer("{not json").unwrap();
        assert_eq!((id, code), (Value::Null, PARSE_ERROR));
        assert!(
            message.starts_with("parse error: the line is not JSON"),
            "{message}"
        );
        let (_, code, message) = answer("[1, 2]").unwrap();
        assert_eq!(code, INVALID_REQUEST);
        assert!(message.contains("batches"), "{message}");
        let (id, _, message) = answer(r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#).unwrap();
        assert_eq!(id, json!(7));
        assert!(message.contains("\"2.0\""), "{message}");
        let (id, _, message) =
            answer(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":[1]}"#).unwrap();
        assert_eq!(id, json!("a"));
        assert!(message.contains("`params` must be an object"), "{message}");
    }

    #[test]
    fn notifications_and_responses_get_no_answer() {
        assert_eq!(answer(r#"{"jsonrpc":"2.0","method":5}"#), None);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":1,"result":5,"error":5}"#),
            None
        );
    }

    #[test]
    fn trims_line_ends_and_byte_order_marks() {
        assert_eq!(trim(b"\xEF\xBB\xBF{}\r\n"), b"{}");
        assert_eq!(trim(b"  \n"), b"");
    }
}
