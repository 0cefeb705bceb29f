//! Lenient parsing of a model's JSON answer on any text: a value with the repairs it
//! needed, or a clean failure; text that is JSON already parses to the same value with
//! no repair, strictly or not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;
use tasklisp::internals::task::lenient::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lenient = parse(text, false);
    let strict = parse(text, true);
    if let Ok(json) = serde_json::from_str::<Json>(text) {
        let lenient = lenient.expect("valid JSON parses leniently");
        assert_eq!(lenient.value, json);
        assert!(lenient.repairs.is_empty(), "{:?}", lenient.repairs);
        assert_eq!(strict.expect("valid JSON parses strictly").value, json);
    } else {
        assert!(strict.is_err(), "strict parsing accepted what serde_json refuses");
    }
});
