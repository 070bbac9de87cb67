//! The seam between the store's handles and the database that keeps the records: one trait per
//! concern, and [`Backend`] for all of them. A backend keeps sealed values as they come (it never
//! sees a key) and does each compare-and-set — a claim, a dispatch, a decision — as one atomic
//! step in its own database, so the guarantees hold across every process that shares it. Its
//! methods block; the handles run them off the async threads.
//!
//! SQLite (`sqlite`) is the embedded backend; PostgreSQL (`postgres`) the shared one.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::error::{DecideError, DispatchError, StoreError};
use super::records::{
    Approval, AuditLine, CallRow, ClaimRecord, Decision, Dispatch, Grant, JournalEntry, NewRun,
    PendingCall, Recorded, Retention, RunRecord, RunSummary, Seen, SeenVersion, SourceStatusRecord,
    StoredResult, TokenRecord, ToolVersion, Unconfirmed, VersionState,
};
use super::seal::OpenError;
use super::vault::{Place, Sealed};

/// A run as read, its script and envelope still sealed.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// `code` and `envelope` left empty.
    pub record: RunRecord,
    pub code: Sealed,
    pub envelope: Option<Sealed>,
}

/// A journal entry as read, its result still sealed.
#[derive(Debug, Clone)]
pub struct StoredCall {
    /// `result` left `null`.
    pub entry: JournalEntry,
    pub result: Sealed,
}

/// A waiting call's arguments, sealed for the store: the preview, and all of them when the
/// preview cut them.
pub struct SealedArguments {
    pub preview: Sealed,
    pub whole: Option<Sealed>,
}

/// An approval as read, its preview (and whole call) still sealed.
#[derive(Debug, Clone)]
pub struct StoredApproval {
    /// `preview` and `whole` left empty.
    pub approval: Approval,
    pub preview: Sealed,
    pub whole: Option<Sealed>,
}

