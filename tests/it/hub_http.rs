//! `capabilities hub serve --http` and `capabilities token`: the Python `mcp` SDK over
//! Streamable HTTP in 2026-07-28 and legacy mode with a valid, a missing and a revoked token; a
//! token's `--allow` patterns checked on each call inside a script; raw HTTP for what a client
//! library hides (status codes, the recovery contract, revocation inside a session, the Origin
//! check, malformed bodies and batches); raw sockets for slow, idle and surplus connections.

use std::io::{ErrorKind, Read, Write};
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

    /// `kill -9`, and waits for the process to go.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
pub(crate) fn python_client_running(hub: &HttpHub, args: &[&str]) -> Value {
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
        // The token allows only everything.echo: to its scripts, the rest are not tools.
        let refused = &envelope["result"]["sum"];
        assert_eq!(refused["refused"], "unknown_tool", "{report}");
        assert_eq!(
            refused["message"], "everything.getSum is not a tool; everything has: echo",
            "{report}"
        );
        assert_eq!(envelope["result"]["tools"], json!(["echo"]), "{report}");
        // What the token may not call is not shown either: not by search or describe, not by
        // `hub.search` inside a script.
        for found in [
            report["search"]["text"].as_str(),
            envelope["result"]["found"].as_str(),
        ] {
            let found = found.unwrap_or_default();
            // Nor counted: to this client they do not exist.
            assert!(
                !found.contains("getSum") && !found.contains("hidden"),
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

/// Regression (review 5, F1): inside `execute`, a token's holder learned the tools it may not
/// call from the globals' keys, from "did you mean" and from the signature an argument error
/// quoted, since arguments were checked before the token.
#[test]
fn execute_shows_a_token_nothing_of_what_it_may_not_call() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["reader", "--allow", "everything.echo"]);
    let hub = HttpHub::start(&home, &[]);
    let script = r#"
        const attempt = (f) => {
          try { f(); return "no error"; }
          catch (e) { return { code: e.code, message: e.message, hint: e.hint ?? null }; }
        };
        return {
          keys: Object.keys(everything),
          names: Object.getOwnPropertyNames(everything),
          has: "getSum" in everything,
          // Invalid arguments: checked first, they would quote the signature.
          hidden: attempt(() => everything["getSum"]({ a: "x" })),
          missing: attempt(() => everything["getSumz"]({ a: "x" })),
          typo: attempt(() => everything["getSun"]({})),
        };
    "#;
    let report = python_client_running(&hub, &["2026-07-28", &token, script]);
    let envelope = &report["execute"]["structured"];
    assert_eq!(envelope["status"], "completed", "{report}");
    let result = &envelope["result"];
    assert_eq!(result["keys"], json!(["echo"]), "{report}");
    assert_eq!(result["names"], json!(["echo"]), "{report}");
    assert_eq!(result["has"], false, "{report}");
    // A hidden tool and a name that never existed fail alike.
    for (attempt, name) in [("hidden", "getSum"), ("missing", "getSumz")] {
        assert_eq!(
            result[attempt],
            json!({
                "code": "unknown_tool",
                "message": format!("everything.{name} is not a tool; everything has: echo"),
                "hint": null,
            }),
            "{report}"
        );
    }
    let typo = result["typo"]["message"].as_str().unwrap_or_default();
    assert!(
        result["typo"]["code"] == "unknown_tool" && !typo.contains("getSum"),
        "{report}"
    );
    // Before the run, the check of `ns.tool(…)` calls suggests nothing hidden either.
    for code in [
        "return await everything.getSum({ a: 'x' })",
        "return await everything.getSumm({})",
    ] {
        let report = python_client_running(&hub, &["2026-07-28", &token, code]);
        let error = &report["execute"]["structured"]["error"];
        assert_eq!(error["code"], "unknown_tool", "{report}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("everything has: echo") && !message.contains("number"),
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
    // Revoking again changes nothing and says so, rather than that the token does not exist.
    let again = home.run(&["token", "revoke", "laptop"]).ok();
    assert!(
        again.stderr.contains("token `laptop` was already revoked"),
        "{}",
        again.stderr
    );
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

/// One HTTP/1.1 exchange: the status, the head, and the body (read to its length, or for a
/// stream to its end when asked: the hub closes it after the last event, as `Connection: close`
/// asks).
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

pub(crate) fn post(hub: &HttpHub, headers: &[(&str, &str)], body: &Value) -> Reply {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    send(hub, "POST", &all, &body.to_string(), false)
}

/// `method /mcp` with exactly `headers` (plus `Host` unless given, `Content-Length` and
/// `Connection: close`) and `body`; with `whole_stream`, an event stream is read to its end.
fn send(
    hub: &HttpHub,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    whole_stream: bool,
) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect to the hub");
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    request.push_str(&header_lines(hub, headers));
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send");
    read_reply(&mut stream, whole_stream)
}

/// The header lines of a request (with `Host` unless given) and the blank line after them.
fn header_lines(hub: &HttpHub, headers: &[(&str, &str)]) -> String {
    let mut lines = String::new();
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        lines.push_str(&format!("Host: 127.0.0.1:{}\r\n", hub.port));
    }
    for (name, value) in headers {
        lines.push_str(&format!("{name}: {value}\r\n"));
    }
    lines.push_str("\r\n");
    lines
}

fn read_reply(stream: &mut TcpStream, whole_stream: bool) -> Reply {
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("a read bound");
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
    } else if whole_stream {
        stream.read_to_end(&mut bytes).expect("read the stream");
    }
    let mut body = bytes.split_off(head_end);
    if header_of(&head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body);
    }
    let body = String::from_utf8_lossy(&body).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    Reply { status, head, body }
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    header_of(&reply.head, name)
}

