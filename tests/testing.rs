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

#[path = "common/fake_server.rs"]
mod fake_server;
use fake_server::{reply, FakeServer};
use serde_json::{json, Value as Json};

/// Two tests a model answers: one model knows both capitals, the other only one.
const CAPITALS: &str = r#"(deftask capital (country) :prompt "The capital of {{country}}, one word.")
(deftest france (expect= (get (capital "France") "content") "Paris"))
(deftest spain (expect= (get (capital "Spain") "content") "Madrid"))
"#;

fn chat_answer(content: &str) -> fake_server::Reply {
    reply(
        200,
        json!({"choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": content}}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 2}}),
    )
}

const MODELS: &str = "gpt-4o-mini,openai:local-model";

/// `--models` runs every test per model against the server (a column after the other:
/// `-j 1` makes the order of the requests known), records a cassette per model, prints
/// the test × model table and writes the HTML report; the cassettes then replay the
/// same comparison offline as JSON.
#[test]
fn models_are_compared_in_a_table_recorded_per_model_and_replayed_as_json() {
    let dir = files(&[("cap.test.sexp", CAPITALS)]);
    let server = FakeServer::start(
        ["Paris", "Madrid", "Paris", "Barcelona"]
            .map(chat_answer)
            .into_iter()
            .collect(),
    );
    let base = format!("{}/v1", server.base);
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &base,
        "test",
        "-j",
        "1",
        "--models",
        MODELS,
        "--record",
        "--html",
        "report.html",
    ];
    let run = tasklisp(dir.path(), &args, &[("OPENAI_API_KEY", "k")]);
    let seen = server.finish();
    let models: Vec<Json> = seen.iter().map(|s| s.json()["model"].clone()).collect();
    assert_eq!(
        models,
        ["gpt-4o-mini", "gpt-4o-mini", "local-model", "local-model"].map(Json::from)
    );
    assert_eq!(
        seen[3].json()["messages"][0]["content"],
        "The capital of Spain, one word."
    );
    assert_eq!(run.status, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("running 2 tests × 2 models\n"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("test cap.test.sexp::spain [openai:local-model] ... FAILED\n"));
    assert!(run
        .stdout
        .contains("---- cap.test.sexp::spain [openai:local-model] ----\n"));
    // The table: a row per test and the totals; gpt-4o-mini is priced, local-model not.
    let table: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 5, "{}", run.stdout);
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_owned())
            .collect()
    };
    assert_eq!(
        cells(table[0]),
        ["test", "gpt-4o-mini", "openai:local-model"]
    );
    let spain = cells(table[3]);
    assert_eq!(spain[0], "cap.test.sexp::spain");
    assert!(
        spain[1].starts_with("ok, 12 tok, $0.000003, "),
        "{}",
        table[3]
    );
    assert!(spain[2].starts_with("FAILED, 12 tok, —, "), "{}", table[3]);
    let total = cells(table[4]);
    assert!(
        total[1].starts_with("2 passed, 0 failed, 24 tok, $0.000005, "),
        "{}",
        table[4]
    );
    assert!(
        total[2].starts_with("1 passed, 1 failed, 24 tok, —, "),
        "{}",
        table[4]
    );
    assert_summary(&run, 3, 1);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<th>openai:local-model</th>"));
    assert!(html.contains("<pre class=\"expected\">&quot;Madrid&quot;</pre>"));
    assert!(html.contains("<dt>the model's answer</dt><dd><pre>Barcelona</pre>"));
    for cassette in ["cap.test@gpt-4o-mini", "cap.test@openai_local-model"] {
        let text = std::fs::read_to_string(dir.path().join(format!("{cassette}.cassette.jsonl")));
        assert_eq!(text.unwrap().lines().count(), 2, "{cassette}");
    }
    assert!(!dir.path().join("cap.test.cassette.jsonl").exists());

    // Offline: no provider, no key, the server gone; the cassettes answer.
    let replayed = tasklisp(dir.path(), &["test", "--models", MODELS, "--json"], &[]);
    assert_eq!(replayed.status, Some(1), "{}", replayed.stderr);
    let document: Json = serde_json::from_str(&replayed.stdout).expect("stdout is JSON");
    assert_eq!(
        document["models"],
        json!(["gpt-4o-mini", "openai:local-model"])
    );
    assert_eq!(
        (document["passed"].clone(), document["failed"].clone()),
        (json!(3), json!(1))
    );
    let results = document["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let failed: Vec<&Json> = results.iter().filter(|r| r["passed"] == false).collect();
    assert_eq!(failed.len(), 1);
    let failure = failed[0];
    assert_eq!(failure["test"], "cap.test.sexp::spain");
    assert_eq!(failure["model"], "openai:local-model");
    assert_eq!(failure["answers"], json!(["Barcelona"]));
    assert_eq!(failure["checks"][0]["expected"], "\"Madrid\"");
    assert_eq!(failure["checks"][0]["actual"], "\"Barcelona\"");
    assert_eq!(failure["checks"][0]["place"], "cap.test.sexp:3:16");
    assert_eq!(
        (
            failure["input_tokens"].clone(),
            failure["output_tokens"].clone()
        ),
        (json!(10), json!(2))
    );
    assert_eq!(failure["cost"], Json::Null);
    let priced = results
        .iter()
        .find(|r| r["model"] == "gpt-4o-mini")
        .unwrap();
    let usd = |value: &Json| value.as_f64().expect("a cost");
    assert!((usd(&priced["cost"]) - 2.7e-6).abs() < 1e-12, "{priced}");
    assert_eq!(document["totals"][1]["failed"], 1);
    assert!((usd(&document["totals"][0]["cost"]) - 5.4e-6).abs() < 1e-12);
    assert_eq!(document["totals"][1]["cost"], Json::Null);
}

