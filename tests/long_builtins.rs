//! Long builtins meet the limits: every builtin whose loop can run long on big data
//! (JSON text, printing, strings, lists, regular expressions, equality, grouping) calls
//! `Interp::poll` every `POLL_EVERY` items, which counts a unit of fuel and checks the
//! interrupt flag, the deadline and the memory budget. Proven by counting, not timing:
//! one call on a million items spends hundreds of units of fuel, a call on a few items
//! spends none beyond the call itself, and with little fuel left the call ends out of
//! fuel (or past the deadline, or interrupted) from inside the builtin.

use std::sync::atomic::Ordering;
use std::time::Duration;
use tasklisp::internals::value::bounds::POLL_EVERY;
use tasklisp::{Interp, Limits};

/// Items in the big data: enough for 256 polls in one pass.
const ITEMS: u64 = 1 << 20;

/// Builds `big` (a list of `ITEMS` integers), `text` (their JSON), `words` (them
/// separated by spaces), `chars` (a million characters of it), `nested` (each in a
/// list) and `small` (three integers), without limits.
const SETUP: &str = "
    (define big (range 1048576))
    (define big2 (range 1048576))
    (define text (json-stringify big))
    (define words (string-join big \" \"))
    (define chars (substring words 0 1048576))
    (define nested (map list (range 1048576)))
    (define small (list 1 2 3))
    (define table (frequencies big))";

/// One call per family of long builtin, each on the big data and on `small`.
const CALLS: &[(&str, &str)] = &[
    ("(range 1048576)", "(range 3)"),
    ("(zip big big)", "(zip small small)"),
    ("(index-of big -1)", "(index-of small -1)"),
    ("(contains? big -1)", "(contains? small -1)"),
    ("(flatten nested)", "(flatten small)"),
    ("(equal? big big2)", "(equal? small (list 1 2 3))"),
    ("(distinct big)", "(distinct small)"),
    ("(frequencies big)", "(frequencies small)"),
    ("(json-stringify big)", "(json-stringify small)"),
    (
        "(json-stringify big :pretty true)",
        "(json-stringify small :pretty true)",
    ),
    ("(json-parse text)", "(json-parse \"[1, 2, 3]\")"),
    ("(repr big)", "(repr small)"),
    ("(str big)", "(str small)"),
    ("(prn big)", "(prn small)"),
    ("(format \"{}\" big)", "(format \"{}\" small)"),
    ("(string-join big \",\")", "(string-join small \",\")"),
    ("(string-split words \" \")", "(string-split \"a b\" \" \")"),
    ("(string->list chars)", "(string->list \"ab\")"),
    ("(re-seq \"[0-9]+\" words)", "(re-seq \"[0-9]+\" \"1 2\")"),
    (
        "(re-replace \"[0-9]+\" words \"n\")",
        "(re-replace \"[0-9]+\" \"1 2\" \"n\")",
    ),
];

/// Builtins that copy a big list, string or map in one step: each checks the limits
/// once before the copy, so a loop of such copies meets them at every step.
const COPIES: &[(&str, &str)] = &[
    ("(append big big)", "(append small small)"),
    ("(reverse big)", "(reverse small)"),
    ("(take big 1000000)", "(take small 2)"),
    ("(string-upcase words)", "(string-upcase \"ab\")"),
    ("(string-downcase words)", "(string-downcase \"AB\")"),
    (
        "(string-replace words \" \" \",\")",
        "(string-replace \"a b\" \" \" \",\")",
    ),
    ("(keys table)", "(keys {\"a\" 1})"),
    ("(values table)", "(values {\"a\" 1})"),
    ("(assoc table \"x\" 1)", "(assoc {} \"x\" 1)"),
    ("(dissoc table \"1\")", "(dissoc {\"1\" 1} \"1\")"),
    ("(merge table {\"x\" 1})", "(merge {} {\"x\" 1})"),
];

/// An interpreter holding the big data, with no limits yet.
fn prepared() -> Interp {
    let interp = Interp::with_output(Limits::default(), Box::new(std::io::sink()))
        .expect("the prelude loads");
    interp.run_source("<setup>", SETUP).expect("the setup runs");
    interp
}

/// The fuel one run of `code` spends.
fn fuel_spent(interp: &Interp, code: &str) -> u64 {
    let before = interp.fuel_used();
    interp.run_source("<call>", code).expect("the call runs");
    interp.fuel_used() - before
}

fn on_a_large_stack<T: Send + 'static>(test: impl FnOnce() -> T + Send + 'static) -> T {
    tasklisp::run_on_large_stack(&Limits::default(), |_| test()).expect("no panic")
}

#[test]
fn a_call_on_big_data_counts_its_work_as_fuel() {
    on_a_large_stack(|| {
        let interp = prepared();
        for (big, small) in CALLS {
            let on_small = fuel_spent(&interp, small);
            let on_big = fuel_spent(&interp, big);
            // The call itself costs a unit or two; each pass over the million items
            // polls 256 times.
            assert!(on_small <= 2, "{small} spent {on_small}");
            assert!(on_big >= ITEMS / POLL_EVERY, "{big} spent only {on_big}");
        }
    });
}

#[test]
fn a_call_on_big_data_ends_out_of_fuel_from_inside() {
    on_a_large_stack(|| {
        let mut interp = prepared();
        for (big, small) in CALLS {
            interp.limits.fuel = Some(interp.fuel_used() + 10);
            interp
                .run_source("<small>", small)
                .expect("a call on small data stays within the fuel");
            interp.limits.fuel = Some(interp.fuel_used() + 10);
            let e = interp
                .run_source("<big>", big)
                .expect_err("the call runs out of fuel");
            assert_eq!(e.details()["resource"], "fuel", "{big}: {e:?}");
            interp.limits.fuel = None;
        }
    });
}

/// Runs `big` with the deadline already passed, then with Ctrl-C pressed: both end it.
fn assert_stopped_past_the_deadline_and_on_ctrl_c(interp: &mut Interp, big: &str) {
    interp.limits.timeout = Some(Duration::ZERO);
    let e = interp
        .run_source("<big>", big)
        .expect_err("the call meets the deadline");
    assert_eq!(e.reason(), Some("execution_timeout"), "{big}: {e:?}");
    interp.limits.timeout = None;
    interp.interrupt_flag().store(true, Ordering::Relaxed);
    let e = interp
        .run_source("<big>", big)
        .expect_err("the call is interrupted");
    assert_eq!(e.reason(), Some("execution_halted"), "{big}: {e:?}");
    interp.clear_interrupt();
}

#[test]
fn a_call_on_big_data_ends_at_the_deadline_and_on_ctrl_c() {
    on_a_large_stack(|| {
        let mut interp = prepared();
        for (big, _) in CALLS {
            // A limit already passed: the first poll inside the builtin ends the call.
            assert_stopped_past_the_deadline_and_on_ctrl_c(&mut interp, big);
        }
    });
}

#[test]
fn a_copy_of_big_data_meets_the_limits_before_it_starts() {
    on_a_large_stack(|| {
        let mut interp = prepared();
        for (big, small) in COPIES {
            // A copy of a few items is not checked; a copy of a million is refused
            // before it starts.
            interp.limits.timeout = Some(Duration::ZERO);
            interp
                .run_source("<small>", small)
                .expect("a small copy is not checked");
            interp.limits.timeout = None;
            assert_stopped_past_the_deadline_and_on_ctrl_c(&mut interp, big);
        }
    });
}