/// Runs, their claims and how they ended.
pub trait RunRecords {
    /// The time by the store's clock (Unix milliseconds), which every claim's and turn's lease
    /// is written and read by: one clock for all the processes that share the store, wherever
    /// each runs, so a replica whose own clock runs ahead never takes a live run for abandoned.
    fn clock_ms(&self) -> Result<u64, StoreError>;
    /// Records a new run, claimed by `owner` until `lease_until_ms`.
    fn insert_run(
        &self,
        run: &NewRun,
        code: &Sealed,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<(), StoreError>;
    fn run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError>;
    fn claim_record(&self, run_id: &str) -> Result<Option<ClaimRecord>, StoreError>;
    /// Claims the run for `owner` if it is still `status`; false when it is not.
    fn claim(
        &self,
        run_id: &str,
        status: &str,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Moves the claim of a running run to `owner` if it is still exactly as `seen`.
    fn take_over(
        &self,
        run_id: &str,
        seen: &ClaimRecord,
        owner: &str,
        lease_until_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Takes the turn `key` (identical direct calls take turns; see `crate::execute::twin`) for
    /// `owner` until `until_ms`, unless another owner than `gone` holds it past `now_ms`; true
    /// when `owner` holds it now. Taking it again renews it.
    fn take_turn(
        &self,
        key: &str,
        owner: &str,
        gone: Option<&str>,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Who holds the turn `key`, if anyone.
    fn turn_holder(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// Gives the turn `key` up if `owner` still holds it.
    fn end_turn(&self, key: &str, owner: &str) -> Result<(), StoreError>;
    /// Extends `owner`'s lease; false when the run is no longer its.
    fn renew_claim(
        &self,
        run_id: &str,
        owner: &str,
        lease_until_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Records how `owner`'s attempt ended and gives up the claim; false (nothing written) when
    /// the run is no longer its.
    fn finish_run(
        &self,
        run_id: &str,
        owner: &str,
        status: &str,
        envelope: &Sealed,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// The most recent runs, newest first, each with its claim (to tell interrupted runs).
    fn run_summaries(&self, limit: usize) -> Result<Vec<(RunSummary, ClaimRecord)>, StoreError>;
    /// The ids of at most `limit` runs that start with `prefix`, newest first.
    fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError>;
    /// Deletes every run with its journal, approvals and audit, the used elicitation states
    /// and the record of the runs' key; returns how many runs there were.
    fn clear_runs(&self) -> Result<usize, StoreError>;
}

/// The journal of each run's calls.
pub trait JournalRecords {
    /// Journals a call as dispatched, using up its approval: all or nothing, and only while
    /// `owner` holds the run's claim.
    fn record_dispatch(
        &self,
        run_id: &str,
        owner: &str,
        call: &Dispatch,
        placeholder: &Sealed,
        now_ms: u64,
    ) -> Result<(), DispatchError>;
    /// Records the answer to a dispatched call, only while `owner` holds the claim.
    #[allow(clippy::too_many_arguments)]
    fn record_answer(
        &self,
        run_id: &str,
        owner: &str,
        seq: u64,
        result: &Sealed,
        ok: bool,
        ms: u64,
        now_ms: u64,
    ) -> Result<(), DispatchError>;
    /// Takes back a dispatched call that never reached its upstream (refused for want of a
    /// sign-in before anything acted on it), only while `owner` holds the claim: the call is
    /// as if never journaled, and the approval it used up is usable again, so a resume sends
    /// it once the person has signed in.
    fn record_withdrawal(&self, run_id: &str, owner: &str, seq: u64) -> Result<(), DispatchError>;
    fn journal(&self, run_id: &str) -> Result<Vec<StoredCall>, StoreError>;
    /// The calls of a run without their results.
    fn call_rows(&self, run_id: &str) -> Result<Vec<CallRow>, StoreError>;
}

/// What a decision check may do before the decision is committed (it writes an "always" rule):
/// it gets the calls about to be decided and the profile the run was made under.
pub type BeforeCommit<'a> =
    Box<dyn FnOnce(&[Approval], Option<&str>) -> Result<(), DecideError> + Send + 'a>;

/// Pending calls, the decisions on them, single-use elicitation states and the audit trail.
pub trait ApprovalRecords {
    /// Records that a call waits for a person (see `Approvals::record_pending`), only while
    /// `owner` holds the run's claim.
    fn record_pending(
        &self,
        run_id: &str,
        owner: &str,
        call: &PendingCall,
        arguments: &SealedArguments,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<Recorded, DispatchError>;
    fn approvals(&self, run_id: &str) -> Result<Vec<StoredApproval>, StoreError>;
    fn approval(&self, run_id: &str, seq: u64) -> Result<Option<StoredApproval>, StoreError>;
    /// Every approval still waiting at `now_ms`, oldest first.
    fn pending_approvals(&self, now_ms: u64) -> Result<Vec<StoredApproval>, StoreError>;
    /// Checks and records a decision, all or nothing (see `Approvals::decide`).
    fn record_decision(
        &self,
        run_id: &str,
        seen: &[Seen],
        decision: Decision,
        channel: &str,
        now_ms: u64,
        before_commit: BeforeCommit<'_>,
    ) -> Result<Vec<Approval>, DecideError>;
    /// Tools allowed for the rest of the run whose approving call was sent, each with the
    /// version of its definition the person saw.
    fn run_grants(&self, run_id: &str) -> Result<BTreeSet<Grant>, StoreError>;
    /// Marks a single-use value as used; false when it already was.
    fn consume_once(&self, nonce: &str, now_ms: u64) -> Result<bool, StoreError>;
    fn audit(
        &self,
        run_id: Option<&str>,
        kind: &str,
        detail: &Value,
        now_ms: u64,
    ) -> Result<(), StoreError>;
    fn audit_log(&self, run_id: &str) -> Result<Vec<AuditLine>, StoreError>;
}

/// Bearer tokens, kept as the SHA-256 of their secrets.
pub trait BearerTokenRecords {
    /// Stores a token unless an active one has the name (a revoked one's name is reused);
    /// false when one does.
    fn insert_token(&self, record: &TokenRecord, hash: &str) -> Result<bool, StoreError>;
    fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError>;
    /// Marks a token revoked; false when there is no active one of that name.
    fn revoke_token(&self, name: &str, now_ms: u64) -> Result<bool, StoreError>;
    fn token_by_hash(&self, hash: &str) -> Result<Option<TokenRecord>, StoreError>;
    fn token_by_name(&self, name: &str) -> Result<Option<TokenRecord>, StoreError>;
}

/// The last status each source reported.
pub trait SourceStatusRecords {
    fn record_source_status(&self, record: &SourceStatusRecord) -> Result<(), StoreError>;
    fn source_statuses(&self) -> Result<Vec<SourceStatusRecord>, StoreError>;
}

/// Seals a value an older version stored in the clear, for its place.
pub type Sealer<'a> = dyn Fn(Place<'_>, &str) -> Result<Sealed, OpenError> + 'a;

/// Results too large to send, kept a few minutes for `hub.read`, per scope.
pub trait StoredResultRecords {
    /// Keeps `value` as `stored.result_ref` and, in the same step, drops every expired result
    /// and then the scope's oldest until it holds at most `retention`'s count and bytes (the
    /// new one included). Returns how many of the scope's results it dropped.
    fn keep_result(
        &self,
        stored: &StoredResult,
        value: &Sealed,
        retention: &Retention,
        now_ms: u64,
    ) -> Result<u64, StoreError>;
    /// The sealed value of `result_ref` if `scope` made it and it has not expired at `now_ms`.
    fn stored_result(
        &self,
        scope: &str,
        result_ref: &str,
        now_ms: u64,
    ) -> Result<Option<Sealed>, StoreError>;
}

/// The versions of every tool's definition and which a person confirmed.
pub trait ToolVersionRecords {
    /// Records each version not seen before (the first version of a tool confirmed as
    /// `first seen`) and says, for each, whether it is confirmed, in one step.
    fn observe_versions(
        &self,
        seen: &[SeenVersion],
        now_ms: u64,
    ) -> Result<Vec<VersionState>, StoreError>;
    /// Marks `version` of `address` confirmed by `by`; false when that version was never seen.
    fn confirm_version(
        &self,
        address: &str,
        version: &str,
        by: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError>;
    /// Every version seen and not confirmed.
    fn unconfirmed_versions(&self) -> Result<Vec<Unconfirmed>, StoreError>;
    /// The version of `address` confirmed last, if any; else the one of `identity` confirmed
    /// last under any address.
    fn last_confirmed_version(
        &self,
        address: &str,
        identity: Option<&str>,
    ) -> Result<Option<ToolVersion>, StoreError>;
}

/// Where the state key is kept and its check value; never the key.
pub trait KeyRecords {
    /// `(where the key is kept, its check value)`, once a first run recorded them.
    fn key_record(&self) -> Result<Option<(String, Vec<u8>)>, StoreError>;
    /// Records the key's place and check value unless another process did first; returns what
    /// is recorded now.
    fn record_key(&self, source: &str, check: &[u8]) -> Result<(String, Vec<u8>), StoreError>;
    /// Seals, once per store, what a version before encryption at rest stored in the clear.
    fn seal_clear_values(&self, sealer: &Sealer<'_>) -> Result<(), StoreError>;
}

/// A database that keeps every record of the store.
pub trait Backend:
    RunRecords
    + JournalRecords
    + ApprovalRecords
    + BearerTokenRecords
    + SourceStatusRecords
    + KeyRecords
    + StoredResultRecords
    + ToolVersionRecords
    + Send
    + Sync
{
    /// Where the records live, for messages.
    fn location(&self) -> &Path;

    /// Whether other hubs may share these records (a server, not a file of this machine).
    fn is_shared(&self) -> bool;
}
