//! The `tasklisp` binary from the outside: commands, flags, exit statuses and reports.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "common/binary.rs"]
mod binary;
use binary::{run_binary, Run};
mod common;

fn tasklisp(dir: &Path, args: &[&str]) -> Run {
    run_binary(dir, args, &[])
}

/// A temporary directory holding one script.
fn script(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("main.sexp");
    std::fs::write(&path, text).expect("write script");
    (dir, path)
}

fn run_script(text: &str, flags: &[&str]) -> Run {
    let (dir, _) = script(text);
    let mut args = flags.to_vec();
    args.extend(["run", "main.sexp"]);
    tasklisp(dir.path(), &args)
}

fn eval(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec!["eval"];
    all.extend(args);
    tasklisp(dir.path(), &all)
}

#[test]
fn run_prints_only_what_the_script_prints() {
    let r = run_script("(define x 41)\n(+ x 1)\n(println \"out\" (+ x 1))", &[]);
    assert_eq!(r.status, Some(0));
    assert_eq!(r.stdout, "out 42\n");
    assert_eq!(r.stderr, "");
}

#[test]
fn run_passes_arguments_as_strings() {
    let (dir, _) = script("(prn *args*)");
    let r = tasklisp(dir.path(), &["run", "main.sexp", "a", "-1", "--flag"]);
    assert_eq!(r.stdout, "(\"a\" \"-1\" \"--flag\")\n");
}

#[test]
fn run_passes_every_argument_after_the_script_flags_included() {
    let (dir, _) = script("(prn *args*)");
    let r = tasklisp(
        dir.path(),
        &[
            "run",
            "main.sexp",
            "--json",
            "-q",
            "--",
            "--help",
            "--provider",
            "x",
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "(\"--json\" \"-q\" \"--\" \"--help\" \"--provider\" \"x\")\n"
    );
}

/// Every shape of global flag before `run` (and between `run` and the script) takes
/// effect, and the words after the script still reach it.
#[test]
fn flags_of_every_shape_before_run_leave_the_script_its_arguments() {
    let (dir, _) =
        script("(deftask t () :prompt \"hi\")\n(prn *args*)\n(print (get (t) \"content\"))");
    let env = [
        ("TASKLISP_PROVIDER", "command"),
        (
            "TASKLISP_PROVIDER_COMMAND",
            "printf '%s %s' \"$TASKLISP_MODEL\" \"$TASKLISP_OPTIONS\"",
        ),
    ];
    let shapes: &[(&[&str], &str)] = &[
        (&["-m", "m1"], "m1 {}"),
        (&["--model", "m2"], "m2 {}"),
        (&["--model=m3"], "m3 {}"),
        (&["-mm4"], "m4 {}"),
        (&["-qm", "m5"], "m5 {}"),
        (&["-m", "m6", "-o", "seed", "7"], "m6 {\"seed\":7}"),
        (&["-m", "m7", "--option", "seed", "8"], "m7 {\"seed\":8}"),
        (&["-q", "--json", "--no-log", "-m", "m8"], "m8 {}"),
        (&["--sandbox", "--allow-exec", "-m", "m9"], "m9 {}"),
        (&["--max-depth", "50", "--model", "m10"], "m10 {}"),
    ];
    for (flags, answer) in shapes {
        for after_run in [false, true] {
            let mut args: Vec<&str> = Vec::new();
            if after_run {
                args.push("run");
            }
            args.extend(*flags);
            if !after_run {
                args.push("run");
            }
            args.extend(["main.sexp", "x", "-y", "--json", "-m", "z"]);
            let r = run_binary(dir.path(), &args, &env);
            assert_eq!(r.status, Some(0), "{args:?}: {}", r.stderr);
            assert_eq!(
                r.stdout,
                format!("(\"x\" \"-y\" \"--json\" \"-m\" \"z\")\n{answer}"),
                "{args:?}"
            );
        }
    }
}

/// Global flags before `prompt` leave it its own (`-s`) and its text.
#[test]
fn flags_before_prompt_leave_it_its_own() {
    let (status, out, err) = with_stdin(
        &[
            "--provider",
            "echo",
            "-m",
            "m",
            "-o",
            "seed",
            "1",
            "-q",
            "prompt",
            "-s",
            "Be terse.",
            "hi",
            "there",
        ],
        "",
    );
    assert_eq!((status, out.as_str()), (Some(0), "hi there\n"), "{err}");
}

#[test]
fn run_dash_reads_the_script_from_stdin() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .args(["run", "-", "a"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(b"(prn *args* (+ 1 2))\n(car 5)")?;
            child.wait_with_output()
        })
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "(\"a\") 3\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("<stdin>:2:1"));
}

#[test]
fn run_of_an_xml_file_says_to_import_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("t.xml"), "<tasks/>").expect("write");
    let r = tasklisp(dir.path(), &["run", "t.xml"]);
    assert_eq!(r.status, Some(2));
    assert!(r.stderr.contains("XML template file"), "{}", r.stderr);
    assert!(r.stderr.contains("--import t.xml"), "{}", r.stderr);
    assert!(r.stderr.contains("(import \"t.xml\")"), "{}", r.stderr);
}

#[test]
fn an_unknown_provider_is_bad_usage_with_a_hint() {
    let r = eval(&["--provider", "opnai", "1"]);
    assert_eq!(r.status, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("unknown provider: opnai"), "{}", r.stderr);
    assert!(r.stderr.contains("did you mean `openai`?"), "{}", r.stderr);
    let r = eval(&["--provider", "record:nope", "1"]);
    assert_eq!(r.status, Some(2), "{}", r.stderr);
    let r = eval(&["--provider", "OpenAI", "1"]);
    assert!(r.stderr.contains("did you mean `openai`?"), "{}", r.stderr);
}

#[test]
fn set_provider_with_an_unknown_kind_is_the_callers_mistake() {
    let r =
        eval(&[r#"(try (set-provider! :nope {}) (catch e [(get e "type") (get e "message")]))"#]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("VALIDATION_ERROR"), "{}", r.stdout);
    assert!(r.stdout.contains("unknown provider: nope"), "{}", r.stdout);
}

#[test]
fn provider_help_lists_every_provider() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = tasklisp(dir.path(), &["--help"]);
    let line = r
        .stdout
        .lines()
        .skip_while(|l| !l.contains("--provider"))
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    for name in tasklisp::internals::provider::KNOWN {
        assert!(line.contains(name), "{name} in {line}");
    }
}

#[test]
fn check_and_log_help_list_only_the_flags_that_apply() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (command, shown, unshown) in [
        (
            "check",
            &["--import", "--max-file-size", "--error-format"][..],
            &["--provider", "--budget-usd", "--cache", "--batch", "--json"][..],
        ),
        (
            "log",
            &["--json", "-n"][..],
            &["--provider", "--cache", "--import"][..],
        ),
        (
            "fmt",
            &["--check", "--error-format"][..],
            &["--provider", "--cache", "--import", "--json"][..],
        ),
        (
            "config",
            &["--provider", "--model", "--json"][..],
            &["--cache", "--import", "--max-depth"][..],
        ),
        ("completions", &["bash"][..], &["--provider", "--json"][..]),
        (
            "test",
            &["--provider", "--import", "--cache", "--filter"][..],
            &["--budget-usd", "--batch", "--stream", "--quiet"][..],
        ),
    ] {
        for help in ["--help", "-h"] {
            let r = tasklisp(dir.path(), &[command, help]);
            assert_eq!(r.status, Some(0), "{}", r.stderr);
            assert!(
                r.stdout.contains(&format!("Usage: tasklisp {command}")),
                "{}",
                r.stdout
            );
            for flag in shown {
                assert!(
                    r.stdout.contains(flag),
                    "{command} {help} lists {flag}: {}",
                    r.stdout
                );
            }
            for flag in unshown {
                assert!(
                    !r.stdout.contains(flag),
                    "{command} {help} hides {flag}: {}",
                    r.stdout
                );
            }
        }
    }
    // The flags still parse wherever they are written.
    std::fs::write(dir.path().join("a.sexp"), "(+ 1 2)\n").expect("write");
    let r = tasklisp(
        dir.path(),
        &["check", "--provider", "echo", "--cache", "a.sexp"],
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (Some(0), "a.sexp: ok\n"),
        "{}",
        r.stderr
    );
    let r = tasklisp(dir.path(), &["eval", "--help"]);
    assert!(r.stdout.contains("--provider"), "{}", r.stdout);
}

