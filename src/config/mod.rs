//! Configuration: where it lives (`paths`), what may be written (`options`), references to
//! secrets and environment variables (`template`), loading and validation (`load`), the resolved
//! result (`settings`), the commented files `init` writes (`starter`), reading other MCP
//! clients' configs (`import`), editing the file in place (`edit`), and the policy a running
//! process keeps in step with the file (`live_policy`), and how sources are paced (`pacing`).

pub mod edit;
pub mod import;
pub mod live_policy;
pub mod load;
pub mod options;
pub mod pacing;
pub mod paths;
pub mod settings;
pub mod starter;
pub mod template;

pub use live_policy::LivePolicy;
pub use load::{ConfigError, load, parse};
pub use pacing::Pacing;
pub use paths::Paths;
pub use settings::*;
