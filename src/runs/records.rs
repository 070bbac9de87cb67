//! The records the store keeps, as the rest of the code sees them: plain values, opened (never
//! ciphertext), the same whichever database keeps them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::model::permits::{Narrowing, Permits};

/// How long a pending approval waits for a person.
pub const APPROVAL_TTL: Duration = Duration::from_secs(30 * 60);

/// How many stored results (`hub.read` snapshots) one scope keeps, and for how long. A config's
/// `[limits]` may lower these, never raise them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// The most results one scope keeps; the oldest goes first.
    pub max_results: u64,
    /// Their most total bytes (as JSON) in one scope; the oldest goes first.
    pub max_bytes: u64,
    /// How long one is kept after it was made; reading it does not extend it.
    pub ttl: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_results: 16,
            max_bytes: 4 << 20,
            ttl: Duration::from_secs(5 * 60),
        }
    }
}

/// A result kept for `hub.read`, without its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResult {
    pub result_ref: String,
    /// Who may read it: `token:<name>:<created>` for an HTTP client, `local` for the user.
    pub scope: String,
    /// The run whose result it is.
    pub run_id: String,
    /// The size of its JSON.
    pub bytes: u64,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
}

/// One version of a tool's definition as the store knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolVersion {
    pub address: String,
    /// The definition's digest (`ToolDefinition::hash`).
    pub version: String,
    /// The definition as listed, for showing what changed.
    pub definition: Value,
    pub read_only: bool,
    pub first_seen_ms: u64,
    /// When a person confirmed it (the first version of a tool counts as confirmed when seen).
    pub confirmed_at_ms: Option<u64>,
    /// Who or what confirmed it: `first seen`, `source review`, an approval channel.
    pub confirmed_by: Option<String>,
}

/// A version seen now, to record.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenVersion {
    pub address: String,
    pub version: String,
    pub definition: Value,
    pub read_only: bool,
    /// What the thing is whatever its address, when its address can change under it: a
    /// source's skill is re-keyed when a sibling takes its name, yet stays the same `SKILL.md`
    /// of the same source. Trust follows the identity: a version confirmed under one address
    /// is confirmed under the next, and one that is not counts as changed there even though
    /// that address never saw a version before. `None` for a tool, whose address is its
    /// identity.
    pub identity: Option<String>,
}

/// A version of a tool seen and not confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unconfirmed {
    pub address: String,
    pub version: String,
    /// Whether the last confirmed version was read-only; `None` when none was confirmed.
    pub read_only_before: Option<bool>,
}

/// Whether the version of a tool seen now is one a person trusts.
#[derive(Debug, Clone, PartialEq)]
pub enum VersionState {
    /// Confirmed, or the first version ever seen of the tool.
    Confirmed,
    /// Another version was seen before and this one is not confirmed; `confirmed` is the last
    /// confirmed one, if any.
    Changed { confirmed: Option<Box<ToolVersion>> },
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub run_id: String,
    pub status: String,
    pub code: String,
    pub seed: u64,
    pub start_time_ms: u64,
    pub created_at_ms: u64,
    /// The last envelope returned for this run, if it finished or paused.
    pub envelope: Option<Value>,
    /// The client's `outputBudgetBytes`, kept so a resumed run returns what the first asked for.
    pub output_budget_bytes: Option<u64>,
    /// The profile whose sources and policy the run was started under; only a process serving
    /// the same one may go on with it.
    pub profile: Option<String>,
    /// Who started it (see [`RunSummary::client`]).
    pub client: Option<String>,
}

/// A new run: its script and where it came from (the MCP client's name or `exec`, the hub's
/// profile, and the client's `outputBudgetBytes`, kept so a resumed run returns what the first
/// asked for).
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub run_id: String,
    pub code: String,
    pub seed: u64,
    pub start_time_ms: u64,
    pub client: Option<String>,
    pub profile: Option<String>,
    pub output_budget_bytes: Option<u64>,
}

