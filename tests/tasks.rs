//! Rust-level tests of the task runtime: the library API, native providers, metrics.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tasklisp::internals::task::{Registered, TaskKind};
use tasklisp::write_string;
use tasklisp::{Cancel, ErrorKind, Interp, Limits, Provider, Request, Response, Usage};

#[path = "common/binary.rs"]
mod binary;
mod common;
use common::lisp_blocks;

/// What the recording provider saw of a request: prompt, system, model, JSON mode, round.
type SeenRequest = (String, Option<String>, Option<String>, bool, u32);

/// Runs `f` with a fresh interpreter on a large stack.
fn with_interp<R: Send + 'static>(f: impl FnOnce(&Interp) -> R + Send + 'static) -> R {
    tasklisp::run_on_large_stack(&Limits::default(), |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        f(&interp)
    })
    .unwrap()
}

fn eval(interp: &Interp, code: &str) -> String {
    write_string(&interp.run_source("<test>", code).unwrap())
}

fn error(interp: &Interp, code: &str) -> tasklisp::Error {
    interp.run_source("<test>", code).unwrap_err()
}

#[test]
fn the_repl_replaces_a_redefined_task() {
    with_interp(|interp| {
        eval(interp, r#"(deftask t () "one")"#);
        assert_eq!(
            error(interp, r#"(deftask t () "two")"#).kind(),
            ErrorKind::Validation
        );
        interp.tasks.set_replace_on_redefine(true);
        eval(interp, r#"(deftask t () "two")"#);
        assert_eq!(eval(interp, r#"(get (t) "content")"#), "\"two\"");
        assert_eq!(eval(interp, "(task-names)"), "(\"t\")");
    });
}

#[test]
fn a_duplicate_from_another_file_names_both_files() {
    with_interp(|interp| {
        interp
            .loading()
            .borrow_mut()
            .push(PathBuf::from("lib/a.sexp"));
        eval(interp, r#"(deftask shared () "a")"#);
        interp.loading().borrow_mut().pop();
        interp
            .loading()
            .borrow_mut()
            .push(PathBuf::from("lib/b.sexp"));
        let e = error(interp, r#"(deftask shared () "b")"#);
        interp.loading().borrow_mut().pop();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert!(e.message().contains("lib/a.sexp"), "{}", e.message());
        assert!(e.message().contains("lib/b.sexp"), "{}", e.message());
        assert_eq!(e.details()["task"], "shared");
    });
}

#[test]
fn the_library_finds_tasks_by_name_type_and_subtype() {
    with_interp(|interp| {
        eval(
            interp,
            r#"(deftask judge (x) :prompt "{{x}}" :subtype "evaluator")
               (deftask plain (x) :prompt "{{x}}")
               (deftask run (x) :command ["true"])"#,
        );
        let names = |kind, subtype| -> Vec<String> {
            interp
                .tasks
                .by_type(kind, subtype)
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(names(Some(TaskKind::Atomic), None), ["judge", "plain"]);
        assert_eq!(names(Some(TaskKind::Atomic), Some("evaluator")), ["judge"]);
        assert_eq!(names(Some(TaskKind::Script), None), ["run"]);
        assert!(interp
            .tasks
            .get("judge")
            .is_some_and(|t| t.subtype() == Some("evaluator")));
        assert!(interp.tasks.get("nobody").is_none());
        assert_eq!(
            eval(interp, r#"(task-names :subtype "evaluator")"#),
            "(\"judge\")"
        );
        let judge = interp.tasks.get("judge").unwrap();
        assert_eq!(judge.describe_json()["subtype"], "evaluator");
        assert_eq!(write_string(&judge.field("params")), "(\"x\")");
    });
}

#[test]
fn registering_reports_a_replacement() {
    with_interp(|interp| {
        eval(interp, r#"(deftask t () "one")"#);
        interp.tasks.set_replace_on_redefine(true);
        let task = interp.tasks.get("t").unwrap();
        assert_eq!(interp.tasks.register(task).unwrap(), Registered::Replaced);
    });
}

/// A native provider that records what it is sent and reports usage.
struct Recorder {
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn complete(&self, request: &Request, _cancel: &Cancel) -> tasklisp::Result<Response> {
        self.seen.lock().unwrap().push(request.clone());
        Ok(Response {
            content: format!("{{\"echo\": {:?}}}", request.prompt),
            usage: Some(Usage::new(11, 4)),
            ..Response::default()
        })
    }
}

#[test]
fn native_providers_get_the_request_and_report_usage() {
    let (requests, metrics) = with_interp(|interp| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        interp.set_native_provider(Arc::new(Recorder { seen: seen.clone() }));
        eval(
            interp,
            r#"(deftask ask (q) :system "sys {{q}}" :prompt "ask {{q}}" :model "m" :output "json")"#,
        );
        assert_eq!(
            eval(interp, r#"(get-in (ask "x") ["parsedContent" "echo"])"#),
            "\"ask x\""
        );
        // with-provider swaps the native provider out and back in
        eval(interp, r#"(with-provider (fn (req) "{}") (ask "y"))"#);
        eval(interp, r#"(ask "z")"#);
        let requests: Vec<SeenRequest> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r.prompt.clone(),
                    r.system.clone(),
                    r.model.clone(),
                    r.json_mode,
                    r.round,
                )
            })
            .collect();
        (requests, eval(interp, "(resource-metrics)"))
    });
    assert_eq!(
        requests,
        [
            (
                "ask x".into(),
                Some("sys x".into()),
                Some("m".into()),
                true,
                1
            ),
            (
                "ask z".into(),
                Some("sys z".into()),
                Some("m".into()),
                true,
                1
            ),
        ]
    );
    // the with-provider session counts on its own: the outer one saw two turns
    assert!(metrics.contains("\"turns\" {\"used\" 2"), "{metrics}");
    assert!(metrics.contains("\"used\" 15"), "{metrics}");
}

#[test]
fn errors_inside_tasks_keep_their_span_and_kind() {
    with_interp(|interp| {
        let e = error(interp, "(deftask t (x) (car x)) (t 1)");
        assert_eq!(e.kind(), ErrorKind::Eval);
        assert!(e.span().is_some());
    });
}

#[test]
fn task_calls_from_builtins_see_the_builtins_caller() {
    with_interp(|interp| {
        eval(interp, "(deftask add-k (x) (+ x k))");
        assert_eq!(
            eval(
                interp,
                "(let ((k 10)) (map (fn (r) r.parsedContent) (map add-k [1 2])))"
            ),
            "(11 12)"
        );
        assert_eq!(
            eval(
                interp,
                "(let ((k 1)) (get (apply add-k [1]) \"parsedContent\"))"
            ),
            "2"
        );
    });
}

#[test]
fn the_task_depth_limit_follows_the_limits() {
    let result = tasklisp::run_on_large_stack(&Limits::default(), |mut limits| {
        limits.max_task_depth = 3;
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        interp
            .run_source(
                "<test>",
                "(deftask down (n) (if (= n 0) 0 (down (- n 1)))) (down 2)",
            )
            .unwrap();
        let e = interp.run_source("<test>", "(down 3)").unwrap_err();
        (e.kind(), e.details()["limit"].clone())
    })
    .unwrap();
    assert_eq!(result.0, ErrorKind::ResourceExhaustion);
    assert_eq!(result.1, 3);
}

#[test]
fn the_examples_run_offline() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    for name in ["triage.sexp", "summarize_review.sexp", "file_pipeline.sexp"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let outcome = with_interp(move |interp| {
            interp.loading().borrow_mut().push(path.clone());
            interp
                .run_source(&path.display().to_string(), &text)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        assert_eq!(outcome, Ok(()), "{name}");
    }
}

#[test]
fn the_snippets_of_the_task_guide_run() {
    let guide =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/TASKS.md"))
            .unwrap();
    let blocks = lisp_blocks(&guide);
    assert!(blocks.len() >= 10, "found {} snippets", blocks.len());
    for block in blocks {
        let shown = block.clone();
        let outcome = with_interp(move |interp| {
            interp
                .run_source("<guide>", &block)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        assert_eq!(outcome, Ok(()), "{shown}");
    }
}

/// The blocks of the task guide whose printing forms all say what they print print
/// exactly that (run by the binary, from the repository's root).
#[test]
fn the_task_guide_prints_what_it_says() {
    let guide =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/TASKS.md"))
            .unwrap();
    let mut checked = 0;
    for block in lisp_blocks(&guide) {
        let Some(promised) = common::printed_promises(&block) else {
            continue;
        };
        let output = run_block(&block);
        let printed: Vec<&str> = output.lines().collect();
        let same = printed.len() == promised.len()
            && printed
                .iter()
                .zip(&promised)
                .all(|(line, promise)| common::as_promised(line, promise));
        assert!(same, "{block}\nprints:\n{output}");
        checked += 1;
    }
    assert!(checked >= 20, "checked {checked} blocks");
}

/// Runs a block with `tasklisp run -` (the echo provider unless it sets one); its stdout.
fn run_block(block: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let args = ["--provider", "echo", "run", "-"];
    let run = binary::run_binary_with_input(root, &args, &[], Some(block));
    assert_eq!(run.status, Some(0), "{block}\n{}", run.stderr);
    run.stdout
}
