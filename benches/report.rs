//! The performance report (`scripts/bench-report` runs the criterion benches first, then this).
//! It measures what criterion does not — token counts, search p50/p99 per query, memory of the
//! index and of a run (with a counting global allocator) — reads the criterion medians from
//! `target/criterion/**/new/estimates.json`, and writes `target/bench-report.md`: every target of
//! issue 9 with the measured median and whether it held, then the details (GitHub's REST API as
//! an OpenAPI source among them, when `tests/setup.sh` installed `@octokit/openapi`), then the
//! sections of search through the hub (`target/search-hub-report.md`, from
//! benches/search_hub.rs) and of the load benchmark (`target/load-report.md`, from
//! benches/load.rs) when this run wrote them.

#[path = "support/instant_tool.rs"]
mod instant_tool;
#[path = "support/synthetic.rs"]
mod synthetic;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use capabilities::catalog::cache::ListingCache;
use capabilities::catalog::describe::{DEFAULT_BUDGET_TOKENS, describe};
use capabilities::catalog::live::LiveCatalog;
use capabilities::catalog::search::{Ranking, SearchIndex};
use capabilities::catalog::{Catalog, Namespace, Origin};
use capabilities::config::Settings;
use capabilities::credentials::NoSecretStore;
use capabilities::execute::Executor;
use capabilities::hub::{direct, surface};
use capabilities::model::Permits;
use capabilities::model::tool::build_namespace;
use capabilities::runs::Store;
use capabilities::sandbox::CancelToken;
use capabilities::sandbox::{Bridge, Status, run};
use capabilities::sources::Sources;
use capabilities::token_count;

use synthetic::{Recorded, queries};

/// Counts live heap bytes and their high-water mark, so the report can say what an index or a
/// run holds. Only two relaxed atomics per allocation, so timings taken here stay comparable.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed on to `System` unchanged; this type only counts. A global
// allocator can only be written with `unsafe`, and measuring memory needs one.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's, checked by it.
        let out = unsafe { System.realloc(ptr, layout, new_size) };
        if !out.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        out
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Live bytes now, after making that the new high-water mark.
fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// Catalogue sizes of the token-economy table besides the recorded one.
const TOKEN_SIZES: [usize; 3] = [100, 1_000, 10_000];
/// Catalogue sizes of the search measurements.
const SEARCH_SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// How long the per-query timing loop runs per size; long enough for a stable p99.
const QUERY_LOOP: Duration = Duration::from_secs(2);

fn main() {
    let target = target_dir();
    // As in the hub: runs take runtimes made ready ahead.
    capabilities::sandbox::warm_up();
    let recorded = Recorded::load();
    let mut report = Report::default();

    token_economy(&recorded, &mut report);
    search(&recorded, &mut report);
    report.github = github_openapi();
    let tools = recorded.one_namespace(500);
    let described = describe(&tools, &["big".to_string()], DEFAULT_BUDGET_TOKENS)
        .unwrap_or_else(|e| panic!("describe big: {e}"));
    report.describe_tokens = token_count::count(&described);
    sandbox_memory(&mut report);
    stored_results(&mut report);

    let since = std::fs::metadata(target.join("bench-report.start"))
        .and_then(|m| m.modified())
        .ok();
    let medians = criterion_medians(&target.join("criterion"), since);
    let mut text = report.render(&medians, &target);
    // benches/search_hub.rs and benches/load.rs write their own sections; like criterion
    // results, an old one is left out.
    for name in ["search-hub-report.md", "load-report.md"] {
        let section_path = target.join(name);
        let fresh = std::fs::metadata(&section_path)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| since.is_none_or(|since| modified >= since));
        if let (true, Ok(section)) = (fresh, std::fs::read_to_string(&section_path)) {
            text.push('\n');
            text.push_str(&section);
        }
    }
    let path = target.join("bench-report.md");
    std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("{text}");
    eprintln!("wrote {}", path.display());
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// What this binary measured itself.
#[derive(Default)]
struct Report {
    surface_tokens: usize,
    /// The hub's `tools/list` and instructions in direct mode, for the recorded servers.
    direct_tokens: usize,
    /// (label, tools, tokens of listing them directly).
    listings: Vec<(String, usize, usize)>,
    searches: Vec<SearchNumbers>,
    describe_tokens: usize,
    /// (what ran, peak heap bytes above the baseline).
    run_memory: Vec<(String, usize)>,
    /// Runs around a stored result, each timed on its own.
    stored: Vec<TimedRuns>,
    /// GitHub's REST description as an OpenAPI source; `None` when it is not installed.
    github: Option<GithubNumbers>,
}

