use super::*;
use crate::error::Result;
use crate::task::script::run_script;
use std::sync::atomic::AtomicBool;

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// Runs `spec` as a script task does (a stop is the task error).
fn script(spec: ProcessSpec) -> Result<ProcessOutput> {
    run_script(&spec, &Cancel::default())
}

fn shell(script: &str) -> ProcessSpec {
    ProcessSpec {
        shell: true,
        ..ProcessSpec::new(argv(&[script]))
    }
}

#[test]
fn runs_a_program_directly_and_captures_its_output() {
    let out = script(ProcessSpec::new(argv(&["echo", "a  b", "$HOME"]))).unwrap();
    assert_eq!(out.stdout, "a  b $HOME\n");
    assert_eq!(out.stderr, "");
    assert_eq!(out.exit_code, 0);
    assert!(!out.stdout_truncated && !out.stderr_truncated);
}

#[test]
fn a_nonzero_exit_is_returned_not_raised() {
    let out = script(shell("echo oops >&2; exit 3")).unwrap();
    assert_eq!(out.exit_code, 3);
    assert_eq!(out.stderr, "oops\n");
}

#[test]
fn exit_by_signal_is_128_plus_the_signal() {
    let out = script(shell("kill -TERM $$")).unwrap();
    assert_eq!(out.exit_code, 128 + libc::SIGTERM);
}

#[test]
fn stdin_is_fed_and_defaults_to_empty() {
    let fed = script(ProcessSpec {
        stdin: Some(b"one\ntwo\n".to_vec()),
        ..ProcessSpec::new(argv(&["wc", "-l"]))
    })
    .unwrap();
    assert_eq!(fed.stdout.trim(), "2");
    let empty = script(ProcessSpec::new(argv(&["cat"]))).unwrap();
    assert_eq!(empty.stdout, "");
}

#[test]
fn a_program_that_never_reads_its_input_does_not_deadlock() {
    let out = script(ProcessSpec {
        stdin: Some(vec![b'x'; 4 << 20]),
        timeout: Some(Duration::from_secs(10)),
        ..shell("echo done")
    })
    .unwrap();
    assert_eq!(out.stdout, "done\n");
}

#[test]
fn env_and_cwd_apply() {
    let out = script(ProcessSpec {
        env: vec![("TASKLISP_TEST_VAR".into(), "hello".into())],
        cwd: Some(PathBuf::from("/")),
        ..shell("echo $TASKLISP_TEST_VAR; pwd")
    })
    .unwrap();
    assert_eq!(out.stdout, "hello\n/\n");
}

#[test]
fn shell_arguments_are_positional_parameters() {
    let out = script(shell_with_args(
        "printf '%s|%s|%s' \"$0\" \"$1\" \"$2\"",
        &["a b", "c"],
    ))
    .unwrap();
    assert_eq!(out.stdout, "tasklisp|a b|c");
}

fn shell_with_args(script: &str, args: &[&str]) -> ProcessSpec {
    let mut spec = shell(script);
    spec.argv.extend(args.iter().map(|a| a.to_string()));
    spec
}

#[test]
fn without_shell_metacharacters_are_literal() {
    let out = script(ProcessSpec::new(argv(&["echo", "$(id)", ";", "|"]))).unwrap();
    assert_eq!(out.stdout, "$(id) ; |\n");
}

#[test]
fn output_beyond_the_cap_is_dropped_and_marked() {
    let out = script(ProcessSpec {
        max_output: 1000,
        ..shell("head -c 200000 /dev/zero | tr '\\0' a; echo err >&2")
    })
    .unwrap();
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.stdout_truncated);
    assert_eq!(out.stderr, "err\n");
    assert!(!out.stderr_truncated);
}

#[test]
fn a_cap_does_not_split_a_character() {
    assert_eq!(decode("aé".as_bytes(), false), "aé");
    assert_eq!(decode(&"aé".as_bytes()[..2], true), "a");
    assert_eq!(decode(&"a😀".as_bytes()[..4], true), "a");
    assert_eq!(decode("a😀".as_bytes(), true), "a😀");
    assert_eq!(decode(&[b'a', 0xff], false), "a\u{fffd}");
}

#[test]
fn a_missing_program_is_a_tool_execution_error_with_code_127() {
    let e = script(ProcessSpec::new(argv(&["/no/such/program-tasklisp"]))).unwrap_err();
    assert_eq!(e.reason(), Some("tool_execution_error"));
    assert_eq!(e.details()["script_exit_code"], 127);
    assert!(e.details()["script_stderr"]
        .as_str()
        .unwrap()
        .contains("No such file"));
}

#[test]
fn an_empty_command_is_an_input_error() {
    let e = script(ProcessSpec::new(Vec::new())).unwrap_err();
    assert_eq!(e.reason(), Some("input_validation_failure"));
}

/// True while any process still has `marker` in its command line.
fn alive(marker: &str) -> bool {
    std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|out| !out.stdout.is_empty())
        .unwrap_or(false)
}

