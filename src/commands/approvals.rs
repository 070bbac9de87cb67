//! `capabilities hub approve|deny|runs`: decide on paused runs from a terminal. Decisions go to
//! the state store, so they work whether or not a hub is running, and the agent's next
//! `execute({ resume })` picks them up.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::output::{eprint_line, print};
use crate::app::App;
use crate::approvals::{Channel, DecisionRequest, decide, waiting};
use crate::cli::{HubApproveArgs, HubDenyArgs, HubRunsArgs};
use crate::runs::{Approval, Decision, Store};

async fn open_existing_store(app: &App) -> anyhow::Result<Store> {
    match app.existing_store().await? {
        Some(store) => Ok(store),
        None => bail!(
            "there are no runs yet ({} does not exist); runs appear once a script was executed",
            app.paths.state_database().display()
        ),
    }
}

pub async fn approve(app: &App, args: &HubApproveArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing_store(app).await?;
    let decision = match (args.always, args.for_run) {
        (true, _) => Decision::AllowAlways,
        (false, true) => Decision::AllowRun,
        (false, false) => Decision::AllowOnce,
    };
    let run_id = which_run(app, &store, args.run_id.as_deref()).await?;
    let waiting = waiting(&store, &run_id, args.call).await?;
    if !args.yes && !confirm(&waiting, decision).await? {
        bail!("nothing was decided; the calls still wait");
    }
    let decided = decide_on(app, &store, &run_id, &waiting, decision).await?;
    print(&decided_text(app, &decided, decision))?;
    Ok(ExitCode::SUCCESS)
}

pub async fn deny(app: &App, args: &HubDenyArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing_store(app).await?;
    let run_id = which_run(app, &store, args.run_id.as_deref()).await?;
    let waiting = waiting(&store, &run_id, args.call).await?;
    let decided = decide_on(app, &store, &run_id, &waiting, Decision::Deny).await?;
    print(&decided_text(app, &decided, Decision::Deny))?;
    Ok(ExitCode::SUCCESS)
}

/// The run a decision is about: the one named (a unique prefix is enough), or without a name
/// the only run with a call waiting; several waiting runs are listed to pick from.
async fn which_run(app: &App, store: &Store, given: Option<&str>) -> anyhow::Result<String> {
    if let Some(given) = given {
        return super::resolve_run_id(app, store, given).await;
    }
    let pending = store.approvals().pending().await?;
    let mut runs: Vec<&str> = Vec::new();
    for approval in &pending {
        if !runs.contains(&approval.run_id.as_str()) {
            runs.push(&approval.run_id);
        }
    }
    match runs.as_slice() {
        [] => bail!("no run is waiting for a decision"),
        [only] => Ok(only.to_string()),
        several => {
            let mut lines = String::new();
            for run_id in several {
                let calls: Vec<String> = pending
                    .iter()
                    .filter(|a| a.run_id == *run_id)
                    .map(|a| format!("call {} {}", a.seq, a.address))
                    .collect();
                lines.push_str(&format!("\n  {run_id}  {}", calls.join("; ")));
            }
            bail!(
                "{} runs are waiting for a decision; name one (a unique prefix of its id is enough):{lines}",
                several.len()
            )
        }
    }
}

/// Decides on the calls this command read (and printed, for `--always`): a call whose arguments
/// changed since is not decided.
async fn decide_on(
    app: &App,
    store: &Store,
    run_id: &str,
    waiting: &[Approval],
    decision: Decision,
) -> anyhow::Result<Vec<Approval>> {
    let request = DecisionRequest {
        run_id,
        seen: waiting.iter().map(Approval::seen).collect(),
        decision,
        channel: Channel::Terminal,
    };
    let mut decided = decide(store, Some(&app.paths.config_file), &request).await?;
    // The record carries no preview (deciding needs no key); show the one that was decided on.
    for approval in &mut decided {
        if let Some(shown) = waiting.iter().find(|w| w.seq == approval.seq) {
            approval.preview.clone_from(&shown.preview);
        }
    }
    Ok(decided)
}

/// On a terminal, shows the calls exactly as they will be decided (the decision binds to these
/// arguments) and asks before allowing them. Without a terminal the command decides what it
/// prints, except "always", which changes the policy of every later run and needs `--yes`.
async fn confirm(waiting: &[Approval], decision: Decision) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        if decision == Decision::AllowAlways {
            bail!(
                "--always writes a policy rule; confirm it with --yes when there is no terminal to ask on"
            );
        }
        return Ok(true);
    }
    for approval in waiting {
        let on = approval
            .connection
            .as_deref()
            .map(|c| format!(" on connection `{c}`"))
            .unwrap_or_default();
        eprint_line(format_args!(
            "call {} of {}: {}{on} with {}\n  because {}",
            approval.seq, approval.run_id, approval.address, approval.preview, approval.reason
        ));
        if let Some(whole) = &approval.whole {
            eprint_line(format_args!("  all of the arguments: {whole}"));
        }
    }
    let tools: Vec<&str> = waiting.iter().map(|a| a.address.as_str()).collect();
    let question = match decision {
        Decision::AllowAlways => format!(
            "Always allow {} from now on, in every run (a policy rule)?",
            tools.join(", ")
        ),
        Decision::AllowRun => format!(
            "Allow these, and {} for the rest of this run?",
            tools.join(", ")
        ),
        Decision::AllowOnce | Decision::Deny => "Allow these calls once?".to_string(),
    };
    ask_yes_no(&question).await
}