/// GitHub's REST API (`@octokit/openapi`) as one OpenAPI source.
struct GithubNumbers {
    document_bytes: usize,
    tools: usize,
    /// Parsing the document and turning its operations into tools (median of 3).
    load: Duration,
    /// Addresses and the search index over them (median of 3).
    catalogue: Duration,
    index_bytes: usize,
    p50: Duration,
    p99: Duration,
    queries: usize,
    /// A request in words, the operation that answers it, and where search ranks it (1-based).
    ranks: Vec<(&'static str, &'static str, Option<usize>)>,
}

/// What a person would ask of GitHub, and the operation that does it.
const GITHUB_REQUESTS: [(&str, &str); 10] = [
    ("create an issue", "github.issuesCreate"),
    ("list pull requests", "github.pullsList"),
    ("merge a pull request", "github.pullsMerge"),
    (
        "star a repository",
        "github.activityStarRepoForAuthenticatedUser",
    ),
    ("get the contents of a file", "github.reposGetContent"),
    (
        "list workflow runs for a repository",
        "github.actionsListWorkflowRunsForRepo",
    ),
    ("add labels to an issue", "github.issuesAddLabels"),
    ("create a release", "github.reposCreateRelease"),
    ("search code", "github.searchCode"),
    ("get the authenticated user", "github.usersGetAuthenticated"),
];

/// Percentiles of one kind of run.
struct TimedRuns {
    label: &'static str,
    runs: usize,
    p50: Duration,
    p99: Duration,
}

struct SearchNumbers {
    tools: usize,
    index_bytes: usize,
    p50: Duration,
    p99: Duration,
    queries: usize,
}

/// The surface's fixed cost (the three tools as `tools/list` sends them, plus the
/// instructions) against the `tools/list` JSON of every tool of the same servers.
fn token_economy(recorded: &Recorded, report: &mut Report) {
    let tools = serde_json::to_string(&surface::tools()).unwrap_or_default();
    report.surface_tokens = token_count::count(&tools) + token_count::count(surface::INSTRUCTIONS);

    // Copies of a server list the same JSON, so each distinct listing is counted once.
    let mut counted: HashMap<(usize, usize), usize> = HashMap::new();
    let mut listing = |size: usize| -> usize {
        recorded
            .copies(size)
            .iter()
            .map(|copy| {
                *counted.entry((copy.server, copy.tools)).or_insert_with(|| {
                    let tools = &recorded.servers[copy.server].tools[..copy.tools];
                    token_count::count(&serde_json::to_string(tools).unwrap_or_default())
                })
            })
            .sum()
    };
    report.direct_tokens = direct_mode_tokens(recorded);
    let fixture: usize = recorded.servers.iter().map(|s| s.tools.len()).sum();
    let label = format!("recorded ({} servers)", recorded.servers.len());
    report.listings.push((label, fixture, listing(fixture)));
    for size in TOKEN_SIZES {
        report
            .listings
            .push(("synthetic".to_string(), size, listing(size)));
    }
}

/// What `hub serve --direct` sends a client before its first call, for the recorded servers:
/// its `tools/list` (every tool under its direct name, plus `capabilities_read_result`) and
/// its instructions.
fn direct_mode_tokens(recorded: &Recorded) -> usize {
    let catalog = Catalog {
        namespaces: recorded
            .servers
            .iter()
            .zip(&recorded.definitions)
            .map(|(server, tools)| Namespace {
                name: server.namespace.clone(),
                connections: vec!["default".into()],
                named_connections: false,
                tools: tools.clone(),
                skills: Vec::new(),
                origin: Origin::Live,
            })
            .collect(),
    };
    let tools: Vec<_> = direct::listing(
        &catalog,
        &Default::default(),
        Permits::ALL,
        &Default::default(),
    )
    .into_iter()
    .map(|t| t.tool)
    .collect();
    token_count::count(&serde_json::to_string(&tools).unwrap_or_default())
        + token_count::count(surface::DIRECT_INSTRUCTIONS)
}

