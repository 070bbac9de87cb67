//! The three panes of the main screen (approval queue, runs, sources) as pure functions of the
//! state, and how the screen's height is shared between them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};

use super::format;
use super::state::{Pane, State};
use super::theme::Theme;
use crate::runs::RunSummary;

/// How much of a run id the waiting pane shows: enough to tell runs apart, and a prefix
/// `capabilities hub approve` takes.
const RUN_ID_WIDTH: u16 = 13;

/// Pane heights (borders and header included) for a body of `height` rows: all three panes when
/// the runs pane keeps a few rows; else the queue and the focused other pane; else only the
/// focused pane.
pub fn layout(state: &State, height: u16) -> Vec<(Pane, u16)> {
    let rows = |n: usize, most: u16| (n.max(1) as u16).min(most) + 3;
    let approvals = rows(state.view.approvals.len() + state.view.connections.len(), 6);
    let sources = rows(state.view.sources.len(), 5);
    let rest = height.saturating_sub(approvals + sources);
    if rest >= 5 {
        return vec![
            (Pane::Approvals, approvals),
            (Pane::Runs, rest),
            (Pane::Sources, sources),
        ];
    }
    let other = if state.focus == Pane::Sources {
        Pane::Sources
    } else {
        Pane::Runs
    };
    let rest = height.saturating_sub(approvals);
    if rest >= 4 {
        return vec![(Pane::Approvals, approvals), (other, rest)];
    }
    vec![(state.focus, height)]
}

pub fn render(frame: &mut Frame, state: &State, pane: Pane, area: Rect) {
    match pane {
        Pane::Approvals => approvals(frame, state, area),
        Pane::Runs => runs(frame, state, area),
        Pane::Sources => sources(frame, state, area),
    }
}

fn block(state: &State, pane: Pane, title: String) -> Block<'static> {
    let theme = Theme::new(state.color);
    let focused = state.focus == pane && state.detail.is_none();
    Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(title, theme.border(focused)))
}

/// A count, with how many the filter left when it hides some.
fn counted(name: &str, shown: usize, total: usize) -> String {
    if shown == total {
        format!(" {name} ({total}) ")
    } else {
        format!(" {name} ({shown} of {total}) ")
    }
}

fn empty(frame: &mut Frame, state: &State, block: Block<'_>, area: Rect, text: &str) {
    let theme = Theme::new(state.color);
    let message = if state.filter.is_empty() {
        text.to_string()
    } else {
        format!("Nothing matches the filter `{}`.", state.filter)
    };
    frame.render_widget(
        Paragraph::new(Span::styled(message, theme.quiet()))
            .wrap(Wrap { trim: true })
            .block(block),
        area,
    );
}

fn table<'a>(
    state: &State,
    pane: Pane,
    rows: Vec<Row<'a>>,
    widths: Vec<Constraint>,
    header: Vec<&'a str>,
    block: Block<'a>,
) -> Table<'a> {
    let theme = Theme::new(state.color);
    Table::new(rows, widths)
        .header(Row::new(header).style(theme.header()))
        .block(block)
        .column_spacing(1)
        .row_highlight_style(theme.selected(state.focus == pane))
        .highlight_symbol("> ")
        .highlight_spacing(HighlightSpacing::Always)
}

fn show(frame: &mut Frame, state: &State, pane: Pane, table: Table<'_>, area: Rect) {
    let mut selection = TableState::default().with_selected(state.selected(pane));
    frame.render_stateful_widget(table, area, &mut selection);
}

