//! `capabilities source refresh|review`: list sources again on demand and say which tools and
//! sources' skills changed, and show each change as a diff from the version the user
//! confirmed, confirming it. A changed tool that may write asks before each call until it is
//! confirmed here (or allowed "always" from an approval); a changed skill's text is withheld
//! from the model until it is confirmed here.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;

use super::output::{eprint_line, print};
use super::progress::{names, waiting};
use crate::app::App;
use crate::catalog::Catalog;
use crate::catalog::cache::ListingCache;
use crate::catalog::changes::{
    ChangedTools, review_diff, skill_address, skill_identity, skill_review_diff,
};
use crate::catalog::load::load;
use crate::catalog::refresh::{Refreshed, refresh_sources};
use crate::cli::{SourceRefreshArgs, SourceReviewArgs};
use crate::config::Settings;
use crate::model::ToolDefinition;
use crate::runs::Store;
use crate::skills::upstream::{SkillTexts, UpstreamSkill};
use crate::sources::Sources;

pub async fn refresh(app: &App, args: &SourceRefreshArgs) -> anyhow::Result<ExitCode> {
    let settings = only(app.settings()?, args.name.as_deref())?;
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    let store = app.store().await?;
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    let results = waiting(
        app,
        format!("listing {} again", names(&sources)),
        refresh_sources(&settings, &cache, &store, app.secrets()),
    )
    .await?;
    let mut text = String::new();
    let mut any_changed = false;
    for (name, refreshed) in &results {
        let (tools, changed, added, gone) = match refreshed {
            Refreshed::Failed { error } => {
                text.push_str(&format!("{name}: not listed: {error}\n"));
                continue;
            }
            Refreshed::Listed {
                tools,
                changed,
                added,
                gone,
            } => (tools, changed, added, gone),
        };
        text.push_str(&format!("{name}: {tools} tools"));
        for (what, names) in [
            ("changed since confirmed", changed),
            ("new", added),
            ("gone", gone),
        ] {
            if !names.is_empty() {
                text.push_str(&format!("; {what}: {}", names.join(", ")));
            }
        }
        text.push('\n');
        any_changed |= !changed.is_empty();
    }
    if any_changed {
        text.push_str(&format!(
            "Review the changes with `{}`; until then a changed tool that may write asks before each call.\n",
            app.command(&format!(
                "source review{}",
                args.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            ))
        ));
    }
    print(&text)?;
    // Like `source list`: nothing listed at all is a failure.
    let all_failed = !results.is_empty()
        && results
            .iter()
            .all(|(_, r)| matches!(r, Refreshed::Failed { .. }));
    Ok(if all_failed {
        ExitCode::from(super::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

pub async fn review(app: &App, args: &SourceReviewArgs) -> anyhow::Result<ExitCode> {
    let settings = only(app.settings()?, args.name.as_deref())?;
    let Some(store) = app.existing_store().await? else {
        print("No tool or skill has changed: nothing was recorded here yet.\n")?;
        return Ok(ExitCode::SUCCESS);
    };
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    let catalog: Catalog = load(&settings, &cache, false, app.secrets()).await;
    let unconfirmed = store.tool_versions().unconfirmed().await?;
    let changed = ChangedTools::listed(&catalog, &unconfirmed);
    let tools: Vec<&ToolDefinition> = catalog
        .tools()
        .filter(|t| changed.contains(&t.address()))
        .collect();
    let skills: Vec<UpstreamSkill> = catalog
        .upstream_skills()
        .into_iter()
        .filter(|s| changed.contains(&skill_address(s)))
        .collect();
    if tools.is_empty() && skills.is_empty() {
        print("No tool or skill has changed since it was confirmed.\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut left = review_skills(app, &settings, &store, &skills, args.yes, interactive).await?;
    for tool in tools {
        let before = store
            .tool_versions()
            .last_confirmed(&tool.address(), None)
            .await?;
        let before_tool: Option<ToolDefinition> =
            before.and_then(|b| serde_json::from_value(b.definition).ok());
        print(&format!(
            "{} changed{}:\n{}\n",
            tool.address(),
            if before_tool.is_none() {
                " (no version of it was ever confirmed)"
            } else {
                ""
            },
            review_diff(before_tool.as_ref(), tool)
        ))?;
        let confirm = args.yes || (interactive && ask(&tool.address()).await?);
        if confirm {
            store
                .tool_versions()
                .confirm(&tool.address(), &tool.hash, "source review")
                .await?;
            print(&format!("Confirmed {}.\n\n", tool.address()))?;
        } else {
            left += 1;
        }
    }
    if left > 0 {
        print(&format!(
            "{left} change(s) not confirmed; calls of those tools that may write keep asking, and those skills' text stays withheld from the model. Confirm with `{}`.\n",
            app.command(&format!(
                "source review{} --yes",
                args.name
                    .as_deref()
                    .map(|n| format!(" {n}"))
                    .unwrap_or_default()
            ))
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Shows each changed skill of a source (its new `SKILL.md` fetched from the source and
/// verified, against the confirmed one when that was ever fetched) and confirms it; returns
/// how many were left unconfirmed. A skill whose text cannot be fetched is not confirmed: a
/// person confirms text they saw.
async fn review_skills(
    app: &App,
    settings: &Settings,
    store: &Store,
    skills: &[UpstreamSkill],
    yes: bool,
    interactive: bool,
) -> anyhow::Result<usize> {
    if skills.is_empty() {
        return Ok(0);
    }
    let texts = SkillTexts::beside(&app.paths.catalog_cache_dir());
    let sources = Sources::lazy(settings.sources.clone(), app.secrets(), settings.pacing);
    let mut left = 0;
    for skill in skills {
        let address = skill_address(skill);
        let now = waiting(
            app,
            format!("fetching the SKILL.md of {address}"),
            skill.skill_md(&sources, &texts),
        )
        .await;
        let now = match now {
            Ok(text) => text,
            Err(e) => {
                print(&format!(
                    "{address} changed, but its new SKILL.md cannot be shown: {e}\nNot confirmed.\n\n"
                ))?;
                left += 1;
                continue;
            }
        };
        let before: Option<UpstreamSkill> = store
            .tool_versions()
            .last_confirmed(&address, Some(&skill_identity(skill)))
            .await?
            .and_then(|b| serde_json::from_value(b.definition).ok());
        let before_text = before
            .as_ref()
            .and_then(|b| b.skill_md_file().and_then(|f| texts.get(&f.digest)));
        print(&format!(
            "{address} (a skill of source `{}`) changed{}:\n{}\n",
            skill.source,
            if before.is_none() {
                " (no version of it was ever confirmed)"
            } else {
                ""
            },
            skill_review_diff(before.as_ref(), before_text.as_deref(), skill, &now)
        ))?;
        if yes || (interactive && ask(&address).await?) {
            store
                .tool_versions()
                .confirm(&address, &skill.version, "source review")
                .await?;
            print(&format!("Confirmed {address}.\n\n"))?;
        } else {
            left += 1;
        }
    }
    sources.shutdown().await;
    Ok(left)
}

/// Asks on the terminal whether to confirm the change of `address`.
async fn ask(address: &str) -> anyhow::Result<bool> {
    loop {
        eprint!(
            "{}",
            crate::printable::escaped(&format!("Confirm this version of {address}? [y/N] "))
        );
        std::io::stderr().flush()?;
        let Some(answer) = super::prompt::read_line().await? else {
            return Ok(false);
        };
        match answer.trim() {
            "y" | "Y" | "yes" => return Ok(true),
            "" | "n" | "N" | "no" => return Ok(false),
            _ => eprint_line(format_args!("Type y or n.")),
        }
    }
}

/// The settings with only the source named `name`, if one is given.
fn only(mut settings: Settings, name: Option<&str>) -> anyhow::Result<Settings> {
    let Some(name) = name else {
        return Ok(settings);
    };
    if settings.source(name).is_none() {
        let known: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "there is no source named `{name}`; {}",
            if known.is_empty() {
                "add one with `capabilities source add NAME -- COMMAND ARGS…`".to_string()
            } else {
                format!("known sources: {}", known.join(", "))
            }
        );
    }
    settings.sources.retain(|s| s.name == name);
    Ok(settings)
}