#[test]
fn a_timeout_kills_a_program_that_ignores_sigterm_and_its_children() {
    let marker = "tasklisp-timeout-test-31";
    let dir = tempfile::tempdir().unwrap();
    let finished = dir.path().join("timeout-finished");
    let e = script(ProcessSpec {
        timeout: Some(Duration::from_secs(1)),
        ..shell(&format!(
            "trap '' TERM; echo started; sh -c 'sleep 300; echo {marker}' & sleep 300; touch {}",
            finished.display()
        ))
    })
    .unwrap_err();
    // A program that ignores SIGTERM and is never killed would have finished first.
    assert!(!finished.exists(), "the call waited for the program");
    assert_eq!(e.reason(), Some("execution_timeout"));
    assert_eq!(e.details()["timeout_seconds"], 1.0);
    assert_eq!(e.details()["script_stdout"], "started\n");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(marker), "a child of the script survived");
}

#[test]
fn children_left_behind_are_killed_when_the_program_exits() {
    let marker = "tasklisp-orphan-test-47";
    let dir = tempfile::tempdir().unwrap();
    let finished = dir.path().join("orphan-finished");
    let out = script(shell(&format!(
        "sh -c 'sleep 30; echo {marker}; touch {}' & echo parent",
        finished.display()
    )))
    .unwrap();
    assert_eq!(out.stdout, "parent\n");
    // The call returned before the orphan could finish, and the orphan is gone.
    assert!(!finished.exists(), "the call waited for the orphan");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(marker));
}

#[test]
fn cancelling_halts_the_program() {
    let cancel = Cancel::default();
    let flag = cancel.flag.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::Relaxed);
    });
    // Uncancelled, `sleep 30` would succeed: the error shows the cancellation ended it.
    let e = run_script(&shell("sleep 30"), &cancel).unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.reason(), Some("execution_halted"));
}

#[test]
fn a_passed_deadline_is_a_timeout() {
    let cancel = Cancel {
        flag: Arc::new(AtomicBool::new(false)),
        deadline: Some(Instant::now() + Duration::from_millis(100)),
    };
    let e = run_script(&shell("sleep 30"), &cancel).unwrap_err();
    assert_eq!(e.reason(), Some("execution_timeout"));
}

#[test]
fn a_detached_process_holding_the_output_open_does_not_hold_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let spec = ProcessSpec {
        argv: vec![
            // Prints only once the detached process has its own session (and its pid is
            // written), so the group kill at the exit cannot reach it first.
            "setsid sh -c 'echo $$ > \"$1\"; exec sleep 600' tasklisp \"$1\" & \
             while [ ! -s \"$1\" ]; do sleep 0.01; done; echo hi"
                .into(),
            pid_file.display().to_string(),
        ],
        shell: true,
        ..ProcessSpec::new(Vec::new())
    };
    let out = script(spec).unwrap();
    assert_eq!(out.stdout, "hi\n");
    assert_eq!(out.exit_code, 0);
    // The run returned while the detached process still held the pipe open.
    let pid: libc::pid_t = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only checks that the process exists; SIGKILL ends our own child.
    unsafe {
        assert_eq!(libc::kill(pid, 0), 0, "the detached process is gone");
        libc::kill(pid, libc::SIGKILL);
    }
}

#[test]
fn a_detached_process_holding_the_output_open_is_still_bounded_by_the_timeout() {
    let e = script(ProcessSpec {
        timeout: Some(Duration::from_millis(500)),
        ..shell("setsid sleep 300 & sleep 0.2; echo parent")
    })
    .unwrap_err();
    assert_eq!(e.reason(), Some("execution_timeout"));
    assert_eq!(e.details()["script_stdout"], "parent\n");
}

#[test]
fn output_past_the_cap_can_end_the_program() {
    let stopped = run(
        &ProcessSpec {
            max_output: 1000,
            stop_at_cap: true,
            ..shell("yes")
        },
        &Cancel::default(),
    )
    .unwrap_err();
    assert_eq!(stopped.why, StopReason::OutputOverflow);
    assert_eq!(stopped.output.stdout.len(), 1000);
}

#[test]
fn variables_can_be_removed_from_the_environment() {
    let out = script(ProcessSpec {
        env_remove: vec!["PATH".into()],
        ..ProcessSpec::new(vec!["/usr/bin/env".into()])
    })
    .unwrap();
    assert!(!out.stdout.is_empty());
    assert!(!out.stdout.lines().any(|line| line.starts_with("PATH=")));
}

#[test]
fn arguments_cannot_inject_shell_commands() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("injected");
    let argument = format!("$(id -u); touch {}", marker.display());
    let out = script(shell_with_args("echo \"$1\"", &[&argument])).unwrap();
    assert_eq!(out.stdout, format!("{argument}\n"));
    assert!(!marker.exists());
}

#[test]
fn a_spawned_confined_program_reads_only_what_is_granted_and_its_temporary_directory_goes() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "s").unwrap();
    let spec = ProcessSpec {
        confine: Confinement::of(&crate::capabilities::Capabilities::sandbox()),
        stdin: Some(Vec::new()),
        ..shell_with_args("echo \"$TMPDIR\"; cat \"$1\"", &[&secret.to_string_lossy()])
    };
    let mut child = spawn(&spec).unwrap();
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_ne!(child.wait().unwrap().code(), Some(0));
    assert!(stderr.contains("Permission denied"), "{stderr}");
    let private = PathBuf::from(stdout.trim());
    assert!(private.starts_with(std::env::temp_dir()), "{stdout}");
    // Removed by a thread that sees the exit: waited for within a generous bound.
    let bound = Instant::now() + Duration::from_secs(30);
    while private.exists() && Instant::now() < bound {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!private.exists());
}
