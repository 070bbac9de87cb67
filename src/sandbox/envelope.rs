//! The `ExecuteEnvelope` a run returns, field for field as the spec names them, and how it is kept
//! small ([`ExecuteEnvelope::bound`]) without saying anything untrue.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ErrorCode;
use super::measure::cut_text;
use crate::model::json_size::json_len;

/// The most bytes a whole envelope takes as JSON: whatever a script does, its answer stays a size
/// a client and a model can take in.
pub const ENVELOPE_MAX_BYTES: usize = 64 << 10;

/// The most bytes one `hub.read` page takes: with the largest output budget, a page the size of
/// the budget would leave the envelope no room for its own fields, be handed over as too large
/// and stored again instead of read.
pub const PAGE_MAX_BYTES: usize = ENVELOPE_MAX_BYTES - (1 << 10);

/// The most bytes of an error's message (and of its hint); less when the output budget is
/// smaller.
pub const ERROR_TEXT_MAX_BYTES: usize = 8 << 10;

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
    /// Whether the script got a value from it. `outcome` says what happened to the call itself:
    /// one that ran but whose result was too large for the sandbox is `ok: false`, `done`.
    pub ok: bool,
    /// How long it took; for a call still in flight when the run ended, how long it had been.
    pub ms: u64,
    /// How the call ended; a run that stopped mid-call lists it too. Envelopes stored by an
    /// older version do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallEnd>,
    /// Its sequence number in the run, for the hub to match it with what it sent; a call the
    /// sandbox refused has none. Not shown.
    #[serde(skip)]
    pub seq: Option<u64>,
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
    /// For a `connection` item: the named connection to sign in, when it is not the source's
    /// default (the one signed in when this is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
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
    /// Every call the run started, in issue order: each one the sandbox sent to the bridge
    /// (`done`; `failed`; `not_sent` when the hub refused it or it waits for a person;
    /// `unknown` when the run ended while it was in flight), then each one refused because the
    /// call limit was reached or the run was already ending (`not_sent`). A call refused for
    /// itself (an unknown tool, arguments that do not match its schema) is not listed: it never
    /// became a call, and the script got the error at once. [`ExecuteEnvelope::bound`] may
    /// replace the tail with a notice that counts it.
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
    /// The profile the run was made under (`--profile`), whose sources and policy it used; absent
    /// for a run of the whole config. Set by the executor, not the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
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
            profile: None,
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

    /// Keeps the envelope small, and every field that stays true. The sandbox calls it at the
    /// end of each run, and the hub again after it adds `stored`; a bound envelope is left as it
    /// is.
    ///
    /// The error's message and hint are cut to `min(output_budget, ERROR_TEXT_MAX_BYTES)` bytes
    /// with a marker that gives the full length. Then, while the envelope is over
    /// [`ENVELOPE_MAX_BYTES`] as JSON, parts go in this order, least needed first:
    ///
    /// 1. a completed run's result that would not fit even without logs and calls moves to
    ///    `oversized`, for the hub to store like any result over the budget (unless one is
    ///    stored already): the logs and calls it would have pushed out stay;
    /// 2. logs, from the last line back (`truncated.logs`);
    /// 3. the tail of `calls`, replaced by one notice that counts the calls left out by outcome
    ///    (`… and 60 more calls: 50 done, 0 failed, 0 not sent, 10 unknown`);
    /// 4. the result: stored as in 1 when it can be, else cut to a string prefix of its JSON
    ///    (`truncated.result`);
    /// 5. the texts of notices and pending calls, shorter and shorter (their ids stay whole).
    ///
    /// The hub bounds what it adds in `stored`.
    pub fn bound(&mut self, output_budget: usize) {
        let text_max = output_budget.clamp(1, ERROR_TEXT_MAX_BYTES);
        if let Some(error) = self.error.as_mut() {
            cut_text(&mut error.message, text_max);
            if let Some(hint) = error.hint.as_mut() {
                cut_text(hint, text_max);
            }
        }
        if self.excess() == 0 {
            return;
        }
        if self.result_is_storable() && self.excess_without_logs_and_calls() > 0 {
            self.store_result();
        }
        self.trim_logs();
        if self.excess() == 0 {
            return;
        }
        self.trim_calls();
        if self.excess() == 0 {
            return;
        }
        self.trim_result();
        let mut text_max = 1 << 10;
        while self.excess() > 0 && text_max >= 64 {
            for notice in &mut self.notices {
                cut_text(notice, text_max);
            }
            for pending in &mut self.pending {
                cut_text(&mut pending.summary, text_max);
                if let Some(message) = pending.message.as_mut() {
                    cut_text(message, text_max);
                }
            }
            text_max /= 2;
        }
    }

    /// How many bytes of JSON the envelope is over [`ENVELOPE_MAX_BYTES`].
    fn excess(&self) -> usize {
        json_len(self).saturating_sub(ENVELOPE_MAX_BYTES)
    }

    fn trim_logs(&mut self) {
        let excess = self.excess();
        let mut freed = 0;
        while freed < excess {
            let Some(line) = self.logs.pop() else { break };
            // The line and the comma before it.
            freed += json_len(&line) + 1;
            self.truncated.logs = true;
        }
    }

    fn trim_calls(&mut self) {
        let excess = self.excess();
        let notice_at = self
            .notices
            .iter()
            .position(|n| CallCounts::parse(n).is_some());
        let mut counts = notice_at
            .and_then(|i| CallCounts::parse(&self.notices[i]))
            .unwrap_or_default();
        let before = counts;
        // Room for the notice itself (its counts grow by a few digits at most).
        let mut freed = 0;
        let needed = excess + CallCounts::MAX_NOTICE_BYTES;
        while freed < needed {
            let Some(call) = self.calls.pop() else { break };
            freed += json_len(&call) + 1;
            counts.add(&call);
        }
        if counts == before {
            return;
        }
        let notice = counts.notice();
        match notice_at {
            Some(i) => self.notices[i] = notice,
            None => self.notices.push(notice),
        }
    }

    /// What the envelope would be over without any logs or calls (and with the notice that
    /// would count them).
    fn excess_without_logs_and_calls(&mut self) -> usize {
        let logs = std::mem::take(&mut self.logs);
        let calls = std::mem::take(&mut self.calls);
        let excess =
            (json_len(self) + CallCounts::MAX_NOTICE_BYTES).saturating_sub(ENVELOPE_MAX_BYTES);
        self.logs = logs;
        self.calls = calls;
        excess
    }

    /// A completed run's result that nothing has stored yet: the hub can store it instead.
    fn result_is_storable(&self) -> bool {
        self.status == Status::Completed
            && self.result.is_some()
            && self.oversized.is_none()
            && self.stored.is_none()
    }

    fn store_result(&mut self) {
        if let Some(result) = self.result.take() {
            self.oversized = Some(result.to_string());
        }
    }

    fn trim_result(&mut self) {
        if self.result_is_storable() {
            self.store_result();
            return;
        }
        let Some(result) = self.result.take() else {
            return;
        };
        let text = match result {
            Value::String(prefix) if self.truncated.result => prefix,
            other => other.to_string(),
        };
        // Measured in place: as a string, the JSON of an object takes more room than the object.
        self.result = Some(Value::String(text));
        self.truncated.result = true;
        let excess = self.excess();
        if let Some(Value::String(text)) = self.result.as_mut() {
            let room = json_len(&*text).saturating_sub(excess + 2);
            cut_text(text, room);
        }
    }
}

