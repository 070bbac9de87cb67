//! The load benchmark of issue 8: `capabilities hub serve --http` as a real child process, 50
//! concurrent MCP clients over Streamable HTTP calling `execute` with scripts that write to a
//! real Python upstream (tests/peers/counter_server.py, through benches/support/counter_log.py,
//! which logs every write per key at a constant cost). It
//! reports throughput, p50/p99/max latency and the hub's resident memory, writes them to
//! `target/load-report.md`, and exits non-zero only for correctness failures: an execute that
//! did not complete, or a write the upstream lost, counted twice or never got from a client.
//!
//! Load shape: each client runs rounds of [`EXECUTES_PER_ROUND`] executes fired at once over its
//! one session and awaited together, rounds repeating until the phase's time is up, so up to
//! 50 × 20 = 1,000 executes are in flight. Each execute makes [`WRITES_PER_EXECUTE`] sequential
//! `counter.write` calls with keys unique to it. A warm-up phase of the same load comes first
//! (its writes are checked too, but not timed). `LOAD_SECONDS` (default 30) and
//! `LOAD_WARMUP_SECONDS` (default 5) shorten it for a quick pass.
//!
//! The same load runs against each store setup `LOAD_STORES` names (default all three, one
//! after the other): `sqlite` (one hub, its SQLite file), `postgres` (one hub on a PostgreSQL
//! database) and `postgres-2` (two hubs sharing one PostgreSQL database, the clients split
//! between them). PostgreSQL is the server `tests/setup.sh` starts (`CAPABILITIES_TEST_POSTGRES`);
//! each setup gets a new database. The report puts the setups side by side.

// The test support drives the binary with a private home the same way the integration tests do;
// the bench uses only part of it, so the rest is dead here though not in the tests.
#[allow(dead_code)]
#[path = "../tests/it/common.rs"]
mod common;
#[allow(dead_code)]
#[path = "../tests/it/support.rs"]
mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use common::free_port;
use support::{Home, repo_root as repo};

const CLIENTS: usize = 50;
const EXECUTES_PER_ROUND: usize = 20;
const WRITES_PER_EXECUTE: usize = 3;
/// Idle times after the load at which the hub's memory is read again: a short pause, then past
/// tokio's 10 s keep-alive, after which the blocking threads that ran the scripts have exited.
const IDLE: [Duration; 2] = [Duration::from_secs(3), Duration::from_secs(15)];
/// A bound on a cold start (the hub, then Python importing the `mcp` SDK), not a speed check.
const START_BOUND: Duration = Duration::from_secs(60);
/// Resident memory after an idle within this factor of after the warm-up counts as flat.
const FLAT_MARGIN: f64 = 1.10;

type Client = RunningService<RoleClient, ()>;

fn main() -> ExitCode {
    // The clients' reqwest has TLS with no built-in crypto provider; it needs one installed.
    capabilities::tls::install_crypto_provider();
    let warmup = seconds_from_env("LOAD_WARMUP_SECONDS", 5);
    let load = seconds_from_env("LOAD_SECONDS", 30);
    let setups: Vec<Setup> = std::env::var("LOAD_STORES")
        .unwrap_or_else(|_| "sqlite,postgres,postgres-2".into())
        .split(',')
        .map(|name| Setup::parse(name.trim()))
        .collect();
    let mut sections = Vec::new();
    let mut failed = 0;
    for setup in &setups {
        let (outcome, check, log) = run_setup(*setup, warmup, load);
        failed += outcome.errors.values().map(|(n, _)| n).sum::<usize>()
            + check.lost.len()
            + check.duplicated.len()
            + check.unexpected.len();
        if failed > 0 {
            eprintln!(
                "load ({}): correctness failures; the hub's log ends with:",
                setup.label()
            );
            let lines: Vec<&str> = log.lines().collect();
            for line in &lines[lines.len().saturating_sub(40)..] {
                eprintln!("  {line}");
            }
        }
        sections.push((*setup, outcome, check));
    }
    let text = render_all(&sections, load);
    let path = target_dir().join("load-report.md");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("{text}");
    eprintln!("wrote {}", path.display());
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Where the hubs of one setup keep their runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    Sqlite,
    Postgres,
    TwoPostgres,
}

