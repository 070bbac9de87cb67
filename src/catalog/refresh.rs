//! Listing sources again on demand (`capabilities source refresh` and the dashboard's `u` key):
//! every source of the settings is listed now, the cache is renewed and marked so running hubs
//! take the new listings at their next request, and each tool's version is recorded, so what
//! changed since a person confirmed it, what is new and what went away can be said — for the
//! source's skills too, by address, since a skill a same-named sibling re-keys shows up as one
//! address gone and another new.

use std::sync::Arc;

use super::Origin;
use super::cache::ListingCache;
use super::changes::{skill_address, skill_versions};
use super::load::load;
use crate::config::Settings;
use crate::credentials::SecretLookup;
use crate::model::ToolDefinition;
use crate::runs::{Store, StoreError, VersionState};

/// What listing one source again found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refreshed {
    Listed {
        tools: usize,
        /// Tools whose definition differs from the version a person confirmed, and skills
        /// (`skill:SOURCE.NAME`) whose text does.
        changed: Vec<String>,
        /// Tools and skills the previous listing did not have.
        added: Vec<String>,
        /// Tools and skills of the previous listing that are gone.
        gone: Vec<String>,
    },
    /// The source could not be listed; `error` says why.
    Failed { error: String },
}

/// Lists every source of `settings` again, in their order, and records what each has now.
pub async fn refresh_sources(
    settings: &Settings,
    cache: &ListingCache,
    store: &Store,
    secrets: Arc<dyn SecretLookup>,
) -> Result<Vec<(String, Refreshed)>, StoreError> {
    let before: Vec<(String, Vec<ToolDefinition>, Vec<String>)> = settings
        .sources
        .iter()
        .map(|s| {
            let (tools, skills) = cache
                .read(&s.name)
                .map(|l| (l.tools, l.skills.iter().map(skill_address).collect()))
                .unwrap_or_default();
            (s.name.clone(), tools, skills)
        })
        .collect();
    let catalog = load(settings, cache, true, secrets).await;
    // Running hubs take these listings at their next request.
    if let Err(e) = cache.mark_refreshed() {
        tracing::warn!("running hubs will not see this refresh before their own: {e:#}");
    }
    let mut out = Vec::new();
    for namespace in &catalog.namespaces {
        // A source that could not be listed again failed, whether or not an older listing
        // stands in for it meanwhile: the refresh did not happen.
        let failed = match &namespace.origin {
            Origin::Unavailable { error } => Some(error.clone()),
            Origin::Stale { error, .. } => {
                Some(format!("{error} (the listing cached before stays in use)"))
            }
            _ => None,
        };
        if let Some(error) = failed {
            out.push((namespace.name.clone(), Refreshed::Failed { error }));
            continue;
        }
        let states = store.tool_versions().observe(&namespace.tools).await?;
        let skill_states = store
            .tool_versions()
            .observe_seen(skill_versions(&namespace.skills))
            .await?;
        let changed = namespace
            .tools
            .iter()
            .zip(&states)
            .filter(|(_, state)| matches!(state, VersionState::Changed { .. }))
            .map(|(tool, _)| tool.name.clone())
            .chain(
                namespace
                    .skills
                    .iter()
                    .zip(&skill_states)
                    .filter(|(_, state)| matches!(state, VersionState::Changed { .. }))
                    .map(|(skill, _)| skill_address(skill)),
            )
            .collect();
        let (old, old_skills) = before
            .iter()
            .find(|(name, ..)| *name == namespace.name)
            .map(|(_, tools, skills)| (tools.as_slice(), skills.as_slice()))
            .unwrap_or_default();
        let skills: Vec<String> = namespace.skills.iter().map(skill_address).collect();
        let added = namespace
            .tools
            .iter()
            .filter(|t| !old.iter().any(|o| o.name == t.name))
            .map(|t| t.name.clone())
            .chain(skills.iter().filter(|s| !old_skills.contains(*s)).cloned())
            .collect();
        let gone = old
            .iter()
            .filter(|o| !namespace.tools.iter().any(|t| t.name == o.name))
            .map(|o| o.name.clone())
            .chain(old_skills.iter().filter(|s| !skills.contains(*s)).cloned())
            .collect();
        out.push((
            namespace.name.clone(),
            Refreshed::Listed {
                tools: namespace.tools.len(),
                changed,
                added,
                gone,
            },
        ));
    }
    Ok(out)
}

/// One line for a status bar: how many sources were listed, how many tools changed, and the
/// sources that failed.
pub fn summary(results: &[(String, Refreshed)]) -> String {
    let listed = results
        .iter()
        .filter(|(_, r)| matches!(r, Refreshed::Listed { .. }))
        .count();
    let changed: usize = results
        .iter()
        .map(|(_, r)| match r {
            Refreshed::Listed { changed, .. } => changed.len(),
            Refreshed::Failed { .. } => 0,
        })
        .sum();
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| matches!(r, Refreshed::Failed { .. }))
        .map(|(name, _)| name.as_str())
        .collect();
    let mut text = format!("Listed {listed} of {} source(s) again", results.len());
    if changed > 0 {
        text.push_str(&format!(
            "; {changed} tool(s) changed (`capabilities source review`)"
        ));
    }
    if !failed.is_empty() {
        text.push_str(&format!("; failed: {}", failed.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_changes_and_names_failures() {
        let results = vec![
            (
                "time".to_string(),
                Refreshed::Listed {
                    tools: 2,
                    changed: vec!["now".into()],
                    added: vec![],
                    gone: vec![],
                },
            ),
            (
                "web".to_string(),
                Refreshed::Failed {
                    error: "no answer".into(),
                },
            ),
        ];
        assert_eq!(
            summary(&results),
            "Listed 1 of 2 source(s) again; 1 tool(s) changed (`capabilities source review`); failed: web"
        );
    }
}
