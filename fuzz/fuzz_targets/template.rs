//! Prompt templates on any text: parsed, then rendered by a task call (echo provider)
//! with a string, a nested map and a list in scope — a prompt or a clean error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tasklisp::internals::task::Template;
use tasklisp::write_string;
use tasklisp::{Interp, Limits, Value};

thread_local! {
    static INTERP: Option<Interp> = Interp::new(Limits::default()).ok();
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let template = Template::parse(text);
    assert_eq!(template.source(), text);
    let literal = write_string(&Value::from(text));
    let program = format!(
        "(deftask fuzz-template (name user items) :prompt {literal})
         (fuzz-template \"Ada\" {{\"name\" \"Bo\" \"tags\" [\"a\" {{\"k\" 1}}]}} [1 [2 3]])"
    );
    INTERP.with(|interp| {
        if let Some(interp) = interp {
            let _ = interp.run_source("fuzz", &program);
        }
    });
});
