//! `run_script` on a program that prints far more than the cap: alone in its test binary,
//! so the process's peak memory says what reading the output cost.

use std::time::Duration;
use tasklisp::internals::process::ProcessSpec;
use tasklisp::internals::task::script::run_script;
use tasklisp::Cancel;

/// The process's peak resident memory in kB (`VmHWM`).
fn peak_memory_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_program_printing_100_mb_is_capped_without_blocking_or_growing_memory() {
    let before = peak_memory_kb();
    let spec = ProcessSpec {
        max_output: 1 << 20,
        timeout: Some(Duration::from_secs(60)),
        ..ProcessSpec::new(vec![
            "head".into(),
            "-c".into(),
            "100000000".into(),
            "/dev/zero".into(),
        ])
    };
    let output = run_script(&spec, &Cancel::default()).unwrap();
    assert_eq!(output.exit_code, 0);
    assert_eq!(output.stdout.len(), 1 << 20);
    assert!(output.stdout_truncated);
    let grew_kb = peak_memory_kb().saturating_sub(before);
    assert!(grew_kb < 20 << 10, "peak memory grew by {grew_kb} kB");
}

/// True while any process has exactly this command line.
fn running(command_line: &str) -> bool {
    std::process::Command::new("pgrep")
        .args(["-x", "-f", command_line])
        .output()
        .map(|out| !out.stdout.is_empty())
        .unwrap_or(false)
}

/// Runs `tasklisp run` on `program` (with the environment `env`), waits until a process
/// with the command line `marker` runs, kills the interpreter, and asserts that the
/// process died with it.
fn assert_dies_with_the_interpreter(program: &str, env: &[(&str, &str)], marker: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nap.sexp");
    std::fs::write(&file, program).unwrap();
    let mut interpreter = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .arg("run")
        .arg(&file)
        .envs(env.iter().copied())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !running(marker) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(running(marker), "the program never started");
    interpreter.kill().unwrap();
    interpreter.wait().unwrap();
    let killed = std::time::Instant::now();
    while running(marker) && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(marker), "the program outlived the interpreter");
}

#[test]
fn a_killed_interpreter_takes_its_running_script_with_it() {
    assert_dies_with_the_interpreter(
        r#"(deftask nap () :command ["sleep" "31.4159"]) (nap)"#,
        &[],
        "sleep 31.4159",
    );
}

#[test]
fn a_killed_interpreter_takes_its_command_provider_with_it() {
    assert_dies_with_the_interpreter(
        r#"(set-provider! "command" {"command" ["sleep" "27.1828"]})
           (deftask ask () :prompt "hi") (ask)"#,
        &[],
        "sleep 27.1828",
    );
}
