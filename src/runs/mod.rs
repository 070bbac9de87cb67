//! The state store: one SQLite database in the data directory (WAL mode, so the hub, `exec` and
//! later `hub approve` and the dashboard, separate processes, can share it) holding every run,
//! the journal of its tool calls (so a run can be inspected and replayed), pending approvals and
//! the decisions on them, an audit trail, the last status each source reported, and the hashes of
//! the bearer tokens `hub serve --http` accepts. Scripts, results, envelopes and argument
//! previews are encrypted at rest with the state key (`seal`, kept where `keys` says).

mod approvals;
mod ids;
mod keys;
mod seal;
mod sources;
mod store;
mod summary;
mod tokens;

pub use approvals::{APPROVAL_TTL, Approval, DecideError, Decision};
pub use ids::{new_run_id, new_seed};
pub use keys::KeySource;
pub use seal::OpenError;
pub use sources::SourceStatusRecord;
pub use store::{JournalEntry, KEY_FILE_NAME, RunOrigin, RunRecord, RunsStore, StoreError, now_ms};
pub use summary::{CallRow, RunSummary};
pub use tokens::{TokenError, TokenRecord};
