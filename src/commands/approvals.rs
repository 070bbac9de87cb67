//! `capabilities hub approve|deny|runs`: decide on paused runs from a terminal. Decisions go to
//! the state store, so they work whether or not a hub is running, and the agent's next
//! `execute({ resume })` picks them up.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::output::print;
use crate::approvals::{Channel, DecisionRequest, decide, waiting};
use crate::cli::{HubApproveArgs, HubDenyArgs, HubRunsArgs};
use crate::config::Paths;
use crate::runs::{Approval, Decision, RunsStore};

fn open_existing_store(paths: &Paths) -> anyhow::Result<RunsStore> {
    let path = paths.state_database();
    if !path.exists() {
        bail!(
            "there are no runs yet ({} does not exist); runs appear once a script was executed",
            path.display()
        );
    }
    super::open_store(paths)
}

pub fn approve(paths: &Paths, args: &HubApproveArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing_store(paths)?;
    let decision = match (args.always, args.for_run) {
        (true, _) => Decision::AllowAlways,
        (false, true) => Decision::AllowRun,
        (false, false) => Decision::AllowOnce,
    };
    let waiting = waiting(&store, &args.run_id, args.call)?;
    if !args.yes && !confirm(&waiting, decision)? {
        bail!("nothing was decided; the calls still wait");
    }
    let decided = decide_on(paths, &store, &args.run_id, &waiting, decision)?;
    print(&decided_text(&decided, decision))?;
    Ok(ExitCode::SUCCESS)
}

pub fn deny(paths: &Paths, args: &HubDenyArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing_store(paths)?;
    let waiting = waiting(&store, &args.run_id, args.call)?;
    let decided = decide_on(paths, &store, &args.run_id, &waiting, Decision::Deny)?;
    print(&decided_text(&decided, Decision::Deny))?;
    Ok(ExitCode::SUCCESS)
}

/// Decides on the calls this command read (and printed, for `--always`): a call whose arguments
/// changed since is not decided.
fn decide_on(
    paths: &Paths,
    store: &RunsStore,
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
    let mut decided = decide(store, Some(&paths.config_file), &request)?;
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
fn confirm(waiting: &[Approval], decision: Decision) -> anyhow::Result<bool> {
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
        eprintln!(
            "call {} of {}: {}{on} with {}\n  because {}",
            approval.seq, approval.run_id, approval.address, approval.preview, approval.reason
        );
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
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn decided_text(decided: &[Approval], decision: Decision) -> String {
    let mut text = String::new();
    for approval in decided {
        text.push_str(&format!(
            "{} call {} ({} with {}): {}\n",
            approval.run_id, approval.seq, approval.address, approval.preview, decision
        ));
    }
    if let Some(first) = decided.first() {
        text.push_str(&format!(
            "The agent continues with execute({{ \"resume\": \"{}\" }}).\n",
            first.run_id
        ));
    }
    text
}

pub fn runs(paths: &Paths, args: &HubRunsArgs) -> anyhow::Result<ExitCode> {
    let path = paths.state_database();
    if !path.exists() {
        print(if args.json { "[]\n" } else { "No runs yet.\n" })?;
        return Ok(ExitCode::SUCCESS);
    }
    let store = super::open_store(paths)?;
    if args.clear {
        let deleted = store.clear_runs()?;
        print(&format!(
            "Deleted {deleted} run(s) with their journals, approvals and audit trail; the next run starts a new history with a new key. Bearer tokens and settings are kept.\n"
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    // Listings read no run's script, envelope or results: only what ran, and the previews of
    // the calls that wait.
    let mut runs = store.run_summaries(usize::from(args.limit))?;
    if args.pending {
        let pending: Vec<String> = store
            .pending_approvals()?
            .into_iter()
            .map(|a| a.run_id)
            .collect();
        runs.retain(|r| pending.contains(&r.run_id));
    }
    if args.json {
        let mut rows = Vec::new();
        for run in &runs {
            let calls: Vec<_> = store
                .call_rows(&run.run_id)?
                .into_iter()
                .map(|e| json!({ "seq": e.seq, "address": e.address, "connection": e.connection, "ok": e.ok, "ms": e.ms }))
                .collect();
            let audit: Vec<_> = store
                .audit_log(&run.run_id)?
                .into_iter()
                .map(|(at, kind, detail)| json!({ "atMs": at, "kind": kind, "detail": detail }))
                .collect();
            rows.push(json!({
                "runId": run.run_id,
                "status": run.status,
                "createdAtMs": run.created_at_ms,
                "calls": calls,
                "approvals": store.approvals(&run.run_id)?,
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
            .approvals(&run.run_id)?
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
