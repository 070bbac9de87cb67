//! What the dashboard shows, as plain data read from the store and the config: a [`Snapshot`] of
//! the queue, the runs and the sources, and the [`RunDetail`] of one run. Loading them is the app
//! loop's job; this module only defines them, merges the two views of the sources, and narrows
//! a snapshot to one profile (`dashboard --profile`).

use std::collections::HashMap;

use crate::runs::{Approval, AuditLine, JournalEntry, RunRecord, RunSummary, SourceStatusRecord};

/// Everything the main screen shows, as of one poll.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Calls waiting for a decision, oldest first.
    pub approvals: Vec<Approval>,
    /// Recent runs, newest first.
    pub runs: Vec<RunSummary>,
    pub sources: Vec<SourceRow>,
    /// Runs waiting for a person to sign a source in, newest first.
    pub connections: Vec<WaitingConnection>,
    /// What could not be read (the store, the config), each with what to do.
    pub problems: Vec<String>,
}

/// A run paused `awaiting_connection`, and the source it waits to sign in to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingConnection {
    pub run_id: String,
    pub source: String,
    /// The named connection to sign in; the source's default when `None`.
    pub connection: Option<String>,
}

impl WaitingConnection {
    /// What to sign in to, as the person reads it: `linear`, or `linear (connection work)`.
    pub fn label(&self) -> String {
        match &self.connection {
            Some(named) => format!("{} (connection {named})", self.source),
            None => self.source.clone(),
        }
    }
}

impl Snapshot {
    /// Only what belongs to `profile`: the runs started under it, the calls waiting in those
    /// runs, and its `sources`. `run_profiles` gives the profile of every run a waiting call
    /// belongs to (a run missing from it is not the profile's: nothing is shown that may not be).
    pub fn keep_profile(
        &mut self,
        profile: &str,
        sources: &[String],
        run_profiles: &HashMap<String, Option<String>>,
    ) {
        let of_profile = |run_id: &str| {
            run_profiles
                .get(run_id)
                .is_some_and(|p| p.as_deref() == Some(profile))
        };
        self.runs
            .retain(|run| run.profile.as_deref() == Some(profile));
        self.approvals
            .retain(|approval| of_profile(&approval.run_id));
        self.connections
            .retain(|waiting| sources.contains(&waiting.source) && of_profile(&waiting.run_id));
        self.sources.retain(|source| sources.contains(&source.name));
    }
}

/// A source as the config declares it, with what its cached listing says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredSource {
    pub name: String,
    pub enabled: bool,
    /// The addresses of its tools in the cached listing; `None` when nothing is cached.
    pub tools: Option<Vec<String>>,
}

/// One row of the sources pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRow {
    pub name: String,
    pub status: String,
    pub tool_count: Option<usize>,
    pub error: Option<String>,
    /// When a hub last reported on it; `None` when only the config and cache know it.
    pub reported_at_ms: Option<u64>,
    /// Tool addresses, from the cache, so the filter can find a source by its tools.
    pub tools: Vec<String>,
}

/// Everything about one run, for the details view.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDetail {
    pub run: RunRecord,
    pub journal: Vec<JournalEntry>,
    pub approvals: Vec<Approval>,
    /// `(at_ms, kind, detail)`, oldest first.
    pub audit: Vec<AuditLine>,
}