impl Setup {
    fn parse(name: &str) -> Setup {
        match name {
            "sqlite" => Setup::Sqlite,
            "postgres" => Setup::Postgres,
            "postgres-2" => Setup::TwoPostgres,
            other => panic!("LOAD_STORES: `{other}` is not one of sqlite, postgres, postgres-2"),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Setup::Sqlite => "one hub, SQLite",
            Setup::Postgres => "one hub, PostgreSQL",
            Setup::TwoPostgres => "two hubs, one PostgreSQL",
        }
    }

    fn hubs(self) -> usize {
        if self == Setup::TwoPostgres { 2 } else { 1 }
    }
}

/// The key every replica of a PostgreSQL setup shares (32 bytes, base64).
const STATE_KEY: &str = "bG9hZC1iZW5jaC1zdGF0ZS1rZXktMzItYnl0ZXMhISE=";

/// Starts the setup's hubs, drives the load, checks every write; returns the outcome, the write
/// check and the hubs' logs.
fn run_setup(setup: Setup, warmup: Duration, load: Duration) -> (Outcome, WriteCheck, String) {
    let database = (setup != Setup::Sqlite).then(Database::new);
    let shared = tempfile::tempdir().expect("a temporary directory");
    let writes_path = shared.path().join("writes.log");
    let homes: Vec<Home> = (0..setup.hubs())
        .map(|_| {
            let home = Home::new().with_env("CAPABILITIES_STATE_KEY", STATE_KEY);
            write_config(
                &home,
                &writes_path,
                database.as_ref().map(|d| d.url.as_str()),
            );
            home
        })
        .collect();
    let token = homes[0].run(&["token", "create", "load"]).ok().stdout;
    let token = token.trim().to_string();
    let logs: Vec<PathBuf> = homes.iter().map(|h| h.path().join("hub.log")).collect();
    let hubs: Vec<Hub> = homes
        .iter()
        .zip(&logs)
        .map(|(home, log)| start_hub(home, log))
        .collect();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let outcome = runtime.block_on(drive(&hubs, &token, warmup, load));
    drop(hubs);
    let counted = read_counts(&writes_path);
    let check = check_writes(&outcome.sent, &outcome.completed_keys, &counted);
    let log = logs
        .iter()
        .map(|l| std::fs::read_to_string(l).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    (outcome, check, log)
}

/// A database on the test PostgreSQL server for one setup, dropped after it.
struct Database {
    name: String,
    url: String,
}

impl Database {
    fn new() -> Database {
        let admin = std::env::var("CAPABILITIES_TEST_POSTGRES").unwrap_or_else(|_| {
            "postgres://capabilities:capabilities@127.0.0.1:5432/postgres?sslmode=disable".into()
        });
        let name = format!("cap_load_{}", std::process::id());
        let url = admin.replacen("/postgres", &format!("/{name}"), 1);
        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE); CREATE DATABASE {name}");
        admin_sql(&admin, &sql);
        Database { name, url }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let admin = self
            .url
            .replacen(&format!("/{}", self.name), "/postgres", 1);
        admin_sql(
            &admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Runs `sql` on a thread of its own (the blocking client runs its own runtime).
fn admin_sql(url: &str, sql: &str) {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("PostgreSQL at {url} (tests/setup.sh starts it): {e}"));
        // One statement at a time: several in one query run as one transaction, which
        // CREATE DATABASE refuses.
        for statement in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            client
                .batch_execute(statement)
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    })
    .join()
    .expect("the PostgreSQL admin thread");
}

fn seconds_from_env(name: &str, default: u64) -> Duration {
    let seconds = match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}={text:?} is not a number of seconds: {e}")),
        Err(_) => default,
    };
    Duration::from_secs(seconds)
}

