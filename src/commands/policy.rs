//! `capabilities policy show|set|explain`: the allow / ask / deny policy from the terminal, the
//! config's or, with `--profile`, a profile's (the config's defaults with the profile's own
//! rules, over its sources only). These read tool listings from the cache only, so they never
//! start a server.

use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::output::print;
use super::profile_note;
use crate::app::App;
use crate::catalog::cache::ListingCache;
use crate::cli::{PolicyAction, PolicyCommand, PolicyExplainArgs, PolicySetArgs, PolicyShowArgs};
use crate::config::Settings;
use crate::config::edit::{ConfigLock, add_rule};
use crate::model::ToolDefinition;
use crate::policy::{Action, unmatched_rules};

pub fn run(app: &App, command: &PolicyCommand) -> anyhow::Result<ExitCode> {
    match command {
        PolicyCommand::Show(args) => show(app, args),
        PolicyCommand::Set(args) => set(app, args),
        PolicyCommand::Explain(args) => explain(app, args),
    }
}

/// Every tool of every enabled source of `settings` (a profile's, when narrowed), as last listed.
fn cached_tools(app: &App, settings: &Settings) -> Vec<ToolDefinition> {
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    settings
        .sources
        .iter()
        .filter(|s| s.enabled)
        .filter_map(|s| cache.read(&s.name))
        .flat_map(|listing| listing.tools)
        .collect()
}

