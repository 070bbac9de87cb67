//! `capabilities source add|list|remove|test|import`: edit the sources in the config (one by
//! one, or all of another MCP client's at once), and connect to them to show what each one is
//! doing (`list --profile` only a profile's).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::bail;
use serde_json::json;

use super::EXIT_FAILURE;
use super::output::print;
use super::progress::{names, waiting};
use crate::app::App;
use crate::catalog::cache::{CachedListing, ListingCache};
use crate::catalog::changes::skill_versions;
use crate::catalog::load::list_source;
use crate::cli::{
    SourceAddArgs, SourceImportArgs, SourceListArgs, SourceLoginArgs, SourceNameArgs,
    SourceTestArgs,
};
use crate::config::edit::{NewSource, add_source, remove_source, set_source_enabled};
use crate::config::{Pacing, SourceSettings, Transport, settle_time};
use crate::model::tool::build_namespace;
use crate::oauth::{self, SignInState};
use crate::sources::{SourceStatus, Sources, is_sign_in_message};

pub async fn add(app: &App, args: &SourceAddArgs) -> anyhow::Result<ExitCode> {
    if !args.headers.is_empty() && args.url.is_none() && args.openapi.is_none() {
        bail!("--header goes with --url or --openapi; pass a stdio server's values with --env");
    }
    let source = match (&args.url, args.command.split_first()) {
        _ if args.openapi.is_some() => NewSource::OpenApi {
            spec: openapi_location(args.openapi.as_deref().unwrap_or_default())?,
            base_url: args.base_url.clone(),
            headers: pairs(&args.headers, "--header")?,
            auth: pairs(&args.auth, "--auth")?,
        },
        (Some(url), _) => NewSource::Http {
            url: url.clone(),
            headers: pairs(&args.headers, "--header")?,
        },
        (None, Some((command, rest))) => NewSource::Stdio {
            command: command.clone(),
            args: rest.to_vec(),
            env: pairs(&args.env, "--env")?,
            cwd: args.cwd.clone(),
        },
        (None, None) => bail!(
            "give the command that starts the server after `--`, or an HTTP endpoint with --url"
        ),
    };
    add_source(&app.paths.config_file, &args.name, &source)?;
    print(&format!(
        "Added source `{}` to {}\n",
        args.name,
        app.paths.config_file.display()
    ))?;
    if args.no_test {
        return Ok(ExitCode::SUCCESS);
    }
    test_one(app, &args.name, true, false).await
}

/// `source enable|disable NAME`: sets `enabled` in the config; running hubs follow at their
/// next reload of the config, and every later command at once.
pub fn set_enabled(app: &App, args: &SourceNameArgs, enabled: bool) -> anyhow::Result<ExitCode> {
    let changed = set_source_enabled(&app.paths.config_file, &args.name, enabled)?;
    let state = if enabled { "enabled" } else { "disabled" };
    let text = match (changed, enabled) {
        (false, _) => format!("`{}` was already {state}; nothing changed\n", args.name),
        (true, true) => format!(
            "Enabled `{}` in {}; `{}` connects to it and lists its tools\n",
            args.name,
            app.paths.config_file.display(),
            app.command(&format!("source test {}", args.name))
        ),
        (true, false) => format!(
            "Disabled `{}` in {}: it is not started, searched or callable until `{}`\n",
            args.name,
            app.paths.config_file.display(),
            app.command(&format!("source enable {}", args.name))
        ),
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// An OpenAPI document's location as the config keeps it: a URL as given, a file as an
/// absolute path (the config lives elsewhere than the directory the command ran in).
fn openapi_location(spec: &str) -> anyhow::Result<String> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        return Ok(spec.to_string());
    }
    match std::path::absolute(spec) {
        Ok(path) if path.is_file() => Ok(path.display().to_string()),
        _ => bail!(
            "there is no file at {spec}; give --openapi the path of an OpenAPI document (JSON or YAML) or its http(s) URL"
        ),
    }
}

/// Splits `KEY=VALUE` arguments at the first `=`.
fn pairs(values: &[String], flag: &str) -> anyhow::Result<Vec<(String, String)>> {
    values
        .iter()
        .map(|v| match v.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_string(), value.to_string()))
            }
            _ => bail!("{flag} needs KEY=VALUE, got `{v}`"),
        })
        .collect()
}

