//! Logs of the real binary: `--log-format json` gives one JSON object per line, every line the
//! hub writes for a request carries that request's id (and a script's lines its run id), lines
//! outside requests carry the process's id, and no line carries a script or an argument. Also
//! the text format, bad `--log-format` values, and `--otel-endpoint` (an OTLP POST reaching a
//! local receiver in builds with the `otel` feature, a clear error in builds without it).

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{everything_js, free_port, json_report, python_peer, repo};
use crate::hub_http::HttpHub;
use crate::raw::Raw;
use crate::support::{Home, Run};

const SCRIPT_MARKER: &str = "SCRIPT-TEXT-MARKER-4417";
const ARGUMENT_MARKER: &str = "ARGUMENT-MARKER-8812";

fn everything_only(home: &Home) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[policy]\ndefault = \"allow\"\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
}

/// Every line of `text` as JSON; panics on the first line that is not.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}\n\nall:\n{text}"))
        })
        .collect()
}

fn request_id(line: &Value) -> &str {
    line["request_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a line without a request id: {line}"))
}

/// The first span's field, where the hub's `request` span keeps the method and tool.
fn request_field<'a>(line: &'a Value, name: &str) -> &'a Value {
    &line["spans"][0][name]
}

/// The script the clients run: its text and its argument must never reach a log line.
fn marked_script() -> String {
    format!(
        "const note = \"{SCRIPT_MARKER}\";\nreturn await everything.echo({{ message: \"{ARGUMENT_MARKER}\" }});"
    )
}

/// Checks what every JSON log of a hub must hold, and returns the lines of each request by its
/// id: every line is JSON with a request id; lines outside requests share the process's id
/// (`hub-<pid>`); each request's lines start with "request received" and end with "request
/// finished", so no two requests share an id; and `forbidden` appears nowhere.
fn hub_requests<'a>(
    text: &str,
    lines: &'a [Value],
    forbidden: &[&str],
) -> BTreeMap<&'a str, Vec<&'a Value>> {
    for needle in forbidden {
        assert!(
            !text.contains(needle),
            "the log carries `{needle}`:\n{text}"
        );
    }
    for line in lines {
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line[key].is_string(), "no `{key}`: {line}");
        }
    }
    let mut requests: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    let mut process_ids = Vec::new();
    for line in lines {
        let id = request_id(line);
        if id.starts_with("req_") {
            requests.entry(id).or_default().push(line);
        } else {
            process_ids.push(id);
        }
    }
    assert!(
        !process_ids.is_empty(),
        "start-up writes lines of its own:\n{text}"
    );
    process_ids.sort_unstable();
    process_ids.dedup();
    assert_eq!(process_ids.len(), 1, "{process_ids:?}");
    let pid = process_ids[0]
        .strip_prefix("hub-")
        .unwrap_or_else(|| panic!("the process id is `hub-<pid>`: {}", process_ids[0]));
    assert!(pid.parse::<u32>().is_ok(), "{pid}");

    for (id, group) in &requests {
        let messages: Vec<&str> = group
            .iter()
            .map(|line| line["message"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            messages.first(),
            Some(&"request received"),
            "{id}: {messages:?}"
        );
        assert_eq!(
            messages.last(),
            Some(&"request finished"),
            "{id}: {messages:?}"
        );
        let received = messages.iter().filter(|m| **m == "request received");
        assert_eq!(received.count(), 1, "{id}: {messages:?}");
        assert!(
            group
                .iter()
                .all(|line| request_field(line, "request_id") == *id)
        );
        let finished = group.last().expect("a line");
        assert!(finished["fields"]["duration_ms"].is_u64(), "{finished}");
    }
    requests
}

/// The ids of the requests whose first line has `name` = `value` in the request span.
fn requests_with<'a>(
    requests: &BTreeMap<&'a str, Vec<&Value>>,
    name: &str,
    value: &str,
) -> Vec<&'a str> {
    requests
        .iter()
        .filter(|(_, group)| request_field(group[0], name) == value)
        .map(|(id, _)| *id)
        .collect()
}