fn approvals(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let all = &state.snapshot.approvals;
    let mut title = counted(
        "Waiting for a decision",
        state.view.approvals.len(),
        all.len(),
    );
    // Runs waiting for a sign-in sit below the calls waiting for a decision, one row each:
    // both need the person, and `s` starts the selected one's sign-in.
    let connections = &state.snapshot.connections;
    if !connections.is_empty() {
        title.push_str(&format!(
            "· {} (s signs in) ",
            counted(
                "waiting for a sign-in",
                state.view.connections.len(),
                connections.len()
            )
            .trim()
        ));
    }
    let block = block(state, Pane::Approvals, title);
    if state.view.approvals.is_empty() && state.view.connections.is_empty() {
        return empty(
            frame,
            state,
            block,
            area,
            "No calls are waiting for a decision.",
        );
    }
    // Which run a call belongs to and who started it come first: a unique prefix of the run id
    // is what `capabilities hub approve` takes. Connection and reason need a wide screen.
    let medium = area.width >= 72;
    let wide = area.width >= 110;
    let client_of = |run_id: &str| {
        state
            .snapshot
            .runs
            .iter()
            .find(|r| r.run_id == run_id)
            .map(|r| r.origin.clone())
            .unwrap_or_default()
    };
    let rows = state
        .view
        .approvals
        .iter()
        .map(|&i| {
            let a = &all[i];
            let left = format::countdown(a.expires_at_ms.saturating_sub(state.now_ms));
            let mut cells = vec![
                Cell::from(a.address.clone()),
                Cell::from(format::fit(&a.run_id, RUN_ID_WIDTH.into())),
            ];
            if medium {
                cells.push(Cell::from(format::fit(&client_of(&a.run_id), 12)));
            }
            if wide {
                cells.push(Cell::from(a.connection.clone().unwrap_or_default()));
            }
            cells.push(Cell::from(format::one_line(&a.preview)));
            if wide {
                cells.push(Cell::from(Span::styled(
                    format::one_line(&a.reason),
                    theme.quiet(),
                )));
            }
            cells.push(Cell::from(Line::from(left).right_aligned()));
            Row::new(cells)
        })
        .chain(state.view.connections.iter().map(|&i| {
            let waiting = &connections[i];
            // A wide screen names the connection in its own column, as for the calls.
            let what = if wide {
                waiting.source.clone()
            } else {
                waiting.label()
            };
            let mut cells = vec![
                Cell::from(Span::styled(format!("sign in: {what}"), theme.attention())),
                Cell::from(format::fit(&waiting.run_id, RUN_ID_WIDTH.into())),
            ];
            if medium {
                cells.push(Cell::from(format::fit(&client_of(&waiting.run_id), 12)));
            }
            if wide {
                cells.push(Cell::from(
                    waiting
                        .connection
                        .as_deref()
                        .unwrap_or("default")
                        .to_string(),
                ));
            }
            cells.push(Cell::from(Span::styled(
                "waits for a sign-in: press s".to_string(),
                theme.quiet(),
            )));
            if wide {
                cells.push(Cell::from(""));
            }
            cells.push(Cell::from(""));
            Row::new(cells)
        }))
        .collect();
    let address = all
        .iter()
        .map(|a| a.address.chars().count())
        .chain(connections.iter().map(|w| w.source.chars().count() + 9))
        .max()
        .unwrap_or(0)
        .clamp(7, 26) as u16;
    let mut widths = vec![
        Constraint::Length(address),
        Constraint::Length(RUN_ID_WIDTH),
    ];
    let mut header = vec!["CALL", "RUN"];
    if medium {
        widths.push(Constraint::Length(12));
        header.push("CLIENT");
    }
    if wide {
        widths.push(Constraint::Length(10));
        header.push("CONNECTION");
    }
    widths.push(Constraint::Fill(3));
    header.push("ARGUMENTS");
    if wide {
        widths.push(Constraint::Fill(2));
        header.push("REASON");
    }
    widths.push(Constraint::Length(7));
    header.push("EXPIRES");
    show(
        frame,
        state,
        Pane::Approvals,
        table(state, Pane::Approvals, rows, widths, header, block),
        area,
    );
}

/// How long a run has taken: until it ended, or until now while it runs or waits.
pub fn elapsed(run: &RunSummary, now_ms: u64) -> u64 {
    let end = if matches!(run.status.as_str(), "completed" | "failed" | "cancelled") {
        run.updated_at_ms
    } else {
        now_ms
    };
    end.saturating_sub(run.created_at_ms)
}

