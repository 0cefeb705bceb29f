//! Script tasks' view of a program run by [`crate::process`]: a run that did not finish
//! on its own becomes the task error its reason calls for.

use crate::error::{Error, Reason, Result};
use crate::interrupt::Cancel;
use crate::process::{
    ProcessOutput, ProcessSpec, StopReason, Stopped, NOT_STARTED_EXIT_CODE, UNCONFINED_MESSAGE,
};
use serde_json::json;

/// Runs `spec` for a script task.
///
/// Errors: `input_validation_failure` for an empty command, `execution_timeout` (details
/// `timeout_seconds`, `script_stdout`, `script_stderr`), `execution_halted` when `cancel`
/// fires, `tool_execution_error` with `script_exit_code` 127 when the program cannot be
/// started, or `confinement unavailable` when it must be confined and cannot be.
pub fn run_script(spec: &ProcessSpec, cancel: &Cancel) -> Result<ProcessOutput> {
    if spec.argv.is_empty() {
        return Err(Error::task_failure(
            Reason::InputValidationFailure,
            "the script's command is empty",
        ));
    }
    crate::process::run(spec, cancel).map_err(|stopped| script_error(spec.program(), stopped))
}

fn script_error(program: &str, Stopped { why, output }: Stopped) -> Error {
    let error = match why {
        StopReason::NotStarted(os_error) => {
            return Error::task_failure(
                Reason::ToolExecutionError,
                format!("cannot run {program}: {os_error}"),
            )
            .with_details(json!({
                "script_exit_code": NOT_STARTED_EXIT_CODE,
                "script_stdout": "",
                "script_stderr": os_error,
            }))
        }
        StopReason::TimedOut(limit) => Error::task_failure(
            Reason::ExecutionTimeout,
            format!(
                "{program} ran longer than its timeout of {}s",
                limit.as_secs_f64()
            ),
        )
        .with_detail("timeout_seconds", json!(limit.as_secs_f64())),
        StopReason::DeadlinePassed => Error::task_failure(
            Reason::ExecutionTimeout,
            format!("{program} was stopped: the time limit passed"),
        ),
        StopReason::Cancelled => Error::task_failure(
            Reason::ExecutionHalted,
            format!("{program} was interrupted"),
        ),
        StopReason::OutputOverflow => Error::task_failure(
            Reason::ToolExecutionError,
            format!("{program} printed more than its output cap"),
        ),
        StopReason::Failed(message) => Error::task_failure(
            Reason::ToolExecutionError,
            format!("cannot run {program}: {message}"),
        ),
        StopReason::Unconfined(why) => Error::task_failure(
            Reason::ToolExecutionError,
            format!("{UNCONFINED_MESSAGE}: {why}"),
        ),
    };
    error.with_details(json!({
        "script_stdout": output.stdout,
        "script_stderr": output.stderr,
    }))
}
