//! One function per verb, and the plumbing they share: loading settings, logging to stderr,
//! printing to stdout (a closed pipe is not an error), and mapping outcomes to exit codes.

mod completions;
pub use completions::generated_files;
mod describe;
mod exec;
mod init;
mod output;
mod search;
mod source;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, SourceCommand};
use crate::config::{Paths, Settings};
use crate::env_vars;

/// Exit code for a failure the user can fix: bad input, a bad config, an unreachable source.
const EXIT_FAILURE: u8 = 1;

pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    init_logging();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover(cli.config.as_deref())?;
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
    }
}

/// Runs an async verb on a fresh runtime. Ctrl-C or SIGTERM ends it at once, taking every
/// source's child processes (and their children) down with it, and exits 130 or 143 as a shell
/// expects (129 for SIGHUP).
fn run_async(verb: impl std::future::Future<Output = anyhow::Result<ExitCode>>) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
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
async fn load_catalog(paths: &Paths, settings: &Settings, refresh: bool) -> anyhow::Result<crate::catalog::Catalog> {
    if settings.sources.is_empty() {
        anyhow::bail!(
            "no sources are configured in {}; add one, e.g. `capabilities source add everything -- npx -y @modelcontextprotocol/server-everything`",
            paths.config_file.display()
        );
    }
    let cache = crate::catalog::cache::ListingCache::new(paths.catalog_cache_dir());
    Ok(crate::catalog::load::load(settings, &cache, refresh, secret_lookup()).await)
}

/// Where `${secret:NAME}` values come from for this process.
fn secret_lookup() -> std::sync::Arc<dyn crate::credentials::SecretLookup> {
    std::sync::Arc::new(crate::credentials::NoSecretStore)
}

/// Logs go to stderr only (stdout carries results, and JSON-RPC under `hub serve`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(env_vars::CAPABILITIES_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::env::var_os(env_vars::NO_COLOR).is_none())
        .try_init();
}
