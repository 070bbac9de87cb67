//! One function per verb, and the plumbing they share: loading settings, logging to stderr,
//! printing to stdout (a closed pipe is not an error), and mapping outcomes to exit codes.

mod approvals;
mod completions;
mod credential;
mod dashboard;
mod doctor;
pub use completions::generated_files;
mod describe;
mod exec;
mod hub;
mod init;
mod install;
mod output;
mod policy;
mod search;
mod source;
mod token;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command, CredentialCommand, HubCommand, SourceCommand, TokenCommand};
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
    let _logging = match crate::logging::init(cli.log_format, cli.otel_endpoint.as_deref(), &verb) {
        Ok(logging) => logging,
        Err(e) => {
            crate::logging::notice(tracing::Level::ERROR, &e.to_string());
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            crate::logging::notice(tracing::Level::ERROR, &format!("{e:#}"));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover(cli.config.as_deref())?;
    let _ = PATHS.set(paths.clone());
    match cli.command {
        Command::Init(args) => init::run(&paths, &args),
        Command::Completions(args) => completions::run(&args),
        Command::Source(SourceCommand::Add(args)) => run_async(source::add(&paths, &args)),
        Command::Source(SourceCommand::List(args)) => run_async(source::list(&paths, &args)),
        Command::Source(SourceCommand::Remove(args)) => source::remove(&paths, &args),
        Command::Source(SourceCommand::Test(args)) => run_async(source::test(&paths, &args)),
        Command::Search(args) => run_async(search::run(&paths, &args)),
        Command::Describe(args) => run_async(describe::run(&paths, &args)),
        Command::Exec(args) => run_async(exec::run(&paths, &args)),
        Command::Policy(command) => policy::run(&paths, &command),
        Command::Hub(HubCommand::Serve(args)) => run_async(hub::serve(&paths, &args)),
        Command::Hub(HubCommand::Approve(args)) => approvals::approve(&paths, &args),
        Command::Hub(HubCommand::Deny(args)) => approvals::deny(&paths, &args),
        Command::Hub(HubCommand::Runs(args)) => approvals::runs(&paths, &args),
        Command::Install(args) => install::run(&paths, &args),
        Command::Source(SourceCommand::Import(args)) => source::import(&paths, &args),
        Command::Credential(CredentialCommand::Set(args)) => credential::set(&paths, &args),
        Command::Credential(CredentialCommand::List(args)) => credential::list(&paths, &args),
        Command::Credential(CredentialCommand::Remove(args)) => credential::remove(&paths, &args),
        Command::Credential(CredentialCommand::Test(args)) => {
            run_async(credential::test(&paths, &args))
        }
        Command::Doctor => doctor::run(&paths),
        Command::Dashboard(args) => run_async(dashboard::run(&paths, &args)),
        Command::Token(TokenCommand::Create(args)) => token::create(&paths, &args),
        Command::Token(TokenCommand::List(args)) => token::list(&paths, &args),
        Command::Token(TokenCommand::Revoke(args)) => token::revoke(&paths, &args),
    }
}

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
        tokio::select! {
            result = verb => result,
            status = crate::sources::termination_signal() => {
                crate::sources::kill_all();
                Ok(ExitCode::from(status))
            }
        }
    });
    // Do not wait for blocked tasks (a hanging upstream read) once the verb has its answer.
    runtime.shutdown_background();
    outcome
}

/// Loads and validates the config; its errors already name the file, line and fix.
fn load_settings(paths: &Paths) -> anyhow::Result<Settings> {
    Ok(crate::config::load(&paths.config_file)?)
}

/// The catalogue of every configured source; fails with the next step when there are none.
async fn load_catalog(
    paths: &Paths,
    settings: &Settings,
    refresh: bool,
) -> anyhow::Result<crate::catalog::Catalog> {
    if settings.sources.is_empty() {
        anyhow::bail!(
            "no sources are configured in {}; add one, e.g. `capabilities source add everything -- npx -y @modelcontextprotocol/server-everything`",
            paths.config_file.display()
        );
    }
    let cache = crate::catalog::cache::ListingCache::new(paths.catalog_cache_dir());
    let catalog = crate::catalog::load::load(settings, &cache, refresh, secret_lookup()).await;
    let addresses: Vec<String> = catalog
        .tools()
        .map(crate::catalog::ToolDefinition::address)
        .collect();
    if !addresses.is_empty() {
        for rule in crate::policy::unmatched_rules(&settings.policy, &addresses) {
            eprintln!(
                "warning: policy rule `{}` matches no tool; check its spelling with `capabilities search`",
                rule.pattern
            );
        }
    }
    Ok(catalog)
}

/// The paths of this process, set once by `dispatch`, so [`secret_lookup`] can open the stores.
static PATHS: std::sync::OnceLock<Paths> = std::sync::OnceLock::new();
/// One set of stores per process, so every connection shares one cache of values read.
static CREDENTIALS: std::sync::OnceLock<std::sync::Arc<crate::credentials::Credentials>> =
    std::sync::OnceLock::new();

/// The credential stores of this process: the keychain and the encrypted file of the data
/// directory, new secrets going where `[credentials] store` says.
fn credentials(paths: &Paths) -> std::sync::Arc<crate::credentials::Credentials> {
    CREDENTIALS
        .get_or_init(|| {
            // A broken config is reported by the verb that loads it; until then, the default store.
            let store = crate::config::load(&paths.config_file)
                .map(|s| s.credential_store)
                .unwrap_or(crate::credentials::StoreKind::Keychain);
            std::sync::Arc::new(crate::credentials::Credentials::new(&paths.data_dir, store))
        })
        .clone()
}

/// What `exec` and `hub serve` run on: the state store, the sources (connecting in the
/// background) and the live catalogue that follows them.
struct Engine {
    store: std::sync::Arc<crate::runs::RunsStore>,
    sources: std::sync::Arc<crate::sources::Sources>,
    catalog: std::sync::Arc<crate::catalog::live::LiveCatalog>,
}

/// The state store, its key kept in the user's credential store where one works.
fn open_store(paths: &Paths) -> anyhow::Result<crate::runs::RunsStore> {
    Ok(crate::runs::RunsStore::open(&paths.state_database())?.with_credentials(credentials(paths)))
}

fn start_engine(paths: &Paths, settings: &Settings) -> anyhow::Result<Engine> {
    let store = std::sync::Arc::new(open_store(paths)?);
    let sources = crate::sources::Sources::start(settings.sources.clone(), secret_lookup());
    let catalog = crate::catalog::live::LiveCatalog::start(
        settings.clone(),
        crate::catalog::cache::ListingCache::new(paths.catalog_cache_dir()),
        sources.clone(),
    );
    Ok(Engine {
        store,
        sources,
        catalog,
    })
}

/// Where `${secret:NAME}` values come from for this process.
fn secret_lookup() -> std::sync::Arc<dyn crate::credentials::SecretLookup> {
    match PATHS.get() {
        Some(paths) => credentials(paths),
        None => std::sync::Arc::new(crate::credentials::NoSecretStore),
    }
}
