//! `capabilities hub serve --http` and `capabilities token`: the Python `mcp` SDK over
//! Streamable HTTP in 2026-07-28 and legacy mode with a valid, a missing and a revoked token; a
//! token's `--allow` patterns checked on each call inside a script; raw HTTP for what a client
//! library hides (status codes, the recovery contract, revocation inside a session).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    everything_js, free_port, json_report, listening_within, python_peer, repo, venv_node,
};
use crate::support::Home;

/// server-everything, every tool allowed, and a `work` profile that serves it.
fn config(home: &Home) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[policy]\ndefault = \"allow\"\ndestructive = \"allow\"\n\n[profiles.work]\nsources = [\"everything\"]\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
}

pub(crate) fn create_token(home: &Home, args: &[&str]) -> String {
    let mut all = vec!["token", "create"];
    all.extend_from_slice(args);
    let run = home.run(&all).ok();
    assert!(
        run.stderr.contains("shown only this once"),
        "{}",
        run.stderr
    );
    run.stdout.trim().to_string()
}

/// `hub serve --http` on a free port; killed when dropped.
pub(crate) struct HttpHub {
    child: Child,
    port: u16,
}

impl HttpHub {
    pub(crate) fn start(home: &Home, extra: &[&str]) -> HttpHub {
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        let mut args = vec!["hub", "serve", "--http", address.as_str()];
        args.extend_from_slice(extra);
        let mut command = home.command(&args);
        command.stderr(Stdio::null());
        HttpHub::spawn(command, port)
    }

    /// Starts `command`, a `hub serve --http 127.0.0.1:<port>` whose stderr the caller has
    /// chosen, and waits until it listens.
    pub(crate) fn spawn(mut command: Command, port: u16) -> HttpHub {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start the hub");
        // A bound on a cold start, not a speed check.
        if listening_within(port, Duration::from_secs(60)) {
            return HttpHub { child, port };
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the hub did not listen on 127.0.0.1:{port}");
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs tests/peers/hub_http_client.py; `token` "-" sends none.
fn python_client(hub: &HttpHub, mode: &str, token: &str) -> Value {
    python_client_running(hub, &[mode, token])
}

/// The client with its arguments after the URL: mode, token and optionally a script.
fn python_client_running(hub: &HttpHub, args: &[&str]) -> Value {
    json_report(python_peer("hub_http_client.py").arg(hub.url()).args(args))
}

#[test]
fn python_client_over_http_with_a_token_in_both_modes() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["reader", "--allow", "everything.echo"]);
    let hub = HttpHub::start(&home, &[]);
    for (mode, version) in [("2026-07-28", "2026-07-28"), ("legacy", "2025-11-25")] {
        let report = python_client(&hub, mode, &token);
        assert_eq!(report["protocolVersion"], version, "{report}");
        assert_eq!(
            report["tools"],
            json!(["describe", "execute", "search"]),
            "{report}"
        );
        let envelope = &report["execute"]["structured"];
        assert_eq!(envelope["status"], "completed", "{report}");
        assert_eq!(envelope["result"]["echo"], "Echo: over http", "{report}");
        // The token allows only everything.echo: the second call inside the script is refused.
        let refused = &envelope["result"]["sum"];
        assert_eq!(refused["refused"], "policy_denied", "{report}");
        assert_eq!(
            refused["message"],
            "the token `reader` may not call `everything.getSum`; it allows only everything.echo",
            "{report}"
        );
        // What the token may not call is not shown either: not by search or describe, not by
        // `hub.search` inside a script.
        for found in [
            report["search"]["text"].as_str(),
            envelope["result"]["found"].as_str(),
        ] {
            let found = found.unwrap_or_default();
            assert!(
                !found.contains("getSum")
                    && found.contains("hidden by policy or this client's token"),
                "{report}"
            );
        }
        assert_eq!(report["describe"]["isError"], true, "{report}");
        assert!(
            report["describe"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("unknown target `everything.getSum`")),
            "{report}"
        );
    }
}

#[test]
fn python_client_without_a_token_or_with_a_revoked_one_is_refused() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["laptop"]);
    home.run(&["token", "revoke", "laptop"]).ok();
    let hub = HttpHub::start(&home, &[]);
    for mode in ["2026-07-28", "legacy"] {
        let report = python_client(&hub, mode, "-");
        let refused = report["refused"].as_str().unwrap_or_default();
        assert!(
            refused.contains("this hub needs `Authorization: Bearer <token>`"),
            "{report}"
        );
        let report = python_client(&hub, mode, &token);
        let refused = report["refused"].as_str().unwrap_or_default();
        assert!(
            refused.contains("the bearer token is unknown, revoked or expired"),
            "{report}"
        );
        assert!(report.get("tools").is_none(), "{report}");
    }
}

