//! The REPL as a person uses it: the real binary driven through a pseudo-terminal, and
//! piped standard input without a terminal.
#![cfg(unix)]

use expectrl::process::unix::WaitStatus;
use expectrl::{ControlCode, Eof, Expect, Regex, Session};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const PROMPT: &str = "tl> ";

type Repl = expectrl::session::OsSession;

/// Starts the REPL on a terminal with its history in `history`, and waits for a prompt.
fn start(history: &Path) -> Repl {
    start_with(history, &[])
}

/// [`start`] with command-line flags.
fn start_with(history: &Path, flags: &[&str]) -> Repl {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .args(flags)
        .env("TASKLISP_LOG", "off")
        .env("TASKLISP_HISTORY", history)
        .env("TERM", "xterm")
        .env("NO_COLOR", "1");
    let mut repl = Session::spawn(command).expect("the REPL starts");
    repl.set_expect_timeout(Some(Duration::from_secs(30)));
    repl.expect(PROMPT).expect("a first prompt");
    repl
}

/// Types `input` and presses Enter.
fn enter(repl: &mut Repl, input: &str) {
    repl.send(input).unwrap();
    repl.send("\r").unwrap();
}

/// Waits for `value` printed on a line of its own (the echo of the input and the
/// editor's escape sequences hold digits too), then for the next prompt.
fn expect_value(repl: &mut Repl, value: &str) {
    expect_then_prompt(repl, &format!("\n{value}\r\n"));
}

/// Waits for `text` in the output, then for the next prompt.
fn expect_then_prompt(repl: &mut Repl, text: &str) {
    repl.expect(text)
        .unwrap_or_else(|e| panic!("expected {text:?}: {e}"));
    repl.expect(PROMPT)
        .unwrap_or_else(|e| panic!("no prompt after {text:?}: {e}"));
}

/// Presses Ctrl-C until the running evaluation stops with `execution_halted` (a key
/// pressed before the evaluation starts reaches the editor, not the evaluation), then
/// waits for the prompt.
fn interrupt(repl: &mut Repl) {
    repl.set_expect_timeout(Some(Duration::from_millis(500)));
    let halted = (0..60).any(|_| {
        repl.send(ControlCode::EndOfText).unwrap();
        repl.expect("execution_halted").is_ok()
    });
    repl.set_expect_timeout(Some(Duration::from_secs(30)));
    assert!(halted, "Ctrl-C did not stop the evaluation");
    repl.expect(PROMPT).unwrap();
}

fn quit(mut repl: Repl) {
    repl.send(ControlCode::EndOfTransmission).unwrap();
    repl.expect(Eof).unwrap();
    let status = repl.get_process().wait().unwrap();
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}

fn history_file() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn banner_then_evaluation_and_ctrl_d_exits_cleanly() {
    let dir = history_file();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .env("TASKLISP_LOG", "off")
        .env("TASKLISP_HISTORY", dir.path().join("h"))
        .env("TERM", "xterm");
    let mut repl = Session::spawn(command).unwrap();
    repl.set_expect_timeout(Some(Duration::from_secs(30)));
    repl.expect(Regex(r"tasklisp \d+\.\d+\.\d+ .*:help"))
        .unwrap();
    repl.expect(PROMPT).unwrap();
    enter(&mut repl, "(* 6 7)");
    expect_value(&mut repl, "42");
    quit(repl);
}

#[test]
fn a_definition_spans_lines_and_strings_may_hold_brackets() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, "(define (square x)");
    enter(&mut repl, "  (* x x))");
    expect_value(&mut repl, "square");
    enter(&mut repl, "(square 12)");
    expect_value(&mut repl, "144");
    enter(&mut repl, "(string-length \"a)b(\")");
    expect_value(&mut repl, "4");
    enter(&mut repl, "(str \"(\" ; a comment (");
    enter(&mut repl, "  \"-x\")");
    expect_value(&mut repl, "\"(-x\"");
    quit(repl);
}

