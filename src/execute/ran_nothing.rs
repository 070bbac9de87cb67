//! The envelopes of a resume that runs nothing: the run ended or paused (its stored
//! envelope), another request is running it, it belongs to another profile, or it ends from
//! its journal alone.

use crate::runs::{CallState, JournalEntry, RunRecord};
use crate::sandbox::{
    CallEnd, CallSummary, EnvelopeError, ErrorCode, ExecuteEnvelope, ExecuteRequest,
    ProviderExecution, Recovery, Status,
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