/// Without `--models`, `--json` prints the same document with one column, `null`.
#[test]
fn json_without_models_is_the_same_document() {
    let dir = files(&[(
        "a.test.sexp",
        "(deftest ok (expect true))\n(deftest bad (prn \"said\") (car 1))",
    )]);
    let run = tasklisp(dir.path(), &["test", "--json"], &[]);
    assert_eq!(run.status, Some(1));
    let document: Json = serde_json::from_str(&run.stdout).expect("stdout is only JSON");
    assert_eq!(document["models"], json!([]));
    assert_eq!(document["totals"][0]["model"], Json::Null);
    let bad = &document["results"][0];
    assert_eq!(bad["test"], "a.test.sexp::bad");
    assert_eq!(bad["model"], Json::Null);
    assert_eq!(bad["error"]["type"], "EVAL_ERROR");
    assert_eq!(bad["output"], "\"said\"\n");
    assert_eq!(bad["cost"], 0.0);
}

#[test]
fn bad_models_and_report_files_are_usage_errors_before_any_test_runs() {
    let dir = files(&[("a.test.sexp", "(deftest t (prn \"ran\") (expect true))")]);
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    for (args, says) in [
        (
            &["test", "--models", "a,,b"][..],
            "--models: an empty model name",
        ),
        (&["test", "--models", ""], "--models: an empty model name"),
        (
            &["test", "--models", "openai:"],
            "an empty model name in `openai:`",
        ),
        (
            &["test", "--models", "gpt:4"],
            "--models `gpt:4`: unknown provider: gpt (known: ",
        ),
        (
            &["test", "--html", "no/such/dir/r.html"],
            "--html: cannot write no/such/dir/r.html",
        ),
        (
            &["test", "--html", "adir"],
            "--html: cannot write adir: it is a directory",
        ),
        (&["test", "--junit", "adir"], "--junit: cannot write adir"),
    ] {
        let run = tasklisp(dir.path(), args, &[]);
        assert_eq!(
            run.status,
            Some(2),
            "{args:?}: {}{}",
            run.stdout,
            run.stderr
        );
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(!run.stdout.contains("ran"), "{args:?}");
    }
}

