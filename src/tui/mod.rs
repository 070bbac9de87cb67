//! `capabilities dashboard`: the runs of every hub on this machine and the queue of calls waiting
//! for a person, live, with a key per decision.
//!
//! Built in the Elm Architecture: the [`state`] (the model, no I/O) changes only through the
//! actions (messages) that [`keys`] makes of key presses, in `State::update`, which returns the
//! effects it wants performed; [`render`] and [`panes`] are the view, pure functions of the
//! state; [`app`] runs the loop and performs the effects through [`load`], against the state
//! store that every process shares, so the dashboard needs no hub running.

mod app;
mod detail;
mod filter;
#[cfg(test)]
pub(crate) mod fixtures;
mod format;
mod keys;
mod load;
mod panes;
mod render;
mod sign_in;
mod snapshot;
mod state;
mod theme;

pub use app::{Options, run};
pub use keys::decision as key_decision;
