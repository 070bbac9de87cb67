//! `capabilities::sources` against real upstreams: server-everything over stdio and Streamable
//! HTTP, the Python `mcp-server-time`, and deliberately broken sources started beside them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use capabilities::config::template::Template;
use capabilities::config::{ConnectionSettings, Pacing, SourceSettings, Transport};
use capabilities::credentials::{MASK, NoSecretStore, SecretLookup};
use capabilities::sources::{SourceError, SourceEvent, SourceStatus, Sources};
use serde_json::{Map, Value, json};

use crate::common::{HttpEverything, everything_js, mcp_server_time};

/// Short so broken sources fail fast; real ones start well within it.
const CONNECT: Duration = Duration::from_secs(3);
/// Generous: only reached when something is wrong.
const SETTLE: Duration = Duration::from_secs(60);

fn connection(name: &str, is_default: bool) -> ConnectionSettings {
    ConnectionSettings {
        name: name.into(),
        is_default,
        env: BTreeMap::new(),
        headers: BTreeMap::new(),
        auth: BTreeMap::new(),
        oauth: None,
    }
}

fn source(name: &str, transport: Transport) -> SourceSettings {
    SourceSettings {
        name: name.into(),
        transport,
        connections: vec![connection("default", true)],
        connect_timeout: CONNECT,
        request_timeout: Duration::from_secs(30),
        enabled: true,
        env_credentials: Arc::from([]),
    }
}

fn stdio(name: &str, command: &str, args: &[&str]) -> SourceSettings {
    let transport = Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        cwd: None,
    };
    source(name, transport)
}

fn everything_stdio(name: &str) -> SourceSettings {
    // server-everything starts slower than the fault tests' connect timeout on a busy machine.
    let mut settings = stdio(name, "node", &[&everything_js(), "stdio"]);
    settings.connect_timeout = Duration::from_secs(30);
    settings
}

/// A Python server can take well over the fault tests' connect timeout to start on a loaded
/// 2-core machine.
fn slow_to_start(mut settings: SourceSettings) -> SourceSettings {
    settings.connect_timeout = SETTLE;
    settings
}

fn http(name: &str, url: &str) -> SourceSettings {
    source(name, Transport::Http { url: url.into() })
}

fn sh(name: &str, script: &str) -> SourceSettings {
    stdio(name, "sh", &["-c", script])
}

fn no_secrets() -> Arc<dyn SecretLookup> {
    Arc::new(NoSecretStore)
}

fn status_of(statuses: &[(String, SourceStatus)], name: &str) -> SourceStatus {
    statuses
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, status)| status.clone())
        .unwrap_or_else(|| panic!("no status for {name} in {statuses:?}"))
}

fn failure(statuses: &[(String, SourceStatus)], name: &str) -> String {
    match status_of(statuses, name) {
        SourceStatus::Failed { error } => error,
        other => panic!("{name} should have failed, but is {other:?}"),
    }
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// The text of the first content block of a CallToolResult.
fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result}"))
}

