//! What `tasklisp test` prints, as `cargo test` does: a line per test as it finishes,
//! then each failure in full, then `N passed, N failed`.

use super::check::{request_note, Check};
use super::runner::{test_id, FAILED, PASSED};
use crate::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How one test ended.
pub struct Outcome {
    pub file: PathBuf,
    /// Empty for a file whose tests could not be read.
    pub name: String,
    pub checks: Vec<Check>,
    /// The error that ended the test outside any `expect`.
    pub error: Option<Error>,
    pub output: String,
    pub duration: Duration,
}

impl Outcome {
    pub fn new(file: &Path, name: &str, checks: Vec<Check>, error: Option<Error>) -> Outcome {
        Outcome {
            file: file.to_owned(),
            name: name.to_owned(),
            checks,
            error,
            output: String::new(),
            duration: Duration::ZERO,
        }
    }

    /// A file whose tests cannot be read fails as one test named after the file.
    pub fn broken_file(file: &Path, error: Error) -> Outcome {
        Outcome::new(file, "", Vec::new(), Some(error))
    }

    pub fn id(&self) -> String {
        if self.name.is_empty() {
            self.file.display().to_string()
        } else {
            test_id(&self.file, &self.name)
        }
    }

    pub fn passed(&self) -> bool {
        self.error.is_none() && self.checks.iter().all(|c| c.passed)
    }

    pub fn failed_checks(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }

    /// Everything a reader needs to see why the test failed.
    pub fn failure_text(&self) -> String {
        let mut parts: Vec<String> = self.failed_checks().map(Check::describe).collect();
        if let Some(error) = &self.error {
            parts.push(error_text(error));
        }
        if !self.output.is_empty() {
            parts.push(format!("output:\n{}", self.output.trim_end()));
        }
        parts.join("\n")
    }
}

/// An error that ended a test, as the command line renders errors, plus the request a
/// cassette had no answer for.
pub fn error_text(error: &Error) -> String {
    format!(
        "error: {}{}",
        error.render(false).trim_end(),
        request_note(error)
    )
}

pub struct Reporter<'o> {
    out: &'o mut dyn Write,
    outcomes: Vec<Outcome>,
}

impl<'o> Reporter<'o> {
    pub fn new(out: &'o mut dyn Write, total: usize) -> Reporter<'o> {
        let plural = if total == 1 { "" } else { "s" };
        let _ = writeln!(out, "running {total} test{plural}");
        Reporter {
            out,
            outcomes: Vec::new(),
        }
    }

    pub fn finished(&mut self, outcome: Outcome) {
        let verdict = if outcome.passed() { "ok" } else { "FAILED" };
        let _ = writeln!(self.out, "test {} ... {verdict}", outcome.id());
        let _ = self.out.flush();
        self.outcomes.push(outcome);
    }

    /// Prints the failures and the summary, writes the JUnit report; the exit status.
    pub fn finish(mut self, junit: Option<&Path>) -> i32 {
        self.outcomes.sort_by_key(Outcome::id);
        let failed: Vec<&Outcome> = self.outcomes.iter().filter(|o| !o.passed()).collect();
        if !failed.is_empty() {
            let _ = writeln!(self.out, "\nfailures:");
            for outcome in &failed {
                let _ = writeln!(
                    self.out,
                    "\n---- {} ----\n{}",
                    outcome.id(),
                    outcome.failure_text()
                );
            }
            let _ = writeln!(self.out, "\nfailures:");
            for outcome in &failed {
                let _ = writeln!(self.out, "    {}", outcome.id());
            }
        }
        let passed = self.outcomes.len() - failed.len();
        let _ = writeln!(self.out, "\n{passed} passed, {} failed", failed.len());
        let _ = self.out.flush();
        let mut status = if failed.is_empty() { PASSED } else { FAILED };
        if let Some(path) = junit {
            if let Err(e) =
                crate::atomic_file::write(path, super::junit::report(&self.outcomes).as_bytes())
            {
                eprintln!("tasklisp test: cannot write {}: {e}", path.display());
                status = FAILED;
            }
        }
        status
    }
}