/// Memory of the index and per-query latency percentiles, over the search-quality queries.
fn search(recorded: &Recorded, report: &mut Report) {
    let queries = queries();
    for size in SEARCH_SIZES {
        let before = LIVE.load(Ordering::Relaxed);
        let index = recorded.index(size);
        let index_bytes = LIVE.load(Ordering::Relaxed).saturating_sub(before);
        for query in &queries {
            black_box(index.search(query, None));
        }
        let mut times = Vec::new();
        let started = Instant::now();
        while started.elapsed() < QUERY_LOOP {
            for query in &queries {
                let t = Instant::now();
                black_box(index.search(query, None));
                times.push(t.elapsed());
            }
        }
        times.sort();
        report.searches.push(SearchNumbers {
            tools: size,
            index_bytes,
            p50: percentile(&times, 0.50),
            p99: percentile(&times, 0.99),
            queries: times.len(),
        });
    }
}

/// Loads GitHub's REST description (about 1,200 operations) the way a source would, builds its
/// catalogue and search index, times searches for [`GITHUB_REQUESTS`] and ranks their answers.
fn github_openapi() -> Option<GithubNumbers> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node_modules/@octokit/openapi/generated/api.github.com.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let mut loads = Vec::new();
    let mut upstream = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        upstream = capabilities::sources::document_tools(text.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        loads.push(started.elapsed());
    }
    let mut catalogues = Vec::new();
    let mut index = SearchIndex::new();
    let mut index_bytes = 0;
    for _ in 0..3 {
        let tools = upstream.clone();
        // The previous index goes first, so its freeing is not counted against this one.
        drop(std::mem::take(&mut index));
        let started = Instant::now();
        let definitions = build_namespace("github", tools, &[]);
        let before = LIVE.load(Ordering::Relaxed);
        let mut built = SearchIndex::new();
        built.set_namespace("github", &definitions);
        index_bytes = LIVE.load(Ordering::Relaxed).saturating_sub(before);
        catalogues.push(started.elapsed());
        index = built;
    }
    let mut times = Vec::new();
    let started = Instant::now();
    while started.elapsed() < QUERY_LOOP {
        for (query, _) in GITHUB_REQUESTS {
            let t = Instant::now();
            black_box(index.search(query, None));
            times.push(t.elapsed());
        }
    }
    times.sort();
    let ranks = GITHUB_REQUESTS
        .iter()
        .map(|(query, expected)| {
            let rank = match index.search(query, None) {
                Ranking::Ranked(hits) => hits.iter().position(|h| h.address == *expected),
                Ranking::NoTerms => None,
            };
            (*query, *expected, rank.map(|r| r + 1))
        })
        .collect();
    Some(GithubNumbers {
        document_bytes: text.len(),
        tools: upstream.len(),
        load: median(loads),
        catalogue: median(catalogues),
        index_bytes,
        p50: percentile(&times, 0.50),
        p99: percentile(&times, 0.99),
        queries: times.len(),
        ranks,
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Peak heap of one run, and of 100 started at once (QuickJS allocates through the global
/// allocator too), after a warm-up so the once-per-process prelude bytecode is not counted.
/// Runs on the blocking pool overlap only as far as two cores let them, so the concurrent peak
/// is not 100 single peaks.
fn sandbox_memory(report: &mut Report) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = instant_tool::namespaces();
    let bridge: Arc<dyn Bridge> = Arc::new(instant_tool::Instant);
    let cases = [
        ("empty script", "return 1", 1),
        ("100 sequential calls", instant_tool::SEQUENTIAL_100, 1),
        (
            "100 calls in one Promise.all",
            instant_tool::PARALLEL_100,
            1,
        ),
        ("100 concurrent empty runs, all together", "return 1", 100),
    ];
    for (label, code, runs) in cases {
        let batch = || {
            runtime.block_on(async {
                let all = (0..runs).map(|_| run(instant_tool::request(code, &ns), bridge.clone()));
                let envelopes = futures::future::join_all(all).await;
                assert!(envelopes.iter().all(|e| e.status == Status::Completed));
            })
        };
        batch();
        let baseline = reset_peak();
        batch();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
        report.run_memory.push((label.to_string(), peak));
    }
}

/// How many times each stored-result run is timed.
const STORED_RUNS: usize = 200;

/// A script whose value is a listing just under the 1 MiB a run may keep (9,500 rows of about
/// 100 bytes: 0.97 MB of JSON).
const ONE_MIB: &str = "return { rows: Array.from({ length: 9500 }, (_, i) => ({ id: i, subject: `message ${i}`, body: 'x'.repeat(56) })) };";

/// Storing a 1 MiB result and reading one page of it, through the executor a hub uses (sandbox,
/// bridge, a real SQLite store with the state key): the same listing returned as its size
/// (nothing stored: the baseline), returned whole (stored, sealed, described), and one
/// `hub.read` page of it (opened, parsed, paged), each run timed on its own.
fn stored_results(report: &mut Report) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let executor = runtime.block_on(async {
        let store = Store::open(&dir.path().join("state.sqlite"), None)
            .await
            .unwrap_or_else(|e| panic!("store: {e}"));
        let settings = Settings::empty();
        let sources = Sources::start(Vec::new(), Arc::new(NoSecretStore));
        let catalog = LiveCatalog::start(
            settings.clone(),
            ListingCache::new(dir.path().join("catalog")),
            sources,
        );
        Executor::new(catalog, Arc::new(settings), store)
    });
    let execute =
        |code: &str| runtime.block_on(executor.execute(code.to_string(), None, CancelToken::new()));
    let measured = format!("const v = (() => {{ {ONE_MIB} }})(); return JSON.stringify(v).length;");
    let timed = |label: &'static str, code: &str, report: &mut Report| {
        let mut times = Vec::with_capacity(STORED_RUNS);
        for _ in 0..STORED_RUNS {
            let started = Instant::now();
            let envelope = execute(code);
            times.push(started.elapsed());
            assert_eq!(
                envelope.status,
                Status::Completed,
                "{label}: {:?}",
                envelope.error
            );
        }
        times.sort();
        report.stored.push(TimedRuns {
            label,
            runs: times.len(),
            p50: percentile(&times, 0.50),
            p99: percentile(&times, 0.99),
        });
    };
    timed(
        "make the ~1 MB listing, return its size (baseline)",
        &measured,
        report,
    );
    timed(
        "make the ~1 MB listing, return it (stored)",
        ONE_MIB,
        report,
    );
    // Stored last, so the runs above (which evict the oldest past 4 MiB) leave it in place.
    let stored = execute(ONE_MIB);
    let result_ref = stored
        .stored
        .as_ref()
        .unwrap_or_else(|| panic!("not stored: {:?}", stored.error))
        .result_ref
        .clone();
    let page = format!("return await hub.read({result_ref:?}, {{ path: \"/rows\" }});");
    timed("read one page of the stored listing", &page, report);
}

