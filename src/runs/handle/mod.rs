//! The store's handles, one per concern: the narrow, async API the rest of the code uses.
//! Each runs its backend work off the async threads and deals only in opened values.

mod approvals;
mod bearer_tokens;
mod journal;
mod keys;
mod runs;
mod sources;
mod stored_results;
mod tool_versions;

pub use approvals::Approvals;
pub use bearer_tokens::BearerTokens;
pub use journal::Journal;
pub use keys::Keys;
pub use runs::Runs;
pub use sources::SourceStatuses;
pub use stored_results::{Kept, LOCAL_SCOPE, StoredResults, scope_of};
pub use tool_versions::ToolVersions;