#[test]
fn errors_are_reported_and_the_session_goes_on() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, "(undefined-thing 1)");
    expect_then_prompt(&mut repl, "unbound symbol: undefined-thing");
    enter(&mut repl, "(+ 1 2))");
    expect_then_prompt(&mut repl, "SYNTAX_ERROR");
    enter(&mut repl, "(define (bad) (car 5))");
    expect_value(&mut repl, "bad");
    // The error is raised in code read from an earlier input, and shown against it.
    enter(&mut repl, "(bad)");
    repl.expect("expected a list").unwrap();
    expect_then_prompt(&mut repl, "<repl:3>");
    enter(&mut repl, "(* 5 5)");
    expect_value(&mut repl, "25");
    quit(repl);
}

#[test]
fn tab_completes_a_name_defined_in_the_session() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, "(define (triple-it n) (* 3 n))");
    expect_value(&mut repl, "triple-it");
    repl.send("(triple-").unwrap();
    repl.send("\t").unwrap();
    enter(&mut repl, " 11)");
    expect_value(&mut repl, "33");
    // Keywords complete too, inside a form.
    repl.send("(json-stringify {\"a\" 1} :pret").unwrap();
    repl.send("\t").unwrap();
    enter(&mut repl, " false)");
    expect_value(&mut repl, "\"{\\\"a\\\":1}\"");
    quit(repl);
}

#[test]
fn history_is_kept_across_sessions() {
    let dir = history_file();
    let history = dir.path().join("state").join("history");
    let mut first = start(&history);
    enter(&mut first, "(+ 40 2)");
    expect_value(&mut first, "42");
    quit(first);
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(saved.contains("(+ 40 2)"), "{saved}");

    let mut second = start(&history);
    second.send("\x1b[A").unwrap();
    second.send("\r").unwrap();
    expect_value(&mut second, "42");
    quit(second);
}

#[test]
fn a_history_file_that_cannot_be_written_is_reported_once() {
    let dir = history_file();
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let mut repl = start(&blocker.join("history"));
    enter(&mut repl, "(* 6 7)");
    repl.expect("cannot save the history").unwrap();
    expect_value(&mut repl, "42");
    enter(&mut repl, "(* 5 5)");
    let before_value = repl.expect("\n25\r\n").unwrap();
    let text = String::from_utf8_lossy(before_value.before()).into_owned();
    assert!(!text.contains("cannot save"), "{text}");
    repl.expect(PROMPT).unwrap();
    quit(repl);
}

#[test]
fn ctrl_c_interrupts_an_endless_loop_and_the_session_goes_on() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, "(define kept 17)");
    expect_value(&mut repl, "kept");
    enter(&mut repl, "(let loop () (loop))");
    interrupt(&mut repl);
    enter(&mut repl, "(* kept 2)");
    expect_value(&mut repl, "34");
    enter(&mut repl, "(sleep 1000)");
    interrupt(&mut repl);
    // Ctrl-C while editing clears the line instead.
    repl.send("(this is discarded").unwrap();
    repl.expect("discarded").unwrap();
    repl.send(ControlCode::EndOfText).unwrap();
    // Give the editor time to start the next line, as a person's typing would.
    std::thread::sleep(Duration::from_millis(300));
    enter(&mut repl, "(+ kept 3)");
    expect_value(&mut repl, "20");
    quit(repl);
}

#[test]
fn two_ctrl_cs_at_once_stop_the_evaluation_and_leave_a_working_prompt() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(
        &mut repl,
        "(define (dbl n x) (if (= n 0) x (dbl (- n 1) (list x x))))",
    );
    expect_value(&mut repl, "dbl");
    // Most of the loop's time is inside builtins walking shared structure. The file
    // says the evaluation has started (output is shown only when it ends).
    let started = dir.path().join("started");
    enter(
        &mut repl,
        &format!(
            "(begin (write-file {:?} \"\") (let loop () (flatten (dbl 14 1)) (equal? (dbl 30 1) (dbl 30 1)) (loop)))",
            started.display().to_string()
        ),
    );
    // A hang guard of 30 s; the file appears within milliseconds.
    for _ in 0..3000 {
        if started.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(started.exists(), "the evaluation did not start");
    repl.send("\x03\x03").unwrap();
    repl.expect("execution_halted").unwrap();
    repl.expect(PROMPT).unwrap();
    // The second Ctrl-C reached the editor (an empty line) or the finished evaluation:
    // either way the next form runs.
    std::thread::sleep(Duration::from_millis(300));
    enter(&mut repl, "(+ 1 2)");
    expect_value(&mut repl, "3");
    quit(repl);
}