/// Criterion's median per benchmark id, in nanoseconds. Results older than `since` (the
/// report's start marker) are from an earlier run and left out, so a bench that failed this time
/// shows as not measured rather than with an old number.
fn criterion_medians(dir: &Path, since: Option<SystemTime>) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let estimates = path.join("new/estimates.json");
            if path.file_name().is_some_and(|n| n == "new") || !estimates.exists() {
                stack.push(path);
                continue;
            }
            let fresh = match (
                since,
                std::fs::metadata(&estimates).and_then(|m| m.modified()),
            ) {
                (Some(since), Ok(modified)) => modified >= since,
                _ => true,
            };
            let read = |file: &Path| -> Option<serde_json::Value> {
                serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()
            };
            let (Some(benchmark), Some(estimates)) =
                (read(&path.join("new/benchmark.json")), read(&estimates))
            else {
                continue;
            };
            let (Some(id), Some(median)) = (
                benchmark["full_id"].as_str(),
                estimates["median"]["point_estimate"].as_f64(),
            ) else {
                continue;
            };
            if fresh {
                out.insert(id.to_string(), median);
            }
        }
    }
    out
}

/// One row of the targets table.
struct Target {
    measurement: &'static str,
    /// The measured value, shown and compared in the target's unit.
    value: Option<f64>,
    shown: String,
    limit: f64,
    target: &'static str,
}