#[test]
fn a_failed_run_after_a_write_says_do_not_replay_without_the_token_or_session() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["writer"]);
    let hub = HttpHub::start(&home, &[]);
    // toggleSimulatedLogging is not marked read-only: it counts as a write.
    let script =
        "await everything.toggleSimulatedLogging({}); throw new Error('stopped after the write');";
    let report = python_client_running(&hub, &["legacy", &token, script]);
    let sessions: Vec<&str> = report["sessionIds"]
        .as_array()
        .expect("the client lists sessions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !sessions.is_empty(),
        "a legacy client gets a session: {report}"
    );
    let answer = &report["execute"];
    assert_eq!(answer["isError"], true, "{report}");
    let error = &answer["structured"]["error"];
    assert_eq!(error["code"], "runtime_error", "{report}");
    assert_eq!(
        error["recovery"],
        json!({
            "code": "MCP_EXECUTION_OUTCOME_UNKNOWN",
            "execute_request": "do_not_replay",
            "provider_execution": "unknown",
            "automatic_replay": false,
        }),
        "{report}"
    );
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("`everything.toggleSimulatedLogging`")),
        "{report}"
    );
    // The text block carries the same envelope; neither names the session or the token.
    let text = answer["text"].as_str().expect("a text block");
    assert!(text.contains("do_not_replay"), "{text}");
    let whole = answer.to_string();
    assert!(!whole.contains(&token), "{whole}");
    for session in sessions {
        assert!(!whole.contains(session), "{whole}");
    }
}

/// One HTTP/1.1 exchange: the status, the head, and the body when it has a length (a stream's
/// body is not read: the head is all these tests need from it).
struct Reply {
    status: u16,
    head: String,
    body: String,
}

fn post(hub: &HttpHub, headers: &[(&str, &str)], body: &Value) -> Reply {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("Host: 127.0.0.1:{}\r\n", hub.port));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect to the hub");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("a read bound");
    stream.write_all(request.as_bytes()).expect("send");
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).expect("read the reply");
        assert!(n > 0, "the hub closed before a full head");
        bytes.extend_from_slice(&chunk[..n]);
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_string();
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())
            .flatten()
    });
    if let Some(length) = length {
        while bytes.len() < head_end + length {
            let n = stream.read(&mut chunk).expect("read the body");
            assert!(n > 0, "the body ended early");
            bytes.extend_from_slice(&chunk[..n]);
        }
    }
    let body = String::from_utf8_lossy(&bytes[head_end..]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    Reply { status, head, body }
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply.head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } } })
}

#[test]
fn revocation_ends_a_session_at_its_next_request() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["session"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let started = post(&hub, &[("Authorization", &bearer)], &initialize());
    assert_eq!(started.status, 200, "{}", started.head);
    let session = header(&started, "mcp-session-id").expect("a session id");
    home.run(&["token", "revoke", "session"]).ok();
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let refused = post(&hub, &headers, &list);
    assert_eq!(refused.status, 401, "{}{}", refused.head, refused.body);
    let body: Value = serde_json::from_str(&refused.body).expect("a JSON-RPC error");
    assert_eq!(body["error"]["code"], -32001, "{body}");
    assert!(
        !refused.body.contains(&token),
        "a reply never carries the token"
    );
}

#[test]
fn an_unknown_session_gets_the_recovery_contract() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let session = "0c0ffee0-dead-beef-0000-000000000000";
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let reply = post(
        &hub,
        &headers,
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    );
    assert_eq!(reply.status, 404, "{}{}", reply.head, reply.body);
    let body: Value = serde_json::from_str(&reply.body).expect("a JSON-RPC error");
    assert_eq!(body["error"]["data"]["code"], "MCP_SESSION_UNAVAILABLE");
    assert_eq!(
        body["error"]["data"]["recovery"]["action"],
        "initialize_new_session"
    );
    assert!(!reply.body.contains(session) && !reply.body.contains(&token));
}

#[test]
fn a_token_for_another_profile_is_refused_with_the_reason() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["worker", "--profile", "work"]);
    let hub = HttpHub::start(&home, &[]);
    let reply = post(
        &hub,
        &[("Authorization", &format!("Bearer {token}"))],
        &initialize(),
    );
    assert_eq!(reply.status, 403, "{}{}", reply.head, reply.body);
    assert!(
        reply
            .body
            .contains("the token `worker` is for profile `work`, and this hub serves no profile"),
        "{}",
        reply.body
    );
    drop(hub);
    let hub = HttpHub::start(&home, &["--profile", "work"]);
    let reply = post(
        &hub,
        &[("Authorization", &format!("Bearer {token}"))],
        &initialize(),
    );
    assert_eq!(reply.status, 200, "{}{}", reply.head, reply.body);
}

