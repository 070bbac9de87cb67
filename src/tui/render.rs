//! Drawing: one pure function of the [`State`] per part of the screen (title, panes or details,
//! footer, help and confirmation dialogs). Nothing here reads the store or the clock, so the
//! snapshot tests draw exactly what a person sees.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::detail;
use super::format;
use super::panes;
use super::state::{Mode, State};
use super::theme::Theme;

/// Below this the panes cannot show a row; the screen says so instead.
const MIN_WIDTH: u16 = 30;
const MIN_HEIGHT: u16 = 6;

pub fn render(frame: &mut Frame, state: &State) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "The terminal is too small ({}×{}); the dashboard needs {MIN_WIDTH}×{MIN_HEIGHT}. q quits.",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let [title, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_title(frame, state, title);
    if state.detail.is_some() {
        render_detail(frame, state, body);
    } else {
        let heights = panes::layout(state, body.height);
        let areas =
            Layout::vertical(heights.iter().map(|&(_, h)| Constraint::Length(h))).split(body);
        for (&(pane, _), &pane_area) in heights.iter().zip(areas.iter()) {
            panes::render(frame, state, pane, pane_area);
        }
    }
    render_footer(frame, state, footer);
    match state.mode() {
        Mode::Help => render_help(frame, state, area),
        Mode::Confirm => render_confirm(frame, state, area),
        _ => {}
    }
}

