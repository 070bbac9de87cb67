//! The recovery contract of a failed run (issue 8, spec 004): may the client send the same
//! `execute` again, must it correct it first, or must it not replay it because an upstream may
//! already have acted? The bridge records how far each call got ([`Dispatches`]) and notes it
//! in the journal ([`mark`]), so a resumed run knows it of its earlier attempts too; after the
//! run, [`apply`] turns that record and the error code into `error.recovery` and, when replaying
//! is unsafe, replaces the hint with one that says so. Neither ever names a session, a token or
//! an argument: only tool addresses.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::runs::{CallState, JournalEntry};
use crate::sandbox::{
    CallEnd, CallFailure, ErrorCode, ExecuteEnvelope, ExecuteRequest, Recovery, Status,
};
use crate::sources::SourceError;

/// How many addresses the hint names before it only counts the rest.
const NAMED_IN_HINT: usize = 5;

/// The key of the hub's own note in a journaled result (see [`mark`]).
const JOURNAL_NOTE: &str = "_capabilities";

/// How far one call got towards its upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Refused on this side: nothing was sent.
    NotSent,
    /// Sent, and an answer came back (a result or a JSON-RPC error).
    Answered,
    /// Sent, and no answer came: the upstream may or may not have acted on it.
    Lost,
}

/// Classifies what `Sources::call_tool` returned.
pub fn delivery(result: &Result<Value, SourceError>) -> Delivery {
    // No wildcard: a new kind of source error must decide whether anything was sent.
    match result {
        Ok(_) | Err(SourceError::Upstream { .. }) => Delivery::Answered,
        // The request was written (or being written) when time ran out or the connection broke.
        Err(SourceError::Timeout { .. } | SourceError::Transport { .. }) => Delivery::Lost,
        // Each of these is decided before a request is written.
        Err(
            SourceError::UnknownSource { .. }
            | SourceError::UnknownConnection { .. }
            | SourceError::Disabled { .. }
            | SourceError::Unavailable { .. }
            | SourceError::Changed { .. }
            | SourceError::ShutDown,
        ) => Delivery::NotSent,
        // A 401 is the server refusing the request before it acts on it.
        Err(SourceError::NeedsSignIn { .. }) => Delivery::NotSent,
    }
}

/// How far a failed call got (`delivery`), on its `failure`: its outcome in the envelope,
/// whether the script may send it again, and, for a `mutating` call that was sent and never
/// answered (it may have acted), the advice to check before sending it again. The same for a
/// call as it fails and as a resumed run replays it from the journal.
pub fn settle(failure: &mut CallFailure, delivery: Delivery, mutating: bool) {
    let unavailable = failure.code == ErrorCode::UpstreamUnavailable;
    (failure.retryable, failure.outcome) = match delivery {
        Delivery::NotSent => (unavailable, Some(CallEnd::NotSent)),
        Delivery::Answered => (unavailable, Some(CallEnd::Failed)),
        Delivery::Lost => (unavailable && !mutating, Some(CallEnd::Unknown)),
    };
    if delivery == Delivery::Lost && mutating {
        failure.hint = Some(
            "The request was sent and no answer came, so it may have taken effect: check with a read before sending it again.".into(),
        );
    }
}

/// Notes in a call's journaled `result` (a `CallToolResult` or the bridge's `{"error": ...}`)
/// how far the call got and whether its tool may write, as
/// `"_capabilities": {"delivery": "not_sent", "mutating": true}`, so that a resumed run counts
/// only what may have acted. Whatever an upstream put under that key is overwritten. A result
/// that is not an object stays as it is (and counts as a write, see [`Dispatched::earlier`]).
pub fn mark(result: &mut Value, delivery: Delivery, mutating: bool) {
    if let Value::Object(map) = result {
        map.insert(
            JOURNAL_NOTE.to_string(),
            json!({ "delivery": delivery, "mutating": mutating }),
        );
    }
}

/// A journaled result without the hub's note: what the upstream (or the bridge) answered.
pub fn unmarked(result: &Value) -> Value {
    let mut result = result.clone();
    if let Value::Object(map) = &mut result {
        map.remove(JOURNAL_NOTE);
    }
    result
}

