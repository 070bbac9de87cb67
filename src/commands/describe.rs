//! `capabilities describe`: exact TypeScript declarations of the tools, namespaces or named
//! types asked for, within a token budget. Tools a deny policy hides cannot be described; under
//! `--profile`, only the profile's tools, by its policy.

use std::process::ExitCode;

use anyhow::bail;

use super::output::print;
use super::{load_catalog, profile_note};
use crate::app::App;
use crate::catalog::describe::describe;
use crate::cli::DescribeArgs;
use crate::policy::Action;

pub async fn run(app: &App, args: &DescribeArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let catalog = load_catalog(app, &settings, args.refresh).await?;
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
        Ok(text) => {
            print(&text)?;
            if !text.ends_with('\n') {
                print("\n")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("{e}{}", profile_note(&settings)),
    }
}