#[test]
fn a_foreign_host_header_is_refused() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let reply = post(
        &hub,
        &[("Authorization", &bearer), ("Host", "evil.example.com")],
        &initialize(),
    );
    assert_eq!(reply.status, 403, "{}{}", reply.head, reply.body);
}

#[test]
fn a_remote_address_needs_allow_remote() {
    let home = Home::new();
    config(&home);
    let run = home.run(&["hub", "serve", "--http", "0.0.0.0:0"]).fails();
    assert!(
        run.stderr
            .contains("refusing to serve on 0.0.0.0:0: other machines can reach that address")
            && run.stderr.contains("--allow-remote"),
        "{}",
        run.stderr
    );
    let run = home.run(&["hub", "serve", "--allow-remote"]);
    assert_eq!(run.code, 2, "clap refuses --allow-remote without --http");
    assert!(run.stderr.contains("--http"), "{}", run.stderr);
}

#[test]
fn token_commands_explain_their_errors_and_never_show_a_secret_again() {
    let home = Home::new();
    config(&home);
    let secret = create_token(
        &home,
        &["ci", "--expires", "30d", "--allow", "everything.*"],
    );
    let run = home.run(&["token", "create", "ci"]).fails();
    assert!(
        run.stderr.contains("a token named `ci` already exists"),
        "{}",
        run.stderr
    );
    let run = home.run(&["token", "create", "bad name"]).fails();
    assert!(
        run.stderr.contains("`bad name` is not a token name"),
        "{}",
        run.stderr
    );
    let run = home
        .run(&["token", "create", "x", "--expires", "soon"])
        .fails();
    assert!(
        run.stderr.contains("--expires `soon` is not a duration"),
        "{}",
        run.stderr
    );
    let run = home
        .run(&["token", "create", "x", "--profile", "home"])
        .fails();
    assert!(
        run.stderr.contains("there is no profile `home`"),
        "{}",
        run.stderr
    );
    let run = home.run(&["token", "revoke", "nope"]).fails();
    assert!(
        run.stderr.contains("there is no token named `nope`"),
        "{}",
        run.stderr
    );

    let table = home.run(&["token", "list"]).ok();
    assert!(
        table.stdout.contains("ci") && table.stdout.contains("everything.*"),
        "{}",
        table.stdout
    );
    home.run(&["token", "revoke", "ci"]).ok();
    let listed = home.run(&["token", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&listed.stdout).expect("JSON");
    assert_eq!(rows[0]["name"], "ci");
    assert_eq!(rows[0]["status"], "revoked");
    assert_eq!(rows[0]["allow"], json!(["everything.*"]));
    for output in [&table.stdout, &listed.stdout] {
        assert!(
            !output.contains(&secret),
            "the secret is shown only at creation"
        );
    }
    let database = std::fs::read(home.path().join("data/state.sqlite")).unwrap_or_default();
    assert!(
        !database
            .windows(secret.len())
            .any(|w| w == secret.as_bytes()),
        "the store keeps only a hash"
    );
}

/// The official MCP conformance suite against `hub serve --http`, for the scenarios that do not
/// call fixed test tool names. The suite cannot send headers, so a preloaded module adds the
/// bearer token to its requests; tests/conformance-baseline.yml names the checks that do not
/// apply, with why, and the suite fails on any other failure (and on a baselined check that
/// starts passing).
#[test]
fn the_conformance_suite_passes_the_applicable_scenarios() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["conformance"]);
    let hub = HttpHub::start(&home, &[]);
    let results = tempfile::tempdir().expect("a results directory");
    let runs = [
        ("2026-07-28", "tools-list"),
        ("2026-07-28", "dns-rebinding-protection"),
        ("2026-07-28", "http-header-validation"),
        ("2026-07-28", "server-stateless"),
        ("2026-07-28", "caching"),
        ("2026-07-28", "server-sse-multiple-streams"),
        ("2025-11-25", "server-initialize"),
        ("2025-11-25", "server-session-lifecycle"),
        ("2025-11-25", "tools-list"),
        ("2025-11-25", "ping"),
        ("2025-11-25", "server-sse-multiple-streams"),
    ];
    for (version, scenario) in runs {
        let output = Command::new(venv_node())
            .current_dir(repo().join("tests"))
            .env("CONFORMANCE_BEARER", &token)
            .args(["--import", "./peers/bearer_dispatcher.mjs"])
            .arg("node_modules/@modelcontextprotocol/conformance/dist/index.js")
            .args(["server", "--url", &hub.url(), "--scenario", scenario])
            .args(["--spec-version", version])
            .args(["--expected-failures", "conformance-baseline.yml"])
            .arg("-o")
            .arg(results.path())
            .output()
            .expect("node runs the conformance suite (tests/setup.sh installs it)");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("Test Results"),
            "{scenario} ({version}) has unexpected failures\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
