//! The state store: one SQLite database in the data directory (WAL mode, so the hub, `exec` and
//! later `hub approve` and the dashboard, separate processes, can share it) holding every run
//! and the journal of its tool calls, so a run can be inspected and replayed.

mod ids;
mod store;

pub use ids::{new_run_id, new_seed};
pub use store::{JournalEntry, RunRecord, RunsStore, StoreError};