/// The chromium binary, if one is installed.
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .is_ok_and(|out| out.status.success())
        })
        .map(str::to_owned)
}

/// Runs chromium headless with `args`; gives up after 120 s (a page this small renders
/// in well under a second).
fn headless(chromium: &str, profile: &Path, args: &[&str]) -> String {
    let mut child = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().expect("chromium runs").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s: {args:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("chromium's output");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The HTML report opened in a real browser: headless Chromium renders the table (its
/// DOM has the cells, a failure's `<details>` holds the expression, both values and the
/// model's answer) and takes a screenshot of it. Skipped, saying so, where Chromium is
/// not installed; CI installs it and requires it.
#[test]
fn the_html_report_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI must install chromium (.ci/run)"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the_html_report_renders_in_headless_chromium: chromium is not installed \
             (apt-get install chromium)"
        );
        return;
    };
    let dir = files(&[(
        "e.test.sexp",
        r#"(deftask shout (word) :prompt "{{word}}!")
(deftest loud (expect= (get (shout "hey") "content") "hey!"))
(deftest quiet (expect= (get (shout "psst") "content") "psst"))
"#,
    )]);
    let run = tasklisp(
        dir.path(),
        &[
            "--provider",
            "echo",
            "test",
            "--models",
            "m1,echo:m2",
            "--html",
            "report.html",
        ],
        &[],
    );
    assert_eq!(run.status, Some(1), "{}{}", run.stdout, run.stderr);
    let page = dir.path().join("report.html");
    let url = format!("file://{}", page.display());
    let profile = dir.path().join("profile");
    let dom = headless(&chromium, &profile, &["--dump-dom", &url]);
    assert!(dom.contains("<th>m1</th><th>echo:m2</th>"), "{dom}");
    assert!(
        dom.contains("<th scope=\"row\">e.test.sexp::loud</th>"),
        "{dom}"
    );
    assert_eq!(dom.matches("<td class=\"pass\">").count(), 2, "{dom}");
    assert_eq!(
        dom.matches("<td class=\"fail\"><details>").count(),
        2,
        "{dom}"
    );
    for shown in [
        "<pre class=\"expression\">(expect= (get (shout \"psst\") \"content\") \"psst\")</pre>",
        "<pre class=\"expected\">\"psst\"</pre>",
        "<pre class=\"actual\">\"psst!\"</pre>",
        "<dt>the model's answer</dt><dd><pre>psst!</pre></dd>",
        "<p id=\"summary\">2 passed, 2 failed</p>",
    ] {
        assert!(dom.contains(shown), "{shown}\n{dom}");
    }
    let shot = dir.path().join("shot.png");
    headless(
        &chromium,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1000,600",
            &url,
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 1000,
        "{} bytes",
        png.len()
    );
}

/// The keys of a JSON value at every depth (an array's by its first element).
fn shape(value: &Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), shape(value)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.first().map(shape).into_iter().collect()),
        _ => Json::Null,
    }
}

/// The JSON document docs/TESTING.md shows has the keys `--json` prints, at every depth.
#[test]
fn the_guides_json_document_has_the_shape_tasklisp_prints() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/TESTING.md")).unwrap();
    let (_, shown) = code_blocks(&guide)
        .into_iter()
        .find(|(language, _)| language == "json")
        .expect("the guide shows the document");
    let shown: Json = serde_json::from_str(&shown).expect("the guide's JSON parses");
    let dir = files(&[("cap.test.sexp", CAPITALS)]);
    let run = tasklisp(
        dir.path(),
        &[
            "--provider",
            "echo",
            "test",
            "--models",
            "m1,echo:m2",
            "--json",
        ],
        &[],
    );
    let printed: Json = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(shape(&printed), shape(&shown), "{printed:#}");
}