/// How far a journaled call got and whether its tool may write, from the note [`mark`] left. A
/// call journaled as dispatched and never answered (its attempt was interrupted) was lost; one
/// journaled without a note (by an older hub) may have written: answered, mutating.
pub(super) fn noted(entry: &JournalEntry) -> (Delivery, bool) {
    if entry.state == CallState::Dispatched {
        return (Delivery::Lost, entry.mutating);
    }
    let note = entry.result.get(JOURNAL_NOTE);
    let delivery = note
        .and_then(|n| n.get("delivery"))
        .and_then(|d| Delivery::deserialize(d).ok())
        .unwrap_or(Delivery::Answered);
    let mutating = note
        .and_then(|n| n.get("mutating"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    (delivery, mutating)
}

/// The calls one attempt of a run sent upstream, shared between the bridge's call futures and
/// the executor that reads it once the run is over.
#[derive(Clone, Default)]
pub struct Dispatches(Arc<Mutex<Attempt>>);

#[derive(Default)]
struct Attempt {
    calls: BTreeMap<u64, Dispatch>,
    /// The run is over: no call of it may start any more. Set under the same lock `start`
    /// takes, so a call either started before the end (and may have gone out) or never will.
    closed: bool,
}

struct Dispatch {
    address: String,
    /// Not marked read-only by its upstream.
    mutating: bool,
    /// `None` while the call is in flight. A call still in flight when the run ended was
    /// dropped with it (timeout, cancel, a fatal limit), so it stays lost.
    delivery: Option<Delivery>,
}

impl Dispatches {
    /// Call `seq` is about to be journaled and sent to `address`; false (and nothing recorded)
    /// once the run is over, when it must not go out.
    #[must_use]
    pub fn start(&self, seq: u64, address: &str, mutating: bool) -> bool {
        let mut attempt = self.lock();
        if attempt.closed {
            return false;
        }
        attempt.calls.insert(
            seq,
            Dispatch {
                address: address.to_string(),
                mutating,
                delivery: None,
            },
        );
        true
    }

    /// Call `seq` came back, or was never sent after all.
    pub fn settle(&self, seq: u64, delivery: Delivery) {
        if let Some(dispatch) = self.lock().calls.get_mut(&seq) {
            dispatch.delivery = Some(delivery);
        }
    }

    /// Ends the attempt: no call starts from now on. Returns the calls that did start.
    pub fn close(&self) -> BTreeSet<u64> {
        let mut attempt = self.lock();
        attempt.closed = true;
        attempt.calls.keys().copied().collect()
    }

    /// What this attempt sent, on top of what earlier attempts of the same run journaled
    /// ([`Dispatched::earlier`]); a call this attempt sent again (a read an interrupted attempt
    /// left unanswered) counts as this attempt saw it.
    pub fn summary<'a>(&self, earlier: impl IntoIterator<Item = &'a JournalEntry>) -> Dispatched {
        let attempt = self.lock();
        let sent = &attempt.calls;
        let mut dispatched =
            Dispatched::earlier(earlier.into_iter().filter(|e| !sent.contains_key(&e.seq)));
        for dispatch in sent.values() {
            let delivery = dispatch.delivery.unwrap_or(Delivery::Lost);
            dispatched.add(&dispatch.address, delivery, dispatch.mutating);
            if dispatch.delivery.is_none() {
                push_once(&mut dispatched.cut_off, &dispatch.address);
            }
        }
        dispatched
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Attempt> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Lists as `not_sent` each call the sandbox still shows in flight but that never left the
/// hub: the run ended (the script returned without awaiting it, a limit, a cancel) while the
/// call was still being checked or waited for its connection. `started` are the calls this
/// attempt began to send ([`Dispatches::close`]); `earlier` the journal of the attempts before,
/// whose calls a replay may still show in flight. A completed run says which calls its
/// script left behind unsent, since its result may read as if they ran (a paused run sends
/// them when it resumes; a failed one's error says why it stopped).
pub fn unsent<'a>(
    envelope: &mut ExecuteEnvelope,
    started: &BTreeSet<u64>,
    earlier: impl IntoIterator<Item = &'a JournalEntry>,
) {
    let journaled: BTreeSet<u64> = earlier.into_iter().map(|e| e.seq).collect();
    let mut left: Vec<String> = Vec::new();
    let mut count = 0;
    for call in &mut envelope.calls {
        if call.outcome == Some(CallEnd::Unknown)
            && let Some(seq) = call.seq
            && !started.contains(&seq)
            && !journaled.contains(&seq)
        {
            call.outcome = Some(CallEnd::NotSent);
            count += 1;
            push_once(&mut left, &call.address);
        }
    }
    if !left.is_empty() && envelope.status == Status::Completed {
        let calls = if count == 1 { "call" } else { "calls" };
        envelope.notices.push(format!(
            "{count} {calls} to {} never went out: the script ended first. Await every call before returning.",
            named(&left)
        ));
    }
}

/// What a run sent upstream, as far as recovery cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dispatched {
    /// Sent and never answered, each address once, in call order.
    pub lost: Vec<String>,
    /// Of those, the ones still out when the run ended (not awaited, or the run stopped), as
    /// opposed to ones whose connection failed while the script awaited them.
    pub cut_off: Vec<String>,
    /// Answered, and may have changed something: tools not marked read-only (and, from an
    /// earlier attempt of the run, every answered call journaled without the hub's note).
    pub writes: Vec<String>,
    /// Whether any call reached an upstream, read-only ones included.
    pub any: bool,
}

impl Dispatched {
    /// Only what earlier attempts of the run sent, from its journal. A call that never left the
    /// hub (its source was down, say) counts for nothing, as in the attempt that made it.
    pub fn earlier<'a>(journal: impl IntoIterator<Item = &'a JournalEntry>) -> Dispatched {
        let mut dispatched = Dispatched::default();
        for entry in journal {
            let (delivery, mutating) = noted(entry);
            dispatched.add(&entry.address, delivery, mutating);
        }
        dispatched
    }

    fn add(&mut self, address: &str, delivery: Delivery, mutating: bool) {
        match delivery {
            Delivery::NotSent => {}
            Delivery::Lost => {
                self.any = true;
                push_once(&mut self.lost, address);
            }
            Delivery::Answered => {
                self.any = true;
                if mutating {
                    push_once(&mut self.writes, address);
                }
            }
        }
    }
}