/// A run as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub run_id: String,
    /// As stored, except that a `running` run nobody runs any more (its process died, or its
    /// lease ran out) is `interrupted`: resuming it takes it over.
    pub status: String,
    pub created_at_ms: u64,
    /// When the status last changed: the end of the run once it finished or paused.
    pub updated_at_ms: u64,
    /// Calls in the journal (those that ran, or failed upstream).
    pub calls: u64,
    /// The address of the latest journaled call.
    pub last_call: Option<String>,
    /// Who started it: `client/profile`, the client alone, or empty when not recorded.
    pub origin: String,
    /// Who started it, as recorded: the MCP client's name (with the bearer token's for a
    /// direct call), `exec`, or nothing.
    pub client: Option<String>,
    /// The profile it was started under; `None` for the whole config.
    pub profile: Option<String>,
}

/// The run's status and who holds its claim (see `claims`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRecord {
    pub status: String,
    pub owner: Option<String>,
    pub lease_until_ms: Option<u64>,
    pub attempt: u64,
}

/// What an attempt to claim a run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This caller owns the run now, as `owner`.
    Won { owner: String },
    /// The run was not in the state the caller expected (someone else claimed or finished it
    /// first); the caller reads it again and reports what it finds.
    Lost,
}

/// How far a journaled call got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Its request may have left; no answer was recorded (yet).
    Dispatched,
    /// Its answer (a result, or the error that stopped it) is recorded.
    Answered,
}

impl CallState {
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Dispatched => "dispatched",
            CallState::Answered => "answered",
        }
    }

    /// Anything but a recorded answer may have acted without one.
    pub fn parse(stored: &str) -> CallState {
        if stored == CallState::Answered.as_str() {
            CallState::Answered
        } else {
            CallState::Dispatched
        }
    }
}

/// One tool call of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    /// SHA-256 of the call (tool, connection, canonical arguments), to notice a replay that
    /// diverges and to bind decisions to.
    pub call_digest: String,
    /// The raw `CallToolResult`, or `{"error": {...}}` when the call failed; `null` while only
    /// dispatched.
    pub result: Value,
    pub ok: bool,
    pub ms: u64,
    pub state: CallState,
    /// Whether the tool may write (not marked read-only); a journal of an older version does not
    /// say, and counts as a write.
    pub mutating: bool,
}

/// One call of a run as a listing shows it: what ran, not what it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRow {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    pub ok: bool,
    pub ms: u64,
}

/// A call about to leave: what the journal records before it is sent.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    pub call_digest: String,
    pub mutating: bool,
    /// The call runs on a person's decision, recorded for this call: that approval is used up.
    pub uses_approval: bool,
}

/// The four choices every channel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run this one call.
    AllowOnce,
    /// Run this call and every later call of the same tool in this run.
    AllowRun,
    /// Run it, and write a policy rule that allows the tool from now on.
    AllowAlways,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowRun => "allow_run",
            Decision::AllowAlways => "allow_always",
            Decision::Deny => "deny",
        }
    }

    pub fn allows(self) -> bool {
        self != Decision::Deny
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Decision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Decision::AllowOnce,
            Decision::AllowRun,
            Decision::AllowAlways,
            Decision::Deny,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
        .ok_or_else(|| {
            format!("`{s}` is not a decision; use allow_once, allow_run, allow_always or deny")
        })
    }
}

/// One call that waits (or waited) for a person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub run_id: String,
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    /// The arguments, redacted and cut short for display.
    pub preview: String,
    /// All of the arguments written as the preview writes them, when the preview cut them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole: Option<String>,
    pub reason: String,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    pub decision: Option<Decision>,
    pub decided_at_ms: Option<u64>,
    /// Which channel decided: `terminal`, `dashboard`, `page`, `elicitation`, `exec`.
    pub decided_by: Option<String>,
    /// SHA-256 of the exact call the preview shows: a decision holds for this call only.
    pub call_digest: String,
    /// When the call this approval allowed was sent; an approval is used once.
    pub consumed_at_ms: Option<u64>,
    /// The tool version the person was asked about when the call asked because its tool
    /// changed; deciding "always" confirms it.
    pub tool_version: Option<String>,
}

impl Approval {
    pub fn is_expired_at(&self, now_ms: u64) -> bool {
        self.decision.is_none() && now_ms >= self.expires_at_ms
    }

    /// `run_…/3`: how envelopes name the pending call.
    pub fn id(&self) -> String {
        format!("{}/{}", self.run_id, self.seq)
    }

    /// The call as a person saw it, to bind their decision to.
    pub fn seen(&self) -> Seen {
        Seen {
            seq: self.seq,
            call_digest: self.call_digest.clone(),
            tool_version: self.tool_version.clone(),
        }
    }
}

