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

use std::time::Duration;
use tasklisp::provider::batch::{self, Call, Polling};
use tasklisp::provider::http::Endpoint;
use tasklisp::provider::openai::OpenAi;
use tasklisp::provider::{Cancel, Provider, Request};

#[global_allocator]
static ALLOCATOR: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

const REQUESTS: usize = 10_000;
/// The most heap a request may add while its job runs.
const MAX_BYTES_PER_REQUEST: usize = 1_500;

#[test]
fn a_batch_job_adds_little_heap_per_request() {
    let base = lean_batch_fake::start();
    let provider = OpenAi::new(Endpoint {
        base_url: format!("{base}/v1"),
        model: Some("gpt-4o-mini".into()),
        ..Endpoint::default()
    });
    let api = provider.batch().expect("openai has a batch API");
    let requests: Vec<Request> = (0..REQUESTS)
        .map(|i| Request {
            task: "classify".into(),
            system: Some("Answer bug or feature.".into()),
            prompt: format!("Classify issue number {i}: the app crashes on start"),
            round: 1,
            ..Request::default()
        })
        .collect();
    let calls: Vec<Call> = requests
        .iter()
        .enumerate()
        .map(|(i, request)| Call::new(i, request))
        .collect();
    let polling = Polling {
        first: Duration::ZERO,
        max: Duration::ZERO,
    };
    let before = peak_alloc::reset_peak();
    let answers = batch::run(api, &calls, polling, &Cancel::default(), None, &mut |_| {})
        .expect("the job runs");
    let added = peak_alloc::peak() - before;
    assert_eq!(answers.len(), REQUESTS);
    for (i, answer) in answers.iter().enumerate() {
        let answer = answer.as_ref().expect("an answer");
        assert_eq!(answer.content, "bug", "answer {i}");
    }
    let per_request = added / REQUESTS;
    assert!(
        per_request <= MAX_BYTES_PER_REQUEST,
        "the job added {added} bytes of heap at its peak, {per_request} a request"
    );
}