fn push_once(list: &mut Vec<String>, address: &str) {
    if !list.iter().any(|a| a == address) {
        list.push(address.to_string());
    }
}

/// The recovery contract of a run that failed with `code` after sending `dispatched`.
pub fn recovery(code: ErrorCode, dispatched: &Dispatched) -> Option<Recovery> {
    if !dispatched.lost.is_empty() || !dispatched.writes.is_empty() {
        return Some(Recovery::OUTCOME_UNKNOWN);
    }
    // Only read-only calls ran, all answered: replaying is harmless, but whether the same
    // request would now succeed depends on the error, which the code already says.
    if dispatched.any {
        return None;
    }
    // No wildcard: a new error code must decide what it means for a resend.
    match code {
        ErrorCode::SyntaxError
        | ErrorCode::RuntimeError
        | ErrorCode::InvalidArguments
        | ErrorCode::UnknownTool
        | ErrorCode::CodeTooLarge
        | ErrorCode::CallLimit
        | ErrorCode::TimerLimit
        | ErrorCode::MemoryLimit
        | ErrorCode::StackOverflow
        | ErrorCode::Timeout
        | ErrorCode::InvalidResult
        | ErrorCode::ResultTooLarge
        | ErrorCode::PolicyDenied => Some(Recovery::CORRECT_ARGUMENTS),
        // Nothing is wrong with the script: a source was down, or nobody was there to approve.
        ErrorCode::UpstreamUnavailable | ErrorCode::ApprovalExpired => Some(Recovery::UNCHANGED),
        // Answers that need a dispatch (tool and upstream errors, a divergent replay), the
        // client's own cancel, and the hub's bugs say nothing about the request.
        ErrorCode::ToolError
        | ErrorCode::UpstreamError
        | ErrorCode::ReplayDivergence
        | ErrorCode::Cancelled
        | ErrorCode::Internal
        | ErrorCode::Interrupted
        | ErrorCode::RunInProgress => None,
        ErrorCode::RowTooLarge => Some(Recovery::ADJUST_PROJECTION),
        ErrorCode::ResultUnavailable => Some(Recovery::RESULT_UNAVAILABLE),
    }
}

