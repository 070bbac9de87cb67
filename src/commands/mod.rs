//! One function per verb, and the plumbing they share: loading settings, logging to stderr,
//! printing to stdout (a closed pipe is not an error), and mapping outcomes to exit codes.

mod approvals;
mod background;
mod call;
mod completions;
mod credential;
mod dashboard;
mod doctor;
pub use completions::generated_files;
mod describe;
mod exec;
mod freshness;
mod hub;
mod init;
mod install;
mod interrupt;
mod login;
mod man;
mod output;
mod policy;
pub mod progress;
mod prompt;
mod search;
mod skill;
mod source;
mod token;

use output::eprint_line;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::app::App;
use crate::cli::{
    Cli, Command, CredentialCommand, HubCommand, SkillCommand, SourceCommand, TokenCommand,
};
use crate::config::{Paths, Settings};

/// Exit code for a failure the user can fix: bad input, a bad config, an unreachable source.
const EXIT_FAILURE: u8 = 1;

pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches_from(args)
        .and_then(|mut matches| {
            // Read before the conversion, which takes the subcommand out of the matches.
            let verb = matches
                .subcommand_name()
                .unwrap_or("capabilities")
                .to_string();
            let cli = Cli::from_arg_matches_mut(&mut matches)
                .map_err(|e| e.format(&mut Cli::command()))?;
            Ok((cli, verb))
        });
    let (cli, verb) = match parsed {
        Ok(parsed) => parsed,
        // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    // Logs go to stderr only (stdout carries results, and JSON-RPC under `hub serve`); lines
    // outside any request carry the verb and the process id (`hub-4242`). Held to the end:
    // dropping it sends the traces still buffered.
    let color = progress::color_wanted(cli.color, std::io::stderr().is_terminal());
    let _logging =
        match crate::logging::init(cli.log_format, cli.otel_endpoint.as_deref(), &verb, color) {
            Ok(logging) => logging,
            Err(e) => {
                crate::logging::notice(tracing::Level::ERROR, &e.to_string());
                return ExitCode::from(EXIT_FAILURE);
            }
        };
    match dispatch(cli, color) {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            crate::logging::notice(tracing::Level::ERROR, &format!("{e:#}"));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn dispatch(cli: Cli, color: bool) -> anyhow::Result<ExitCode> {
    check_config_exists(&cli)?;
    let app = App::new(Paths::discover(cli.config.as_deref())?).for_person(
        crate::model::Reader::cli(cli.config.as_deref()),
        color,
        progress::progress_wanted(cli.color),
    );
    let app = &app;
    match cli.command {
        Command::Init(args) => init::run(app, &args),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
        Command::Call(args) => run_async(call::run(app, &args)),
        Command::Source(SourceCommand::Enable(args)) => source::set_enabled(app, &args, true),
        Command::Source(SourceCommand::Disable(args)) => source::set_enabled(app, &args, false),
        Command::Source(SourceCommand::Add(args)) => run_async(source::add(app, &args)),
        Command::Source(SourceCommand::List(args)) => run_async(source::list(app, &args)),
        Command::Source(SourceCommand::Remove(args)) => source::remove(app, &args),
        Command::Source(SourceCommand::Test(args)) => run_async(source::test(app, &args)),
        Command::Search(args) => run_async(search::run(app, &args)),
        Command::Describe(args) => run_async(describe::run(app, &args)),
        Command::Exec(args) => run_async(exec::run(app, &args)),
        Command::Policy(command) => policy::run(app, &command),
        Command::Hub(HubCommand::Serve(args)) => run_async(hub::serve(app, &args)),
        Command::Hub(HubCommand::Approve(args)) => run_async(approvals::approve(app, &args)),
        Command::Hub(HubCommand::Deny(args)) => run_async(approvals::deny(app, &args)),
        Command::Hub(HubCommand::Runs(args)) => run_async(approvals::runs(app, &args)),
        Command::Install(args) => install::run(app, &args),
        Command::Source(SourceCommand::Import(args)) => source::import(app, &args),
        Command::Source(SourceCommand::Refresh(args)) => run_async(freshness::refresh(app, &args)),
        Command::Source(SourceCommand::Review(args)) => run_async(freshness::review(app, &args)),
        Command::Source(SourceCommand::Login(args)) => run_async(login::login(app, &args)),
        Command::Source(SourceCommand::Logout(args)) => login::logout(app, &args),
        Command::Credential(CredentialCommand::Set(args)) => credential::set(app, &args),
        Command::Credential(CredentialCommand::List(args)) => credential::list(app, &args),
        Command::Credential(CredentialCommand::Remove(args)) => credential::remove(app, &args),
        Command::Credential(CredentialCommand::Test(args)) => {
            run_async(credential::test(app, &args))
        }
        Command::Doctor(args) => run_async(doctor::run(app, &args)),
        Command::Dashboard(args) => run_async(dashboard::run(app, &args)),
        Command::Token(TokenCommand::Create(args)) => run_async(token::create(app, &args)),
        Command::Token(TokenCommand::List(args)) => run_async(token::list(app, &args)),
        Command::Token(TokenCommand::Revoke(args)) => run_async(token::revoke(app, &args)),
        Command::Skill(SkillCommand::List(args)) => skill::list(app, &args),
        Command::Skill(SkillCommand::Show(args)) => skill::show(app, &args),
        Command::Skill(SkillCommand::Add(args)) => skill::add(app, &args),
        Command::Skill(SkillCommand::Remove(args)) => skill::remove(app, &args),
    }
}

/// A config named with `--config` must exist, except for the verbs that write one (`init`,
/// `source add`, `source import`) and those that read none: a misspelt path would otherwise
/// look like an empty config ("no sources are configured").
fn check_config_exists(cli: &Cli) -> anyhow::Result<()> {
    let Some(path) = &cli.config else {
        return Ok(());
    };
    let writes_or_ignores = matches!(
        cli.command,
        Command::Init(_)
            | Command::Completions(_)
            | Command::Man(_)
            | Command::Source(SourceCommand::Add(_))
            | Command::Source(SourceCommand::Import(_))
    );
    if writes_or_ignores || path.exists() {
        return Ok(());
    }
    let shown = path.display();
    anyhow::bail!(
        "the config file {shown} (from --config) does not exist; check the path, or create it with `capabilities --config {shown} init`"
    )
}

/// The full id of the run `given` names: the id itself, or a prefix that only one run's id
/// starts with. An ambiguous prefix lists the runs it matches.
async fn resolve_run_id(
    app: &App,
    store: &crate::runs::Store,
    given: &str,
) -> anyhow::Result<String> {
    let given = given.trim();
    if given.is_empty() {
        anyhow::bail!(
            "the run id is empty; `{}` lists them",
            app.command("hub runs")
        );
    }
    // Enough to show that a prefix is ambiguous, and which runs it matches.
    const SHOWN: usize = 5;
    let found = store.runs().ids_with_prefix(given, SHOWN + 1).await?;
    if found.iter().any(|id| id == given) {
        return Ok(given.to_string());
    }
    match found.as_slice() {
        [] => anyhow::bail!(
            "there is no run `{}`; `{}` lists the recent ones",
            crate::error_text::echo(given),
            app.command("hub runs")
        ),
        [only] => Ok(only.clone()),
        several => {
            let more = if several.len() > SHOWN { ", …" } else { "" };
            let shown: Vec<&str> = several.iter().take(SHOWN).map(String::as_str).collect();
            anyhow::bail!(
                "`{}` is the start of several run ids ({}{more}); give more of it",
                crate::error_text::echo(given),
                shown.join(", ")
            )
        }
    }
}

/// How long a finished verb waits for its runs to free what they hold before the process exits.
const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_millis(500);

/// Runs an async verb on a fresh runtime. Ctrl-C or SIGTERM ends it at once, taking every
/// source's child processes (and their children) down with it, and exits 130 or 143 as a shell
/// expects (129 for SIGHUP).
fn run_async(
    verb: impl std::future::Future<Output = anyhow::Result<ExitCode>>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async {
        // The signals first: they are listened for before the verb starts, and win over a verb
        // that ends on the same wake-up (one a hidden prompt stopped because of the signal).
        tokio::select! {
            biased;
            status = crate::sources::termination_signal() => {
                crate::sources::kill_all();
                crate::credentials::hidden::give_back();
                if let Some(note) = interrupt::take() {
                    eprint_line(format_args!("\n{note}"));
                }
                Ok(ExitCode::from(status))
            }
            result = verb => result,
        }
    });
    // What still holds the state store once the verb has its answer (a finished run's heap,
    // freed after it delivered its envelope; a lease renewer told to stop) is let go before the
    // process exits, so the store closes cleanly and leaves no write-ahead log beside it. A
    // blocked task (a hanging upstream read) is not waited for past the bound.
    runtime.block_on(crate::sandbox::settle(SETTLE_BOUND));
    runtime.shutdown_timeout(SETTLE_BOUND);
    outcome
}

/// The catalogue of every source of `settings` (a profile's, under `--profile`); fails with the
/// next step when there are none.
async fn load_catalog(
    app: &App,
    settings: &Settings,
    refresh: bool,
) -> anyhow::Result<crate::catalog::Catalog> {
    if settings.sources.is_empty() {
        if let Some(profile) = &settings.profile {
            anyhow::bail!(
                "profile `{profile}` has no sources; name some in [profiles.{profile}] sources = [\"…\"] in {}",
                app.paths.config_file.display()
            );
        }
        anyhow::bail!(
            "no sources are configured in {}; add one, e.g. `{}`",
            app.paths.config_file.display(),
            app.command("source add everything -- npx -y @modelcontextprotocol/server-everything")
        );
    }
    let cache = crate::catalog::cache::ListingCache::new(app.paths.catalog_cache_dir());
    let catalog = crate::catalog::load::load(settings, &cache, refresh, app.secrets()).await;
    if !refresh {
        background::refresh_old_listings(app, settings);
    }
    let addresses: Vec<String> = catalog
        .tools()
        .map(crate::model::ToolDefinition::address)
        .collect();
    if !addresses.is_empty() {
        for rule in crate::policy::unmatched_rules(&settings.policy, &addresses) {
            eprint_line(format_args!(
                "warning: policy rule `{}` matches no tool; check its spelling with `{}`",
                rule.pattern,
                app.command("search WORDS")
            ));
        }
    }
    Ok(catalog)
}

/// Fails when no enabled source could be listed at all: an answer from none of them would
/// look like "no match" (exit 1 either way, but this says why, as gh does for a dead host).
fn require_some_source(app: &App, catalog: &crate::catalog::Catalog) -> anyhow::Result<()> {
    use crate::catalog::Origin;
    let enabled: Vec<&crate::catalog::Namespace> = catalog
        .namespaces
        .iter()
        .filter(|n| !matches!(n.origin, Origin::Disabled))
        .collect();
    let failed: Vec<String> = enabled
        .iter()
        .filter_map(|n| match &n.origin {
            Origin::Unavailable { error } => Some(format!("  {}: {error}", n.name)),
            _ => None,
        })
        .collect();
    if enabled.is_empty() || failed.len() < enabled.len() {
        return Ok(());
    }
    anyhow::bail!(
        "no source could be listed:\n{}\nCheck each with `{}`.",
        failed.join("\n"),
        app.command("source test NAME")
    )
}

/// What a "not found" under `--profile` adds: that only the profile's sources were looked in,
/// so a tool of another source is not missing from the config, only from the profile.
fn profile_note(settings: &Settings) -> String {
    let Some(profile) = &settings.profile else {
        return String::new();
    };
    let sources: Vec<&str> = settings.sources.iter().map(|s| s.name.as_str()).collect();
    format!(
        "\n  note: only the sources of profile `{profile}` were looked in ({}); without --profile, every source is",
        sources.join(", ")
    )
}