fn runs(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let all = &state.snapshot.runs;
    let block = block(
        state,
        Pane::Runs,
        counted("Runs", state.view.runs.len(), all.len()),
    );
    if state.view.runs.is_empty() {
        return empty(
            frame,
            state,
            block,
            area,
            "No runs yet. They show here as soon as a hub or `capabilities exec` starts one.",
        );
    }
    // A whole run id is 30 characters; its first 14 tell runs apart on a normal terminal.
    let id_width: u16 = if area.width >= 104 { 30 } else { 14 };
    let rows = state
        .view
        .runs
        .iter()
        .map(|&i| {
            let run = &all[i];
            Row::new(vec![
                Cell::from(format::fit(&run.run_id, id_width.into())),
                Cell::from(format::fit(&run.origin, 12)),
                Cell::from(Span::styled(
                    run.status.replace('_', " "),
                    theme.status(&run.status),
                )),
                Cell::from(Line::from(run.calls.to_string()).right_aligned()),
                Cell::from(
                    Line::from(format::duration(elapsed(run, state.now_ms))).right_aligned(),
                ),
                Cell::from(run.last_call.clone().unwrap_or_default()),
            ])
        })
        .collect();
    let widths = vec![
        Constraint::Length(id_width),
        Constraint::Length(12),
        Constraint::Length(17),
        Constraint::Length(5),
        Constraint::Length(7),
        Constraint::Fill(1),
    ];
    let header = vec!["RUN", "CLIENT", "STATUS", "CALLS", "ELAPSED", "LAST CALL"];
    show(
        frame,
        state,
        Pane::Runs,
        table(state, Pane::Runs, rows, widths, header, block),
        area,
    );
}

fn sources(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let all = &state.snapshot.sources;
    let block = block(
        state,
        Pane::Sources,
        counted("Sources", state.view.sources.len(), all.len()),
    );
    if state.view.sources.is_empty() {
        return empty(
            frame,
            state,
            block,
            area,
            "No sources are configured. Add one with `capabilities source add NAME -- COMMAND`.",
        );
    }
    let wide = area.width >= 72;
    let rows = state
        .view
        .sources
        .iter()
        .map(|&(i, matched)| {
            let source = &all[i];
            let count = source.tool_count.map_or("-".to_string(), |n| n.to_string());
            // While the filter finds a source by its tools: how many of its cached tools match.
            let tools = if matched > 0 {
                format!("{matched}/{}", source.tools.len())
            } else {
                count
            };
            let mut cells = vec![
                Cell::from(source.name.clone()),
                Cell::from(Span::styled(
                    source.status.clone(),
                    theme.status(&source.status),
                )),
                Cell::from(Line::from(tools).right_aligned()),
            ];
            if wide {
                let seen = source.reported_at_ms.map_or("-".to_string(), |at| {
                    format::age(state.now_ms.saturating_sub(at))
                });
                cells.push(Cell::from(Line::from(seen).right_aligned()));
            }
            cells.push(Cell::from(Span::styled(
                source
                    .error
                    .as_deref()
                    .map(format::one_line)
                    .unwrap_or_default(),
                theme.bad(),
            )));
            Row::new(cells)
        })
        .collect();
    let name = all
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 20) as u16;
    let (widths, header) = if wide {
        (
            vec![
                Constraint::Length(name),
                Constraint::Length(10),
                Constraint::Length(5),
                Constraint::Length(6),
                Constraint::Fill(1),
            ],
            vec!["SOURCE", "STATUS", "TOOLS", "SEEN", "LAST ERROR"],
        )
    } else {
        (
            vec![
                Constraint::Length(name),
                Constraint::Length(10),
                Constraint::Length(5),
                Constraint::Fill(1),
            ],
            vec!["SOURCE", "STATUS", "TOOLS", "LAST ERROR"],
        )
    };
    show(
        frame,
        state,
        Pane::Sources,
        table(state, Pane::Sources, rows, widths, header, block),
        area,
    );
}
