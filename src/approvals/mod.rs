//! Approval channels that live in the hub process. Today: the browser approval page, for MCP
//! clients that cannot ask the user themselves (no form elicitation). Every channel writes its
//! decision to the state store ([`crate::runs::RunsStore::decide`]), which stays the one source of
//! truth, so the page, `capabilities hub approve` and the dashboard never disagree.
//!
//! | file | owns |
//! |---|---|
//! | `page` | the HTTP server on 127.0.0.1: showing pending calls, taking decisions |
//! | `tokens` | one-time, unguessable links bound to a run's waiting calls, and their CSRF values |
//! | `html` | the server-rendered, escaped HTML of each page |
//! | `browser` | opening a link in the user's browser, or saying why it cannot |
//!
//! ```text
//! let page = ApprovalPage::start(store, paths.config_file).await?;   // once per hub process
//! let url = page.url_for(&run_id)?;                                    // when a run pauses
//! open_in_browser(&url)?;                                              // never shown to the model
//! ```

mod browser;
mod html;
mod page;
mod tokens;

pub use browser::{OpenError, open_in_browser};
pub use page::{ApprovalPage, CHANNEL, PageError};
