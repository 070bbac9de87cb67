//! Whole-process times of the commands a person types, as a person waits for them: `capabilities
//! exec` of `return 1` and `capabilities search` with 0, 2 and 10 configured sources, each a
//! real process from start to exit. The sources are recorded servers of
//! `tests/fixtures/catalog` served by the shared catalogue's replay server (a Python stdio MCP
//! server, `../shared/catalog/replay_server.py`, or `CAPABILITIES_REPLAY_SERVER`), their
//! listings cached first, as after a first use: neither command should start any of them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The replay server, where this checkout finds one.
fn replay_server() -> Option<PathBuf> {
    let path = std::env::var_os("CAPABILITIES_REPLAY_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../shared/catalog/replay_server.py"));
    path.exists().then_some(path)
}

/// A private `CAPABILITIES_HOME` with `count` recorded servers as sources, listed once so their
/// listings are cached.
fn home(count: usize, replay: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let python = manifest_dir().join(".venv/bin/python");
    let mut recorded: Vec<PathBuf> =
        std::fs::read_dir(manifest_dir().join("tests/fixtures/catalog"))
            .unwrap_or_else(|e| panic!("the recorded catalogue: {e}"))
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .collect();
    recorded.sort();
    let quoted = |p: &Path| serde_json::to_string(&p.display().to_string()).unwrap_or_default();
    let mut config = String::new();
    for (i, server) in recorded.iter().take(count).enumerate() {
        config.push_str(&format!(
            "[sources.s{i}]\ncommand = {}\nargs = [{}, {}]\nconnect_timeout_secs = 120\n\n",
            quoted(&python),
            quoted(replay),
            quoted(server)
        ));
    }
    std::fs::write(dir.path().join("config.toml"), config)
        .unwrap_or_else(|e| panic!("config: {e}"));
    if count > 0 {
        let listed = capabilities(dir.path(), &["source", "refresh"], None);
        assert!(
            listed.status.success(),
            "source refresh: {}",
            String::from_utf8_lossy(&listed.stderr)
        );
    }
    dir
}

/// Runs `capabilities ARGS` to its end, with `input` on stdin.
fn capabilities(home: &Path, args: &[&str], input: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_capabilities"))
        .args(args)
        .env("CAPABILITIES_HOME", home)
        .env_remove("CAPABILITIES_CONFIG")
        .env_remove("CAPABILITIES_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn capabilities: {e}"));
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        stdin
            .write_all(input.as_bytes())
            .unwrap_or_else(|e| panic!("write stdin: {e}"));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait for capabilities: {e}"))
}

fn whole_process(c: &mut Criterion) {
    let Some(replay) = replay_server() else {
        eprintln!(
            "cli: skipped: no replay server at ../shared/catalog/replay_server.py; set CAPABILITIES_REPLAY_SERVER"
        );
        return;
    };
    let mut group = c.benchmark_group("cli");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    for count in [0, 2, 10] {
        let dir = home(count, &replay);
        group.bench_function(format!("exec 'return 1', {count} sources"), |b| {
            b.iter(|| {
                let run = capabilities(dir.path(), &["exec", "-"], Some("return 1"));
                assert!(
                    run.status.success() && run.stdout.starts_with(b"1"),
                    "exec: {}",
                    String::from_utf8_lossy(&run.stderr)
                );
            })
        });
        group.bench_function(format!("search, {count} sources"), |b| {
            b.iter(|| {
                // With no source it is the "no sources are configured" error: still a whole
                // process, and the floor the others stand on.
                let run = capabilities(dir.path(), &["search", "create an issue"], None);
                assert!(
                    count == 0 || run.status.code() != Some(2),
                    "search: {}",
                    String::from_utf8_lossy(&run.stderr)
                );
            })
        });
    }
    group.finish();
}

criterion_group!(cli, whole_process);
criterion_main!(cli);
