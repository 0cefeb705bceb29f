//! The batch result mapper over arbitrary output files: answers in any order, missing,
//! repeated, or for ids never submitted. Each submitted id gets exactly one outcome:
//! its answer when the output gives it once and names no stranger, else a failure that
//! says which of the three went wrong.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tasklisp::internals::provider::batch::Answered;
use tasklisp::Response;

fuzz_target!(|data: &[u8]| {
    let Some((&count, lines)) = data.split_first() else {
        return;
    };
    // Up to 16 submitted ids; each further byte is one output line answering id `b % 20`
    // (16 and more: an id never submitted).
    let submitted: Vec<String> = (0..count % 16).map(|i| format!("item-{i}-round-1")).collect();
    let ids: Vec<&str> = submitted.iter().map(String::as_str).collect();
    let mut answered = Answered::new(&ids);
    let mut times = vec![0usize; ids.len()];
    let mut stranger = false;
    for &byte in lines {
        let index = usize::from(byte % 20);
        match times.get_mut(index) {
            Some(n) => *n += 1,
            None => stranger = true,
        }
        let response = Response {
            content: format!("answer {index}"),
            ..Response::default()
        };
        answered.take(&format!("item-{index}-round-1"), Ok(response));
    }
    let results = answered.into_results("job", "completed");
    assert_eq!(results.len(), ids.len());
    for ((result, n), index) in results.iter().zip(&times).zip(0..) {
        match result {
            Ok(response) => {
                assert!(!stranger && *n == 1, "an answer kept for id {index} given {n} times");
                assert_eq!(response.content, format!("answer {index}"));
            }
            Err(e) => {
                let message = e.to_string();
                let expected = if stranger {
                    "never submitted"
                } else if *n == 0 {
                    "without an answer"
                } else {
                    "more than once"
                };
                assert!(stranger || *n != 1, "an id answered once failed: {message}");
                assert!(message.contains(expected), "{message}");
            }
        }
    }
});
