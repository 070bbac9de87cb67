//! Synthetic catalogues for the benchmarks, built from the recorded real listings in
//! `tests/fixtures/catalog`: the real servers repeated under new namespaces (`github`, `github2`,
//! …) until the catalogue has the wanted number of tools, so sizes beyond the 230 recorded tools
//! keep real names, descriptions and schemas.

use capabilities::catalog::fixtures::{RecordedServer, fixture_dir, load_all};
use capabilities::catalog::search::SearchIndex;
use capabilities::model::tool::build_namespace;
use capabilities::model::{ToolDefinition, UpstreamTool};

/// The recorded servers and their catalogue definitions, loaded once.
pub struct Recorded {
    pub servers: Vec<RecordedServer>,
    /// `definitions[i]` are the tools of `servers[i]`, sorted by address.
    pub definitions: Vec<Vec<ToolDefinition>>,
}

/// One server of a synthetic catalogue: a recorded server listed under a new namespace, maybe
/// cut short so the catalogue has exactly the wanted size.
pub struct Copy {
    pub namespace: String,
    /// Index into [`Recorded::servers`].
    pub server: usize,
    /// How many of its tools, from the start.
    pub tools: usize,
}

impl Recorded {
    pub fn load() -> Recorded {
        Recorded::load_from(&fixture_dir())
    }

    /// The recorded servers of `dir`, e.g. the 94 of the search evaluation set.
    pub fn load_from(dir: &std::path::Path) -> Recorded {
        let servers = load_all(dir).unwrap_or_else(|e| panic!("the recorded catalogue loads: {e}"));
        let definitions = servers
            .iter()
            .map(|s| build_namespace(&s.namespace, s.tools.clone(), &[]))
            .collect();
        Recorded {
            servers,
            definitions,
        }
    }

    /// Servers adding up to `size` tools: copy `k` of server `s` is namespace `s` for the first
    /// copy and `s{k+1}` after.
    pub fn copies(&self, size: usize) -> Vec<Copy> {
        let mut out = Vec::new();
        let mut left = size;
        let mut round = 0;
        while left > 0 {
            for (server, recorded) in self.servers.iter().enumerate() {
                let tools = recorded.tools.len().min(left);
                if tools == 0 {
                    continue;
                }
                left -= tools;
                let namespace = match round {
                    0 => recorded.namespace.clone(),
                    k => format!("{}{}", recorded.namespace, k + 1),
                };
                out.push(Copy {
                    namespace,
                    server,
                    tools,
                });
            }
            round += 1;
        }
        out
    }

    /// A search index over a catalogue of `size` tools, one namespace per copy, as the hub
    /// builds it. The definitions are shared, not cloned: the index takes the namespace from
    /// its argument, so 100,000 tools cost only the index itself.
    pub fn index(&self, size: usize) -> SearchIndex {
        let mut index = SearchIndex::new();
        for copy in self.copies(size) {
            index.set_namespace(
                &copy.namespace,
                &self.definitions[copy.server][..copy.tools],
            );
        }
        index
    }

    /// One namespace `big` of `size` tools, as one very large server would list them: the
    /// recorded tools in turn, named `{server}_{tool}` (servers share names like
    /// `create_issue`) and suffixed `_2`, `_3`, … on later rounds, so every name is unique.
    pub fn one_namespace(&self, size: usize) -> Vec<ToolDefinition> {
        let recorded: Vec<(&str, &UpstreamTool)> = self
            .servers
            .iter()
            .flat_map(|s| s.tools.iter().map(|t| (s.namespace.as_str(), t)))
            .collect();
        let renamed = (0..size)
            .map(|i| {
                let (namespace, tool) = recorded[i % recorded.len()];
                let mut tool = tool.clone();
                tool.name = match i / recorded.len() {
                    0 => format!("{namespace}_{}", tool.name),
                    round => format!("{namespace}_{}_{}", tool.name, round + 1),
                };
                tool
            })
            .collect();
        build_namespace("big", renamed, &[])
    }
}

/// The queries of the search-quality test: what users ask for, in their words.
pub fn queries() -> Vec<String> {
    queries_in(&fixture_dir().join("../search_queries.json"))
}

/// The `query` of every entry of a JSON array of requests, e.g. the search evaluation set's.
pub fn queries_in(path: &std::path::Path) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Case {
        query: String,
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: Vec<Case> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    cases.into_iter().map(|c| c.query).collect()
}
