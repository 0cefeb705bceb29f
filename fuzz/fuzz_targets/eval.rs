//! Read and evaluate any text in a sandbox (no programs, files, environment or
//! providers) under fuel, time, depth and memory limits: a value or a clean error, never
//! a panic, a hang or runaway memory (libFuzzer's `-rss_limit_mb` and `-timeout` watch).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use tasklisp::memory::CountingAllocator;
use tasklisp::{Capabilities, Interp, Limits};

/// Counts heap use, as the binary does, so the memory budget below is enforced.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Fuel bounds calls, not work: one call can copy a map or a string as large as the
    // data built so far (`assoc` in a `reduce`), so an input's work grows with the square
    // of its fuel. 5,000 calls reach every builtin and every limit; at 50,000 a quarter
    // of the inputs ran for seconds and the target managed 120 executions a second.
    let limits = Limits {
        max_depth: 200,
        max_task_depth: 10,
        fuel: Some(5_000),
        timeout: Some(Duration::from_millis(250)),
        capabilities: Capabilities::sandbox(),
        // A program that doubles a string or a list until a limit stops it (the golden
        // cases do) ends here rather than at the 256 MiB result cap: the rest of the
        // inputs are not slowed by a process that holds a gigabyte.
        max_memory: Some(256 << 20),
        ..Limits::default()
    };
    if let Ok(interp) = Interp::with_output(limits, Box::new(std::io::sink())) {
        let _ = interp.run_source("fuzz", text);
    }
});