/// From the moment the run has its id, every line of the execute carries it, down to the
/// upstream call made on another thread and task; "request received" comes before that.
fn check_execute(execute: &[&Value], run_id: &str) {
    assert!(execute[0].get("run_id").is_none(), "{}", execute[0]);
    let first_in_run = execute
        .iter()
        .position(|line| line.get("run_id").is_some())
        .unwrap_or_else(|| panic!("no line of the execute has a run id: {execute:#?}"));
    for line in &execute[first_in_run..] {
        assert_eq!(line["run_id"], run_id, "{line}");
    }
    let upstream: Vec<&&Value> = execute
        .iter()
        .filter(|line| line["message"] == "upstream call finished")
        .collect();
    assert_eq!(upstream.len(), 1, "{execute:#?}");
    assert_eq!(upstream[0]["fields"]["source"], "everything");
    assert_eq!(upstream[0]["fields"]["tool"], "echo");
    assert_eq!(upstream[0]["fields"]["outcome"], "ok");
    let finished = execute.last().expect("a line");
    assert_eq!(finished["fields"]["outcome"], "ok", "{finished}");
    assert_eq!(request_field(finished, "run_status"), "completed");
    assert_eq!(
        request_field(finished, "jsonrpc_id")
            .as_str()
            .map(str::is_empty),
        Some(false)
    );
}

#[test]
fn json_logs_tag_every_line_with_its_request_and_run_and_never_carry_scripts_or_arguments() {
    let home = Home::new();
    everything_only(&home);
    let log = home.path().join("hub.stderr");
    let script = marked_script();
    let report = json_report(
        python_peer("logging_client.py")
            .arg("legacy")
            .arg(&log)
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_capabilities"))
            .args(["--log-format", "json", "hub", "serve"])
            .env("CAPABILITIES_HOME", home.path())
            .env("CAPABILITIES_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("CAPABILITIES_CONFIG")
            .env_remove("CAPABILITIES_LOG_FORMAT"),
    );
    assert!(
        report["search"]
            .as_str()
            .is_some_and(|s| s.contains("everything.echo")),
        "{report}"
    );
    let envelope = &report["execute"];
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(envelope["result"], format!("Echo: {ARGUMENT_MARKER}"));
    let run_id = envelope["runId"].as_str().expect("a run id");

    let text = std::fs::read_to_string(&log).expect("the hub's stderr");
    let lines = json_lines(&text);
    // A bare `info` is the hub's access log, not rmcp's own lines (peer info as Rust structs).
    assert!(
        lines
            .iter()
            .all(|line| !line["target"].as_str().unwrap_or("").starts_with("rmcp")),
        "{text}"
    );
    let requests = hub_requests(&text, &lines, &[SCRIPT_MARKER, ARGUMENT_MARKER, &script]);
    assert_eq!(
        requests_with(&requests, "method", "initialize").len(),
        1,
        "{requests:#?}"
    );
    let searches = requests_with(&requests, "tool", "search");
    let executes = requests_with(&requests, "tool", "execute");
    assert!(!searches.is_empty(), "{requests:#?}");
    assert_eq!(executes.len(), 1, "{requests:#?}");
    assert!(!searches.contains(&executes[0]));
    check_execute(&requests[executes[0]], run_id);
}

#[test]
fn json_logs_of_the_http_hub_tag_requests_too_and_never_carry_the_token() {
    let home = Home::new();
    everything_only(&home);
    let token = home
        .run(&["token", "create", "logs"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let log = home.path().join("hub.stderr");
    let mut command = home.command(&["--log-format", "json", "hub", "serve", "--http", &address]);
    command
        .env("CAPABILITIES_LOG", "info")
        .stderr(std::fs::File::create(&log).expect("a log file"));
    let hub = HttpHub::spawn(command, port);
    let script = marked_script();
    let report = json_report(python_peer("hub_http_client.py").arg(hub.url()).args([
        "2026-07-28",
        &token,
        &script,
    ]));
    // Stopped before its log is read.
    drop(hub);
    let envelope = &report["execute"]["structured"];
    assert_eq!(envelope["status"], "completed", "{report}");
    let run_id = envelope["runId"].as_str().expect("a run id");

    let text = std::fs::read_to_string(&log).expect("the hub's stderr");
    let lines = json_lines(&text);
    assert!(
        lines[0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("serving MCP at http://{address}/mcp"))),
        "{}",
        lines[0]
    );
    let requests = hub_requests(&text, &lines, &[SCRIPT_MARKER, ARGUMENT_MARKER, &token]);
    assert!(
        !requests_with(&requests, "method", "tools/list").is_empty(),
        "{requests:#?}"
    );
    let executes = requests_with(&requests, "tool", "execute");
    assert_eq!(executes.len(), 1, "{requests:#?}");
    check_execute(&requests[executes[0]], run_id);
}

/// Starts `command` (a `hub serve`), initializes, lists the tools, closes stdin, and returns
/// the hub's pid and, once it has exited, what it wrote to stderr.
fn list_tools_and_exit(command: Command) -> (u32, Run) {
    let mut hub = Raw::spawn_keeping_stderr(command);
    hub.initialize("2025-06-18");
    let listed = hub.request(1, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["name"], "search", "{listed}");
    let pid = hub.child.id();
    (pid, hub.exit())
}

#[test]
fn text_logs_show_the_request_span_and_json_can_be_chosen_from_the_environment() {
    let home = Home::new();
    // No sources: the hub warns about that at start-up, outside any request.
    home.write_config("");

    let mut command = home.command(&["hub", "serve"]);
    command.env("CAPABILITIES_LOG", "info");
    let (_, run) = list_tools_and_exit(command);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.lines().all(|line| !line.starts_with('{')),
        "{}",
        run.stderr
    );
    let received: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains("request received"))
        .collect();
    assert_eq!(received.len(), 2, "{}", run.stderr);
    assert!(
        received[1].contains("request{request_id=req_")
            && received[1].contains("method=tools/list"),
        "{}",
        received[1]
    );
    assert!(
        run.stderr.contains("no sources are configured"),
        "{}",
        run.stderr
    );

    let mut command = home.command(&["hub", "serve"]);
    command
        .env("CAPABILITIES_LOG", "info")
        .env("CAPABILITIES_LOG_FORMAT", "json");
    let (pid, run) = list_tools_and_exit(command);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stderr);
    let warning = lines
        .iter()
        .find(|line| {
            line["message"]
                .as_str()
                .is_some_and(|m| m.contains("no sources are configured"))
        })
        .unwrap_or_else(|| panic!("the start-up warning:\n{}", run.stderr));
    assert_eq!(warning["level"], "WARN");
    assert_eq!(warning["request_id"], format!("hub-{pid}"));
    let list: Vec<&Value> = lines
        .iter()
        .filter(|line| request_field(line, "method") == "tools/list")
        .collect();
    assert_eq!(list.len(), 2, "{}", run.stderr);
    assert_eq!(request_id(list[0]), request_id(list[1]));
    assert_eq!(list[1]["fields"]["outcome"], "ok");
}

