//! The dashboard's state: the last [`Snapshot`] of the store, what the person is looking at, and
//! how each [`Action`] changes it. No I/O happens here: an action that needs the store returns an
//! [`Effect`] for the app loop to perform, which reports back (`decided`, `apply_detail`), so
//! every transition is testable without a terminal or a database.

use std::collections::HashSet;

use super::detail;
use super::filter::Filter;
use super::snapshot::{RunDetail, Snapshot, WaitingConnection};
use crate::runs::{Approval, Decision};

/// The three panes of the main screen, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Approvals,
    Runs,
    Sources,
}

impl Pane {
    const ORDER: [Pane; 3] = [Pane::Approvals, Pane::Runs, Pane::Sources];

    fn index(self) -> usize {
        Pane::ORDER.iter().position(|p| *p == self).unwrap_or(0)
    }

    fn step(self, by: isize) -> Pane {
        let next = (self.index() as isize + by).rem_euclid(Pane::ORDER.len() as isize);
        Pane::ORDER[next as usize]
    }
}

/// What a key asks for; `keys` maps key presses to these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Close the topmost thing (help, dialog, details, filter), or quit from the main screen.
    Back,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    NextPane,
    PrevPane,
    /// The details of the selected run.
    Open,
    /// A decision on the selected pending call; "always" asks for confirmation first.
    Decide(Decision),
    /// The answer to the "always allow" confirmation.
    Confirm(bool),
    ToggleHelp,
    StartFilter,
    FilterChar(char),
    FilterBackspace,
    /// Leave the filter line, keeping the filter.
    FilterDone,
    /// Leave the filter line and drop the filter.
    FilterClear,
    /// List every source again (`capabilities source refresh`), in the background.
    RefreshSources,
    /// Start, in the browser, the sign-in of the selected waiting connection (or of the run
    /// whose details show, or else the newest one waiting).
    SignIn,
}

/// Work for the app loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Record `decision` on `approval` (for "always", also write the policy rule).
    Decide {
        approval: Box<Approval>,
        decision: Decision,
    },
    /// Read the details of a run from the store and hand them to [`State::apply_detail`].
    LoadDetail(String),
    /// Start listing the sources again in the background; its outcome comes back through
    /// [`State::refreshed`].
    RefreshSources,
    /// Start signing this connection in; how it went comes back through [`State::signing_in`].
    SignIn(WaitingConnection),
}

/// What the screen is showing on top of the panes; decides how keys are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Main,
    Filter,
    Detail,
    Help,
    Confirm,
}

/// A one-line message in the footer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

/// The details view of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct DetailView {
    pub run_id: String,
    /// `None` until loaded.
    pub data: Option<RunDetail>,
    pub error: Option<String>,
    /// First line shown.
    pub scroll: usize,
}

/// Which item of a list is selected: by key, so a refresh that inserts rows above it keeps the
/// same item selected; the index is the fallback when the item went away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Cursor {
    key: Option<String>,
    index: usize,
}

/// The visible (filtered) items of each pane, as indexes into the snapshot. The queue pane
/// lists the calls waiting for a decision, then the runs waiting for a sign-in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    pub approvals: Vec<usize>,
    pub connections: Vec<usize>,
    pub runs: Vec<usize>,
    /// With how many of the source's tools match the filter (0 when the name matched or no filter).
    pub sources: Vec<(usize, usize)>,
}

const PAGE: usize = 10;

/// The whole state of the dashboard.
#[derive(Debug, Clone)]
pub struct State {
    pub(super) snapshot: Snapshot,
    pub(super) view: View,
    pub(super) now_ms: u64,
    pub(super) focus: Pane,
    pub(super) filter: String,
    pub(super) editing_filter: bool,
    pub(super) help: bool,
    /// The call waiting for an "always allow" confirmation.
    pub(super) confirm: Option<Approval>,
    pub(super) detail: Option<DetailView>,
    pub(super) notice: Option<Notice>,
    pub(super) color: bool,
    /// Terminal rows, to page the details view.
    pub(super) height: u16,
    /// `dashboard --profile`: the snapshots hold only this profile's, and the title says so.
    pub(super) profile: Option<String>,
    /// Sources are being listed again (the `u` key); the footer says so until it is done.
    pub(super) refreshing: bool,
    cursors: [Cursor; 3],
    known_approvals: HashSet<String>,
    loaded: bool,
    quit: bool,
}