/// The sources pane: what hubs reported wins, since it is live; configured sources nobody
/// reported on yet show as `configured` (or `disabled`) with their cached tool counts. A
/// source the config no longer has is gone from the pane, whatever a hub last reported on it:
/// it was removed (or its profile left it out), and a running hub drops it at its next reload.
pub fn merge_sources(
    configured: Vec<ConfiguredSource>,
    reported: Vec<SourceStatusRecord>,
) -> Vec<SourceRow> {
    let mut rows: Vec<SourceRow> = configured
        .into_iter()
        .map(|source| {
            let tools = source.tools.clone().unwrap_or_default();
            match reported.iter().find(|r| r.name == source.name) {
                Some(report) => reported_row(report, tools),
                None => SourceRow {
                    name: source.name,
                    status: if source.enabled {
                        "configured"
                    } else {
                        "disabled"
                    }
                    .to_string(),
                    tool_count: source.tools.map(|t| t.len()),
                    error: None,
                    reported_at_ms: None,
                    tools,
                },
            }
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

fn reported_row(report: &SourceStatusRecord, tools: Vec<String>) -> SourceRow {
    SourceRow {
        name: report.name.clone(),
        status: report.status.clone(),
        tool_count: Some(report.tool_count),
        error: report.error.clone(),
        reported_at_ms: Some(report.updated_at_ms),
        tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_keeps_its_runs_their_waiting_calls_and_its_sources() {
        use crate::tui::fixtures::{approval, run, snapshot};
        let mut whole = snapshot();
        let mut home = run("run_home", "completed", 1, Some("ledger.write"), 1_000);
        home.profile = Some("home".into());
        let mut bare = run("run_bare", "awaiting_approval", 0, None, 2_000);
        bare.profile = None;
        whole.runs.extend([home, bare]);
        whole
            .approvals
            .push(approval("run_bare", 0, "ledger.write", 1_000));
        let mut run_profiles: HashMap<String, Option<String>> = whole
            .runs
            .iter()
            .map(|r| (r.run_id.clone(), r.profile.clone()))
            .collect();
        // A waiting call of a run too old to be among the recent runs still shows.
        run_profiles.insert("run_aaaaaaaaaaaaaaaaaaaaaaaaaa".into(), Some("work".into()));
        whole
            .runs
            .retain(|r| r.run_id != "run_aaaaaaaaaaaaaaaaaaaaaaaaaa");
        let sources: Vec<String> = vec!["counter".into()];

        let mut work = whole.clone();
        work.keep_profile("work", &sources, &run_profiles);
        assert!(
            work.runs
                .iter()
                .all(|r| r.profile.as_deref() == Some("work")),
            "{:?}",
            work.runs
        );
        assert_eq!(work.runs.len(), whole.runs.len() - 2);
        let waiting: Vec<&str> = work.approvals.iter().map(|a| a.run_id.as_str()).collect();
        assert_eq!(
            waiting,
            [
                "run_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                "run_bbbbbbbbbbbbbbbbbbbbbbbbbb"
            ]
        );
        let names: Vec<&str> = work.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["counter"]);

        let mut home = whole.clone();
        home.keep_profile("home", &[], &run_profiles);
        let runs: Vec<&str> = home.runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(runs, ["run_home"]);
        assert!(home.approvals.is_empty(), "{:?}", home.approvals);
        assert!(home.sources.is_empty());
    }

    #[test]
    fn reports_win_over_the_config_and_removed_sources_disappear() {
        let configured = vec![
            ConfiguredSource {
                name: "time".into(),
                enabled: true,
                tools: Some(vec!["time.now".into()]),
            },
            ConfiguredSource {
                name: "off".into(),
                enabled: false,
                tools: None,
            },
            ConfiguredSource {
                name: "counter".into(),
                enabled: true,
                tools: Some(vec!["counter.write".into(), "counter.publish".into()]),
            },
        ];
        let reported = vec![
            SourceStatusRecord {
                name: "counter".into(),
                status: "failed".into(),
                tool_count: 0,
                error: Some("exited".into()),
                updated_at_ms: 5,
            },
            SourceStatusRecord {
                name: "elsewhere".into(),
                status: "ready".into(),
                tool_count: 3,
                error: None,
                updated_at_ms: 6,
            },
        ];
        let rows = merge_sources(configured, reported);
        let summary: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.status.as_str(),
                    r.tool_count,
                    r.tools.len(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("counter", "failed", Some(0), 2),
                ("off", "disabled", None, 0),
                ("time", "configured", Some(1), 1)
            ]
        );
    }
}