#[test]
fn a_bad_log_format_is_a_usage_error_that_names_the_choices() {
    let home = Home::new();
    home.write_config("");
    let run = home.run(&["--log-format", "xml", "search", "x"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("invalid value 'xml' for '--log-format <FORMAT>'")
            && run.stderr.contains("[possible values: text, json]"),
        "{}",
        run.stderr
    );

    let run = Run::of(
        home.command(&["search", "x"])
            .env("CAPABILITIES_LOG_FORMAT", "yaml"),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("invalid value 'yaml'"),
        "{}",
        run.stderr
    );
}

#[test]
fn json_logs_blank_a_stored_secret_that_an_upstream_echoes() {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("random bytes");
    let value: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let value = format!("canary-{value}");
    let sha: String = Sha256::digest(value.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let home = Home::new();
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[policy]\ndefault = \"allow\"\n\n[sources.local]\ncommand = {}\nargs = [{}]\nenv = {{ CANARY_TOKEN = \"${{secret:canary}}\", CANARY_SHA256 = \"{sha}\" }}\n",
        serde_json::to_string(&repo().join(".venv/bin/python")).unwrap(),
        serde_json::to_string(&repo().join("tests/peers/canary_server.py")).unwrap(),
    ));
    let with_stdin = |args: &[&str], input: &str, log: &[(&str, &str)]| {
        let mut command = home.command(args);
        command
            .env("CAPABILITIES_PASSPHRASE", "correct horse battery staple")
            // The file store, never a keychain the machine may have.
            .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
            .envs(log.iter().copied());
        Run::with_stdin(&mut command, input)
    };
    with_stdin(&["credential", "set", "canary"], &value, &[]).ok();
    // The upstream fails with the secret in its error, as a tool error and as a protocol
    // error; rmcp logs both raw messages at trace level.
    let script = r#"
        const out = [];
        for (const kind of ["tool", "protocol"]) {
            try { await local.leak({ kind }) } catch (e) { out.push(e.code) }
        }
        return out;
    "#;
    let run = with_stdin(
        &["--log-format", "json", "exec", "--json", "-"],
        script,
        &[("CAPABILITIES_LOG", "trace")],
    )
    .ok();
    let envelope: Value = serde_json::from_str(&run.stdout).expect("an envelope");
    assert_eq!(
        envelope["result"],
        json!(["tool_error", "upstream_error"]),
        "{envelope}"
    );
    assert!(
        !run.stderr.contains(&value),
        "the secret is in the JSON log:\n{}",
        run.stderr
    );
    let lines = json_lines(&run.stderr);
    // The echoed secret reached the log (rmcp's raw messages at trace) and was blanked there.
    let blanked = lines
        .iter()
        .filter(|line| line.to_string().contains("rejected token •••"))
        .count();
    assert!(blanked > 0, "{}", run.stderr);
}

