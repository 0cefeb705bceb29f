//! The language server on any bytes as its standard input: the framing (headers that are
//! not UTF-8, too long, lengths missing, repeated or absurd, bodies cut short) and the
//! message loop behind it (any JSON as a request, any text opened and checked). It must
//! end when the input does, with status 0 or 1, and everything it wrote must be whole
//! messages: a `Content-Length` header, then that many bytes of a JSON-RPC object.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tasklisp::internals::lsp::{serve_on, Help};
use tasklisp::Limits;

/// The messages the server wrote, each checked whole.
fn messages(mut output: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    while !output.is_empty() {
        let end = output
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header ends with a blank line");
        let header = std::str::from_utf8(&output[..end]).expect("a UTF-8 header");
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .expect("the header is the length");
        let body = &output[end + 4..end + 4 + length];
        let message: Value = serde_json::from_slice(body).expect("the body is JSON");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        out.push(message);
        output = &output[end + 4 + length..];
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let help = Help {
        describe: |_, name| format!("nothing is named {name}"),
        names: |_| Vec::new(),
    };
    let mut output = Vec::new();
    let status = serve_on(&mut &data[..], &mut output, Limits::default(), help);
    assert!(status == 0 || status == 1, "status {status}");
    messages(&output);
});
