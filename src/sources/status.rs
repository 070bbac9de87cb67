//! What a source is doing right now ([`SourceStatus`]) and the events the manager broadcasts when
//! that changes or when an upstream says its tool list changed ([`SourceEvent`]).

use std::fmt;

/// The state of one source's default connection, as `source list`, the dashboard and the hub show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceStatus {
    /// Not running: nothing has needed it yet, or it was stopped after a while without a call;
    /// the next call starts it.
    Idle,
    /// Starting the process or opening the HTTP session, then the MCP handshake.
    Connecting,
    /// Connected and listed; requests go through.
    Ready {
        /// The negotiated MCP version, e.g. `2025-11-25`; for an OpenAPI source the
        /// document's version, e.g. `OpenAPI 3.1.0`.
        protocol_version: String,
        /// What the server calls itself in its handshake, when it says.
        server_name: Option<String>,
        server_version: Option<String>,
        tool_count: usize,
    },
    /// Could not connect; `error` says what happened and what to do. Not retried by itself.
    Failed { error: String },
    /// Was ready, then went away; the manager reconnects after a backoff.
    Restarting { attempt: u32, last_error: String },
    /// `enabled = false` in the config.
    Disabled,
}

impl SourceStatus {
    /// True once the status will not change without something happening upstream or a call:
    /// idle, ready, failed or disabled. `wait_settled` waits for this.
    pub fn is_settled(&self) -> bool {
        matches!(
            self,
            SourceStatus::Idle
                | SourceStatus::Ready { .. }
                | SourceStatus::Failed { .. }
                | SourceStatus::Disabled
        )
    }

    pub fn is_ready(&self) -> bool {
        matches!(self, SourceStatus::Ready { .. })
    }
}

impl fmt::Display for SourceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceStatus::Idle => f.write_str("idle: not running; the first call starts it"),
            SourceStatus::Connecting => f.write_str("connecting"),
            SourceStatus::Ready {
                protocol_version,
                server_name,
                server_version,
                tool_count,
            } => {
                let tools = if *tool_count == 1 { "tool" } else { "tools" };
                // An OpenAPI source's "protocol" names itself (`OpenAPI 3.1.0`).
                if protocol_version.starts_with("OpenAPI") {
                    write!(f, "ready: {tool_count} {tools}, {protocol_version}")?;
                } else {
                    write!(f, "ready: {tool_count} {tools}, MCP {protocol_version}")?;
                }
                match (server_name, server_version) {
                    (Some(name), Some(version)) => write!(f, ", {name} {version}"),
                    (Some(name), None) => write!(f, ", {name}"),
                    _ => Ok(()),
                }
            }
            SourceStatus::Failed { error } => write!(f, "failed: {error}"),
            SourceStatus::Restarting {
                attempt,
                last_error,
            } => {
                write!(f, "restarting (attempt {attempt}) after: {last_error}")
            }
            SourceStatus::Disabled => f.write_str("disabled"),
        }
    }
}

/// Broadcast by [`Sources`](super::Sources) so the catalogue and the dashboard can follow along.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceEvent {
    /// The default connection's status changed. On a change to `Ready` (first connect or after a
    /// restart) the catalogue should list the source's tools again.
    StatusChanged {
        source: String,
        status: SourceStatus,
    },
    /// The upstream sent `notifications/tools/list_changed`: list its tools again.
    ToolsChanged { source: String },
}
