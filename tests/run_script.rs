//! `run_script` on a program that prints far more than the cap: alone in its test binary,
//! so the process's peak memory says what reading the output cost.

use std::time::Duration;
use tasklisp::provider::Cancel;
use tasklisp::task::script::{run_script, ScriptSpec};

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
    let spec = ScriptSpec {
        max_output: 1 << 20,
        timeout: Some(Duration::from_secs(60)),
        ..ScriptSpec::new(vec![
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

#[test]
fn a_killed_interpreter_takes_its_running_script_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("nap.sexp");
    std::fs::write(
        &program,
        r#"(deftask nap () :command ["sleep" "31.4159"]) (nap)"#,
    )
    .unwrap();
    let mut interpreter = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .arg("run")
        .arg(&program)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !running("sleep 31.4159") && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(running("sleep 31.4159"), "the script never started");
    interpreter.kill().unwrap();
    interpreter.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !running("sleep 31.4159"),
        "the script outlived the interpreter"
    );
}
