//! Golden script tests: every `tests/scripts/**/*.sexp` is run with the built binary,
//! exactly as `/work/shared/conformance/run` runs a conformance case.
//!
//! A case's leading `;;` lines give its expectations:
//! - `;; stdout: TEXT` one expected line of stdout (repeat, in order); when a case has any,
//!   stdout must equal them exactly. A case with neither stdout nor error lines must print
//!   nothing.
//! - `;; error: WORDS` the run exits 1 (or `exit:`) and stderr contains every word.
//! - `;; exit: N` the exact exit status.
//! - `;; stdin: TEXT` one line of standard input (repeat).
//! - `;; args: A B` arguments after the file name.
//!
//! Each case runs from its own directory with a clean environment and a time limit
//! (`CASE_TIMEOUT` seconds, default 300: a hang guard, not a speed test — the debug build
//! is several times slower than the release build the conformance runner's 20 seconds
//! are meant for, and a loaded 2-core machine stretches it several times again). Files under a
//! `fixtures` or `templates` directory are helpers that cases load or import, not cases.
//!
//! Cases for features built on other branches are listed in `tests/scripts/pending` (one a
//! line, `#` comments, names relative to `tests/scripts` without `.sexp`), or in the
//! `SCRIPTS_PENDING` environment variable (separated by spaces). A listed case that fails
//! is reported as pending; one that passes fails the suite until it is taken off the list.
//! An entry ending in `/` skips a whole directory without running it.
//! `SCRIPTS_FILTER=text` runs only the cases whose name contains `text`.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a case expects, from its header.
#[derive(Default, Debug)]
struct Expectation {
    stdout: Vec<String>,
    error_words: Option<Vec<String>>,
    exit: Option<i32>,
    stdin: Vec<String>,
    args: Vec<String>,
}

impl Expectation {
    fn parse(text: &str) -> Expectation {
        let mut e = Expectation::default();
        for line in text.lines().take_while(|l| l.starts_with(";;")) {
            if let Some(rest) = field(line, "stdout:") {
                e.stdout.push(rest.to_owned());
            } else if let Some(rest) = field(line, "error:") {
                e.error_words
                    .get_or_insert_with(|| rest.split_whitespace().map(str::to_owned).collect());
            } else if let Some(rest) = field(line, "exit:") {
                e.exit = e.exit.or_else(|| rest.trim().parse().ok());
            } else if let Some(rest) = field(line, "stdin:") {
                e.stdin.push(rest.to_owned());
            } else if let Some(rest) = field(line, "args:") {
                if e.args.is_empty() {
                    e.args = rest.split_whitespace().map(str::to_owned).collect();
                }
            }
        }
        e
    }

    fn wanted_exit(&self) -> i32 {
        self.exit
            .unwrap_or(if self.error_words.is_some() { 1 } else { 0 })
    }
}

/// `;; stdout: TEXT` → `TEXT` (one optional space after the colon, as the runner's sed).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(";; ")?.strip_prefix(name)?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

struct Outcome {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts")
}

fn collect_cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "fixtures" && n != "templates")
            {
                collect_cases(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "sexp") {
            out.push(path);
        }
    }
}

fn case_name(path: &Path) -> String {
    let relative = path.strip_prefix(scripts_dir()).unwrap_or(path);
    relative.with_extension("").to_string_lossy().into_owned()
}

fn pending_entries() -> Vec<String> {
    let file = std::fs::read_to_string(scripts_dir().join("pending")).unwrap_or_default();
    let from_env = std::env::var("SCRIPTS_PENDING").unwrap_or_default();
    file.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .chain(std::iter::once(from_env.as_str()))
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect()
}

