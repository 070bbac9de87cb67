//! An MCP peer run as a child process and spoken to in JSON-RPC lines over its stdio, as the
//! hub benchmarks' client: the hub itself, or a server to compare it with.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Only a bound against hangs: a cold node start on a busy machine takes seconds.
pub const ANSWER_BOUND: Duration = Duration::from_secs(60);

/// An MCP server child spoken to in raw JSON-RPC lines; a thread reads its stdout.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Peer {
    pub fn spawn(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
        }
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&line.to_string());
        loop {
            let line = self
                .lines
                .recv_timeout(ANSWER_BOUND)
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let value: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            // Notifications and requests from the server carry no id of ours.
            if value.get("id") == Some(&json!(id)) && value.get("method").is_none() {
                return value;
            }
        }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("write: {e}"));
    }

    pub fn initialize(&mut self) {
        let params = json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } });
        self.request("initialize", params);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// `execute` through the hub, panicking unless the run completed.
    pub fn execute(&mut self, code: &str) -> Value {
        let answer = self.call("execute", json!({ "code": code }));
        let status = &answer["result"]["structuredContent"]["status"];
        assert_eq!(status, "completed", "{answer}");
        answer
    }

    /// Closes stdin, which ends the hub (and its sources) or the server, and waits for it.
    pub fn close(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + ANSWER_BOUND;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
