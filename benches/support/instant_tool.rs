//! An in-process tool for the sandbox benchmarks: `bench.echo` answers at once, so a run's time
//! is the sandbox's and the bridge's own.

use std::sync::Arc;

use capabilities::sandbox::{Bridge, CallOutcome, Namespaces, RunRequest, ToolCall, ToolSpec};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::json;

/// Answers instantly, like a local tool.
pub struct Instant;

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

/// The one namespace `bench` with its one tool `echo`.
pub fn namespaces() -> Arc<Namespaces> {
    let tool = Arc::new(ToolSpec::new(
        "echo",
        json!({ "type": "object" }),
        "bench.echo(input: object)",
    ));
    Arc::new(Namespaces::from([("bench".to_string(), vec![tool])]))
}

/// A run of `code` allowed up to 100 calls, the most the benchmarks make.
pub fn request(code: &str, namespaces: &Arc<Namespaces>) -> RunRequest {
    let mut request = RunRequest::new("bench", code, namespaces.clone());
    request.limits.max_calls = 100;
    request
}

/// 100 sequential calls; (its time − an empty run's) / 100 is one call's bridge overhead.
pub const SEQUENTIAL_100: &str =
    "let n = 0; for (let i = 0; i < 100; i++) n += (await bench.echo({ i })).seq; return n";

/// 100 calls at once.
pub const PARALLEL_100: &str = "const r = await Promise.all(Array.from({ length: 100 }, (_, i) => bench.echo({ i }))); return r.length";
