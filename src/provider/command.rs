//! The `command` provider: a local program answers. The prompt goes to its stdin (or,
//! with `"input" "request"`, the whole request as JSON) and its stdout is the content.
//! The program runs in its own process group so a timeout or Ctrl-C ends it and
//! everything it started.

use super::http::{check_cancel, excerpt, EXCERPT_BYTES};
use super::message::tool_call_from_json;
use super::{Cancel, Provider, Request, Response, ToolCall};
use crate::error::{Error, Reason, Result};
use serde_json::json;
use std::io::{Read, Write};
use std::process::{Child, Command as Process, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Standard output beyond this is refused: the program is ended and the call fails.
const MAX_STDOUT: usize = 16 * 1024 * 1024;
/// Standard error is kept up to this much, for the error details.
const MAX_STDERR: usize = 64 * 1024;
/// How often the running program is checked on.
const POLL: Duration = Duration::from_millis(20);
/// How long to wait for the pipes to close once the program has ended.
const CAPTURE_GRACE: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub enum Program {
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
    /// A command line for `sh -c` (pipes and quoting allowed).
    Shell(String),
}

/// What the program reads on stdin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Prompt,
    /// The request map of SPEC §9 as one JSON object, with `json_mode`.
    Request,
}

pub struct CommandProvider {
    program: Program,
    input: Input,
    timeout: Duration,
    /// The model when the task names none, passed as `TASKLISP_MODEL`.
    model: Option<String>,
}

impl CommandProvider {
    pub fn new(
        program: Program,
        input: Input,
        timeout: Duration,
        model: Option<String>,
    ) -> Result<CommandProvider> {
        if matches!(&program, Program::Argv(argv) if argv.is_empty()) {
            return Err(Error::validation(
                "the command provider needs a program to run",
            ));
        }
        Ok(CommandProvider {
            program,
            input,
            timeout,
            model,
        })
    }

    /// How the program is named in errors.
    fn label(&self) -> String {
        let text = match &self.program {
            Program::Argv(argv) => argv.join(" "),
            Program::Shell(line) => line.clone(),
        };
        excerpt(&text, 200)
    }

    fn process(&self, request: &Request) -> Process {
        let mut process = match &self.program {
            Program::Argv(argv) => {
                let (program, args) = argv
                    .split_first()
                    .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
                let mut process = Process::new(program);
                process.args(args);
                process
            }
            Program::Shell(line) => {
                let mut process = Process::new("sh");
                process.arg("-c").arg(line);
                process
            }
        };
        process.env("TASKLISP_TASK", &request.task);
        process.env("TASKLISP_OPTIONS", request.options.to_json().to_string());
        match request.model.as_ref().or(self.model.as_ref()) {
            Some(model) => process.env("TASKLISP_MODEL", model),
            None => process.env_remove("TASKLISP_MODEL"),
        };
        process
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut process, 0);
        process
    }

    fn failure(&self, message: String) -> Error {
        Error::task_failure(Reason::LlmError, format!("command: {message}"))
    }
}

impl Provider for CommandProvider {
    fn name(&self) -> &str {
        "command"
    }

    fn complete(&self, request: &Request, cancel: &Cancel) -> Result<Response> {
        let input = match self.input {
            Input::Prompt => request.prompt.clone().into_bytes(),
            Input::Request => request.to_json_with_mode().to_string().into_bytes(),
        };
        let mut child = self
            .process(request)
            .spawn()
            .map_err(|e| self.failure(format!("cannot run `{}`: {e}", self.label())))?;
        if let Some(mut stdin) = child.stdin.take() {
            // Not joined: it ends when the pipe closes. A program that exits without
            // reading its input is not an error here.
            std::thread::spawn(move || drop(stdin.write_all(&input)));
        }
        let overflow = Arc::new(AtomicBool::new(false));
        let stdout = child
            .stdout
            .take()
            .map(|out| capture(out, MAX_STDOUT, Some(overflow.clone())));
        let stderr = child
            .stderr
            .take()
            .map(|err| capture(err, MAX_STDERR, None));
        let waited = self.wait(&mut child, cancel, &overflow);
        // Whatever the program left running would hold the pipes open.
        end_group(&mut child);
        let stdout = collect(stdout);
        let stderr = collect(stderr);
        let status = waited?;
        if !status.success() {
            return Err(self
                .failure(format!("`{}` failed with {status}", self.label()))
                .with_details(
                    json!({"exit_code": status.code(), "stderr": excerpt(&stderr, EXCERPT_BYTES)}),
                ));
        }
        Ok(match self.input {
            Input::Request => answer_with_tool_calls(stdout),
            Input::Prompt => Response {
                content: stdout,
                ..Response::default()
            },
        })
    }
}

