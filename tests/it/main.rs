//! The one integration-test binary: each module drives the real `capabilities` binary or the
//! library against real peers (server-everything from npm, Python MCP servers from the venv).

mod common;
