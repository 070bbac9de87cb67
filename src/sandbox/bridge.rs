//! The seam between the sandbox and the rest of the hub: the [`Bridge`] trait the hub implements
//! (policy, journal, upstream calls), and the values that cross it.

use futures::future::BoxFuture;
use serde_json::Value;

use super::envelope::{CallEnd, Pending};
use super::error::ErrorCode;

/// One tool call from a script. Arguments have already been validated against the tool's input
/// schema; `seq` numbers calls from 0 in the order the script issued them (deterministic, so a
/// replay can match calls to its journal).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub seq: u64,
    pub namespace: String,
    /// The tool part of the address (`createIssue`), not the upstream name.
    pub tool: String,
    /// `None` means the source's default connection.
    pub connection: Option<String>,
    pub arguments: Value,
}

impl ToolCall {
    pub fn address(&self) -> String {
        format!("{}.{}", self.namespace, self.tool)
    }
}

/// Why a call did not produce a result.
#[derive(Debug, Clone, PartialEq)]
pub enum BridgeError {
    /// The call failed; the script sees a `ToolError` it can catch.
    Failed(CallFailure),
    /// The call needs a person (approval, a connection). The script never sees an answer: the run
    /// stops once no other call is in flight, and the envelope lists every such call.
    Suspend(Pending),
}

/// A failed call as the script's `ToolError` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFailure {
    /// Typically `PolicyDenied`, `UpstreamError`, `UpstreamUnavailable` or `ToolError`.
    pub code: ErrorCode,
    pub message: String,
    pub hint: Option<String>,
    /// A transport status when there is one (HTTP status, JSON-RPC error code).
    pub status: Option<i64>,
    pub retryable: bool,
    /// How far the call got, when the bridge knows better than the code says (a request that
    /// timed out after it was sent may have acted; a source that was down sent nothing).
    pub outcome: Option<CallEnd>,
}

impl CallFailure {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CallFailure {
            code,
            message: message.into(),
            hint: None,
            status: None,
            retryable: false,
            outcome: None,
        }
    }
}

/// The answer to one call. `ms` is how long the call took; the hub passes the journaled duration
/// when it answers from the journal, so a replay moves the logical clock exactly as the first run
/// did. With `None` the sandbox measures the call itself.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The raw MCP `CallToolResult` JSON on success.
    pub result: Result<Value, BridgeError>,
    pub ms: Option<u64>,
}

impl From<Result<Value, BridgeError>> for CallOutcome {
    fn from(result: Result<Value, BridgeError>) -> Self {
        CallOutcome { result, ms: None }
    }
}

/// `hub.read(resultRef, { path, fields, offset })`: one page of a stored result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequest {
    pub result_ref: String,
    /// An RFC 6901 JSON Pointer to an array in the stored value; `""` (or none) is the root.
    pub path: String,
    /// Literal immediate keys to keep of each row; `None` keeps whole rows.
    pub fields: Option<Vec<String>>,
    pub offset: u64,
    /// The calling run's output budget: the page, serialized as it will be sent, fits it.
    pub budget: usize,
}

/// What the sandbox needs from the hub. Futures are spawned on the caller's tokio runtime (not
/// on the thread that runs JavaScript), and dropped (aborted) when the run ends.
pub trait Bridge: Send + Sync + 'static {
    /// Runs one tool call.
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome>;
    /// `hub.search(query)`: the same text the `search` tool returns.
    fn search(&self, query: String) -> BoxFuture<'static, String>;
    /// `hub.describe(targets)`: the same text the `describe` tool returns.
    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String>;
    /// `hub.read(...)`: a page of a stored result, as `{ items, offset, total, returned,
    /// nextOffset, complete }`. A hub that stores nothing has nothing to read.
    fn read(&self, request: ReadRequest) -> BoxFuture<'static, Result<Value, CallFailure>> {
        Box::pin(std::future::ready(Err(unavailable(&request.result_ref))))
    }
    /// `hub.get(resultRef)`: a stored result whole, for the script to slice and aggregate.
    fn get(&self, result_ref: String) -> BoxFuture<'static, Result<Value, CallFailure>> {
        Box::pin(std::future::ready(Err(unavailable(&result_ref))))
    }
}

/// The failure of reading a stored result that is not there (expired, evicted, unknown, or
/// someone else's).
pub fn unavailable(result_ref: &str) -> CallFailure {
    let mut failure = CallFailure::new(
        ErrorCode::ResultUnavailable,
        format!(
            "the stored result `{result_ref}` is not available: it expired, was evicted, or was never stored for this client"
        ),
    );
    failure.hint = Some(ErrorCode::ResultUnavailable.hint().to_string());
    failure
}
