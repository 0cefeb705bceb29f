//! `pmap`: order, the concurrency bound, errors, deep recursion and overlapping blocking
//! work. Blocking work comes from test builtins that go through `run_blocking`.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[path = "common/script_builtin.rs"]
mod script_builtin;
use script_builtin::SCRIPT;
use tasklisp::internals::builtins::Builtin;
use tasklisp::internals::eval::env::Env;
use tasklisp::internals::eval::fiber::run_blocking;

use tasklisp::internals::symbol::Sym;
use tasklisp::{Cancel, Error, Interp, Limits, Provider, Request, Response, Result, Value};

/// How many blocking calls are running now, the most there ever were, and how many began.
#[derive(Default)]
struct Counters {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    started: AtomicUsize,
}

thread_local! {
    /// The counters of the interpreter on this thread (each test has its own thread).
    static COUNTERS: RefCell<Arc<Counters>> = RefCell::new(Arc::new(Counters::default()));
}

fn counters() -> Arc<Counters> {
    COUNTERS.with(|c| c.borrow().clone())
}

static BLOCKING_SLEEP: Builtin = Builtin {
    name: "blocking-sleep",
    min_args: 1,
    max_args: Some(1),
    func: blocking_sleep,
    doc: "`(blocking-sleep seconds)`: sleeps off the interpreter thread, returns seconds.",
};

/// Sleeps through `run_blocking`, counting how many sleeps overlap.
fn blocking_sleep(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let seconds = match args.first() {
        Some(Value::Int(i)) => *i as f64,
        Some(Value::Float(f)) => *f,
        _ => return Err(Error::eval("blocking-sleep: expected seconds")),
    };
    let counters = counters();
    run_blocking(interp, move || {
        counters.started.fetch_add(1, Ordering::SeqCst);
        let now = counters.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counters.most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs_f64(seconds));
        counters.in_flight.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(args[0].clone())
}

static BLOCKING_MEET: Builtin = Builtin {
    name: "blocking-meet",
    min_args: 1,
    max_args: Some(1),
    func: blocking_meet,
    doc: "`(blocking-meet n)`: waits off the interpreter thread until n calls were in flight at once.",
};

/// Waits through `run_blocking` until `n` calls have been in flight at once (at most
/// 30 s, a hang guard), counting them: proves overlap by events, not by the clock.
fn blocking_meet(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let Some(Value::Int(n)) = args.first() else {
        return Err(Error::eval("blocking-meet: expected a count"));
    };
    let n = usize::try_from(*n).unwrap_or(0);
    let counters = counters();
    run_blocking(interp, move || {
        let now = counters.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counters.most.fetch_max(now, Ordering::SeqCst);
        for _ in 0..3000 {
            if counters.most.load(Ordering::SeqCst) >= n {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        counters.in_flight.fetch_sub(1, Ordering::SeqCst);
    });
    Ok(Value::Nil)
}

static PANIC_IN_WORK: Builtin = Builtin {
    name: "panic-in-work",
    min_args: 0,
    max_args: Some(0),
    func: panic_in_work,
    doc: "`(panic-in-work)`: blocking work that panics.",
};

fn panic_in_work(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    run_blocking(interp, || -> i64 { panic!("worker exploded") });
    Ok(Value::Nil)
}

/// Runs `source` in a fresh interpreter with the test builtins; the value printed, or
/// the error as its JSON map. Also returns the counters.
fn run_with(limits: Limits, source: &str) -> (std::result::Result<String, String>, Arc<Counters>) {
    let source = source.to_owned();
    tasklisp::run_on_large_stack(&limits, move |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        for builtin in [&BLOCKING_SLEEP, &BLOCKING_MEET, &SCRIPT, &PANIC_IN_WORK] {
            interp.define_global(Sym::new(builtin.name), Value::Builtin(builtin));
        }
        let result = interp
            .run_source("<test>", &source)
            .map(|v| tasklisp::write_string(&v))
            .map_err(|e| e.to_json().to_string());
        (result, counters())
    })
    .unwrap()
}

fn run(source: &str) -> std::result::Result<String, String> {
    run_with(Limits::default(), source).0
}

#[test]
fn results_are_in_input_order() {
    assert_eq!(
        run("(pmap (fn (x) (* x x)) (range 10) :concurrency 3)").unwrap(),
        "(0 1 4 9 16 25 36 49 64 81)"
    );
    // Later items finish first; the results still follow the input.
    assert_eq!(
        run("(pmap (fn (x) (blocking-sleep (* 0.02 (- 5 x))) x) (range 5) :concurrency 5)")
            .unwrap(),
        "(0 1 2 3 4)"
    );
}

#[test]
fn builtins_and_an_empty_list() {
    assert_eq!(
        run("(pmap str [1 :a \"b\"])").unwrap(),
        "(\"1\" \":a\" \"b\")"
    );
    assert_eq!(run("(pmap car [])").unwrap(), "()");
}

#[test]
fn the_concurrency_bound_is_respected() {
    let (result, counters) = run_with(
        Limits::default(),
        "(length (pmap (fn (x) (blocking-sleep 0.05)) (range 12) :concurrency 3))",
    );
    assert_eq!(result.unwrap(), "12");
    assert_eq!(counters.most.load(Ordering::SeqCst), 3);
}

#[test]
fn the_default_concurrency_is_eight() {
    let (result, counters) = run_with(
        Limits::default(),
        "(length (pmap (fn (x) (blocking-sleep 0.05)) (range 20)))",
    );
    assert_eq!(result.unwrap(), "20");
    assert_eq!(counters.most.load(Ordering::SeqCst), 8);
}

/// Past the cap of 256 running items (each holds a fiber stack), the rest queue.
#[test]
fn a_concurrency_above_the_cap_queues_the_rest() {
    let (result, counters) = run_with(
        Limits::default(),
        "(length (pmap (fn (x) (blocking-meet 256)) (range 300) :concurrency 100000))",
    );
    assert_eq!(result.unwrap(), "300");
    assert_eq!(counters.most.load(Ordering::SeqCst), 256);
}

#[test]
fn a_bad_concurrency_is_an_error() {
    let e = run("(pmap car [] :concurrency 0)").unwrap_err();
    assert!(e.contains("at least 1, got 0"), "{e}");
    let e = run("(pmap car [] :parallel 2)").unwrap_err();
    assert!(e.contains("unknown option :parallel"), "{e}");
    let e = run("(pmap 1 [])").unwrap_err();
    assert!(e.contains("expected a procedure"), "{e}");
}

#[test]
fn the_lowest_index_failure_is_raised_after_the_others_finish() {
    // Item 5 fails first in time, item 3 later: the error is item 3's.
    let (result, counters) = run_with(
        Limits::default(),
        r#"(pmap (fn (x)
                  (cond ((= x 3) (blocking-sleep 0.2) (error "three"))
                        ((= x 5) (error "five"))
                        (else (blocking-sleep 0.1) x)))
                (range 40) :concurrency 8)"#,
    );
    let e = result.unwrap_err();
    assert!(e.contains("\"message\":\"item 3: three\""), "{e}");
    // After the failure no new item started: only the first window ran.
    assert!(counters.started.load(Ordering::SeqCst) <= 8);
}