fn run_case(path: &Path, expect: &Expectation, limit: Duration) -> Outcome {
    let dir = path.parent().expect("a case has a directory");
    let mut stdin = tempfile::tempfile().expect("temp file");
    for line in &expect.stdin {
        writeln!(stdin, "{line}").expect("write stdin");
    }
    stdin.rewind().expect("rewind");
    let stdout = tempfile::tempfile().expect("temp file");
    let stderr = tempfile::tempfile().expect("temp file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .arg("run")
        .arg(path.file_name().expect("a file name"))
        .args(&expect.args)
        .current_dir(dir)
        .env_clear()
        .env("TASKLISP_LOG", "off")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "HOME",
            std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()),
        )
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout.try_clone().expect("clone")))
        .stderr(Stdio::from(stderr.try_clone().expect("clone")))
        .process_group(0)
        .spawn()
        .expect("the tasklisp binary runs");
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            timed_out = true;
            // The case's whole process group: the interpreter and anything it started.
            // SAFETY: kill(2) takes plain integers and touches no memory of ours; the
            // group is the child's own (process_group(0) above), not the test's.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        status: status.code(),
        stdout: read_all(stdout),
        stderr: read_all(stderr),
        timed_out,
    }
}

fn read_all(mut file: File) -> String {
    let mut bytes = Vec::new();
    file.rewind().expect("rewind");
    file.read_to_end(&mut bytes).expect("read output");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Why the outcome does not meet the expectation, or `None` when it does.
fn judge(expect: &Expectation, outcome: &Outcome, limit: Duration) -> Option<String> {
    let mut why = Vec::new();
    if outcome.timed_out {
        why.push(format!("timed out after {}s", limit.as_secs()));
    } else if outcome.status != Some(expect.wanted_exit()) {
        why.push(format!(
            "exit {:?}, wanted {}\n  stderr: {}",
            outcome.status,
            expect.wanted_exit(),
            outcome
                .stderr
                .chars()
                .take(600)
                .collect::<String>()
                .replace('\n', "\n          ")
        ));
    }
    let report = without_quoted_source(&outcome.stderr);
    for word in expect.error_words.iter().flatten() {
        if !report.contains(word.as_str()) {
            why.push(format!("stderr lacks {word:?}"));
        }
    }
    if !expect.stdout.is_empty() || expect.error_words.is_none() {
        let wanted: String = expect.stdout.iter().map(|l| format!("{l}\n")).collect();
        if wanted != outcome.stdout {
            why.push(format!(
                "stdout differs:\n{}",
                diff(&wanted, &outcome.stdout)
            ));
        }
    }
    (!why.is_empty()).then(|| why.join("\n"))
}

/// The error report without the source lines miette quotes: a case's own header is
/// often among them, and would match every `;; error:` word. Only the lines between a
/// snippet's `╭─[file:1:2]` (kept: it says where the error is) and its `╰─` are
/// dropped, so report lines drawn with a bar elsewhere (an `expect`'s values) stay.
fn without_quoted_source(stderr: &str) -> String {
    let mut in_snippet = false;
    let mut report = String::new();
    for line in stderr.lines() {
        let mark = line.trim_start();
        if mark.starts_with("╭─") {
            in_snippet = true;
        } else if in_snippet && mark.starts_with("╰─") {
            in_snippet = false;
            continue;
        }
        if in_snippet && !mark.starts_with("╭─") {
            continue;
        }
        report.push_str(line);
        report.push('\n');
    }
    report
}

/// A line diff: `-` wanted, `+` got, ` ` equal (the longest common subsequence).
fn diff(wanted: &str, got: &str) -> String {
    let a: Vec<&str> = wanted.lines().collect();
    let b: Vec<&str> = got.lines().take(200).collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out += &format!("     {}\n", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out += &format!("   + {}\n", b[j]);
            j += 1;
        } else {
            out += &format!("   - {}\n", a[i]);
            i += 1;
        }
    }
    if wanted.ends_with('\n') != got.ends_with('\n') && !got.is_empty() {
        out += "   (the final newline differs)\n";
    }
    out
}

