//! The XML template loader on any text: parse, validate, resolve references and
//! generate `deftask` forms, or a clean error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = tasklisp::internals::xml::read_str("fuzz.xml", text) {
        let unknown = tasklisp::internals::xml::Unknown::AtCallTime;
        let _ = tasklisp::internals::xml::definitions(&file, Some("ns"), None, &|_| None, unknown);
    }
});
