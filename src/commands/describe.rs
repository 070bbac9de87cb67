//! `capabilities describe`: exact TypeScript declarations of the tools, namespaces or named
//! types asked for (a type's bare name when one source declares it, and `CallOptions`), and the
//! instructions of the skills asked for (`skill:NAME`, `skill:SOURCE.NAME`, as the hub's
//! describe), within a token budget; `--json` wraps them for scripts. Tools a deny policy hides
//! cannot be described; under `--profile`, only the profile's tools, by its policy.

use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::output::{eprint_line, print};
use super::progress::{names, waiting};
use super::{load_catalog, profile_note, require_some_source};
use crate::app::App;
use crate::catalog::describe::describe;
use crate::catalog::results::availability_notes;
use crate::cli::DescribeArgs;
use crate::config::{Settings, settle_time};
use crate::model::Permits;
use crate::policy::Action;
use crate::skills::PREFIX;
use crate::skills::describe::is_skill;
use crate::skills::upstream::UpstreamSkill;

pub async fn run(app: &App, args: &DescribeArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let (skills, targets) = if args.targets.iter().any(|t| is_skill(t)) {
        describe_skills(app, &settings, args).await?
    } else {
        (String::new(), args.targets.clone())
    };
    if targets.is_empty() {
        return answer(&settings, args, skills);
    }
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    let catalog = waiting(
        app,
        format!("listing the tools of {}", names(&sources)),
        load_catalog(app, &settings, args.refresh),
    )
    .await?;
    require_some_source(app, &catalog)?;
    // Declarations a missing source would have had are not there: say so apart from them.
    for note in availability_notes(&catalog, None, &app.reader, Permits::ALL).lines() {
        eprint_line(format_args!("note: {note}"));
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
    match describe(&visible, &targets, args.budget as usize) {
        Ok(text) if skills.is_empty() => answer(&settings, args, text),
        Ok(text) => answer(&settings, args, format!("{skills}\n{text}")),
        Err(e) => bail!("{}{}", e.message_for(&app.reader), profile_note(&settings)),
    }
}

/// Prints what was described, as text or (`--json`) wrapped for scripts.
fn answer(settings: &Settings, args: &DescribeArgs, text: String) -> anyhow::Result<ExitCode> {
    if args.json {
        let body = json!({
            "profile": settings.profile,
            "targets": args.targets,
            "budget": args.budget,
            "declarations": text,
        });
        print(&format!("{}\n", serde_json::to_string_pretty(&body)?))?;
    } else {
        print(&text)?;
        if !text.ends_with('\n') {
            print("\n")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The skills among the targets described as the hub describes them (a source's skill fetched
/// from the source, and withheld while a change to it waits for `source review`), and the
/// targets left for the tool catalogue.
async fn describe_skills(
    app: &App,
    settings: &Settings,
    args: &DescribeArgs,
) -> anyhow::Result<(String, Vec<String>)> {
    let engine = app.engine(settings.clone()).await?;
    // Only the sources whose skills are asked for start.
    let sources: Vec<String> = args
        .targets
        .iter()
        .filter(|t| is_skill(t))
        .filter_map(|t| t.trim().strip_prefix(PREFIX)?.split(['.', '/']).next())
        .filter(|name| settings.source(name).is_some())
        .map(str::to_string)
        .collect();
    if !sources.is_empty() {
        engine
            .catalog
            .prepare(&sources, settle_time(&settings.sources))
            .await;
    }
    let changed = engine.executor().changed_tools().await;
    let confirm = engine.policy.current().confirm_changes;
    let withheld = |skill: &UpstreamSkill| changed.withholds(skill, confirm);
    let described = engine
        .catalog
        .describe_skills(
            &settings.skill_dirs,
            &settings.policy,
            Permits::ALL,
            &withheld,
            &args.targets,
            args.budget as usize,
        )
        .await;
    engine.sources.shutdown().await;
    described.map_err(|e| anyhow::anyhow!("{e}{}", profile_note(settings)))
}
