//! A stdio source's child process: spawning it in its own process group with the connection's
//! environment, keeping the tail of its stderr for error messages (the rest goes to `tracing` at
//! debug), noticing text on stdout that is not JSON-RPC, keeping its messages within the depth
//! rmcp's decoder accepts, and taking the whole group down again.

use std::collections::VecDeque;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::process_group::{self, Signal};
use crate::credentials::Redaction;
use crate::env_vars::WITHHELD_FROM_SOURCES;

/// How many stderr lines are kept for error messages.
const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr or stdout line kept for an error message, in characters; the rest of the
/// line is dropped after redaction.
const MAX_LINE_CHARS: usize = 300;
/// Longest part of a line redacted and logged, in bytes; a child that never writes a newline
/// cannot grow it. The redaction's margin is read past it (see [`Line`]).
const MAX_LINE_BYTES: usize = 4096;
/// Arrays and objects nested deeper than this in a message from the child are replaced by `{}`.
/// rmcp decodes with serde_json, which refuses anything nested deeper than 128 levels and then
/// drops the whole message: one tool whose schema nests 200 levels took every tool of its server
/// with it, and the user saw only a timeout. Cut here, the message decodes, every other tool
/// loads, and the deep tool's schema says "anything" past this depth (the upstream still
/// checks its arguments).
pub(crate) const MAX_MESSAGE_DEPTH: usize = 100;
/// How long a child gets to exit after its stdin closes, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The transport half handed to rmcp: the child's stdout (watched for noise) and stdin.
pub(crate) type StdioTransport = (NoiseTap<ChildStdout>, ChildStdin);

/// A running child of a stdio source. Dropping it kills its whole process group.
pub(crate) struct StdioChild {
    child: Child,
    /// Also the leader's pid. `None` once the group is known to be gone.
    pgid: Option<i32>,
    program: String,
    /// The command with its arguments as a shell would take them, for the person to run.
    command_line: String,
    /// Whether the config gives the server variables of its own, which running it by hand needs.
    has_env: bool,
    source: String,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_reader: Option<JoinHandle<()>>,
    noise: Arc<Mutex<Noise>>,
    exit: Option<ExitStatus>,
}

/// What to start for a stdio source.
#[derive(Clone)]
pub(crate) struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The connection's own `env`, laid over ours.
    pub env: Vec<(String, String)>,
    /// Variables of ours it does not inherit unless `env` names them: the credentials any
    /// connection reads from the environment, its own included (it gets those through `env`);
    /// the hub's own keys are never inherited.
    pub withheld: &'a [String],
}

/// Starts `launch` for `source`: our environment without the hub's keys and the `withheld`
/// credentials, with the connection's `env` laid over it.
pub(crate) fn spawn(
    source: &str,
    launch: Launch<'_>,
    redaction: Arc<Redaction>,
) -> Result<(StdioChild, StdioTransport), String> {
    let Launch {
        command,
        args,
        cwd,
        env,
        withheld,
    } = launch;
    let has_env = !env.is_empty();
    let mut cmd = Command::new(command);
    for name in WITHHELD_FROM_SOURCES
        .iter()
        .copied()
        .chain(withheld.iter().map(String::as_str))
    {
        cmd.env_remove(name);
    }
    // The user's own time zone, not the UTC our scripts run in; the connection's `env` may
    // still set another.
    crate::time_zone::give_back(cmd.as_std_mut());
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A last resort for paths that skip our own cleanup; it reaches only the direct child.
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    // Its own group, so a terminal's Ctrl-C does not hit it before we can shut it down in
    // order, and so one signal reaches its grandchildren.
    #[cfg(unix)]
    cmd.process_group(0);

    let mut child = cmd
        .spawn()
        .map_err(|error| spawn_error(source, command, cwd, &error))?;
    let pgid = child.id().and_then(|pid| i32::try_from(pid).ok());
    if let Some(pgid) = pgid {
        process_group::register(pgid);
    }
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        // Cannot happen with piped stdio; the group is killed when `child` drops below.
        return Err(format!(
            "cannot start `{command}` for source `{source}`: its pipes are missing"
        ));
    };
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let stderr_reader = tokio::spawn(read_stderr(
        stderr,
        source.to_string(),
        tail.clone(),
        redaction.clone(),
    ));
    let noise = Arc::new(Mutex::new(Noise::default()));
    let tap = NoiseTap {
        inner: stdout,
        noise: noise.clone(),
        line: Line::new(&redaction),
        redaction,
        depth: DepthCut::default(),
        source: source.to_string(),
    };
    let spawned = StdioChild {
        child,
        pgid,
        program: command.to_string(),
        command_line: shlex::try_join(
            std::iter::once(command).chain(args.iter().map(String::as_str)),
        )
        .unwrap_or_else(|_| command.to_string()),
        has_env,
        source: source.to_string(),
        stderr: tail,
        stderr_reader: Some(stderr_reader),
        noise,
        exit: None,
    };
    Ok((spawned, (tap, stdin)))
}

