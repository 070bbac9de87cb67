//! The closed set of error codes a run can end with (or a `ToolError` can carry), with their
//! stable snake_case names and the hint the model sees by default.

use serde::{Deserialize, Serialize};

use crate::model::Reader;

/// Every way a run (or a single tool call) can fail. The snake_case string is part of the
/// envelope contract: never rename a variant's string, only add new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The code does not parse, or uses TypeScript that cannot be stripped (enum, namespace, …).
    SyntaxError,
    /// The script threw an exception that nothing caught.
    RuntimeError,
    /// The run hit its wall-time limit (CPU-bound or waiting).
    Timeout,
    /// The script allocated past the memory limit.
    MemoryLimit,
    /// The script recursed past the stack limit.
    StackOverflow,
    /// The script made more tool calls than the limit allows.
    CallLimit,
    /// The script had too many timers pending at once.
    TimerLimit,
    /// The script called a tool that its namespace does not have.
    UnknownTool,
    /// Arguments did not match the tool's input schema (or named an unknown connection).
    InvalidArguments,
    /// The tool ran and reported a failure (`isError: true`).
    ToolError,
    /// Policy forbids this call.
    PolicyDenied,
    /// The upstream server answered with a protocol-level error.
    UpstreamError,
    /// The upstream server could not be reached or did not answer in time.
    UpstreamUnavailable,
    /// The script's return value is larger than the output budget.
    ResultTooLarge,
    /// The script's return value cannot be turned into JSON (BigInt, a cycle, …).
    InvalidResult,
    /// The code is larger than the code limit.
    CodeTooLarge,
    /// The run was cancelled by the client or the host.
    Cancelled,
    /// A bug or resource failure in the hub itself, not in the script.
    Internal,
    /// A resumed run made a different call than its journal recorded at the same step.
    ReplayDivergence,
    /// Nobody decided on a pending approval within 30 minutes.
    ApprovalExpired,
    /// The process running the run stopped while a call that may write was in flight, and no
    /// answer was recorded: the call may have taken effect, so it is never sent again.
    Interrupted,
    /// Another request (or another hub) is running the run right now; resume again shortly.
    RunInProgress,
    /// A stored result is not there any more (expired, evicted), or never was for this client.
    ResultUnavailable,
    /// One row of a stored result does not fit the output budget with the fields asked for.
    RowTooLarge,
}

