//! Key presses to [`Action`]s, by what the screen shows: the filter line takes text, a dialog
//! takes only its answers, help closes on any key, and everything else is a command.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::state::{Action, Mode, State};
use crate::runs::Decision;

pub fn action(state: &State, key: KeyEvent) -> Option<Action> {
    // Terminals that report releases and repeats send each key more than once.
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    if control && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    match state.mode() {
        Mode::Help => Some(Action::ToggleHelp),
        Mode::Confirm => match key.code {
            KeyCode::Char('y' | 'Y') => Some(Action::Confirm(true)),
            KeyCode::Char('n' | 'N' | 'q') | KeyCode::Esc => Some(Action::Confirm(false)),
            _ => None,
        },
        Mode::Filter => match key.code {
            KeyCode::Esc => Some(Action::FilterClear),
            KeyCode::Char('u') if control => Some(Action::FilterClear),
            KeyCode::Enter | KeyCode::Down | KeyCode::Up | KeyCode::Tab => Some(Action::FilterDone),
            KeyCode::Backspace => Some(Action::FilterBackspace),
            KeyCode::Char(c) if !control => Some(Action::FilterChar(c)),
            _ => None,
        },
        Mode::Main | Mode::Detail => command(key.code),
    }
}

fn command(code: KeyCode) -> Option<Action> {
    Some(match code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Esc => Action::Back,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown | KeyCode::Char(' ') => Action::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Action::Top,
        KeyCode::End | KeyCode::Char('G') => Action::Bottom,
        KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => Action::NextPane,
        KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => Action::PrevPane,
        KeyCode::Enter => Action::Open,
        KeyCode::Char('/') => Action::StartFilter,
        KeyCode::Char('u') => Action::RefreshSources,
        KeyCode::Char('s') => Action::SignIn,
        code => return decision(KeyEvent::new(code, KeyModifiers::NONE)).map(Action::Decide),
    })
}

/// The decision a key stands for: the same keys `capabilities exec` asks with inline.
pub fn decision(key: KeyEvent) -> Option<Decision> {
    Some(match key.code {
        KeyCode::Char('a') => Decision::AllowOnce,
        KeyCode::Char('r') => Decision::AllowRun,
        KeyCode::Char('A') => Decision::AllowAlways,
        KeyCode::Char('d') => Decision::Deny,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures::loaded;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_depend_on_what_is_shown() {
        let mut state = loaded();
        assert_eq!(
            action(&state, press(KeyCode::Char('a'))),
            Some(Action::Decide(Decision::AllowOnce))
        );
        assert_eq!(
            action(&state, press(KeyCode::Char('A'))),
            Some(Action::Decide(Decision::AllowAlways))
        );
        assert_eq!(
            action(
                &state,
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Action::Quit)
        );
        state.update(Action::StartFilter);
        assert_eq!(
            action(&state, press(KeyCode::Char('q'))),
            Some(Action::FilterChar('q')),
            "q is text in the filter"
        );
        assert_eq!(
            action(&state, press(KeyCode::Esc)),
            Some(Action::FilterClear)
        );
        state.update(Action::FilterClear);
        state.update(Action::Decide(Decision::AllowAlways));
        assert_eq!(
            action(&state, press(KeyCode::Char('a'))),
            None,
            "a dialog takes only its answers"
        );
        assert_eq!(
            action(&state, press(KeyCode::Char('y'))),
            Some(Action::Confirm(true))
        );
        state.update(Action::Confirm(false));
        state.update(Action::ToggleHelp);
        assert_eq!(
            action(&state, press(KeyCode::Char('x'))),
            Some(Action::ToggleHelp)
        );
        state.update(Action::ToggleHelp);
        assert_eq!(
            action(&state, press(KeyCode::Char('u'))),
            Some(Action::RefreshSources)
        );
        assert_eq!(
            action(&state, press(KeyCode::Char('s'))),
            Some(Action::SignIn)
        );
        let mut release = press(KeyCode::Char('a'));
        release.kind = KeyEventKind::Release;
        assert_eq!(action(&state, release), None);
    }
}