fn header_of<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The payload of a `Transfer-Encoding: chunked` body.
fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&bytes[..end])
            .ok()
            .and_then(|line| usize::from_str_radix(line.split(';').next()?.trim(), 16).ok())
            .expect("a chunk size");
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&bytes[start..start + size]);
        bytes = &bytes[start + size + 2..];
    }
    out
}

/// The JSON-RPC messages in an event stream's `data:` lines.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The JSON-RPC error body of a refusal.
fn error_of(reply: &Reply) -> Value {
    let body: Value = serde_json::from_str(&reply.body)
        .unwrap_or_else(|e| panic!("not a JSON body ({e}): {}{}", reply.head, reply.body));
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    body["error"].clone()
}

/// Asserts `reply` is HTTP 400 with a JSON-RPC `-32600` whose message says each of `parts`.
#[track_caller]
fn assert_invalid_request(reply: &Reply, parts: &[&str]) {
    assert_eq!(reply.status, 400, "{}{}", reply.head, reply.body);
    let error = error_of(reply);
    assert_eq!(error["code"], -32600, "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    for part in parts {
        assert!(message.contains(part), "{part:?}: {error}");
    }
}

pub(crate) fn initialize() -> Value {
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
fn a_session_serves_only_the_token_that_opened_it() {
    let home = Home::new();
    config(&home);
    let alice = format!("Bearer {}", create_token(&home, &["alice"]));
    let bob = format!("Bearer {}", create_token(&home, &["bob"]));
    let hub = HttpHub::start(&home, &[]);
    let started = post(&hub, &[("Authorization", &alice)], &initialize());
    assert_eq!(started.status, 200, "{}", started.head);
    let session = header(&started, "mcp-session-id").expect("a session id");
    let in_session = |bearer: &str| {
        let headers = [
            ("Authorization", bearer),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        post(
            &hub,
            &headers,
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        )
    };
    // Another token holder who learned the id is answered as for an unknown session.
    let refused = in_session(&bob);
    assert_eq!(refused.status, 404, "{}{}", refused.head, refused.body);
    assert!(
        refused.body.contains("MCP_SESSION_UNAVAILABLE"),
        "{}",
        refused.body
    );
    let served = in_session(&alice);
    assert_eq!(served.status, 202, "{}{}", served.head, served.body);
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
    // A lifetime past u64 milliseconds wrapped into the past: "created", and expired at once.
    for endless in ["99999999999999w", "15250284452w", "101y0d", "36501d"] {
        let run = home
            .run(&["token", "create", "x", "--expires", endless])
            .fails();
        assert!(
            run.stderr.contains("more than 100 years") || run.stderr.contains("is not a duration"),
            "{endless}: {}",
            run.stderr
        );
    }
    let listed = home.run(&["token", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&listed.stdout).expect("JSON");
    assert!(
        rows.as_array()
            .is_some_and(|rows| rows.iter().all(|row| row["name"] != "x")),
        "nothing was created: {rows}"
    );
    let run = home
        .run(&["token", "create", "x", "--profile", "home"])
        .fails();
    assert!(
        run.stderr.contains("there is no profile `home`"),
        "{}",
        run.stderr
    );
    let run = home
        .run(&["token", "create", "x", "--allow", "nosuch.*"])
        .fails();
    assert!(
        run.stderr
            .contains("--allow `nosuch.*` names source `nosuch`, which is not in")
            && run.stderr.contains("known sources: everything"),
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

/// A started legacy session: its id, after `initialize` (at `version`) and `initialized`.
fn legacy_session(hub: &HttpHub, bearer: &str, version: &str) -> String {
    let mut start = initialize();
    start["params"]["protocolVersion"] = json!(version);
    let started = post(hub, &[("Authorization", bearer)], &start);
    assert_eq!(started.status, 200, "{}{}", started.head, started.body);
    let session = header(&started, "mcp-session-id")
        .expect("a session id")
        .to_string();
    let mut headers = vec![("Authorization", bearer), ("Mcp-Session-Id", &session)];
    // The header exists from 2025-06-18 on; a 2025-03-26 client does not send it.
    if version != "2025-03-26" {
        headers.push(("MCP-Protocol-Version", version));
    }
    let initialized = post(
        hub,
        &headers,
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    );
    assert_eq!(initialized.status, 202, "{}", initialized.head);
    session
}

#[test]
fn one_token_holds_at_most_64_sessions_and_ending_one_makes_room() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let other = create_token(&home, &["u"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let sessions: Vec<String> = (0..64)
        .map(|_| legacy_session(&hub, &bearer, "2025-11-25"))
        .collect();
    let mut start = initialize();
    start["params"]["protocolVersion"] = json!("2025-11-25");
    let refused = post(&hub, &[("Authorization", bearer.as_str())], &start);
    assert_eq!(refused.status, 503, "{}{}", refused.head, refused.body);
    assert!(
        header(&refused, "mcp-session-id").is_none(),
        "{}",
        refused.head
    );
    let error = error_of(&refused);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("already holds 64 open sessions") && m.contains("DELETE")),
        "{error}"
    );
    // Another token is not held back by this one's sessions.
    legacy_session(&hub, &format!("Bearer {other}"), "2025-11-25");
    // Ending a session makes room for a new one.
    let ended = send(
        &hub,
        "DELETE",
        &[
            ("Authorization", bearer.as_str()),
            ("Mcp-Session-Id", sessions[0].as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
        false,
    );
    assert!([200, 204].contains(&ended.status), "{}", ended.head);
    legacy_session(&hub, &bearer, "2025-11-25");
}

#[test]
fn a_foreign_origin_is_refused_before_the_token_is_looked_at() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    for origin in ["https://evil.example", "http://127.0.0.1:1", "null"] {
        // With a valid token and without one alike: a page elsewhere cannot use a leaked token,
        // nor learn whether a token is valid.
        for headers in [
            vec![("Origin", origin), ("Authorization", bearer.as_str())],
            vec![("Origin", origin)],
        ] {
            let reply = post(&hub, &headers, &initialize());
            assert_eq!(reply.status, 403, "{origin}: {}{}", reply.head, reply.body);
            let error = error_of(&reply);
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!("`{origin}`")) && message.contains("--allow-origin"),
                "{error}"
            );
        }
    }
    // The hub's own origin, under each loopback name, and no Origin (a non-browser client).
    let own = [
        format!("http://127.0.0.1:{}", hub.port),
        format!("http://localhost:{}", hub.port),
        format!("http://[::1]:{}", hub.port),
    ];
    for origin in &own {
        let reply = post(
            &hub,
            &[("Origin", origin), ("Authorization", &bearer)],
            &initialize(),
        );
        assert_eq!(reply.status, 200, "{origin}: {}{}", reply.head, reply.body);
    }
    let reply = post(&hub, &[("Authorization", &bearer)], &initialize());
    assert_eq!(reply.status, 200, "{}{}", reply.head, reply.body);

    // DNS rebinding: a page whose own name now points at 127.0.0.1 is same-origin with itself.
    // Refused by its Host first, alike with a valid token, an invalid one and none, so it
    // learns nothing about a token; its preflight is refused too.
    let rebound = format!("evil.example:{}", hub.port);
    let page = format!("http://{rebound}");
    let mut answers = Vec::new();
    for token in [
        Some(bearer.clone()),
        Some("Bearer cap_wrong".to_string()),
        None,
    ] {
        let mut headers = vec![("Host", rebound.as_str()), ("Origin", page.as_str())];
        if let Some(token) = &token {
            headers.push(("Authorization", token.as_str()));
        }
        let reply = post(&hub, &headers, &initialize());
        assert_eq!(reply.status, 403, "{}{}", reply.head, reply.body);
        assert!(
            header(&reply, "access-control-allow-origin").is_none(),
            "{}",
            reply.head
        );
        answers.push(reply.body);
    }
    assert!(
        answers.windows(2).all(|pair| pair[0] == pair[1]),
        "{answers:?}"
    );
    assert!(
        answers[0].contains("does not answer to the name") && answers[0].contains("--allowed-host"),
        "{}",
        answers[0]
    );
    let preflight = send(
        &hub,
        "OPTIONS",
        &[
            ("Host", rebound.as_str()),
            ("Origin", page.as_str()),
            ("Access-Control-Request-Method", "POST"),
        ],
        "",
        false,
    );
    assert_eq!(preflight.status, 403, "{}", preflight.head);
    // Two Host headers: which one a proxy read is not known.
    let own_host = format!("127.0.0.1:{}", hub.port);
    let twice = send(
        &hub,
        "POST",
        &[
            ("Host", own_host.as_str()),
            ("Host", "evil.example"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", bearer.as_str()),
        ],
        &initialize().to_string(),
        false,
    );
    assert_eq!(twice.status, 400, "{}{}", twice.head, twice.body);
}

#[test]
fn an_allowed_origin_is_served_with_cors_and_null_cannot_be_allowed() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let app = "https://app.example.com";
    let hub = HttpHub::start(&home, &["--allow-origin", app]);
    let bearer = format!("Bearer {token}");
    let reply = post(
        &hub,
        &[("Origin", app), ("Authorization", &bearer)],
        &initialize(),
    );
    assert_eq!(reply.status, 200, "{}{}", reply.head, reply.body);
    assert_eq!(header(&reply, "access-control-allow-origin"), Some(app));
    // The browser's preflight carries no token; it is answered for an allowed origin only.
    let preflight = [
        ("Origin", app),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "authorization, content-type, mcp-protocol-version",
        ),
    ];
    let reply = send(&hub, "OPTIONS", &preflight, "", false);
    assert_eq!(reply.status, 204, "{}{}", reply.head, reply.body);
    assert_eq!(header(&reply, "access-control-allow-origin"), Some(app));
    assert!(
        header(&reply, "access-control-allow-headers").is_some_and(|h| h.contains("authorization")),
        "{}",
        reply.head
    );
    let mut elsewhere = preflight;
    elsewhere[0].1 = "https://evil.example";
    assert_eq!(send(&hub, "OPTIONS", &elsewhere, "", false).status, 403);
    drop(hub);

    for (value, says) in [
        (
            "null",
            "`null` is the origin of sandboxed and local-file pages",
        ),
        ("app.example.com", "write an origin as scheme://host[:port]"),
    ] {
        let run = home
            .run(&[
                "hub",
                "serve",
                "--http",
                "127.0.0.1:0",
                "--allow-origin",
                value,
            ])
            .fails();
        assert!(run.stderr.contains(says), "{value}: {}", run.stderr);
    }
}

#[test]
fn a_slowloris_is_cut_off_by_the_header_timeout() {
    let home = Home::new();
    config(&home);
    // A short header timeout, and an idle timeout that cannot be what cuts it off.
    let hub = HttpHub::start(&home, &["--header-timeout", "2", "--idle-timeout", "3600"]);
    let mut stream = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect");
    // Each read waits up to 2 s for the hub's answer to the byte before: that paces the bytes.
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .expect("a read bound");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Padding: {}",
        hub.port,
        "a".repeat(100)
    );
    // 60 bytes, one each ~2 s: a deadline far above the 2 s configured.
    let mut chunk = [0u8; 256];
    let closed = head.bytes().take(60).any(|byte| {
        if stream.write_all(&[byte]).is_err() {
            return true;
        }
        match stream.read(&mut chunk) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
            // End of stream, a reset, or an answer: the hub stopped waiting for this head.
            _ => true,
        }
    });
    assert!(
        closed,
        "the hub kept waiting for a head sent one byte at a time"
    );
}

