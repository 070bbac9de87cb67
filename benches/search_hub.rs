//! Search as an agent feels it: `capabilities hub serve` with 10,000 tools (the 94 recorded
//! servers of the search evaluation set, repeated under new namespaces as `benches/support/
//! synthetic.rs` does), each source a real MCP server process (this binary, run as
//! `search_hub serve FILE`, answering `tools/list` with the recorded tools), and the hub spoken to
//! over stdio by a real client. Times `search` round trips for every request of the evaluation
//! set and for generic requests, and reads the hub's resident memory. Prints a markdown section
//! and writes it to `target/search-hub-report.md`, which `benches/report.rs` appends.
//! `cargo bench --bench search_hub`; `SEARCH_HUB_TOOLS` changes the size.

#[path = "support/peer.rs"]
#[allow(dead_code)] // Each benchmark uses part of the peer; `execute` is not searched here.
mod peer;
#[path = "support/synthetic.rs"]
#[allow(dead_code)] // The other benchmarks use the rest of the synthetic catalogue.
mod synthetic;

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use capabilities::catalog::fixtures::eval_catalog_dir;
use serde_json::{Value, json};

use peer::Peer;
use synthetic::Recorded;

const DEFAULT_TOOLS: usize = 10_000;
/// How long the connected hub may take before every source has listed its tools.
const READY_BOUND: Duration = Duration::from_secs(300);
/// How many times the whole evaluation set is searched in the timed phase.
const PASSES: usize = 3;
/// Requests that match a large share of any catalogue: the slowest kind to rank.
const GENERIC: &[&str] = &[
    "get user profile",
    "list",
    "get",
    "create a new item",
    "search",
    "delete it",
    "update the status",
    "list all the things I have",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve") {
        let file = args.get(2).unwrap_or_else(|| panic!("serve needs a file"));
        serve(Path::new(file));
        return;
    }
    let size = std::env::var("SEARCH_HUB_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TOOLS);
    let section = measure(size);
    println!("{section}");
    let path = target_dir().join("search-hub-report.md");
    std::fs::write(&path, &section).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    eprintln!("wrote {}", path.display());
}

/// A minimal MCP server over stdio: `initialize`, `tools/list` (every tool of `file` at once),
/// `ping`, "method not found" for anything else asked, nothing for notifications.
fn serve(file: &Path) {
    let tools: Value = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| panic!("{}: not a tool list", file.display()));
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines().map_while(Result::ok) {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "recorded", "version": "1" },
            }),
            Some("tools/list") => json!({ "tools": tools }),
            Some("ping") => json!({}),
            // Unknown methods (the 2026 `server/discover` among them) are refused, so the hub
            // falls back to `initialize` as with any 2025 server.
            _ => Value::Null,
        };
        let answer = if result.is_null() {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Method not found" } })
        } else {
            json!({ "jsonrpc": "2.0", "id": id, "result": result })
        };
        if writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

