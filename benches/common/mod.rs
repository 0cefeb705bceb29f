//! What the criterion benchmarks share: a program timed in an interpreter thread of
//! its own.

use criterion::Criterion;
use std::sync::mpsc;
use std::time::Duration;
use tasklisp::{Interp, Limits};

/// Each benchmark runs in one interpreter thread; the closure times `program` there.
pub fn bench_program(
    c: &mut Criterion,
    name: &str,
    setup: impl Into<String>,
    program: &'static str,
) {
    let setup: String = setup.into();
    let (to_runner, from_bench) = mpsc::channel::<bool>();
    let (to_bench, from_runner) = mpsc::channel::<Duration>();
    let handle = std::thread::Builder::new()
        .stack_size(Limits::stack_for_depth(Limits::default().max_depth))
        .spawn(move || {
            let limits = Limits {
                stack_size: Limits::stack_for_depth(Limits::default().max_depth),
                ..Limits::default()
            };
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            interp.run_source("<setup>", &setup).expect("setup runs");
            while from_bench.recv().unwrap_or(false) {
                let start = std::time::Instant::now();
                interp.run_source("<bench>", program).expect("program runs");
                let _ = to_bench.send(start.elapsed());
            }
        })
        .expect("thread");
    c.bench_function(name, |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let _ = to_runner.send(true);
                total += from_runner.recv().unwrap_or_default();
            }
            total
        })
    });
    let _ = to_runner.send(false);
    let _ = handle.join();
}
