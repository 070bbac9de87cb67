//! The state store: one SQLite database in the data directory (WAL mode, so the hub, `exec` and
//! later `hub approve` and the dashboard, separate processes, can share it) holding every run,
//! the journal of its tool calls (so a run can be inspected and replayed), pending approvals and
//! the decisions on them, an audit trail, the last status each source reported, and the hashes of
//! the bearer tokens `hub serve --http` accepts. Scripts, results, envelopes and argument
//! previews are encrypted at rest with the state key (`seal`, kept where `keys` says).
//!
//! The guarantees "a call that needs a person never runs without their decision, and never runs
//! twice" are invariants of this store, not of one process: a run is claimed before it runs
//! (`claims`), a call is journaled as dispatched before it leaves, for the claim's owner only
//! (`journal`), and a decision binds to the arguments a person saw and is used once
//! (`approvals`). Every check and its write happen in one write transaction.
//!
//! | file | owns |
//! |---|---|
//! | `store` | opening (and refusing a damaged file), runs, sealing, the key |
//! | `schema` | the tables and their versioned migrations |
//! | `claims` | who runs a run now: owner, lease, compare-and-set claims and takeovers |
//! | `journal` | calls dispatched and answered, the gate before each upstream call |
//! | `approvals` | pending calls, decisions bound to arguments, grants, the audit trail |
//! | `summary` | run listings for `hub runs` and the dashboard |
//! | `sources`, `tokens`, `keys`, `seal`, `ids` | source statuses, bearer tokens, the state key, encryption, ids |

mod approvals;
mod claims;
mod ids;
mod journal;
mod keys;
mod schema;
mod seal;
mod sources;
mod store;
mod summary;
mod tokens;

pub use approvals::{APPROVAL_TTL, Approval, DecideError, Decision, PendingCall, Recorded, Seen};
pub use claims::{Claim, ClaimRecord, RENEW_EVERY};
pub use ids::{new_run_id, new_seed};
pub use journal::{CallState, Dispatch, DispatchError, JournalEntry};
pub use keys::KeySource;
pub use seal::OpenError;
pub use sources::SourceStatusRecord;
pub use store::{KEY_FILE_NAME, RunOrigin, RunRecord, RunsStore, StoreError, now_ms};
pub use summary::{CallRow, RunSummary};
pub use tokens::{TokenError, TokenRecord};