#[test]
fn a_stalled_body_is_cut_off_by_the_body_timeout() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &["--body-timeout", "2"]);
    let mut stream = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect");
    let headers = header_lines(
        &hub,
        &[
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Length", "1000"),
        ],
    );
    stream
        .write_all(format!("POST /mcp HTTP/1.1\r\n{headers}{{\"jsonrpc\":").as_bytes())
        .expect("send a head and the start of a body");
    let reply = read_reply(&mut stream, false);
    assert_eq!(reply.status, 408, "{}{}", reply.head, reply.body);
    let error = error_of(&reply);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("--body-timeout")),
        "{error}"
    );
}

#[test]
fn idle_and_half_open_connections_are_closed_but_a_long_run_is_not() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &["--idle-timeout", "2"]);
    // Connections that never send a byte, and one kept alive after a request.
    let mut idle: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(("127.0.0.1", hub.port)).expect("connect"))
        .collect();
    let mut kept = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect");
    let headers = header_lines(&hub, &[("Content-Length", "0")]);
    kept.write_all(format!("POST /mcp HTTP/1.1\r\n{headers}").as_bytes())
        .expect("send");
    assert_eq!(read_reply(&mut kept, false).status, 401);
    idle.push(kept);
    for (i, stream) in idle.iter_mut().enumerate() {
        // A bound far above the 2 s configured, not a speed check.
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a read bound");
        let mut chunk = [0u8; 64];
        match stream.read(&mut chunk) {
            Ok(0) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            other => panic!("idle connection {i} was not closed: {other:?}"),
        }
    }
    // A request in flight is never idle: a run longer than the idle timeout completes.
    let script = "return await everything.triggerLongRunningOperation({ duration: 5, steps: 5 });";
    let report = python_client_running(&hub, &["2026-07-28", &token, script]);
    let envelope = &report["execute"]["structured"];
    assert_eq!(envelope["status"], "completed", "{report}");
}

