//! Opening a page (an approval, a sign-in) in the user's browser: `xdg-open` on Linux and the
//! BSDs, `open` on macOS, the shell's URL handler (`rundll32 url.dll`) on Windows. Where there
//! is no display or no launcher this fails instead of guessing, so the caller can skip the page
//! and say what to do instead (the errors name no next step: that depends on the page).

use std::ffi::OsString;
use std::process::{Command, Stdio};

use url::Url;

/// Why the page could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("no display to open a browser on (neither DISPLAY nor WAYLAND_DISPLAY is set)")]
    NoDisplay,
    #[error("cannot start `{program}` to open a browser: {source}")]
    NoLauncher {
        program: String,
        source: std::io::Error,
    },
}

/// Asks the desktop to open `url` in the default browser. Returns once the launcher started; a
/// launcher that fails later (no browser configured) is logged with `otherwise`, what to do
/// instead, since by then the caller has moved on.
pub fn open_in_browser(url: &Url, otherwise: &str) -> Result<(), OpenError> {
    spawn(launcher(url.as_str())?, otherwise.to_string())
}

#[cfg(target_os = "macos")]
fn launcher(url: &str) -> Result<Command, OpenError> {
    let mut command = Command::new("open");
    command.arg(url);
    Ok(command)
}

#[cfg(windows)]
fn launcher(url: &str) -> Result<Command, OpenError> {
    // Not `cmd /C start`: cmd reads an `&` in the URL's query as the start of another command,
    // and the URL can be an authorization server's. rundll32 hands it to the shell's URL
    // handler as one argument that no shell parses.
    let mut command = Command::new("rundll32");
    command.arg("url.dll,FileProtocolHandler").arg(url);
    Ok(command)
}

#[cfg(all(unix, not(target_os = "macos")))]
fn launcher(url: &str) -> Result<Command, OpenError> {
    use crate::env_vars;
    has_display(
        std::env::var_os(env_vars::DISPLAY),
        std::env::var_os(env_vars::WAYLAND_DISPLAY),
    )?;
    let mut command = Command::new("xdg-open");
    command.arg(url);
    Ok(command)
}

/// A desktop session sets one of these; over SSH or in a container neither is set, and
/// `xdg-open` would fall back to a text browser on the hub's own terminal, which carries JSON-RPC.
#[cfg(all(unix, not(target_os = "macos")))]
fn has_display(x11: Option<OsString>, wayland: Option<OsString>) -> Result<(), OpenError> {
    if [x11, wayland]
        .into_iter()
        .flatten()
        .any(|value| !value.is_empty())
    {
        Ok(())
    } else {
        Err(OpenError::NoDisplay)
    }
}

fn spawn(mut command: Command, otherwise: String) -> Result<(), OpenError> {
    let program = command.get_program().to_string_lossy().into_owned();
    // The launcher must not read the hub's stdin or write to its stdout: they carry JSON-RPC.
    // A browser it starts keeps the user's time zone.
    let mut child = crate::time_zone::give_back(&mut command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| OpenError::NoLauncher {
            program: program.clone(),
            source,
        })?;
    // Some launchers run the browser in the foreground, so wait on a thread of its own: it reaps
    // the process whenever it ends and reports a failure to the log.
    std::thread::spawn(move || match child.wait() {
        Ok(status) if !status.success() => {
            tracing::warn!("`{program}` could not open the page ({status}); {otherwise}")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("`{program}` did not report how it ended: {e}"),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn no_display_means_no_page() {
        let err = has_display(None, None).unwrap_err().to_string();
        assert!(err.contains("DISPLAY"), "{err}");
        assert!(
            has_display(Some(OsString::new()), Some(OsString::new())).is_err(),
            "empty values are no display"
        );
        assert!(has_display(Some(":0".into()), None).is_ok());
        assert!(has_display(None, Some("wayland-0".into())).is_ok());
    }

    #[test]
    fn a_missing_launcher_is_an_error_not_a_silent_skip() {
        let err = spawn(
            Command::new("capabilities-test-no-such-launcher"),
            "decide in a terminal".into(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("capabilities-test-no-such-launcher"), "{err}");
    }
}
