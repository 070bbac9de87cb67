//! Configuration: where it lives (`paths`), what may be written (`options`), references to
//! secrets and environment variables (`template`), loading and validation (`load`), the resolved
//! result (`settings`), and the commented files `init` writes (`starter`).

pub mod edit;
pub mod load;
pub mod options;
pub mod paths;
pub mod settings;
pub mod starter;
pub mod template;

pub use load::{ConfigError, load, parse};
pub use paths::Paths;
pub use settings::*;
