//! The REPL transcripts in the README and `docs/REPL.md` are real: each is played
//! through a pseudo-terminal, the bytes rendered by a terminal emulator, and the screen
//! compared with the document. `UPDATE_DOCS=1 cargo test --test transcripts` rewrites
//! them from a run.
#![cfg(unix)]

use expectrl::{ControlCode, Eof, Expect, Session};
use std::num::NonZeroU16;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The width of the pseudo-terminal (and of miette's reports).
const COLUMNS: u16 = 80;

/// One thing the person does at the prompt.
enum Step {
    /// Types the lines (one input, possibly spanning lines), pressing Enter after each.
    Type(&'static str),
    /// Types an input that runs until Ctrl-C stops it; Ctrl-C is pressed once the
    /// input has printed the second text (if not empty), so it is known to be running.
    TypeThenInterrupt(&'static str, &'static str),
}
use Step::{Type, TypeThenInterrupt};

/// The editor turns bracketed paste on when it starts reading a line and off when the
/// line is entered: the marks the transcript waits for. (The prompt itself is no mark:
/// the editor redraws it at every key, to show history hints.)
const READING: &str = "\x1b[?2004h";
const ENTERED: &str = "\x1b[?2004l";

/// Plays `steps` in a fresh REPL started in `dir`, then Ctrl-D; returns the screen.
fn play(dir: &Path, steps: &[Step]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .current_dir(dir)
        .env("TASKLISP_HISTORY", dir.join("history"))
        .env("TASKLISP_LOG", "off")
        .env("TASKLISP_PROVIDER", "echo")
        .env("TERM", "xterm")
        .env("NO_COLOR", "1");
    let mut repl = Session::spawn(command).expect("the REPL starts");
    repl.get_process_mut()
        .set_window_size(COLUMNS, 24)
        .expect("window size");
    repl.set_expect_timeout(Some(Duration::from_secs(60)));
    let mut bytes = Vec::new();
    wait_for(&mut repl, &mut bytes, READING);
    for step in steps {
        let (Type(input) | TypeThenInterrupt(input, _)) = step;
        for line in input.lines() {
            repl.send(line).unwrap();
            repl.send("\r").unwrap();
        }
        wait_for(&mut repl, &mut bytes, ENTERED);
        if let TypeThenInterrupt(_, running) = step {
            if !running.is_empty() {
                wait_for(&mut repl, &mut bytes, running);
            }
            interrupt(&mut repl, &mut bytes);
        }
        wait_for(&mut repl, &mut bytes, READING);
    }
    repl.send(ControlCode::EndOfTransmission).unwrap();
    let rest = repl.expect(Eof).expect("the REPL ends");
    bytes.extend_from_slice(rest.before());
    screen(&bytes)
}

/// Waits for `mark`, keeping everything shown up to and including it.
fn wait_for(repl: &mut expectrl::session::OsSession, bytes: &mut Vec<u8>, mark: &str) {
    let found = repl
        .expect(mark)
        .unwrap_or_else(|e| panic!("waiting for {mark:?}: {e}"));
    bytes.extend_from_slice(found.before());
    bytes.extend_from_slice(mark.as_bytes());
}

/// Presses Ctrl-C until the evaluation stops, keeping what the terminal showed.
fn interrupt(repl: &mut expectrl::session::OsSession, bytes: &mut Vec<u8>) {
    repl.set_expect_timeout(Some(Duration::from_millis(500)));
    let halted = (0..120).any(|_| {
        repl.send(ControlCode::EndOfText).unwrap();
        match repl.expect("execution_halted") {
            Ok(found) => {
                bytes.extend_from_slice(found.before());
                bytes.extend_from_slice(b"execution_halted");
                true
            }
            Err(_) => false,
        }
    });
    repl.set_expect_timeout(Some(Duration::from_secs(60)));
    assert!(halted, "Ctrl-C did not stop the evaluation");
}

/// What a terminal shows after `bytes`: rendered by a terminal emulator, trailing
/// spaces and blank lines dropped. Repeated `^C` (the key pressed until the evaluation
/// noticed) shows once, and durations (`; 12.3 ms`) are the same on every run.
fn screen(bytes: &[u8]) -> String {
    let rows = NonZeroU16::new(2000).expect("rows");
    let columns = NonZeroU16::new(COLUMNS).expect("columns");
    let mut parser = vt100::Parser::new(rows, columns, 0);
    parser.process(bytes);
    let text = parser.screen().contents();
    let mut lines: Vec<String> = text.lines().map(|l| normalize(l.trim_end())).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n") + "\n"
}

fn normalize(line: &str) -> String {
    let mut line = line.to_owned();
    while line.contains("^C^C") {
        line = line.replace("^C^C", "^C");
    }
    let is_duration = line
        .strip_prefix("; ")
        .and_then(|rest| rest.split_once(' '))
        .is_some_and(|(number, unit)| {
            number.parse::<f64>().is_ok() && matches!(unit, "ms" | "µs" | "s")
        });
    if is_duration {
        return "; 12.3 ms".to_owned();
    }
    line
}

/// Replaces the `n`th ```text block of the Markdown file `doc` (relative to the
/// repository) with `transcript` when `UPDATE_DOCS` is set; otherwise asserts they agree.
fn compare(doc: &str, n: usize, transcript: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .match_indices("```text\n")
        .nth(n)
        .map(|(i, m)| i + m.len())
        .unwrap_or_else(|| panic!("{doc} has text block {n}"));
    let end = start + text[start..].find("```").expect("the block ends");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{transcript}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &text[start..end],
        transcript,
        "{doc}'s transcript {n} is stale: UPDATE_DOCS=1 cargo test --test transcripts"
    );
}

#[test]
fn the_readme_session() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = play(
        dir.path(),
        &[
            Type("(define (square x)\n  (* x x))"),
            Type("(define point {\"x\" 3 \"y\" [4 5]})"),
            Type("point.y[1]"),
            Type("(define (f n) (car n))"),
            Type("(f 7)"),
            Type("(lenght (list 1 2))"),
            Type(":time (reduce + 0 (range 100000))"),
        ],
    );
    compare("README.md", 0, &transcript);
}

