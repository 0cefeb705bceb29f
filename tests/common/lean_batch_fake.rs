//! A lean fake of OpenAI's batch endpoints, for measuring tasklisp's memory rather than
//! the fake's: every job completes at once; the uploaded file is read line by line and
//! only its custom ids are kept, and the output file is written as it is sent (one line
//! a custom id, answering `bug`). `GET /_peak` answers the process's peak resident
//! memory in kB, for when the fake runs in a process of its own. [`Job`] is the job the
//! memory test and the benchmark send it.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;
use tasklisp::internals::provider::batch::{self, Call, Polling};
use tasklisp::internals::provider::http::Endpoint;
use tasklisp::internals::provider::openai::OpenAi;
use tasklisp::Result;
use tasklisp::{Cancel, Provider, Request, Response};

/// A job of `n` classification requests for the fake at `base`.
pub struct Job {
    provider: OpenAi,
    requests: Vec<Request>,
}

impl Job {
    pub fn new(base: &str, n: usize) -> Job {
        let provider = OpenAi::new(Endpoint {
            base_url: format!("{base}/v1"),
            model: Some("gpt-4o-mini".into()),
            ..Endpoint::default()
        });
        let requests = (0..n)
            .map(|i| Request {
                task: "classify".into(),
                system: Some("Answer bug or feature.".into()),
                prompt: format!("Classify issue number {i}: the app crashes on start"),
                round: 1,
                ..Request::default()
            })
            .collect();
        Job { provider, requests }
    }

    /// A call for each request, as `pmap` makes them.
    pub fn calls(&self) -> Vec<Call<'_>> {
        self.requests
            .iter()
            .enumerate()
            .map(|(i, request)| Call::new(i, request))
            .collect()
    }

    /// Runs `calls` as one job, polling without a pause; every call must be answered
    /// `bug`.
    pub fn run(&self, calls: &[Call]) {
        let api = self.provider.batch().expect("openai has a batch API");
        let polling = Polling {
            first: Duration::ZERO,
            max: Duration::ZERO,
        };
        let answers: Vec<Result<Response>> =
            batch::run(api, calls, polling, &Cancel::default(), None, &mut |_| {})
                .expect("the job runs");
        assert_eq!(answers.len(), calls.len());
        for (i, answer) in answers.iter().enumerate() {
            let answer = answer.as_ref().expect("an answer");
            assert_eq!(answer.content, "bug", "answer {i}");
        }
    }
}

/// Starts the fake on a thread of this process and returns its base URL.
#[allow(dead_code)] // the benchmark runs the fake in a process of its own
pub fn start() -> String {
    let (server, base) = listen();
    std::thread::spawn(move || serve(&server));
    base
}

/// A server on a free port of 127.0.0.1, and its base URL.
pub fn listen() -> (tiny_http::Server, String) {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("listen");
    let address = server.server_addr().to_ip().expect("an IP address");
    (server, format!("http://{address}"))
}

/// Answers requests until the server is dropped.
pub fn serve(server: &tiny_http::Server) {
    let mut ids: Vec<String> = Vec::new();
    for mut request in server.incoming_requests() {
        let url = request.url().to_owned();
        let answer = match url.as_str() {
            "/v1/files" => {
                ids = custom_ids(request.as_reader());
                r#"{"id":"file-in"}"#.to_owned()
            }
            "/v1/batches" => r#"{"id":"batch_1","status":"validating"}"#.to_owned(),
            "/v1/batches/batch_1" => format!(
                r#"{{"id":"batch_1","status":"completed","output_file_id":"file-out","request_counts":{{"total":{0},"completed":{0},"failed":0}}}}"#,
                ids.len()
            ),
            "/v1/files/file-out/content" => {
                let output = Output::new(std::mem::take(&mut ids));
                let length = output.len();
                let response =
                    tiny_http::Response::new(200.into(), Vec::new(), output, Some(length), None);
                let _ = request.respond(response);
                continue;
            }
            "/_peak" => peak_rss_kb().to_string(),
            _ => "{}".to_owned(),
        };
        let _ = request.respond(tiny_http::Response::from_string(answer));
    }
}

/// The custom ids of an uploaded multipart body, read a line at a time.
fn custom_ids(body: &mut dyn Read) -> Vec<String> {
    BufReader::new(body)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|line| {
            let line = String::from_utf8(line).ok()?;
            let rest = line.split("\"custom_id\":\"").nth(1)?;
            rest.split('"').next().map(str::to_owned)
        })
        .collect()
}

const BEFORE_ID: &str = r#"{"id":"r","custom_id":""#;
const AFTER_ID: &str = r#"","response":{"status_code":200,"body":{"choices":[{"index":0,"message":{"role":"assistant","content":"bug"}}],"usage":{"prompt_tokens":12,"completion_tokens":1}}},"error":null}
"#;

/// The output file, one line a custom id, made as it is read.
struct Output {
    ids: std::vec::IntoIter<String>,
    line: Vec<u8>,
    sent: usize,
    length: usize,
}

impl Output {
    fn new(ids: Vec<String>) -> Output {
        let length = ids
            .iter()
            .map(|id| BEFORE_ID.len() + id.len() + AFTER_ID.len())
            .sum();
        Output {
            ids: ids.into_iter(),
            line: Vec::new(),
            sent: 0,
            length,
        }
    }

    fn len(&self) -> usize {
        self.length
    }
}

impl Read for Output {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.sent == self.line.len() {
            let Some(id) = self.ids.next() else {
                return Ok(0);
            };
            self.line.clear();
            self.line.extend_from_slice(BEFORE_ID.as_bytes());
            self.line.extend_from_slice(id.as_bytes());
            self.line.extend_from_slice(AFTER_ID.as_bytes());
            self.sent = 0;
        }
        let rest = &self.line[self.sent..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.sent += n;
        Ok(n)
    }
}

/// `VmHWM` of this process (its peak resident memory), in kB.
pub fn peak_rss_kb() -> u64 {
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