#[test]
fn connections_past_the_cap_get_503_until_one_closes() {
    let home = Home::new();
    config(&home);
    let hub = HttpHub::start(&home, &["--max-connections", "2", "--idle-timeout", "3600"]);
    // Two connections the hub has served one request on and keeps open. The connection that
    // checked the port may not have been let go yet: retry until it has (a bound, not a speed check).
    let hold = || {
        for _ in 0..300 {
            let mut stream = TcpStream::connect(("127.0.0.1", hub.port)).expect("connect");
            let headers = header_lines(&hub, &[("Content-Length", "0")]);
            stream
                .write_all(format!("POST /mcp HTTP/1.1\r\n{headers}").as_bytes())
                .expect("send");
            match read_reply(&mut stream, false).status {
                401 => return stream,
                503 => std::thread::sleep(Duration::from_millis(100)),
                other => panic!("unexpected status {other}"),
            }
        }
        panic!("the hub never freed a connection slot");
    };
    let mut held = vec![hold(), hold()];
    let refused = post(&hub, &[], &initialize());
    assert_eq!(refused.status, 503, "{}{}", refused.head, refused.body);
    assert!(
        header(&refused, "retry-after").is_some(),
        "{}",
        refused.head
    );
    let error = error_of(&refused);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("--max-connections")),
        "{error}"
    );
    // Closing one frees its slot once the hub has seen the close.
    drop(held.pop());
    let status = (0..300)
        .map(|_| {
            let status = post(&hub, &[], &initialize()).status;
            if status == 503 {
                std::thread::sleep(Duration::from_millis(100));
            }
            status
        })
        .find(|status| *status != 503);
    assert_eq!(
        status,
        Some(401),
        "the closed connection's slot was not freed"
    );
}