impl Report {
    fn render(&self, medians: &BTreeMap<String, f64>, target: &Path) -> String {
        let ms = |id: &str| medians.get(id).map(|ns| ns / 1e6);
        let bridge_us = match (
            medians.get("run with 100 sequential tool calls"),
            medians.get("empty script start to result"),
        ) {
            (Some(calls), Some(empty)) => Some((calls - empty) / 100.0 / 1e3),
            _ => None,
        };
        let echo_ratio = match (
            medians.get("hub stdio/echo through the hub"),
            medians.get("hub stdio/echo direct"),
        ) {
            (Some(hub), Some(direct)) => Some(hub / direct),
            _ => None,
        };
        let p50_10k = self
            .searches
            .iter()
            .find(|s| s.tools == 10_000)
            .map(|s| s.p50.as_secs_f64() * 1e3);
        let targets = [
            Target {
                measurement: "fixed surface (3 tools + instructions)",
                value: Some(self.surface_tokens as f64),
                shown: format!("{} tokens", self.surface_tokens),
                limit: 1_000.0,
                target: "≤ 1,000 tokens",
            },
            millis("search p50 at 10,000 tools", p50_10k, 2.0, "≤ 2 ms"),
            millis(
                "index build at 10,000 tools",
                ms("search build/10000"),
                300.0,
                "≤ 300 ms",
            ),
            millis(
                "empty execute, in-process",
                ms("empty script start to result"),
                1.0,
                "≤ 1 ms",
            ),
            millis(
                "empty execute, over stdio",
                ms("hub stdio/empty execute"),
                5.0,
                "≤ 5 ms",
            ),
            Target {
                measurement: "bridge overhead per call",
                value: bridge_us,
                shown: bridge_us.map_or_else(not_measured, |us| format!("{us:.1} µs")),
                limit: 50.0,
                target: "≤ 50 µs",
            },
            Target {
                measurement: "hub overhead on `everything.echo`",
                value: echo_ratio,
                shown: echo_ratio.map_or_else(not_measured, |r| format!("{r:.2}× direct")),
                limit: 1.5,
                target: "≤ 1.5× direct",
            },
            millis(
                "hub start to first `tools/list`, 10 sources",
                ms("hub start/to first tools/list, 10 sources"),
                100.0,
                "≤ 100 ms",
            ),
        ];

        let mut out = String::new();
        let _ = writeln!(out, "# capabilities performance report\n");
        let _ = writeln!(out, "{}\n", machine(target));
        let _ = writeln!(out, "## Targets (medians)\n");
        let _ = writeln!(out, "| measurement | median | target | held? |");
        let _ = writeln!(out, "|---|---|---|---|");
        for t in &targets {
            let held = match t.value {
                Some(v) if v <= t.limit => "yes",
                Some(_) => "**no**",
                None => "—",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {held} |",
                t.measurement, t.shown, t.target
            );
        }

        let _ = writeln!(out, "\n## Token economy (o200k_base)\n");
        let _ = writeln!(
            out,
            "The hub's cost is fixed: {} tokens whatever the catalogue. Listing every tool directly \
             (the `tools/list` JSON of the same servers) grows with it.\n",
            self.surface_tokens
        );
        let recorded_tools = self.listings.first().map_or(0, |(_, tools, _)| *tools);
        let _ = writeln!(
            out,
            "In direct mode (`hub serve --direct`, a profile's `mode = \"direct\"`) the hub lists \
             every tool itself: for the recorded servers ({recorded_tools} tools) its `tools/list` \
             and instructions cost {} tokens, {:.1}× the code mode's {}, before the model has \
             done anything, and they grow with every source added.\n",
            self.direct_tokens,
            self.direct_tokens as f64 / self.surface_tokens.max(1) as f64,
            self.surface_tokens
        );
        let _ = writeln!(
            out,
            "| catalogue | tools | listing every tool | hub surface | hub / direct |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|");
        for (label, tools, listing) in &self.listings {
            let _ = writeln!(
                out,
                "| {label} | {tools} | {listing} | {} | {:.2}% |",
                self.surface_tokens,
                100.0 * self.surface_tokens as f64 / (*listing).max(1) as f64
            );
        }

        let _ = writeln!(
            out,
            "\n## Search (BM25F, {} real queries)\n",
            queries().len()
        );
        let _ = writeln!(
            out,
            "| tools | build (median) | query p50 | query p99 | query (criterion median) | index memory |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for s in &self.searches {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.1} MiB |",
                s.tools,
                duration(medians.get(&format!("search build/{}", s.tools))),
                duration(Some(&(s.p50.as_secs_f64() * 1e9))),
                duration(Some(&(s.p99.as_secs_f64() * 1e9))),
                duration(medians.get(&format!("search query/{}", s.tools))),
                s.index_bytes as f64 / (1 << 20) as f64,
            );
        }
        let _ = writeln!(
            out,
            "\np50/p99 are over at least {} timed queries per size (the report's own loop); memory is the \
             heap the index holds. The synthetic catalogues repeat the 20 recorded servers, so after the \
             first copy every word is known to the index's word cache; building the recorded catalogue \
             alone, where every word is new, takes {} for its 230 tools.",
            self.searches.iter().map(|s| s.queries).min().unwrap_or(0),
            duration(medians.get("search build/recorded 230"))
        );

