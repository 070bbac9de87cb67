//! Sandbox benchmarks: an empty script from request to envelope, the overhead of one bridge call
//! to an in-process tool, and 100 concurrent runs of 10 calls each.

use std::sync::Arc;

use capabilities::sandbox::{
    Bridge, CallOutcome, Namespaces, RunRequest, Status, ToolCall, ToolSpec, run,
};
use criterion::{Criterion, criterion_group, criterion_main};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::json;

/// Answers instantly, like a local tool.
struct Instant;

impl Bridge for Instant {
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallOutcome> {
        async move { Ok(json!({ "content": [], "structuredContent": { "seq": call.seq } })).into() }
            .boxed()
    }
    fn search(&self, query: String) -> BoxFuture<'static, String> {
        async move { query }.boxed()
    }
    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, String> {
        async move { targets.join(",") }.boxed()
    }
}

fn namespaces() -> Arc<Namespaces> {
    let tool = Arc::new(ToolSpec::new(
        "echo",
        json!({ "type": "object" }),
        "bench.echo(input: object)",
    ));
    Arc::new(Namespaces::from([("bench".to_string(), vec![tool])]))
}

fn request(code: &str, namespaces: &Arc<Namespaces>) -> RunRequest {
    RunRequest::new("bench", code, namespaces.clone())
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ns = namespaces();
    let bridge: Arc<dyn Bridge> = Arc::new(Instant);

    c.bench_function("empty script start to result", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let envelope = run(request("return 1", &ns), bridge.clone()).await;
                assert_eq!(envelope.status, Status::Completed);
            })
        })
    });

    // 100 sequential calls per run; divide by 100 (and subtract the empty run) for one call.
    c.bench_function("run with 100 sequential tool calls", |b| {
        b.iter(|| runtime.block_on(async {
            let mut req = request("let n = 0; for (let i = 0; i < 100; i++) n += (await bench.echo({ i })).seq; return n", &ns);
            req.limits.max_calls = 100;
            let envelope = run(req, bridge.clone()).await;
            assert_eq!(envelope.status, Status::Completed);
        }))
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