fn spawn_error(source: &str, command: &str, cwd: Option<&Path>, error: &std::io::Error) -> String {
    if let Some(cwd) = cwd.filter(|cwd| !cwd.is_dir()) {
        return format!(
            "cannot start source `{source}`: its working directory `{}` does not exist; fix `cwd` in the config",
            cwd.display()
        );
    }
    match error.kind() {
        // A relative path is looked up from where the command runs, which a config used from
        // another folder does not expect.
        std::io::ErrorKind::NotFound
            if command.contains('/') && Path::new(command).is_relative() =>
        {
            match cwd {
                Some(cwd) => format!(
                    "cannot start source `{source}`: the command `{command}` was not found from its `cwd` ({}); put its absolute path in the config",
                    cwd.display()
                ),
                None => {
                    let here = std::env::current_dir()
                        .map(|dir| format!(" (here, {})", dir.display()))
                        .unwrap_or_default();
                    format!(
                        "cannot start source `{source}`: the command `{command}` was not found from the current directory{here}; put its absolute path in the config, or set the source's `cwd`"
                    )
                }
            }
        }
        std::io::ErrorKind::NotFound => format!(
            "cannot start source `{source}`: the command `{command}` was not found; install it or put its full path in the config"
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "cannot start source `{source}`: permission denied running `{command}`; check that it is an executable file"
        ),
        _ => format!("cannot start source `{source}`: running `{command}` failed: {error}"),
    }
}

/// Reads stderr to the end in raw chunks: a line-based UTF-8 reader would stop at the first
/// invalid byte, and a child blocked on a full stderr pipe stops answering.
async fn read_stderr(
    mut stderr: ChildStderr,
    source: String,
    tail: Arc<Mutex<VecDeque<String>>>,
    redaction: Arc<Redaction>,
) {
    let mut chunk = [0u8; 8192];
    let mut line = Line::new(&redaction);
    let keep = |line: &mut Line| {
        let text = line.take_clean(&redaction);
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        tracing::debug!(target: "capabilities::sources::stderr", source = %source, "{text}");
        let mut tail = tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(clip(text));
    };
    // A read error ends the capture the same way EOF does: the child is gone or broke its pipe.
    while let Ok(read) = stderr.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        for &byte in &chunk[..read] {
            if byte == b'\n' {
                keep(&mut line);
            } else {
                line.push(byte);
            }
        }
    }
    keep(&mut line);
}

/// One line of a child's output as it arrives, kept up to [`MAX_LINE_BYTES`] plus the
/// redaction's margin. Cutting first and redacting after would leave the start of a secret that
/// straddles the cut; a line that was cut is cleaned with
/// [`Redaction::clean_start`], which drops the margin, so what is shown never ends in part of a
/// secret.
struct Line {
    bytes: Vec<u8>,
    limit: usize,
    cut: bool,
}

impl Line {
    fn new(redaction: &Redaction) -> Line {
        Line {
            bytes: Vec::new(),
            limit: MAX_LINE_BYTES + redaction.margin(),
            cut: false,
        }
    }

    fn push(&mut self, byte: u8) {
        if self.bytes.len() < self.limit {
            self.bytes.push(byte);
        } else {
            self.cut = true;
        }
    }

