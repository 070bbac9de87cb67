//! `capabilities dashboard`: the runs of every hub on this machine and the queue of calls waiting
//! for a person, live, with a key per decision.
//!
//! Built like gitui: the [`state`] (no I/O) changes only through actions that [`keys`] makes of
//! key presses; [`render`] and [`panes`] draw it with pure functions; [`app`] runs the loop and
//! performs the effects the state asks for, through [`load`], against the state store that every
//! process shares, so the dashboard needs no hub running.

mod app;
mod detail;
mod filter;
#[cfg(test)]
mod fixtures;
mod format;
mod keys;
mod load;
mod panes;
mod render;
mod snapshot;
mod state;
mod theme;

pub use app::{Options, run};
