//! The one integration-test binary: each module drives the real `capabilities` binary or the
//! library against real peers (server-everything from npm, Python MCP servers from the venv).

mod approval_page;
mod approvals;
mod catalogue;
mod cli;
mod exec;
mod common;
mod dashboard;
mod credentials;
mod generated;
mod hub;
mod install;
mod live_catalog;
mod policy;
mod reaping;
mod support;
mod search_quality;
mod sources;
mod sandbox_hostile;