/// One call a person was shown: its step in the run, the digest of the call its preview
/// showed and the version of the tool's definition it was asked under. A decision is recorded
/// only while the call still waits exactly as seen: a resume that brought the same arguments
/// under a changed definition asks again, and an answer to the old question must not settle
/// the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub seq: u64,
    pub call_digest: String,
    pub tool_version: Option<String>,
}

impl Seen {
    /// True when `current`, the call waiting at this step now, is the one the person saw.
    pub fn matches(&self, current: &Approval) -> bool {
        current.call_digest == self.call_digest && current.tool_version == self.tool_version
    }
}

/// A call that asks for a person, as the bridge records it.
#[derive(Debug, Clone)]
pub struct PendingCall {
    pub seq: u64,
    pub address: String,
    pub connection: Option<String>,
    pub preview: String,
    /// All of the arguments, when `preview` cut them.
    pub whole: Option<String>,
    pub reason: String,
    pub call_digest: String,
    /// The version of the tool's definition the person is asked about: the decision holds for
    /// that version only, and an "always" decision confirms it.
    pub tool_version: Option<String>,
}

/// A tool a person allowed for the rest of a run: its address, the connection they saw the
/// call on (a source's other connections are other accounts, which the grant does not reach),
/// and the version of its definition they saw (`None` for decisions recorded before versions
/// were kept).
pub type Grant = (String, Option<String>, Option<String>);

/// Why an earlier approval at a step no longer counts, as the audit trail says it.
pub(in crate::runs) const SUPERSEDED: &str = "the call reached this step with another tool, connection or arguments, or its tool's definition changed, since the one decided on";

/// What was asked at a step before, as far as asking again there is concerned.
pub(in crate::runs) struct AskedBefore {
    pub address: String,
    pub call_digest: Option<String>,
    pub decision: Option<String>,
    pub tool_version: Option<String>,
}

impl AskedBefore {
    /// True when `call` is the very call asked about before: same tool, connection and
    /// arguments, and the same version of the tool's definition where one was recorded.
    pub fn is(&self, call: &PendingCall) -> bool {
        self.address == call.address
            && self.call_digest.as_deref() == Some(call.call_digest.as_str())
            && (self.tool_version.is_none() || self.tool_version == call.tool_version)
    }
}

/// What recording a pending call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The call asks for the first time.
    New,
    /// The same call already waits or was decided: nothing changed.
    Unchanged,
    /// Another call (another tool, connection, arguments or version of the tool) had asked at this step, and its
    /// decision, if any, no longer counts: the new call waits for a person.
    Superseded,
}

/// One line of a run's audit trail.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditLine {
    pub at_ms: u64,
    pub kind: String,
    pub detail: Value,
}

/// One bearer token as stored (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub name: String,
    /// The only profile a hub must serve for this token to work there; `None` means any.
    pub profile: Option<String>,
    /// Address patterns (`*` matches anything) the holder may call; empty means every address.
    pub allow: Vec<String>,
    pub created_at_ms: u64,
    pub expires_at_ms: Option<u64>,
    pub revoked_at_ms: Option<u64>,
}

impl TokenRecord {
    /// Whether the holder may call `address` (the hub's policy still decides after this).
    pub fn allows(&self, address: &str) -> bool {
        self.allow.is_empty()
            || self
                .allow
                .iter()
                .any(|p| crate::policy::glob_matches(p, address))
    }

    /// What the holder may call, as every surface filters by it; a token with no `--allow`
    /// narrows nothing, and its holder sees what the user sees.
    pub fn permits(&self) -> Permits<'_> {
        if self.allow.is_empty() {
            Permits::ALL
        } else {
            Permits::only(self)
        }
    }

    /// Neither revoked nor expired at `now_ms`.
    pub fn is_active_at(&self, now_ms: u64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| now_ms < at)
    }
}

impl Narrowing for TokenRecord {
    fn allows(&self, address: &str) -> bool {
        TokenRecord::allows(self, address)
    }
}

/// What a hub last said about one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStatusRecord {
    pub name: String,
    /// A short word: `idle`, `connecting`, `ready`, `failed`, `restarting`, `disabled`.
    pub status: String,
    pub tool_count: usize,
    /// The last error, kept while the source recovers so a person can see what went wrong.
    pub error: Option<String>,
    pub updated_at_ms: u64,
}