#[test]
fn every_subcommand_argument_has_help() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (command, argument) in [
        ("run", "FILE"),
        ("run", "ARGS"),
        ("eval", "EXPRS"),
        ("check", "FILES"),
        ("log", "RUN"),
    ] {
        let r = tasklisp(dir.path(), &[command, "--help"]);
        let line = r
            .stdout
            .lines()
            .find(|l| {
                l.trim_start().starts_with(&format!("<{argument}>"))
                    || l.trim_start().starts_with(&format!("[{argument}]"))
            })
            .unwrap_or_else(|| panic!("{command} --help lists {argument}: {}", r.stdout));
        let text = line
            .trim_start()
            .split_once(' ')
            .map_or("", |(_, t)| t.trim());
        assert!(
            !text.is_empty(),
            "{command} {argument} has no help: {}",
            r.stdout
        );
    }
}

#[test]
fn run_error_exits_1_with_a_report_naming_code_reason_and_message() {
    let r = run_script(
        "(println \"before\")\n(fail :my_reason \"it broke\")\n",
        &[],
    );
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "before\n");
    let code = r.stderr.find("TASK_FAILURE").expect("the code");
    let reason = r.stderr.find("my_reason").expect("the reason");
    let message = r.stderr.find("it broke").expect("the message");
    assert!(code < reason && reason < message, "{}", r.stderr);
    assert!(
        r.stderr.contains("main.sexp:2:1"),
        "the report points at the source: {}",
        r.stderr
    );
}

#[test]
fn reports_have_no_colour_when_stderr_is_not_a_terminal() {
    let r = run_script("(car 1 2 3)", &[]);
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.contains("EVAL_ERROR"), "{}", r.stderr);
    assert!(
        !r.stderr.contains('\u{1b}'),
        "escape codes in {:?}",
        r.stderr
    );
}

#[test]
fn reports_do_not_wrap_long_messages() {
    let long = "word ".repeat(60);
    let r = run_script(&format!("(error \"{}\")", long.trim_end()), &[]);
    assert!(r.stderr.contains(long.trim_end()), "{}", r.stderr);
}

#[test]
fn run_a_missing_file_is_bad_usage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = tasklisp(dir.path(), &["run", "nowhere.sexp"]);
    assert_eq!(r.status, Some(2));
    assert!(
        r.stderr.contains("cannot read nowhere.sexp"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
}

#[test]
fn run_a_syntax_error_anywhere_runs_nothing() {
    let r = run_script("(println \"first\")\n(println \"second\"\n", &[]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("SYNTAX_ERROR") && r.stderr.contains("unclosed"),
        "{}",
        r.stderr
    );
}

#[test]
fn run_a_file_that_is_not_utf8_is_a_syntax_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("bad.sexp"), b"(prn \"a\xff\")").expect("write");
    let r = tasklisp(dir.path(), &["run", "bad.sexp"]);
    assert_eq!(r.status, Some(1));
    assert!(
        r.stderr.contains("SYNTAX_ERROR") && r.stderr.contains("UTF-8"),
        "{}",
        r.stderr
    );
}

#[test]
fn exit_sets_the_status() {
    let r = run_script("(println \"bye\")\n(exit 3)\n(println \"never\")", &[]);
    assert_eq!(
        (r.status, r.stdout.as_str(), r.stderr.as_str()),
        (Some(3), "bye\n", "")
    );
}

#[test]
fn bad_usage_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [
        &["bogus"][..],
        &["run"],
        &["--no-such-flag", "eval", "1"],
        &["eval"],
        &["--max-depth", "x", "eval", "1"],
    ] {
        let r = tasklisp(dir.path(), args);
        assert_eq!(r.status, Some(2), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.is_empty());
    }
}

#[test]
fn help_and_version_exit_0() {
    let dir = tempfile::tempdir().expect("temp dir");
    for flag in ["--help", "--version"] {
        let r = tasklisp(dir.path(), &[flag]);
        assert_eq!(r.status, Some(0), "{flag}");
        assert!(r.stdout.contains("tasklisp"), "{flag}: {}", r.stdout);
    }
}

#[test]
fn eval_prints_the_last_value_in_canonical_form() {
    let r = eval(&[
        "(define x 2)",
        "(* x 21)",
        "(list x \"s\" :k 1.0 nil {\"a\" [1]})",
    ]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "(2 \"s\" :k 1.0 nil {\"a\" (1)})\n");
}

#[test]
fn eval_prints_output_before_the_value() {
    let r = eval(&["(println \"side\")", "7"]);
    assert_eq!(r.stdout, "side\n7\n");
}

#[test]
fn eval_starts_the_value_on_its_own_line_after_unfinished_output() {
    let r = eval(&["(display \"hi\")"]);
    assert_eq!(r.stdout, "hi\nnil\n");
}

#[test]
fn eval_accepts_negative_numbers() {
    let r = eval(&["-5"]);
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (Some(0), "-5\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn eval_json_prints_json() {
    let r = eval(&["--json", "{\"a\" [1 2.5 nil true] \"b\" {}}"]);
    assert_eq!(r.stdout, "{\"a\":[1,2.5,null,true],\"b\":{}}\n");
    let r = eval(&["--json", "\"text\""]);
    assert_eq!(r.stdout, "\"text\"\n");
}

#[test]
fn eval_json_of_a_procedure_is_an_error() {
    let r = eval(&["--json", "car"]);
    assert_eq!(r.status, Some(1));
    assert!(
        r.stderr.contains("cannot convert a procedure to JSON"),
        "{}",
        r.stderr
    );
}

#[test]
fn eval_errors_exit_1() {
    let r = eval(&["(+ 1 nope)"]);
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.contains("unbound symbol: nope"), "{}", r.stderr);
}

#[test]
fn check_reads_without_running() {
    let (dir, _) = script("(println \"should not print\")\n(exit 3)\n");
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "main.sexp: ok\n");
}

