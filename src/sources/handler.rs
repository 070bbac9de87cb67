//! The rmcp client handler each upstream connection runs with: it introduces us in the handshake
//! and turns `notifications/tools/list_changed` into a [`SourceEvent::ToolsChanged`].

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::broadcast;

use super::status::SourceEvent;

pub(crate) struct UpstreamHandler {
    source: String,
    /// `None` for a connection other than the source's default: tools are listed through the
    /// default connection, so only its notifications matter.
    events: Option<broadcast::Sender<SourceEvent>>,
}

impl UpstreamHandler {
    pub(crate) fn new(source: &str, events: Option<broadcast::Sender<SourceEvent>>) -> Self {
        UpstreamHandler {
            source: source.to_string(),
            events,
        }
    }
}

/// Sends `ToolsChanged` for `source`; used for legacy notifications and modern subscriptions.
pub(crate) fn tools_changed(events: &broadcast::Sender<SourceEvent>, source: &str) {
    tracing::debug!(source = %source, "the upstream's tool list changed");
    // No receiver yet is fine: whoever subscribes later lists the tools anyway.
    let _ = events.send(SourceEvent::ToolsChanged {
        source: source.to_string(),
    });
}

impl ClientHandler for UpstreamHandler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(events) = &self.events {
            tools_changed(events, &self.source);
        }
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("capabilities", env!("CARGO_PKG_VERSION")),
        )
    }
}