async fn echo(sources: &Sources, name: &str, connection: Option<&str>) -> String {
    let result = sources
        .call_tool(
            name,
            connection,
            "echo",
            args(json!({ "message": "hello from the hub" })),
        )
        .await
        .unwrap_or_else(|error| panic!("echo on {name}: {error}"));
    first_text(&result).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn real_servers_over_stdio_and_http_list_and_call_tools() {
    let server = HttpEverything::start().await;
    let sources = Sources::start(
        vec![
            everything_stdio("everything"),
            http("remote", &server.url),
            slow_to_start(stdio(
                "time",
                &mcp_server_time(),
                &["--local-timezone", "Etc/UTC"],
            )),
        ],
        no_secrets(),
    );
    let statuses = sources.wait_settled(SETTLE).await;
    for (name, status) in &statuses {
        assert!(status.is_ready(), "{name} is not ready: {status}");
    }
    match status_of(&statuses, "time") {
        SourceStatus::Ready {
            server_name,
            tool_count,
            ..
        } => {
            assert_eq!(server_name.as_deref(), Some("mcp-time"));
            assert!(
                tool_count >= 2,
                "mcp-server-time lists get_current_time and convert_time"
            );
        }
        other => panic!("time: {other:?}"),
    }

    for name in ["everything", "remote"] {
        let tools = sources.list_tools(name).await.expect("tools/list");
        let echo_tool = tools
            .iter()
            .find(|t| t.name == "echo")
            .expect("server-everything has echo");
        assert_eq!(echo_tool.input_schema["type"], "object");
        assert!(echo_tool.input_schema["properties"]["message"].is_object());
        assert!(
            tools.iter().any(|t| t.annotations.read_only_hint.is_some()),
            "annotations survive"
        );
        assert_eq!(echo(&sources, name, None).await, "Echo: hello from the hub");
    }

    let tools = sources
        .list_tools("time")
        .await
        .expect("tools/list on time");
    assert!(
        tools.iter().any(|t| t.name == "get_current_time"),
        "{tools:?}"
    );
    let now = sources
        .call_tool(
            "time",
            None,
            "get_current_time",
            args(json!({ "timezone": "Etc/UTC" })),
        )
        .await
        .expect("get_current_time");
    assert!(first_text(&now).contains("Etc/UTC"), "{now}");

    // The upstream's answer is relayed as it is, errors included.
    let unknown = sources
        .call_tool("everything", None, "no-such-tool", Map::new())
        .await
        .expect("server-everything answers an unknown tool with a result");
    assert_eq!(unknown["isError"], true, "{unknown}");
    assert!(first_text(&unknown).contains("no-such-tool"), "{unknown}");
    sources.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_sources_fail_on_their_own_while_a_real_one_works() {
    let mut unset_env = sh("needs_env", "exec sleep 600");
    unset_env.connections[0].env.insert(
        "TOKEN".into(),
        Template::parse("${env:CAPABILITIES_TEST_SURELY_UNSET}").expect("valid"),
    );
    let sources = Sources::start(
        vec![
            everything_stdio("good"),
            stdio("hangs", "sleep", &["600"]),
            // Like `npx` waiting on the network: a note on stderr, no answer, and exit 1 when
            // its stdin closes, which is what giving up on it does.
            sh(
                "hangs_then_exits",
                "echo 'npm notice: a new version is out' >&2; cat >/dev/null; exit 1",
            ),
            sh("exits", "echo 'fatal: GITHUB_TOKEN is not set' >&2; exit 1"),
            sh(
                "noisy",
                "echo 'Server listening, press Ctrl-C to stop'; exec sleep 600",
            ),
            http("unreachable", "http://127.0.0.1:1/mcp"),
            stdio("missing", "capabilities-test-no-such-command", &[]),
            stdio(
                "relative",
                ".venv/bin/capabilities-test-no-such-server",
                &[],
            ),
            unset_env,
        ],
        no_secrets(),
    );
    let statuses = sources.wait_settled(SETTLE).await;
    assert!(status_of(&statuses, "good").is_ready(), "{statuses:?}");
    assert_eq!(
        echo(&sources, "good", None).await,
        "Echo: hello from the hub"
    );

    let hangs = failure(&statuses, "hangs");
    assert!(
        hangs.contains("`sleep` did not answer within 3 s"),
        "{hangs}"
    );
    let killed = failure(&statuses, "hangs_then_exits");
    assert!(
        killed.contains("`sh` did not answer within 3 s") && !killed.contains("exited"),
        "{killed}"
    );
    assert!(
        hangs.contains("run its command in a terminal: sleep 600"),
        "{hangs}"
    );

    let exits = failure(&statuses, "exits");
    assert!(
        exits.contains("`sh` exited with status 1 before answering"),
        "{exits}"
    );
    assert!(exits.contains("fatal: GITHUB_TOKEN is not set"), "{exits}");

    let noisy = failure(&statuses, "noisy");
    assert!(noisy.contains("not JSON-RPC"), "{noisy}");
    assert!(
        noisy.contains("Server listening, press Ctrl-C to stop"),
        "{noisy}"
    );

    let unreachable = failure(&statuses, "unreachable");
    assert!(
        unreachable.contains("cannot connect to http://127.0.0.1:1/mcp: connection refused"),
        "{unreachable}"
    );

    let missing = failure(&statuses, "missing");
    assert!(
        missing.contains("`capabilities-test-no-such-command` was not found"),
        "{missing}"
    );

    let relative = failure(&statuses, "relative");
    assert!(
        relative.contains("was not found from the current directory (here, ")
            && relative.contains("put its absolute path in the config"),
        "{relative}"
    );

    let needs_env = failure(&statuses, "needs_env");
    assert!(
        needs_env.contains("CAPABILITIES_TEST_SURELY_UNSET"),
        "{needs_env}"
    );
    assert!(needs_env.contains("source `needs_env`"), "{needs_env}");

    // A request to a failed source says why it failed.
    let error = sources
        .list_tools("exits")
        .await
        .expect_err("failed source");
    assert!(
        error.to_string().contains("fatal: GITHUB_TOKEN is not set"),
        "{error}"
    );
    sources.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_are_lazy_and_unknown_ones_are_named() {
    let mut settings = everything_stdio("everything");
    settings.connections = vec![connection("personal", true), connection("work", false)];
    let sources = Sources::start(vec![settings], no_secrets());
    assert!(sources.wait_settled(SETTLE).await[0].1.is_ready());

    // The non-default connection starts on first use and answers like the default one.
    assert_eq!(
        echo(&sources, "everything", Some("work")).await,
        "Echo: hello from the hub"
    );

    let error = sources
        .call_tool("everything", Some("team"), "echo", Map::new())
        .await
        .expect_err("no such connection");
    assert!(
        matches!(error, SourceError::UnknownConnection { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("personal (default), work"),
        "{error}"
    );

    let error = sources
        .list_tools("nope")
        .await
        .expect_err("no such source");
    assert!(
        error
            .to_string()
            .contains("configured sources are: everything"),
        "{error}"
    );
    sources.shutdown().await;
}

struct Token;

impl SecretLookup for Token {
    fn secret(&self, name: &str) -> Result<String, String> {
        match name {
            "api" => Ok("tok-7f3a9c".into()),
            other => Err(format!("secret `{other}` is not stored")),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_reach_the_upstream_but_never_an_error() {
    // A listener that records the first request's head and then hangs up.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let captured = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut stream, _) = listener.accept().await.expect("a request");
        let mut head = vec![0u8; 16 * 1024];
        let read = stream.read(&mut head).await.expect("read");
        String::from_utf8_lossy(&head[..read]).to_lowercase()
    });
    let mut api = http("api", &format!("http://127.0.0.1:{port}/mcp"));
    api.connections[0].headers.insert(
        "Authorization".into(),
        Template::parse("Bearer ${secret:api}").expect("valid"),
    );
    // A server that prints its token on stderr before dying.
    let mut leaky = sh(
        "leaky",
        "echo \"starting with token $API_TOKEN\" >&2; exit 3",
    );
    leaky.connections[0].env.insert(
        "API_TOKEN".into(),
        Template::parse("${secret:api}").expect("valid"),
    );
    let sources = Sources::start(vec![api, leaky], Arc::new(Token));
    let head = captured.await.expect("captured");
    assert!(head.contains("authorization: bearer tok-7f3a9c"), "{head}");
    let statuses = sources.wait_settled(SETTLE).await;
    let api_error = failure(&statuses, "api");
    assert!(
        !api_error.contains("tok-7f3a9c"),
        "the secret leaked into: {api_error}"
    );
    let leaky_error = failure(&statuses, "leaky");
    assert!(
        leaky_error.contains(&format!("starting with token {MASK}")),
        "{leaky_error}"
    );
    assert!(
        !leaky_error.contains("tok-7f3a9c"),
        "the secret leaked into: {leaky_error}"
    );
    sources.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_source_connects_on_retry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flag = dir.path().join("installed");
    let script = format!(
        "test -f '{}' || {{ echo 'the server is not installed' >&2; exit 1; }}; exec node '{}' stdio",
        flag.display(),
        everything_js()
    );
    let mut settings = sh("flaky", &script);
    settings.connect_timeout = Duration::from_secs(30);
    let sources = Sources::start(vec![settings], no_secrets());
    let error = failure(&sources.wait_settled(SETTLE).await, "flaky");
    assert!(error.contains("the server is not installed"), "{error}");

    std::fs::write(&flag, "").expect("flag");
    sources.retry("flaky").expect("a configured source");
    assert!(sources.wait_settled(SETTLE).await[0].1.is_ready());
    assert_eq!(
        echo(&sources, "flaky", None).await,
        "Echo: hello from the hub"
    );
    sources.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_that_crashes_after_ready_restarts() {
    let sources = Sources::start(vec![everything_stdio("everything")], no_secrets());
    let mut events = sources.subscribe();
    assert!(sources.wait_settled(SETTLE).await[0].1.is_ready());
    let pid = sources.pid("everything").expect("a stdio source has a pid");
    kill_group(pid);

    let mut saw_restarting = false;
    let back = tokio::time::timeout(SETTLE, async {
        loop {
            match events.recv().await {
                Ok(SourceEvent::StatusChanged {
                    status:
                        SourceStatus::Restarting {
                            attempt,
                            last_error,
                        },
                    ..
                }) => {
                    assert_eq!(attempt, 1);
                    assert!(last_error.contains("killed by signal 9"), "{last_error}");
                    saw_restarting = true;
                }
                Ok(SourceEvent::StatusChanged {
                    status: SourceStatus::Ready { .. },
                    ..
                }) if saw_restarting => {
                    return;
                }
                Ok(_) => {}
                Err(error) => panic!("events ended: {error}"),
            }
        }
    })
    .await;
    assert!(
        back.is_ok(),
        "no restart; status is {:?}",
        sources.statuses()
    );
    assert_ne!(
        sources.pid("everything"),
        Some(pid),
        "a new process serves the source"
    );
    assert_eq!(
        echo(&sources, "everything", None).await,
        "Echo: hello from the hub"
    );
    sources.shutdown().await;
}

/// A source whose process forks a long-lived helper (as `npx` runs node), writing the helper's
/// pid to a file.
fn forking_source(pid_file: &std::path::Path) -> SourceSettings {
    let script = format!(
        "sleep 600 & echo $! > '{}'; exec node '{}' stdio",
        pid_file.display(),
        everything_js()
    );
    let mut settings = sh("forks", &script);
    settings.connect_timeout = Duration::from_secs(30);
    settings
}

async fn started_forking_source() -> (Arc<Sources>, u32, u32, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = dir.path().join("helper.pid");
    let sources = Sources::start(vec![forking_source(&pid_file)], no_secrets());
    let statuses = sources.wait_settled(SETTLE).await;
    assert!(statuses[0].1.is_ready(), "{statuses:?}");
    let leader = sources.pid("forks").expect("pid");
    let helper: u32 = std::fs::read_to_string(&pid_file)
        .expect("the helper's pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(alive(leader) && alive(helper));
    (sources, leader, helper, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_leaves_no_child_or_grandchild() {
    let (sources, leader, helper, _dir) = started_forking_source().await;
    sources.shutdown().await;
    assert_gone(leader, helper).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_manager_kills_its_process_groups() {
    let (sources, leader, helper, _dir) = started_forking_source().await;
    drop(sources);
    assert_gone(leader, helper).await;
}

fn kill_group(pgid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// True while the process exists and is not a zombie (a zombie has exited; only its parent has
/// not collected it, and in a container nobody may).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself contain spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Living processes whose process group is `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .is_some_and(|stat| {
                    // Fields after the command: state ppid pgrp …
                    let fields: Vec<&str> = stat
                        .rsplit_once(')')
                        .map(|(_, rest)| rest.split_whitespace().collect())
                        .unwrap_or_default();
                    fields.get(2).and_then(|pgrp| pgrp.parse::<u32>().ok()) == Some(pgid)
                })
        })
        .filter(|pid| alive(*pid))
        .collect()
}

async fn assert_gone(leader: u32, helper: u32) {
    // Killing is asynchronous in the kernel; poll with a bound far above what it takes.
    for _ in 0..100 {
        if !alive(leader) && !alive(helper) && group_members(leader).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "left behind: leader alive {}, helper alive {}, group members {:?}",
        alive(leader),
        alive(helper),
        group_members(leader)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lazy_manager_starts_nothing_until_asked_and_then_one_at_a_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("started");
    let hanging = |name: &str| {
        let mut settings = sh(
            name,
            &format!("echo {name} >> '{}'; exec sleep 600", marker.display()),
        );
        settings.connect_timeout = Duration::from_secs(60);
        settings
    };
    let pacing = Pacing {
        max_starting: 1,
        idle_stop: None,
    };
    let sources = Sources::lazy(
        vec![hanging("a"), hanging("b"), hanging("c")],
        no_secrets(),
        pacing,
    );
    let started = || {
        std::fs::read_to_string(&marker)
            .map(|text| text.lines().count())
            .unwrap_or(0)
    };
    assert_eq!(sources.status("a"), Some(SourceStatus::Idle));
    for name in ["a", "b", "c"] {
        sources.connect(name).expect("a configured source");
    }
    let deadline = std::time::Instant::now() + SETTLE;
    while started() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The first holds the only turn until its connect timeout: the others wait, unstarted.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(started(), 1, "more than one source started at once");
    assert!(matches!(
        sources.connect("nope"),
        Err(SourceError::UnknownSource { .. })
    ));
    sources.shutdown().await;
}
