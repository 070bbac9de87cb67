//! Refreshing old cached listings without making anyone wait: `search` and `describe` answer
//! from the cache at once and leave a `capabilities source refresh` running on its own (in a
//! process group of its own, so the terminal's Ctrl-C does not reach it), so the next answer
//! finds the listings fresh.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use crate::app::App;
use crate::catalog::cache::ListingCache;
use crate::catalog::load::old_listings;
use crate::config::Settings;
use crate::config::edit::write_atomically;

/// One background refresh per this long at most: several commands in a row start one.
const ONE_REFRESH_PER: Duration = Duration::from_secs(10 * 60);
/// The marker, in the cache directory, of the last background refresh started.
const MARKER: &str = ".refreshing";

/// Starts refreshing the old listings of `settings`' sources in the background, unless there are
/// none or one was started lately. A failure to start is logged: the old listing still answers.
pub fn refresh_old_listings(app: &App, settings: &Settings) {
    let cache = ListingCache::new(app.paths.catalog_cache_dir());
    let old = old_listings(settings, &cache);
    if old.is_empty() {
        return;
    }
    let marker = cache.dir().join(MARKER);
    let lately = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| SystemTime::now().duration_since(at).ok())
        .is_some_and(|ago| ago < ONE_REFRESH_PER);
    if lately {
        return;
    }
    let started = std::env::current_exe().and_then(|exe| {
        let mut command = Command::new(exe);
        // So that it knows the user's zone for the sources it starts.
        crate::time_zone::give_back(&mut command)
            .arg("--config")
            .arg(&app.paths.config_file)
            .args(["source", "refresh"]);
        // One source by name; several at once in one process, which paces their starts.
        if let [one] = old.as_slice() {
            command.arg(one);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
    });
    match started {
        Ok(_) => {
            if let Err(e) = write_atomically(&marker, "") {
                tracing::debug!("cannot mark the background refresh: {e:#}");
            }
            tracing::info!(
                "refreshing the old listings of {} in the background",
                old.join(", ")
            );
        }
        Err(e) => tracing::warn!("cannot refresh old listings in the background: {e}"),
    }
}
