//! Parsing model answers: the strict path (valid JSON, which must cost what serde_json
//! costs) and the lenient path (answers that need repairs), on one 1 MB answer and on
//! 10,000 small ones. `cargo bench --bench lenient` prints one line per case (numbers
//! for docs/BENCHMARKS.md).

use std::time::Instant;
use tasklisp::internals::task::lenient::parse;

/// A JSON array of `n` small objects, about 60 bytes each.
fn valid_answer(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!("{{\"id\": {i}, \"label\": \"bug\", \"urgent\": false, \"tags\": [\"a\"]}}")
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// The same data as a model might write it: prose around it, single quotes, unquoted
/// keys, Python literals and trailing commas.
fn sloppy_answer(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!("{{id: {i}, 'label': 'bug', urgent: False, tags: ['a',],}}"))
        .collect();
    format!(
        "Sure! Here is the list:\n[{}]\nHope this helps.",
        items.join(", ")
    )
}

fn time<R>(name: &str, runs: u32, mut f: impl FnMut() -> R) {
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(f());
    }
    let per_run = start.elapsed() / runs;
    println!("{name}: {:.3} ms", per_run.as_secs_f64() * 1000.0);
}

fn main() {
    let big_valid = valid_answer(16_000);
    let big_sloppy = sloppy_answer(16_000);
    println!(
        "answers: valid {} bytes, sloppy {} bytes",
        big_valid.len(),
        big_sloppy.len()
    );
    time(
        "1 MB valid answer, serde_json::from_str (baseline)",
        20,
        || serde_json::from_str::<serde_json::Value>(&big_valid).is_ok(),
    );
    time(
        "1 MB valid answer, lenient::parse (strict path)",
        20,
        || parse(&big_valid, false).is_ok(),
    );
    time("1 MB answer needing repairs, lenient::parse", 20, || {
        parse(&big_sloppy, false).is_ok()
    });
    let small_valid: Vec<String> = (0..10_000).map(|_| valid_answer(1)).collect();
    let small_sloppy: Vec<String> = (0..10_000).map(|_| sloppy_answer(1)).collect();
    time(
        "10,000 small valid answers, serde_json::from_str (baseline)",
        5,
        || {
            small_valid
                .iter()
                .filter(|a| serde_json::from_str::<serde_json::Value>(a).is_ok())
                .count()
        },
    );
    time(
        "10,000 small valid answers, lenient::parse (strict path)",
        5,
        || {
            small_valid
                .iter()
                .filter(|a| parse(a, false).is_ok())
                .count()
        },
    );
    time(
        "10,000 small answers needing repairs, lenient::parse",
        5,
        || {
            small_sloppy
                .iter()
                .filter(|a| parse(a, false).is_ok())
                .count()
        },
    );
}
