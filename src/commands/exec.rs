//! `capabilities exec SCRIPT|-`: run one script against the configured sources (a profile's,
//! with `--profile`) and print its result (or the whole envelope with `--json`); the exit status
//! says how the run ended.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::output::{eprint_line, print};
use crate::app::{App, Engine};
use crate::approvals::{Channel, DecisionRequest, decide, waiting};
use crate::cli::ExecArgs;
use crate::config::settle_time;
use crate::execute::mentions::mentioned;
use crate::runs::{Decision, LOCAL_SCOPE, Store};
use crate::sandbox::{CancelToken, ExecuteEnvelope, Status};

pub async fn run(app: &App, args: &ExecArgs) -> anyhow::Result<ExitCode> {
    let code = match (&args.code, &args.script) {
        (Some(code), _) => Some(code.clone()),
        (None, Some(script)) => Some(read_script(script)?),
        (None, None) => None,
    };
    let settings = app.settings_for(args.profile.as_deref())?;
    if settings.sources.is_empty() {
        match &settings.profile {
            Some(profile) => tracing::warn!(
                "profile `{profile}` has no sources in {}; the script can only use built-ins",
                app.paths.config_file.display()
            ),
            None => tracing::warn!(
                "no sources are configured in {}; the script can only use built-ins",
                app.paths.config_file.display()
            ),
        }
    }
    // The policy follows the config: a rule written while the script waits on a person
    // (another terminal's `policy set`, or "always" at this very prompt) applies to its next
    // call.
    let engine: Engine = app.engine(settings).await?;
    let executor = engine.executor();
    let names = engine.settings.sources.iter().map(|s| s.name.as_str());
    let settle = settle_time(&engine.settings.sources);
    let mut envelope = match (code, &args.resume) {
        (Some(code), _) => {
            // Only the sources the script names: one that calls none starts none.
            engine
                .catalog
                .prepare(&mentioned(&code, names), settle)
                .await;
            executor
                .execute_for(
                    Some("exec"),
                    code,
                    args.output_budget,
                    CancelToken::new(),
                    None,
                )
                .await
        }
        (None, Some(given)) => match resolve_and_resume(app, &engine, &executor, given).await {
            Ok(envelope) => envelope,
            // Refused before anything ran (another profile's run, an unknown id): the sources
            // that started connecting go down with the answer.
            Err(e) => {
                engine.sources.shutdown().await;
                return Err(e);
            }
        },
        (None, None) => bail!("give a script file, `-` for standard input, or --resume RUN_ID"),
    };
    // On a terminal, ask about each pending call right here and carry on.
    let interactive = std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && args.script.as_deref() != Some("-");
    while interactive && envelope.status == Status::AwaitingApproval {
        // Ctrl-C at the prompt ends the process at once; the run stays waiting, and the note
        // says how to go on with it.
        super::interrupt::set(format!(
            "Stopped; run {} is still waiting. {}",
            envelope.run_id,
            next_steps(app, &envelope)
        ));
        let go_on = ask_inline(app, executor.store(), &envelope.run_id).await;
        super::interrupt::clear();
        if !go_on? {
            break;
        }
        envelope = executor
            .resume(&envelope.run_id, CancelToken::new(), None)
            .await?;
    }
    engine.sources.shutdown().await;
    // A person at a terminal gets the whole result, even one too large for an agent's budget:
    // it was stored for this user, so it is read back from there.
    let whole = match (&envelope.stored, args.json) {
        (Some(stored), false) => executor
            .store()
            .stored_results()
            .read(LOCAL_SCOPE, &stored.result_ref)
            .await?
            .and_then(|text| serde_json::from_str(&text).ok()),
        _ => None,
    };
    report(app, &envelope, whole.as_ref(), args.json)
}

/// Resumes the run `given` names (a unique prefix of its id is enough), with the sources its
/// script names and its journal called.
async fn resolve_and_resume(
    app: &App,
    engine: &Engine,
    executor: &crate::execute::Executor,
    given: &str,
) -> anyhow::Result<ExecuteEnvelope> {
    let run_id = super::resolve_run_id(app, executor.store(), given).await?;
    let sources = executor.sources_of_run(&run_id).await?;
    let settle = settle_time(&engine.settings.sources);
    engine.catalog.prepare(&sources, settle).await;
    Ok(executor.resume(&run_id, CancelToken::new(), None).await?)
}

/// Asks on the terminal about every undecided call of the run, with the dashboard's keys for
/// the same choices; false when the user quits.
async fn ask_inline(app: &App, store: &Store, run_id: &str) -> anyhow::Result<bool> {
    for approval in waiting(store, run_id, None).await? {
        let on = approval
            .connection
            .as_deref()
            .map(|c| format!(" (connection {c})"))
            .unwrap_or_default();
        eprint_line(format_args!(
            "\n{}{on} wants to run with {}\n  because {}",
            approval.address, approval.preview, approval.reason
        ));
        if let Some(whole) = &approval.whole {
            eprint_line(format_args!("  all of the arguments: {whole}"));
        }
        let decision = loop {
            eprint!("{PROMPT}");
            std::io::stderr().flush()?;
            let Some(answer) = super::prompt::read_line().await? else {
                return Ok(false);
            };
            match prompt_answer(answer.trim()) {
                Some(Some(decision)) => break decision,
                Some(None) => return Ok(false),
                None => eprint_line(format_args!("Type a, r, A, d or q.")),
            }
        };
        let request = DecisionRequest {
            run_id,
            seen: vec![approval.seen()],
            decision,
            channel: Channel::Exec,
        };
        decide(store, Some(&app.paths.config_file), &request).await?;
    }
    Ok(true)
}

