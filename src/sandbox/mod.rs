//! The QuickJS sandbox that runs `execute` scripts (see DESIGN §4 and the spec's "Inside the
//! sandbox"). One runtime and context per run; the hub plugs in through [`Bridge`].

mod alloc;
pub mod bridge;
mod compile;
pub mod envelope;
pub mod error;
pub mod request;

pub use bridge::{Bridge, BridgeError, CallFailure, CallOutcome, ToolCall};
pub use envelope::{CallSummary, EnvelopeError, ExecuteEnvelope, Pending, PendingKind, Status, Truncated};
pub use error::ErrorCode;
pub use request::{Namespaces, RunRequest, ToolSpec};
