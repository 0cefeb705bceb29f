//! Ctrl-C (SIGINT) while `tasklisp run` runs a program: the first stops the evaluation
//! cleanly (scripts killed, error reported), a second one ends a program that is blocked
//! where it cannot see the first.

#![cfg(unix)]

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn spawn(script: &str, stdin: Stdio) -> (Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.sexp");
    std::fs::write(&path, script).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .arg("run")
        .arg(&path)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, dir)
}

/// Waits for a line on stdout, so the signal arrives while the program runs.
fn wait_for_start(child: &mut Child) {
    let mut byte = [0u8; 1];
    let out = child.stdout.as_mut().unwrap();
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {}
}

fn interrupt(child: &Child) {
    // SAFETY: kill with a valid pid and signal has no memory effects.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

fn wait(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

#[test]
fn ctrl_c_halts_a_running_script_task_and_reports_it() {
    // A sleep whose length is unique to this test, so pgrep finds only ours.
    let marker = format!("sleep 30.{}", std::process::id());
    let script = format!(
        "(println \"started\")\n(deftask hang () :command [\"sh\" \"-c\" \"{marker} & {marker}\"])\n(hang)\n"
    );
    let (mut child, _dir) = spawn(&script, Stdio::null());
    wait_for_start(&mut child);
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    assert_eq!(wait(&mut child, Duration::from_secs(10)), Some(1));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("execution_halted"), "{err}");
    let left = Command::new("pgrep")
        .arg("-f")
        .arg(&marker)
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "the script's process group was not killed"
    );
}

#[test]
fn a_second_ctrl_c_ends_a_program_blocked_on_input() {
    let (mut child, _dir) = spawn("(println \"started\")\n(read-line)\n", Stdio::piped());
    wait_for_start(&mut child);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(200));
    interrupt(&child);
    assert_eq!(wait(&mut child, Duration::from_secs(10)), Some(130));
}
