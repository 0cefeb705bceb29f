//! The `<case test>` language (infix or S-expression) on any text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tasklisp::internals::xml::text::Text;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = tasklisp::internals::source::add_source("fuzz-test", text);
    let mut test = Text::empty(source, 0);
    test.push_verbatim(text, 0);
    let _ = tasklisp::internals::xml::infix::compile_test(&test);
});
