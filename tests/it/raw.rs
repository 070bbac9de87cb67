//! A process spoken to in raw JSON-RPC lines on its stdin and stdout, with no client library in
//! between: `capabilities hub serve` (or any stdio MCP server) for malformed input, exact
//! messages, the hub's own logs on stderr, and signals and exit codes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Home, Run};

/// The longest wait for one answer; only a bound against hangs, never a speed check.
pub const ANSWER_BOUND: Duration = Duration::from_secs(120);

/// The child and the lines of its stdout, read on a thread of their own.
pub struct Raw {
    /// For signals and waits the methods do not cover.
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Raw {
    /// Starts `command` with its stderr discarded.
    pub fn spawn(command: Command) -> Raw {
        Raw::start(command, Stdio::null())
    }

    /// Starts `command` keeping its stderr, for [`Raw::exit`] to return.
    pub fn spawn_keeping_stderr(command: Command) -> Raw {
        Raw::start(command, Stdio::piped())
    }

    /// `capabilities hub serve` with `home`, its stderr discarded.
    pub fn hub(home: &Home) -> Raw {
        Raw::spawn(home.command(&["hub", "serve"]))
    }

    fn start(mut command: Command, stderr: Stdio) -> Raw {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// Writes `line` and a newline.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .expect("write a line");
    }

    /// The next message that is not a notification; every line must be JSON.
    pub fn next(&mut self) -> Value {
        loop {
            let line = self.lines.recv_timeout(ANSWER_BOUND).expect("an answer");
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            if value.get("id").is_some() {
                return value;
            }
        }
    }

    /// Sends a request and returns the next message, which must answer it.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string(),
        );
        let answer = self.next();
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer
    }

    /// `initialize` (id 0) at `version`, then `notifications/initialized`; returns the answer.
    pub fn initialize(&mut self, version: &str) -> Value {
        let params = json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } });
        let answer = self.request(0, "initialize", params);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        answer
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// Closes stdin and returns the exit code; panics if the process has not exited within a
    /// minute.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the server did not exit after its stdin closed");
    }

    /// Closes stdin and returns, once the process has exited, its exit code and what it wrote
    /// to stderr (empty unless it was started by [`Raw::spawn_keeping_stderr`]; stdout was read
    /// as lines and is empty here).
    pub fn exit(mut self) -> Run {
        drop(self.stdin.take());
        Run::from(self.child.wait_with_output().expect("the server exits"))
    }
}