#[test]
fn a_failure_can_be_caught_and_the_program_goes_on() {
    assert_eq!(
        run(
            r#"(define r (try (pmap (fn (x) (blocking-sleep 0.01) (fail :llm_error "down")) [1 2])
                             (catch e e.reason)))
               (list r (pmap (fn (x) (+ x 1)) [1 2]))"#
        )
        .unwrap(),
        "(\"llm_error\" (2 3))"
    );
}

#[test]
fn a_panic_in_blocking_work_is_an_error_not_a_crash() {
    let e = run("(pmap (fn (x) (panic-in-work)) [1 2])").unwrap_err();
    assert!(
        e.contains("unexpected_error") && e.contains("worker exploded"),
        "{e}"
    );
}

const DEEP: &str = "(define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))";

#[test]
fn deep_recursion_in_an_item_is_a_clean_error() {
    let source = format!(
        "{DEEP} (list (try (pmap deep [10 100000]) (catch e e.type)) (pmap deep [100 2000]) (deep 5000))"
    );
    assert_eq!(
        run(&source).unwrap(),
        "(\"RESOURCE_EXHAUSTION\" (100 2000) 5000)"
    );
}

#[test]
fn running_out_of_an_items_stack_is_a_clean_error() {
    // The frame limit is far away, so the item's own stack runs out first.
    let limits = Limits {
        max_depth: 1_000_000,
        ..Limits::default()
    };
    let source = format!(
        "{DEEP} (list (try (pmap deep [10 900000]) (catch e e.details.resource)) (pmap deep [3]))"
    );
    assert_eq!(run_with(limits, &source).0.unwrap(), "(\"stack\" (3))");
}

