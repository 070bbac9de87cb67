//! The catalogue: every tool of every source under its address (`namespace.tool`), built from
//! upstream listings (the definitions themselves are `crate::model`'s), cached on disk (`cache`,
//! with the failed connects of `failures`),
//! loaded and refreshed from the sources (`load`, `live`), ranked by BM25F (`search`, rendered by
//! `results`), rendered as TypeScript (`typescript`) and described within a token budget
//! (`describe`); tools whose definition changed since a person confirmed it (`changes`).

pub mod cache;
pub mod changes;
pub mod describe;
pub mod failures;
pub mod fixtures;
pub mod live;
pub mod load;
pub mod refresh;
pub mod results;
pub mod search;
pub mod typescript;

use std::time::SystemTime;

use crate::model::{Permits, ToolDefinition, UpstreamTool};

/// Where a namespace's tools came from, so output can say how fresh they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Listed from the running server just now.
    Live,
    /// From the cache, fetched less than six hours ago.
    Cached { fetched_at: SystemTime },
    /// From an old cache because the server could not be reached; `error` says why.
    Stale {
        fetched_at: SystemTime,
        error: String,
    },
    /// No tools: the server could not be reached and nothing is cached.
    Unavailable { error: String },
    /// The server is still starting and nothing fresh is cached yet.
    Connecting,
    /// `enabled = false` in the config.
    Disabled,
}

/// One source's tools, with the names of its connections (the default first).
#[derive(Debug, Clone)]
pub struct Namespace {
    pub name: String,
    pub connections: Vec<String>,
    /// False when the config declares no connections, so output does not list the implicit one.
    pub named_connections: bool,
    /// Sorted by address.
    pub tools: Vec<ToolDefinition>,
    /// The skills it publishes under the Skills extension, by key.
    pub skills: Vec<crate::skills::upstream::UpstreamSkill>,
    pub origin: Origin,
}

impl Namespace {
    /// Whether a client sees this source at all. Every client does, except one whose token
    /// `permits` only some tools: it sees a source only while it may call one of its listed
    /// tools, so a source that is down, disabled, still connecting or out of its reach is not
    /// even named to it.
    pub fn seen_by(&self, permits: Permits) -> bool {
        !permits.narrows() || self.callable_by(permits) > 0
    }

    /// How many of its tools a client may call, as far as its token goes (`permits`).
    pub fn callable_by(&self, permits: Permits) -> usize {
        if !permits.narrows() {
            return self.tools.len();
        }
        let callable = |t: &&ToolDefinition| permits.allows(&t.address());
        self.tools.iter().filter(callable).count()
    }
}

/// Every namespace, in name order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub namespaces: Vec<Namespace>,
}

impl Catalog {
    /// Whether a client whose token `permits` some tools sees the source `name` at all (see
    /// [`Namespace::seen_by`]); every other client sees every source of the config.
    pub fn shows_source(&self, name: &str, permits: Permits) -> bool {
        !permits.narrows() || self.namespace(name).is_some_and(|n| n.seen_by(permits))
    }

    pub fn namespace(&self, name: &str) -> Option<&Namespace> {
        // Namespaces are kept in name order, so a search answer can look up thousands of hits
        // quickly; a catalogue built out of order is still searched right, only slower.
        match self
            .namespaces
            .binary_search_by(|n| n.name.as_str().cmp(name))
        {
            Ok(i) => self.namespaces.get(i),
            Err(_) => self.namespaces.iter().find(|n| n.name == name),
        }
    }