/// Sets `error.recovery` of a failed run and, when it must not be replayed, makes the hint say
/// which calls may have acted and not to run the script again. That replaces the hint the error
/// came with: advice such as "retry later" or "run it again" would contradict it.
pub fn apply(envelope: &mut ExecuteEnvelope, dispatched: &Dispatched) {
    if envelope.status != Status::Failed {
        // A call the script did not await is cut off when it ends: its envelope must not read
        // as if nothing was left undone. (One that failed while awaited told the script so.)
        if !dispatched.cut_off.is_empty() {
            envelope.notices.push(format!(
                "{} was still out when the script ended, so it was cut off without an answer: it may have taken effect upstream anyway. Await every call before returning.",
                named(&dispatched.cut_off)
            ));
        }
        return;
    }
    let Some(error) = envelope.error.as_mut() else {
        return;
    };
    error.recovery = recovery(error.code, dispatched);
    if error
        .recovery
        .is_some_and(|r| r.execute_request == ExecuteRequest::DoNotReplay)
    {
        error.hint = Some(do_not_replay_hint(dispatched));
    }
}

fn do_not_replay_hint(dispatched: &Dispatched) -> String {
    let mut text = String::new();
    if !dispatched.lost.is_empty() {
        text.push_str(&format!(
            "No answer came from {}, which may have taken effect anyway. ",
            named(&dispatched.lost)
        ));
    }
    if !dispatched.writes.is_empty() {
        text.push_str(&format!(
            "{} reached the upstream and may have changed data. ",
            named(&dispatched.writes)
        ));
    }
    text.push_str(
        "Do not run this script again: check the upstream's current state first, then do only what is still missing.",
    );
    text
}