#[test]
fn blocking_work_overlaps() {
    let (result, counters) = run_with(
        Limits::default(),
        "(length (pmap (fn (x) (blocking-sleep 0.2)) (range 16) :concurrency 16))",
    );
    assert_eq!(result.unwrap(), "16");
    assert_eq!(counters.most.load(Ordering::SeqCst), 16);
}

/// A shell command for item `x` of `n` that overlap: it marks its start in `dir`, waits
/// (at most 30 s, a hang guard) until all `n` have started, then prints how many it saw.
/// Items that ran one after another would print fewer than `n`.
fn barrier(dir: &std::path::Path, n: usize) -> String {
    format!(
        "touch {d}/$0; i=0; while [ $(ls {d} | wc -l) -lt {n} ] && [ $i -lt 300 ]; \
         do sleep 0.1; i=$((i+1)); done; ls {d} | wc -l | tr -d ' '",
        d = dir.display()
    )
}

#[test]
fn scripts_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(&format!(
        r#"(pmap (fn (x) (script "sh" "-c" {:?} (str x))) (range 16) :concurrency 16)"#,
        barrier(dir.path(), 16)
    ));
    assert_eq!(
        result.unwrap(),
        format!("({})", vec!["\"16\\n\""; 16].join(" "))
    );
}

#[test]
fn a_nested_pmap_runs_inside_its_item() {
    assert_eq!(
        run("(pmap (fn (x) (pmap (fn (y) (* x y)) [1 2 3])) [1 2])").unwrap(),
        "((1 2 3) (2 4 6))"
    );
    // The inner items run one after another, the outer ones overlap: at most 4 at once.
    let (result, counters) = run_with(
        Limits::default(),
        "(pmap (fn (x) (length (pmap (fn (y) (blocking-sleep 0.2)) [1 2]))) [1 2 3 4])",
    );
    assert_eq!(result.unwrap(), "(2 2 2 2)");
    assert_eq!(counters.most.load(Ordering::SeqCst), 4);
}

#[test]
fn closures_see_their_environment_and_state_is_shared() {
    assert_eq!(
        run(r#"(define total 0)
               (define (add! x) (blocking-sleep 0.01) (set! total (+ total x)) x)
               (let ((k 10)) (pmap (fn (x) (add! (* k x))) (range 5)))
               total"#)
        .unwrap(),
        "100"
    );
}

#[test]
fn script_tasks_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(&format!(
        r#"(deftask meet (n) :command ["sh" "-c" {:?} n])
           (map (fn (r) r.content) (pmap meet (range 16) :concurrency 16))"#,
        barrier(dir.path(), 16)
    ));
    assert_eq!(
        result.unwrap(),
        format!("({})", vec!["\"16\\n\""; 16].join(" "))
    );
}

/// A native provider that answers with the prompt once `n` calls are in flight at once
/// (or after 30 s, a hang guard), and records the most it saw.
struct MeetingEcho {
    n: usize,
    in_flight: AtomicUsize,
    most: AtomicUsize,
}

impl Provider for MeetingEcho {
    fn name(&self) -> &str {
        "meeting-echo"
    }

    fn complete(&self, request: &Request, _: &Cancel) -> Result<Response> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        for _ in 0..3000 {
            if self.most.load(Ordering::SeqCst) >= self.n {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        Ok(Response {
            content: request.prompt.clone(),
            ..Response::default()
        })
    }
}

#[test]
fn model_calls_overlap() {
    let provider = Arc::new(MeetingEcho {
        n: 16,
        in_flight: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    });
    let native = provider.clone();
    let result = tasklisp::run_on_large_stack(&Limits::default(), move |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        interp.set_native_provider(native);
        let value = interp
            .run_source(
                "<test>",
                r#"(deftask say (x) :prompt "item {{x}}")
                   (map (fn (r) r.content) (pmap say (range 16) :concurrency 16))"#,
            )
            .unwrap();
        tasklisp::write_string(&value)
    })
    .unwrap();
    assert!(result.starts_with("(\"item 0\" \"item 1\""), "{result}");
    assert_eq!(provider.most.load(Ordering::SeqCst), 16);
}

#[test]
fn each_item_counts_its_own_task_depth() {
    let result = run(r#"(deftask nap (n) :command ["sleep" "0.05"])
                        (length (pmap nap (range 120) :concurrency 120))"#);
    assert_eq!(result.unwrap(), "120");
}
