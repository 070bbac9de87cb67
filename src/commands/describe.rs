//! `capabilities describe`: exact TypeScript declarations of the tools, namespaces or named
//! types asked for (a type's bare name when one source declares it, and `CallOptions`), within
//! a token budget; `--json` wraps them for scripts. Tools a deny policy hides cannot be
//! described; under `--profile`, only the profile's tools, by its policy.

use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::output::print;
use super::progress::{names, waiting};
use super::{load_catalog, profile_note, require_some_source};
use crate::app::App;
use crate::catalog::describe::describe;
use crate::catalog::results::availability_notes;
use crate::cli::DescribeArgs;
use crate::policy::Action;

pub async fn run(app: &App, args: &DescribeArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    let catalog = waiting(
        app,
        format!("listing the tools of {}", names(&sources)),
        load_catalog(app, &settings, args.refresh),
    )
    .await?;
    require_some_source(app, &catalog)?;
    // Declarations a missing source would have had are not there: say so apart from them.
    for note in availability_notes(&catalog, None, &app.reader).lines() {
        eprintln!("note: {note}");
    }
    let policy = &settings.policy;
    let visible: Vec<_> = catalog
        .namespaces
        .iter()
        .flat_map(|namespace| {
            let connection = namespace.connections.first().map(String::as_str);
            namespace.tools.iter().filter(move |tool| {
                policy
                    .evaluate(&tool.address(), connection, &tool.annotations)
                    .action
                    != Action::Deny
            })
        })
        .cloned()
        .collect();
    match describe(&visible, &args.targets, args.budget as usize) {
        Ok(text) if args.json => {
            let body = json!({
                "profile": settings.profile,
                "targets": args.targets,
                "budget": args.budget,
                "declarations": text,
            });
            print(&format!("{}\n", serde_json::to_string_pretty(&body)?))?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(text) => {
            print(&text)?;
            if !text.ends_with('\n') {
                print("\n")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("{}{}", e.message_for(&app.reader), profile_note(&settings)),
    }
}
