//! The QuickJS sandbox that runs `execute` scripts (DESIGN §4, the spec's "Inside the sandbox").
//! One runtime and context per run, made ready ahead of it; the hub plugs in through [`Bridge`]
//! and gets an [`ExecuteEnvelope`] back:
//!
//! ```text
//! let envelope = sandbox::run(RunRequest::new(run_id, code, namespaces), bridge).await;
//! ```
//!
//! | file | owns |
//! |---|---|
//! | `engine` | one run: runtime, limits, driving the script, the envelope |
//! | `js_threads` | the few threads every run's JavaScript shares; a waiting run holds none |
//! | `normalise/` | code shapes, TypeScript blanking, the static unknown-tool check |
//! | `parser_pool` | big-stack threads for the recursive parser |
//! | `warm` | runtimes with the prelude evaluated, made ready before a run asks |
//! | `compile` | source → bytecode outside the sandbox; the prelude, once per process |
//! | `host` | the Rust functions behind the prelude (tool calls, `hub.*`, console, timers, base64) |
//! | `measure` | sizes as JSON without writing it out; cutting text to fit |
//! | `input_schema` | a tool's input schema → the validator of its arguments, less what does not compile |
//! | `state` | what a run records while it runs |
//! | `tool_result` | MCP `CallToolResult` → the value a script sees |
//! | `alloc` | the metering allocator (memory limit, OOM flag) |
//! | `bridge`, `request`, `envelope`, `error`, `cancel` | the public types |

// The metering allocator implements rquickjs's unsafe `Allocator`.
#[allow(unsafe_code)]
mod alloc;
mod base64;
pub mod bridge;
pub mod cancel;
mod compile;
// Loads precompiled module bytecode and adds one intrinsic through rquickjs's raw API.
#[allow(unsafe_code)]
mod engine;
pub mod envelope;
pub mod error;
mod host;
mod input_schema;
mod js_threads;
mod measure;
mod normalise;
mod parser_pool;
pub mod request;
mod state;
mod tool_result;
// Calls QuickJS's raw API for the one intrinsic rquickjs has no marker type for.
#[allow(unsafe_code)]
mod warm;

pub use bridge::{
    Bridge, BridgeError, CallFailure, CallOutcome, ReadRequest, ToolCall, unavailable,
};
pub use cancel::CancelToken;
pub use engine::{run, run_with_cancel, settle, warm_up};
pub use envelope::{
    CallEnd, CallSummary, Collection, ENVELOPE_MAX_BYTES, ERROR_TEXT_MAX_BYTES, EnvelopeError,
    ExecuteEnvelope, ExecuteRequest, NextRequest, Pending, PendingKind, ProviderExecution,
    Recovery, RecoveryCode, Status, Stored, Truncated,
};
pub use error::{ErrorCode, not_json};
pub use request::{Limits, Namespaces, RunRequest, ToolSpec};