impl State {
    pub fn new(color: bool) -> State {
        State {
            snapshot: Snapshot::default(),
            view: View::default(),
            now_ms: 0,
            focus: Pane::Approvals,
            filter: String::new(),
            editing_filter: false,
            help: false,
            confirm: None,
            detail: None,
            notice: None,
            color,
            height: 24,
            profile: None,
            refreshing: false,
            cursors: Default::default(),
            known_approvals: HashSet::new(),
            loaded: false,
            quit: false,
        }
    }

    /// A dashboard of one profile: the title names it.
    pub fn for_profile(mut self, profile: Option<String>) -> State {
        self.profile = profile;
        self
    }

    pub fn mode(&self) -> Mode {
        if self.help {
            Mode::Help
        } else if self.confirm.is_some() {
            Mode::Confirm
        } else if self.editing_filter {
            Mode::Filter
        } else if self.detail.is_some() {
            Mode::Detail
        } else {
            Mode::Main
        }
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    pub fn resize(&mut self, height: u16) {
        self.height = height;
        self.clamp_scroll();
    }

    /// Takes a fresh snapshot taken at `now_ms`. Returns how many approvals arrived since the last
    /// one (none on the first, so opening the dashboard does not ring for an old queue).
    pub fn apply_snapshot(&mut self, snapshot: Snapshot, now_ms: u64) -> usize {
        let ids: HashSet<String> = snapshot.approvals.iter().map(Approval::id).collect();
        let arrived = if self.loaded {
            ids.difference(&self.known_approvals).count()
        } else {
            0
        };
        self.known_approvals = ids;
        self.loaded = true;
        self.snapshot = snapshot;
        self.now_ms = now_ms;
        self.refilter();
        if self
            .confirm
            .as_ref()
            .is_some_and(|c| !self.snapshot.approvals.iter().any(|a| a.id() == c.id()))
        {
            // Decided elsewhere (or expired) while the dialog was open: nothing is left to confirm.
            self.confirm = None;
            self.notice = Some(Notice {
                text: "That call was decided elsewhere or expired.".into(),
                is_error: false,
            });
        }
        arrived
    }

    /// The run the details view shows, to reload it with each snapshot.
    pub fn detail_run_id(&self) -> Option<&str> {
        self.detail.as_ref().map(|d| d.run_id.as_str())
    }

    pub fn apply_detail(&mut self, run_id: &str, loaded: Result<Option<RunDetail>, String>) {
        let Some(view) = self.detail.as_mut().filter(|d| d.run_id == run_id) else {
            return;
        };
        match loaded {
            Ok(Some(data)) => {
                view.data = Some(data);
                view.error = None;
            }
            Ok(None) => {
                view.error = Some(format!("There is no run `{run_id}` in the store any more."))
            }
            Err(e) => view.error = Some(e),
        }
        self.clamp_scroll();
    }

    /// What the app loop made of a [`Effect::Decide`].
    pub fn decided(
        &mut self,
        approval: &Approval,
        decision: Decision,
        outcome: Result<(), String>,
    ) {
        self.notice = Some(match outcome {
            Ok(()) => Notice {
                text: format!(
                    "{decision}: {} (call {} of {}); the run continues when it is resumed",
                    approval.address, approval.seq, approval.run_id
                ),
                is_error: false,
            },
            Err(e) => Notice {
                text: e,
                is_error: true,
            },
        });
    }

    /// What listing the sources again came to: a summary line, or why it could not run.
    pub fn refreshed(&mut self, outcome: Result<String, String>) {
        self.refreshing = false;
        self.notice = Some(match outcome {
            Ok(text) => Notice {
                text,
                is_error: false,
            },
            Err(e) => Notice {
                text: format!("The sources were not listed again: {e}"),
                is_error: true,
            },
        });
    }

    /// What starting a sign-in came to: where it went on, or why it could not start.
    pub fn signing_in(&mut self, outcome: Result<String, String>) {
        self.notice = Some(match outcome {
            Ok(text) => Notice {
                text,
                is_error: false,
            },
            Err(text) => Notice {
                text,
                is_error: true,
            },
        });
    }

    pub fn update(&mut self, action: Action) -> Option<Effect> {
        if !matches!(action, Action::FilterChar(_) | Action::FilterBackspace) {
            self.notice = None;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Back => self.back(),
            Action::ToggleHelp => self.help = !self.help,
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::PageUp => self.step(-(PAGE as isize)),
            Action::PageDown => self.step(PAGE as isize),
            Action::Top => self.step(isize::MIN / 2),
            Action::Bottom => self.step(isize::MAX / 2),
            Action::NextPane => self.focus = self.focus.step(1),
            Action::PrevPane => self.focus = self.focus.step(-1),
            Action::Open => return self.open(),
            Action::Decide(decision) => return self.decide(decision),
            Action::Confirm(yes) => {
                let approval = self.confirm.take()?;
                if yes {
                    return Some(Effect::Decide {
                        approval: Box::new(approval),
                        decision: Decision::AllowAlways,
                    });
                }
                self.notice = Some(Notice {
                    text: format!("Not decided: {} still waits.", approval.address),
                    is_error: false,
                });
            }
            Action::StartFilter => self.editing_filter = true,
            Action::FilterChar(c) => {
                self.filter.push(c);
                self.refilter();
            }
            Action::FilterBackspace => {
                if self.filter.pop().is_none() {
                    self.editing_filter = false;
                }
                self.refilter();
            }
            Action::RefreshSources if self.refreshing => {
                self.notice = Some(Notice {
                    text: "The sources are already being listed again.".into(),
                    is_error: false,
                });
            }
            Action::RefreshSources => {
                self.refreshing = true;
                return Some(Effect::RefreshSources);
            }
            Action::SignIn => match self.sign_in_target() {
                Some(waiting) => return Some(Effect::SignIn(waiting.clone())),
                None => {
                    self.notice = Some(Notice {
                        text: "No run waits for a sign-in.".into(),
                        is_error: false,
                    });
                }
            },
            Action::FilterDone => self.editing_filter = false,
            Action::FilterClear => {
                self.editing_filter = false;
                self.filter.clear();
                self.refilter();
            }
        }
        None
    }

    fn back(&mut self) {
        if self.help {
            self.help = false;
        } else if self.confirm.take().is_some() || self.detail.take().is_some() {
            // Closed the dialog or the details; the main screen shows again.
        } else if !self.filter.is_empty() {
            self.filter.clear();
            self.refilter();
        } else {
            self.quit = true;
        }
    }

    /// The waiting connection `s` signs in: the selected row of the queue, else the one of the
    /// run whose details show, else the newest.
    fn sign_in_target(&self) -> Option<&WaitingConnection> {
        let connections = &self.snapshot.connections;
        if let Some(view) = &self.detail {
            return connections.iter().find(|w| w.run_id == view.run_id);
        }
        if self.focus == Pane::Approvals
            && let Some(selected) = self.selected_connection()
        {
            return Some(selected);
        }
        connections.first()
    }

    fn open(&mut self) -> Option<Effect> {
        let run_id = match self.focus {
            Pane::Approvals => match self.selected_connection() {
                Some(waiting) => waiting.run_id.clone(),
                None => self.selected_approval()?.run_id.clone(),
            },
            Pane::Runs => self.selected_run()?.run_id.clone(),
            Pane::Sources => {
                self.notice = Some(Notice {
                    text: "`capabilities source test NAME` connects to one source and reports."
                        .into(),
                    is_error: false,
                });
                return None;
            }
        };
        self.detail = Some(DetailView {
            run_id: run_id.clone(),
            data: None,
            error: None,
            scroll: 0,
        });
        Some(Effect::LoadDetail(run_id))
    }

    fn decide(&mut self, decision: Decision) -> Option<Effect> {
        let target = match &self.detail {
            // In the details of a run, the decision is about that run's oldest waiting call.
            Some(view) => self
                .snapshot
                .approvals
                .iter()
                .find(|a| a.run_id == view.run_id)
                .cloned(),
            None => self.selected_approval().cloned(),
        };
        let Some(approval) = target else {
            let text = match self.selected_connection().filter(|_| self.detail.is_none()) {
                Some(waiting) => format!(
                    "This run waits for a sign-in to `{}`, not a decision: press s to open the sign-in page.",
                    waiting.label()
                ),
                None => "No call is waiting for a decision here.".into(),
            };
            self.notice = Some(Notice {
                text,
                is_error: false,
            });
            return None;
        };
        if decision == Decision::AllowAlways {
            self.confirm = Some(approval);
            return None;
        }
        Some(Effect::Decide {
            approval: Box::new(approval),
            decision,
        })
    }

    fn step(&mut self, by: isize) {
        if let Some(view) = &mut self.detail {
            view.scroll = view.scroll.saturating_add_signed(by);
            self.clamp_scroll();
            return;
        }
        let len = self.visible_len(self.focus);
        let cursor = &mut self.cursors[self.focus.index()];
        cursor.index = cursor
            .index
            .saturating_add_signed(by)
            .min(len.saturating_sub(1));
        self.sync_keys();
    }

    fn clamp_scroll(&mut self) {
        let rows = self.detail_rows();
        if let Some(view) = &mut self.detail {
            let lines = view.data.as_ref().map_or(0, |d| detail::lines(d).len());
            view.scroll = view.scroll.min(lines.saturating_sub(rows));
        }
    }

    /// Lines of the details view that fit between its title, borders and footer.
    pub(super) fn detail_rows(&self) -> usize {
        usize::from(self.height.saturating_sub(4)).max(1)
    }

    fn visible_len(&self, pane: Pane) -> usize {
        match pane {
            Pane::Approvals => self.view.approvals.len() + self.view.connections.len(),
            Pane::Runs => self.view.runs.len(),
            Pane::Sources => self.view.sources.len(),
        }
    }

    fn key_at(&self, pane: Pane, index: usize) -> Option<String> {
        match pane {
            Pane::Approvals => match index.checked_sub(self.view.approvals.len()) {
                None => self
                    .view
                    .approvals
                    .get(index)
                    .map(|&i| self.snapshot.approvals[i].id()),
                Some(row) => self
                    .view
                    .connections
                    .get(row)
                    .map(|&i| format!("sign-in {}", self.snapshot.connections[i].run_id)),
            },
            Pane::Runs => self
                .view
                .runs
                .get(index)
                .map(|&i| self.snapshot.runs[i].run_id.clone()),
            Pane::Sources => self
                .view
                .sources
                .get(index)
                .map(|&(i, _)| self.snapshot.sources[i].name.clone()),
        }
    }

    fn sync_keys(&mut self) {
        for pane in Pane::ORDER {
            let key = self.key_at(pane, self.cursors[pane.index()].index);
            self.cursors[pane.index()].key = key;
        }
    }

    /// Recomputes what each pane shows after the snapshot or the filter changed, keeping each
    /// pane's selected item selected when it is still there.
    fn refilter(&mut self) {
        let mut filter = Filter::new(&self.filter);
        let snapshot = &self.snapshot;
        let approvals = (0..snapshot.approvals.len())
            .filter(|&i| {
                let a = &snapshot.approvals[i];
                filter.matches([
                    a.address.as_str(),
                    a.run_id.as_str(),
                    a.connection.as_deref().unwrap_or(""),
                ])
            })
            .collect();
        let connections = (0..snapshot.connections.len())
            .filter(|&i| {
                let w = &snapshot.connections[i];
                filter.matches([w.source.as_str(), w.run_id.as_str()])
            })
            .collect();
        let runs = (0..snapshot.runs.len())
            .filter(|&i| {
                let r = &snapshot.runs[i];
                filter.matches([
                    r.run_id.as_str(),
                    r.status.as_str(),
                    r.last_call.as_deref().unwrap_or(""),
                ])
            })
            .collect();
        let sources = (0..snapshot.sources.len())
            .filter_map(|i| {
                let s = &snapshot.sources[i];
                if filter.matches([s.name.as_str()]) {
                    return Some((i, 0));
                }
                let tools = s
                    .tools
                    .iter()
                    .filter(|t| filter.matches([t.as_str()]))
                    .count();
                (tools > 0).then_some((i, tools))
            })
            .collect();
        self.view = View {
            approvals,
            connections,
            runs,
            sources,
        };
        for pane in Pane::ORDER {
            let len = self.visible_len(pane);
            let cursor = &self.cursors[pane.index()];
            let found = cursor
                .key
                .as_ref()
                .and_then(|key| (0..len).find(|&i| self.key_at(pane, i).as_ref() == Some(key)));
            let index = found.unwrap_or(cursor.index).min(len.saturating_sub(1));
            self.cursors[pane.index()].index = index;
        }
        self.sync_keys();
    }

    /// The selected row of a pane, as an index into its visible items.
    pub(super) fn selected(&self, pane: Pane) -> Option<usize> {
        let index = self.cursors[pane.index()].index;
        (index < self.visible_len(pane)).then_some(index)
    }

    pub(super) fn selected_approval(&self) -> Option<&Approval> {
        let i = self.selected(Pane::Approvals)?;
        self.view
            .approvals
            .get(i)
            .map(|&i| &self.snapshot.approvals[i])
    }

    /// The selected row of the queue when it is a run waiting for a sign-in.
    pub(super) fn selected_connection(&self) -> Option<&WaitingConnection> {
        let row = self
            .selected(Pane::Approvals)?
            .checked_sub(self.view.approvals.len())?;
        self.view
            .connections
            .get(row)
            .map(|&i| &self.snapshot.connections[i])
    }

    fn selected_run(&self) -> Option<&crate::runs::RunSummary> {
        self.selected(Pane::Runs)
            .map(|i| &self.snapshot.runs[self.view.runs[i]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures::{NOW, approval, detail, loaded, run, snapshot};

    #[test]
    fn decisions_target_the_selected_call_and_always_asks_first() {
        let mut state = loaded();
        state.update(Action::Down);
        let Some(Effect::Decide { approval, decision }) =
            state.update(Action::Decide(Decision::AllowOnce))
        else {
            panic!("no decision")
        };
        assert_eq!(
            (approval.address.as_str(), decision),
            ("github.createIssue", Decision::AllowOnce)
        );
        assert_eq!(state.update(Action::Decide(Decision::AllowAlways)), None);
        assert_eq!(state.mode(), Mode::Confirm);
        assert_eq!(state.update(Action::Confirm(false)), None);
        assert_eq!(state.mode(), Mode::Main);
        state.update(Action::Decide(Decision::AllowAlways));
        let effect = state.update(Action::Confirm(true));
        assert!(
            matches!(
                effect,
                Some(Effect::Decide {
                    decision: Decision::AllowAlways,
                    ..
                })
            ),
            "{effect:?}"
        );
    }

    #[test]
    fn s_starts_the_sign_in_a_waiting_run_needs() {
        let mut state = loaded();
        assert_eq!(state.update(Action::SignIn), None);
        assert!(
            state
                .notice
                .as_ref()
                .is_some_and(|n| n.text == "No run waits for a sign-in."),
            "{:?}",
            state.notice
        );
        let mut waiting = snapshot();
        waiting.connections = vec![crate::tui::snapshot::WaitingConnection {
            run_id: "run_cccccccccccccccccccccccccc".into(),
            source: "linear".into(),
            connection: None,
        }];
        state.apply_snapshot(waiting.clone(), NOW);
        assert_eq!(
            state.update(Action::SignIn),
            Some(Effect::SignIn(waiting.connections[0].clone()))
        );
        state.signing_in(Err(
            "no browser opened; run `capabilities source login linear`".into(),
        ));
        assert!(state.notice.as_ref().is_some_and(|n| n.is_error));
    }

    #[test]
    fn each_waiting_connection_is_a_row_of_the_queue_and_s_signs_in_the_selected_one() {
        let mut state = loaded();
        let approvals = state.snapshot.approvals.len();
        let mut waiting = snapshot();
        waiting.connections = vec![
            crate::tui::snapshot::WaitingConnection {
                run_id: "run_cccccccccccccccccccccccccc".into(),
                source: "linear".into(),
                connection: None,
            },
            crate::tui::snapshot::WaitingConnection {
                run_id: "run_dddddddddddddddddddddddddd".into(),
                source: "notion".into(),
                connection: Some("work".into()),
            },
        ];
        state.apply_snapshot(waiting.clone(), NOW);
        assert_eq!(state.visible_len(Pane::Approvals), approvals + 2);
        state.update(Action::Bottom);
        assert_eq!(
            state.selected_connection().map(|w| w.source.as_str()),
            Some("notion")
        );
        assert_eq!(state.selected_approval(), None);
        // The named connection the run waits on is the one signed in.
        assert_eq!(
            state.update(Action::SignIn),
            Some(Effect::SignIn(waiting.connections[1].clone()))
        );
        // A decision key on a sign-in row says what the row needs instead.
        assert_eq!(state.update(Action::Decide(Decision::AllowOnce)), None);
        assert!(
            state.notice.as_ref().is_some_and(|n| n
                .text
                .contains("waits for a sign-in to `notion (connection work)`")),
            "{:?}",
            state.notice
        );
        // Enter opens the waiting run.
        assert_eq!(
            state.update(Action::Open),
            Some(Effect::LoadDetail("run_dddddddddddddddddddddddddd".into()))
        );
        state.update(Action::Back);
        // The selection stays on its row when a refresh adds one above.
        waiting.connections.insert(
            0,
            crate::tui::snapshot::WaitingConnection {
                run_id: "run_eeeeeeeeeeeeeeeeeeeeeeeeee".into(),
                source: "sentry".into(),
                connection: None,
            },
        );
        state.apply_snapshot(waiting.clone(), NOW);
        assert_eq!(
            state.selected_connection().map(|w| w.source.as_str()),
            Some("notion")
        );
        // The filter narrows them like the calls.
        for c in "linear".chars() {
            state.update(Action::FilterChar(c));
        }
        assert_eq!(state.view.connections.len(), 1);
        // Elsewhere, `s` still signs in the newest.
        state.update(Action::FilterClear);
        state.update(Action::NextPane);
        assert_eq!(
            state.update(Action::SignIn),
            Some(Effect::SignIn(waiting.connections[0].clone()))
        );
    }

    #[test]
    fn refreshing_runs_once_at_a_time_and_reports_its_outcome() {
        let mut state = loaded();
        assert_eq!(
            state.update(Action::RefreshSources),
            Some(Effect::RefreshSources)
        );
        assert!(state.refreshing);
        assert_eq!(state.update(Action::RefreshSources), None, "one at a time");
        assert!(
            state
                .notice
                .as_ref()
                .is_some_and(|n| n.text.contains("already"))
        );
        state.refreshed(Ok("Listed 3 of 3 source(s) again".into()));
        assert!(!state.refreshing);
        assert_eq!(
            state.notice.as_ref().map(|n| (n.text.as_str(), n.is_error)),
            Some(("Listed 3 of 3 source(s) again", false))
        );
        state.update(Action::RefreshSources);
        state.refreshed(Err("the config does not load".into()));
        assert!(state.notice.as_ref().is_some_and(|n| n.is_error));
    }

    #[test]
    fn an_empty_queue_says_so_instead_of_deciding() {
        let mut state = State::new(false);
        state.apply_snapshot(Snapshot::default(), NOW);
        assert_eq!(state.update(Action::Decide(Decision::Deny)), None);
        assert!(
            state
                .notice
                .as_ref()
                .is_some_and(|n| n.text.contains("No call is waiting"))
        );
    }

    #[test]
    fn selection_follows_the_item_across_refreshes() {
        let mut state = loaded();
        state.update(Action::NextPane);
        state.update(Action::Down);
        assert_eq!(
            state.selected_run().map(|r| r.run_id.as_str()),
            Some("run_bbbbbbbbbbbbbbbbbbbbbbbbbb")
        );
        let mut newer = snapshot();
        newer.runs.insert(
            0,
            run("run_eeeeeeeeeeeeeeeeeeeeeeeeee", "running", 0, None, 0),
        );
        state.apply_snapshot(newer, NOW);
        assert_eq!(
            state.selected_run().map(|r| r.run_id.as_str()),
            Some("run_bbbbbbbbbbbbbbbbbbbbbbbbbb")
        );
    }

    #[test]
    fn only_new_approvals_count_as_arrivals() {
        let mut state = State::new(false);
        assert_eq!(
            state.apply_snapshot(snapshot(), NOW),
            0,
            "the queue at start is not news"
        );
        assert_eq!(state.apply_snapshot(snapshot(), NOW), 0);
        let mut more = snapshot();
        more.approvals
            .push(approval("run_ffffffffffffffffffffffffff", 0, "x.y", 0));
        assert_eq!(state.apply_snapshot(more, NOW), 1);
    }

    #[test]
    fn the_filter_narrows_every_pane_and_escape_clears_it() {
        let mut state = loaded();
        state.update(Action::StartFilter);
        for c in "pub".chars() {
            state.update(Action::FilterChar(c));
        }
        assert_eq!(state.view.approvals.len(), 1);
        assert_eq!(
            state.view.sources,
            vec![(0, 1)],
            "counter matches by one of its tools"
        );
        state.update(Action::FilterDone);
        assert_eq!(state.mode(), Mode::Main);
        state.update(Action::Back);
        assert!(state.filter.is_empty() && state.view.approvals.len() == 2);
        state.update(Action::Back);
        assert!(state.should_quit());
    }

    #[test]
    fn details_open_scroll_and_close() {
        let mut state = loaded();
        assert_eq!(
            state.update(Action::Open),
            Some(Effect::LoadDetail("run_aaaaaaaaaaaaaaaaaaaaaaaaaa".into()))
        );
        state.resize(10);
        state.apply_detail("run_aaaaaaaaaaaaaaaaaaaaaaaaaa", Ok(Some(detail())));
        state.update(Action::Bottom);
        let scroll = state.detail.as_ref().map(|d| d.scroll).unwrap_or_default();
        assert!(scroll > 0);
        state.update(Action::Up);
        assert_eq!(
            state.detail.as_ref().map(|d| d.scroll),
            Some(scroll - 1),
            "one step up from the end moves at once"
        );
        let effect = state.update(Action::Decide(Decision::Deny));
        assert!(
            matches!(effect, Some(Effect::Decide { ref approval, .. }) if approval.seq == 1),
            "{effect:?}"
        );
        state.update(Action::Back);
        assert_eq!(state.mode(), Mode::Main);
    }

    #[test]
    fn a_call_decided_elsewhere_closes_the_confirmation() {
        let mut state = loaded();
        state.update(Action::Decide(Decision::AllowAlways));
        let mut later = snapshot();
        later.approvals.remove(0);
        state.apply_snapshot(later, NOW);
        assert_eq!(state.mode(), Mode::Main);
        assert!(state.notice.is_some());
    }
}