#[test]
fn malformed_bodies_get_400_with_a_json_rpc_error() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let start = initialize().to_string();
    // The Content-Type sent (none when absent), the body, the JSON-RPC code, what it says.
    let json = Some("application/json");
    let cases = [
        (Some("text/plain"), start.as_str(), -32700, "Content-Type"),
        (None, start.as_str(), -32700, "Content-Type"),
        (
            json,
            "{\"jsonrpc\": \"2.0\", \"id\": 1,",
            -32700,
            "not valid JSON",
        ),
        (json, "42", -32600, "JSON-RPC"),
        (json, "{\"hello\": \"world\"}", -32600, "JSON-RPC"),
        (
            json,
            "{\"jsonrpc\": \"1.0\", \"id\": 3, \"method\": \"ping\"}",
            -32600,
            "\"2.0\"",
        ),
        (json, "[]", -32600, "empty"),
        (
            json,
            "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"ping\", \"method\": \"tools/list\"}",
            -32600,
            "twice",
        ),
    ];
    for (content_type, body, code, says) in cases {
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend(content_type.map(|t| ("Content-Type", t)));
        let reply = send(&hub, "POST", &headers, body, false);
        assert_eq!(reply.status, 400, "{body}: {}{}", reply.head, reply.body);
        assert!(
            header(&reply, "content-type").is_some_and(|t| t.starts_with("application/json")),
            "{}",
            reply.head
        );
        let error = error_of(&reply);
        assert_eq!(error["code"], code, "{body}: {error}");
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(says)),
            "{body}: {error}"
        );
    }
    // A request whose params do not fit its method keeps its id.
    let reply = post(
        &hub,
        &[("Authorization", bearer.as_str())],
        &json!({ "jsonrpc": "2.0", "id": 7, "method": "initialize", "params": "x" }),
    );
    assert_eq!(reply.status, 400, "{}{}", reply.head, reply.body);
    let body: Value = serde_json::from_str(&reply.body).expect("JSON");
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

