//! The server-sent-events parser on any bytes: the same events (and the same end)
//! however the bytes are cut into reads — whole, in pieces of 1 to 8 bytes, one at a
//! time — and no event longer than the limit.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tasklisp::internals::provider::sse::{Event, Parser, MAX_EVENT_BYTES};

/// The events of `bytes` fed in pieces of `size`, then the stream's end; `None` marks
/// an error (after which nothing more is read).
fn events(bytes: &[u8], size: usize) -> Vec<Option<Event>> {
    let mut parser = Parser::default();
    let mut out = Vec::new();
    for piece in bytes.chunks(size.max(1)) {
        match parser.feed(piece) {
            Ok(events) => out.extend(events.into_iter().map(Some)),
            Err(_) => {
                out.push(None);
                return out;
            }
        }
    }
    match parser.finish() {
        Ok(last) => out.extend(last.map(Some)),
        Err(_) => out.push(None),
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, bytes)) = data.split_first() else {
        return;
    };
    let whole = events(bytes, bytes.len());
    for event in whole.iter().flatten() {
        assert!(event.data.len() < MAX_EVENT_BYTES);
    }
    assert_eq!(events(bytes, usize::from(cut % 8) + 1), whole);
    assert_eq!(events(bytes, 1), whole);
});
