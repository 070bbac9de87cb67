//! Skills in the search index beside the tools: each skill, local or a source's, is one
//! document (its name and description) under a namespace no source can have (`skill:`, not a JavaScript identifier),
//! so one query ranks skills and tools together. [`SkillCache`] reloads the skills from disk at
//! most once a second, so a skill added while the hub runs is found without a restart and a
//! burst of searches reads the folders once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Skills;
use super::upstream::UpstreamSkill;
use crate::config::SkillDirs;
use crate::model::ToolDefinition;
use crate::model::tool::json_digest;

/// The search index's namespace for skills.
pub const INDEX_NAMESPACE: &str = "skill:";

/// How long a load of the skills answers before the folders are read again.
const FRESH_FOR: Duration = Duration::from_secs(1);

/// The skills as search documents.
pub fn documents(skills: &Skills) -> Vec<ToolDefinition> {
    skills
        .skills
        .iter()
        .map(|skill| ToolDefinition {
            namespace: INDEX_NAMESPACE.to_string(),
            name: skill.name.clone(),
            upstream_name: skill.name.clone(),
            title: None,
            description: skill.description.clone(),
            input_schema: json!({ "type": "object" }),
            output_schema: None,
            annotations: Default::default(),
            endpoint: None,
            hash: json_digest(&json!([skill.name, skill.description])),
        })
        .collect()
}

/// The skill a search hit's address (`skill:.NAME`) names, if it names one.
pub fn skill_of_hit(address: &str) -> Option<&str> {
    address
        .strip_prefix(INDEX_NAMESPACE)
        .and_then(|rest| rest.strip_prefix('.'))
}

/// The skills of some folders, loaded again when a second has passed.
pub struct SkillCache {
    dirs: SkillDirs,
    last: Mutex<Option<Load>>,
}

/// One load of the skills: when, the generation of the sources' listings it merged, the skills,
/// and the digest of what search indexes of them.
struct Load {
    at: Instant,
    generation: u64,
    skills: Arc<Skills>,
    digest: String,
}

impl SkillCache {
    pub fn new(dirs: SkillDirs) -> SkillCache {
        SkillCache {
            dirs,
            last: Mutex::new(None),
        }
    }

    /// The skills now (the local ones with `upstream` beside them, whose listings are at
    /// `generation`: a new one is merged at once), and their search documents when they
    /// changed since the last call (always on the first), for the caller to put in the index.
    pub fn current(
        &self,
        generation: u64,
        upstream: impl FnOnce() -> Vec<UpstreamSkill>,
    ) -> (Arc<Skills>, Option<Vec<ToolDefinition>>) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(load) = last.as_ref()
            && load.at.elapsed() < FRESH_FOR
            && load.generation == generation
        {
            return (load.skills.clone(), None);
        }
        let skills = Arc::new(Skills::load(&self.dirs).with_upstream(&upstream()));
        let documents = documents(&skills);
        let digest = json_digest(&Value::Array(
            documents
                .iter()
                .map(|d| Value::String(d.hash.clone()))
                .collect(),
        ));
        let changed = last.as_ref().is_none_or(|load| load.digest != digest);
        *last = Some(Load {
            at: Instant::now(),
            generation,
            skills: skills.clone(),
            digest,
        });
        (skills, changed.then_some(documents))
    }
}