#[test]
fn golden_scripts() {
    let mut cases = Vec::new();
    collect_cases(&scripts_dir(), &mut cases);
    cases.sort();
    let filter = std::env::var("SCRIPTS_FILTER").unwrap_or_default();
    cases.retain(|c| case_name(c).contains(&filter));
    let pending = pending_entries();
    let skipped_dir = |name: &str| {
        pending
            .iter()
            .any(|p| p.ends_with('/') && name.starts_with(p.as_str()))
    };
    let skipped = cases.iter().filter(|c| skipped_dir(&case_name(c))).count();
    cases.retain(|c| !skipped_dir(&case_name(c)));
    assert!(
        !cases.is_empty() || !filter.is_empty(),
        "no cases under {}",
        scripts_dir().display()
    );

    let limit = Duration::from_secs(
        std::env::var("CASE_TIMEOUT")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(300),
    );
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let pending_failed = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = cases.get(i) else { break };
                let name = case_name(path);
                let text = std::fs::read_to_string(path).unwrap_or_default();
                let expect = Expectation::parse(&text);
                let outcome = run_case(path, &expect, limit);
                let verdict = judge(&expect, &outcome, limit);
                let is_pending = pending.contains(&name);
                match (verdict, is_pending) {
                    (Some(_), true) => pending_failed.lock().expect("lock").push(name),
                    (None, true) => failures
                        .lock()
                        .expect("lock")
                        .push((name, "passes now: take it off the pending list".to_owned())),
                    (Some(why), false) => failures.lock().expect("lock").push((name, why)),
                    (None, false) => {}
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("lock");
    failures.sort();
    let pending_failed = pending_failed.into_inner().expect("lock");
    for (name, why) in &failures {
        eprintln!("FAIL {name}: {why}\n");
    }
    let passed = cases.len() - failures.len() - pending_failed.len();
    eprintln!(
        "{passed} passed, {} failed, {} pending, {skipped} skipped",
        failures.len(),
        pending_failed.len()
    );
    assert!(
        failures.is_empty(),
        "{} golden script case(s) failed",
        failures.len()
    );
}

#[test]
fn headers_parse_like_the_conformance_runner() {
    let e = Expectation::parse(
        ";; stdout: a b\n;; stdout:\n;; error: EVAL_ERROR boom\n;; stdin: x\n;; args: 1 2\n(code)\n;; stdout: late",
    );
    assert_eq!(e.stdout, vec!["a b", ""]);
    assert_eq!(
        e.error_words,
        Some(vec!["EVAL_ERROR".to_owned(), "boom".to_owned()])
    );
    assert_eq!(e.wanted_exit(), 1);
    assert_eq!(e.stdin, vec!["x"]);
    assert_eq!(e.args, vec!["1", "2"]);
    assert_eq!(Expectation::parse(";; exit: 3\n").wanted_exit(), 3);
}

#[test]
fn diff_marks_missing_and_extra_lines() {
    let d = diff("a\nb\nc\n", "a\nc\nd\n");
    assert!(
        d.contains("- b") && d.contains("+ d") && d.contains("  a"),
        "{d}"
    );
}

#[test]
fn error_words_are_matched_without_the_quoted_source() {
    let stderr = "EVAL_ERROR\n\n  × unbound symbol: x\n   ╭─[a.sexp:2:1]\n 1 │ ;; error: boom\n 2 │ x\n   · ┬\n   · ╰── here\n   ╰────\n  help: did you mean `y`?\n";
    let report = without_quoted_source(stderr);
    assert!(!report.contains("boom"), "{report}");
    assert!(report.contains("a.sexp:2:1"), "{report}");
    assert!(report.contains("unbound symbol: x"), "{report}");
    assert!(report.contains("did you mean `y`?"), "{report}");
    let expect = "EVAL_ERROR\n  × expectation failed\n  │ expected: 1\n  │ actual: 2\n";
    assert_eq!(without_quoted_source(expect), expect);
}