#[test]
fn the_repl_guide_session() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = play(
        dir.path(),
        &[
            Type("(define (square x)\n  (* x x))"),
            Type("(map square (range 5))"),
            Type("(square 12)"),
            Type("(define point {\"x\" 3 \"y\" [4 5]})"),
            Type("point.y[1]"),
            Type("(car 5)"),
            Type("(define (f n) (car n))"),
            Type("(f 7)"),
            Type("(range 500)"),
            Type("(length _)"),
            Type(":time (reduce + 0 (range 100000))"),
            Type(":describe square"),
            Type(":describe map"),
            Type(":describe let"),
            Type(":apropos string-s"),
            Type(":env"),
            Type(":tasks"),
            TypeThenInterrupt("(let loop () (loop))", ""),
            Type("(square 9)"),
            Type(":frobnicate"),
            Type(":descibe square"),
            Type(":load tasks.xml"),
            Type(":help"),
        ],
    );
    compare("docs/REPL.md", 0, &transcript);
}

#[test]
fn the_repl_guide_task_session() {
    let dir = tempfile::tempdir().unwrap();
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/REPL.md")).unwrap();
    let xml = doc
        .split("```xml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the guide shows tasks.xml");
    std::fs::write(dir.path().join("tasks.xml"), xml).unwrap();
    let transcript = play(
        dir.path(),
        &[
            Type("(deftask greet (name) :description \"Say hello\" :prompt \"Hello, {{name}}!\")"),
            Type("(greet \"Ada\")"),
            Type("(deftask greet (name) :description \"Say hi\" :prompt \"Hi, {{name}}!\")"),
            Type(":import tasks.xml"),
            Type(":tasks"),
            Type(":describe greet"),
            Type(":describe summarize"),
            Type("(deftask slow () :command [\"sleep\" \"30\"])"),
            TypeThenInterrupt("(begin (println \"sleeping\") (slow))", "sleeping"),
            Type("(get (summarize \"x\") \"content\")"),
        ],
    );
    compare("docs/REPL.md", 1, &transcript);
}
