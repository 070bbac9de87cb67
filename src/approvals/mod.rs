//! Deciding on calls that wait for a person. Every channel — `hub approve`, the `exec` prompt,
//! an elicitation answer, the browser approval page, the dashboard — records its decision through
//! the one [`decide`] here, bound to the arguments the person saw, in the state store, which stays
//! the one source of truth. The browser page lives here too, for MCP clients that cannot ask the
//! user themselves (no form elicitation).
//!
//! | file | owns |
//! |---|---|
//! | `decide` | the one decision function: checks, "always" rules, the record, all or nothing |
//! | `page` | the HTTP server on 127.0.0.1: showing pending calls, taking decisions |
//! | `links` | one-time, unguessable links bound to a run's waiting calls, and their CSRF values |
//! | `html` | the server-rendered, escaped HTML of each page |
//! | `browser` | opening a link in the user's browser, or saying why it cannot |
//!
//! ```text
//! let page = ApprovalPage::start(store, paths.config_file).await?;   // once per hub process
//! let url = page.url_for(&run_id)?;                                    // when a run pauses
//! open_in_browser(&url)?;                                              // never shown to the model
//! ```

mod browser;
mod decide;
mod html;
mod links;
mod page;

pub use browser::{OpenError, open_in_browser};
pub use decide::{Channel, DecisionRequest, decide, waiting};
pub use page::{ApprovalPage, PageError, PageLink};