#[test]
fn check_reports_unbound_names_and_wrong_arities_with_their_places() {
    let (dir, _) = script(
        "(define (greet name) (str \"hi \" name))\n\
         (greet \"a\" \"b\")\n\
         (prn (lenght '(1)))\n\
         (string-append \"a\" \"b\")\n\
         (car 1 2)\n",
    );
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "");
    for expected in [
        "greet: expected 1 argument, got 2",
        "main.sexp:2:1",
        "unbound symbol: lenght",
        "did you mean `length`?",
        "main.sexp:3:7",
        "unbound symbol: string-append",
        "did you mean `str`?",
        "car: expected 1 argument, got 2",
    ] {
        assert!(r.stderr.contains(expected), "{expected}: {}", r.stderr);
    }
}

#[test]
fn check_warns_of_problems_a_run_may_never_reach_and_fails_on_those_it_must() {
    // Each of these runs: `check` passes it, with a warning for what would fail if reached.
    let (dir, _) = script(
        "(prn (if false (car 1 2 3) 1))\n\
         (prn (try (car 1 2 3) (catch e 2)))\n\
         (define (f) (lenght 1))\n\
         (deftask t (x) :prompt \"{{x}}\")\n\
         (prn (try (t :y 1) (catch e 3)))\n",
    );
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (Some(0), "1\n2\n3\n"),
        "{}",
        r.stderr
    );
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "main.sexp: ok (4 warnings)\n");
    for expected in [
        "main.sexp:1:16",
        "main.sexp:2:11",
        "unbound symbol: lenght",
        "task `t`: unknown named argument :y",
    ] {
        assert!(r.stderr.contains(expected), "{expected}: {}", r.stderr);
    }
    let r = tasklisp(
        dir.path(),
        &["check", "--error-format", "json", "main.sexp"],
    );
    let severities = r.stderr.matches("\"severity\":\"warning\"").count();
    assert_eq!(severities, 4, "{}", r.stderr);
    let r = tasklisp(dir.path(), &["check", "--strict", "main.sexp"]);
    assert_eq!((r.status, r.stdout.as_str()), (Some(1), ""));
    // A definition made by `eval` is known only by running it.
    std::fs::write(
        dir.path().join("main.sexp"),
        "(eval '(define x 1))\n(prn x)\n",
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let r = tasklisp(dir.path(), &["check", "--strict", "main.sexp"]);
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (Some(0), "main.sexp: ok\n"),
        "{}",
        r.stderr
    );
}

