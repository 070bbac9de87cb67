//! Sandbox benchmarks: an empty script from request to envelope, the overhead of one bridge call
//! to an in-process tool (100 sequential calls), 100 calls in one `Promise.all`, and 100
//! concurrent runs of 10 calls each.

#[path = "support/instant_tool.rs"]
mod instant_tool;

use std::sync::Arc;

use capabilities::sandbox::{Bridge, Status, run};
use criterion::{Criterion, criterion_group, criterion_main};

use instant_tool::{Instant, PARALLEL_100, SEQUENTIAL_100, namespaces, request};

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // As in the hub: runs take runtimes made ready ahead.
    capabilities::sandbox::warm_up();
    let ns = namespaces();
    let bridge: Arc<dyn Bridge> = Arc::new(Instant);
    let complete = |code: &str| {
        runtime.block_on(async {
            let envelope = run(request(code, &ns), bridge.clone()).await;
            assert_eq!(envelope.status, Status::Completed);
        })
    };

    c.bench_function("empty script start to result", |b| {
        b.iter(|| complete("return 1"))
    });
    c.bench_function("run with 100 sequential tool calls", |b| {
        b.iter(|| complete(SEQUENTIAL_100))
    });
    c.bench_function("run with 100 calls in one Promise.all", |b| {
        b.iter(|| complete(PARALLEL_100))
    });

    let mut group = c.benchmark_group("concurrency");
    group.sample_size(10);
    group.bench_function("100 concurrent runs x 10 calls", |b| {
        b.iter(|| runtime.block_on(async {
            let code = "const r = await Promise.all(Array.from({ length: 10 }, (_, i) => bench.echo({ i }))); return r.length";
            let runs = (0..100).map(|_| run(request(code, &ns), bridge.clone()));
            let envelopes = futures::future::join_all(runs).await;
            assert!(envelopes.iter().all(|e| e.status == Status::Completed));
        }))
    });
    group.finish();
}

criterion_group!(sandbox, benches);
criterion_main!(sandbox);