/// A program that reads the whole request may ask for tools by printing
/// `{"tool_calls": [{"id" …, "name" …, "arguments" {…}}], "content": …}`; any other
/// output is the answer as it is.
fn answer_with_tool_calls(stdout: String) -> Response {
    let calls = serde_json::from_str::<serde_json::Value>(&stdout)
        .ok()
        .and_then(|answer| {
            let calls = answer.get("tool_calls")?.as_array()?;
            let calls: Vec<ToolCall> = calls
                .iter()
                .map(tool_call_from_json)
                .collect::<std::result::Result<_, _>>()
                .ok()?;
            let content = answer.get("content").and_then(|c| c.as_str()).unwrap_or("");
            Some((content.to_owned(), calls))
        });
    match calls {
        Some((content, tool_calls)) => Response {
            content,
            tool_calls,
            ..Response::default()
        },
        None => Response {
            content: stdout,
            ..Response::default()
        },
    }
}

impl CommandProvider {
    /// Waits for the program within the timeout, the `Cancel` and the output cap.
    fn wait(
        &self,
        child: &mut Child,
        cancel: &Cancel,
        overflow: &AtomicBool,
    ) -> Result<std::process::ExitStatus> {
        let started = Instant::now();
        loop {
            if let Some(status) = child
                .try_wait()
                .map_err(|e| self.failure(format!("cannot wait for `{}`: {e}", self.label())))?
            {
                return Ok(status);
            }
            check_cancel(cancel)?;
            if overflow.load(Ordering::Relaxed) {
                return Err(self.failure(format!(
                    "`{}` wrote more than {MAX_STDOUT} bytes",
                    self.label()
                )));
            }
            if started.elapsed() >= self.timeout {
                return Err(self.failure(format!(
                    "`{}` did not finish within {:.3}s",
                    self.label(),
                    self.timeout.as_secs_f64()
                )));
            }
            std::thread::sleep(POLL);
        }
    }
}

/// A pipe being read to its end on a thread of its own.
struct Capture {
    kept: Arc<Mutex<Vec<u8>>>,
    finished: Receiver<()>,
}

/// Reads a pipe on a thread, keeping at most `cap` bytes; past the cap it raises
/// `overflow` (if given) and goes on draining so the writer never blocks.
fn capture(
    mut pipe: impl Read + Send + 'static,
    cap: usize,
    overflow: Option<Arc<AtomicBool>>,
) -> Capture {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (done, finished) = mpsc::channel();
    let buffer = kept.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            let Ok(mut kept) = buffer.lock() else { break };
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(chunk.get(..n.min(room)).unwrap_or_default());
            if n > room {
                if let Some(flag) = &overflow {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        }
        let _ = done.send(());
    });
    Capture { kept, finished }
}

