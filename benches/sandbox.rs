//! Code the model writes: what `eval-sandboxed` adds to a trivial program (a fresh
//! child interpreter, its limits, the captured output, the value copied out), and what
//! `check-code` costs on a 200-line plan.
//!
//! Run with `cargo bench --bench sandbox`; numbers in docs/BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

mod common;
use common::bench_program;

/// A plan of 200 lines: 100 two-line procedures, each calling the one before and a tool.
fn plan() -> String {
    let mut text = String::from("(define (step-0 x)\n  x)\n");
    for n in 1..100 {
        text.push_str(&format!(
            "(define (step-{n} x)\n  (+ (step-{} x) (get (lookup \"k{n}\") \"content\")))\n",
            n - 1
        ));
    }
    text
}

fn sandbox(c: &mut Criterion) {
    let tools = "(deftask lookup (key) :description \"A fact\" key)\n".to_owned();
    bench_program(c, "a trivial call (baseline)", String::new(), "(+ 1 2)");
    bench_program(
        c,
        "eval-sandboxed of a trivial program",
        String::new(),
        "(eval-sandboxed \"(+ 1 2)\")",
    );
    let setup = format!(
        "{tools}(define plan {})",
        tasklisp::write_string(&tasklisp::Value::from(plan()))
    );
    bench_program(
        c,
        "check-code of a 200-line plan",
        setup,
        "(check-code plan :tasks [\"lookup\"])",
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    targets = sandbox
}
criterion_main!(benches);
