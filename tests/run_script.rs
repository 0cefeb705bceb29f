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