#[test]
fn the_error_that_ends_a_command_is_a_json_line_in_the_json_format() {
    let home = Home::new();
    home.write_config("");
    let run = home.run(&["--log-format", "json", "search", "x"]).fails();
    let lines = json_lines(&run.stderr);
    let last = lines.last().expect("a line");
    assert_eq!(last["level"], "ERROR", "{last}");
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("no sources are configured")),
        "{last}"
    );
    let run = home.run(&["search", "x"]).fails();
    assert!(
        run.stderr.starts_with("error: no sources are configured"),
        "{}",
        run.stderr
    );
}

#[cfg(not(feature = "otel"))]
#[test]
fn otel_endpoint_without_the_otel_feature_says_how_to_build_it() {
    let home = Home::new();
    home.write_config("");
    let run = home
        .run(&["--otel-endpoint", "http://127.0.0.1:4318", "search", "x"])
        .fails();
    assert!(
        run.stderr
            .contains("built without it (the `otel` cargo feature)")
            && run
                .stderr
                .contains("cargo install --locked --path . --features otel"),
        "{}",
        run.stderr
    );
    // The standard variable is meant for every program; a build without export ignores it.
    let run = Run::of(
        home.command(&["source", "list"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
    );
    assert!(!run.stderr.contains("otel"), "{}", run.stderr);
}

/// One HTTP request a collector received.
#[cfg(feature = "otel")]
struct Posted {
    head: String,
    body: Vec<u8>,
}

/// A one-connection-at-a-time HTTP receiver standing in for an OpenTelemetry collector: it
/// answers 200 to everything and hands each request to the test.
#[cfg(feature = "otel")]
fn collector() -> (u16, std::sync::mpsc::Receiver<Posted>) {
    use std::io::{BufRead, BufReader, Read, Write};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let port = listener.local_addr().expect("its address").port();
    let (send, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let length = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let _ = reader.get_mut().write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            if send.send(Posted { head, body }).is_err() {
                break;
            }
        }
    });
    (port, received)
}

#[cfg(feature = "otel")]
#[test]
fn otel_export_posts_the_request_spans_to_the_collector_before_exit() {
    let contains = |body: &[u8], needle: &str| {
        body.windows(needle.len())
            .any(|window| window == needle.as_bytes())
    };
    let home = Home::new();
    home.write_config("");
    let (port, posted) = collector();
    let endpoint = format!("http://127.0.0.1:{port}");

    // The flag, and then the standard variable, name the collector.
    for by_flag in [true, false] {
        let mut command = if by_flag {
            home.command(&[
                "--otel-endpoint",
                &endpoint,
                "--log-format",
                "json",
                "hub",
                "serve",
            ])
        } else {
            let mut command = home.command(&["--log-format", "json", "hub", "serve"]);
            command.env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
            command
        };
        command.env("CAPABILITIES_LOG", "info");
        let (_, run) = list_tools_and_exit(command);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let lines = json_lines(&run.stderr);
        let list = lines
            .iter()
            .find(|line| request_field(line, "method") == "tools/list")
            .unwrap_or_else(|| panic!("a tools/list line:\n{}", run.stderr));
        let id = request_id(list);

        // Spans are batched; the hub sends what it holds as it exits.
        let post = posted
            .recv_timeout(crate::raw::ANSWER_BOUND)
            .unwrap_or_else(|_| panic!("no OTLP request arrived:\n{}", run.stderr));
        assert!(post.head.starts_with("POST /v1/traces "), "{}", post.head);
        assert!(
            post.head
                .to_ascii_lowercase()
                .contains("content-type: application/x-protobuf"),
            "{}",
            post.head
        );
        for needle in [id, "request_id", "tools/list", "initialize", "capabilities"] {
            assert!(contains(&post.body, needle), "the spans lack `{needle}`");
        }
    }
}
