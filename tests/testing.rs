//! `tasklisp test` from the outside: every `expect` form passing and failing, errors,
//! cassettes, `--record`, `--junit`, `--filter`, timeouts, parallelism and exit codes.

use std::path::Path;

#[path = "common/binary.rs"]
mod binary;
use binary::{run_binary as tasklisp, Run};

/// The run ended with the summary line `N passed, N failed`.
fn assert_summary(run: &Run, passed: usize, failed: usize) {
    let summary = format!("\n\n{passed} passed, {failed} failed\n");
    assert!(
        run.stdout.ends_with(&summary),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

/// A temporary directory with these files.
fn files(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dir
}

/// Every expect form, once passing and once failing; a procedure provider judges.
const EVERY_FORM: &str = r#"(define (double x) (* 2 x))
(define judge (fn (request)
  (if (contains? request.prompt "short")
      "{\"pass\": true, \"reason\": \"it is short\"}"
      "{\"pass\": false, \"reason\": \"it rambles\"}")))

(deftest passing
  (expect (> (double 3) 5))
  (expect= (double 2) 4)
  (expect-error (car 1) "EVAL_ERROR")
  (expect-error (fail :llm_error "down") :llm_error)
  (expect-schema {"a" 1} {"type" "object" "required" ["a"]})
  (with-provider judge (expect-judge "hi" "is short")))

(deftest failing
  (expect (< (double 3) 5))
  (expect= (double 2) 5)
  (expect-error (double 2) "EVAL_ERROR")
  (expect-error (car 1) :llm_error)
  (expect-schema {"a" 1} {"type" "object" "required" ["b"]})
  (with-provider judge (expect-judge "hi" "is long")))
"#;

const EVERY_FORM_OUTPUT: &str = r#"running 2 tests
test forms.test.sexp::passing ... ok
test forms.test.sexp::failing ... FAILED

failures:

---- forms.test.sexp::failing ----
expect failed at forms.test.sexp:16:3
  (expect (< (double 3) 5))
  expected: a true value
  actual:   false
expect= failed at forms.test.sexp:17:3
  (expect= (double 2) 5)
  expected: 5
  actual:   4
expect-error failed at forms.test.sexp:18:3
  (expect-error (double 2) "EVAL_ERROR")
  expected: an error EVAL_ERROR
  actual:   no error, the value 4
expect-error failed at forms.test.sexp:19:3
  (expect-error (car 1) :llm_error)
  expected: an error llm_error
  actual:   error EVAL_ERROR car: expected a list, got an integer 1
expect-schema failed at forms.test.sexp:20:3
  (expect-schema {"a" 1} {"type" "object" "required" ["b"]})
  expected: a value matching {"type":"object","required":["b"]}
  actual:   {"a" 1} (Output does not match the schema: "b" is a required property)
expect-judge failed at forms.test.sexp:21:24
  (expect-judge "hi" "is long")
  expected: is long
  actual:   "hi"
  judge:    it rambles

failures:
    forms.test.sexp::failing

1 passed, 1 failed
"#;

#[test]
fn every_expect_form_passes_and_fails_as_it_should() {
    let dir = files(&[("forms.test.sexp", EVERY_FORM)]);
    let run = tasklisp(dir.path(), &["test", "-j", "1"], &[]);
    assert_eq!(run.stdout, EVERY_FORM_OUTPUT);
    assert_eq!(run.status, Some(1), "{}", run.stderr);
}

#[test]
fn all_passing_exits_0_with_the_summary_line() {
    let dir = files(&[(
        "tests/math.sexp",
        "(deftest adds (expect= (+ 1 2) 3))\n(deftest subtracts (expect= (- 3 2) 1))",
    )]);
    let run = tasklisp(dir.path(), &["test"], &[]);
    assert_eq!(run.status, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("test tests/math.sexp::adds ... ok\n"));
    assert_summary(&run, 2, 0);
}

#[test]
fn an_error_outside_an_expect_fails_its_test_and_the_others_go_on() {
    let dir = files(&[(
        "e.test.sexp",
        "(deftest first (expect true))\n(deftest broken (println \"before\") (car 1) (expect true))\n(deftest last (expect true))",
    )]);
    let run = tasklisp(dir.path(), &["test", "-j", "1"], &[]);
    assert_eq!(run.status, Some(1));
    for line in [
        "test e.test.sexp::first ... ok",
        "test e.test.sexp::broken ... FAILED",
        "test e.test.sexp::last ... ok",
        "car: expected a list, got an integer 1",
        "output:\nbefore",
        "\n2 passed, 1 failed\n",
    ] {
        assert!(run.stdout.contains(line), "{line:?} in {}", run.stdout);
    }
}

#[test]
fn each_test_gets_a_fresh_global_environment_after_the_files_forms() {
    let dir = files(&[(
        "fresh.test.sexp",
        "(define counter 0)\n(define (bump) (set! counter (+ counter 1)) counter)\n\
         (deftest one (expect= (bump) 1))\n(deftest two (expect= (bump) 1))\n\
         (deftest three (bump) (bump) (expect= counter 2))",
    )]);
    let run = tasklisp(dir.path(), &["test", "-j", "1"], &[]);
    assert_eq!(run.status, Some(0), "{}", run.stdout);
    assert_summary(&run, 3, 0);
}

#[test]
fn a_file_that_cannot_be_read_fails_as_one_test_and_top_level_errors_fail_each_test() {
    let dir = files(&[
        ("a.test.sexp", "(deftest never (expect true)"),
        (
            "b.test.sexp",
            "(deftest t1 (expect true))\n(deftest t2 (expect true))\n(car 1)",
        ),
    ]);
    let run = tasklisp(dir.path(), &["test", "-j", "1"], &[]);
    assert_eq!(run.status, Some(1));
    assert!(
        run.stdout.contains("test a.test.sexp ... FAILED"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("test b.test.sexp::t1 ... FAILED"));
    assert!(run.stdout.contains("test b.test.sexp::t2 ... FAILED"));
    assert_summary(&run, 0, 3);
}

#[test]
fn filter_runs_only_matching_tests() {
    let dir = files(&[(
        "f.test.sexp",
        "(deftest keep-me (expect true))\n(deftest drop-me (expect false))",
    )]);
    let run = tasklisp(dir.path(), &["test", "--filter", "keep"], &[]);
    assert_eq!(run.status, Some(0), "{}", run.stdout);
    assert!(run.stdout.contains("keep-me"));
    assert!(!run.stdout.contains("drop-me"));
    assert_summary(&run, 1, 0);
}

#[test]
fn bad_usage_exits_2() {
    let dir = files(&[("a.test.sexp", "(deftest t (expect true))")]);
    for args in [
        &["test", "missing.sexp"][..],
        &["test", "--jobs", "many"],
        &["test", "--timeout", "0"],
        &["--provider", "nonsense", "test"],
        &["test", "--record"],
        &["--provider", "record:echo", "test", "--record"],
    ] {
        let run = tasklisp(dir.path(), args, &[]);
        assert_eq!(
            run.status,
            Some(2),
            "{args:?}: {}{}",
            run.stdout,
            run.stderr
        );
    }
    let empty = tempfile::tempdir().unwrap();
    let run = tasklisp(empty.path(), &["test"], &[]);
    assert_eq!(run.status, Some(2));
    assert!(run.stderr.contains("no tests found"), "{}", run.stderr);
}

#[test]
fn a_test_past_its_timeout_fails_and_the_others_go_on() {
    let dir = files(&[(
        "slow.test.sexp",
        "(deftest slow (sleep 600) (expect true))\n(deftest quick (expect true))",
    )]);
    let run = tasklisp(dir.path(), &["test", "--timeout", "0.5"], &[]);
    assert_eq!(run.status, Some(1));
    assert!(run.stdout.contains("test slow.test.sexp::slow ... FAILED"));
    assert!(run.stdout.contains("test slow.test.sexp::quick ... ok"));
    assert!(
        run.stdout
            .contains("the test ran longer than 0.5s (--timeout)"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_judge_is_asked_with_the_judge_model_and_a_bad_verdict_fails() {
    let dir = files(&[(
        "j.test.sexp",
        r#"(define seen nil)
(define (judge request) (set! seen request) "{\"pass\": true, \"reason\": \"fine\"}")
(deftest model
  (with-provider judge (expect-judge {"answer" 42} "gives a number"))
  (expect= seen.model "judge-1")
  (expect= seen.task "expect-judge")
  (expect= seen.params.output "{\"answer\":42}"))
(deftest no-verdict
  (with-provider (fn (r) "I think so") (expect-judge "x" "anything")))
"#,
    )]);
    let run = tasklisp(
        dir.path(),
        &["test", "-j", "1", "--judge-model", "judge-1"],
        &[],
    );
    assert!(
        run.stdout.contains("test j.test.sexp::model ... ok"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("  judge:    no verdict: INVALID_OUTPUT the judge answered \"I think so\""));
    assert_eq!(run.status, Some(1));
}

const GREET: &str = r#"(deftask greet (name) :prompt "Hello {{name}}")
(deftest greets
  (expect= (get (greet "bob") "content") "HELLO BOB"))
(deftest greets-outside-expect
  (define answer (greet "bob"))
  (expect= answer.content "HELLO BOB"))
(deftest no-calls (expect true))
"#;

#[test]
fn record_writes_the_cassette_and_the_next_run_replays_it_offline() {
    let dir = files(&[
        ("g.test.sexp", GREET),
        ("quiet.test.sexp", "(deftest t (expect true))"),
    ]);
    std::fs::write(dir.path().join("quiet.test.cassette.jsonl"), "stale\n").unwrap();
    let upper = [("TASKLISP_PROVIDER_COMMAND", "tr a-z A-Z")];
    let recorded = tasklisp(
        dir.path(),
        &["--provider", "command", "test", "--record"],
        &upper,
    );
    assert_eq!(
        recorded.status,
        Some(0),
        "{}{}",
        recorded.stdout,
        recorded.stderr
    );
    let cassette = std::fs::read_to_string(dir.path().join("g.test.cassette.jsonl")).unwrap();
    assert_eq!(cassette.lines().count(), 2, "one exchange per test");
    assert!(cassette.contains(r#""prompt":"Hello bob""#), "{cassette}");
    assert!(cassette.contains(r#""content":"HELLO BOB""#));
    // A file that made no model calls keeps no cassette.
    assert!(!dir.path().join("quiet.test.cassette.jsonl").exists());
    assert!(!dir.path().join("g.test.cassette.jsonl.recording").exists());
    // No provider configured now: the cassette answers.
    let replayed = tasklisp(dir.path(), &["test"], &[]);
    assert_eq!(replayed.status, Some(0), "{}", replayed.stdout);
    assert_summary(&replayed, 4, 0);
}

#[test]
fn a_cassette_miss_fails_naming_the_request() {
    let dir = files(&[
        ("g.test.sexp", GREET),
        (
            "g.test.cassette.jsonl",
            r#"{"request": {"task": "greet", "prompt": "Hello alice"}, "response": {"content": "HI"}}"#,
        ),
    ]);
    let run = tasklisp(dir.path(), &["test", "-j", "1"], &[]);
    assert_eq!(run.status, Some(1));
    assert!(run.stdout.contains("test g.test.sexp::greets ... FAILED"));
    assert!(run
        .stdout
        .contains("test g.test.sexp::greets-outside-expect ... FAILED"));
    assert!(run.stdout.contains("test g.test.sexp::no-calls ... ok"));
    assert!(
        run.stdout.contains(
            "replay: no recorded response in g.test.cassette.jsonl for task `greet` (prompt \"Hello bob\")"
        ),
        "{}",
        run.stdout
    );
    // Inside an expect and outside one, the failure shows the whole request.
    let request = r#"  request: {"issues":[],"json_mode":false,"model":null,"params":{"name":"bob"},"prompt":"Hello bob","round":1,"system":null,"task":"greet"}"#;
    assert_eq!(run.stdout.matches(request).count(), 2, "{}", run.stdout);
}

/// Each test marks its start, waits until `BARRIER` tests have started (a guard gives
/// up after 60 s), and marks its end.
const PARALLEL: &str = r#"(deftask meet () :command ["sh" "-c" "echo start >> marks; i=0; while [ $(grep -c start marks) -lt $BARRIER ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done; echo end >> marks"])
(deftest t1 (meet))
(deftest t2 (meet))
(deftest t3 (meet))
(deftest t4 (meet))
(deftest t5 (meet))
(deftest t6 (meet))
(deftest t7 (meet))
(deftest t8 (meet))
"#;

/// The most tests in flight at once, from the start and end marks.
fn peak(marks: &str) -> usize {
    let mut running = 0usize;
    let mut peak = 0;
    for mark in marks.lines() {
        if mark == "start" {
            running += 1;
            peak = peak.max(running);
        } else {
            running = running.saturating_sub(1);
        }
    }
    peak
}

#[test]
fn tests_run_in_parallel_up_to_jobs() {
    for (jobs, barrier) in [("8", "8"), ("1", "1"), ("3", "3")] {
        let dir = files(&[("p.test.sexp", PARALLEL)]);
        let run = tasklisp(dir.path(), &["test", "-j", jobs], &[("BARRIER", barrier)]);
        assert_eq!(run.status, Some(0), "-j {jobs}: {}", run.stdout);
        let marks = std::fs::read_to_string(dir.path().join("marks")).unwrap();
        assert_eq!(marks.lines().count(), 16);
        assert_eq!(peak(&marks).to_string(), jobs, "-j {jobs}: {marks}");
    }
}

// ---- JUnit -----------------------------------------------------------------------

/// An element of the report: name, attributes, children, text.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn parse_xml(text: &str) -> Element {
    use quick_xml::escape::unescape;
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack = vec![Element::default()];
    loop {
        let start = reader.buffer_position() as usize;
        let event = reader.read_event().expect("well-formed XML");
        let raw = &text[start..reader.buffer_position() as usize];
        match event {
            Event::Start(tag) => stack.push(element_of(&tag)),
            Event::Empty(tag) => {
                let element = element_of(&tag);
                stack.last_mut().unwrap().children.push(element);
            }
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Text(_) | Event::GeneralRef(_) => {
                let decoded = unescape(raw).expect("known entities");
                stack.last_mut().unwrap().text.push_str(&decoded);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut document = stack.pop().unwrap();
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.remove(0)
}

fn element_of(tag: &quick_xml::events::BytesStart) -> Element {
    Element {
        name: tag.name().as_ref().to_owned(),
        attributes: tag
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                let raw: &str = &a.value;
                let value = quick_xml::escape::unescape(raw).unwrap().into_owned();
                (a.key.as_ref().to_owned(), value)
            })
            .collect(),
        ..Element::default()
    }
}

/// The JUnit XML schema's shape (the common `junit.xsd`): for each element, the
/// attributes it requires, those it may have, and the children it may hold.
fn junit_shape(
    name: &str,
) -> (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
) {
    match name {
        "testsuites" => (
            &[],
            &["name", "tests", "failures", "errors", "disabled", "time"],
            &["testsuite"],
        ),
        "testsuite" => (
            &["name", "tests", "failures", "errors"],
            &[
                "skipped",
                "disabled",
                "time",
                "timestamp",
                "hostname",
                "id",
                "package",
            ],
            &["properties", "testcase", "system-out", "system-err"],
        ),
        "testcase" => (
            &["name", "classname"],
            &["time", "assertions", "status"],
            &["skipped", "error", "failure", "system-out", "system-err"],
        ),
        "failure" | "error" => (&["type"], &["message"], &[]),
        "system-out" | "system-err" => (&[], &[], &[]),
        other => panic!("{other} is not a JUnit element"),
    }
}

fn check_shape(element: &Element) {
    let (required, optional, children) = junit_shape(&element.name);
    for attribute in required {
        assert!(
            element.attribute(attribute).is_some(),
            "{} needs {attribute}",
            element.name
        );
    }
    for (attribute, value) in &element.attributes {
        assert!(
            required.contains(&attribute.as_str()) || optional.contains(&attribute.as_str()),
            "{} has no attribute {attribute}",
            element.name
        );
        if ["tests", "failures", "errors", "skipped"].contains(&attribute.as_str()) {
            value.parse::<u32>().expect("a count");
        }
        if attribute == "time" {
            value.parse::<f64>().expect("seconds");
        }
    }
    for child in &element.children {
        assert!(
            children.contains(&child.name.as_str()),
            "{} in {}",
            child.name,
            element.name
        );
        check_shape(child);
    }
    let failures = element
        .children
        .iter()
        .filter(|c| c.name == "failure" || c.name == "error");
    assert!(failures.count() <= 1, "one failure or error per testcase");
}

#[test]
fn junit_reports_follow_the_schema_and_count_failures_and_errors() {
    let dir = files(&[
        (
            "a.test.sexp",
            "(deftest ok (println \"out <&>\") (expect true))\n(deftest bad (expect= 1 2))",
        ),
        ("b.test.sexp", "(deftest boom (car 1))"),
    ]);
    let run = tasklisp(dir.path(), &["test", "--junit", "report.xml"], &[]);
    assert_eq!(run.status, Some(1));
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).unwrap();
    let root = parse_xml(&xml);
    assert_eq!(root.name, "testsuites");
    check_shape(&root);
    assert_eq!(root.attribute("tests"), Some("3"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("1"));
    let suites: Vec<&str> = root
        .children
        .iter()
        .filter_map(|s| s.attribute("name"))
        .collect();
    assert_eq!(suites, ["a.test.sexp", "b.test.sexp"]);
    let a = &root.children[0];
    let ok = a
        .children
        .iter()
        .find(|c| c.attribute("name") == Some("ok"))
        .unwrap();
    assert_eq!(ok.children[0].name, "system-out");
    assert_eq!(ok.children[0].text, "out <&>\n");
    let bad = a
        .children
        .iter()
        .find(|c| c.attribute("name") == Some("bad"))
        .unwrap();
    assert_eq!(bad.children[0].name, "failure");
    assert_eq!(bad.children[0].attribute("type"), Some("expect="));
    assert!(bad.children[0].text.contains("expected: 2\n  actual:   1"));
    let boom = &root.children[1].children[0];
    assert_eq!(boom.children[0].name, "error");
    assert_eq!(boom.children[0].attribute("type"), Some("EVAL_ERROR"));
}

// ---- the guide and the example ------------------------------------------------------

/// The fenced code blocks of a Markdown text: (language, content).
fn code_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in markdown.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(language)) => current = Some((language.to_owned(), String::new())),
            (Some(_), Some("")) => blocks.extend(current.take()),
            (Some((_, content)), _) => {
                content.push_str(line);
                content.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// Every example of docs/TESTING.md runs: a block that names its file is run with
/// `tasklisp test -j 1 FILE` and prints the text block after it; the others run as
/// scripts and print what their `; value` comments say.
#[test]
fn the_testing_guide_examples_print_what_the_guide_shows() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/TESTING.md")).unwrap();
    let blocks = code_blocks(&guide);
    let mut ran = 0;
    for (i, (language, code)) in blocks.iter().enumerate() {
        if language != "lisp" {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        match code
            .lines()
            .next()
            .and_then(|l| l.strip_prefix(";; file: "))
        {
            Some(file) => {
                std::fs::write(dir.path().join(file), code).unwrap();
                let run = tasklisp(dir.path(), &["test", "-j", "1", file], &[]);
                let (next_language, shown) = &blocks[i + 1];
                assert_eq!(next_language, "text", "the output of {file} follows it");
                assert_eq!(&run.stdout, shown, "{file}");
            }
            None => {
                std::fs::write(dir.path().join("block.sexp"), code).unwrap();
                let run = tasklisp(dir.path(), &["run", "block.sexp"], &[]);
                let promised: Vec<&str> = code
                    .lines()
                    .filter(|l| l.starts_with("(prn "))
                    .filter_map(|l| l.rsplit_once("; ").map(|(_, value)| value.trim()))
                    .collect();
                assert_eq!(run.stdout.lines().collect::<Vec<_>>(), promised, "{code}");
            }
        }
        ran += 1;
    }
    assert!(ran >= 3, "the guide has examples");
}

#[test]
fn the_example_workflow_passes_its_tests_from_its_cassette() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = tasklisp(root, &["test", "examples/"], &[]);
    assert_eq!(run.status, Some(0), "{}{}", run.stdout, run.stderr);
    assert_summary(&run, 8, 0);
}

/// The README's test snippet is the example's own tests, which the test above runs.
#[test]
fn the_readme_snippet_is_taken_from_the_example_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("examples/support_reply.test.sexp")).unwrap();
    let section = readme.split("### Testing prompts\n\n").nth(1).unwrap();
    let snippet = section.split("\n\n`tasklisp test`").next().unwrap();
    let mut tests = 0;
    for block in snippet.split("\n\n") {
        let code: Vec<&str> = block
            .lines()
            .map(|l| l.strip_prefix("    ").unwrap())
            .collect();
        assert!(example.contains(&code.join("\n")), "{block}");
        tests += 1;
    }
    assert_eq!(tests, 2);
}

/// A `tasklisp test` run is one run of the log: each test a row over the model calls
/// its file and body made, failed when a check failed, and the run `failed`.
#[test]
fn a_test_run_is_recorded_in_the_run_log() {
    let dir = files(&[(
        "greet.test.sexp",
        r#"(deftask greet (name) :prompt "Hello {{name}}")
(deftest greets (expect= (get (greet "Ada") "content") "Hello Ada"))
(deftest fails (expect= (get (greet "Bob") "content") "Bye"))
"#,
    )]);
    let log = dir.path().join("log.db");
    let env = [("TASKLISP_LOG", log.to_str().expect("a UTF-8 path"))];
    let run = tasklisp(
        dir.path(),
        &["--provider", "echo", "test", "-j", "1", "greet.test.sexp"],
        &env,
    );
    assert_summary(&run, 1, 1);

    let json = |args: &[&str]| -> serde_json::Value {
        let run = tasklisp(dir.path(), args, &env);
        serde_json::from_str(&run.stdout).expect("JSON")
    };
    let runs = json(&["log", "--json"]);
    let shown: Vec<_> = ["command", "script", "status", "calls"]
        .iter()
        .map(|key| runs[0][key].clone())
        .collect();
    assert_eq!(
        shown,
        [
            serde_json::json!("test"),
            serde_json::json!("greet.test.sexp"),
            serde_json::json!("failed"),
            serde_json::json!(2)
        ]
    );
    let calls = json(&["log", "--json", runs[0]["id"].as_str().expect("an id")]);
    let rows: Vec<String> = calls["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {} {}",
                c["seq"], c["parent"], c["kind"], c["task"], c["status"]
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            r#"1 null "test" "greet.test.sexp::greets" "ok""#,
            r#"2 1 "task" "greet" "ok""#,
            r#"3 2 "model" "greet" "ok""#,
            r#"4 null "test" "greet.test.sexp::fails" "error""#,
            r#"5 4 "task" "greet" "ok""#,
            r#"6 5 "model" "greet" "ok""#,
        ]
    );
    assert_eq!(
        calls["calls"][3]["error"]["message"],
        "1 of 1 checks failed"
    );
}
