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
    /// Another request is running the run now (only a resume answers this): no result yet.
    Running,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvelopeError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Whether the same execute may be sent again; absent when the envelope cannot say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
}

impl EnvelopeError {
    /// An error with the code's default hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EnvelopeError {
            code,
            message: message.into(),
            hint: Some(code.hint().to_string()),
            recovery: None,
        }
    }
}

/// The spec's recovery contract for a failed run (field and value names are the spec's
/// snake_case): what the client may do with the execute request it sent, and how far the
/// upstream work got. It names no session, token or argument, only the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<RecoveryCode>,
    pub execute_request: ExecuteRequest,
    pub provider_execution: ProviderExecution,
    /// Never true: neither the hub nor the client may replay a failed run on its own.
    pub automatic_replay: bool,
}

impl Recovery {
    /// A call may have reached an upstream and acted: inspect before sending anything again.
    pub const OUTCOME_UNKNOWN: Recovery = Recovery {
        code: Some(RecoveryCode::McpExecutionOutcomeUnknown),
        execute_request: ExecuteRequest::DoNotReplay,
        provider_execution: ProviderExecution::Unknown,
        automatic_replay: false,
    };
    /// Nothing reached an upstream and the script is at fault: fix it and send it again.
    pub const CORRECT_ARGUMENTS: Recovery = Recovery {
        code: None,
        execute_request: ExecuteRequest::CorrectArguments,
        provider_execution: ProviderExecution::NotStarted,
        automatic_replay: false,
    };
    /// Nothing reached an upstream and the script is not at fault: the same request may be
    /// sent again once the cause (a source that is down) is gone.
    pub const UNCHANGED: Recovery = Recovery {
        code: None,
        execute_request: ExecuteRequest::Unchanged,
        provider_execution: ProviderExecution::NotStarted,
        automatic_replay: false,
    };
    /// The result was too large to send and is stored: run `nextRequest` as it is.
    pub const USE_NEXT_REQUEST: Recovery = Recovery {
        code: Some(RecoveryCode::McpResultStored),
        execute_request: ExecuteRequest::UseNextRequest,
        provider_execution: ProviderExecution::Completed,
        automatic_replay: false,
    };
    /// A page of a stored result did not fit as asked: the provider work is done, change only
    /// what the script reads and returns.
    pub const ADJUST_PROJECTION: Recovery = Recovery {
        code: Some(RecoveryCode::McpResultRowTooLarge),
        execute_request: ExecuteRequest::AdjustProjection,
        provider_execution: ProviderExecution::Completed,
        automatic_replay: false,
    };
    /// A stored result is gone: the script must change; whether its calls may run again is the
    /// caller's decision to make explicitly.
    pub const RESULT_UNAVAILABLE: Recovery = Recovery {
        code: Some(RecoveryCode::McpResultUnavailable),
        execute_request: ExecuteRequest::CorrectArguments,
        provider_execution: ProviderExecution::NotStarted,
        automatic_replay: false,
    };
}

/// Why the recovery is what it is, when the decision alone does not say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecoveryCode {
    /// A call that reached an upstream may have changed something there (or its answer was
    /// lost), so what the run did is not known from the request alone.
    McpExecutionOutcomeUnknown,
    /// The result is stored; `nextRequest` reads it.
    McpResultStored,
    /// One row of a stored result does not fit the budget with the fields asked for.
    McpResultRowTooLarge,
    /// A stored result expired, was evicted, or belongs to someone else.
    McpResultUnavailable,
}

/// What to do with the execute request that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecuteRequest {
    /// Change the script (or its arguments) before sending it again.
    CorrectArguments,
    /// Do not send it again until the upstream's current state has been checked.
    DoNotReplay,
    /// It may be sent again as it is.
    Unchanged,
    /// The provider work is done: change only what the script returns (its projection).
    AdjustProjection,
    /// Run the envelope's `nextRequest` exactly as it is.
    UseNextRequest,
}

/// How far the upstream work of the run got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderExecution {
    /// No call reached an upstream.
    NotStarted,
    /// A call reached an upstream, and what it did there is not known.
    Unknown,
    /// The provider work is done; only what is returned is left to settle.
    Completed,
}

/// One tool call the script made, in issue order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSummary {
    pub address: String,
    pub ok: bool,
    pub ms: u64,
    /// How the call ended; a run that stopped mid-call lists it too. Envelopes stored by an
    /// older version do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallEnd>,
}

/// How one call of a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEnd {
    /// It ran and answered.
    Done,
    /// It was sent and failed (the tool or its upstream said so).
    Failed,
    /// It never left the hub (policy, arguments, a limit, a source that was down).
    NotSent,
    /// It was in flight when the run ended: it may have taken effect.
    Unknown,
}

/// A result too large for the output budget, kept in the state store for `hub.read` (`stored`
/// in the envelope).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stored {
    pub result_ref: String,
    /// The size of the stored value as JSON.
    pub bytes: u64,
    pub output_budget_bytes: u64,
    pub expires_at_ms: u64,
    pub collections: Vec<Collection>,
    /// False when discovery stopped at one of its bounds: more arrays may be there.
    pub collections_complete: bool,
    /// The value's shape (keys, types, lengths), never its scalar values.
    pub preview: Value,
    /// Always `use_next_request`: run `nextRequest` as it is; nothing needs to run again.
    pub recovery: Recovery,
}

/// An array inside a stored result, as `hub.read` can page it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    /// RFC 6901 JSON Pointer to the array; `""` for a root array.
    pub path: String,
    pub rows: u64,
    /// The immediate keys seen in its rows.
    pub fields: Vec<String>,
    /// False when not every row was inspected or some names were left out.
    pub fields_complete: bool,
}

/// The request that reads on from a stored result: send it to `execute` exactly as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextRequest {
    pub code: String,
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
    /// The result, when it was too large to send and was kept for `hub.read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<Stored>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_request: Option<NextRequest>,
    /// The result as JSON when it was over the output budget but within the final-value cap:
    /// the sandbox hands it over for the hub to store (never sent, never stored as is).
    #[serde(skip)]
    pub oversized: Option<String>,
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
            stored: None,
            next_request: None,
            oversized: None,
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
        assert!(json["error"].get("recovery").is_none());
    }

    #[test]
    fn recovery_serialises_with_the_spec_names_and_round_trips() {
        let mut error = EnvelopeError::new(ErrorCode::RuntimeError, "boom");
        error.recovery = Some(Recovery::OUTCOME_UNKNOWN);
        let json = serde_json::to_value(&error).unwrap_or_default();
        assert_eq!(
            json["recovery"],
            serde_json::json!({
                "code": "MCP_EXECUTION_OUTCOME_UNKNOWN",
                "execute_request": "do_not_replay",
                "provider_execution": "unknown",
                "automatic_replay": false,
            })
        );
        assert_eq!(
            serde_json::from_value::<EnvelopeError>(json).ok(),
            Some(error)
        );
        let json = serde_json::to_value(Recovery::CORRECT_ARGUMENTS).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({
                "execute_request": "correct_arguments",
                "provider_execution": "not_started",
                "automatic_replay": false,
            })
        );
        let json = serde_json::to_value(Recovery::UNCHANGED).unwrap_or_default();
        assert_eq!(json["execute_request"], "unchanged");
    }
}