#[test]
fn check_does_not_depend_on_the_order_of_files() {
    let (dir, _) = script("(prn (helper 1))\n(deftask t (x) :prompt \"{{x}}\")\n");
    std::fs::write(
        dir.path().join("lib.sexp"),
        "(define (helper x) (t x))\n(define (uses-main) (helper 2))\n",
    )
    .expect("write");
    for order in [["main.sexp", "lib.sexp"], ["lib.sexp", "main.sexp"]] {
        let r = tasklisp(dir.path(), &["check", order[0], order[1]]);
        assert_eq!(r.status, Some(0), "{order:?}: {}", r.stderr);
        assert_eq!(r.stdout, format!("{}: ok\n{}: ok\n", order[0], order[1]));
    }
    std::fs::write(dir.path().join("lib.sexp"), "(define (helper) 0)\n").expect("write");
    let r = tasklisp(dir.path(), &["check", "main.sexp", "lib.sexp"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "lib.sexp: ok\n");
    assert!(
        r.stderr.contains("helper: expected 0 arguments, got 1"),
        "{}",
        r.stderr
    );
}

#[test]
fn check_reports_a_task_two_xml_files_define_on_the_second() {
    let (dir, _) = script("");
    let task = r#"<task name="shared"><instructions>hi</instructions></task>"#;
    for file in ["first.xml", "second.xml"] {
        std::fs::write(dir.path().join(file), task).expect("write");
    }
    let r = tasklisp(dir.path(), &["check", "first.xml", "second.xml"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
    assert_eq!(r.stdout, "first.xml: ok\n");
    assert!(
        r.stderr.contains("`shared` is defined twice")
            && r.stderr.contains("first.xml")
            && r.stderr.contains("second.xml"),
        "{}",
        r.stderr
    );
}

#[test]
fn check_reports_task_calls_whose_arguments_do_not_fit() {
    let (dir, _) = script(
        "(deftask greet (name (tone \"warm\")) :prompt \"Hi {{name}}, {{tone}}\")\n\
         (greet \"Al\" :tnoe \"cold\")\n\
         (greet \"Al\" \"b\" \"c\")\n\
         (greet :tone \"dry\")\n\
         (greet \"Al\" :tone \"dry\")\n",
    );
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    for expected in [
        "task `greet`: unknown named argument :tnoe",
        "main.sexp:2:1",
        "did you mean `tone`?",
        "task `greet`: too many arguments: it takes 2 and argument 3 is extra",
        "main.sexp:3:1",
        "task `greet`: missing required argument `name`",
        "main.sexp:4:1",
    ] {
        assert!(r.stderr.contains(expected), "{expected}: {}", r.stderr);
    }
    assert!(!r.stderr.contains("main.sexp:5:"), "{}", r.stderr);
}

#[test]
fn check_reports_template_tags_that_name_nothing() {
    let (dir, _) = script(
        "(deftask greet (name) :prompt \"Hi {{nmae}} and {{topic}}\" :system \"{{issues}}\")\n\
         (let ((topic \"bread\")) (greet \"Al\"))\n",
    );
    // A template is rendered only when its task is called: a warning, which `--strict`
    // makes fail.
    let r = tasklisp(dir.path(), &["check", "--strict", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "");
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(0));
    assert_eq!(r.stdout, "main.sexp: ok (1 warning)\n");
    for expected in [
        "task `greet`: template tag {{nmae}} names no parameter or binding",
        "main.sexp:1:31",
        "did you mean `name`?",
    ] {
        assert!(r.stderr.contains(expected), "{expected}: {}", r.stderr);
    }
    // `topic` may come from a caller's environment, `issues` from audit retries.
    assert!(!r.stderr.contains("tag {{topic}}"), "{}", r.stderr);
    assert!(!r.stderr.contains("tag {{issues}}"), "{}", r.stderr);
}

#[test]
fn check_suggests_names_for_xml_arguments_references_and_tags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let xml = |body: &str| {
        format!(
            "<tasks>\n<task name=\"summ\" type=\"atomic\"><inputs><input name=\"text\"/></inputs>\
             <instructions>Summarise {{{{text}}}}</instructions></task>\n{body}\n</tasks>\n"
        )
    };
    let cases = [
        (
            "<task name=\"p\" type=\"sequential\"><steps><call template=\"summ\">\
             <arg name=\"txt\">\"x\"</arg></call></steps></task>",
            "task `summ` has no input `txt`",
            "did you mean `text`?",
        ),
        (
            "<task name=\"p\" type=\"sequential\"><steps><task ref=\"sum\"/></steps></task>",
            "unknown task `sum`",
            "did you mean `summ`?",
        ),
        (
            "<task name=\"p\" type=\"atomic\"><inputs><input name=\"text\"/></inputs>\
             <instructions>{{txet}}</instructions></task>",
            "task `p`: template tag {{txet}} names no parameter or binding",
            "did you mean `text`?",
        ),
    ];
    for (body, error, hint) in cases {
        std::fs::write(dir.path().join("t.xml"), xml(body)).expect("write");
        let r = tasklisp(dir.path(), &["check", "--strict", "t.xml"]);
        assert_eq!(r.status, Some(1), "{body}");
        assert!(r.stderr.contains(error), "{error}: {}", r.stderr);
        assert!(r.stderr.contains(hint), "{hint}: {}", r.stderr);
        assert!(r.stderr.contains("t.xml:3:"), "{}", r.stderr);
    }
}

#[test]
fn check_follows_the_xml_imports_of_a_script_in_any_order() {
    // alias.xml names `draft`, which draft.xml, imported after it, defines.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/xml");
    let r = tasklisp(&dir, &["check", "alias_resolved_at_call_time.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "alias_resolved_at_call_time.sexp: ok\n");
    let r = tasklisp(&dir, &["check", "templates/late/alias.xml"]);
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.contains("unknown task `draft`"), "{}", r.stderr);
}

#[test]
fn unknown_named_arguments_and_tasks_suggest_the_nearest_name() {
    let task = "(deftask greet (name (tone \"warm\")) :prompt \"Hi {{name}}\")\n";
    for (call, error, hint) in [
        (
            "(greet \"Al\" :tnoe 1)",
            "unknown named argument :tnoe",
            "did you mean `tone`?",
        ),
        (
            "(get-task \"gret\")",
            "no task named `gret`",
            "did you mean `greet`?",
        ),
        (
            "(call-task \"gret\" {})",
            "no task named `gret`",
            "did you mean `greet`?",
        ),
    ] {
        let r = run_script(&format!("{task}{call}\n"), &[]);
        assert_eq!(r.status, Some(1), "{call}");
        assert!(r.stderr.contains(error), "{error}: {}", r.stderr);
        assert!(r.stderr.contains(hint), "{hint}: {}", r.stderr);
    }
}

#[test]
fn check_reports_a_syntax_error_and_goes_on() {
    let (dir, _) = script("(println \"fine\")");
    std::fs::write(dir.path().join("broken.sexp"), "(define (f x)\n  (+ x 1)\n").expect("write");
    let r = tasklisp(dir.path(), &["check", "broken.sexp", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "main.sexp: ok\n");
    assert!(
        r.stderr.contains("SYNTAX_ERROR") && r.stderr.contains("broken.sexp"),
        "{}",
        r.stderr
    );
}

#[test]
fn check_passes_the_shipped_examples_in_every_order() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = ["examples", "examples/templates"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("examples"))
        .map(|entry| entry.expect("entry").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("sexp" | "xml")))
        .map(|p| p.strip_prefix(&root).expect("inside").display().to_string())
        .collect();
    files.sort();
    // Each file first once (rotations), and the whole list reversed.
    let mut orders: Vec<Vec<String>> = (0..files.len())
        .map(|i| [&files[i..], &files[..i]].concat())
        .collect();
    orders.push(files.iter().rev().cloned().collect());
    for order in orders {
        let mut args = vec!["check"];
        args.extend(order.iter().map(String::as_str));
        let r = tasklisp(&root, &args);
        assert_eq!(r.status, Some(0), "{order:?}: {}", r.stderr);
        let expected: String = order.iter().map(|f| format!("{f}: ok\n")).collect();
        assert_eq!(r.stdout, expected);
    }
}

#[test]
fn check_knows_the_names_an_xml_import_gives_its_tasks() {
    let (dir, _) = script(
        "(import \"t.xml\" :as cr)\n\
         (import \"t.xml\" :as one :only (b))\n\
         (prn (cr/a 1) (cr/b) (one/b))\n",
    );
    std::fs::write(
        dir.path().join("t.xml"),
        r#"<tasks>
  <task name="a"><inputs><input name="x"/></inputs><instructions>{{x}}</instructions></task>
  <task name="b" type="sequential"><steps><call template="a"><arg>1</arg></call></steps></task>
  <task name="c"><instructions>c</instructions></task>
</tasks>"#,
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "main.sexp: ok\n");
    let run = tasklisp(dir.path(), &["--provider", "echo", "run", "main.sexp"]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    // What run would not find, check reports: the plain names, a task `:only` left out.
    for (call, unbound) in [("(a 1)", "a"), ("(one/c)", "one/c"), ("(cr/a)", "")] {
        std::fs::write(
            dir.path().join("main.sexp"),
            format!("(import \"t.xml\" :as cr)\n(import \"t.xml\" :as one :only (b))\n{call}\n"),
        )
        .expect("write");
        let r = tasklisp(dir.path(), &["check", "main.sexp"]);
        assert_eq!(r.status, Some(1), "{call}");
        let expected = match unbound {
            "" => "task `cr/a`: missing required argument `x`".to_owned(),
            name => format!("unbound symbol: {name}"),
        };
        assert!(r.stderr.contains(&expected), "{call}: {}", r.stderr);
        let run = tasklisp(dir.path(), &["--provider", "echo", "run", "main.sexp"]);
        assert_eq!(run.status, Some(1), "{call}");
        assert!(!run.stderr.contains("no model provider"), "{}", run.stderr);
    }
}

#[test]
fn check_resolves_xml_references_to_sexp_tasks_in_any_order() {
    let (dir, _) = script("");
    std::fs::write(
        dir.path().join("lib.sexp"),
        "(deftask shout (text) :prompt \"Shout {{text}}\")\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("flow.xml"),
        r#"<task name="loud" type="sequential">
  <inputs><input name="text"/></inputs>
  <steps><task ref="shout"/><call template="shout"><arg>text</arg></call></steps>
</task>"#,
    )
    .expect("write");
    for order in [["flow.xml", "lib.sexp"], ["lib.sexp", "flow.xml"]] {
        let r = tasklisp(dir.path(), &["check", order[0], order[1]]);
        assert_eq!(r.status, Some(0), "{order:?}: {}", r.stderr);
        assert_eq!(r.stdout, format!("{}: ok\n{}: ok\n", order[0], order[1]));
    }
    let r = tasklisp(dir.path(), &["check", "flow.xml"]);
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.contains("unknown task `shout`"), "{}", r.stderr);
}

#[test]
fn check_reads_a_redefined_special_form_as_the_run_does() {
    let (dir, _) = script(
        "(define cond (fn (x) (* x 2)))\n\
         (define (do x) (+ x 1))\n\
         (define (case x) (* x 3))\n\
         (define (when) 0)\n\
         (println (cond 21) (do 1) (case 2) (when))\n\
         (begin (define (unless a b) (- a b)) (println (unless 3 2)))\n",
    );
    // Another file given after it still has the language's own `cond` and `do`.
    std::fs::write(
        dir.path().join("plain.sexp"),
        "(println (cond ((= 1 2) 0) (else 1)) (do ((i 0 (+ i 1))) ((= i 2) i)))\n",
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (Some(0), "42 2 6 0\n1\n"),
        "{}",
        r.stderr
    );
    let r = tasklisp(dir.path(), &["check", "main.sexp", "plain.sexp"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "main.sexp: ok\nplain.sexp: ok\n");
}

#[test]
fn check_reports_what_a_definition_would_refuse() {
    let (dir, _) = script("(import \"fresh.xml\")\n");
    let refused = ":fresh-context true runs the task with nothing inherited, so it cannot go with :inherit-context \"full\" or \"subset\"";
    for mode in ["full", "subset"] {
        std::fs::write(
            dir.path().join("fresh.xml"),
            format!(
                r#"<task name="isolated" inherit_context="{mode}">
  <instructions>hi</instructions>
  <context_management><fresh_context>true</fresh_context></context_management>
</task>"#
            ),
        )
        .expect("write");
        for file in ["fresh.xml", "main.sexp"] {
            let r = tasklisp(dir.path(), &["check", file]);
            assert_eq!(r.status, Some(1), "{mode} {file}");
            assert!(r.stderr.contains("VALIDATION_ERROR"), "{}", r.stderr);
            assert!(r.stderr.contains(refused), "{}", r.stderr);
            assert!(r.stderr.contains("fresh.xml:3:"), "{}", r.stderr);
        }
        let r = tasklisp(dir.path(), &["run", "main.sexp"]);
        assert_eq!(r.status, Some(1), "{mode}: run refuses it too");
        assert!(r.stderr.contains(refused), "{}", r.stderr);
    }
    // The same in a deftask; an option written as an expression is left to the run.
    std::fs::write(
        dir.path().join("main.sexp"),
        "(define mode \"full\")\n\
         (deftask later () :prompt \"x\" :fresh-context true :inherit-context mode)\n\
         (deftask now () :prompt \"x\" :fresh-context true :inherit-context \"subset\")\n",
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["check", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.contains(refused), "{}", r.stderr);
    assert!(r.stderr.contains("main.sexp:3:"), "{}", r.stderr);
    assert!(!r.stderr.contains("main.sexp:2:"), "{}", r.stderr);
}

#[test]
fn max_depth_limits_recursion() {
    let program = "(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1)))))\n(prn (f 100))";
    let shallow = run_script(program, &["--max-depth", "50"]);
    assert_eq!(shallow.status, Some(1));
    assert!(
        shallow.stderr.contains("RESOURCE_EXHAUSTION"),
        "{}",
        shallow.stderr
    );
    assert!(
        shallow.stderr.contains("recursion deeper than 50 frames"),
        "{}",
        shallow.stderr
    );
    let deep = run_script(program, &["--max-depth", "500"]);
    assert_eq!((deep.status, deep.stdout.as_str()), (Some(0), "100\n"));
}

#[test]
fn max_depth_allows_deep_recursion_when_raised() {
    let program = "(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1)))))\n(prn (f 50000))";
    let default = run_script(program, &[]);
    assert_eq!(default.status, Some(1));
    let raised = run_script(program, &["--max-depth", "60000"]);
    assert_eq!(
        (raised.status, raised.stdout.as_str()),
        (Some(0), "50000\n"),
        "{}",
        raised.stderr
    );
}

/// Loops whose frames hold a procedure closing over the frame: each frame is a reference
/// cycle, which leaked about 160 bytes a step (48 MB at 300,000 steps) until the
/// evaluator broke such cycles when it let go of a frame. Under a 16 MB heap each must
/// finish, with the answers of procedures that outlived their call intact.
#[test]
fn loops_whose_bodies_define_helpers_run_in_constant_memory() {
    let programs = [
        // A helper called from the body, the loop a self tail call.
        "(define (walk n) (define (done?) (= n 0)) (if (done?) 'done (walk (- n 1))))\n\
         (prn (walk 300000))",
        // A helper called in tail position, which calls the procedure again.
        "(define (go n) (define (next) (go (- n 1))) (if (= n 0) 'done (next)))\n\
         (prn (go 300000))",
        // The helper defined in a `let` of the body.
        "(define (walk n) (let ((m n)) (define (done?) (= m 0)) \
         (if (done?) 'done (walk (- n 1)))))\n(prn (walk 300000))",
        // Two helpers calling each other.
        "(define (walk n) (define (ev? k) (if (= k 0) #t (od? (- k 1)))) \
         (define (od? k) (if (= k 0) #f (ev? (- k 1)))) \
         (if (= n 0) 'done (begin (ev? 3) (walk (- n 1)))))\n(prn (walk 300000))",
        // A helper kept past its call keeps its frame, and sees its own `n`.
        "(define (walk n kept) (define (mine) n) \
         (if (= n 0) (map (lambda (f) (f)) kept) \
         (walk (- n 1) (if (= 0 (modulo n 100000)) (cons mine kept) kept))))\n\
         (prn (walk 300000 '()))",
        // Objects as procedures (a body's helpers, one of them returned), made and
        // dropped in a loop: each frame is freed once its returned procedure is.
        "(define (account balance) \
         (define (deposit amount) (set! balance (+ balance amount)) balance) \
         (define (dispatch m) (if (eq? m 'deposit) deposit balance)) dispatch)\n\
         (define (churn n total) (if (= n 0) total \
         (let ((a (account n))) ((a 'deposit) 1) (churn (- n 1) (+ total (a 'balance))))))\n\
         (define kept (account 0))\n\
         (prn (churn 200000 0) ((kept 'deposit) 2) ((kept 'deposit) 3))",
        // A `catch` handler that defines a helper.
        "(define (f n) (try (error \"x\") (catch e (define (h) n) (h))))\n\
         (define (loop i acc) (if (= i 30000) acc (loop (+ i 1) (+ acc (f i)))))\n\
         (prn (loop 0 0))",
        // A task whose body defines a helper.
        "(deftask t (n) (define (h) n) (h))\n\
         (define (loop i acc) (if (= i 100000) acc \
         (loop (+ i 1) (+ acc (string->number (get (t i) \"content\"))))))\n\
         (prn (loop 0 0))",
        // An object that lets go of itself (`(set! h #f)`) is freed at once, with the
        // 100,000-element list it holds, not kept until the cycles are next looked at.
        "(define (make) (define data (range 100000)) \
         (define (h) (set! h #f) (length data)) h)\n\
         (define (loop i) (if (< i 100) (begin ((make)) (loop (+ i 1))) 'ok))\n\
         (prn (loop 0))",
    ];
    let expected = [
        "done\n",
        "done\n",
        "done\n",
        "done\n",
        "(100000 200000 300000)\n",
        "20000300000 2 5\n",
        "449985000\n",
        "4999950000\n",
        "ok\n",
    ];
    assert_each_prints_within("16M", &programs, &expected);
}

/// Runs each program under `--max-memory limit`, expecting it to succeed and print its
/// expected output.
fn assert_each_prints_within<P: AsRef<str>>(limit: &str, programs: &[P], expected: &[&str]) {
    assert_eq!(programs.len(), expected.len());
    for (program, expected) in programs.iter().zip(expected) {
        let program = program.as_ref();
        let r = run_script(program, &["--max-memory", limit]);
        assert_eq!(
            (r.status, r.stdout.as_str()),
            (Some(0), *expected),
            "{program}\n{}",
            r.stderr
        );
    }
}

/// A frame reused from the pool once held a larger `let`: a procedure made in it holds
/// only the frame's own slots, not that storage. 100,000 such procedures, kept, need
/// about 13 and 21 MiB; holding the 16- or 64-slot storage took about 34 MiB.
#[test]
fn procedures_made_in_reused_frames_hold_only_their_slots() {
    let wide_let = |bindings: usize| {
        let names: Vec<String> = (0..bindings).map(|i| format!("(v{i} {i})")).collect();
        format!("(let ({}) v0)", names.join(" "))
    };
    let programs = [
        // The procedure captures the frame of a call after a wide `let` ran.
        format!(
            "(define (mk k) (fn () k))\n\
             (define (lp i acc) (if (= i 100000) (length acc) \
             (begin {} (lp (+ i 1) (cons (mk i) acc)))))\n(prn (lp 0 '()))",
            wide_let(16)
        ),
        // The procedure captures a `let` frame after a wider `let` ran.
        format!(
            "(define (lp i acc) (if (= i 100000) acc \
             (begin {} (lp (+ i 1) (cons (let ((k i)) (fn () k)) acc)))))\n\
             (define r (lp 0 '()))\n(prn (length r) ((car r)))",
            wide_let(64)
        ),
    ];
    assert_each_prints_within("28M", &programs, &["100000\n", "100000 99999\n"]);
}

#[test]
fn max_depth_after_the_command() {
    let r = eval(&[
        "--max-depth",
        "10",
        "(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1)))))",
        "(f 20)",
    ]);
    assert_eq!(r.status, Some(1));
    assert!(
        r.stderr.contains("recursion deeper than 10 frames"),
        "{}",
        r.stderr
    );
}

#[test]
fn error_format_json_prints_the_error_map() {
    let r = run_script(
        "(println \"out\")\n(fail :tool_execution_error \"exit 3\" {\"code\" 3})",
        &["--error-format", "json"],
    );
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "out\n");
    let json: serde_json::Value =
        serde_json::from_str(r.stderr.trim()).expect("stderr is one JSON value");
    assert_eq!(json["type"], "TASK_FAILURE");
    assert_eq!(json["reason"], "tool_execution_error");
    assert_eq!(json["message"], "exit 3");
    assert_eq!(json["details"]["code"], 3);
    assert_eq!(json["location"]["line"], 2);
}

#[test]
fn error_format_json_for_syntax_and_resource_errors() {
    let r = run_script("(+ 1", &["--error-format", "json"]);
    let json: serde_json::Value = serde_json::from_str(r.stderr.trim()).expect("JSON");
    assert_eq!(json["type"], "SYNTAX_ERROR");
    assert_eq!(json["message"], "unclosed `(`");
    let r = run_script("(define (f) (+ 1 (f)))\n(f)", &["--error-format", "json"]);
    let json: serde_json::Value = serde_json::from_str(r.stderr.trim()).expect("JSON");
    assert_eq!(json["type"], "RESOURCE_EXHAUSTION");
    assert_eq!(json["details"]["resource"], "depth");
    assert_eq!(json["details"]["limit"], 10000);
}

#[test]
fn stdin_reaches_read_line() {
    let (dir, _) = script("(prn (read-line) (read-line))");
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .args(["run", "main.sexp"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(b"one\r\n")?;
            child.wait_with_output()
        })
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "\"one\" nil\n");
}

/// Runs `tasklisp ARGS` with `input` on stdin (echo provider, no log).
fn with_stdin(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    with_stdin_in(args, input, &[("TASKLISP_PROVIDER", "echo")])
}

/// `with_stdin` with the environment `env` instead of the echo provider.
fn with_stdin_in(
    args: &[&str],
    input: &str,
    env: &[(&str, &str)],
) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .env("TASKLISP_LOG", "off")
        .envs(env.iter().copied())
        .args(args)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .expect("runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn prompt_joins_stdin_after_the_text_and_prints_the_answer() {
    // The echo provider answers with the prompt it was sent.
    let (status, out, _) = with_stdin(
        &["prompt", "Summarize", "{{this}}:"],
        "line one\nline two\n",
    );
    assert_eq!(status, Some(0));
    assert_eq!(out, "Summarize {{this}}:\n\nline one\nline two\n");
    let (_, out, _) = with_stdin(&["prompt", "-s", "Be terse.", "--json"], "only stdin");
    assert_eq!(
        out,
        "{\"content\":\"only stdin\",\"status\":\"COMPLETE\",\"parsedContent\":null,\"notes\":{\"task\":\"prompt\",\"rounds\":1}}\n"
    );
    let (_, out, _) = with_stdin(
        &["prompt", "--schema", r#"{"type": "object"}"#],
        r#"{"a": 1}"#,
    );
    assert_eq!(out, "{\"a\": 1}\n");
    let (status, _, err) = with_stdin(&["prompt", "--schema", "object"], "not json");
    assert_eq!(status, Some(1));
    assert!(
        err.contains("INVALID_OUTPUT") || err.contains("TASK_FAILURE"),
        "{err}"
    );
    let (status, _, err) = with_stdin(&["prompt"], "");
    assert_eq!(status, Some(1));
    assert!(err.contains("nothing to ask"), "{err}");
}

/// With no provider named and no API key, a model call fails saying how to configure
/// one (it used to answer with the prompt, exit 0); `echo` answers only when named.
#[test]
fn with_no_provider_configured_a_model_call_fails_and_says_how_to_configure_one() {
    let (status, out, err) = with_stdin_in(&["prompt", "hello"], "", &[]);
    assert_eq!((status, out.as_str()), (Some(1), ""), "{err}");
    for words in [
        "llm_error",
        "no model provider is configured",
        "--provider",
        "OPENAI_API_KEY",
    ] {
        assert!(err.contains(words), "{words}: {err}");
    }
    let (status, _, err) = with_stdin_in(&["-m", "gpt-4o-mini", "prompt", "hello"], "", &[]);
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("no model provider is configured"), "{err}");
    let script = "(deftask ask (q) :prompt \"{{q}}\")\n(println (get (ask \"hi\") \"content\"))\n";
    let r = run_script(script, &[]);
    assert_eq!((r.status, r.stdout.as_str()), (Some(1), ""), "{}", r.stderr);
    assert!(
        r.stderr.contains("no model provider is configured"),
        "{}",
        r.stderr
    );
    // A program without model calls needs no provider; echo answers when named.
    let r = run_script("(println (+ 1 2))", &[]);
    assert_eq!((r.status, r.stdout.as_str()), (Some(0), "3\n"));
    let r = run_script(script, &["--provider", "echo"]);
    assert_eq!((r.status, r.stdout.as_str()), (Some(0), "hi\n"));
}

/// A plain-text answer cut off by the token limit is printed, with a warning on stderr.
#[test]
fn the_repl_warns_of_an_answer_cut_off_by_the_token_limit() {
    let input =
        "(set-provider! (fn (r) {\"content\" \"Once upon\" \"finish_reason\" \"length\"}))\n\
                 (deftask story () :prompt \"Tell a story\")\n\
                 (get (story) \"content\")\n\
                 (story)\n";
    let (status, out, err) = with_stdin(&[], input);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.contains("\"Once upon\"\n"), "{out}");
    assert_eq!(
        err,
        "; warning: the answer was cut off by the token limit (finish reason \"length\"); raise max_tokens for the whole answer\n"
    );
}

#[test]
fn budget_flags_stop_the_call_past_them() {
    let script = "(deftask ask (q) :prompt \"{{q}}\")\n(ask \"a\")\n(ask \"b\")\n(println \"two done\")\n(ask \"c\")\n";
    let r = run_script(script, &["--provider", "echo", "--budget-calls", "2"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stdout, "two done\n");
    assert!(
        r.stderr.contains("RESOURCE_EXHAUSTION") && r.stderr.contains("budget of 2 calls"),
        "{}",
        r.stderr
    );
    // Cost is known after a call: a dollar budget of 0 stops the first one.
    let r = run_script(script, &["--provider", "echo", "--budget-usd", "0"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
}

/// Building a long string by appends frees many large strings; the allocator keeps the
/// memory rather than returning it to the kernel each time (one `madvise` per free
/// before). Counted with strace where it is installed.
#[test]
fn freeing_large_strings_does_not_call_the_kernel_each_time() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace is not installed: skipped");
        return;
    }
    let (dir, _) = script(
        "(define (grow k acc) (if (= k 0) acc (grow (- k 1) (str acc \"abcde\"))))\n\
         (prn (string-length (grow 20000 \"\")))\n",
    );
    let out = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=madvise,munmap", "-o", "counts.txt"])
        .arg(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .args(["run", "main.sexp"])
        .current_dir(dir.path())
        .output()
        .expect("strace runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "100000\n");
    let counts = std::fs::read_to_string(dir.path().join("counts.txt")).expect("counts");
    let calls: u64 = counts
        .lines()
        .filter(|l| l.ends_with("madvise") || l.ends_with("munmap"))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok())
        .sum();
    assert!(calls < 100, "{calls} madvise/munmap calls:\n{counts}");
}

#[test]
fn an_error_in_a_text_no_longer_kept_says_so_instead_of_quoting_it() {
    // The registry keeps the 4,096 most recent texts of a session: after more inputs, a
    // function defined in the first one still runs, and its error names no text.
    let mut input = String::from("(define (f) (car 1))\n");
    for i in 0..4_100 {
        input.push_str(&format!("(+ 0 {i})\n"));
    }
    input.push_str("(f)\n");
    let (_, out, err) = with_stdin(&[], &input);
    assert!(out.ends_with("4099\n"), "{out}");
    assert!(err.contains("car: expected a list"), "{err}");
    assert!(
        err.contains("at a text no longer kept (only the most recent texts are kept"),
        "{err}"
    );
    let (_, _, err) = with_stdin(&[], "(define (f) (car 1))\n(f)\n");
    assert!(
        err.contains("(define (f) (car 1))"),
        "a kept text is quoted: {err}"
    );
}

/// Runs `tasklisp ARGS` (the log in `dir`) with `input` on stdin and stdout a pipe
/// whose read end is closed at once, as `| head` closes it; returns the status and
/// stderr. Output larger than a pipe holds makes a write meet the closed pipe.
fn with_closed_stdout(dir: &Path, args: &[&str], input: &str) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TASKLISP_LOG", dir.join("log.db"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        // The program may stop reading once its output is refused.
        let _ = stdin.write_all(input.as_bytes());
    }
    let output = child.wait_with_output().expect("runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `tasklisp run x 2>&1 | head -1`: a failure whose report meets a closed stderr keeps
/// its own status (1, or 2 for bad usage), not a panic's 101.
#[test]
fn a_report_to_a_closed_stderr_keeps_the_failure_status() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("fail.sexp"), "(car 1)").expect("write");
    let cases: &[(&[&str], i32)] = &[
        (&["run", "fail.sexp"], 1),
        (&["eval", "(car 1)"], 1),
        (&["check", "missing.sexp"], 1),
        (&["--provider", "nope", "eval", "1"], 2),
    ];
    for (args, expected) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
            .env_clear()
            .env("TASKLISP_LOG", "off")
            .args(*args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        drop(child.stderr.take());
        let status = child.wait().expect("runs");
        assert_eq!(status.code(), Some(*expected), "{args:?}");
    }
}

#[test]
fn output_to_a_closed_pipe_ends_quietly_with_status_0() {
    let dir = tempfile::tempdir().expect("temp dir");
    let printing = "(define (loop i) (when (< i 100000) (println i) (loop (+ i 1))))\n(loop 0)";
    std::fs::write(dir.path().join("print.sexp"), printing).expect("write");
    let long_text = "abcdefghijklmnopqrstuvwxyz\n".repeat(4_000);
    let cases: &[(&[&str], &str)] = &[
        (&["run", "print.sexp"], ""),
        (&["eval", printing], ""),
        (&["eval", "(range 100000)"], ""),
        (&["--json", "eval", "(range 100000)"], ""),
        (&["--provider", "echo", "prompt"], &long_text),
        (&["--provider", "echo", "--json", "prompt"], &long_text),
        (&[], "(range 100000)\n(range 100000)\n"),
        (&[], printing),
    ];
    for (args, input) in cases {
        let (status, stderr) = with_closed_stdout(dir.path(), args, input);
        assert_eq!((status, stderr.as_str()), (Some(0), ""), "{args:?}");
    }
    // Enough runs in the log that listing them overflows the pipe.
    let calls = "(deftask t (i) :prompt \"call {{i}}\")\n(map t (range 600))";
    let (status, stderr) =
        with_closed_stdout(dir.path(), &["--provider", "echo", "eval", calls], "");
    assert_eq!((status, stderr.as_str()), (Some(0), ""));
    let log = dir.path().join("log.db");
    let log = [("TASKLISP_LOG", log.to_str().expect("a UTF-8 path"))];
    let listing = run_binary(dir.path(), &["log", "--json", "-n", "1"], &log);
    let runs: serde_json::Value = serde_json::from_str(&listing.stdout).expect("runs as JSON");
    let id = runs[0]["id"].as_str().expect("a run id");
    for args in [&["log", id][..], &["log", "--json", id]] {
        let (status, stderr) = with_closed_stdout(dir.path(), args, "");
        assert_eq!((status, stderr.as_str()), (Some(0), ""), "{args:?}");
    }
}

#[test]
fn output_that_cannot_be_written_is_an_error() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let streamed = ["--provider", "echo", "prompt", "hi"];
    for args in [&["eval", "1"][..], &["eval", "(println 1)"], &streamed] {
        let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
            .env("TASKLISP_LOG", "off")
            .args(args)
            .current_dir(dir.path())
            .stdout(full.try_clone().expect("dup"))
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("cannot write output: No space left on device"),
            "{stderr}"
        );
    }
}

