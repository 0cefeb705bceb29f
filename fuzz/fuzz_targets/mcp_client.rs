//! The MCP client's message loop on any bytes a server could print: the bytes are read
//! as its lines (each within the size limit) into the client's bounded inbox, the server
//! then gone; the client shakes hands, lists tools (paging), and calls a tool, answering
//! the server's own requests on the way. Whatever arrives (garbage, answers to nobody,
//! floods of pings and notifications, errors, unknown versions) must end in an answer or
//! a clean failure naming the server — no panic, no wait past the server's end.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tasklisp::internals::mcp::{forward_lines, Client, Inbox, Transport, Until};

/// A server that takes every message (and counts them) and answers nothing itself.
#[derive(Default)]
struct Sink(AtomicUsize);

impl Transport for Sink {
    fn send(&self, _: &serde_json::Value, _: &Until) -> Result<(), String> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn close(&self) {}
}

fuzz_target!(|data: &[u8]| {
    let inbox = Arc::new(Inbox::default());
    forward_lines(&mut std::io::Cursor::new(data), &inbox);
    inbox.close("exited".into());
    let interrupted = || -> tasklisp::Result<()> { Ok(()) };
    // Far above the run: the inbox is closed, so no wait lasts.
    let timeout = Duration::from_secs(3600);
    let connected = Client::connect("fuzz", Box::new(Sink::default()), inbox, timeout, &interrupted);
    let client = match connected {
        Ok(client) => client,
        Err(error) => return assert!(error.message().starts_with("MCP server `fuzz`: ")),
    };
    let listed = client.list("tools/list", "tools", &interrupted);
    let called = client.request("tools/call", json!({"name": "t", "arguments": {}}), &interrupted);
    for outcome in [listed.map(drop), called.map(drop)] {
        if let Err(error) = outcome {
            assert!(error.message().starts_with("MCP server `fuzz`: "), "{}", error.message());
        }
    }
});
