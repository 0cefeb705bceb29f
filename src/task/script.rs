//! Running external programs for script tasks.
//!
//! Minimal placeholder with the agreed signatures (no timeout, no output cap, no
//! cancellation). The "scripts" helper's version replaces this file.

use crate::error::{Error, Result};
use crate::provider::Cancel;
use std::io::Write;
use std::process::{Command, Stdio};

pub struct ScriptSpec {
    pub argv: Vec<String>,
    pub stdin: Option<Vec<u8>>,
    pub env: Vec<(String, String)>,
    pub shell: bool,
    pub timeout: Option<std::time::Duration>,
    pub cwd: Option<std::path::PathBuf>,
    pub max_output: usize,
}

pub struct ScriptOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
}

/// Runs the program; any exit status is `Ok`.
pub fn run_script(spec: &ScriptSpec, _cancel: &Cancel) -> Result<ScriptOutput> {
    let (program, args) = spec
        .argv
        .split_first()
        .ok_or_else(|| Error::task_failure("tool_execution_error", "empty command"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(spec.env.iter().cloned())
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.cwd {
        command.current_dir(dir);
    }
    let cannot_start = |e: std::io::Error| {
        Error::task_failure("tool_execution_error", format!("cannot run {program}: {e}"))
    };
    let mut child = command.spawn().map_err(cannot_start)?;
    if let (Some(input), Some(mut pipe)) = (&spec.stdin, child.stdin.take()) {
        let input = input.clone();
        std::thread::spawn(move || pipe.write_all(&input));
    }
    let output = child.wait_with_output().map_err(cannot_start)?;
    Ok(ScriptOutput {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        exit_code: output.status.code().unwrap_or(-1),
        stdout_truncated: false,
        stderr_truncated: false,
    })
}
