//! The `ExecuteEnvelope` a run returns, field for field as the spec names them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ErrorCode;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Completed,
    Failed,
    AwaitingApproval,
    AwaitingConnection,
    Cancelled,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvelopeError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl EnvelopeError {
    /// An error with the code's default hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EnvelopeError {
            code,
            message: message.into(),
            hint: Some(code.hint().to_string()),
        }
    }
}

/// One tool call the script made, in issue order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSummary {
    pub address: String,
    pub ok: bool,
    pub ms: u64,
}

/// What kind of person-side action a pending call waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingKind {
    Approval,
    Connection,
}

/// A call the run stopped at, waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub id: String,
    pub kind: PendingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Which parts of the output were cut to fit their budgets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncated {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub result: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub logs: bool,
}

impl Truncated {
    fn is_empty(&self) -> bool {
        !self.result && !self.logs
    }
}

/// The result of `execute`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteEnvelope {
    pub run_id: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<EnvelopeError>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    pub calls: Vec<CallSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
    #[serde(default, skip_serializing_if = "Truncated::is_empty")]
    pub truncated: Truncated,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

impl ExecuteEnvelope {
    /// An envelope with a status and nothing else yet.
    pub fn new(run_id: &str, status: Status, notices: Vec<String>) -> Self {
        ExecuteEnvelope {
            run_id: run_id.to_string(),
            status,
            result: None,
            error: None,
            logs: Vec::new(),
            calls: Vec::new(),
            pending: Vec::new(),
            truncated: Truncated::default(),
            notices,
        }
    }

    /// A failed run that never started (too large, syntax error, …).
    pub fn rejected(run_id: &str, error: EnvelopeError, notices: Vec<String>) -> Self {
        ExecuteEnvelope {
            error: Some(error),
            ..ExecuteEnvelope::new(run_id, Status::Failed, notices)
        }
    }

    /// The error code, when the run did not complete.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_the_spec_field_names() {
        let mut env =
            ExecuteEnvelope::rejected("r1", EnvelopeError::new(ErrorCode::Timeout, "slow"), vec![]);
        env.truncated.logs = true;
        let json = serde_json::to_value(&env).unwrap_or_default();
        assert_eq!(json["runId"], "r1");
        assert_eq!(json["status"], "failed");
        assert_eq!(json["error"]["code"], "timeout");
        assert_eq!(json["truncated"], serde_json::json!({ "logs": true }));
        assert!(json.get("pending").is_none());
        assert_eq!(json["calls"], serde_json::json!([]));
    }
}
