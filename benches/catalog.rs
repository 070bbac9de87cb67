//! Catalogue benchmarks over synthetic catalogues made of the recorded real listings: building
//! the BM25F search index and answering one query at 1,000 / 10,000 / 100,000 tools, and
//! `describe` of a 500-tool namespace under the default token budget.

#[path = "support/synthetic.rs"]
mod synthetic;

use std::hint::black_box;
use std::time::Duration;

use capabilities::catalog::describe::{DEFAULT_BUDGET_TOKENS, describe};
use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};

use synthetic::{Recorded, queries};

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// The recorded catalogue: 230 tools of 20 real servers.
const RECORDED: usize = 230;

fn search(c: &mut Criterion) {
    let recorded = Recorded::load();
    let queries = queries();

    let mut build = c.benchmark_group("search build");
    // A 100,000-tool build takes about a second; flat sampling keeps it to one build per
    // iteration instead of criterion's growing 1, 2, … 10 per sample.
    build.sampling_mode(SamplingMode::Flat);
    build.sample_size(10);
    // Every word of the 20 distinct recorded servers is new to the index, so this is the cost
    // per tool without the word cache's help; the synthetic sizes repeat those servers.
    build.bench_function("recorded 230", |b| {
        b.iter_with_large_drop(|| recorded.index(RECORDED))
    });
    for size in SIZES {
        build.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, &size| {
            b.iter_with_large_drop(|| recorded.index(size))
        });
    }
    build.finish();

    let mut query = c.benchmark_group("search query");
    query.sample_size(30);
    query.measurement_time(Duration::from_secs(3));
    for size in SIZES {
        let index = recorded.index(size);
        // One iteration is the next query of the quality set, so the median is over the mix.
        let mut next = queries.iter().cycle();
        query.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            b.iter(|| {
                let q = next.next().map_or("", String::as_str);
                black_box(index.search(q, None))
            })
        });
    }
    query.finish();

    let tools = recorded.one_namespace(500);
    let targets = vec!["big".to_string()];
    let mut group = c.benchmark_group("describe");
    group.sample_size(20);
    group.bench_function("namespace of 500 tools", |b| {
        b.iter(|| describe(black_box(&tools), &targets, DEFAULT_BUDGET_TOKENS))
    });
    group.finish();
}

criterion_group!(catalog, search);
criterion_main!(catalog);
