//! The event loop: terminal input (crossterm's `EventStream`) and a poll of the store, raced in one
//! `select!`. Keys become actions on the state; the effects they ask for are performed here, and
//! the screen is drawn again after every event or poll.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::bail;
use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use ratatui::DefaultTerminal;
use tokio::time::MissedTickBehavior;

use super::keys;
use super::load::Loader;
use super::render::render;
use super::state::{Effect, State};
use crate::config::Paths;

/// How often the store is read: a change by any process shows within this.
const POLL: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct Options {
    /// Ring the terminal bell when a new call waits for a decision.
    pub bell: bool,
    pub color: bool,
    /// Show only this profile's runs, waiting calls and sources.
    pub profile: Option<String>,
    /// The shared store's URL (`[store] url`), when the runs are not in the data directory.
    pub store_url: Option<String>,
}

/// Raw mode and the alternate screen for as long as it lives; dropping it (also when the
/// verb is cancelled by a signal) gives the person their shell back.
struct Screen {
    terminal: DefaultTerminal,
}

impl Screen {
    fn enter() -> anyhow::Result<Screen> {
        // Restores the terminal before a panic message prints, which ratatui's hook also does.
        Ok(Screen {
            terminal: ratatui::try_init()?,
        })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Runs the dashboard until the person quits; the state store's key may be kept in
/// `credentials`.
pub async fn run(
    paths: &Paths,
    options: Options,
    credentials: std::sync::Arc<crate::credentials::Credentials>,
) -> anyhow::Result<()> {
    if !std::io::stdout().is_terminal() {
        bail!(
            "the dashboard draws on a terminal, and standard output is not one; `capabilities hub runs --json` prints the runs for scripts"
        );
    }
    let mut loader = Loader::new(paths.clone())
        .with_credentials(credentials)
        .with_profile(options.profile.clone())
        .with_store_url(options.store_url.clone());
    let mut state = State::new(options.color).for_profile(options.profile.clone());
    let snapshot = loader.snapshot().await;
    state.apply_snapshot(snapshot, loader.clock_ms().await);
    let mut screen = Screen::enter()?;
    state.resize(screen.terminal.size()?.height);
    let mut events = EventStream::new();
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
    // Listing the sources again takes seconds: it runs in the background and reports here.
    let (refreshed_tx, mut refreshed_rx) = tokio::sync::mpsc::channel(1);
    while !state.should_quit() {
        screen.terminal.draw(|frame| render(frame, &state))?;
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(Event::Key(key))) => {
                    let effect = keys::action(&state, key).and_then(|action| state.update(action));
                    if let Some(Effect::RefreshSources) = effect {
                        let task = loader.refresh_task().await;
                        let done = refreshed_tx.clone();
                        tokio::spawn(async move {
                            let _ = done.send(task.await).await;
                        });
                    } else if let Some(effect) = effect {
                        perform(effect, &mut loader, &mut state).await;
                        refresh(&mut loader, &mut state, options.bell).await?;
                    }
                }
                Some(Ok(Event::Resize(_, height))) => state.resize(height),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                // The terminal went away: nobody is left to look.
                None => break,
            },
            Some(outcome) = refreshed_rx.recv() => {
                state.refreshed(outcome);
                loader.forget_configured();
                refresh(&mut loader, &mut state, options.bell).await?;
            }
            _ = poll.tick() => refresh(&mut loader, &mut state, options.bell).await?,
        }
    }
    Ok(())
}

async fn perform(effect: Effect, loader: &mut Loader, state: &mut State) {
    match effect {
        Effect::Decide { approval, decision } => {
            let outcome = loader.decide(&approval, decision).await;
            state.decided(&approval, decision, outcome);
        }
        Effect::LoadDetail(run_id) => {
            let detail = loader.detail(&run_id).await;
            state.apply_detail(&run_id, detail);
        }
        Effect::SignIn(waiting) => {
            let outcome = loader.sign_in(&waiting).await;
            state.signing_in(outcome);
        }
        // Started by the loop itself, which owns the channel its outcome comes back on.
        Effect::RefreshSources => {}
    }
}

async fn refresh(loader: &mut Loader, state: &mut State, bell: bool) -> anyhow::Result<()> {
    let snapshot = loader.snapshot().await;
    let arrived = state.apply_snapshot(snapshot, loader.clock_ms().await);
    if let Some(run_id) = state.detail_run_id().map(String::from) {
        let detail = loader.detail(&run_id).await;
        state.apply_detail(&run_id, detail);
    }
    if bell && arrived > 0 {
        // BEL moves no cursor, so it can go straight to the terminal between two draws.
        let mut out = std::io::stdout();
        out.write_all(b"\x07")?;
        out.flush()?;
    }
    Ok(())
}