/// Asks `question` on the terminal; only an explicit yes is one.
async fn ask_yes_no(question: &str) -> anyhow::Result<bool> {
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let answer = super::prompt::read_line().await?.unwrap_or_default();
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// Asks on a terminal before `hub runs --clear` deletes every run, saying how many wait for a
/// decision and, on a shared store, that every replica loses them; without a terminal it
/// needs `--yes`. A key that does not open the store is named: on a shared store, the other
/// replicas may hold the right one.
async fn confirm_clear(store: &Store) -> anyhow::Result<bool> {
    let location = store.location().display().to_string();
    let shared = store.is_shared();
    if !std::io::stdin().is_terminal() {
        bail!(
            "`--clear` deletes every run in {location}{}; confirm it with --yes when there is no terminal to ask on",
            if shared {
                ", for every hub sharing it"
            } else {
                ""
            }
        );
    }
    let counted = match store.approvals().pending().await {
        Ok(waiting) if !waiting.is_empty() => {
            format!(" ({} call(s) wait for a decision)", waiting.len())
        }
        _ => String::new(),
    };
    if let Err(e) = store.keys().unlock().await {
        eprint_line(format_args!(
            "This process's key does not open the runs: {e}"
        ));
        if shared {
            eprint_line(format_args!(
                "If another hub on this store can still read its runs, give this one the same key (CAPABILITIES_STATE_KEY, or the keychain or key file it uses) instead of clearing."
            ));
        }
    }
    let whose = if shared {
        "every hub sharing it loses them"
    } else {
        "this cannot be undone"
    };
    ask_yes_no(&format!(
        "Delete every run in {location}{counted}, with journals, approvals and audit trail? {whose}."
    ))
    .await
}

fn decided_text(app: &App, decided: &[Approval], decision: Decision) -> String {
    let mut text = String::new();
    for approval in decided {
        text.push_str(&format!(
            "{} call {} ({} with {}): {}\n",
            approval.run_id, approval.seq, approval.address, approval.preview, decision
        ));
    }
    if let Some(first) = decided.first() {
        // Both readers are named: the person may relay it to the agent, or go on themselves.
        text.push_str(&format!(
            "The agent continues with {} (a hub in direct mode: by calling the same tool again with the same arguments); a run started by `capabilities exec` continues with {}.\n",
            crate::model::Reader::Agent.resume(&first.run_id, None),
            app.reader.resume(&first.run_id, None)
        ));
    }
    text
}

pub async fn runs(app: &App, args: &HubRunsArgs) -> anyhow::Result<ExitCode> {
    let Some(store) = app.existing_store().await? else {
        print(if args.json { "[]\n" } else { "No runs yet.\n" })?;
        return Ok(ExitCode::SUCCESS);
    };
    if args.clear {
        if !args.yes && !confirm_clear(&store).await? {
            eprint_line(format_args!("Nothing was deleted."));
            return Ok(ExitCode::FAILURE);
        }
        let deleted = store.runs().clear().await?;
        print(&format!(
            "Deleted {deleted} run(s) with their journals, approvals and audit trail; the next run starts a new history with a new key. Bearer tokens and settings are kept.\n"
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    // Listings read no run's script, envelope or results: only what ran, and the previews of
    // the calls that wait.
    let mut runs = store.runs().summaries(usize::from(args.limit)).await?;
    if args.pending {
        let pending: Vec<String> = store
            .approvals()
            .pending()
            .await?
            .into_iter()
            .map(|a| a.run_id)
            .collect();
        runs.retain(|r| pending.contains(&r.run_id));
    }
    if args.json {
        let mut rows = Vec::new();
        for run in &runs {
            let calls: Vec<_> = store
                .journal()
                .rows(&run.run_id)
                .await?
                .into_iter()
                .map(|e| json!({ "seq": e.seq, "address": e.address, "connection": e.connection, "ok": e.ok, "ms": e.ms }))
                .collect();
            let audit: Vec<_> = store
                .approvals()
                .audit_log(&run.run_id)
                .await?
                .into_iter()
                .map(|line| json!({ "atMs": line.at_ms, "kind": line.kind, "detail": line.detail }))
                .collect();
            rows.push(json!({
                "runId": run.run_id,
                "status": run.status,
                "createdAtMs": run.created_at_ms,
                "calls": calls,
                "approvals": store.approvals().of_run(&run.run_id).await?,
                "audit": audit,
            }));
        }
        print(&format!("{}\n", serde_json::to_string_pretty(&rows)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        print(if args.pending {
            "No runs are waiting for a decision.\n"
        } else {
            "No runs yet.\n"
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "{:30}  {:18}  {:>5}  {}\n",
        "RUN", "STATUS", "CALLS", "WAITING FOR"
    );
    for run in &runs {
        let waiting: Vec<String> = store
            .approvals()
            .of_run(&run.run_id)
            .await?
            .into_iter()
            .filter(|a| a.decision.is_none())
            .map(|a| format!("call {} {} {}", a.seq, a.address, a.preview))
            .collect();
        text.push_str(&format!(
            "{:30}  {:18}  {:>5}  {}\n",
            run.run_id,
            run.status,
            run.calls,
            waiting.join("; ")
        ));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}
