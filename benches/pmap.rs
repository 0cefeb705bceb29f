//! Wall time of `pmap` over blocking work, and its cost per item on pure work.
//! `cargo bench --bench pmap` prints one line per case (numbers for docs/BENCHMARKS.md).

use std::time::Instant;

#[path = "../tests/common/script_builtin.rs"]
mod script_builtin;
use script_builtin::SCRIPT;
use tasklisp::internals::symbol::Sym;
use tasklisp::{Interp, Limits, Value};

const CASES: &[(&str, &str)] = &[
    (
        "64 scripts `sleep 0.2`, concurrency 16",
        r#"(pmap (fn (x) (script "sleep" "0.2")) (range 64) :concurrency 16)"#,
    ),
    (
        "64 scripts `sleep 0.2`, concurrency 64",
        r#"(pmap (fn (x) (script "sleep" "0.2")) (range 64) :concurrency 64)"#,
    ),
    (
        "256 scripts `true`, concurrency 16",
        r#"(pmap (fn (x) (script "true")) (range 256) :concurrency 16)"#,
    ),
    (
        "10000 pure items with pmap, concurrency 8",
        "(pmap (fn (x) (* x x)) (range 10000))",
    ),
    (
        "10000 pure items with map (for comparison)",
        "(map (fn (x) (* x x)) (range 10000))",
    ),
];

fn main() {
    let timings = tasklisp::run_on_large_stack(&Limits::default(), |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink()))?;
        interp.define_global(Sym::new(SCRIPT.name), Value::Builtin(&SCRIPT));
        let mut timings = Vec::new();
        for (name, source) in CASES {
            let started = Instant::now();
            interp.run_source("<bench>", source)?;
            timings.push((*name, started.elapsed()));
        }
        Ok::<_, tasklisp::Error>(timings)
    });
    match timings {
        Ok(Ok(timings)) => {
            for (name, took) in timings {
                println!("{name}: {:.3} s", took.as_secs_f64());
            }
        }
        Ok(Err(e)) => eprintln!("benchmark failed: {}", e.message()),
        Err(e) => eprintln!("benchmark failed: {e}"),
    }
}
