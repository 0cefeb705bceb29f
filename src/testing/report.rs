//! What `tasklisp test` prints, as `cargo test` does: a line per test as it finishes,
//! then each failure in full, then `N passed, N failed` (and with `--models` the test ×
//! model table); or, with `--json`, only the JSON document. Then the report files.

use super::check::{request_note, Check};
use super::runner::{test_id, FAILED, PASSED};
use crate::error::Error;
use crate::task::observe::Spent;
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
    /// The model of `--models` it ran with (`None` without `--models`).
    pub model: Option<String>,
    /// What its model calls used; their cost at the model's price, when known.
    pub spent: Spent,
    pub cost: Option<f64>,
    /// The last answers the model gave in the test, oldest first.
    pub answers: Vec<String>,
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
            model: None,
            spent: Spent::default(),
            cost: Some(0.0),
            answers: Vec::new(),
        }
    }

    /// A file whose tests cannot be read fails as one test named after the file.
    pub fn broken_file(file: &Path, error: Error) -> Outcome {
        Outcome::new(file, "", Vec::new(), Some(error))
    }

    /// `file::name` (the file alone for a file whose tests cannot be read).
    pub fn test_id(&self) -> String {
        if self.name.is_empty() {
            self.file.display().to_string()
        } else {
            test_id(&self.file, &self.name)
        }
    }

    /// The test's id, followed by ` [MODEL]` in a comparison.
    pub fn id(&self) -> String {
        match &self.model {
            Some(model) => format!("{} [{model}]", self.test_id()),
            None => self.test_id(),
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

/// The reports a run writes beside what it prints: `--junit`, `--html`, and `--json`
/// (the JSON document printed instead of the text).
#[derive(Clone, Debug, Default)]
pub struct Reports {
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub json: bool,
}

impl Reports {
    /// Whether each report file can be written, checked before any test runs (a
    /// comparison may cost money): the message for the first that cannot.
    pub fn check_writable(&self) -> Result<(), String> {
        for (flag, path) in [("--junit", &self.junit), ("--html", &self.html)] {
            if let Some(path) = path {
                writable(path)
                    .map_err(|e| format!("{flag}: cannot write {}: {e}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// Opens `path` for appending, which changes nothing in a file that exists; one made
/// for the check is taken away again.
fn writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    if !existed {
        std::fs::remove_file(path)?;
    }
    Ok(())
}

pub struct Reporter<'o> {
    out: &'o mut dyn Write,
    outcomes: Vec<Outcome>,
    /// The columns of a comparison (one `None` without `--models`).
    labels: Vec<Option<String>>,
    reports: Reports,
}

impl<'o> Reporter<'o> {
    /// `tests` tests to run under each of the `labels`' models.
    pub fn new(
        out: &'o mut dyn Write,
        tests: usize,
        labels: Vec<Option<String>>,
        reports: Reports,
    ) -> Reporter<'o> {
        let plural = if tests == 1 { "" } else { "s" };
        if !reports.json {
            let _ = match labels.as_slice() {
                [None] => writeln!(out, "running {tests} test{plural}"),
                _ => writeln!(
                    out,
                    "running {tests} test{plural} × {} models",
                    labels.len()
                ),
            };
        }
        Reporter {
            out,
            outcomes: Vec::new(),
            labels,
            reports,
        }
    }

    pub fn finished(&mut self, outcome: Outcome) {
        if !self.reports.json {
            let verdict = if outcome.passed() { "ok" } else { "FAILED" };
            let _ = writeln!(self.out, "test {} ... {verdict}", outcome.id());
            let _ = self.out.flush();
        }
        self.outcomes.push(outcome);
    }

    /// Prints the failures and the summary (or the JSON document), writes the report
    /// files; the exit status.
    pub fn finish(mut self) -> i32 {
        self.outcomes.sort_by_key(Outcome::id);
        let failed = self.outcomes.iter().filter(|o| !o.passed()).count();
        if self.reports.json {
            let document = super::json::document(&self.outcomes, &self.labels);
            let _ = writeln!(self.out, "{document:#}");
        } else {
            self.print_text(failed);
        }
        let _ = self.out.flush();
        let mut status = if failed == 0 { PASSED } else { FAILED };
        let (outcomes, labels) = (&self.outcomes, &self.labels);
        let junit = || super::junit::report(outcomes);
        let html = || super::html::report(outcomes, labels);
        let files: [(&Option<PathBuf>, &dyn Fn() -> String); 2] =
            [(&self.reports.junit, &junit), (&self.reports.html, &html)];
        for (path, report) in files {
            let Some(path) = path else { continue };
            let text = report();
            if let Err(e) = crate::atomic_file::write(path, text.as_bytes()) {
                eprintln!("tasklisp test: cannot write {}: {e}", path.display());
                status = FAILED;
            }
        }
        status
    }

    fn print_text(&mut self, failed: usize) {
        let failures: Vec<&Outcome> = self.outcomes.iter().filter(|o| !o.passed()).collect();
        if !failures.is_empty() {
            let _ = writeln!(self.out, "\nfailures:");
            for outcome in &failures {
                let _ = writeln!(
                    self.out,
                    "\n---- {} ----\n{}",
                    outcome.id(),
                    outcome.failure_text()
                );
            }
            let _ = writeln!(self.out, "\nfailures:");
            for outcome in &failures {
                let _ = writeln!(self.out, "    {}", outcome.id());
            }
        }
        if self.labels.iter().any(Option::is_some) {
            let table = super::compare::table(&self.outcomes, &self.labels);
            let _ = write!(self.out, "\n{table}");
        }
        let passed = self.outcomes.len() - failed;
        let _ = writeln!(self.out, "\n{passed} passed, {failed} failed");
    }
}