/// The shell sessions of the guides (```` ```text ```` blocks of `$ command` lines and
/// what they print) are real: the commands run in a shell, in a fresh directory, and
/// print what the guide shows.
#[test]
fn the_shell_sessions_of_the_guides_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary = Path::new(env!("CARGO_BIN_EXE_tasklisp"));
    let path = format!(
        "{}:{}",
        binary.parent().expect("a directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut sessions = 0;
    let guides = std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .map(|entry| entry.expect("an entry").path())
        .chain([root.join("README.md")]);
    for guide in guides.filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(&guide).expect("a guide");
        for block in common::code_blocks(&text, "text") {
            if !block.starts_with("$ ") {
                continue;
            }
            let script: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("$ ")).collect();
            let shown: Vec<&str> = block.lines().filter(|l| !l.starts_with("$ ")).collect();
            let dir = tempfile::tempdir().expect("temp dir");
            let output = Command::new("sh")
                .arg("-c")
                .arg(format!("exec 2>&1\n{}", script.join("\n")))
                .current_dir(dir.path())
                .env_clear()
                .env("PATH", &path)
                .env("HOME", dir.path())
                .env("TASKLISP_LOG", "off")
                .env("LC_ALL", "C.UTF-8")
                .stdin(Stdio::null())
                .output()
                .expect("sh runs");
            let printed = String::from_utf8_lossy(&output.stdout);
            let printed: Vec<&str> = printed.lines().map(str::trim_end).collect();
            assert_eq!(printed, shown, "{}:\n{block}", guide.display());
            sessions += 1;
        }
    }
    assert!(sessions >= 2, "found {sessions} sessions");
}

