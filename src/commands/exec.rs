//! `capabilities exec SCRIPT|-`: run one script against the configured sources and print its
//! result (or the whole envelope with `--json`); the exit status says how the run ended.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};

use super::output::print;
use super::{load_settings, secret_lookup};
use crate::catalog::cache::ListingCache;
use crate::catalog::live::LiveCatalog;
use crate::cli::ExecArgs;
use crate::config::Paths;
use crate::execute::Executor;
use crate::runs::RunsStore;
use crate::sandbox::{CancelToken, ExecuteEnvelope, Status};
use crate::sources::Sources;

pub async fn run(paths: &Paths, args: &ExecArgs) -> anyhow::Result<ExitCode> {
    let code = read_script(&args.script)?;
    let settings = Arc::new(load_settings(paths)?);
    if settings.sources.is_empty() {
        tracing::warn!("no sources are configured in {}; the script can only use built-ins", paths.config_file.display());
    }
    let store = Arc::new(RunsStore::open(&paths.state_database())?);
    let sources = Sources::start(settings.sources.clone(), secret_lookup());
    let catalog = LiveCatalog::start((*settings).clone(), ListingCache::new(paths.catalog_cache_dir()), sources.clone());
    let longest = settings.sources.iter().map(|s| s.connect_timeout).max().unwrap_or(Duration::ZERO);
    catalog.settle(longest + Duration::from_secs(1)).await;
    let executor = Executor::new(catalog, settings, store);
    let envelope = executor.execute(code, args.output_budget, CancelToken::new()).await;
    sources.shutdown().await;
    report(&envelope, args.json)
}

fn read_script(path: &str) -> anyhow::Result<String> {
    if path == "-" {
        let mut code = String::new();
        std::io::stdin().read_to_string(&mut code).context("cannot read the script from standard input")?;
        return Ok(code);
    }
    match std::fs::read_to_string(path) {
        Ok(code) => Ok(code),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!("there is no script at `{path}`; pass a .js/.ts file, or `-` to read standard input"),
        Err(e) => Err(e).with_context(|| format!("cannot read the script `{path}`")),
    }
}

fn report(envelope: &ExecuteEnvelope, json: bool) -> anyhow::Result<ExitCode> {
    let code = match envelope.status {
        Status::Completed => 0,
        Status::Failed => 1,
        Status::AwaitingApproval | Status::AwaitingConnection => 3,
        Status::Cancelled => 4,
    };
    if json {
        print(&format!("{}\n", serde_json::to_string_pretty(envelope)?))?;
        return Ok(ExitCode::from(code));
    }
    for line in &envelope.logs {
        eprintln!("log: {line}");
    }
    for notice in &envelope.notices {
        eprintln!("notice: {notice}");
    }
    if envelope.truncated.logs {
        eprintln!("notice: logs were cut to fit the log budget");
    }
    match envelope.status {
        Status::Completed => {
            let text = match &envelope.result {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(value) => serde_json::to_string_pretty(value)?,
                None => "undefined".into(),
            };
            print(&format!("{text}\n"))?;
        }
        Status::Failed | Status::Cancelled => {
            if let Some(error) = &envelope.error {
                eprintln!("error[{}]: {}", error.code.as_str(), error.message);
                if let Some(hint) = &error.hint {
                    eprintln!("  hint: {hint}");
                }
            }
        }
        Status::AwaitingApproval | Status::AwaitingConnection => {
            eprintln!("run {} is waiting:", envelope.run_id);
            for pending in &envelope.pending {
                eprintln!("  - {}", pending.summary);
                if let Some(message) = &pending.message {
                    eprintln!("    {message}");
                }
            }
        }
    }
    eprintln!("run {} {}, {} call(s)", envelope.run_id, status_word(envelope.status), envelope.calls.len());
    Ok(ExitCode::from(code))
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Completed => "completed",
        Status::Failed => "failed",
        Status::AwaitingApproval => "is awaiting approval",
        Status::AwaitingConnection => "is awaiting a connection",
        Status::Cancelled => "was cancelled",
    }
}
