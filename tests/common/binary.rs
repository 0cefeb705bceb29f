//! Running the built `tasklisp` binary in a directory, with a clean environment.

use std::path::Path;
use std::process::{Command, Stdio};

pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tasklisp ARGS…` in `dir` with only PATH, HOME (= `dir`), LC_ALL and `env` set.
pub fn run_binary(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("TASKLISP_LOG", "off")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("LC_ALL", "C.UTF-8")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("the tasklisp binary runs");
    Run {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
