//! Gathering and mapping back 100,000 batch requests: the JSONL built from the requests,
//! uploaded, the job created and polled, the output file downloaded and every line
//! mapped back to its request — against a fake OpenAI batch server that answers at once
//! (`tests/common/lean_batch_fake.rs`), so what is timed is tasklisp's side.
//!
//! `cargo bench --bench batch` starts the fake in a process of its own and runs the
//! batch three times, each in a fresh process, so that what one process measures is
//! tasklisp's alone and one run's memory does not carry into the next. It prints the
//! median time, tasklisp's peak resident memory and peak heap (and the heap per
//! request), and the fake's peak resident memory.

#[path = "../tests/common/lean_batch_fake.rs"]
mod lean_batch_fake;
#[path = "../tests/common/peak_alloc.rs"]
mod peak_alloc;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

const REQUESTS: usize = 100_000;
const RUNS: usize = 3;
/// Which part this process plays: unset for the driver, else `fake` or `run`.
const ROLE: &str = "TASKLISP_BATCH_BENCH_ROLE";
/// The fake's base URL, for a `run` process.
const BASE: &str = "TASKLISP_BATCH_BENCH_BASE";

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("fake") => fake(),
        Ok("run") => run_once(&std::env::var(BASE).expect("the fake's base URL")),
        _ => drive(),
    }
}

/// One run's figures, as a `run` process prints them.
struct Measured {
    seconds: f64,
    rss_kb: u64,
    heap_bytes: u64,
    calls_bytes: u64,
}

/// Starts the fake, runs the batch `RUNS` times in fresh processes and prints the summary.
fn drive() {
    let me = std::env::current_exe().expect("the benchmark's own path");
    let mut fake = Command::new(&me)
        .env(ROLE, "fake")
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fake starts");
    let mut line = String::new();
    BufReader::new(fake.stdout.take().expect("piped stdout"))
        .read_line(&mut line)
        .expect("the fake says where it listens");
    let base = line.trim().to_owned();
    let mut runs: Vec<Measured> = (0..RUNS)
        .map(|_| {
            let output = Command::new(&me)
                .env(ROLE, "run")
                .env(BASE, &base)
                .output()
                .expect("a run");
            assert!(output.status.success(), "a run failed: {output:?}");
            let text = String::from_utf8_lossy(&output.stdout);
            let fields: Vec<f64> = text
                .split_whitespace()
                .map(|f| f.parse().expect("a number"))
                .collect();
            Measured {
                seconds: fields[0],
                rss_kb: fields[1] as u64,
                heap_bytes: fields[2] as u64,
                calls_bytes: fields[3] as u64,
            }
        })
        .collect();
    let fake_rss_kb: u64 = ureq::get(format!("{base}/_peak"))
        .call()
        .expect("the fake's peak")
        .body_mut()
        .read_to_string()
        .expect("a body")
        .trim()
        .parse()
        .expect("kB");
    let _ = fake.kill();
    let _ = fake.wait();
    let times: Vec<String> = runs.iter().map(|r| format!("{:.3}", r.seconds)).collect();
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let rss = runs.iter().map(|r| r.rss_kb).max().unwrap_or(0);
    let heap = runs.iter().map(|r| r.heap_bytes).max().unwrap_or(0);
    let calls = runs.iter().map(|r| r.calls_bytes).max().unwrap_or(0);
    println!(
        "batch: {REQUESTS} requests gathered, submitted and mapped back: median {:.3} s (runs: {times:?})",
        runs[RUNS / 2].seconds
    );
    println!(
        "  tasklisp: peak RSS {} MB; the calls {} MB of heap, the job {} MB more at its peak ({} bytes a request)",
        rss / 1024,
        calls >> 20,
        heap >> 20,
        heap / REQUESTS as u64
    );
    println!(
        "  the fake server (its own process): peak RSS {} MB",
        fake_rss_kb / 1024
    );
}

/// The fake server, until the driver kills it.
fn fake() {
    let (server, base) = lean_batch_fake::listen();
    println!("{base}");
    lean_batch_fake::serve(&server);
}

/// One batch of `REQUESTS` calls; prints the seconds it took, this process's peak RSS
/// (kB), the peak heap the job added to the calls and the calls' own heap (bytes).
fn run_once(base: &str) {
    let job = lean_batch_fake::Job::new(base, REQUESTS);
    let calls = job.calls();
    let before = peak_alloc::reset_peak();
    let started = Instant::now();
    job.run(&calls);
    let elapsed = started.elapsed();
    println!(
        "{} {} {} {before}",
        elapsed.as_secs_f64(),
        lean_batch_fake::peak_rss_kb(),
        peak_alloc::peak() - before
    );
}