fn render_title(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    // A run waiting for a sign-in waits for the person as much as a call waiting for a decision.
    let waiting = state.snapshot.approvals.len() + state.snapshot.connections.len();
    let mut spans = vec![Span::styled(" capabilities ", theme.title())];
    if let Some(profile) = &state.profile {
        spans.push(Span::styled(format!(" profile {profile} "), theme.title()));
        spans.push(Span::raw(" "));
    }
    let waiting_style = if waiting > 0 {
        theme.attention()
    } else {
        theme.quiet()
    };
    spans.push(Span::styled(format!("{waiting} waiting"), waiting_style));
    spans.push(Span::styled(
        format!(
            " · {} · {}",
            format::count(state.snapshot.runs.len(), "run"),
            format::count(state.snapshot.sources.len(), "source")
        ),
        theme.quiet(),
    ));
    if !state.filter.is_empty() && !state.editing_filter {
        spans.push(Span::raw(format!(" · filter: {}", state.filter)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Key hints that fit in `width`: `pairs` in order of importance, as many as fit, and `last`
/// always (help and quit must never fall off the line).
fn hints(
    state: &State,
    pairs: &[(&str, &str)],
    last: &[(&str, &str)],
    width: u16,
) -> Line<'static> {
    let theme = Theme::new(state.color);
    let size = |(key, label): &(&str, &str)| key.chars().count() + 1 + label.chars().count();
    let separator = 2;
    // One leading space, then each pair and a separator between pairs.
    let reserved: usize = last.iter().map(|p| size(p) + separator).sum();
    let mut used = 1 + reserved;
    let mut shown: Vec<&(&str, &str)> = Vec::new();
    for pair in pairs {
        if used + size(pair) + separator > usize::from(width) + separator {
            break;
        }
        used += size(pair) + separator;
        shown.push(pair);
    }
    shown.extend(last);
    let mut spans = vec![Span::raw(" ")];
    for (i, (key, label)) in shown.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(key.to_string(), theme.key()));
        spans.push(Span::raw(format!(" {label}")));
    }
    Line::from(spans)
}

/// Help and quit, at the end of every footer.
const ALWAYS: [(&str, &str); 2] = [("?", "help"), ("q", "quit")];

fn render_footer(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let width = usize::from(area.width);
    let line = if state.editing_filter {
        Line::from(vec![
            Span::styled(" / ", theme.key()),
            Span::raw(format!("{}▏", state.filter)),
            Span::styled("  enter keep · esc clear", theme.quiet()),
        ])
    } else if let Some(notice) = &state.notice {
        let style = if notice.is_error {
            theme.bad()
        } else {
            theme.good()
        };
        Line::from(Span::styled(
            format::fit(&format!(" {}", notice.text), width),
            style,
        ))
    } else if state.refreshing {
        Line::from(Span::styled(
            format::fit(
                " Listing every source again (as `capabilities source refresh`)…",
                width,
            ),
            theme.quiet(),
        ))
    } else if let Some(problem) = state.snapshot.problems.first() {
        Line::from(Span::styled(
            format::fit(&format!(" {problem}"), width),
            theme.bad(),
        ))
    } else if state.detail.is_some() {
        hints(
            state,
            &[("a/r/A/d", "decide"), ("↑↓", "scroll"), ("esc", "back")],
            &ALWAYS,
            area.width,
        )
    } else {
        let pairs = [
            ("a", "once"),
            ("r", "run"),
            ("A", "always"),
            ("d", "deny"),
            ("enter", "open"),
            ("/", "filter"),
            ("u", "relist"),
            ("tab", "pane"),
        ];
        hints(state, &pairs, &ALWAYS, area.width)
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn render_detail(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let Some(view) = &state.detail else {
        return;
    };
    let mut title = format!(" {} ", view.run_id);
    if let Some(run) = state.snapshot.runs.iter().find(|r| r.run_id == view.run_id) {
        title.push_str(&format!(
            "· {} · {} · {} ",
            run.status.replace('_', " "),
            format::count(run.calls as usize, "call"),
            format::duration(panes::elapsed(run, state.now_ms))
        ));
    }
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(title, theme.border(true)));
    let paragraph = match (&view.data, &view.error) {
        (_, Some(error)) => {
            Paragraph::new(Span::styled(error.clone(), theme.bad())).wrap(Wrap { trim: true })
        }
        (None, None) => Paragraph::new(Span::styled("Loading…", theme.quiet())),
        (Some(data), None) => {
            let lines: Vec<Line> = detail::lines(data)
                .into_iter()
                .skip(view.scroll)
                .take(usize::from(area.height))
                .map(|l| Line::from(Span::styled(l.text, theme.detail(l.kind))))
                .collect();
            Paragraph::new(lines)
        }
    };
    frame.render_widget(paragraph.block(block), area);
}

/// A box of at most `width`×`height` in the middle of `area`, cleared.
fn popup(frame: &mut Frame, area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    rect
}

fn render_help(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let key = |k: &'static str, what: &'static str| {
        Line::from(vec![
            Span::styled(format!("  {k:<15}"), theme.key()),
            Span::raw(what),
        ])
    };
    let heading = |text: &'static str| Line::from(Span::styled(text, theme.header()));
    let lines = vec![
        heading("The selected waiting call"),
        key("a", "allow once"),
        key("r", "allow for this run (later calls of the tool too)"),
        key("A", "always allow: asks, then writes a policy rule"),
        key("d", "deny"),
        heading("Moving around"),
        key("↑ ↓ j k", "select, or scroll the details"),
        key("tab ← →", "next or previous pane"),
        key("pgup pgdn g G", "page, top, bottom"),
        key("enter", "details of the run: script, calls, logs"),
        key("/", "filter runs, calls and tools (fuzzy)"),
        key("u", "list every source again (`source refresh`)"),
        key("s", "sign in for the selected (or newest) waiting run"),
        key("esc", "back; clears the filter"),
        key("q", "quit"),
        Line::from(Span::styled(
            "Decisions go to the state store; the run goes on when resumed.",
            theme.quiet(),
        )),
    ];
    let rect = popup(frame, area, 68, lines.len() as u16 + 2);
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(" Help · any key closes ", theme.border(true)));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}

fn render_confirm(frame: &mut Frame, state: &State, area: Rect) {
    let theme = Theme::new(state.color);
    let Some(approval) = &state.confirm else {
        return;
    };
    let lines = vec![
        Line::from(Span::styled(
            format!("Always allow {}?", approval.address),
            theme.attention(),
        )),
        Line::from(""),
        Line::from(format!(
            "The call runs, and a policy rule in the config allows {} in every future run, without asking.",
            approval.address
        )),
        Line::from(""),
        Line::from(vec![
            Span::styled("y", theme.key()),
            Span::raw(" yes, always    "),
            Span::styled("n", theme.key()),
            Span::raw(" / "),
            Span::styled("esc", theme.key()),
            Span::raw(" no"),
        ]),
    ];
    let rect = popup(frame, area, 60, 9);
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(" Confirm ", theme.border(true)));
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(block),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::runs::Decision;
    use crate::tui::fixtures::{NOW, detail, loaded};
    use crate::tui::snapshot::Snapshot;
    use crate::tui::state::{Action, State};

    fn draw(state: &State, width: u16, height: u16) -> TestBackend {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
        terminal.draw(|frame| render(frame, state)).expect("draw");
        terminal.backend().clone()
    }

    #[test]
    fn main_screen_at_80x24() {
        insta::assert_snapshot!(draw(&loaded(), 80, 24));
    }

    #[test]
    fn wide_screen_shows_every_column() {
        insta::assert_snapshot!(draw(&loaded(), 120, 24));
    }

    #[test]
    fn empty_state_says_what_to_do() {
        let mut state = State::new(false);
        state.apply_snapshot(Snapshot::default(), NOW);
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn runs_pane_focused_after_tab() {
        let mut state = loaded();
        state.update(Action::NextPane);
        state.update(Action::Down);
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn sources_pane_filtered_by_a_tool() {
        let mut state = loaded();
        state.update(Action::PrevPane);
        state.update(Action::StartFilter);
        for c in "issue".chars() {
            state.update(Action::FilterChar(c));
        }
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn details_of_a_run() {
        let mut state = loaded();
        state.update(Action::Open);
        state.apply_detail("run_aaaaaaaaaaaaaaaaaaaaaaaaaa", Ok(Some(detail())));
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn help_overlay() {
        let mut state = loaded();
        state.update(Action::ToggleHelp);
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn always_allow_asks_for_confirmation() {
        let mut state = loaded();
        state.update(Action::Decide(Decision::AllowAlways));
        insta::assert_snapshot!(draw(&state, 80, 24));
    }

    #[test]
    fn small_terminal_keeps_the_queue_and_the_focused_pane() {
        insta::assert_snapshot!(draw(&loaded(), 60, 15));
    }

    #[test]
    fn tiny_terminal_says_it_is_too_small() {
        insta::assert_snapshot!(draw(&loaded(), 28, 5));
    }

    #[test]
    fn a_profile_dashboard_names_its_profile_in_the_title() {
        let mut state = State::new(false).for_profile(Some("work".into()));
        state.apply_snapshot(crate::tui::fixtures::snapshot(), NOW);
        let title = draw(&state, 80, 24)
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(title.contains("capabilities  profile work"), "{title}");
        let whole = draw(&loaded(), 80, 24).to_string();
        assert!(!whole.contains("profile work"), "{whole}");
    }

    #[test]
    fn the_footer_fits_80_columns_and_always_offers_help_and_quit() {
        for width in [80, 60, 40] {
            let screen = draw(&loaded(), width, 24).to_string();
            let footer = screen
                .lines()
                .nth(23)
                .unwrap_or_default()
                .trim_matches('"')
                .to_string();
            assert!(footer.contains("? help  q quit"), "{width}: {footer}");
            assert!(footer.chars().count() <= usize::from(width), "{footer}");
        }
        let footer = draw(&loaded(), 80, 24).to_string();
        let footer = footer.lines().nth(23).unwrap_or_default();
        for key in ["a once", "r run", "A always", "d deny", "u relist"] {
            assert!(footer.contains(key), "80 columns show `{key}`: {footer}");
        }
    }

    #[test]
    fn runs_waiting_for_a_sign_in_show_beside_the_calls_waiting() {
        let mut state = loaded();
        let mut waiting = crate::tui::fixtures::snapshot();
        waiting.connections = vec![crate::tui::snapshot::WaitingConnection {
            run_id: "run_cccccccccccccccccccccccccc".into(),
            source: "linear".into(),
            connection: None,
        }];
        state.apply_snapshot(waiting, crate::tui::fixtures::NOW);
        let screen = draw(&state, 120, 24).to_string();
        assert!(
            screen.contains("waiting for a sign-in (1) (s signs in)"),
            "{screen}"
        );
        assert!(screen.contains("sign in: linear"), "{screen}");
        assert!(screen.contains("3 waiting"), "{screen}");
        assert!(screen.contains("waits for a sign-in: press s"), "{screen}");
        // On a narrow screen too, one row per waiting run.
        let narrow = draw(&state, 80, 24).to_string();
        assert!(narrow.contains("sign in: linear"), "{narrow}");
        // A named connection is named on its row.
        let mut named = crate::tui::fixtures::snapshot();
        named.connections = vec![crate::tui::snapshot::WaitingConnection {
            run_id: "run_cccccccccccccccccccccccccc".into(),
            source: "linear".into(),
            connection: Some("work".into()),
        }];
        state.apply_snapshot(named, crate::tui::fixtures::NOW);
        let screen = draw(&state, 120, 24).to_string();
        assert!(screen.contains("sign in: linear    run_"), "{screen}");
        assert!(
            screen.contains("work       waits for a sign-in"),
            "{screen}"
        );
    }

    #[test]
    fn refreshing_shows_in_the_footer_until_done() {
        let mut state = loaded();
        state.update(Action::RefreshSources);
        let footer = |state: &State| {
            draw(state, 80, 24)
                .to_string()
                .lines()
                .nth(23)
                .unwrap_or_default()
                .to_string()
        };
        assert!(
            footer(&state).contains("Listing every source again"),
            "{}",
            footer(&state)
        );
        state.refreshed(Ok("Listed 2 of 3 source(s) again; failed: github".into()));
        assert!(
            footer(&state).contains("failed: github"),
            "{}",
            footer(&state)
        );
    }

    #[test]
    fn problems_and_notices_show_in_the_footer() {
        let mut state = State::new(false);
        let snapshot = Snapshot {
            problems: vec!["cannot read the config: bad line 3".into()],
            ..Snapshot::default()
        };
        state.apply_snapshot(snapshot, NOW);
        let footer = |backend: &TestBackend| {
            backend
                .to_string()
                .lines()
                .nth(23)
                .unwrap_or_default()
                .to_string()
        };
        assert!(footer(&draw(&state, 80, 24)).contains("cannot read the config"));
        state.update(Action::Decide(Decision::Deny));
        assert!(footer(&draw(&state, 80, 24)).contains("No call is waiting"));
    }
}