#[test]
fn commands_time_describe_and_env() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, ":time (* 6 7)");
    repl.expect("\n42\r\n").unwrap();
    repl.expect(Regex(r"; [0-9.]+ (µs|ms|s)")).unwrap();
    repl.expect(PROMPT).unwrap();
    enter(&mut repl, "(define (add2 a b) (+ a b))");
    expect_value(&mut repl, "add2");
    enter(&mut repl, ":describe add2");
    expect_then_prompt(&mut repl, "procedure add2 (2 arguments)");
    enter(&mut repl, ":describe string-length");
    expect_then_prompt(&mut repl, "builtin string-length");
    enter(&mut repl, ":describe let");
    expect_then_prompt(&mut repl, "special form let");
    enter(&mut repl, ":env");
    expect_then_prompt(&mut repl, "add2 = #<procedure add2>");
    enter(&mut repl, ":frobnicate");
    expect_then_prompt(&mut repl, "unknown command :frobnicate");
    enter(&mut repl, ":help");
    expect_then_prompt(&mut repl, ":describe NAME");
    enter(&mut repl, ":quit");
    repl.expect(Eof).unwrap();
}

#[test]
fn large_values_are_abbreviated_and_show_prints_them_whole() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, "(range 1000)");
    repl.expect("18 19 …)").unwrap();
    expect_then_prompt(&mut repl, ":show");
    enter(&mut repl, "(length _)");
    expect_value(&mut repl, "1000");
    enter(&mut repl, "(range 1000)");
    repl.expect(PROMPT).unwrap();
    enter(&mut repl, ":show");
    expect_then_prompt(&mut repl, " 998 999)\r\n");
    quit(repl);
}

#[test]
fn load_runs_a_file_and_failed_loads_and_imports_are_reported() {
    let dir = history_file();
    let file = dir.path().join("lib.sexp");
    std::fs::write(&file, "(define loaded-value 99)\n").unwrap();
    let mut repl = start(&dir.path().join("h"));
    enter(&mut repl, &format!(":load {}", file.display()));
    expect_then_prompt(&mut repl, "; loaded");
    enter(&mut repl, "(+ loaded-value 1)");
    expect_value(&mut repl, "100");
    enter(&mut repl, ":load /no/such/file.sexp");
    expect_then_prompt(&mut repl, "cannot read /no/such/file.sexp");
    enter(&mut repl, ":import /no/such/tasks.xml");
    repl.expect(Regex(r"_ERROR\r\n\r\n.*/no/such/tasks\.xml"))
        .unwrap();
    repl.expect(PROMPT).unwrap();
    enter(&mut repl, "(* loaded-value 2)");
    expect_value(&mut repl, "198");
    quit(repl);
}

#[test]
fn under_the_sandbox_load_and_import_read_only_what_allow_read_allows() {
    let dir = history_file();
    let secret = dir.path().join("secret.sexp");
    std::fs::write(&secret, "SECRET-FIRST-LINE (\n").unwrap();
    let mut repl = start_with(&dir.path().join("h"), &["--sandbox"]);
    enter(&mut repl, &format!(":load {}", secret.display()));
    expect_then_prompt(&mut repl, "--allow-read=");
    enter(&mut repl, &format!(":import {}", secret.display()));
    expect_then_prompt(&mut repl, "--allow-read=");
    enter(&mut repl, "(+ 1 2)");
    expect_value(&mut repl, "3");
    quit(repl);
    let allowed = format!("--allow-read={}", dir.path().display());
    let mut repl = start_with(&dir.path().join("h"), &["--sandbox", &allowed]);
    enter(&mut repl, &format!(":load {}", secret.display()));
    expect_then_prompt(&mut repl, "SECRET-FIRST-LINE");
    quit(repl);
}