    pub fn tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.namespaces.iter().flat_map(|n| n.tools.iter())
    }

    /// Every skill the sources publish, by source.
    pub fn upstream_skills(&self) -> Vec<crate::skills::upstream::UpstreamSkill> {
        self.namespaces
            .iter()
            .flat_map(|n| n.skills.iter().cloned())
            .collect()
    }

    /// The skills of the sources the model may use: a source's skills show only while one of
    /// its tools is visible (see [`visible_tools`](Self::visible_tools)), since they teach the
    /// model to call them and reading one reads from the source. A source whose every tool the
    /// policy denies, or that `permits` (a bearer token's patterns) does not reach, shows none;
    /// one that publishes skills and no tools shows them unless a token narrows the client.
    pub fn reachable_skills(
        &self,
        policy: &crate::policy::Policy,
        permits: Permits,
    ) -> Vec<crate::skills::upstream::UpstreamSkill> {
        self.namespaces
            .iter()
            .filter(|n| {
                let connection = n.connections.first().map(String::as_str);
                let visible = |t: &ToolDefinition| {
                    !policy.hides(&t.address(), connection, &t.annotations, permits)
                };
                (n.tools.is_empty() && !permits.narrows()) || n.tools.iter().any(visible)
            })
            .flat_map(|n| n.skills.iter().cloned())
            .collect()
    }

    /// Every tool the policy lets the model see: denied tools are hidden from describe as they
    /// are from search. A tool is judged by its namespace's default connection. `permits`
    /// narrows it to what a client may call at all (a bearer token's patterns).
    pub fn visible_tools(
        &self,
        policy: &crate::policy::Policy,
        permits: Permits,
    ) -> Vec<ToolDefinition> {
        self.namespaces
            .iter()
            .flat_map(|n| {
                let connection = n.connections.first().map(String::as_str);
                n.tools.iter().filter(move |t| {
                    !policy.hides(&t.address(), connection, &t.annotations, permits)
                })
            })
            .cloned()
            .collect()
    }

    /// The tool at `namespace.tool`, if catalogued.
    pub fn tool(&self, address: &str) -> Option<&ToolDefinition> {
        let (namespace, name) = address.split_once('.')?;
        let tools = &self.namespace(namespace)?.tools;
        // Tools are sorted by address, which within one namespace is by name; as above.
        match tools.binary_search_by(|t| t.name.as_str().cmp(name)) {
            Ok(i) => tools.get(i),
            Err(_) => tools.iter().find(|t| t.name == name),
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{Skill as Entry, SkillFrontmatter, SkillResource, SkillResources};
    use serde_json::json;

    use super::*;
    use crate::model::tool::build_namespace;
    use crate::skills::upstream::from_listing;

    fn namespace(name: &str) -> Namespace {
        let tool: UpstreamTool =
            serde_json::from_value(json!({ "name": "ping", "inputSchema": { "type": "object" } }))
                .expect("tool");
        let skill = Entry::new(
            "skill://notes/SKILL.md",
            SkillFrontmatter::new("notes", "Take notes."),
            SkillResources::Files(vec![SkillResource::from_bytes(
                "skill://notes/SKILL.md",
                b"---\n",
            )]),
        );
        Namespace {
            name: name.into(),
            connections: vec!["default".into()],
            named_connections: false,
            tools: build_namespace(name, vec![tool], &[]),
            skills: from_listing(name, vec![skill]),
            origin: Origin::Live,
        }
    }

    #[test]
    fn a_token_reaches_the_skills_of_the_sources_it_may_call() {
        let catalog = Catalog {
            namespaces: vec![namespace("docs"), namespace("wiki")],
        };
        let all: Vec<String> = catalog
            .upstream_skills()
            .iter()
            .map(|s| s.address_name())
            .collect();
        assert_eq!(all, ["docs.notes", "wiki.notes"]);
        let only_wiki = |address: &str| address.starts_with("wiki.");
        let reached = |policy: &crate::policy::Policy, permits: Permits| {
            catalog
                .reachable_skills(policy, permits)
                .iter()
                .map(|s| s.address_name())
                .collect::<Vec<_>>()
        };
        let open = crate::policy::Policy::default();
        assert_eq!(reached(&open, Permits::ALL), ["docs.notes", "wiki.notes"]);
        assert_eq!(reached(&open, Permits::only(&only_wiki)), ["wiki.notes"]);
        // A source the policy denies whole teaches nothing either.
        let settings = crate::config::parse(
            std::path::Path::new("c.toml"),
            "[sources.docs]\ncommand = \"x\"\n[sources.wiki]\ncommand = \"x\"\n[[policy.rules]]\nmatch = \"docs.*\"\naction = \"deny\"\n",
        )
        .unwrap();
        assert_eq!(reached(&settings.policy, Permits::ALL), ["wiki.notes"]);
    }
}