/// The calls `bound` left out of `calls`, by outcome, as the notice that replaces them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CallCounts {
    done: usize,
    failed: usize,
    not_sent: usize,
    unknown: usize,
}

impl CallCounts {
    const PREFIX: &'static str = "… and ";
    const SUFFIX: &'static str = " more calls: ";
    /// The longest notice: four counts of up to 20 digits and their words.
    const MAX_NOTICE_BYTES: usize = 160;

    fn add(&mut self, call: &CallSummary) {
        // Envelopes stored before outcomes existed say only `ok`.
        let outcome = call.outcome.unwrap_or(if call.ok {
            CallEnd::Done
        } else {
            CallEnd::Failed
        });
        match outcome {
            CallEnd::Done => self.done += 1,
            CallEnd::Failed => self.failed += 1,
            CallEnd::NotSent => self.not_sent += 1,
            CallEnd::Unknown => self.unknown += 1,
        }
    }

    fn total(&self) -> usize {
        self.done + self.failed + self.not_sent + self.unknown
    }

    fn notice(&self) -> String {
        format!(
            "{}{}{}{} done, {} failed, {} not sent, {} unknown",
            Self::PREFIX,
            self.total(),
            Self::SUFFIX,
            self.done,
            self.failed,
            self.not_sent,
            self.unknown
        )
    }

