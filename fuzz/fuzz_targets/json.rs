//! JSON round trips: JSON → value → JSON keeps every value (numbers that fit an i64 or
//! an f64 exactly), a second round changes nothing, and a value's printed form reads
//! back as an equal value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;
use tasklisp::{from_json, to_json, write_string, Interp, Limits};

thread_local! {
    static INTERP: Option<Interp> = Interp::new(Limits::default()).ok();
}

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<Json>(data) else {
        return;
    };
    let value = from_json(&json);
    let Ok(once) = to_json(&value) else {
        return;
    };
    if !has_wide_unsigned(&json) {
        assert_eq!(once, json, "JSON → value → JSON changed the value");
    }
    let twice = to_json(&from_json(&once)).expect("a converted value converts again");
    assert_eq!(twice, once, "a second round trip changed the value");

    let printed = write_string(&value);
    INTERP.with(|interp| {
        let Some(interp) = interp else { return };
        let read = interp
            .run_source("fuzz", &format!("(quote {printed})"))
            .expect("a printed value reads back");
        assert!(read.equal(&value), "{printed} read back as {}", write_string(&read));
    });
});

/// Whether a number in `json` is an integer beyond i64 (it becomes a float).
fn has_wide_unsigned(json: &Json) -> bool {
    match json {
        Json::Number(n) => n.is_u64() && n.as_i64().is_none(),
        Json::Array(items) => items.iter().any(has_wide_unsigned),
        Json::Object(map) => map.values().any(has_wide_unsigned),
        _ => false,
    }
}
