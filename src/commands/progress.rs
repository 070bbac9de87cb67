//! The progress line of a long wait and the colour decision: on a terminal, a wait over
//! [`DELAY`] shows a spinner, what is being waited for and the time so far on stderr, and
//! clears it when done; when stderr is not a terminal nothing is drawn at all, so logs and
//! pipes never see a control sequence.

use std::future::Future;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::app::App;
use crate::cli::ColorChoice;
use crate::env_vars;

/// Shorter waits pass without a line: it would only flicker.
pub const DELAY: Duration = Duration::from_millis(300);

/// Whether to colour: `--color always|never` as asked; `auto` only on a terminal and without
/// `NO_COLOR` (<https://no-color.org>).
pub fn color_wanted(choice: ColorChoice, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os(env_vars::NO_COLOR).is_none(),
    }
}

/// Whether stderr is a terminal a progress line may be drawn on; `--color never` asks for
/// plain output, so it gets none either.
pub fn progress_wanted(choice: ColorChoice) -> bool {
    choice != ColorChoice::Never && std::io::stderr().is_terminal()
}

/// Awaits `work`; past [`DELAY`], and only where `app` may draw one, a progress line says
/// `message` with the elapsed time until it is done.
pub async fn waiting<T>(app: &App, message: impl Into<String>, work: impl Future<Output = T>) -> T {
    if !app.progress {
        return work.await;
    }
    // It may name what an upstream chose (a skill's address), drawn on the terminal.
    let message = crate::printable::escaped(&message.into()).into_owned();
    tokio::pin!(work);
    tokio::select! {
        done = &mut work => return done,
        () = tokio::time::sleep(DELAY) => {}
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(120));
    let done = work.await;
    bar.finish_and_clear();
    done
}

/// `a, b, c` or `a, b, c and 4 more`: the names a progress line has room for.
pub fn names(names: &[&str]) -> String {
    const SHOWN: usize = 4;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!(
        "{} and {} more",
        names[..SHOWN].join(", "),
        names.len() - SHOWN
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_and_always_win_and_auto_needs_a_terminal() {
        assert!(!color_wanted(ColorChoice::Never, true));
        assert!(color_wanted(ColorChoice::Always, false));
        assert!(!color_wanted(ColorChoice::Auto, false));
    }

    #[test]
    fn long_lists_of_names_are_cut() {
        assert_eq!(names(&["a", "b"]), "a, b");
        assert_eq!(
            names(&["a", "b", "c", "d", "e", "f"]),
            "a, b, c, d and 2 more"
        );
    }

    #[tokio::test]
    async fn without_a_terminal_the_work_is_only_awaited() {
        let app = App::new(crate::config::Paths {
            config_file: "/nonexistent/config.toml".into(),
            data_dir: "/nonexistent/data".into(),
        });
        assert_eq!(waiting(&app, "x", async { 7 }).await, 7);
    }
}
