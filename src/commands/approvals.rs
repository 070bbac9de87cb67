//! `capabilities hub approve|deny|runs`: decide on paused runs from a terminal. Decisions go to
//! the state store, so they work whether or not a hub is running, and the agent's next
//! `execute({ resume })` picks them up.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;

use super::load_settings;
use super::output::print;
use crate::cli::{HubApproveArgs, HubDenyArgs, HubRunsArgs};
use crate::config::Paths;
use crate::config::edit::add_rule;
use crate::policy::Action;
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
    if decision == Decision::AllowAlways {
        let waiting = waiting(&store, &args.run_id, args.call)?;
        // Validate the rules before deciding, so a config problem leaves the run pending.
        load_settings(paths)?;
        if !args.yes && !confirm_always(&waiting)? {
            bail!("not approved; run the command again without --always to allow the call once");
        }
        for approval in &waiting {
            add_rule(&paths.config_file, &approval.address, Action::Allow, None)?;
        }
    }
    let decided = store.decide(&args.run_id, args.call, decision, "terminal")?;
    print(&decided_text(&decided, decision))?;
    Ok(ExitCode::SUCCESS)
}

pub fn deny(paths: &Paths, args: &HubDenyArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing_store(paths)?;
    let decided = store.decide(&args.run_id, args.call, Decision::Deny, "terminal")?;
    print(&decided_text(&decided, Decision::Deny))?;
    Ok(ExitCode::SUCCESS)
}

/// The undecided approvals a decision would cover, or the store's error about them.
fn waiting(store: &RunsStore, run_id: &str, call: Option<u64>) -> anyhow::Result<Vec<Approval>> {
    if store.run_status(run_id)?.is_none() {
        bail!(
            "there is no run `{run_id}`; `capabilities hub runs --pending` lists the runs waiting for a decision"
        );
    }
    let waiting: Vec<Approval> = store
        .approvals(run_id)?
        .into_iter()
        .filter(|a| a.decision.is_none() && call.is_none_or(|c| c == a.seq))
        .collect();
    if waiting.is_empty() {
        bail!("run `{run_id}` has no call waiting for a decision");
    }
    Ok(waiting)
}

/// "Always" changes the policy for every future run, so a person confirms it on a terminal.
fn confirm_always(waiting: &[Approval]) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "--always writes a policy rule; confirm it with --yes when there is no terminal to ask on"
        );
    }
    let tools: Vec<&str> = waiting.iter().map(|a| a.address.as_str()).collect();
    eprint!(
        "Always allow {} from now on, in every run? [y/N] ",
        tools.join(", ")
    );
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn decided_text(decided: &[Approval], decision: Decision) -> String {
    let mut text = String::new();
    for approval in decided {
        text.push_str(&format!(
            "{} call {} ({}): {}\n",
            approval.run_id, approval.seq, approval.address, decision
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
