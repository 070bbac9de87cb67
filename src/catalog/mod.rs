//! The catalogue: every tool of every source under its address (`namespace.tool`), built from
//! upstream listings (`tool`, `address`), cached on disk (`cache`), ranked by BM25F (`search`),
//! rendered as TypeScript (`typescript`) and described within a token budget (`describe`).

pub mod address;
pub mod cache;
pub mod describe;
pub mod fixtures;
pub mod search;
pub mod tool;
pub mod typescript;

pub use tool::{Annotations, ToolDefinition, UpstreamTool};