#[test]
fn a_batch_is_served_in_a_2025_03_26_session_and_refused_in_later_ones() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let batch = json!([
        { "jsonrpc": "2.0", "id": 2, "method": "tools/list" },
        { "jsonrpc": "2.0", "method": "notifications/roots/list_changed" },
        { "jsonrpc": "2.0", "id": "three", "method": "ping" },
        { "jsonrpc": "2.0", "id": 4, "method": "initialize", "params": initialize()["params"] },
    ]);
    let session = legacy_session(&hub, &bearer, "2025-03-26");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let reply = send(&hub, "POST", &headers, &batch.to_string(), true);
    assert_eq!(reply.status, 200, "{}{}", reply.head, reply.body);
    let answers = events(&reply.body);
    let answer = |id: Value| {
        answers
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}: {}", reply.body))
    };
    let tools = answer(json!(2))["result"]["tools"]
        .as_array()
        .expect("tools");
    assert_eq!(tools.len(), 3, "{}", reply.body);
    assert_eq!(
        answer(json!("three"))["result"],
        json!({}),
        "{}",
        reply.body
    );
    // 2025-03-26: "the initialize request MUST NOT be part of a JSON-RPC batch".
    assert_eq!(answer(json!(4))["error"]["code"], -32600, "{}", reply.body);
    // Notifications alone are accepted without a body.
    let only = json!([{ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }]);
    let reply = send(&hub, "POST", &headers, &only.to_string(), true);
    assert_eq!(reply.status, 202, "{}{}", reply.head, reply.body);
    // Two requests with one id: answers find their request by id, so one would run unanswered
    // and the stream would never end. Refused whole, before either runs.
    let twice = json!([
        { "jsonrpc": "2.0", "id": 7, "method": "ping" },
        { "jsonrpc": "2.0", "id": 7, "method": "ping" },
    ]);
    let reply = send(&hub, "POST", &headers, &twice.to_string(), true);
    assert_invalid_request(&reply, &["have the id 7", "nothing in the batch was run"]);

    // 2024-11-05 had batches too, and its clients send no version header either.
    let oldest = legacy_session(&hub, &bearer, "2024-11-05");
    let mut first = headers.to_vec();
    first[3].1 = oldest.as_str();
    let reply = send(&hub, "POST", &first, &only.to_string(), true);
    assert_eq!(reply.status, 202, "{}{}", reply.head, reply.body);

    // 2025-06-18 removed batches: refused with the header, and without it in a session opened
    // with a later version (the version it was opened with decides, not the header's absence).
    let session = legacy_session(&hub, &bearer, "2025-11-25");
    let mut later = headers.to_vec();
    later[3].1 = session.as_str();
    for (with_header, says) in [
        (true, "this request is 2025-11-25"),
        (false, "opened with 2025-11-25"),
    ] {
        let mut sent = later.clone();
        if with_header {
            sent.push(("MCP-Protocol-Version", "2025-11-25"));
        }
        let reply = send(&hub, "POST", &sent, &batch.to_string(), true);
        assert_invalid_request(&reply, &["removed in MCP 2025-06-18", says]);
    }
    // Nothing in a refused batch ran: the session still answers, and lists its tools anew.
    let ping = json!({ "jsonrpc": "2.0", "id": 9, "method": "ping" });
    let mut single = later.clone();
    single.push(("MCP-Protocol-Version", "2025-11-25"));
    let reply = send(&hub, "POST", &single, &ping.to_string(), true);
    assert_eq!(reply.status, 200, "{}{}", reply.head, reply.body);
}

/// Regression: a second request sent in one session with the id of one still running ran too,
/// and the first one's stream was never answered.
#[test]
fn a_request_id_still_in_flight_in_its_session_is_refused_and_the_first_is_answered() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let session = legacy_session(&hub, &bearer, "2025-11-25");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let call = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": { "name": "execute", "arguments": {
            "code": "return await everything.triggerLongRunningOperation({ duration: 6, steps: 3 });"
        } },
    })
    .to_string();
    std::thread::scope(|scope| {
        let first = scope.spawn(|| send(&hub, "POST", &headers, &call, true));
        // Well inside the first call's six seconds, so it is still running.
        std::thread::sleep(Duration::from_secs(2));
        let second = send(&hub, "POST", &headers, &call, true);
        assert_invalid_request(&second, &["still being answered"]);
        // The same id spelt as a float (which rmcp would read as 5) is not another id.
        let spelt = r#"{"jsonrpc": "2.0", "id": 5.0, "method": "ping"}"#;
        let third = send(&hub, "POST", &headers, spelt, true);
        assert_invalid_request(&third, &["whole number"]);
        let first = first.join().expect("the first request");
        let answered = events(&first.body);
        assert!(
            answered
                .iter()
                .any(|a| a["id"] == 5 && a["result"]["structuredContent"]["status"] == "completed"),
            "{}",
            first.body
        );
    });
    // Answered, its id is free again.
    let ping = json!({ "jsonrpc": "2.0", "id": 5, "method": "ping" }).to_string();
    let again = send(&hub, "POST", &headers, &ping, true);
    assert_eq!(again.status, 200, "{}{}", again.head, again.body);
}

