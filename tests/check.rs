//! `tasklisp check` runs none of the code it checks but the macros the files define, and
//! those with no rights, no model and within fuel, time and memory: a macro that writes
//! a file, runs a program or asks a model does nothing, one that loops or sleeps is a
//! problem at its use and the check goes on. Checking many unbound names stays quick,
//! and a byte order mark at the start of a file is not part of the code.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};

#[path = "common/binary.rs"]
#[allow(dead_code)] // this crate starts the binary only through `command`
mod binary;
use std::time::{Duration, Instant};

/// A hang guard far above what any of these takes (a few seconds in a debug build).
const BOUND: Duration = Duration::from_secs(120);

struct Ran {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `tasklisp ARGS…` in `dir` with a clean environment and `env`; the test fails if
/// it has not finished within `bound`.
fn tasklisp_within(dir: &Path, args: &[&str], env: &[(&str, &str)], bound: Duration) -> Ran {
    let mut child = binary::command(dir, args, env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tasklisp binary runs");
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_within(&mut child, bound);
    Ran {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn tasklisp(dir: &Path, args: &[&str]) -> Ran {
    tasklisp_within(dir, args, &[], BOUND)
}

/// What a pipe carries, read on a thread of its own so that neither pipe fills.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// The child's exit status; it is killed, and the test fails, past `bound`.
fn wait_within(child: &mut Child, bound: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tasklisp did not finish within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

#[test]
fn check_runs_no_macro_with_rights() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "write.sexp",
        "(defmacro w () (write-file \"written.txt\" \"x\") 1)\n(prn (w))\n",
    );
    write(
        dir.path(),
        "program.sexp",
        "(defmacro c ()\n  (deftask touch () :command [\"touch\" \"touched.txt\"])\n  (touch)\n  1)\n(prn (c))\n",
    );
    write(
        dir.path(),
        "env.sexp",
        "(defmacro e () (getenv \"HOME\"))\n(prn (e))\n",
    );
    for file in ["write.sexp", "program.sexp", "env.sexp"] {
        let r = tasklisp(dir.path(), &["check", file]);
        assert_eq!(r.status, Some(1), "{file}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("permission"), "{file}: {}", r.stderr);
    }
    assert!(!dir.path().join("written.txt").exists());
    assert!(!dir.path().join("touched.txt").exists());
}

#[test]
fn check_asks_no_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "ask.sexp",
        "(defmacro a ()\n  (deftask ask () :prompt \"hi\")\n  (ask)\n  1)\n(prn (a))\n",
    );
    let model = [("TASKLISP_PROVIDER_COMMAND", "touch asked.txt; echo hi")];
    let args = ["--provider", "command", "check", "ask.sexp"];
    let r = tasklisp_within(dir.path(), &args, &model, BOUND);
    assert_eq!(r.status, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(!dir.path().join("asked.txt").exists(), "{}", r.stderr);
}

#[test]
fn a_macro_that_loops_or_sleeps_is_a_problem_at_its_use_and_the_check_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "spin.sexp",
        "(defmacro spin () (define (f n) (f (+ n 1))) (f 0))\n(prn (spin))\n(car 1 2)\n",
    );
    write(
        dir.path(),
        "nap.sexp",
        "(defmacro nap () (sleep 100000))\n(define x 1)\n(prn (nap))\n(car 1 2)\n",
    );
    let r = tasklisp(dir.path(), &["check", "spin.sexp"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
    for expected in ["RESOURCE_EXHAUSTION", "spin.sexp:2:6", "car: expected"] {
        assert!(r.stderr.contains(expected), "{expected} in {}", r.stderr);
    }
    let r = tasklisp(dir.path(), &["check", "nap.sexp"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
    for expected in ["ran longer than the 2s", "nap.sexp:3:6", "car: expected"] {
        assert!(r.stderr.contains(expected), "{expected} in {}", r.stderr);
    }
}

#[test]
fn check_code_expands_macros_with_no_rights() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "main.sexp",
        "(define found (check-code \"(defmacro m () (write-file \\\"written.txt\\\" \\\"x\\\") 1) (m)\" :allow {\"write\" [\".\"]}))\n\
         (prn (map (fn (p) p.kind) found))\n\
         (prn (map (fn (p) p.kind) (check-code \"(defmacro nap () (sleep 100000)) (nap)\")))\n",
    );
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(r.stdout, "(\"syntax\")\n(\"limit\")\n", "{}", r.stderr);
    assert!(!dir.path().join("written.txt").exists());
}

/// 120,000 distinct names bound nowhere: "did you mean" is looked for only for the first
/// names, and the first thousand problems are shown with the others counted, so the check
/// is near-linear: 2 s of CPU in a debug build (it was quadratic: hours). The bound is 30
/// times that, for a loaded machine.
#[test]
fn many_unbound_names_are_checked_quickly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text: String = (0..120_000).map(|i| format!("name{i}\n")).collect();
    write(dir.path(), "names.sexp", &text);
    let started = Instant::now();
    let r = tasklisp_within(
        dir.path(),
        &["check", "names.sexp"],
        &[],
        Duration::from_secs(60),
    );
    assert_eq!(r.status, Some(1));
    assert_eq!(r.stderr.matches("unbound symbol").count(), 1_000);
    assert!(r.stderr.contains("119000 more problems"), "{}", r.stderr);
    eprintln!("checked 120,000 unbound names in {:?}", started.elapsed());
}

#[test]
fn a_byte_order_mark_at_the_start_is_not_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "lib.sexp",
        "\u{feff}(define twice (fn (x) (* 2 x)))\n",
    );
    write(
        dir.path(),
        "main.sexp",
        "\u{feff}(import \"lib.sexp\")\n(prn (twice 21))\n",
    );
    let r = tasklisp(dir.path(), &["run", "main.sexp"]);
    assert_eq!(r.stdout, "42\n", "{}", r.stderr);
    let r = tasklisp(dir.path(), &["check", "lib.sexp"]);
    assert_eq!(r.stdout, "lib.sexp: ok\n", "{}", r.stderr);
    write(
        dir.path(),
        "loaded.sexp",
        "\u{feff}(load \"lib.sexp\")\n(prn (twice 2))\n",
    );
    let r = tasklisp(dir.path(), &["run", "loaded.sexp"]);
    assert_eq!(r.stdout, "4\n", "{}", r.stderr);
}
