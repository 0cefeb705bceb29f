//! Any bytes as the raw HTTP response of a model server on 127.0.0.1 (status line,
//! headers, a body with a length, chunked or cut short; server-sent events or JSON),
//! read by the `openai` or `anthropic` provider, streamed or whole: an answer or an
//! `llm_error`, never a panic or a hang; a streamed answer's pieces make its content.
//! The first byte picks the provider and the mode, the rest is the response.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use tasklisp::internals::provider::build;
use tasklisp::{Cancel, Message, Request};

/// The server: answers every connection with the current response, then closes it.
struct Server {
    address: String,
    response: Arc<Mutex<Vec<u8>>>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let address = listener.local_addr().expect("an address").to_string();
        let response = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&response);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let bytes = shared.lock().map(|r| r.clone()).unwrap_or_default();
                let _ = answer(stream, &bytes);
            }
        });
        Server { address, response }
    })
}

/// Reads the request (head, then `content-length` bytes) and writes `bytes`.
fn answer(mut stream: TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    let mut reader = BufReader::new(&mut stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    reader.read_exact(&mut vec![0; length])?;
    stream.write_all(bytes)?;
    stream.shutdown(Shutdown::Both)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, response)) = data.split_first() else {
        return;
    };
    let server = server();
    if let Ok(mut current) = server.response.lock() {
        *current = response.to_vec();
    }
    let (kind, base) = match mode % 2 {
        0 => ("openai", format!("http://{}/v1", server.address)),
        _ => ("anthropic", format!("http://{}", server.address)),
    };
    let options = json!({"base_url": base, "model": "m", "max_retries": 0, "timeout": 10});
    let provider = build(kind, &options, &|_| None).expect("a provider");
    let request = Request {
        task: "fuzz".into(),
        prompt: "p".into(),
        round: 1,
        messages: vec![Message::user("p")],
        ..Request::default()
    };
    let cancel = Cancel::default();
    let mut pieces = String::new();
    let streamed = mode / 2 % 2 == 1;
    let result = if streamed {
        provider.stream(&request, &cancel, &mut |piece| pieces.push_str(piece))
    } else {
        provider.complete(&request, &cancel)
    };
    match result {
        Ok(answer) if streamed => assert_eq!(pieces, answer.content),
        Ok(_) => {}
        Err(error) => assert_eq!(error.reason(), Some("llm_error"), "{error}"),
    }
});