/// "`a.b`, `c.d` and 3 more".
fn named(addresses: &[String]) -> String {
    let shown: Vec<String> = addresses
        .iter()
        .take(NAMED_IN_HINT)
        .map(|a| format!("`{a}`"))
        .collect();
    let mut text = shown.join(", ");
    if addresses.len() > NAMED_IN_HINT {
        text.push_str(&format!(" and {} more", addresses.len() - NAMED_IN_HINT));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sandbox::{CallSummary, EnvelopeError, ProviderExecution};

    /// A journal entry as the bridge writes it, `note`d unless `None`.
    fn journaled(address: &str, result: Value, note: Option<(Delivery, bool)>) -> JournalEntry {
        let mut result = result;
        if let Some((delivery, mutating)) = note {
            mark(&mut result, delivery, mutating);
        }
        JournalEntry {
            seq: 0,
            address: address.to_string(),
            connection: None,
            call_digest: String::new(),
            ok: result.get("error").is_none(),
            result,
            ms: 1,
            state: CallState::Answered,
            mutating: true,
        }
    }

    /// An earlier attempt's answered write, journaled without a note (as an older hub did).
    fn earlier_write(address: &str) -> Dispatched {
        Dispatched::earlier([&journaled(address, json!({ "content": [] }), None)])
    }

    fn source_errors() -> Vec<(SourceError, Delivery)> {
        let name = || "s".to_string();
        let request = || "tools/call `t`".to_string();
        vec![
            (
                SourceError::UnknownSource {
                    name: name(),
                    known: "a".into(),
                },
                Delivery::NotSent,
            ),
            (
                SourceError::UnknownConnection {
                    name: name(),
                    connection: "c".into(),
                    known: "d".into(),
                },
                Delivery::NotSent,
            ),
            (SourceError::Disabled { name: name() }, Delivery::NotSent),
            (
                SourceError::Unavailable {
                    name: name(),
                    reason: "down".into(),
                },
                Delivery::NotSent,
            ),
            (SourceError::ShutDown, Delivery::NotSent),
            (
                SourceError::Timeout {
                    name: name(),
                    request: request(),
                    timeout: Duration::from_secs(1),
                },
                Delivery::Lost,
            ),
            (
                SourceError::Transport {
                    name: name(),
                    request: request(),
                    message: "closed".into(),
                },
                Delivery::Lost,
            ),
            (
                SourceError::Upstream {
                    name: name(),
                    request: request(),
                    message: "bad".into(),
                },
                Delivery::Answered,
            ),
        ]
    }

    #[test]
    fn every_source_outcome_says_whether_the_call_was_sent() {
        assert_eq!(delivery(&Ok(Value::Null)), Delivery::Answered);
        for (error, expected) in source_errors() {
            let text = error.to_string();
            assert_eq!(delivery(&Err(error)), expected, "{text}");
        }
    }

    #[test]
    fn the_record_counts_unsettled_calls_as_lost_and_read_only_answers_as_harmless() {
        let dispatches = Dispatches::default();
        assert!(dispatches.start(0, "docs.search", true));
        dispatches.settle(0, Delivery::NotSent);
        assert_eq!(dispatches.summary([]), Dispatched::default());

        assert!(dispatches.start(1, "docs.read", false));
        dispatches.settle(1, Delivery::Answered);
        let read_only = dispatches.summary([]);
        assert!(read_only.any && read_only.lost.is_empty() && read_only.writes.is_empty());

        assert!(dispatches.start(2, "docs.write", true));
        dispatches.settle(2, Delivery::Answered);
        assert!(dispatches.start(3, "docs.slow", false));
        dispatches.settle(3, Delivery::Lost);
        // Dropped mid-flight when the run ended: never settled.
        assert!(dispatches.start(4, "docs.hung", false));
        assert!(dispatches.start(5, "docs.slow", false));
        // Earlier attempts' calls: a write, and the read an interrupted attempt left without an
        // answer, which this attempt sent again (call 1) and got answered.
        let mut write = journaled("counter.write", json!({ "content": [] }), None);
        write.seq = 10;
        let mut resent = journaled("docs.read", json!(null), None);
        resent.seq = 1;
        resent.state = CallState::Dispatched;
        resent.mutating = false;
        let summary = dispatches.summary([&write, &resent]);
        assert_eq!(summary.lost, ["docs.slow", "docs.hung"]);
        assert_eq!(summary.writes, ["counter.write", "docs.write"]);
        assert!(summary.any);
    }

    #[test]
    fn a_resumed_run_counts_only_the_journaled_calls_that_were_sent_and_may_write() {
        let unavailable = json!({ "error": { "code": "upstream_unavailable", "message": "down" } });
        let answer = json!({ "content": [{ "type": "text", "text": "done" }] });
        let not_sent = [
            journaled(
                "down.write",
                unavailable.clone(),
                Some((Delivery::NotSent, true)),
            ),
            journaled(
                "down.read",
                unavailable.clone(),
                Some((Delivery::NotSent, false)),
            ),
        ];
        assert_eq!(Dispatched::earlier(&not_sent), Dispatched::default());
        for code in ErrorCode::ALL {
            assert_eq!(
                recovery(code, &Dispatched::earlier(&not_sent)),
                recovery(code, &Dispatched::default()),
                "{code}: as if nothing had been called"
            );
        }

        let read = journaled(
            "docs.read",
            answer.clone(),
            Some((Delivery::Answered, false)),
        );
        let read_only = Dispatched::earlier([&read]);
        assert!(read_only.any && read_only.writes.is_empty() && read_only.lost.is_empty());

        let journal = [
            journaled(
                "docs.slow",
                unavailable.clone(),
                Some((Delivery::Lost, false)),
            ),
            journaled(
                "docs.write",
                answer.clone(),
                Some((Delivery::Answered, true)),
            ),
            // No note: an older hub's entry, or a result that is not an object.
            journaled("old.call", unavailable, None),
            journaled("odd.call", json!("text"), Some((Delivery::Answered, false))),
        ];
        let sent = Dispatched::earlier(&journal);
        assert_eq!(sent.lost, ["docs.slow"]);
        assert_eq!(sent.writes, ["docs.write", "old.call", "odd.call"]);

        // An upstream cannot pass its write off as read-only, and replay strips the note.
        let mut forged = json!({ "content": [], "_capabilities": { "delivery": "not_sent", "mutating": false } });
        mark(&mut forged, Delivery::Answered, true);
        let entry = journaled("evil.write", forged, None);
        assert_eq!(Dispatched::earlier([&entry]).writes, ["evil.write"]);
        assert_eq!(unmarked(&entry.result), json!({ "content": [] }));
    }

    #[test]
    fn the_recovery_of_every_code_with_and_without_dispatches() {
        let nothing = Dispatched::default();
        let read_only = Dispatched {
            any: true,
            ..Dispatched::default()
        };
        let lost = Dispatched {
            lost: vec!["docs.read".into()],
            any: true,
            ..Dispatched::default()
        };
        let wrote = Dispatched {
            writes: vec!["counter.write".into()],
            any: true,
            ..Dispatched::default()
        };
        let earlier = earlier_write("docs.read");
        for code in ErrorCode::ALL {
            for sent in [&lost, &wrote, &earlier] {
                assert_eq!(
                    recovery(code, sent),
                    Some(Recovery::OUTCOME_UNKNOWN),
                    "{code} after {sent:?}"
                );
            }
            assert_eq!(recovery(code, &read_only), None, "{code}");
            let expected = match code {
                ErrorCode::UpstreamUnavailable | ErrorCode::ApprovalExpired => {
                    Some(Recovery::UNCHANGED)
                }
                ErrorCode::ToolError
                | ErrorCode::UpstreamError
                | ErrorCode::ReplayDivergence
                | ErrorCode::Cancelled
                | ErrorCode::Internal
                | ErrorCode::Interrupted
                | ErrorCode::RunInProgress => None,
                ErrorCode::RowTooLarge => Some(Recovery::ADJUST_PROJECTION),
                ErrorCode::ResultUnavailable => Some(Recovery::RESULT_UNAVAILABLE),
                _ => Some(Recovery::CORRECT_ARGUMENTS),
            };
            assert_eq!(recovery(code, &nothing), expected, "{code}");
        }
        assert_eq!(
            recovery(ErrorCode::SyntaxError, &nothing).map(|r| r.provider_execution),
            Some(ProviderExecution::NotStarted)
        );
    }

    fn failed(code: ErrorCode) -> ExecuteEnvelope {
        ExecuteEnvelope::rejected("run_x", EnvelopeError::new(code, "boom"), Vec::new())
    }

    #[test]
    fn only_a_call_still_out_at_the_end_is_noticed_as_cut_off() {
        let sent = Dispatches::default();
        // Awaited, and its connection failed: the script was told.
        assert!(sent.start(0, "api.trunc", false));
        sent.settle(0, Delivery::Lost);
        // Never awaited: still out when the script returned.
        assert!(sent.start(1, "api.write", true));
        let dispatched = sent.summary([]);
        assert_eq!(dispatched.lost, ["api.trunc", "api.write"]);
        assert_eq!(dispatched.cut_off, ["api.write"]);
        let mut envelope = ExecuteEnvelope::new("run_x", Status::Completed, Vec::new());
        apply(&mut envelope, &dispatched);
        assert_eq!(envelope.notices.len(), 1, "{:?}", envelope.notices);
        assert!(
            envelope.notices[0].starts_with("`api.write` was still out"),
            "{:?}",
            envelope.notices
        );
        // Nothing cut off, nothing to notice.
        let answered = Dispatches::default();
        assert!(answered.start(0, "api.trunc", false));
        answered.settle(0, Delivery::Lost);
        let mut envelope = ExecuteEnvelope::new("run_y", Status::Completed, Vec::new());
        apply(&mut envelope, &answered.summary([]));
        assert!(envelope.notices.is_empty(), "{:?}", envelope.notices);
    }

    #[test]
    fn a_call_the_run_ended_before_it_started_out_is_listed_not_sent() {
        let dispatches = Dispatches::default();
        assert!(dispatches.start(1, "api.write", true));
        let started = dispatches.close();
        // Closed: a call still being checked when the run ended can no longer go out.
        assert!(!dispatches.start(2, "api.late", true));
        assert_eq!(started, BTreeSet::from([1]));
        let in_flight = |address: &str, seq: Option<u64>| CallSummary {
            address: address.into(),
            ok: false,
            ms: 0,
            outcome: Some(CallEnd::Unknown),
            seq,
        };
        // 0: sent by an earlier attempt, replayed; 1: sent by this one; 2: never sent;
        // 3: listed without a number (never handed to the hub); 4 ran to its end.
        let calls = vec![
            in_flight("api.replayed", Some(0)),
            in_flight("api.write", Some(1)),
            in_flight("api.late", Some(2)),
            in_flight("api.unnumbered", None),
            CallSummary {
                outcome: Some(CallEnd::Done),
                ..in_flight("api.done", Some(4))
            },
        ];
        let earlier = journaled("api.replayed", json!({}), None);
        let mut envelope = ExecuteEnvelope::new("run_x", Status::Completed, Vec::new());
        envelope.calls = calls.clone();
        unsent(&mut envelope, &started, [&earlier]);
        let outcomes: Vec<_> = envelope.calls.iter().map(|c| c.outcome).collect();
        assert_eq!(
            outcomes,
            [
                Some(CallEnd::Unknown),
                Some(CallEnd::Unknown),
                Some(CallEnd::NotSent),
                Some(CallEnd::Unknown),
                Some(CallEnd::Done),
            ]
        );
        assert_eq!(envelope.notices.len(), 1, "{:?}", envelope.notices);
        assert!(
            envelope.notices[0].starts_with("1 call to `api.late` never went out"),
            "{:?}",
            envelope.notices
        );
        // A failed run's error says why it stopped, and a paused one sends them on resume; their
        // calls are corrected all the same.
        let mut failed = failed(ErrorCode::Timeout);
        failed.calls = calls;
        unsent(&mut failed, &started, [&earlier]);
        assert_eq!(failed.calls[2].outcome, Some(CallEnd::NotSent));
        assert!(failed.notices.is_empty(), "{:?}", failed.notices);
        // The closed attempt's summary ignores the refused start.
        assert_eq!(dispatches.summary([]).lost, ["api.write"]);
    }

    #[test]
    fn the_hint_names_the_calls_that_may_have_acted_and_nothing_else() {
        let mut envelope = failed(ErrorCode::RuntimeError);
        let dispatched = Dispatched {
            lost: vec!["docs.slow".into()],
            writes: (0..7).map(|i| format!("counter.write{i}")).collect(),
            any: true,
            ..Dispatched::default()
        };
        apply(&mut envelope, &dispatched);
        let error = envelope.error.unwrap_or_else(|| panic!("an error"));
        assert_eq!(error.recovery, Some(Recovery::OUTCOME_UNKNOWN));
        let hint = error.hint.unwrap_or_default();
        assert!(
            hint.starts_with("No answer came from `docs.slow`"),
            "the code's own advice goes: {hint}"
        );
        assert!(
            hint.contains("`counter.write4` and 2 more reached the upstream"),
            "{hint}"
        );
        assert!(!hint.contains("counter.write5"), "{hint}");
        assert!(hint.ends_with("Do not run this script again: check the upstream's current state first, then do only what is still missing."));

        // A timed-out call: "retry later" would contradict "do not run this script again".
        let mut envelope = failed(ErrorCode::UpstreamUnavailable);
        let lost = Dispatched {
            lost: vec!["docs.slow".into()],
            any: true,
            ..Dispatched::default()
        };
        apply(&mut envelope, &lost);
        let error = envelope.error.unwrap_or_else(|| panic!("an error"));
        assert_eq!(
            error.hint.as_deref(),
            Some(
                "No answer came from `docs.slow`, which may have taken effect anyway. Do not run this script again: check the upstream's current state first, then do only what is still missing."
            )
        );

        let mut envelope = failed(ErrorCode::SyntaxError);
        apply(&mut envelope, &Dispatched::default());
        let error = envelope.error.unwrap_or_else(|| panic!("an error"));
        assert_eq!(error.recovery, Some(Recovery::CORRECT_ARGUMENTS));
        assert_eq!(error.hint.as_deref(), Some(ErrorCode::SyntaxError.hint()));
    }

    #[test]
    fn only_failed_runs_get_a_recovery() {
        let wrote = earlier_write("counter.write");
        for status in [
            Status::Cancelled,
            Status::Completed,
            Status::AwaitingApproval,
        ] {
            let mut envelope = failed(ErrorCode::Cancelled);
            envelope.status = status;
            apply(&mut envelope, &wrote);
            let error = envelope.error.unwrap_or_else(|| panic!("an error"));
            assert_eq!(error.recovery, None, "{status:?}");
            assert_eq!(error.hint.as_deref(), Some(ErrorCode::Cancelled.hint()));
        }
    }
}