/// Reports state each distinct error once: the nested errors of steps by the innermost
/// one, runs of the same task calls counted, a cycle of XML references as the
/// exhaustion it ends in.
#[test]
fn failure_reports_show_each_error_once() {
    let (dir, _) = script(
        "(deftask inner (x) :command [\"sh\" \"-c\" \"echo oops >&2; exit 3\"])\n\
         (deftask mid (x) (sequential (inner x)))\n\
         (deftask top (x) (sequential (mid x)))\n\
         (top \"a\")\n",
    );
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(r.status, Some(1));
    assert_eq!(
        r.stderr,
        "TASK_FAILURE

  × subtask_failure: step 0 failed: tool_execution_error: task `inner`: sh exited with status 3: oops
   ╭─[main.sexp:2:30]
 1 │ (deftask inner (x) :command [\"sh\" \"-c\" \"echo oops >&2; exit 3\"])
 2 │ (deftask mid (x) (sequential (inner x)))
   ·                              ────┬────
   ·                                  ╰── here
 3 │ (deftask top (x) (sequential (mid x)))
   ╰────
  help: in top › step 0 › mid › step 0 › inner
        details: {\"step\":0,\"step_results\":[]}
        cause details: {\"script_stdout\":\"\",\"script_stderr\":\"oops\\n\",\"script_exit_code\":3}
"
    );
    std::fs::write(
        dir.path().join("main.sexp"),
        "(deftask t (n) (t n))\n(t 1)\n",
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(
        r.stderr,
        "RESOURCE_EXHAUSTION

  × task calls nested deeper than 100 (at `t`)
   ╭─[main.sexp:1:16]
 1 │ (deftask t (n) (t n))
   ·                ──┬──
   ·                  ╰── here
 2 │ (t 1)
   ╰────
  help: in t ×100
        details: {\"resource\":\"task_depth\",\"used\":101,\"limit\":100}
"
    );
    std::fs::write(
        dir.path().join("cycle.xml"),
        "<tasks>\n\
         <task name=\"a\" type=\"sequential\"><steps><task ref=\"b\"/></steps></task>\n\
         <task name=\"b\" type=\"sequential\"><steps><task ref=\"a\"/></steps></task>\n\
         </tasks>\n",
    )
    .expect("write");
    let r = tasklisp(dir.path(), &["--import", "cycle.xml", "eval", "(a)"]);
    assert_eq!(r.status, Some(1));
    let report: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(report.first(), Some(&"RESOURCE_EXHAUSTION"), "{}", r.stderr);
    assert!(
        r.stderr.ends_with(
            "  help: in (a › step 0 › b › step 0) ×50
        details: {\"resource\":\"task_depth\",\"used\":101,\"limit\":100}
"
        ),
        "{}",
        r.stderr
    );
}

/// `tasklisp prompt` runs code of its own; its errors point at none of it.
#[test]
fn prompt_errors_show_no_source_the_user_did_not_write() {
    let (status, out, err) = with_stdin(
        &["--provider", "echo", "prompt", "--schema", "object"],
        "not json",
    );
    assert_eq!((status, out.as_str()), (Some(1), ""));
    assert!(
        !err.contains("deftask") && !err.contains("<prompt>"),
        "{err}"
    );
    assert!(
        err.starts_with(
            "TASK_FAILURE\n\n  × output_format_failure: Expected JSON output but it does not parse"
        ),
        "{err}"
    );
    assert!(
        err.contains("\n  help: in prompt\n        details: {"),
        "{err}"
    );
}

/// `--error-format json` is bounded: a failure carrying a 100 KB answer through nested
/// steps is printed shortened, with a marker.
#[test]
fn error_format_json_is_bounded_through_nested_steps() {
    let r = run_script(
        "(define big (apply str (map (fn (i) \"0123456789\") (range 10000))))\n\
         (set-provider! (fn (req) big))\n\
         (deftask fetch () :prompt \"go\")\n\
         (deftask check () (sequential (fetch) (fetch) (fail :llm_error \"bad\")))\n\
         (deftask outer () (sequential (check)))\n\
         (outer)",
        &["--error-format", "json"],
    );
    assert_eq!(r.status, Some(1));
    assert!(r.stderr.len() < 64 * 1024, "{} bytes", r.stderr.len());
    let json: serde_json::Value = serde_json::from_str(r.stderr.trim()).expect("one JSON value");
    assert_eq!(json["reason"], "subtask_failure");
    assert_eq!(json["details"]["subtaskError"]["reason"], "subtask_failure");
    assert!(r.stderr.contains("more characters)"), "{}", r.stderr);
}

/// `write-file` replaces a file whole or not at all: a program killed in the middle of
/// writing (here by the file size limit, as a full disk would stop it) leaves the old
/// text, where it used to leave the file cut short.
#[test]
fn write_file_never_leaves_a_half_written_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.txt");
    std::fs::write(&out, "old text").expect("write");
    let big = "(write-file \"out.txt\" (apply str (map (fn (i) \"0123456789\") (range 10000))))";
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -f 8; exec \"$0\" eval '{big}'",))
        .arg(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    assert!(!output.status.success());
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "old text");
    // What the killed program was writing is a temporary file beside it.
    let names = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("a directory")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    for name in names().iter().filter(|n| n.starts_with(".out.txt.")) {
        std::fs::remove_file(dir.path().join(name)).expect("remove");
    }
    // A write that completes replaces the text and leaves nothing beside it.
    let r = tasklisp(
        dir.path(),
        &["eval", "(write-file \"out.txt\" \"new text\")"],
    );
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "new text");
    assert_eq!(names(), ["out.txt"]);
}

#[test]
fn completions_are_scripts_for_each_shell() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (shell, marker) in [
        ("bash", "_tasklisp()"),
        ("zsh", "#compdef tasklisp"),
        ("fish", "complete -c tasklisp"),
    ] {
        let r = tasklisp(dir.path(), &["completions", shell]);
        assert_eq!(r.status, Some(0), "{}", r.stderr);
        assert!(r.stdout.contains(marker), "{shell}: {}", r.stdout);
        for word in ["fmt", "check", "provider"] {
            assert!(r.stdout.contains(word), "{shell} completes {word}");
        }
    }
    // The bash script is valid bash.
    let script = tasklisp(dir.path(), &["completions", "bash"]).stdout;
    let mut bash = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .spawn()
        .expect("bash runs");
    use std::io::Write;
    bash.stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("written");
    assert!(bash.wait().expect("bash ends").success());
    let r = tasklisp(dir.path(), &["completions", "powershell"]);
    assert_eq!(r.status, Some(2));
}

#[test]
fn a_model_failure_names_its_provider_and_model() {
    // A port that was free a moment ago: the connection is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let program = r#"(deftask t () :prompt "hi") (try (t) (catch e (get e "details")))"#;
    let r = eval(&[
        "--provider",
        "openai",
        "--base-url",
        &base,
        "-m",
        "gpt-x",
        program,
    ]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains(r#""provider" "openai""#), "{}", r.stdout);
    assert!(r.stdout.contains(r#""model" "gpt-x""#), "{}", r.stdout);
}