/// The counter upstream under the test venv's Python, its `write` allowed so no call waits for
/// an approval (the default policy asks before a tool that is not read-only). `counts` is the
/// upstream's write log.
fn write_config(home: &Home, counts: &Path, store: Option<&str>) {
    let quoted = |path: PathBuf| serde_json::to_string(&path.display().to_string()).expect("JSON");
    let python = repo().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run tests/setup.sh first",
        python.display()
    );
    let store = store
        .map(|url| {
            format!(
                "[store]\nurl = {}\n\n",
                serde_json::to_string(url).expect("JSON")
            )
        })
        .unwrap_or_default();
    home.write_config(&format!(
        "{store}[sources.counter]\ncommand = {}\nargs = [{}]\nenv = {{ COUNTER_FILE = {} }}\n\n\
         [[policy.rules]]\nmatch = \"counter.write\"\naction = \"allow\"\n",
        quoted(python),
        quoted(repo().join("benches/support/counter_log.py")),
        quoted(counts.to_path_buf()),
    ));
}

/// The hub child; dropping it stops the hub, also when the bench panics.
struct Hub {
    child: Child,
    url: String,
}

/// SIGTERM, so the hub shuts its source down (the upstream runs in a process group of its own,
/// which a SIGKILL would orphan); SIGKILL only if it does not end in time.
impl Drop for Hub {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-s", "TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hub serve --http` on a free port, its log in `log` for when something fails.
fn start_hub(home: &Home, log: &Path) -> Hub {
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(log).expect("the hub's log file");
    let mut child = home
        // CLIENTS × EXECUTES_PER_ROUND requests at once, each on its own HTTP/1 connection: above
        // the default cap, so the cap is raised rather than the load measured against 503s.
        .command(&[
            "hub",
            "serve",
            "--http",
            &address,
            "--max-connections",
            "4096",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start the hub");
    let deadline = Instant::now() + START_BOUND;
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Hub {
                child,
                url: format!("http://{address}/mcp"),
            };
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the hub did not listen on {address}");
}

/// Everything the clients saw, and the hub's memory along the way.
#[derive(Default)]
struct Outcome {
    /// Latency of every execute of the timed phase.
    latencies: Vec<Duration>,
    /// From the first request of the timed phase to the last answer.
    elapsed: Duration,
    /// Executes of the timed phase that completed.
    completed: usize,
    /// Every key a script was sent to write, warm-up included.
    sent: HashSet<String>,
    /// Keys of the executes that completed: each must be counted exactly once.
    completed_keys: HashSet<String>,
    /// Failed executes by what went wrong: (how many, one full example).
    errors: BTreeMap<String, (usize, String)>,
    /// The hub's resident memory (kB) and thread count along the way, the first before any
    /// load (the source connected, one write done) and the second after the warm-up.
    readings: Vec<(String, u64, u64)>,
    /// The hub's peak resident memory over its life (VmHWM, kB).
    rss_peak: u64,
    /// CPU seconds the hub, and its upstream, used in the timed phase: which one bounds the
    /// throughput on a small machine.
    hub_cpu: f64,
    upstream_cpu: f64,
}

/// One execute as its client saw it.
struct Execute {
    keys: Vec<String>,
    latency: Duration,
    /// `None` when it completed; otherwise what went wrong, and a short class to group by.
    failure: Option<(String, String)>,
}

async fn drive(hubs: &[Hub], token: &str, warmup: Duration, load: Duration) -> Outcome {
    let pids: Vec<u32> = hubs.iter().map(|hub| hub.child.id()).collect();
    let mut clients = Vec::with_capacity(CLIENTS);
    for c in 0..CLIENTS {
        // The clients are split evenly between the hubs.
        let hub = &hubs[c % hubs.len()];
        let config = StreamableHttpClientTransportConfig::with_uri(hub.url.as_str())
            .auth_header(token)
            // One round's executes all at once; rmcp's default lets only 16 POSTs run together.
            .max_concurrent_requests(EXECUTES_PER_ROUND);
        let client =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("an MCP client connects to the hub");
        clients.push(Arc::new(client));
    }
    let mut outcome = Outcome::default();
    // Each hub's upstream answers before the load starts.
    for (i, client) in clients.iter().take(hubs.len()).enumerate() {
        let ready = wait_for_upstream(client, &format!("ready-{i}")).await;
        outcome.sent.insert(ready.clone());
        outcome.completed_keys.insert(ready);
    }
    // Memory and threads of every hub together.
    let read = |when: &str| {
        (
            when.to_string(),
            pids.iter().map(|pid| status(*pid, "VmRSS")).sum(),
            pids.iter().map(|pid| status(*pid, "Threads")).sum(),
        )
    };
    outcome.readings.push(read("before the load"));
    let (warm, _) = phase("warm", &clients, warmup).await;
    outcome.readings.push(read("after the warm-up"));
    let upstream: Vec<u32> = pids.iter().flat_map(|pid| children(*pid)).collect();
    let cpu = |pids: &[u32]| pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>();
    let (hub_cpu, upstream_cpu) = (cpu(&pids), cpu(&upstream));
    let (timed, elapsed) = phase("load", &clients, load).await;
    outcome.hub_cpu = cpu(&pids) - hub_cpu;
    outcome.upstream_cpu = cpu(&upstream) - upstream_cpu;
    outcome.readings.push(read("right after the load"));
    let mut idled = Duration::ZERO;
    for idle in IDLE {
        tokio::time::sleep(idle - idled).await;
        idled = idle;
        outcome
            .readings
            .push(read(&format!("after {} s idle", idle.as_secs())));
    }
    outcome.rss_peak = pids.iter().map(|pid| status(*pid, "VmHWM")).sum();
    outcome.elapsed = elapsed;

    for (timed, execute) in warm
        .into_iter()
        .map(|e| (false, e))
        .chain(timed.into_iter().map(|e| (true, e)))
    {
        outcome.sent.extend(execute.keys.iter().cloned());
        match execute.failure {
            None => {
                outcome.completed_keys.extend(execute.keys);
                if timed {
                    outcome.completed += 1;
                    outcome.latencies.push(execute.latency);
                }
            }
            Some((class, example)) => {
                let entry = outcome.errors.entry(class).or_insert((0, example));
                entry.0 += 1;
            }
        }
    }
    outcome.latencies.sort();
    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    outcome
}

/// The upstream starts in the background: execute until its first write completes, so the
/// load does not open with `awaiting_connection` envelopes. Returns the key it wrote, which is
/// checked with the others.
async fn wait_for_upstream(client: &Client, key: &str) -> String {
    let deadline = Instant::now() + START_BOUND;
    let key = key.to_string();
    loop {
        let execute = execute(client, vec![key.clone()]).await;
        if execute.failure.is_none() {
            return key;
        }
        assert!(
            Instant::now() < deadline,
            "the counter upstream never answered: {:?}",
            execute.failure
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every client runs rounds until `length` has passed; returns every execute and the time from
/// the start to the last answer.
async fn phase(name: &str, clients: &[Arc<Client>], length: Duration) -> (Vec<Execute>, Duration) {
    let started = Instant::now();
    let deadline = started + length;
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(c, client)| {
            let client = client.clone();
            let name = name.to_string();
            tokio::spawn(async move {
                let mut done = Vec::new();
                let mut round = 0;
                while Instant::now() < deadline {
                    let executes = (0..EXECUTES_PER_ROUND).map(|e| {
                        let keys = (0..WRITES_PER_EXECUTE)
                            .map(|w| format!("{name}-c{c}-r{round}-e{e}-w{w}"))
                            .collect();
                        execute(&client, keys)
                    });
                    done.extend(futures::future::join_all(executes).await);
                    round += 1;
                }
                done
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("a client task"));
    }
    (all, started.elapsed())
}

/// One `execute` whose script writes `keys` in turn.
async fn execute(client: &Client, keys: Vec<String>) -> Execute {
    let mut code = String::new();
    for key in &keys {
        let _ = writeln!(
            code,
            "await counter.write({{ key: {} }});",
            serde_json::to_string(key).expect("JSON")
        );
    }
    code.push_str("return \"ok\";");
    let arguments = json!({ "code": code });
    let params = CallToolRequestParams::new("execute")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let started = Instant::now();
    let answer = client.call_tool(params).await;
    let latency = started.elapsed();
    let failure = match answer {
        Err(error) => Some(("transport error".to_string(), error.to_string())),
        Ok(result) => {
            let envelope = result.structured_content.unwrap_or(Value::Null);
            match envelope["status"].as_str() {
                Some("completed") => None,
                status => Some((
                    format!(
                        "{} / {}",
                        status.unwrap_or("no status"),
                        envelope["error"]["code"].as_str().unwrap_or("-")
                    ),
                    envelope.to_string(),
                )),
            }
        }
    };
    Execute {
        keys,
        latency,
        failure,
    }
}

/// A number from `/proc/PID/status` (memory in kB), 0 if it cannot be read.
fn status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix(field)?.strip_prefix(':')?;
            rest.trim().trim_end_matches("kB").trim().parse().ok()
        })
        .unwrap_or(0)
}

/// User plus system CPU time of a process so far, from `/proc/PID/stat`; 0 if it cannot be read.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces: utime and
    // stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    let per_second = clock_ticks_per_second();
    ticks as f64 / per_second as f64
}

/// The child processes of `pid` (the hub's stdio source), by the parent field of every
/// process's `/proc/PID/stat` (`/proc/PID/task/*/children` needs a kernel option).
fn children(pid: u32) -> Vec<u32> {
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    processes
        .flatten()
        .filter_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let parent = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
            (parent.parse() == Ok(pid)).then_some(child)
        })
        .collect()
}

/// How often the upstream ran each write, `"write:KEY"` → n, from its log of one line per write.
fn read_counts(path: &Path) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut counts = HashMap::new();
    for line in text.lines() {
        *counts.entry(line.to_string()).or_insert(0) += 1;
    }
    counts
}

/// Keys in breach of "each completed write counted exactly once, nothing else counted".
struct WriteCheck {
    /// Completed at the client, absent at the upstream.
    lost: Vec<String>,
    /// Counted more than once.
    duplicated: Vec<(String, u64)>,
    /// Counted, but no script was ever sent to write it.
    unexpected: Vec<String>,
    counted: usize,
}

fn check_writes(
    sent: &HashSet<String>,
    completed: &HashSet<String>,
    counts: &HashMap<String, u64>,
) -> WriteCheck {
    let key_of = |label: &str| label.strip_prefix("write:").map(str::to_string);
    let mut lost: Vec<String> = completed
        .iter()
        .filter(|key| !counts.contains_key(&format!("write:{key}")))
        .cloned()
        .collect();
    let mut duplicated: Vec<(String, u64)> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(label, n)| (label.clone(), *n))
        .collect();
    let mut unexpected: Vec<String> = counts
        .keys()
        .filter(|label| key_of(label).is_none_or(|key| !sent.contains(&key)))
        .cloned()
        .collect();
    lost.sort();
    duplicated.sort();
    unexpected.sort();
    WriteCheck {
        lost,
        duplicated,
        unexpected,
        counted: counts.values().map(|n| *n as usize).sum(),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The setups side by side, then each one's detail.
fn render_all(sections: &[(Setup, Outcome, WriteCheck)], load: Duration) -> String {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mut out = String::new();
    let _ = writeln!(out, "## Load: {CLIENTS} clients over Streamable HTTP\n");
    let _ = writeln!(
        out,
        "`cargo bench --bench load`: `hub serve --http` with {CLIENTS} MCP clients, each running rounds \
         of {EXECUTES_PER_ROUND} concurrent executes for {} s (after a warm-up), each execute making \
         {WRITES_PER_EXECUTE} sequential `counter.write` calls to the Python counter server, against each \
         store setup in turn (with two hubs, the clients are split between them and the figures are \
         for both together). {cores} cores, 1-minute load average {load_average} at the end; the \
         clients, the hubs, PostgreSQL and the upstreams share the machine.\n",
        load.as_secs()
    );
    let _ = writeln!(
        out,
        "| setup | executes/s | p50 | p99 | hub CPU per execute | threads (after warm-up) | peak RSS | failures |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (setup, outcome, check) in sections {
        let seconds = outcome.elapsed.as_secs_f64().max(f64::EPSILON);
        let per_execute_ms = outcome.hub_cpu * 1e3 / (outcome.completed.max(1) as f64);
        let failures = outcome.errors.values().map(|(n, _)| n).sum::<usize>()
            + check.lost.len()
            + check.duplicated.len()
            + check.unexpected.len();
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.0} ms | {:.0} ms | {per_execute_ms:.2} ms | {} | {:.0} MiB | {failures} |",
            setup.label(),
            outcome.completed as f64 / seconds,
            percentile(&outcome.latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&outcome.latencies, 0.99).as_secs_f64() * 1e3,
            outcome
                .readings
                .get(1)
                .map_or(0, |(_, _, threads)| *threads),
            outcome.rss_peak as f64 / 1024.0,
        );
    }
    for (setup, outcome, check) in sections {
        let _ = writeln!(out, "\n### {}\n", setup.label());
        out.push_str(&render(outcome, check));
    }
    out
}

fn render(outcome: &Outcome, check: &WriteCheck) -> String {
    let seconds = outcome.elapsed.as_secs_f64().max(f64::EPSILON);
    let executes = outcome.completed as f64 / seconds;
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let mib = |kb: u64| format!("{:.1} MiB", kb as f64 / 1024.0);
    let errors: usize = outcome.errors.values().map(|(n, _)| n).sum();
    let mut out = String::new();
    let _ = writeln!(out, "| measurement | value |");
    let _ = writeln!(out, "|---|---|");
    let rows = [
        (
            "executes completed (timed phase)",
            format!("{} in {seconds:.1} s", outcome.completed),
        ),
        ("throughput", format!("{executes:.1} executes/s")),
        (
            "upstream calls",
            format!("{:.1} calls/s", executes * WRITES_PER_EXECUTE as f64),
        ),
        (
            "execute latency p50",
            ms(percentile(&outcome.latencies, 0.50)),
        ),
        (
            "execute latency p99",
            ms(percentile(&outcome.latencies, 0.99)),
        ),
        (
            "execute latency max",
            ms(outcome.latencies.last().copied().unwrap_or_default()),
        ),
        (
            "failed executes (status not `completed`)",
            errors.to_string(),
        ),
        (
            "writes counted at the upstream (all phases)",
            check.counted.to_string(),
        ),
        ("lost writes", check.lost.len().to_string()),
        ("duplicated writes", check.duplicated.len().to_string()),
        ("unexpected writes", check.unexpected.len().to_string()),
        (
            "CPU in the timed phase: hub / upstream",
            format!(
                "{:.2} / {:.2} cores",
                outcome.hub_cpu / seconds,
                outcome.upstream_cpu / seconds
            ),
        ),
        ("hub peak RSS (VmHWM)", mib(outcome.rss_peak)),
    ];
    for (label, value) in rows {
        let _ = writeln!(out, "| {label} | {value} |");
    }
    // Memory is judged against the reading after the warm-up, when the load's buffers and
    // threads exist already; growth beyond it would be what the load leaves behind.
    let warm = outcome
        .readings
        .get(1)
        .map_or(1, |(_, rss, _)| (*rss).max(1));
    let _ = writeln!(
        out,
        "
| hub, when | RSS | threads | RSS / after the warm-up |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for (when, rss, threads) in &outcome.readings {
        let ratio = *rss as f64 / warm as f64;
        let verdict = if when.contains("idle") {
            if ratio <= FLAT_MARGIN {
                " (flat)"
            } else {
                " (**grew**)"
            }
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {when} | {} | {threads} | {ratio:.2}×{verdict} |",
            mib(*rss)
        );
    }
    if !outcome.errors.is_empty() {
        let _ = writeln!(out, "\nFailed executes, by status / error code:\n");
        for (class, (count, example)) in &outcome.errors {
            let _ = writeln!(out, "- {count} × {class}, e.g. `{example}`");
        }
    }
    let sample = |keys: Vec<String>| keys.into_iter().take(5).collect::<Vec<_>>().join(", ");
    for (label, keys) in [
        ("Lost", check.lost.clone()),
        (
            "Duplicated",
            check
                .duplicated
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect(),
        ),
        ("Unexpected", check.unexpected.clone()),
    ] {
        if !keys.is_empty() {
            let _ = writeln!(
                out,
                "\n{label} (first 5 of {}): {}",
                keys.len(),
                sample(keys)
            );
        }
    }
    out
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"))
}

/// The kernel's clock ticks per second, the unit of the CPU times in `/proc/<pid>/stat`, as
/// `getconf CLK_TCK` reports it (100 on every Linux we know; that if it cannot be asked).
fn clock_ticks_per_second() -> i64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse::<i64>().ok())
        .unwrap_or(100)
        .max(1)
}
