//! Printing results to stdout and messages to stderr. Both carry words from outside (a tool's
//! description, an upstream's answer or error, a script's logs), so both go through
//! [`printable::escaped`]: nothing a command prints can drive the terminal. A closed pipe
//! (`capabilities search x | head -1`) ends the command quietly instead of failing it.

use std::io::Write;

use crate::printable;

/// Writes `text` to stdout and flushes.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(printable::escaped(text).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes one line to stderr, escaped as [`print`] does: what `eprintln!` is for the commands.
pub fn eprint_line(line: std::fmt::Arguments<'_>) {
    let mut line = line.to_string();
    line.push('\n');
    // Nothing is left to tell the user about a failing stderr.
    let _ = std::io::stderr()
        .lock()
        .write_all(printable::escaped(&line).as_bytes());
}

pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
