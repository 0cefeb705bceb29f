//! The reader on any text: a syntax tree or a clean error, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tasklisp::internals::eval::reader::read_source("fuzz", text);
    }
});
