//! Results too large for the output budget, on the hub's side: what the envelope's `stored`
//! says about one (the arrays it holds, its shape, all fitted to the budget), the `nextRequest`
//! that starts reading it, and the page `hub.read` answers with. Pure functions over
//! `serde_json::Value`: the state store keeps the value and the sandbox calls the bridge;
//! nothing here stores, waits or does I/O.
//!
//! | file | owns |
//! |---|---|
//! | `discover` | the collections (arrays) a value holds, found within fixed bounds |
//! | `preview` | the value's shape as text: keys, types, lengths, never a scalar of the data |
//! | `metadata` | `stored` and `nextRequest`, cut down until they fit the output budget |
//! | `next_request` | the script that reads the first page of the largest collection |
//! | `page` | one page of a collection: as many whole rows as fit, or an error that says why |
//! | `pointer` | RFC 6901 JSON Pointers: escaping keys, parsing paths |
//! | `size` | the length of compact JSON as serde_json and JavaScript write it, without writing it |

mod discover;
mod metadata;
mod next_request;
mod page;
mod pointer;
mod preview;
mod size;

pub(crate) use metadata::fit_metadata;
pub(crate) use page::read_page;
