//! Upstream MCP clients (being written).
