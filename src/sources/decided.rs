//! A call decided on one definition of its tool (by policy, a person's approval, freshness)
//! goes out only while the upstream still defines the tool so: a server restarted with a new
//! version, or an OpenAPI document edited, may define it otherwise since the catalogue listed
//! it, and the call is then refused unsent ([`SourceError::Changed`]).

use std::sync::Arc;

use rmcp::Peer;
use rmcp::service::RoleClient;
use serde_json::Value;

use super::link::Link;
use super::{SourceError, Sources, blanked, with_timeout};
use crate::model::tool::{UpstreamTool, definition_hash};

impl Sources {
    /// The definition hash `tool` (as its upstream lists it now) would be catalogued with:
    /// blanked as [`list_tools`](Self::list_tools) blanks it, through the default connection.
    async fn listed_hash(&self, source: &str, tool: Value) -> Option<String> {
        let link = self.link(source, None).ok()?;
        let tool: UpstreamTool = serde_json::from_value(blanked(&link, tool)).ok()?;
        Some(definition_hash(&tool))
    }

    /// Refuses, unsent, a call decided on the definition hashed `decided_on` when the upstream
    /// now defines `upstream_name` otherwise (`listed`: its definition as last listed, `None`
    /// when the listing lacks it). Policy, a person's approval and freshness judged the one
    /// decided on, not what the tool became.
    pub(super) async fn check_decided(
        &self,
        source: &str,
        upstream_name: &str,
        listed: Option<Value>,
        decided_on: &str,
    ) -> Result<(), SourceError> {
        let now = match listed {
            Some(tool) => self.listed_hash(source, tool).await,
            None => None,
        };
        if now.as_deref() == Some(decided_on) {
            return Ok(());
        }
        Err(SourceError::Changed {
            name: source.to_string(),
            tool: upstream_name.to_string(),
        })
    }

    /// [`check_decided`](Self::check_decided) for an MCP connection, against what it listed
    /// and, when that differs or it has not listed yet (a server that does not declare the
    /// `tools` capability is not listed at connect), against what it lists now: the catalogue
    /// can be newer than the connection's listing (another process listed the source again,
    /// and the person decided on that). A listing that fails sends nothing either.
    pub(super) async fn check_decided_listing(
        &self,
        link: &Arc<Link>,
        peer: &Peer<RoleClient>,
        upstream_name: &str,
        decided_on: &str,
    ) -> Result<(), SourceError> {
        let source = link.source.name.as_str();
        if let Some(listed) = link.listed(upstream_name)
            && self
                .check_decided(source, upstream_name, listed, decided_on)
                .await
                .is_ok()
        {
            return Ok(());
        }
        let now: Option<Vec<Value>> = with_timeout(link, "tools/list", peer.list_all_tools())
            .await
            .ok()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| serde_json::to_value(tool).ok())
                    .collect()
            });
        let listed = now.as_ref().and_then(|tools| {
            tools
                .iter()
                .find(|tool| tool.get("name").and_then(Value::as_str) == Some(upstream_name))
                .cloned()
        });
        if now.is_some() {
            link.set_listed(now);
        }
        self.check_decided(source, upstream_name, listed, decided_on)
            .await
    }
}
