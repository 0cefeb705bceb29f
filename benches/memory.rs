//! `get-context` over 10,000 generated files: building the index (cold) and answering
//! from the kept index (warm, which still lists the directory to see that nothing
//! changed).
//!
//! Run with `cargo bench --bench memory`; results are in docs/BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use tasklisp::internals::task::memory::{Indexes, Query, Strategy};

const FILES: usize = 10_000;
const WORDS: [&str; 12] = [
    "provider", "session", "template", "audit", "retry", "schema", "index", "token", "prompt",
    "result", "script", "module",
];

/// 100 directories of 100 small Markdown files, each a heading and two sentences.
fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..FILES {
        let sub = dir.path().join(format!("d{:02}", i / 100));
        std::fs::create_dir_all(&sub).expect("mkdir");
        let a = WORDS[i % WORDS.len()];
        let b = WORDS[(i * 7 + 3) % WORDS.len()];
        let text = format!(
            "# Note {i} on {a}\n\nThe {a} keeps the {b} for file {i}.\nSee also the {b} guide.\n"
        );
        std::fs::write(sub.join(format!("n{i}.md")), text).expect("write");
    }
    dir
}

fn bench(c: &mut Criterion) {
    let dir = corpus();
    let root = dir.path().to_str().expect("utf-8 path").to_owned();
    let query = |strategy| Query {
        text: "provider session retry",
        dir: Some(&root),
        files: None,
        limit: 5,
        strategy,
    };
    let mut group = c.benchmark_group("get-context 10k files");
    group.sample_size(10);
    group.bench_function("cold (build the index)", |b| {
        b.iter(|| {
            Indexes::default()
                .search(&query(Strategy::Content))
                .expect("search")
        })
    });
    let mut warm = Indexes::default();
    warm.search(&query(Strategy::Content)).expect("search");
    group.bench_function("warm (index kept)", |b| {
        b.iter(|| warm.search(&query(Strategy::Content)).expect("search"))
    });
    let mut metadata = Indexes::default();
    metadata.search(&query(Strategy::Metadata)).expect("search");
    group.bench_function("warm, metadata", |b| {
        b.iter(|| metadata.search(&query(Strategy::Metadata)).expect("search"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
