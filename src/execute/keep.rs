//! A run's result too large to send, kept: the sandbox hands over a final value that is over
//! the output budget but within the final-value cap, and this stores it (blanked of secrets,
//! sealed, in the caller's scope) and turns the envelope into one that says where it is —
//! `stored`, a `nextRequest` that reads it, and a notice — so the run completes without its
//! calls ever running again.

use serde_json::Value;

use crate::credentials::ScriptWritten;
use crate::runs::{Retention, Store};
use crate::sandbox::{
    ENVELOPE_MAX_BYTES, EnvelopeError, ErrorCode, ExecuteEnvelope, Recovery, Status,
};

use super::stored::fit_metadata;

/// Stores `envelope.oversized`, if the sandbox left one, for `scope`. A result that cannot be
/// kept fails the run with `result_too_large`, saying why; its calls are done either way.
pub async fn keep_oversized(
    envelope: &mut ExecuteEnvelope,
    store: &Store,
    redaction: ScriptWritten<'_>,
    retention: Retention,
    scope: &str,
    budget: usize,
) {
    let Some(json) = envelope.oversized.take() else {
        return;
    };
    if envelope.status != Status::Completed {
        return;
    }
    let fail_with = |envelope: &mut ExecuteEnvelope, code: ErrorCode, message: String| {
        envelope.status = Status::Failed;
        envelope.error = Some(EnvelopeError::new(code, message));
    };
    let fail = |envelope: &mut ExecuteEnvelope, message: String| {
        fail_with(envelope, ErrorCode::ResultTooLarge, message)
    };
    let mut value: Value = match serde_json::from_str(&json) {
        Ok(value) => value,
        // What JSON cannot carry (nesting past 128 levels) is the result's shape, whatever its
        // size: `invalid_result`, as when it is small enough to send.
        Err(e) => {
            return fail_with(
                envelope,
                ErrorCode::InvalidResult,
                crate::sandbox::not_json(&e),
            );
        }
    };
    // Secrets are blanked before the value is kept, as in every envelope: the script's result,
    // searched for whole values (what upstreams sent was searched as it arrived).
    redaction.clean_json(&mut value);
    let json = value.to_string();
    let bytes = json.len() as u64;
    let kept = store
        .stored_results()
        .keep(scope, &envelope.run_id, json, retention)
        .await;
    let kept = match kept {
        Ok(Some(kept)) => kept,
        Ok(None) => {
            return fail(
                envelope,
                format!(
                    "the result is {bytes} bytes of JSON: over the output budget of {budget} bytes, and over the {} bytes `[limits] stored_kib` lets one client keep",
                    retention.max_bytes
                ),
            );
        }
        Err(e) => {
            return fail(
                envelope,
                format!(
                    "the result is {bytes} bytes of JSON, over the output budget of {budget} bytes, and could not be stored: {e}"
                ),
            );
        }
    };
    let (stored, next_request) = fit_metadata(
        &value,
        &kept.result_ref,
        bytes,
        budget,
        kept.expires_at_ms,
        Recovery::USE_NEXT_REQUEST,
    );
    let ttl = retention.ttl.as_secs();
    // Within the budget, it was the rest of the envelope that left no room for it.
    let over = if bytes > budget as u64 {
        format!("is over the output budget ({budget} bytes)")
    } else {
        format!(
            "fits the output budget ({budget} bytes) but not the envelope with the rest of the run's report (at most {ENVELOPE_MAX_BYTES} bytes)"
        )
    };
    envelope.notices.push(format!(
        "The result ({bytes} bytes) {over}, so it is stored as {} for {ttl} s: run nextRequest as it is to read it in pages with hub.read; nothing runs again.",
        kept.result_ref
    ));
    envelope.result = None;
    envelope.stored = Some(stored);
    envelope.next_request = Some(next_request);
}