/// What a capture read. A process that escaped the group (a daemon) may still hold
/// the pipe open: after `CAPTURE_GRACE` what was read so far is the output.
fn collect(capture: Option<Capture>) -> String {
    let Some(capture) = capture else {
        return String::new();
    };
    let _ = capture.finished.recv_timeout(CAPTURE_GRACE);
    let bytes = capture
        .kept
        .lock()
        .map(|kept| kept.clone())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Kills the program's process group (the program and its children) and reaps it.
fn end_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid only sends a signal to the group the
        // program was started in (`process_group(0)` made its pid the group id).
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    drop(child.kill());
    drop(child.wait());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        program: Program,
        input: Input,
        timeout: Duration,
        request: &Request,
    ) -> Result<Response> {
        CommandProvider::new(program, input, timeout, Some("m0".into()))
            .unwrap()
            .complete(request, &Cancel::default())
    }

    fn shell(line: &str) -> Program {
        Program::Shell(line.into())
    }

    fn prompt(text: &str) -> Request {
        Request {
            task: "t1".into(),
            prompt: text.into(),
            messages: vec![crate::provider::Message::user(text)],
            ..Request::default()
        }
    }

    #[test]
    fn the_prompt_goes_in_and_stdout_comes_back() {
        let argv = Program::Argv(vec!["tr".into(), "a-z".into(), "A-Z".into()]);
        let response = run(
            argv,
            Input::Prompt,
            Duration::from_secs(10),
            &prompt("hello"),
        )
        .unwrap();
        assert_eq!(response.content, "HELLO");
        assert_eq!(response.usage, None);
    }

    #[test]
    fn the_task_and_model_are_in_the_environment() {
        let line = shell("printf '%s/%s' \"$TASKLISP_TASK\" \"$TASKLISP_MODEL\"");
        let response = run(line, Input::Prompt, Duration::from_secs(10), &prompt("")).unwrap();
        assert_eq!(response.content, "t1/m0");
    }

    #[test]
    fn request_input_is_the_request_as_json() {
        let request = Request {
            json_mode: true,
            ..prompt("p")
        };
        let response = run(
            shell("cat"),
            Input::Request,
            Duration::from_secs(10),
            &request,
        )
        .unwrap();
        let sent: serde_json::Value = serde_json::from_str(&response.content).unwrap();
        assert_eq!(sent["prompt"], "p");
        assert_eq!(sent["task"], "t1");
        assert_eq!(sent["json_mode"], true);
        assert_eq!(sent["messages"], json!([{"role": "user", "content": "p"}]));
    }

    #[test]
    fn a_request_reader_may_answer_with_tool_calls() {
        let answer = answer_with_tool_calls(
            r#"{"tool_calls": [{"id": "1", "name": "add", "arguments": {"a": 1}}]}"#.into(),
        );
        assert_eq!(answer.tool_calls[0].name, "add");
        assert_eq!(answer.content, "");
        let plain = answer_with_tool_calls(r#"{"tool_calls": "no"}"#.into());
        assert!(plain.tool_calls.is_empty());
        assert_eq!(plain.content, r#"{"tool_calls": "no"}"#);
    }

    #[test]
    fn a_failing_program_is_an_llm_error_with_its_stderr() {
        let error = run(
            shell("echo oops >&2; exit 3"),
            Input::Prompt,
            Duration::from_secs(10),
            &prompt(""),
        )
        .unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert_eq!(error.details()["exit_code"], 3);
        assert_eq!(error.details()["stderr"], "oops\n");
    }

    #[test]
    fn a_slow_program_and_its_children_are_ended_at_the_timeout() {
        let started = Instant::now();
        let error = run(
            shell("sleep 30 | cat"),
            Input::Prompt,
            Duration::from_millis(200),
            &prompt(""),
        )
        .unwrap_err();
        assert!(
            error.message().contains("did not finish"),
            "{}",
            error.message()
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_process_that_escapes_the_group_cannot_hold_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let finished = dir.path().join("escaped-finished");
        let line = shell(&format!(
            "printf answer; setsid sh -c 'sleep 8; touch {}' &",
            finished.display()
        ));
        let response = run(line, Input::Prompt, Duration::from_secs(10), &prompt("")).unwrap();
        assert_eq!(response.content, "answer");
        assert!(
            !finished.exists(),
            "the call waited for the escaped process"
        );
    }

    #[test]
    fn endless_output_is_cut_off() {
        let error = run(
            shell("yes"),
            Input::Prompt,
            Duration::from_secs(30),
            &prompt(""),
        )
        .unwrap_err();
        assert!(error.message().contains("more than"), "{}", error.message());
    }

    #[test]
    fn a_missing_program_is_an_llm_error() {
        let argv = Program::Argv(vec!["/nonexistent/tasklisp-provider".into()]);
        let error = run(argv, Input::Prompt, Duration::from_secs(1), &prompt("")).unwrap_err();
        assert!(error.message().contains("cannot run"));
        assert!(CommandProvider::new(
            Program::Argv(vec![]),
            Input::Prompt,
            Duration::from_secs(1),
            None
        )
        .is_err());
    }
}
