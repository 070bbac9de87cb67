//! The shared vocabulary: what a tool is and what it is called, which every other module speaks
//! and which depends on nothing else in the crate.
//!
//! | file | owns |
//! |---|---|
//! | `tool` | an upstream tool as listed, its definition under an address, annotations, digests |
//! | `address` | addresses: tool names in lowerCamelCase, valid source names, reserved words |
//! | `closest` | the closest names to a misspelt one, for "did you mean …" |
//! | `permits` | what a caller may call as far as its bearer token goes, which every surface filters by |
//! | `json_size` | the size of a JSON value as text, measured without writing it |
//! | `reader` | who reads a hint (an agent or a person at the command line), so it uses their words |

pub mod address;
pub mod closest;
pub mod json_size;
pub mod permits;
pub mod reader;
pub mod tool;

pub use permits::Permits;
pub use reader::Reader;
pub use tool::{Annotations, ToolDefinition, UpstreamTool};
