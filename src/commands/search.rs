//! `capabilities search`: load the catalogue (cached listings, live where needed) and print the
//! spec's plain-text answer; under `--profile`, only the profile's tools, marked by its policy,
//! after a line that names the profile.

use std::process::ExitCode;

use anyhow::bail;

use super::output::print;
use super::{load_catalog, profile_note};
use crate::app::App;
use crate::catalog::changes::ChangedTools;
use crate::catalog::results::{SearchRequest, render_search};
use crate::catalog::search::SearchIndex;
use crate::cli::SearchArgs;

pub async fn run(app: &App, args: &SearchArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let catalog = load_catalog(app, &settings, args.refresh).await?;
    let mut index = SearchIndex::new();
    for namespace in &catalog.namespaces {
        index.set_namespace(&namespace.name, &namespace.tools);
    }
    // Only a store that exists knows of changes; searching does not create one.
    let unconfirmed = match app.existing_store().await? {
        Some(store) => store.tool_versions().unconfirmed().await?,
        None => Vec::new(),
    };
    let changed = ChangedTools::listed(&catalog, &unconfirmed);
    let request = SearchRequest {
        query: &args.query,
        namespace: args.namespace.as_deref(),
        limit: usize::from(args.limit),
        // The user at their own terminal may see every tool the policy allows.
        permits: None,
        changed: Some(&changed),
    };
    match render_search(&catalog, &index, &settings.policy, &request) {
        Ok(text) => {
            if let Some(header) = settings.profile_header() {
                print(&format!("{header}\n\n"))?;
            }
            print(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("{e}{}", profile_note(&settings)),
    }
}