/// Runs the binary with `input` on a pipe; returns (status, stdout, stderr).
fn piped(input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn piped_input_prints_each_value() {
    let (status, out, err) = piped("(+ 1 2)\n(define (f x)\n  (* x 2))\n(f 21) \"a)\"\n");
    assert_eq!(
        (status, out.as_str(), err.as_str()),
        (0, "3\nf\n42\n\"a)\"\n", "")
    );
}

#[test]
fn piped_programs_read_the_lines_that_follow_their_form() {
    let (status, out, err) = piped("(define name (read-line))\nAlice\n(println name)\n");
    assert_eq!(
        (status, out.as_str(), err.as_str()),
        (0, "name\nAlice\nnil\n", "")
    );
}

#[test]
fn piped_forms_of_many_lines_are_read_whole() {
    let numbers: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let input = format!("(length (list\n{}\n))\n(+ 1 2)\n", numbers.join("\n"));
    let (status, out, err) = piped(&input);
    assert_eq!((status, out.as_str(), err.as_str()), (0, "20000\n3\n", ""));
}

#[test]
fn piped_input_stops_at_the_first_error() {
    let (status, out, err) = piped("(+ 1 2)\n(car 5)\n(println \"never\")\n");
    assert_eq!(status, 1);
    assert_eq!(out, "3\n");
    assert!(err.contains("expected a list"), "{err}");
    assert!(err.contains("<stdin:2>"), "{err}");
}

#[test]
fn piped_input_that_ends_inside_a_form_is_a_syntax_error() {
    let (status, out, err) = piped("(+ 1 2)\n(list 1\n");
    assert_eq!((status, out.as_str()), (1, "3\n"));
    assert!(
        err.contains("SYNTAX_ERROR") && err.contains("unclosed"),
        "{err}"
    );
}

#[test]
fn piped_forms_run_before_the_input_ends() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"(* 6 7)\n").unwrap();
    stdin.flush().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line, "42\n");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn three_forms_in_one_write_all_run_in_order() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    repl.send("(+ 100 1)\r(+ 100 2)\r(+ 100 3)\r").unwrap();
    expect_value(&mut repl, "101");
    expect_value(&mut repl, "102");
    expect_value(&mut repl, "103");
    quit(repl);
}

#[test]
fn forms_typed_while_another_runs_are_not_lost() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(
        &mut repl,
        "(begin (println \"sleeping\") (sleep 0.5) \"woke\")",
    );
    repl.expect("sleeping").unwrap();
    // Typed while the sleep runs: the terminal holds them until the editor reads.
    repl.send("(+ 200 1)\r").unwrap();
    repl.send("(+ 200 2)\r").unwrap();
    expect_value(&mut repl, "\"woke\"");
    expect_value(&mut repl, "201");
    expect_value(&mut repl, "202");
    quit(repl);
}

#[test]
fn chat_mode_sends_each_line_with_the_conversation_and_end_leaves_it() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(
        &mut repl,
        r#"(set-provider! (fn (r) (str "heard " (length r.messages) ": " (get (last r.messages) "content"))))"#,
    );
    expect_value(&mut repl, "nil");
    enter(&mut repl, ":chat tiny-model");
    repl.expect("; chat: each line is a message").unwrap();
    repl.expect("chat> ").unwrap();
    enter(&mut repl, "hello there");
    repl.expect("\nheard 1: hello there\r\n").unwrap();
    repl.expect("chat> ").unwrap();
    // The second message is sent after the first exchange: three messages.
    enter(&mut repl, "(+ 1 2)");
    repl.expect("\nheard 3: (+ 1 2)\r\n").unwrap();
    repl.expect("chat> ").unwrap();
    enter(&mut repl, ":end");
    expect_then_prompt(&mut repl, "; chat ended");
    enter(&mut repl, "(+ 1 2)");
    expect_value(&mut repl, "3");
    quit(repl);
}

#[test]
fn a_chat_answer_cut_off_by_the_token_limit_is_told() {
    let dir = history_file();
    let mut repl = start(&dir.path().join("h"));
    enter(
        &mut repl,
        r#"(set-provider! (fn (r) {"content" "Once upon a" "finish_reason" "length"}))"#,
    );
    expect_value(&mut repl, "nil");
    enter(&mut repl, ":chat");
    repl.expect("chat> ").unwrap();
    enter(&mut repl, "tell me a story");
    repl.expect("\nOnce upon a\r\n").unwrap();
    repl.expect("; warning: the answer was cut off by the token limit (finish reason \"length\")")
        .unwrap();
    repl.expect("chat> ").unwrap();
    enter(&mut repl, ":end");
    expect_then_prompt(&mut repl, "; chat ended");
    quit(repl);
}