pub fn remove(app: &App, args: &SourceNameArgs) -> anyhow::Result<ExitCode> {
    remove_source(&app.paths.config_file, &args.name)?;
    if let Err(e) = ListingCache::new(app.paths.catalog_cache_dir()).remove(&args.name) {
        tracing::warn!(
            "could not delete the cached listing of `{}`: {e}",
            args.name
        );
    }
    print(&format!(
        "Removed source `{}` from {}\n",
        args.name,
        app.paths.config_file.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

pub async fn test(app: &App, args: &SourceTestArgs) -> anyhow::Result<ExitCode> {
    test_one(app, &args.name, false, args.json).await
}

/// Connects to one source, lists its tools, caches the listing and reports (as JSON with
/// `json`, where a failure is a report too, with exit status 1).
async fn test_one(app: &App, name: &str, just_added: bool, json: bool) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let Some(source) = settings.source(name).cloned() else {
        let known: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
        if known.is_empty() {
            bail!(
                "there is no source named `{}`; add one with `{}`",
                crate::error_text::echo(name),
                // A name too long to repeat is no name to copy into a command either.
                app.command(&format!(
                    "source add {} -- COMMAND ARGS…",
                    if name.len() <= crate::error_text::ECHO_BYTES {
                        name
                    } else {
                        "NAME"
                    }
                ))
            );
        }
        bail!(
            "there is no source named `{}`; known sources: {}",
            crate::error_text::echo(name),
            known.join(", ")
        );
    };
    let started = Instant::now();
    let manager = Sources::start(vec![source.clone()], app.secrets());
    waiting(
        app,
        format!("connecting to {name}"),
        manager.wait_settled(settle_time(std::slice::from_ref(&source))),
    )
    .await;
    let status = manager
        .statuses()
        .into_iter()
        .map(|(_, s)| s)
        .next()
        .unwrap_or(SourceStatus::Connecting);
    let listed = match &status {
        SourceStatus::Ready { .. } => Some(list_source(&manager, name).await),
        _ => None,
    };
    manager.shutdown().await;
    let elapsed = started.elapsed();
    // Tried now whatever failed before: later commands go by this outcome.
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    match (&status, &listed) {
        (SourceStatus::Ready { .. }, Some(Ok(_))) => cache.clear_failure(name),
        (_, Some(Err(e))) => cache.record_failure(&source, &e.to_string()),
        (SourceStatus::Failed { error }, _) => cache.record_failure(&source, error),
        _ => {}
    }
    match (status, listed) {
        (
            SourceStatus::Ready {
                protocol_version,
                server_name,
                server_version,
                ..
            },
            Some(Ok((tools, skills))),
        ) => {
            let cached = cache.read(name);
            // Addresses stay as the cached listing had them: rules and decisions name them.
            let before = cached
                .as_ref()
                .map(|old| old.tools.as_slice())
                .unwrap_or_default();
            let tools = build_namespace(name, tools, before);
            // A failed skill listing keeps the skills cached before.
            let skills = skills.unwrap_or_else(|| cached.map(|old| old.skills).unwrap_or_default());
            let versions = skill_versions(&skills);
            let listing = CachedListing::new(&source, tools.clone()).with_skills(skills);
            if let Err(e) = cache.write(name, &listing) {
                tracing::warn!("cannot cache the tools of `{name}`: {e:#}");
            }
            // The tools and skills as the user added (or tested) the source: the versions a
            // later change is measured against.
            let recorded = match app.store().await {
                Ok(store) => {
                    let observed = store.tool_versions().observe(&tools).await;
                    match observed {
                        Ok(_) => store.tool_versions().observe_seen(versions).await,
                        Err(e) => Err(e),
                    }
                    .map(|_| ())
                    .map_err(anyhow::Error::from)
                }
                Err(e) => Err(e),
            };
            if let Err(e) = recorded {
                tracing::warn!("cannot record the versions of `{name}`'s tools: {e:#}");
            }
            if json {
                let report = json!({
                    "name": name,
                    "status": "ready",
                    "toolCount": tools.len(),
                    "protocolVersion": protocol_version,
                    "server": { "name": server_name, "version": server_version },
                    "elapsedMs": elapsed.as_millis() as u64,
                    "tools": tools.iter().map(|t| t.address()).collect::<Vec<_>>(),
                });
                print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
                return Ok(ExitCode::SUCCESS);
            }
            let server = [server_name, server_version]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            let protocol = if protocol_version.starts_with("OpenAPI") {
                protocol_version
            } else {
                format!("MCP {protocol_version}")
            };
            let mut text = format!(
                "`{name}` is ready: {} tools, {protocol}{}, answered in {:.1} s\n",
                tools.len(),
                if server.is_empty() {
                    String::new()
                } else {
                    format!(", server {server}")
                },
                elapsed.as_secs_f64()
            );
            for tool in &tools {
                text.push_str(&format!("  {}\n", tool.address()));
            }
            print(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        // A server that asks for a sign-in works once the person gives one: offer it.
        (SourceStatus::Failed { error }, _) if just_added && is_sign_in_message(&error) => {
            offer_sign_in(app, name).await
        }
        (_, Some(Err(e))) if json => failed_report(name, &format!("listing its tools failed: {e}")),
        (_, Some(Err(e))) => bail!("`{name}` connected but listing its tools failed: {e}"),
        (status, _) if json => failed_report(name, &status.to_string()),
        (status, _) => {
            let after = if status == SourceStatus::Disabled {
                format!(
                    "Turn it on with `{}`.",
                    app.command(&format!("source enable {name}"))
                )
            } else if just_added {
                format!(
                    "The source was added; fix it and run `{}`, or remove it with `{}`.",
                    app.command(&format!("source test {name}")),
                    app.command(&format!("source remove {name}"))
                )
            } else {
                format!(
                    "Check the command or URL with `{}`, or edit [sources.{name}] in {}.",
                    app.command("source list"),
                    app.paths.config_file.display()
                )
            };
            bail!("`{name}` is not working: {status}\n{after}")
        }
    }
}

/// After `source add --url` of a server that answered with an OAuth challenge: sign in now when
/// a person is at the terminal and says yes, else say how to.
async fn offer_sign_in(app: &App, name: &str) -> anyhow::Result<ExitCode> {
    let login = app.command(&format!("source login {name}"));
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if interactive {
        print(&format!(
            "`{name}` asks you to sign in (OAuth). Sign in now in your browser? [Y/n] "
        ))?;
        let answer = super::prompt::read_line().await?.unwrap_or_default();
        if !answer.trim().to_ascii_lowercase().starts_with('n') {
            let args = SourceLoginArgs {
                name: name.to_string(),
                connection: None,
                no_browser: false,
            };
            return super::login::login(app, &args).await;
        }
    }
    print(&format!(
        "`{name}` asks you to sign in (OAuth); run `{login}` to sign in in your browser. Until then, runs that call it wait for the sign-in.\n"
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// `source test --json` of a source that does not work: the report, and exit status 1.
fn failed_report(name: &str, error: &str) -> anyhow::Result<ExitCode> {
    let report = json!({ "name": name, "status": "failed", "error": error });
    print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    Ok(ExitCode::from(EXIT_FAILURE))
}

pub async fn list(app: &App, args: &SourceListArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings_for(args.profile.as_deref())?;
    if settings.sources.is_empty() {
        if args.json {
            print("[]\n")?;
        } else if let Some(profile) = &settings.profile {
            print(&format!(
                "Profile `{profile}` has no sources.\nName some in [profiles.{profile}] sources = [\"…\"] in {}\n",
                app.paths.config_file.display()
            ))?;
        } else {
            print(&format!(
                "No sources in {}.\nAdd one, e.g.: capabilities source add everything -- npx -y @modelcontextprotocol/server-everything\n",
                app.paths.config_file.display()
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let enabled: Vec<&str> = settings
        .sources
        .iter()
        .filter(|s| s.enabled)
        .map(|s| s.name.as_str())
        .collect();
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    let statuses = waiting(
        app,
        format!("connecting to {}", names(&enabled)),
        live_statuses(&settings.sources, &cache, settings.pacing, app.secrets()),
    )
    .await;
    let sign_ins = oauth::stored_sign_ins(&app.credentials(), &settings.sources);
    if args.json {
        let rows: Vec<serde_json::Value> = settings
            .sources
            .iter()
            .zip(&statuses)
            .map(|(s, status)| {
                let mut row = json_row(s, status);
                let mine: serde_json::Map<String, serde_json::Value> = sign_ins
                    .iter()
                    .filter(|sign_in| sign_in.source == s.name)
                    .map(|sign_in| (sign_in.connection.clone(), sign_in_json(&sign_in.state)))
                    .collect();
                if !mine.is_empty() {
                    row["signIn"] = serde_json::Value::Object(mine);
                }
                row
            })
            .collect();
        print(&format!("{}\n", serde_json::to_string_pretty(&rows)?))?;
    } else {
        if let Some(header) = settings.profile_header() {
            print(&format!("{header}\n\n"))?;
        }
        print(&table(&settings.sources, &statuses))?;
        if !sign_ins.is_empty() {
            let now = oauth::now_secs();
            let mut text = String::from("\nSign-ins:\n");
            for sign_in in &sign_ins {
                let state = match &sign_in.state {
                    Ok(state) => state.describe(now),
                    Err(error) => format!("cannot be read: {error}"),
                };
                text.push_str(&format!(
                    "  {} ({}): {state}\n",
                    sign_in.source, sign_in.connection
                ));
            }
            print(&text)?;
        }
    }
    // Every enabled source failing is an error, as a command whose every target failed is.
    let working = statuses
        .iter()
        .filter(|s| !matches!(s, SourceStatus::Disabled))
        .collect::<Vec<_>>();
    let all_failed = !working.is_empty()
        && working.iter().all(|s| {
            matches!(
                s,
                SourceStatus::Failed { .. } | SourceStatus::Restarting { .. }
            )
        });
    Ok(if all_failed {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// Each source's status now: connected to, except a source whose connect failed lately, which
/// shows that failure (`failed 20 s ago: …`) until `source test` tries it again or its backoff
/// ends. What this connect finds is remembered for later commands.
async fn live_statuses(
    sources: &[SourceSettings],
    cache: &ListingCache,
    pacing: Pacing,
    secrets: Arc<dyn crate::credentials::SecretLookup>,
) -> Vec<SourceStatus> {
    let held: Vec<(String, String)> = sources
        .iter()
        .filter(|s| s.enabled)
        .filter_map(|s| {
            let failed = cache.holding_failure(s)?;
            Some((s.name.clone(), failed.explain(&s.name)))
        })
        .collect();
    let to_connect: Vec<SourceSettings> = sources
        .iter()
        .filter(|s| !held.iter().any(|(name, _)| *name == s.name))
        .cloned()
        .collect();
    let manager = Sources::start_paced(to_connect.clone(), secrets, pacing);
    manager.wait_settled(settle_time(&to_connect)).await;
    let statuses = manager.statuses();
    manager.shutdown().await;
    sources
        .iter()
        .map(|s| {
            if let Some((_, error)) = held.iter().find(|(name, _)| *name == s.name) {
                return SourceStatus::Failed {
                    error: error.clone(),
                };
            }
            let status = statuses
                .iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, st)| st.clone())
                .unwrap_or(SourceStatus::Disabled);
            match &status {
                SourceStatus::Ready { .. } => cache.clear_failure(&s.name),
                SourceStatus::Failed { error } => cache.record_failure(s, error),
                _ => {}
            }
            status
        })
        .collect()
}

fn sign_in_json(state: &Result<SignInState, String>) -> serde_json::Value {
    match state {
        Ok(SignInState::SignedIn {
            expires_at,
            refreshable,
        }) => json!({ "state": "signed_in", "expiresAt": expires_at, "refreshable": refreshable }),
        Ok(state) => json!({ "state": state.word() }),
        Err(error) => json!({ "state": "unreadable", "error": error }),
    }
}

fn status_word(status: &SourceStatus) -> &'static str {
    match status {
        SourceStatus::Idle => "idle",
        SourceStatus::Connecting => "connecting",
        SourceStatus::Ready { .. } => "ready",
        SourceStatus::Failed { .. } => "failed",
        SourceStatus::Restarting { .. } => "restarting",
        SourceStatus::Disabled => "disabled",
    }
}

fn json_row(source: &SourceSettings, status: &SourceStatus) -> serde_json::Value {
    let (transport, target) = match &source.transport {
        Transport::Stdio { .. } => ("stdio", source.transport.describe()),
        Transport::Http { url } => ("http", url.clone()),
        Transport::OpenApi { spec, .. } => ("openapi", spec.clone()),
    };
    let mut row = json!({
        "name": source.name,
        "transport": transport,
        "target": target,
        "connections": source.connections.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
        "defaultConnection": source.default_connection().name,
        "status": status_word(status),
    });
    match status {
        SourceStatus::Ready {
            protocol_version,
            server_name,
            server_version,
            tool_count,
        } => {
            row["toolCount"] = json!(tool_count);
            row["protocolVersion"] = json!(protocol_version);
            row["server"] = json!({ "name": server_name, "version": server_version });
        }
        SourceStatus::Failed { error } => row["error"] = json!(error),
        SourceStatus::Restarting { last_error, .. } => row["error"] = json!(last_error),
        SourceStatus::Idle | SourceStatus::Connecting | SourceStatus::Disabled => {}
    }
    row
}

fn table(sources: &[SourceSettings], statuses: &[SourceStatus]) -> String {
    let width = sources
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:width$}  {:10}  {:>5}  {}\n",
        "NAME", "STATUS", "TOOLS", "SERVER"
    );
    let mut errors = String::new();
    for (source, status) in sources.iter().zip(statuses) {
        let tools = match status {
            SourceStatus::Ready { tool_count, .. } => tool_count.to_string(),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "{:width$}  {:10}  {:>5}  {}\n",
            source.name,
            status_word(status),
            tools,
            source.transport.describe()
        ));
        match status {
            SourceStatus::Failed { error }
            | SourceStatus::Restarting {
                last_error: error, ..
            } => {
                errors.push_str(&format!("\n{}: {error}\n", source.name));
            }
            _ => {}
        }
    }
    out.push_str(&errors);
    out
}

/// Imports the servers of another MCP client's config, reporting each one imported or skipped.
pub fn import(app: &App, args: &SourceImportArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow::anyhow!(
            "there is no file at {}; pass the client's config, e.g. ~/.cursor/mcp.json",
            args.file.display()
        ),
        _ => anyhow::Error::new(e).context(format!("cannot read {}", args.file.display())),
    })?;
    let entries = crate::config::import::read_client_config(&args.file, &text)?;
    let existing: Vec<String> = match crate::config::load(&app.paths.config_file) {
        Ok(settings) => settings.sources.into_iter().map(|s| s.name).collect(),
        Err(_) if !app.paths.config_file.exists() => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let (mut imported, mut skipped, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
    for entry in entries {
        let renamed = if entry.name == entry.original {
            String::new()
        } else {
            format!(" (was \"{}\")", entry.original)
        };
        let source = match entry.outcome {
            Ok(_) if existing.contains(&entry.name) => {
                skipped.push(format!(
                    "{}{renamed}: a source with that name is already configured",
                    entry.name
                ));
                continue;
            }
            Ok(source) => source,
            Err(reason) => {
                skipped.push(format!("{}{renamed}: {reason}", entry.original));
                continue;
            }
        };
        if !args.dry_run
            && let Err(e) = add_source(&app.paths.config_file, &entry.name, &source)
        {
            skipped.push(format!("{}{renamed}: {e:#}", entry.name));
            continue;
        }
        let target = match &source {
            NewSource::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            NewSource::Http { url, .. } => url.clone(),
            NewSource::OpenApi { spec, .. } => spec.clone(),
        };
        imported.push(format!("{}{renamed}  {target}", entry.name));
        warnings.extend(
            entry
                .warnings
                .into_iter()
                .map(|w| format!("{}: {w}", entry.name)),
        );
    }
    let verb = if args.dry_run {
        "Would import"
    } else {
        "Imported"
    };
    let mut out = format!(
        "{verb} {} source(s) from {} into {}",
        imported.len(),
        args.file.display(),
        app.paths.config_file.display()
    );
    out.push_str(if imported.is_empty() { ".\n" } else { ":\n" });
    imported
        .iter()
        .for_each(|line| out.push_str(&format!("  {line}\n")));
    if !skipped.is_empty() {
        out.push_str(&format!("Skipped {}:\n", skipped.len()));
        skipped
            .iter()
            .for_each(|line| out.push_str(&format!("  {line}\n")));
    }
    if !warnings.is_empty() {
        out.push_str("Check:\n");
        warnings
            .iter()
            .for_each(|line| out.push_str(&format!("  {line}\n")));
    }
    if !imported.is_empty() && !args.dry_run {
        out.push_str(&format!(
            "Run `{}` to connect to them and see their tools.\n",
            app.command("source list")
        ));
    }
    print(&out)?;
    Ok(if imported.is_empty() && !skipped.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
