//! The envelopes of a resume that runs nothing: the run ended or paused (its stored
//! envelope), another request is running it, it belongs to another profile, or it ends from
//! its journal alone.

use crate::runs::{CallState, JournalEntry, RunRecord};
use crate::sandbox::{
    CallEnd, CallSummary, EnvelopeError, ErrorCode, ExecuteEnvelope, ExecuteRequest,
    ProviderExecution, Recovery, RecoveryCode, Status,
};

use super::ResumeError;

/// The envelope a resume returns for a run that ended or paused: the one stored.
pub(super) fn stored_envelope(record: &RunRecord) -> Result<ExecuteEnvelope, ResumeError> {
    record
        .envelope
        .as_ref()
        .and_then(|e| serde_json::from_value::<ExecuteEnvelope>(e.clone()).ok())
        .ok_or_else(|| ResumeError::NoEnvelope(record.run_id.clone()))
}

/// What a resume returns while another request runs the run: nothing ran, and the calls the
/// run had made when it last paused.
pub(super) fn in_progress(run_id: &str, record: &RunRecord) -> ExecuteEnvelope {
    let calls = record
        .envelope
        .as_ref()
        .and_then(|e| serde_json::from_value::<ExecuteEnvelope>(e.clone()).ok())
        .map(|e| e.calls)
        .unwrap_or_default();
    let mut envelope = in_progress_envelope(run_id, calls);
    envelope.profile = record.profile.clone();
    envelope
}

pub(super) fn in_progress_envelope(run_id: &str, calls: Vec<CallSummary>) -> ExecuteEnvelope {
    let mut error = EnvelopeError::new(
        ErrorCode::RunInProgress,
        format!(
            "run `{run_id}` is being run by another request right now, so this one ran nothing"
        ),
    );
    // The resume itself may be sent again as it is; what the run's calls did is not known yet.
    error.recovery = Some(Recovery {
        code: None,
        execute_request: ExecuteRequest::Unchanged,
        provider_execution: ProviderExecution::Unknown,
        automatic_replay: false,
    });
    let mut envelope = ExecuteEnvelope::new(run_id, Status::Running, Vec::new());
    envelope.error = Some(error);
    envelope.calls = calls;
    envelope
}

/// What an attempt answers when another process took its run over while it ran (its lease
/// lapsed: it stalled, or its clock and the other's disagree): the run's outcome is that
/// process's, but the calls this attempt sent are this attempt's to report. Any that went out
/// may have acted, so the script must not be sent again as a new run; resuming it is safe.
pub(super) fn taken_over_envelope(run_id: &str, calls: Vec<CallSummary>) -> ExecuteEnvelope {
    let sent = calls
        .iter()
        .any(|call| !matches!(call.outcome, Some(CallEnd::NotSent)));
    let mut envelope = in_progress_envelope(run_id, calls);
    let Some(error) = envelope.error.as_mut() else {
        return envelope;
    };
    error.message = format!(
        "run `{run_id}` was taken over by another process while this one ran it (this attempt did not renew its claim in time), so how the run ends is that process's to say"
    );
    if sent {
        error.recovery = Some(Recovery {
            code: Some(RecoveryCode::McpExecutionOutcomeUnknown),
            execute_request: ExecuteRequest::DoNotReplay,
            provider_execution: ProviderExecution::Unknown,
            automatic_replay: false,
        });
        error.hint = Some(format!(
            "The calls listed went out from this attempt and may have acted. Do not send this script again as a new run: resume it with execute {{ \"resume\": \"{run_id}\" }}, which never sends a call twice, for how it ends."
        ));
    } else {
        error.hint = Some(format!(
            "Nothing went out from this attempt. Resume the run with execute {{ \"resume\": \"{run_id}\" }} for how it ends."
        ));
    }
    envelope
}

/// Why a run is not resumed here, and where it is.
pub(super) fn other_profile(run_id: &str, run: Option<&str>, here: Option<&str>) -> String {
    let name = |profile: Option<&str>| match profile {
        Some(name) => format!("profile `{name}`"),
        None => "no profile".to_string(),
    };
    let where_to = match run {
        Some(profile) => format!(
            "`capabilities exec --resume {run_id} --profile {profile}` or a hub serving it (`capabilities hub serve --profile {profile}`)"
        ),
        None => format!("`capabilities exec --resume {run_id}` or a hub serving no profile"),
    };
    format!(
        "run `{run_id}` was started under {}, and this process serves {}; nothing ran and its approvals still stand. A run keeps the sources and policy it started with, so resume it with {where_to}",
        name(run),
        name(here)
    )
}

/// The calls a journal shows, for the envelope of a run that ends without running again.
pub(super) fn journaled_calls<'a>(
    journal: impl IntoIterator<Item = &'a JournalEntry>,
) -> Vec<CallSummary> {
    journal
        .into_iter()
        .map(|e| CallSummary {
            address: e.address.clone(),
            ok: e.ok,
            ms: e.ms,
            outcome: Some(match (e.state, e.ok) {
                (CallState::Dispatched, _) => CallEnd::Unknown,
                (CallState::Answered, true) => CallEnd::Done,
                (CallState::Answered, false) => CallEnd::Failed,
            }),
            seq: Some(e.seq),
        })
        .collect()
}