#[test]
fn deleting_a_session_answers_204_and_the_python_client_exits_quietly() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    let session = legacy_session(&hub, &bearer, "2025-11-25");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let reply = send(&hub, "DELETE", &headers, "", false);
    assert!(
        [200, 204].contains(&reply.status),
        "{}{}",
        reply.head,
        reply.body
    );
    let after = post(
        &hub,
        &headers,
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    );
    assert_eq!(after.status, 404, "the session ended: {}", after.head);
    // Ending it again, or a session that never was, answers as another token's session would:
    // nothing tells a prober which sessions exist.
    let other = create_token(&home, &["u"]);
    let bearer_other = format!("Bearer {other}");
    let theirs = legacy_session(&hub, &bearer_other, "2025-11-25");
    let mut answers = Vec::new();
    for (bearer, session) in [
        (bearer.as_str(), session.as_str()),
        (bearer.as_str(), "no-such-session"),
        (bearer.as_str(), theirs.as_str()),
    ] {
        let headers = [
            ("Authorization", bearer),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let reply = send(&hub, "DELETE", &headers, "", false);
        answers.push((reply.status, reply.body));
    }
    assert!(answers.iter().all(|a| *a == answers[2]), "{answers:?}");
    assert_eq!(answers[2].0, 404, "{answers:?}");

    // The SDK ends its session with DELETE on exit and warns on any other status.
    let output = python_peer("hub_http_client.py")
        .arg(hub.url())
        .args(["legacy", &token])
        .output()
        .expect("run the Python client");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
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
        conformance(&hub, &token, scenario, Some(version), results.path());
    }
}

