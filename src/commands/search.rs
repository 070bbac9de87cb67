//! `capabilities search`: load the catalogue (cached listings, live where needed) and print the
//! spec's plain-text answer (or `--json`); under `--profile`, only the profile's tools, marked
//! by its policy, after a line that names the profile. Like grep, it exits 1 when nothing
//! matched; notes about sources that were not searched go to stderr, apart from the results.

use std::process::ExitCode;

use serde_json::json;

use super::output::{eprint_line, print};
use super::progress::{names, waiting};
use super::{EXIT_FAILURE, load_catalog, profile_note, require_some_source};
use crate::app::App;
use crate::catalog::changes::ChangedTools;
use crate::catalog::results::{SearchRequest, search_answer};
use crate::catalog::search::SearchIndex;
use crate::cli::SearchArgs;
use crate::model::Permits;
use crate::skills::Skills;
use crate::skills::index::{INDEX_NAMESPACE, documents};

pub async fn run(app: &App, args: &SearchArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    let catalog = waiting(
        app,
        format!("listing the tools of {}", names(&sources)),
        load_catalog(app, &settings, args.refresh),
    )
    .await?;
    require_some_source(app, &catalog)?;
    let mut index = SearchIndex::new();
    for namespace in &catalog.namespaces {
        index.set_namespace(&namespace.name, &namespace.tools);
    }
    // A source's skills show while one of its tools does.
    let skills = Skills::load(&settings.skill_dirs)
        .with_upstream(&catalog.reachable_skills(&settings.policy, Permits::ALL));
    index.set_namespace(INDEX_NAMESPACE, &documents(&skills));
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
        permits: Permits::ALL,
        changed: Some(&changed),
        reader: &app.reader,
        skills: Some(&skills),
    };
    let answer = match search_answer(&catalog, &index, &settings.policy, &request) {
        Ok(answer) => answer,
        Err(e) => anyhow::bail!("{e}{}", profile_note(&settings)),
    };
    let notes: Vec<&str> = answer.notes.lines().collect();
    let matched = !answer.hits.is_empty();
    if args.json {
        print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({
                "profile": settings.profile,
                "matches": answer.hits,
                "notes": notes,
            }))?
        ))?;
    } else if matched {
        if let Some(header) = settings.profile_header() {
            print(&format!("{header}\n\n"))?;
        }
        print(&answer.text)?;
    } else {
        // Like grep: no match prints nothing on stdout, and says why on stderr.
        eprint!("{}", crate::printable::escaped(&answer.text));
        let note = profile_note(&settings);
        if !note.is_empty() {
            eprint_line(format_args!("{}", note.trim_start_matches('\n')));
        }
    }
    for note in notes.iter().filter(|_| !args.json) {
        eprint_line(format_args!("note: {note}"));
    }
    Ok(if matched {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}
