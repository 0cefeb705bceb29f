//! Read and evaluate any text in a sandbox (no programs, files, environment or
//! providers) under fuel, time, depth and memory limits: a value or a clean error, never
//! a panic, a hang or runaway memory (libFuzzer's `-rss_limit_mb` and `-timeout` watch).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use tasklisp::CountingAllocator;
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
    // of its fuel. 5,000 calls reach every builtin and every limit; at 50,000 calls and
    // 2 s the target ran 121 inputs a second.
    let limits = Limits {
        max_depth: 200,
        max_task_depth: 10,
        fuel: Some(5_000),
        timeout: Some(Duration::from_millis(250)),
        capabilities: Capabilities::sandbox(),
        // Counted by the allocator above and checked by every long builtin: a program
        // that grows its data ends here, well below libFuzzer's 2 GB. 64 MiB reaches
        // the error (a list of four million values) at a quarter of the work of the
        // string and list limits (256 MiB), which the target needs no larger budget
        // to reach: they refuse a result before building it.
        max_memory: Some(64 << 20),
        ..Limits::default()
    };
    if let Ok(interp) = Interp::with_output(limits, Box::new(std::io::sink())) {
        let _ = interp.run_source("fuzz", text);
    }
});
