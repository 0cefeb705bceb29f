//! `tasklisp log RUN`'s call tree over arbitrary parent links (missing parents, cycles,
//! self-parents, duplicate sequence numbers, chains thousands deep): every call is
//! written exactly once, and no line is longer than the indentation cap plus its text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tasklisp::internals::runlog::view::write_call_tree;

fuzz_target!(|data: &[u8]| {
    // Two bytes a call: its sequence number and its parent (0: none). A leading 0xff
    // byte makes one long chain of the bytes' count, to reach the indentation cap.
    let calls: Vec<_> = match data.split_first() {
        Some((0xff, rest)) => (1..=rest.len() as i64 * 8)
            .map(|seq| json!({"seq": seq, "parent": (seq > 1).then_some(seq - 1), "kind": "task", "task": "t", "status": "ok"}))
            .collect(),
        _ => data
            .chunks(2)
            .map(|pair| {
                let seq = i64::from(pair[0]);
                let parent = pair.get(1).filter(|&&p| p != 0).map(|&p| i64::from(p));
                json!({"seq": seq, "parent": parent, "kind": "task", "task": "t", "status": "ok"})
            })
            .collect(),
    };
    let mut out = Vec::new();
    write_call_tree(&calls, &mut out).expect("a Vec takes every line");
    let text = String::from_utf8(out).expect("the tree is UTF-8");
    assert_eq!(text.lines().count(), calls.len(), "each call once:\n{text}");
    for line in text.lines() {
        assert!(line.len() <= 2 * 32 + 120, "line too long: {line}");
    }
});
