//! Recorded tool listings of real MCP servers, shared by the search-quality tests, the
//! TypeScript snapshots and the benchmarks: 20 servers in `tests/fixtures/catalog/*.json`, and
//! the 94 of the search evaluation set in `tests/fixtures/search_eval/catalog/*.json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::tool::{ToolDefinition, UpstreamTool, build_namespace};

/// One recorded `tools/list` of one real server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedServer {
    /// The namespace the tests give it, e.g. `github`.
    pub namespace: String,
    /// Where it came from, e.g. `npm:@modelcontextprotocol/server-everything@2026.8.31`.
    pub package: String,
    pub tools: Vec<UpstreamTool>,
}

/// The folder of recorded listings in this repository.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog")
}

/// Loads every recorded server, sorted by namespace.
pub fn load_all(dir: &Path) -> anyhow::Result<Vec<RecordedServer>> {
    let mut servers = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path)?;
            let server: RecordedServer = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            servers.push(server);
        }
    }
    servers.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    Ok(servers)
}

/// A search index over `servers`, one namespace each, with their definitions.
pub fn search_index(
    servers: &[RecordedServer],
) -> (crate::catalog::search::SearchIndex, Vec<ToolDefinition>) {
    let mut index = crate::catalog::search::SearchIndex::new();
    for server in servers {
        index.set_namespace(
            &server.namespace,
            &build_namespace(&server.namespace, server.tools.clone(), &[]),
        );
    }
    (index, definitions(servers))
}

/// Every recorded tool as catalogue definitions, namespace by namespace.
pub fn definitions(servers: &[RecordedServer]) -> Vec<ToolDefinition> {
    servers
        .iter()
        .flat_map(|s| build_namespace(&s.namespace, s.tools.clone(), &[]))
        .collect()
}

/// The 94 recorded servers (2,445 tools) of the search evaluation set, with its requests in
/// `tests/fixtures/search_eval/requests.json`.
pub fn eval_catalog_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search_eval/catalog")
}