    /// Reads back a notice [`CallCounts::notice`] wrote (a second `bound` adds to it).
    fn parse(notice: &str) -> Option<CallCounts> {
        let rest = notice.strip_prefix(Self::PREFIX)?;
        let (total, rest) = rest.split_once(Self::SUFFIX)?;
        let mut numbers = rest.split(", ").map(|part| {
            let (n, _) = part.split_once(' ')?;
            n.parse::<usize>().ok()
        });
        let mut next = || numbers.next().flatten();
        let counts = CallCounts {
            done: next()?,
            failed: next()?,
            not_sent: next()?,
            unknown: next()?,
        };
        (total.parse::<usize>().ok() == Some(counts.total())).then_some(counts)
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

    fn call(i: usize, outcome: CallEnd) -> CallSummary {
        CallSummary {
            address: format!("source.tool{i}"),
            ok: outcome == CallEnd::Done,
            ms: 5,
            outcome: Some(outcome),
            seq: None,
        }
    }

    fn size(envelope: &ExecuteEnvelope) -> usize {
        serde_json::to_string(envelope).map_or(usize::MAX, |json| json.len())
    }

    #[test]
    fn error_texts_are_cut_to_the_smaller_of_the_budget_and_8_kib() {
        let mut error = EnvelopeError::new(ErrorCode::RuntimeError, "x".repeat(100_000));
        error.hint = Some("h".repeat(20_000));
        let mut env = ExecuteEnvelope::rejected("r1", error.clone(), vec![]);
        env.bound(16 << 10);
        let cut = env.error.clone().unwrap_or_else(|| error.clone());
        assert!(
            cut.message.len() <= ERROR_TEXT_MAX_BYTES,
            "{}",
            cut.message.len()
        );
        assert!(cut.message.ends_with("… [cut: 100,000 bytes in all]"));
        assert!(cut.hint.is_some_and(|h| h.len() <= ERROR_TEXT_MAX_BYTES));

        let mut small = ExecuteEnvelope::rejected("r1", error, vec![]);
        small.bound(1_024);
        let message = small.error.map(|e| e.message).unwrap_or_default();
        assert!(
            message.len() <= 1_024 && message.contains("[cut: "),
            "{message}"
        );
    }

    #[test]
    fn logs_go_first_then_the_tail_of_calls_with_true_counts() {
        let mut env = ExecuteEnvelope::new("r1", Status::Completed, vec![]);
        env.result = Some(Value::String("r".repeat(60_000)));
        env.logs = (0..100).map(|i| format!("log line {i:>30}")).collect();
        let outcomes = [
            CallEnd::Done,
            CallEnd::Failed,
            CallEnd::NotSent,
            CallEnd::Unknown,
        ];
        env.calls = (0..100).map(|i| call(i, outcomes[i % 4])).collect();
        let result = env.result.clone();
        env.bound(64 << 10);
        assert!(size(&env) <= ENVELOPE_MAX_BYTES, "{}", size(&env));
        assert_eq!(
            env.result, result,
            "the result fitted once the rest was trimmed"
        );
        assert!(env.truncated.logs && env.logs.is_empty());
        // The calls kept are the first ones; the notice counts the others by outcome.
        let kept = env.calls.len();
        assert!(kept > 0 && kept < 100, "{kept}");
        assert_eq!(env.calls[0], call(0, CallEnd::Done));
        let counts = env.notices.iter().find_map(|n| CallCounts::parse(n));
        let counts = counts.unwrap_or_default();
        assert_eq!(kept + counts.total(), 100, "{:?}", env.notices);
        let mut expected = CallCounts::default();
        for i in kept..100 {
            expected.add(&call(i, outcomes[i % 4]));
        }
        assert_eq!(counts, expected);
        assert!(
            env.notices
                .iter()
                .any(|n| n.starts_with(&format!("… and {} more calls: ", 100 - kept))),
            "{:?}",
            env.notices
        );

        // Bound twice, nothing changes; bound again with more to cut, the notice adds up.
        let once = env.clone();
        env.bound(64 << 10);
        assert_eq!(env, once);
        env.logs = vec!["l".repeat(10_000)];
        env.result = Some(Value::String("r".repeat(63_000)));
        env.oversized = Some("stored elsewhere".into());
        env.bound(64 << 10);
        let counts = env.notices.iter().filter_map(|n| CallCounts::parse(n));
        let totals: Vec<usize> = counts.map(|c| c.total()).collect();
        assert_eq!(totals.len(), 1, "{:?}", env.notices);
        assert_eq!(env.calls.len() + totals[0], 100);
        assert!(size(&env) <= ENVELOPE_MAX_BYTES, "{}", size(&env));
    }

    #[test]
    fn a_completed_result_that_cannot_fit_goes_to_the_hub_to_store() {
        let mut env = ExecuteEnvelope::new("r1", Status::Completed, vec![]);
        let result = serde_json::json!({ "rows": "v".repeat(65_536 - 20) });
        env.result = Some(result.clone());
        env.bound(65_536);
        assert_eq!(env.result, None);
        assert_eq!(env.oversized, Some(result.to_string()));
        assert!(!env.truncated.result);
        assert!(size(&env) <= ENVELOPE_MAX_BYTES);
    }

    #[test]
    fn a_failed_runs_result_prefix_is_cut_and_says_so() {
        let error = EnvelopeError::new(ErrorCode::ResultTooLarge, "too large");
        let mut env = ExecuteEnvelope::rejected("r1", error, vec![]);
        env.result = Some(serde_json::json!({ "a": "\"quoted\" ".repeat(10_000) }));
        env.bound(65_536);
        assert!(env.truncated.result);
        assert!(size(&env) <= ENVELOPE_MAX_BYTES, "{}", size(&env));
        let prefix = env.result.as_ref().and_then(Value::as_str).unwrap_or("");
        assert!(
            prefix.starts_with("{\"a\":") && prefix.contains("[cut: "),
            "{prefix}"
        );
        assert_eq!(env.oversized, None, "a failed run stores nothing");
    }

    #[test]
    fn pending_texts_are_cut_last_and_ids_stay_whole() {
        let mut env = ExecuteEnvelope::new("r1", Status::AwaitingApproval, vec![]);
        env.pending = (0..100)
            .map(|i| Pending {
                id: format!("approval-{i}"),
                kind: PendingKind::Approval,
                address: Some("source.write".into()),
                summary: "s".repeat(2_000),
                message: Some("m".repeat(2_000)),
                connection: None,
            })
            .collect();
        env.bound(16 << 10);
        assert!(size(&env) <= ENVELOPE_MAX_BYTES, "{}", size(&env));
        assert_eq!(env.pending.len(), 100);
        assert_eq!(env.pending[99].id, "approval-99");
    }

    #[test]
    fn call_notices_read_back() {
        let counts = CallCounts {
            done: 12,
            failed: 0,
            not_sent: 3,
            unknown: 1_000,
        };
        assert_eq!(CallCounts::parse(&counts.notice()), Some(counts));
        assert!(counts.notice().len() <= CallCounts::MAX_NOTICE_BYTES);
        assert_eq!(CallCounts::parse("… and 2 more calls: 1 done"), None);
        assert_eq!(CallCounts::parse("something else"), None);
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
