//! Programs built from the input's bytes, not mutated text: each pair of bytes picks a
//! shape that stresses the interpreter's own memory handling — deep chains of closures,
//! errors raised with earlier errors inside, structure shared many times over, lists and
//! closures interleaved — and what is done with it (printing, comparing, JSON, raising,
//! dropping). Mutating text rarely builds such values deep enough to matter; these reach
//! a hundred thousand levels. A value or a clean error, never a crash, hang or blow-up.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use std::time::Duration;
use tasklisp::CountingAllocator;
use tasklisp::{Capabilities, Interp, Limits};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Values built by reducing over `(range n)`; `acc` is the value so far.
const BUILDERS: &[&str] = &[
    "(fn (acc i) (fn () acc))",
    "(fn (acc i) (try (raise {\"prev\" acc}) (catch e e)))",
    "(fn (acc i) [acc acc])",
    "(fn (acc i) (if (even? i) (list acc) (fn () acc)))",
    "(fn (acc i) {\"k\" acc \"i\" i})",
    "(fn (acc i) (cons acc nil))",
    "(fn (acc i) (try (error (str acc)) (catch e e.message)))",
    "(fn (acc i) (let ((f (fn () acc))) (fn () (f))))",
];

/// What is done with a built value `v`.
const USES: &[&str] = &[
    "(str v)",
    "(equal? v v)",
    "(json-stringify v)",
    "(raise v)",
    "(length (str v))",
    "(prn v)",
    "(hash-map \"a\" v \"b\" v)",
    "(set! v nil)",
];

/// Chain lengths: most shallow, some deep enough to overflow a recursive walk.
const SIZES: &[u32] = &[1, 2, 10, 30, 100, 1_000, 20_000, 200_000];

fn program(data: &[u8]) -> String {
    let mut text = String::new();
    for (n, pair) in data.chunks(2).take(12).enumerate() {
        let (shape, how) = match pair {
            [a, b] => (*a as usize, *b as usize),
            [a] => (*a as usize, 0),
            _ => continue,
        };
        let builder = BUILDERS[shape % BUILDERS.len()];
        let size = SIZES[(shape / BUILDERS.len()) % SIZES.len()];
        let uses = USES[how % USES.len()];
        let _ = writeln!(
            text,
            "(define v (reduce {builder} nil (range {size})))\n\
             (try {uses} (catch e (str \"caught \" {n})))"
        );
    }
    text
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_depth: 200,
        max_task_depth: 10,
        // Enough calls to build a 200,000-deep chain, and the time to do it.
        fuel: Some(1_000_000),
        timeout: Some(Duration::from_secs(3)),
        capabilities: Capabilities::sandbox(),
        max_memory: Some(256 << 20),
        ..Limits::default()
    };
    if let Ok(interp) = Interp::with_output(limits, Box::new(std::io::sink())) {
        let _ = interp.run_source("fuzz", &program(data));
    }
});
