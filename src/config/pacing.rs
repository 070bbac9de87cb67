//! How the sources manager paces its servers: at most a few connect at a
//! time (a hub with ninety sources must not start ninety `npx` at once), and, in a long-running
//! hub, a server nobody has called for a while is stopped, to start again on its next call.
//! One-shot commands pace by the cores ([`Pacing::by_cores`]); a hub by its `[hub]` table
//! (`settings::hub_pacing`).

use std::time::Duration;

/// Connecting at most this many sources at once by default, whatever the cores.
const MOST_STARTING: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// How many sources may be connecting (starting, handshaking, listing) at the same time;
    /// the others wait their turn, and their connect timeout starts with it.
    pub max_starting: usize,
    /// Stop a source after this long without a request; `None` keeps it running.
    pub idle_stop: Option<Duration>,
}

impl Pacing {
    /// One source starting per core (at least two, at most [`MOST_STARTING`]), never stopped
    /// for idleness: what one-shot commands use.
    pub fn by_cores() -> Pacing {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        Pacing {
            max_starting: cores.clamp(2, MOST_STARTING),
            idle_stop: None,
        }
    }
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing::by_cores()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_starts_a_few_at_a_time_and_never_stops_for_idleness() {
        let pacing = Pacing::default();
        assert!((2..=MOST_STARTING).contains(&pacing.max_starting));
        assert_eq!(pacing.idle_stop, None);
    }
}
