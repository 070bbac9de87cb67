//! Shared test support: paths of the real peers that `tests/setup.sh` installs (server-everything
//! from npm, Python MCP servers from the venv), and server-everything over HTTP on a free port.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

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