        let _ = writeln!(out, "\n## GitHub's REST API as an OpenAPI source\n");
        match &self.github {
            None => {
                let _ = writeln!(
                    out,
                    "Not measured: `tests/node_modules/@octokit/openapi` is missing (tests/setup.sh installs it)."
                );
            }
            Some(g) => {
                let _ = writeln!(
                    out,
                    "`@octokit/openapi`'s api.github.com.json ({:.1} MB, {} operations): reading it and \
                     turning its operations into tools takes {}; addresses and the search index {}; the \
                     index holds {:.1} MiB. Search p50 {}, p99 {} over {} timed queries.\n",
                    g.document_bytes as f64 / 1e6,
                    g.tools,
                    duration(Some(&(g.load.as_secs_f64() * 1e9))),
                    duration(Some(&(g.catalogue.as_secs_f64() * 1e9))),
                    g.index_bytes as f64 / (1 << 20) as f64,
                    duration(Some(&(g.p50.as_secs_f64() * 1e9))),
                    duration(Some(&(g.p99.as_secs_f64() * 1e9))),
                    g.queries,
                );
                let _ = writeln!(out, "| request | operation | rank |");
                let _ = writeln!(out, "|---|---|---|");
                for (query, expected, rank) in &g.ranks {
                    let rank = rank.map_or_else(|| "not found".to_string(), |r| r.to_string());
                    let _ = writeln!(out, "| {query} | `{expected}` | {rank} |");
                }
            }
        }

        let _ = writeln!(out, "\n## Describe\n");
        let _ = writeln!(
            out,
            "A namespace of 500 tools under the default budget ({DEFAULT_BUDGET_TOKENS} tokens): {} median, {} tokens of output.",
            duration(medians.get("describe/namespace of 500 tools")),
            self.describe_tokens
        );

        let _ = writeln!(out, "\n## Execute (in-process tool)\n");
        median_table(
            &mut out,
            "run",
            &[
                "empty script start to result",
                "run with 100 sequential tool calls",
                "run with 100 calls in one Promise.all",
                "concurrency/100 concurrent runs x 10 calls",
            ],
            medians,
        );
        let _ = writeln!(out, "\n| run | peak heap |");
        let _ = writeln!(out, "|---|---|");
        for (label, bytes) in &self.run_memory {
            let _ = writeln!(
                out,
                "| {label} | {:.2} MiB |",
                *bytes as f64 / (1 << 20) as f64
            );
        }

