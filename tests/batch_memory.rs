//! The memory a batch job takes, locked in without timing: 10,000 requests gathered
//! into JSONL, uploaded, the job polled, the output file downloaded and every line
//! mapped back, against an in-process fake (`common/lean_batch_fake.rs`) that keeps
//! only the custom ids. A counting allocator measures the most heap the job added to
//! the calls it was given. The job once held every request and every output line as a
//! JSON value at once (about 3,500 bytes a request); it now holds the JSONL text, the
//! downloaded file and the answers (about 750).

#[path = "common/lean_batch_fake.rs"]
mod lean_batch_fake;
#[path = "common/peak_alloc.rs"]
mod peak_alloc;

#[global_allocator]
static ALLOCATOR: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

const REQUESTS: usize = 10_000;
/// The most heap a request may add while its job runs.
const MAX_BYTES_PER_REQUEST: usize = 1_500;

#[test]
fn a_batch_job_adds_little_heap_per_request() {
    let job = lean_batch_fake::Job::new(&lean_batch_fake::start(), REQUESTS);
    let calls = job.calls();
    let before = peak_alloc::reset_peak();
    job.run(&calls);
    let added = peak_alloc::peak() - before;
    let per_request = added / REQUESTS;
    assert!(
        per_request <= MAX_BYTES_PER_REQUEST,
        "the job added {added} bytes of heap at its peak, {per_request} a request"
    );
}
