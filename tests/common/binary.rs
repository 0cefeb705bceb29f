//! Running the built `tasklisp` binary in a directory, with a clean environment.

use std::path::Path;
use std::process::{Command, Stdio};

pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tasklisp ARGS…` in `dir` with only PATH, HOME (= `dir`), LC_ALL and `env` set.
#[allow(dead_code)] // not every test crate that includes this module uses it
pub fn run_binary(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_binary_with_input(dir, args, env, None)
}

/// `tasklisp ARGS…` to be started in `dir` with only PATH, HOME (= `dir`), LC_ALL,
/// TASKLISP_LOG=off and `env` set.
pub fn command(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("TASKLISP_LOG", "off")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("LC_ALL", "C.UTF-8")
        .envs(env.iter().copied());
    command
}

/// [`run_binary`] with `input` on stdin (none: stdin is empty).
pub fn run_binary_with_input(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: Option<&str>,
) -> Run {
    let mut child = command(dir, args, env)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tasklisp binary runs");
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        use std::io::Write;
        stdin
            .write_all(input.as_bytes())
            .expect("stdin takes the input");
    }
    let output = child.wait_with_output().expect("the tasklisp binary runs");
    Run {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
