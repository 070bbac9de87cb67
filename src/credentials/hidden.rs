//! A hidden prompt (a passphrase, a secret's value) that a signal stops. Inside a verb the
//! process handles SIGINT, SIGTERM and SIGHUP itself (to take its sources down first), so their
//! default "terminate" no longer applies, and a read blocked until Enter would hold the whole
//! verb: `kill` would do nothing until someone typed a line. The read runs on a thread of its
//! own while the asker watches for those signals; on one, it answers `Interrupted`, and the
//! verb's signal handler ends the process at its next step. Whichever of the two sees the
//! signal first gives the terminal back its settings ([`give_back`]): the prompt turns echo and
//! signals off, and the reading thread, blocked until the process exits, never restores them.

use std::io;
use std::sync::Mutex;

/// The terminal's settings from before the open prompt changed them; `None` when no prompt is
/// open.
#[cfg(unix)]
static OPEN: Mutex<Option<Terminal>> = Mutex::new(None);

/// Gives the terminal back the settings it had before the open hidden prompt, if one is open:
/// for the handler of a signal that ends the process while a prompt holds the terminal.
pub fn give_back() {
    #[cfg(unix)]
    if let Some(terminal) = OPEN.lock().unwrap_or_else(|p| p.into_inner()).take() {
        terminal.restore();
    }
}

/// How often the asker looks for a signal while the person types.
#[cfg(unix)]
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Asks `prompt` with the input hidden. Where no runtime is at hand to watch for signals with
/// (a verb without one, where their default still ends the process; a thread of its own), the
/// prompt is rpassword's alone, and a signal handler elsewhere still gives the terminal back.
pub fn ask(prompt: impl ToString) -> io::Result<String> {
    #[cfg(unix)]
    {
        *OPEN.lock().unwrap_or_else(|p| p.into_inner()) = Terminal::save();
        let read = if tokio::runtime::Handle::try_current().is_ok() {
            ask_watching(prompt.to_string())
        } else {
            rpassword::prompt_password(prompt)
        };
        // rpassword gave the terminal back itself (after Enter, or Ctrl-C while it read), or
        // `give_back` did.
        OPEN.lock().unwrap_or_else(|p| p.into_inner()).take();
        read
    }
    #[cfg(not(unix))]
    rpassword::prompt_password(prompt)
}

#[cfg(unix)]
fn ask_watching(prompt: String) -> io::Result<String> {
    use std::sync::mpsc;
    use std::task::{Context, Waker};
    use tokio::signal::unix::{SignalKind, signal};

    let mut signals = [
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
        signal(SignalKind::hangup())?,
    ];
    let (send, answer) = mpsc::channel();
    std::thread::Builder::new()
        .name("hidden-prompt".into())
        .spawn(move || {
            let _ = send.send(rpassword::prompt_password(prompt));
        })?;
    let mut watching = Context::from_waker(Waker::noop());
    loop {
        match answer.recv_timeout(WATCH_EVERY) {
            Ok(read) => return read,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                give_back();
                return Err(io::Error::other("the prompt stopped without an answer"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let signalled = signals
            .iter_mut()
            .any(|signal| signal.poll_recv(&mut watching).is_ready());
        if signalled {
            give_back();
            return Err(io::Error::from(io::ErrorKind::Interrupted));
        }
    }
}

/// The controlling terminal's settings from before the prompt turned its echo off.
#[cfg(unix)]
struct Terminal {
    tty: std::fs::File,
    settings: rustix::termios::Termios,
}

#[cfg(unix)]
impl Terminal {
    /// `None` without a controlling terminal; rpassword then reads standard input, whose
    /// settings it never changes.
    fn save() -> Option<Terminal> {
        let tty = std::fs::File::open("/dev/tty").ok()?;
        let settings = rustix::termios::tcgetattr(&tty).ok()?;
        Some(Terminal { tty, settings })
    }

    /// A failure leaves the terminal as it is, which is all that could be done.
    fn restore(&self) {
        let _ = rustix::termios::tcsetattr(
            &self.tty,
            rustix::termios::OptionalActions::Now,
            &self.settings,
        );
    }
}