    /// The line with every secret blanked, and a fresh line begun.
    fn take_clean(&mut self, redaction: &Redaction) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let cleaned = if self.cut {
            redaction.clean_start(&text)
        } else {
            redaction.clean(&text)
        };
        self.clear();
        cleaned
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.cut = false;
    }
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

impl StdioChild {
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pgid.and_then(|pgid| u32::try_from(pgid).ok())
    }

    /// The last stderr lines the child wrote, oldest first.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Waits up to `limit` for the direct child to exit and remembers its status.
    async fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        if self.exit.is_none()
            && let Ok(Ok(status)) = tokio::time::timeout(limit, self.child.wait()).await
        {
            self.exit = Some(status);
        }
        self.exit
    }

    /// Lets the stderr reader catch up with what the child wrote before it exited; bounded,
    /// because a grandchild may keep the pipe open.
    async fn drain_stderr(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            let abort = reader.abort_handle();
            if tokio::time::timeout(Duration::from_millis(500), reader)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
    }

    /// Stops the child the way MCP's stdio shutdown asks (its stdin is already closed by then):
    /// wait, SIGTERM the group, wait, SIGKILL the group. Then SIGKILLs any straggler of the
    /// group, since a leader that exits does not take its children with it.
    pub(crate) async fn terminate(&mut self) {
        if self.wait_exit(EXIT_GRACE).await.is_none() {
            self.signal_group(Signal::Term);
            if self.wait_exit(EXIT_GRACE).await.is_none() {
                self.signal_group(Signal::Kill);
                // Unix never fails SIGKILL; elsewhere this is the only way down.
                if let Err(error) = self.child.kill().await {
                    tracing::debug!(source = %self.source, "killing `{}` failed: {error}", self.program);
                }
            }
        }
        self.finish();
    }

    fn signal_group(&mut self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            process_group::signal(pgid, signal);
        }
    }

    /// Kills whatever is left of the group and forgets it.
    fn finish(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            process_group::signal(pgid, Signal::Kill);
            process_group::unregister(pgid);
        }
    }

    /// Why the child stopped answering after it was ready (its stdout closed). Kills the rest of
    /// its group.
    pub(crate) async fn explain_exit(&mut self) -> String {
        let status = self.wait_exit(EXIT_GRACE).await;
        self.drain_stderr().await;
        let what = match status {
            Some(status) => format!("`{}` {}", self.program, describe_status(status)),
            None => format!(
                "`{}` closed its stdout but kept running, so it was stopped",
                self.program
            ),
        };
        self.finish();
        format!("{what}{}", self.stderr_suffix())
    }

    /// Why the handshake failed: the child exited, printed noise, or did not answer in time.
    /// `handshake_error` is rmcp's error when the handshake returned one, `None` on a timeout.
    pub(crate) async fn explain_connect_failure(
        &mut self,
        handshake_error: Option<String>,
        timeout: Duration,
    ) -> String {
        // A child that exits at once closes stdout before it could answer; give it a moment so
        // its exit status, rather than "connection closed", is what the user reads. After a
        // timeout its exit says nothing: giving up closed its stdin, and it is killed below.
        let status = match handshake_error {
            Some(_) => self.wait_exit(EXIT_GRACE).await,
            None => None,
        };
        if status.is_some() {
            self.drain_stderr().await;
        }
        // `source test` shows the same message, so the way to see more is the server itself.
        let with_env = if self.has_env {
            " with the variables of its `env` in the config"
        } else {
            ""
        };
        let hint = format!(
            ". To see everything it printed, run its command in a terminal{with_env}: {}",
            self.command_line
        );
        let noise = self
            .noise
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        let noise_note = noise.first.as_ref().map(|line| {
            format!(
                "; it printed text that is not JSON-RPC on stdout (first: `{line}`), but an MCP stdio server may write only JSON-RPC messages to stdout (logs belong on stderr)"
            )
        });
        let message = match (status, handshake_error) {
            (Some(status), _) => format!(
                "`{}` {} before answering{}{}",
                self.program,
                describe_status(status),
                noise_note.unwrap_or_default(),
                self.stderr_suffix()
            ),
            (None, None) => format!(
                "`{}` did not answer within {} s, so it was stopped{}{}; check the command and its arguments, or raise the source's `connect_timeout_secs` if the server is just slow to start",
                self.program,
                timeout.as_secs_f64(),
                noise_note.unwrap_or_default(),
                self.stderr_suffix()
            ),
            (None, Some(error)) => format!(
                "`{}` failed the MCP handshake: {error}{}{}",
                self.program,
                noise_note.unwrap_or_default(),
                self.stderr_suffix()
            ),
        };
        self.finish();
        format!("{message}{hint}")
    }

    fn stderr_suffix(&self) -> String {
        match self.stderr_tail().last() {
            Some(line) => format!("; its last line on stderr: {line}"),
            None => String::new(),
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        // Every path that loses the child (a cancelled connect, a dropped manager, a runtime
        // shutting down) ends here; none may leave its process group behind.
        self.finish();
        if let Some(reader) = self.stderr_reader.take() {
            reader.abort();
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    format!("exited ({status})")
}

/// The first line on stdout that cannot be JSON-RPC.
#[derive(Debug, Clone, Default)]
struct Noise {
    first: Option<String>,
}

/// Passes the child's stdout through unchanged while looking at the start of each line: a
/// JSON-RPC message starts with `{` (or `[`), so anything else is noise that would otherwise be
/// skipped silently and turn into a puzzling timeout.
pub(crate) struct NoiseTap<R> {
    inner: R,
    noise: Arc<Mutex<Noise>>,
    /// The start of the current line.
    line: Line,
    /// The connection's secrets, blanked from the noise before it lands in an error message.
    redaction: Arc<Redaction>,
    depth: DepthCut,
    source: String,
}

/// Replaces every array or object nested deeper than [`MAX_MESSAGE_DEPTH`] by `{}` as the bytes
/// stream past, without buffering a message or recursing. A stdio message is one line, and JSON
/// strings hold no raw newline, so every newline starts afresh: a broken line cannot confuse the
/// next.
#[derive(Debug, Default)]
struct DepthCut {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Inside a container being left out: how many brackets deep within it.
    skipping: usize,
    /// Containers replaced so far.
    cuts: usize,
}

impl DepthCut {
    /// Filters `bytes` in place and returns how many of them are kept; a replaced container
    /// becomes `{}`, never longer than what it replaces.
    fn filter(&mut self, bytes: &mut [u8]) -> usize {
        let mut kept = 0;
        for read in 0..bytes.len() {
            if let Some(byte) = self.step(bytes[read]) {
                bytes[kept] = byte;
                kept += 1;
            }
        }
        kept
    }

    /// The byte to pass on for `byte`, if any.
    fn step(&mut self, byte: u8) -> Option<u8> {
        if byte == b'\n' {
            *self = DepthCut {
                cuts: self.cuts,
                ..DepthCut::default()
            };
            return Some(byte);
        }
        let skipping = self.skipping > 0;
        if self.in_string {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return (!skipping).then_some(byte);
        }
        match byte {
            b'"' => {
                self.in_string = true;
                (!skipping).then_some(byte)
            }
            b'{' | b'[' if skipping => {
                self.skipping += 1;
                None
            }
            b'{' | b'[' if self.depth >= MAX_MESSAGE_DEPTH => {
                self.skipping = 1;
                self.cuts += 1;
                Some(b'{')
            }
            b'{' | b'[' => {
                self.depth += 1;
                Some(byte)
            }
            b'}' | b']' if skipping => {
                self.skipping -= 1;
                (self.skipping == 0).then_some(b'}')
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                Some(byte)
            }
            _ => (!skipping).then_some(byte),
        }
    }
}

impl<R> NoiseTap<R> {
    fn observe(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' {
                self.end_line();
                continue;
            }
            self.line.push(byte);
        }
    }

    fn end_line(&mut self) {
        let looks_like_json = {
            let text = String::from_utf8_lossy(&self.line.bytes);
            let text = text.trim();
            text.is_empty() || text.starts_with('{') || text.starts_with('[')
        };
        if !looks_like_json {
            let mut noise = self
                .noise
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if noise.first.is_none() {
                noise.first = Some(clip(self.line.take_clean(&self.redaction).trim()));
            }
        }
        self.line.clear();
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for NoiseTap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        loop {
            let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
            let Poll::Ready(Ok(())) = polled else {
                return polled;
            };
            let read = buf.filled().len() - before;
            if read == 0 {
                // End of stream.
                return polled;
            }
            this.observe(&buf.filled()[before..]);
            let cuts = this.depth.cuts;
            let kept = this.depth.filter(&mut buf.filled_mut()[before..]);
            buf.set_filled(before + kept);
            // Once per connection: a server that sends such messages on every call would
            // otherwise fill the log.
            if this.depth.cuts > cuts && cuts == 0 {
                tracing::warn!(
                    source = %this.source,
                    "the source sent a message nested deeper than {MAX_MESSAGE_DEPTH} levels (a tool's schema, most likely); the deeper parts were replaced by {{}} so the rest of it still loads"
                );
            }
            // Everything read was left out: read on, since no bytes would read as the end.
            if kept > 0 {
                return polled;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_command_not_found_is_looked_for_where_it_ran() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let dir = std::env::temp_dir();
        let from_cwd = spawn_error("s", "bin/server", Some(&dir), &missing);
        assert!(
            from_cwd.contains(&format!("from its `cwd` ({})", dir.display()))
                && !from_cwd.contains("set the source's `cwd`"),
            "{from_cwd}"
        );
        let from_here = spawn_error("s", "bin/server", None, &missing);
        assert!(
            from_here.contains("from the current directory"),
            "{from_here}"
        );
        let on_path = spawn_error("s", "server", None, &missing);
        assert!(on_path.contains("install it"), "{on_path}");
    }

    fn cut(text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        let mut filter = DepthCut::default();
        // In small pieces, as a pipe may deliver them.
        let mut out = Vec::new();
        for chunk in bytes.chunks_mut(7) {
            let kept = filter.filter(chunk);
            out.extend_from_slice(&chunk[..kept]);
        }
        String::from_utf8(out).unwrap_or_default()
    }

    fn nested(levels: usize, leaf: &str) -> String {
        format!("{}{leaf}{}", "{\"a\":".repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn shallow_messages_pass_unchanged() {
        let message = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","s":"{[\"]}"}]}}"#;
        assert_eq!(
            cut(&format!("{message}\n{message}\n")),
            format!("{message}\n{message}\n")
        );
        let deepest = nested(MAX_MESSAGE_DEPTH, "1");
        assert_eq!(cut(&deepest), deepest);
    }

    #[test]
    fn deeper_parts_become_empty_objects_and_the_message_decodes() {
        for levels in [MAX_MESSAGE_DEPTH + 1, 200, 10_000] {
            let tools = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"deep","inputSchema":{}}},{{"name":"fine","inputSchema":{{"type":"object"}}}}]}}}}"#,
                nested(levels, r#"["]}", {"x": [1]}]"#)
            );
            assert!(serde_json::from_str::<serde_json::Value>(&tools).is_err() || levels < 128);
            let text = cut(&format!("{tools}\n"));
            let decoded: serde_json::Value = serde_json::from_str(text.trim_end())
                .unwrap_or_else(|e| panic!("{levels} levels: {e}"));
            let names: Vec<&str> = decoded["result"]["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str())
                .collect();
            assert_eq!(names, ["deep", "fine"], "{levels} levels");
            assert!(text.len() < 2_000, "{levels} levels: {} bytes", text.len());
        }
    }

    #[test]
    fn a_broken_line_does_not_confuse_the_next() {
        let broken = format!("{}\"unterminated\n", "[".repeat(500));
        let next = r#"{"id":2,"result":{}}"#;
        let text = cut(&format!("{broken}{next}\n"));
        assert!(text.ends_with(&format!("\n{next}\n")), "{text}");
    }
}
