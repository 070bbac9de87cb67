//! What a verb leaves to say when Ctrl-C (or SIGTERM, SIGHUP) ends it. The signal ends the
//! verb at once wherever it waits, so a verb that knows something the person would lose with it
//! (a run still waiting for their decision at the `exec` prompt) sets a note for as long as that
//! holds, and the signal's handler prints it on the way out. No guard clears it on drop: the
//! signal's handler runs after the verb's future is dropped, and must still find the note.

use std::sync::Mutex;

static NOTE: Mutex<Option<String>> = Mutex::new(None);

/// Keeps `note` as what to say if a signal ends the process, until [`clear`].
pub fn set(note: String) {
    *NOTE.lock().unwrap_or_else(|p| p.into_inner()) = Some(note);
}

pub fn clear() {
    NOTE.lock().unwrap_or_else(|p| p.into_inner()).take();
}

/// The note set now, taken so it is said once.
pub fn take() -> Option<String> {
    NOTE.lock().unwrap_or_else(|p| p.into_inner()).take()
}