fn measure(size: usize) -> String {
    let recorded = Recorded::load_from(&eval_catalog_dir());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let me = std::env::current_exe().unwrap_or_else(|e| panic!("own path: {e}"));
    let me = serde_json::to_string(&me.display().to_string()).unwrap_or_default();
    let mut config = String::new();
    let copies = recorded.copies(size);
    for copy in &copies {
        let file = dir.path().join(format!("{}.json", copy.namespace));
        let tools = &recorded.servers[copy.server].tools[..copy.tools];
        let text = serde_json::to_string(tools).unwrap_or_default();
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let file = serde_json::to_string(&file.display().to_string()).unwrap_or_default();
        let _ = write!(
            config,
            "[sources.{}]\ncommand = {me}\nargs = [\"serve\", {file}]\n\n",
            source_name(&copy.namespace)
        );
    }
    config.push_str("[policy]\ndefault = \"allow\"\ndestructive = \"allow\"\n");
    std::fs::write(dir.path().join("config.toml"), config)
        .unwrap_or_else(|e| panic!("config: {e}"));

    let mut command = Command::new(env!("CARGO_BIN_EXE_capabilities"));
    command
        .args(["hub", "serve"])
        .env("CAPABILITIES_HOME", dir.path())
        .env_remove("CAPABILITIES_CONFIG")
        .env_remove("CAPABILITIES_LOG");
    let started = Instant::now();
    let mut hub = Peer::spawn(command);
    hub.initialize();
    wait_until_listed(&mut hub);
    let ready = started.elapsed();

    let requests = synthetic::queries_in(&eval_catalog_dir().join("../requests.json"));
    // One untimed pass: first answers build per-namespace TypeScript models and warm caches.
    for query in &requests {
        search(&mut hub, query);
    }
    let mut all = Vec::new();
    let mut generic = Vec::new();
    for _ in 0..PASSES {
        for query in &requests {
            all.push(search(&mut hub, query));
        }
        for query in GENERIC {
            let took = search(&mut hub, query);
            generic.push(took);
            all.push(took);
        }
    }
    let rss = resident_kib(hub.id());
    hub.close();
    // The same catalogue indexed in this process, for the index's own share of that memory.
    let index_bytes = recorded.index(size).heap_bytes();
    all.sort();
    generic.sort();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Search through the hub ({size} tools, {} sources)\n",
        copies.len()
    );
    let _ = writeln!(
        out,
        "`cargo bench --bench search_hub`: `hub serve` over stdio with {} recorded-tool servers as \
         sources; every request of the search evaluation set ({}) and {} generic ones, {PASSES} \
         passes after one untimed pass, each a `tools/call` of `search` timed at the client.\n",
        copies.len(),
        requests.len(),
        GENERIC.len()
    );
    let _ = writeln!(
        out,
        "| requests | timed | p50 | p99 | max |\n|---|---|---|---|---|"
    );
    let _ = writeln!(out, "{}", row("every request", &all));
    let _ = writeln!(out, "{}", row("generic requests", &generic));
    let _ = writeln!(
        out,
        "\nSearch index of these {size} tools: {:.1} MiB (`SearchIndex::heap_bytes`, from its \
         containers' capacities). Hub resident memory with the catalogue loaded: {}; every \
         source listed {:.1} s after start.",
        index_bytes as f64 / (1024.0 * 1024.0),
        rss.map_or("unknown".to_string(), |kib| format!(
            "{:.1} MiB",
            kib as f64 / 1024.0
        )),
        ready.as_secs_f64()
    );
    out
}

/// A recorded server's name as a source name, which must be a JavaScript identifier:
/// `aws-cloudwatch` → `awsCloudwatch`.
fn source_name(namespace: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in namespace.chars() {
        if ch == '-' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Searches until no source is still connecting, so timed searches see every tool.
fn wait_until_listed(hub: &mut Peer) {
    let deadline = Instant::now() + READY_BOUND;
    loop {
        let answer = hub.call("search", json!({ "query": "list" }));
        let text = answer.to_string();
        if !text.contains("still connecting") && !text.contains("Not searched") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "sources still connecting after {READY_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn search(hub: &mut Peer, query: &str) -> Duration {
    let started = Instant::now();
    let answer = hub.call("search", json!({ "query": query }));
    let took = started.elapsed();
    assert!(answer.get("result").is_some(), "search failed: {answer}");
    took
}

fn row(label: &str, sorted: &[Duration]) -> String {
    let at = |p: f64| {
        let i = ((sorted.len().saturating_sub(1)) as f64 * p).round() as usize;
        sorted.get(i).copied().unwrap_or_default()
    };
    format!(
        "| {label} | {} | {} | {} | {} |",
        sorted.len(),
        millis(at(0.5)),
        millis(at(0.99)),
        millis(sorted.last().copied().unwrap_or_default())
    )
}

fn millis(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// VmRSS of a process, on Linux.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}