impl ErrorCode {
    /// Every code, in declaration order (for docs and tests).
    pub const ALL: [ErrorCode; 24] = [
        ErrorCode::SyntaxError,
        ErrorCode::RuntimeError,
        ErrorCode::Timeout,
        ErrorCode::MemoryLimit,
        ErrorCode::StackOverflow,
        ErrorCode::CallLimit,
        ErrorCode::TimerLimit,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidArguments,
        ErrorCode::ToolError,
        ErrorCode::PolicyDenied,
        ErrorCode::UpstreamError,
        ErrorCode::UpstreamUnavailable,
        ErrorCode::ResultTooLarge,
        ErrorCode::InvalidResult,
        ErrorCode::CodeTooLarge,
        ErrorCode::Cancelled,
        ErrorCode::Internal,
        ErrorCode::ReplayDivergence,
        ErrorCode::ApprovalExpired,
        ErrorCode::Interrupted,
        ErrorCode::RunInProgress,
        ErrorCode::ResultUnavailable,
        ErrorCode::RowTooLarge,
    ];

    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::SyntaxError => "syntax_error",
            ErrorCode::RuntimeError => "runtime_error",
            ErrorCode::Timeout => "timeout",
            ErrorCode::MemoryLimit => "memory_limit",
            ErrorCode::StackOverflow => "stack_overflow",
            ErrorCode::CallLimit => "call_limit",
            ErrorCode::TimerLimit => "timer_limit",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::ToolError => "tool_error",
            ErrorCode::PolicyDenied => "policy_denied",
            ErrorCode::UpstreamError => "upstream_error",
            ErrorCode::UpstreamUnavailable => "upstream_unavailable",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::InvalidResult => "invalid_result",
            ErrorCode::CodeTooLarge => "code_too_large",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Internal => "internal",
            ErrorCode::ReplayDivergence => "replay_divergence",
            ErrorCode::ApprovalExpired => "approval_expired",
            ErrorCode::Interrupted => "interrupted",
            ErrorCode::RunInProgress => "run_in_progress",
            ErrorCode::ResultUnavailable => "result_unavailable",
            ErrorCode::RowTooLarge => "row_too_large",
        }
    }

    /// Parses a wire name; `None` for anything outside the closed set.
    pub fn parse(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
    }

    /// The default hint for `reader`: [`hint`](Self::hint) for an agent; for a person at the
    /// command line, the same advice in commands (`capabilities search`, `exec --resume`) where
    /// the agent's names the hub's tools.
    pub fn hint_for(self, reader: &Reader, run_id: &str) -> String {
        if reader.is_agent() {
            return self.hint().to_string();
        }
        match self {
            ErrorCode::UnknownTool => {
                format!(
                    "Find the right tool address with {}; a tool it does not show (the policy denies it) cannot be called either.",
                    reader.search()
                )
            }
            ErrorCode::InvalidArguments => format!(
                "Match the tool's signature; {} shows the full types.",
                reader.describe("ADDRESS")
            ),
            ErrorCode::RunInProgress => format!(
                "Run {} again in a few seconds for the run's result; do not run the script again, or its calls would run twice.",
                reader.resume(run_id, None)
            ),
            ErrorCode::ReplayDivergence => format!(
                "The script no longer matches the run it resumes; run it again as a new run with `{}` (calls already made are done; do not repeat writes).",
                reader.command("exec SCRIPT")
            ),
            ErrorCode::ApprovalExpired => format!(
                "Approvals wait 30 minutes; run the script again with `{}` when you can decide.",
                reader.command("exec SCRIPT")
            ),
            other => other.hint().to_string(),
        }
    }

    /// The default hint: what the model should do next. Specific errors may carry a better one.
    pub fn hint(self) -> &'static str {
        match self {
            ErrorCode::SyntaxError => "Fix the code at the reported line:column and run it again.",
            ErrorCode::RuntimeError => "Fix the script; catch errors you expect with try/catch.",
            ErrorCode::Timeout => {
                "The run exceeded its time limit: avoid endless loops, run independent calls in parallel with Promise.all, and shorten sleeps."
            }
            ErrorCode::MemoryLimit => {
                "Process data in smaller pieces and keep only the fields you need."
            }
            ErrorCode::StackOverflow => "Recursion is too deep: use a loop instead.",
            ErrorCode::CallLimit => {
                "Too many tool calls in one run: fetch in bulk or split the work into several runs."
            }
            ErrorCode::TimerLimit => {
                "Too many timers pending at once: await them in smaller batches."
            }
            ErrorCode::UnknownTool => {
                "Use search or describe to find the right tool address; a tool they do not show (the policy denies it, or this client may not call it) cannot be called either."
            }
            ErrorCode::InvalidArguments => {
                "Match the tool's signature; describe shows the full types."
            }
            ErrorCode::ToolError => {
                "The tool reported a failure; read the message and adjust the arguments."
            }
            ErrorCode::PolicyDenied => {
                "The user's policy forbids this call; do not try to work around it."
            }
            ErrorCode::UpstreamError => {
                "The source returned an error; retry later or try another approach."
            }
            ErrorCode::UpstreamUnavailable => "The source is unreachable right now; retry later.",
            ErrorCode::ResultTooLarge => {
                "Return only what you need: pick fields, slice arrays or aggregate inside the script. Tool calls already made are done; do not repeat writes."
            }
            ErrorCode::InvalidResult => "Return plain JSON data (no BigInt, functions or cycles).",
            ErrorCode::CodeTooLarge => "Send a shorter script.",
            ErrorCode::Cancelled => {
                "The run was cancelled; calls made before that may have taken effect."
            }
            ErrorCode::Internal => {
                "This is a bug in the hub, not in your script; retry once, then report it."
            }
            ErrorCode::ReplayDivergence => {
                "The script no longer matches the run it resumes; send it again as a new execute (calls already made are done; do not repeat writes)."
            }
            ErrorCode::ApprovalExpired => {
                "Approvals wait 30 minutes; run the script again as a new execute when the user is there to decide."
            }
            ErrorCode::Interrupted => {
                "Do not run this script again: check the upstream's current state first, then do only what is still missing."
            }
            ErrorCode::RunInProgress => {
                "Call execute with the same { \"resume\": runId } again in a few seconds for the run's result; do not send its script again, or its calls would run twice."
            }
            ErrorCode::ResultUnavailable => {
                "The stored result is gone. Decide whether running its calls again is safe before you do: never repeat a write just to get its result back."
            }
            ErrorCode::RowTooLarge => {
                "Pick fewer fields with hub.read(ref, { fields }), or read the row with hub.get(ref) and return only the part you need."
            }
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a script's result is not the JSON an envelope carries, in the script's terms: JSON's
/// decoder says "recursion limit exceeded" or "hex escape" where the script nested a value too
/// deep or left half of a UTF-16 pair in a string.
pub fn not_json(error: &serde_json::Error) -> String {
    let said = error.to_string();
    if said.contains("recursion limit exceeded") {
        "the result nests deeper than the 128 levels JSON is read to here; return a flatter value"
            .into()
    } else if said.contains("surrogate") || said.contains("hex escape") {
        "a string in the result holds a lone surrogate (half of a UTF-16 pair, like \"\\ud800\"), which JSON text cannot carry; clean it with `text.toWellFormed()`".into()
    } else {
        format!("the result is not JSON: {said}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_and_match_serde() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let json = serde_json::to_value(code).unwrap_or_default();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_string()));
            assert!(!code.hint().is_empty());
        }
        assert_eq!(ErrorCode::parse("nope"), None);
    }

    #[test]
    fn a_result_json_cannot_carry_is_said_in_the_scripts_terms() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let error = serde_json::from_str::<serde_json::Value>(&deep).expect_err("too deep");
        assert!(not_json(&error).contains("nests deeper than the 128 levels"));
        let error = serde_json::from_str::<serde_json::Value>("\"\\ud800x\"").expect_err("lone");
        assert!(
            not_json(&error).contains("toWellFormed()"),
            "{}",
            not_json(&error)
        );
        let error = serde_json::from_str::<serde_json::Value>("{").expect_err("cut");
        assert!(not_json(&error).starts_with("the result is not JSON: "));
    }

    #[test]
    fn people_get_commands_where_agents_get_tool_names() {
        let person = Reader::cli(Some(std::path::Path::new("/etc/c.toml")));
        for code in ErrorCode::ALL {
            assert_eq!(code.hint_for(&Reader::Agent, "run_x"), code.hint());
            let hint = code.hint_for(&person, "run_x");
            assert!(
                !hint.contains("execute") && !hint.contains("{ \"resume\""),
                "{code}: {hint}"
            );
        }
        assert_eq!(
            ErrorCode::RunInProgress.hint_for(&person, "run_x"),
            "Run `capabilities --config /etc/c.toml exec --resume run_x` again in a few seconds for the run's result; do not run the script again, or its calls would run twice."
        );
    }
}