/// Runs one scenario of the conformance suite against `hub` (at `version`, or as the suite
/// decides when `None`: extension scenarios have no spec version) and fails on any failure the
/// baseline does not name.
pub(crate) fn conformance(
    hub: &HttpHub,
    token: &str,
    scenario: &str,
    version: Option<&str>,
    results: &std::path::Path,
) {
    let mut command = Command::new(venv_node());
    command
        .current_dir(repo().join("tests"))
        .env("CONFORMANCE_BEARER", token)
        .args(["--import", "./peers/bearer_dispatcher.mjs"])
        .arg("node_modules/@modelcontextprotocol/conformance/dist/index.js")
        .args(["server", "--url", &hub.url(), "--scenario", scenario]);
    if let Some(version) = version {
        command.args(["--spec-version", version]);
    }
    let output = command
        .args(["--expected-failures", "conformance-baseline.yml"])
        .arg("-o")
        .arg(results)
        .output()
        .expect("node runs the conformance suite (tests/setup.sh installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && stdout.contains("Test Results")
            && !stdout.contains("SKIPPED: scenario"),
        "{scenario} ({version:?}) has unexpected failures\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A run started under one token goes on only for that token (or the user on the hub's machine):
/// another token that learned its id neither runs the approved write nor spends the approval.
#[test]
fn another_tokens_resume_runs_nothing_and_leaves_the_approval() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[profiles.work]\nsources = [\"everything\"]\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
    let owner = create_token(&home, &["owner"]);
    let other = create_token(&home, &["other"]);
    let narrow = create_token(&home, &["narrow", "--allow", "everything.echo"]);
    let hub = HttpHub::start(&home, &[]);
    // toggleSimulatedLogging is not marked read-only: by default it asks.
    let write = "return await everything.toggleSimulatedLogging({});";
    let paused = python_client_running(&hub, &["2026-07-28", &owner, write]);
    let envelope = &paused["execute"]["structured"];
    assert_eq!(envelope["status"], "awaiting_approval", "{paused}");
    let run_id = envelope["runId"].as_str().expect("a runId").to_string();
    home.run(&["hub", "approve", &run_id]).ok();

    let resume = format!("resume:{run_id}");
    for token in [&other, &narrow] {
        let refused = python_client_running(&hub, &["2026-07-28", token, &resume]);
        assert_eq!(refused["execute"]["isError"], true, "{refused}");
        let said = refused["execute"]["text"].as_str().unwrap_or_default();
        assert!(
            said.contains("was started by another client's token"),
            "{said}"
        );
    }
    // A hub of another profile on the same store tells another token no more, not even the
    // profile the run was started under; its own token is told the way.
    let work = HttpHub::start(&home, &["--profile", "work"]);
    let refused = python_client_running(&work, &["2026-07-28", &other, &resume]);
    let said = refused["execute"]["text"].as_str().unwrap_or_default();
    assert!(
        said.contains("was started by another client's token") && !said.contains("profile"),
        "{said}"
    );
    let told = python_client_running(&work, &["2026-07-28", &owner, &resume]);
    let said = told["execute"]["text"].as_str().unwrap_or_default();
    assert!(
        said.contains("was started under no profile") && said.contains("serves profile `work`"),
        "{said}"
    );
    drop(work);
    // Still approved, still waiting for its own client, which runs it.
    let runs = home.run(&["hub", "runs", "--json"]).ok();
    assert!(runs.stdout.contains("awaiting_approval"), "{}", runs.stdout);
    let done = python_client_running(&hub, &["2026-07-28", &owner, &resume]);
    assert_eq!(
        done["execute"]["structured"]["status"], "completed",
        "{done}"
    );
    // A token revoked gives its name up; the new token of that name is not the run's.
    home.run(&["token", "revoke", "owner"]).ok();
    let successor = create_token(&home, &["owner"]);
    let refused = python_client_running(&hub, &["2026-07-28", &successor, &resume]);
    assert!(
        refused["execute"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("was started by another client's token")),
        "{refused}"
    );
}

/// Regression (review 6): a token's holder learned the names of sources it may call nothing of
/// from the sandbox's globals, search's notes about sources that did not answer, the profile
/// line, and the errors for a source that is down, disabled or outside the profile.
#[test]
fn a_narrow_token_is_told_nothing_of_the_sources_it_may_not_call() {
    let home = Home::new();
    let hidden = ["payroll", "secretbroken", "hrdisabled", "outside"];
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{everything}, \"stdio\"]\n\n\
         [sources.payroll]\ncommand = {python}\nargs = [{ledger}]\nenv = {{ LEDGER_FILE = {file} }}\n\n\
         [sources.secretbroken]\ncommand = \"/nonexistent/secret-server\"\n\n\
         [sources.hrdisabled]\ncommand = \"node\"\nenabled = false\n\n\
         [sources.outside]\ncommand = \"node\"\nargs = [{everything}, \"stdio\"]\n\n\
         [profiles.work]\nsources = [\"everything\", \"payroll\", \"secretbroken\", \"hrdisabled\"]\n",
        everything = json!(everything_js()),
        python = json!(repo().join(".venv/bin/python")),
        ledger = json!(repo().join("tests/peers/ledger_server.py")),
        file = json!(home.path().join("ledger.txt")),
    ));
    let narrow = create_token(
        &home,
        &["narrow", "--profile", "work", "--allow", "everything.echo"],
    );
    let full = create_token(&home, &["full", "--profile", "work"]);
    let hub = HttpHub::start(&home, &["--profile", "work"]);
    let report = |token: &str, script: &str| {
        json_report(python_peer("hub_http_client.py").arg(hub.url()).args([
            "2026-07-28",
            token,
            script,
        ]))
    };
    let look = r#"
        const names = ["payroll", "secretbroken", "hrdisabled", "outside"];
        return {
            globals: names.filter((n) => Object.getOwnPropertyNames(globalThis).includes(n)),
            found: await hub.search("write a key"),
        };
    "#;
    // The user's own token sees them all, so each surface below has something to hide.
    let seen = report(&full, look);
    let seen_text = seen.to_string();
    assert!(
        seen_text.contains("secretbroken") && seen_text.contains("payroll"),
        "{seen}"
    );

    let told = report(&narrow, look);
    let result = &told["execute"]["structured"]["result"];
    assert_eq!(result["globals"], json!([]), "{told}");
    for text in [result["found"].to_string(), told["search"].to_string()] {
        for name in hidden {
            assert!(!text.contains(name), "`{name}` in {text}");
        }
    }
    // Each name is as undefined as one that never existed.
    for name in hidden {
        let envelope = report(&narrow, &format!("return await {name}.anything({{}});"))["execute"]
            ["structured"]
            .clone();
        assert_eq!(envelope["error"]["code"], "runtime_error", "{envelope}");
        assert_eq!(
            envelope["error"]["message"]
                .as_str()
                .map(|m| m.replace(name, "NAME")),
            Some("Uncaught ReferenceError: NAME is not defined (line 1, column 14)".to_string()),
            "{envelope}"
        );
    }
    // A token of the profile without `--allow` may call all of the profile, and still learns
    // nothing of a source outside it: guessing `outside` reads as guessing `nosuch`.
    let [outside, nosuch] = ["outside", "nosuch"].map(|name| {
        report(&full, &format!("return await {name}.anything({{}});"))["execute"]["structured"]
            ["error"]
            .clone()
    });
    assert_eq!(outside["code"], "runtime_error", "{outside}");
    let renamed: Value = serde_json::from_str(&outside.to_string().replace("outside", "nosuch"))
        .expect("still JSON");
    assert_eq!(renamed, nosuch, "{outside}");
}

/// Regression (review 7): a GET or DELETE without a session id got rmcp's plain-text 400,
/// which a client cannot read as an error.
#[test]
fn a_get_or_delete_without_a_session_gets_a_json_rpc_error_saying_what_to_send() {
    let home = Home::new();
    config(&home);
    let token = create_token(&home, &["t"]);
    let hub = HttpHub::start(&home, &[]);
    let bearer = format!("Bearer {token}");
    for method in ["GET", "DELETE"] {
        let headers = [
            ("Authorization", bearer.as_str()),
            ("Accept", "text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let reply = send(&hub, method, &headers, "", false);
        assert!(
            header(&reply, "content-type").is_some_and(|t| t.starts_with("application/json")),
            "{method}: {}",
            reply.head
        );
        assert_invalid_request(&reply, &["`Mcp-Session-Id`"]);
    }
}