/// The inline question; its keys are the dashboard's (`a` once, `r` run, `A` always, `d` deny).
const PROMPT: &str = "Allow? [a] once, [r] for this run, [A] always, [d] deny, [q] stop asking: ";

/// The decision an answer to [`PROMPT`] names: `Some(None)` to stop asking, `None` when it
/// names nothing. Keys are case-sensitive as in the dashboard, where `A` is not `a`.
fn prompt_answer(answer: &str) -> Option<Option<Decision>> {
    Some(match answer {
        "a" | "once" => Some(Decision::AllowOnce),
        "r" | "run" => Some(Decision::AllowRun),
        "A" | "always" => Some(Decision::AllowAlways),
        "d" | "deny" => Some(Decision::Deny),
        "q" | "quit" => None,
        _ => return None,
    })
}

fn read_script(path: &str) -> anyhow::Result<String> {
    if path == "-" {
        let mut code = String::new();
        std::io::stdin()
            .read_to_string(&mut code)
            .context("cannot read the script from standard input")?;
        return Ok(code);
    }
    match std::fs::read_to_string(path) {
        Ok(code) => Ok(code),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "there is no script at `{path}`; pass a .js/.ts file, or `-` to read standard input"
        ),
        Err(e) => Err(e).with_context(|| format!("cannot read the script `{path}`")),
    }
}

/// Prints the run as `--json` asks, or for a person: its result on stdout (`stored_value` for a
/// result that was stored), everything else on stderr.
fn report(
    app: &App,
    envelope: &ExecuteEnvelope,
    stored_value: Option<&serde_json::Value>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let code = match envelope.status {
        Status::Completed => 0,
        Status::Failed => 1,
        Status::AwaitingApproval | Status::AwaitingConnection => 3,
        Status::Cancelled => 4,
        Status::Running => 5,
    };
    if json {
        print(&format!("{}\n", serde_json::to_string_pretty(envelope)?))?;
        return Ok(ExitCode::from(code));
    }
    for line in &envelope.logs {
        eprint_line(format_args!("log: {line}"));
    }
    for notice in &envelope.notices {
        eprint_line(format_args!("notice: {notice}"));
    }
    if envelope.truncated.logs {
        eprint_line(format_args!("notice: logs were cut to fit the log budget"));
    }
    match envelope.status {
        Status::Completed => {
            let text = match envelope.result.as_ref().or(stored_value) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(value) => serde_json::to_string_pretty(value)?,
                None => "undefined".into(),
            };
            print(&format!("{text}\n"))?;
        }
        Status::Failed | Status::Cancelled | Status::Running => {
            if let Some(error) = &envelope.error {
                eprint_line(format_args!(
                    "error[{}]: {}",
                    error.code.as_str(),
                    error.message
                ));
                // A code's default hint names the hub's tools; a person gets it in commands.
                let hint = match &error.hint {
                    Some(hint) if hint == error.code.hint() => {
                        Some(error.code.hint_for(&app.reader, &envelope.run_id))
                    }
                    other => other.clone(),
                };
                if let Some(hint) = hint {
                    eprint_line(format_args!("  hint: {hint}"));
                }
            }
        }
        Status::AwaitingApproval | Status::AwaitingConnection => {
            eprint_line(format_args!("run {} is waiting:", envelope.run_id));
            for pending in &envelope.pending {
                eprint_line(format_args!("  - {}", pending.summary));
            }
            eprint_line(format_args!("{}", next_steps(app, envelope)));
        }
    }
    eprint_line(format_args!(
        "run {} {}, {} call(s)",
        envelope.run_id,
        status_word(envelope.status),
        envelope.calls.len()
    ));
    Ok(ExitCode::from(code))
}

/// How a person goes on with a run waiting for a decision.
fn next_steps(app: &App, envelope: &ExecuteEnvelope) -> String {
    let profile = envelope
        .profile
        .as_deref()
        .map(|p| format!(" --profile {p}"))
        .unwrap_or_default();
    let id = &envelope.run_id;
    format!(
        "Decide with `{}` (or `{}`), then continue with `{}`.",
        app.command(&format!("hub approve {id}")),
        app.command(&format!("hub deny {id}")),
        app.command(&format!("exec --resume {id}{profile}"))
    )
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Completed => "completed",
        Status::Failed => "failed",
        Status::AwaitingApproval => "is awaiting approval",
        Status::AwaitingConnection => "is awaiting a connection",
        Status::Cancelled => "was cancelled",
        Status::Running => "is being run by another process",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_takes_the_dashboard_s_keys() {
        assert_eq!(prompt_answer("a"), Some(Some(Decision::AllowOnce)));
        assert_eq!(prompt_answer("r"), Some(Some(Decision::AllowRun)));
        assert_eq!(prompt_answer("A"), Some(Some(Decision::AllowAlways)));
        assert_eq!(prompt_answer("d"), Some(Some(Decision::Deny)));
        assert_eq!(prompt_answer("q"), Some(None));
        assert_eq!(
            prompt_answer("o"),
            None,
            "o was \"once\" before; it is nothing now"
        );
        for (key, decision) in [
            ('a', Decision::AllowOnce),
            ('r', Decision::AllowRun),
            ('A', Decision::AllowAlways),
            ('d', Decision::Deny),
        ] {
            let pressed = crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(key),
                crossterm::event::KeyModifiers::NONE,
            );
            assert_eq!(
                crate::tui::key_decision(pressed),
                Some(decision),
                "the dashboard's `{key}`"
            );
            assert!(PROMPT.contains(&format!("[{key}]")), "{PROMPT}");
        }
    }
}