fn show(app: &App, args: &PolicyShowArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let policy = &settings.policy;
    let mut text = String::new();
    if let Some(header) = settings.profile_header() {
        text.push_str(&format!(
            "{header}\nThe profile's own rules replace the config's [[policy.rules]]; the defaults are the config's.\n"
        ));
    }
    text.push_str(&format!(
        "Defaults: read-only tools {}, destructive tools {}, every other tool {}.\n",
        policy.read_only, policy.destructive, policy.default
    ));
    let set = match &settings.profile {
        Some(profile) => {
            format!("capabilities policy set PATTERN allow|ask|deny --profile {profile}")
        }
        None => "capabilities policy set PATTERN allow|ask|deny".to_string(),
    };
    if policy.rules.is_empty() {
        text.push_str(&format!("No rules. Add one with `{set}`.\n"));
    } else {
        text.push_str("Rules (the most specific wins; among equals, the most restrictive):\n");
        for rule in &policy.rules {
            let on = rule
                .connection
                .as_deref()
                .map(|c| format!("  (connection {c})"))
                .unwrap_or_default();
            text.push_str(&format!("  {:5}  {}{on}\n", rule.action, rule.pattern));
        }
    }
    // The whole config's view lists its profiles; a profile's view is that profile alone.
    if settings.profile.is_none() {
        for (name, profile) in &settings.profiles {
            text.push_str(&format!(
                "Profile `{name}`: sources {}; {} rule(s) of its own (`policy show --profile {name}`).\n",
                profile.sources.join(", "),
                profile.policy.rules.len()
            ));
        }
    }
    let addresses: Vec<String> = cached_tools(app, &settings)
        .iter()
        .map(ToolDefinition::address)
        .collect();
    if args.json {
        let rules: Vec<_> = policy
            .rules
            .iter()
            .map(|rule| {
                json!({
                    "pattern": rule.pattern,
                    "action": rule.action.as_str(),
                    "connection": rule.connection,
                })
            })
            .collect();
        let unmatched: Vec<&str> = if addresses.is_empty() {
            Vec::new()
        } else {
            unmatched_rules(policy, &addresses)
                .iter()
                .map(|r| r.pattern.as_str())
                .collect()
        };
        let profiles: Vec<_> = settings
            .profiles
            .iter()
            .filter(|_| settings.profile.is_none())
            .map(|(name, profile)| {
                json!({ "name": name, "sources": profile.sources, "rules": profile.policy.rules.len() })
            })
            .collect();
        let body = json!({
            "profile": settings.profile,
            "defaults": {
                "readOnly": policy.read_only.as_str(),
                "destructive": policy.destructive.as_str(),
                "default": policy.default.as_str(),
            },
            "rules": rules,
            "unmatchedRules": unmatched,
            "profiles": profiles,
        });
        print(&format!("{}\n", serde_json::to_string_pretty(&body)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if addresses.is_empty() {
        text.push_str(
            "No tool listings are cached yet; `capabilities source list` lists every source.\n",
        );
    } else {
        for rule in unmatched_rules(policy, &addresses) {
            text.push_str(&format!("warning: rule `{}` matches no tool; check its spelling with `capabilities search`\n", rule.pattern));
        }
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn set(app: &App, args: &PolicySetArgs) -> anyhow::Result<ExitCode> {
    let action = match args.action {
        PolicyAction::Allow => Action::Allow,
        PolicyAction::Ask => Action::Ask,
        PolicyAction::Deny => Action::Deny,
    };
    // An unknown profile is refused here, with the profiles there are, before the file changes.
    app.settings_for(args.profile.as_deref())?;
    add_rule(
        &ConfigLock::acquire(&app.paths.config_file)?,
        args.profile.as_deref(),
        &args.pattern,
        action,
        args.connection.as_deref(),
        None,
    )?;
    let settings = app.settings_for(args.profile.as_deref())?;
    let addresses: Vec<String> = cached_tools(app, &settings)
        .iter()
        .map(ToolDefinition::address)
        .collect();
    let place = match &settings.profile {
        Some(profile) => format!(" (profile `{profile}`)"),
        None => String::new(),
    };
    let mut text = format!(
        "{} {} in {}{place}\n",
        action,
        args.pattern,
        app.paths.config_file.display()
    );
    if !addresses.is_empty()
        && unmatched_rules(&settings.policy, &addresses)
            .iter()
            .any(|r| r.pattern == args.pattern)
    {
        text.push_str(&format!(
            "warning: `{}` matches no tool yet; check its spelling with `capabilities search`\n",
            args.pattern
        ));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn explain(app: &App, args: &PolicyExplainArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    let tools = cached_tools(app, &settings);
    let Some(tool) = tools.iter().find(|t| t.address() == args.address) else {
        let namespace = args.address.split('.').next().unwrap_or_default();
        if let Some(profile) = &settings.profile
            && settings.left_out.iter().any(|s| s == namespace)
        {
            let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
            bail!(
                "`{}` is not in profile `{profile}`: its source `{namespace}` is not one of the profile's ({}), so no run under it can call the tool",
                args.address,
                sources.join(", ")
            );
        }
        let addresses: Vec<String> = tools.iter().map(ToolDefinition::address).collect();
        let near =
            crate::model::closest::closest(&args.address, addresses.iter().map(String::as_str), 3);
        if near.is_empty() {
            bail!(
                "`{}` is not a catalogued tool; find addresses with `{}`{}",
                args.address,
                app.command("search WORDS"),
                profile_note(&settings)
            );
        }
        bail!(
            "`{}` is not a catalogued tool; closest: {}{}",
            args.address,
            near.join(", "),
            profile_note(&settings)
        );
    };
    let source = settings.source(&tool.namespace);
    let connection = args
        .connection
        .clone()
        .or_else(|| source.map(|s| s.default_connection().name.clone()));
    if let (Some(source), Some(wanted)) = (source, &args.connection)
        && source.connection(wanted).is_none()
    {
        let known: Vec<&str> = source.connections.iter().map(|c| c.name.as_str()).collect();
        bail!(
            "source `{}` has no connection `{wanted}`; its connections: {}",
            tool.namespace,
            known.join(", ")
        );
    }
    let decision =
        settings
            .policy
            .evaluate(&tool.address(), connection.as_deref(), &tool.annotations);
    if args.json {
        let body = json!({
            "address": tool.address(),
            "connection": connection,
            "profile": settings.profile,
            "action": decision.action.as_str(),
            "reason": decision.reason,
        });
        print(&format!("{}\n", serde_json::to_string_pretty(&body)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut on = connection
        .map(|c| format!(" through connection `{c}`"))
        .unwrap_or_default();
    if let Some(profile) = &settings.profile {
        on.push_str(&format!(" under profile `{profile}`"));
    }
    print(&format!(
        "{}{on}: {}\n  because {}\n",
        tool.address(),
        decision.action,
        decision.reason
    ))?;
    Ok(ExitCode::SUCCESS)
}
