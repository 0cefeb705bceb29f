//! Gathering and mapping back 100,000 batch requests: the JSONL built from the requests,
//! uploaded, the job created and polled, the output file downloaded and every line
//! mapped back to its request — against an in-process fake OpenAI batch server that
//! answers at once, so what is timed is tasklisp's side (and the fake's string work).
//!
//! `cargo bench --bench batch` prints the median of 3 runs and the peak resident memory.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tasklisp::provider::batch::{self, Call, Polling};
use tasklisp::provider::http::Endpoint;
use tasklisp::provider::openai::OpenAi;
use tasklisp::provider::{Cancel, Request};

const REQUESTS: usize = 100_000;

fn main() {
    let base = fake_server();
    let provider = OpenAi::new(Endpoint {
        base_url: format!("{base}/v1"),
        model: Some("gpt-4o-mini".into()),
        ..Endpoint::default()
    });
    let api = tasklisp::provider::Provider::batch(&provider).expect("openai has a batch API");
    let mut times = Vec::new();
    for _ in 0..3 {
        let calls: Vec<Call> = (0..REQUESTS)
            .map(|i| {
                Call::new(
                    i,
                    Request {
                        task: "classify".into(),
                        system: Some("Answer bug or feature.".into()),
                        prompt: format!("Classify issue number {i}: the app crashes on start"),
                        round: 1,
                        ..Request::default()
                    },
                )
            })
            .collect();
        let started = Instant::now();
        let answers = batch::run(
            api,
            &calls,
            Polling {
                first: Duration::ZERO,
                max: Duration::ZERO,
            },
            &Cancel::default(),
            None,
            &mut |_| {},
        )
        .expect("the job runs");
        let elapsed = started.elapsed();
        assert_eq!(answers.len(), REQUESTS);
        assert!(answers
            .iter()
            .all(|a| a.as_ref().is_ok_and(|r| r.content == "bug")));
        times.push(elapsed);
    }
    times.sort();
    println!(
        "batch: {REQUESTS} requests gathered, submitted and mapped back: median {:.3} s (runs: {:?}); peak RSS {} MB",
        times[1].as_secs_f64(),
        times.iter().map(|t| format!("{:.3}", t.as_secs_f64())).collect::<Vec<_>>(),
        peak_rss_kb() / 1024
    );
}

/// `VmHWM` of this process, in kB.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// A fake OpenAI batch server that completes every job at once.
fn fake_server() -> String {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("listen"));
    let address = server.server_addr().to_ip().expect("an IP address");
    std::thread::spawn(move || {
        let mut upload = Vec::new();
        for mut request in server.incoming_requests() {
            let mut body = Vec::new();
            let _ = request.as_reader().read_to_end(&mut body);
            let url = request.url().to_owned();
            let answer: Vec<u8> = match url.as_str() {
                "/v1/files" => {
                    upload = body;
                    br#"{"id":"file-in"}"#.to_vec()
                }
                "/v1/batches" => br#"{"id":"batch_1","status":"validating"}"#.to_vec(),
                "/v1/batches/batch_1" => br#"{"id":"batch_1","status":"completed","output_file_id":"file-out","request_counts":{"total":100000,"completed":100000,"failed":0}}"#.to_vec(),
                "/v1/files/file-out/content" => output_for(&upload),
                _ => b"{}".to_vec(),
            };
            let _ = request.respond(tiny_http::Response::from_data(answer));
        }
    });
    format!("http://{address}")
}

/// One output line for each line of the uploaded file, found by its custom id.
fn output_for(upload: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(upload);
    let mut out = Vec::with_capacity(upload.len());
    for line in text.lines() {
        let Some(rest) = line.split("\"custom_id\":\"").nth(1) else {
            continue;
        };
        let id = rest.split('"').next().unwrap_or("");
        out.extend_from_slice(
            format!(
                r#"{{"id":"r","custom_id":"{id}","response":{{"status_code":200,"body":{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"bug"}}}}],"usage":{{"prompt_tokens":12,"completion_tokens":1}}}}}},"error":null}}"#
            )
            .as_bytes(),
        );
        out.push(b'\n');
    }
    out
}