        let _ = writeln!(out, "\n## Large results (stored for hub.read)\n");
        let _ = writeln!(out, "| run | p50 | p99 | runs |");
        let _ = writeln!(out, "|---|---|---|---|");
        for t in &self.stored {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                t.label,
                duration(Some(&(t.p50.as_secs_f64() * 1e9))),
                duration(Some(&(t.p99.as_secs_f64() * 1e9))),
                t.runs
            );
        }
        let _ = writeln!(
            out,
            "\nEach is one whole execute in-process against a SQLite store; storing costs the difference \
             between the first two (keeping, sealing and describing the value), and a page read opens, \
             parses and pages the stored value in a new run."
        );

        let _ = writeln!(out, "\n## Redaction (benches/redaction.rs)\n");
        median_table(
            &mut out,
            "operation",
            &[
                "redaction/build 3 secrets",
                "redaction/clean 1 MiB, 3 secrets, echoes/0",
                "redaction/clean 1 MiB, 12 secrets, echoes/0",
                "redaction/clean 1 MiB, 12 secrets, echoes/100",
            ],
            medians,
        );

        let _ = writeln!(out, "\n## Hub over stdio (real child processes)\n");
        median_table(
            &mut out,
            "round trip",
            &[
                "hub stdio/empty execute",
                "hub stdio/echo through the hub",
                "hub stdio/echo direct",
                "hub start/to first tools/list, 10 sources",
            ],
            medians,
        );
        // The ratio target compares a whole `execute` (a fresh QuickJS runtime per run) with one
        // raw call, so also say what the call itself costs inside the hub.
        if let (Some(hub), Some(empty), Some(direct)) = (
            medians.get("hub stdio/echo through the hub"),
            medians.get("hub stdio/empty execute"),
            medians.get("hub stdio/echo direct"),
        ) {
            let _ = writeln!(
                out,
                "\nOf the echo through the hub, {} is the run itself (an empty execute) and {} the upstream \
                 (the direct call); the hub adds {} for the call in between (bridge, policy, journal, rmcp client).",
                duration(Some(empty)),
                duration(Some(direct)),
                duration(Some(&(hub - empty - direct)))
            );
        }

        let _ = writeln!(out, "\n## Whole process (CLI)\n");
        let _ = writeln!(out, "| command | 0 sources | 2 sources | 10 sources |");
        let _ = writeln!(out, "|---|---|---|---|");
        for (label, id) in [
            ("`exec` of `return 1`", "cli/exec 'return 1'"),
            ("`search`", "cli/search"),
        ] {
            let cells: Vec<String> = [0, 2, 10]
                .iter()
                .map(|n| duration(medians.get(&format!("{id}, {n} sources"))))
                .collect();
            let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
        }
        let _ = writeln!(
            out,
            "\nEach is one `capabilities` process from start to exit (`benches/cli.rs`), its sources recorded \
             servers under the replay server with their listings cached: neither command starts one."
        );
        out
    }
}

fn millis(
    measurement: &'static str,
    value: Option<f64>,
    limit: f64,
    target: &'static str,
) -> Target {
    Target {
        measurement,
        value,
        shown: value.map_or_else(not_measured, |ms| duration(Some(&(ms * 1e6)))),
        limit,
        target,
    }
}

fn not_measured() -> String {
    "not measured".to_string()
}

/// Nanoseconds in the unit that reads best.
/// A table of the criterion median of each of `ids`, its first column headed `column`.
fn median_table(out: &mut String, column: &str, ids: &[&str], medians: &BTreeMap<String, f64>) {
    let _ = writeln!(out, "| {column} | median |");
    let _ = writeln!(out, "|---|---|");
    for id in ids {
        let _ = writeln!(out, "| {id} | {} |", duration(medians.get(*id)));
    }
}

fn duration(ns: Option<&f64>) -> String {
    match ns {
        None => not_measured(),
        Some(&ns) if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        Some(&ns) if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        Some(&ns) if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        Some(&ns) => format!("{ns:.0} ns"),
    }
}

/// Cores and load, because the numbers mean little without them.
fn machine(target: &Path) -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let load = |text: Option<String>| {
        text.and_then(|t| t.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "?".into())
    };
    let start = load(std::fs::read_to_string(target.join("bench-report.start")).ok());
    let end = load(std::fs::read_to_string("/proc/loadavg").ok());
    format!(
        "{cores} cores; 1-minute load average {start} when the benches started and {end} at the end. \
         The machine may be shared, so read medians and ratios, not single runs."
    )
}
