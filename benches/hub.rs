//! The hub as a client sees it: `capabilities hub serve` and server-everything run as real child
//! processes, spoken to in JSON-RPC lines over their stdio. Measures an empty `execute` round
//! trip, one `everything.echo` call through the hub against calling `echo` on server-everything
//! directly (their ratio is the hub's overhead), and hub start to the first `tools/list` answer
//! with 10 configured sources.

#[path = "support/peer.rs"]
#[allow(dead_code)] // Each benchmark uses part of the peer; `id` is for the search one.
mod peer;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::json;

use peer::{ANSWER_BOUND, Peer};

fn everything_js() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

/// A private `CAPABILITIES_HOME` with `count` copies of server-everything as sources, every
/// tool allowed (the default policy would ask before `echo`).
fn home(count: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let args = serde_json::to_string(&everything_js()).unwrap_or_default();
    let mut config = String::new();
    for i in 0..count {
        let name = if i == 0 {
            "everything".to_string()
        } else {
            format!("everything{}", i + 1)
        };
        config.push_str(&format!(
            "[sources.{name}]\ncommand = \"node\"\nargs = [{args}, \"stdio\"]\n\n"
        ));
    }
    config.push_str("[policy]\ndefault = \"allow\"\ndestructive = \"allow\"\n");
    std::fs::write(dir.path().join("config.toml"), config)
        .unwrap_or_else(|e| panic!("config: {e}"));
    dir
}

fn hub_command(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_capabilities"));
    command
        .args(["hub", "serve"])
        .env("CAPABILITIES_HOME", home)
        .env_remove("CAPABILITIES_CONFIG")
        .env_remove("CAPABILITIES_LOG");
    command
}

fn everything_command() -> Command {
    let mut command = Command::new("node");
    command.args([everything_js(), "stdio".into()]);
    command
}

/// Runs `code` until the hub's source has connected and it completes: the first runs may find
/// server-everything still starting.
fn warm(hub: &mut Peer, code: &str) {
    let deadline = Instant::now() + ANSWER_BOUND;
    loop {
        let answer = hub.call("execute", json!({ "code": code }));
        if answer["result"]["structuredContent"]["status"] == "completed" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the hub never completed {code}: {answer}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

const ECHO_CODE: &str = r#"return await everything.echo({ message: "hello" })"#;

fn round_trips(c: &mut Criterion) {
    let dir = home(1);
    let mut hub = Peer::spawn(hub_command(dir.path()));
    hub.initialize();
    warm(&mut hub, ECHO_CODE);
    let mut direct = Peer::spawn(everything_command());
    direct.initialize();

    let mut group = c.benchmark_group("hub stdio");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("empty execute", |b| b.iter(|| hub.execute("return 1")));
    group.bench_function("echo through the hub", |b| {
        b.iter(|| hub.execute(ECHO_CODE))
    });
    group.bench_function("echo direct", |b| {
        b.iter(|| {
            let answer = direct.call("echo", json!({ "message": "hello" }));
            assert!(answer.get("result").is_some(), "{answer}");
        })
    });
    group.finish();
    hub.close();
    direct.close();
}

fn start_up(c: &mut Criterion) {
    let dir = home(10);
    let mut group = c.benchmark_group("hub start");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("to first tools/list, 10 sources", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                let mut hub = Peer::spawn(hub_command(dir.path()));
                hub.initialize();
                let listed = hub.request("tools/list", json!({}));
                total += started.elapsed();
                assert_eq!(
                    listed["result"]["tools"].as_array().map(Vec::len),
                    Some(3),
                    "{listed}"
                );
                // Shutting ten sources down is not part of start-up.
                hub.close();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(hub, round_trips, start_up);
criterion_main!(hub);
