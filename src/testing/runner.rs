//! `tasklisp test`: runs every test in a fresh interpreter, in parallel, and reports.
//!
//! The interpreter is single-threaded (`Rc` values), so parallelism is one interpreter
//! per test on `jobs` worker threads. Each test's interpreter runs its file's top-level
//! forms (which define, not run, the file's tests), then the test's body. A watchdog
//! interrupts a test that runs past the timeout. With `--models` every test runs once
//! per model, each model with its own cassettes.

use super::compare::{cassette_path, Column};
use super::discover::{find_files, read_test_file, TestFile};
use super::report::{Outcome, Reporter, Reports};
use crate::error::{Error, Reason, Result};
use crate::eval::{Interp, Limits};
use crate::prices::Prices;
use crate::provider::cassette::{Record, Replay};
use crate::provider::Provider;
use crate::provider::ProviderSettings;
use crate::runlog::LogHandle;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Exit statuses: all passed, a test failed, bad usage.
pub const PASSED: i32 = 0;
pub const FAILED: i32 = 1;
pub const USAGE: i32 = 2;

/// What `tasklisp test` was asked.
#[derive(Clone)]
pub struct RunConfig {
    pub paths: Vec<PathBuf>,
    pub jobs: usize,
    pub filter: Option<String>,
    pub reports: Reports,
    pub record: bool,
    pub timeout: Duration,
    pub judge_model: Option<String>,
    pub limits: Limits,
    /// Every test runs once per column: once with the configured provider, or once
    /// per model of `--models`.
    pub columns: Vec<Arc<Column>>,
    /// What a test's tokens cost, by model.
    pub prices: Arc<Prices>,
    pub imports: Vec<PathBuf>,
    /// The run log the tests' model calls go to, each test a row over its calls.
    pub log: Option<LogHandle>,
    /// `--cache` (or `TASKLISP_CACHE=on`): calls may be answered from the log.
    pub cache: bool,
}

/// Where a file's tests get their provider.
enum FileProvider {
    /// A fresh replay of the file's cassette for each test.
    Replay(PathBuf),
    /// One recording provider shared by the file's tests (`--record`).
    Record(Arc<dyn Provider>),
    /// What the flags and environment configure (for the column's model).
    Configured(ProviderSettings),
}

/// A cassette being recorded: written beside the real one, which it replaces at the end.
struct Recording {
    partial: PathBuf,
    cassette: PathBuf,
}

struct Job {
    file: Arc<TestFile>,
    test: String,
    provider: Arc<FileProvider>,
    column: Arc<Column>,
}

/// Runs the tests; returns the exit status. Progress and results go to `out`.
pub fn run(config: &RunConfig, out: &mut dyn Write) -> i32 {
    match plan(config) {
        Ok((jobs, recordings, broken)) => {
            let labels: Vec<Option<String>> =
                config.columns.iter().map(|c| c.label.clone()).collect();
            let tests = (jobs.len() + broken.len()) / labels.len().max(1);
            let mut reporter = Reporter::new(out, tests, labels, config.reports.clone());
            for outcome in broken {
                reporter.finished(outcome);
            }
            run_jobs(config, jobs, &mut reporter);
            let recorded = recordings.iter().try_for_each(finish_recording);
            let status = reporter.finish();
            match recorded {
                Err(e) => {
                    eprintln!("tasklisp test: {e}");
                    FAILED
                }
                Ok(()) => status,
            }
        }
        Err(message) => {
            eprintln!("tasklisp test: {message}");
            USAGE
        }
    }
}

type Plan = (Vec<Job>, Vec<Recording>, Vec<Outcome>);

/// The jobs to run (a column's after another's), the cassettes being recorded, and
/// the files whose tests cannot be read (each one failure per column). Bad paths,
/// provider settings and report files are usage errors.
fn plan(config: &RunConfig) -> std::result::Result<Plan, String> {
    config.reports.check_writable()?;
    let mut files = Vec::new();
    for path in find_files(&config.paths)? {
        let Some(file) = read_test_file(&path) else {
            continue;
        };
        let names = match &file.tests {
            Ok(names) => Ok(names
                .iter()
                .filter(|name| matches_filter(config, &path, name))
                .cloned()
                .collect::<Vec<_>>()),
            Err(e) => Err(e.clone()),
        };
        if names.as_ref().is_ok_and(Vec::is_empty) {
            continue;
        }
        files.push((Arc::new(file), names));
    }
    let mut plan: Plan = (Vec::new(), Vec::new(), Vec::new());
    for column in &config.columns {
        plan_column(config, column, &files, &mut plan)?;
    }
    let (jobs, _, broken) = &plan;
    if jobs.is_empty() && broken.is_empty() && config.filter.is_none() {
        return Err("no tests found (test files are .sexp files with deftest forms)".into());
    }
    Ok(plan)
}

type PlannedFile = (Arc<TestFile>, std::result::Result<Vec<String>, Error>);

/// The jobs of one column: each file's tests with the provider of the column's model.
fn plan_column(
    config: &RunConfig,
    column: &Arc<Column>,
    files: &[PlannedFile],
    (jobs, recordings, broken): &mut Plan,
) -> std::result::Result<(), String> {
    // Made when a file needs it: replaying a comparison's cassettes needs no key.
    let configured = std::cell::OnceCell::new();
    let configured = || {
        configured
            .get_or_init(|| {
                has_settings(&column.settings)
                    .then(|| crate::provider::from_settings(&column.settings))
                    .transpose()
                    .map_err(|e| e.to_string())
            })
            .clone()
    };
    for (file, names) in files {
        let names = match names {
            Ok(names) => names,
            Err(e) => {
                let mut outcome = Outcome::broken_file(&file.path, e.clone());
                outcome.model.clone_from(&column.label);
                broken.push(outcome);
                continue;
            }
        };
        let cassette = cassette_path(&file.path, column.label.as_deref());
        let provider = if config.record {
            let partial = cassette.with_extension("jsonl.recording");
            let inner = recorded_provider(configured()?.as_ref())?;
            let record = Record::new(inner, &partial).map_err(|e| e.to_string())?;
            recordings.push(Recording { partial, cassette });
            FileProvider::Record(Arc::new(record))
        } else if cassette.is_file() {
            FileProvider::Replay(cassette)
        } else {
            configured()?;
            FileProvider::Configured(column.settings.clone())
        };
        let provider = Arc::new(provider);
        for test in names {
            jobs.push(Job {
                file: file.clone(),
                test: test.clone(),
                provider: provider.clone(),
                column: column.clone(),
            });
        }
    }
    Ok(())
}

/// What `--record` records: a provider that answers, given with `--provider`.
fn recorded_provider(
    configured: Option<&Arc<dyn Provider>>,
) -> std::result::Result<Arc<dyn Provider>, String> {
    match configured {
        None => Err("--record needs the provider to record: --provider openai, …".into()),
        Some(provider) if matches!(provider.name(), "replay" | "record") => Err(format!(
            "--record records a live provider, not {}",
            provider.name()
        )),
        Some(provider) => Ok(provider.clone()),
    }
}

fn has_settings(settings: &ProviderSettings) -> bool {
    settings.provider.is_some() || settings.model.is_some() || settings.base_url.is_some()
}

/// `--filter TEXT` keeps the tests whose `file::name` contains the text.
fn matches_filter(config: &RunConfig, path: &Path, name: &str) -> bool {
    config
        .filter
        .as_deref()
        .is_none_or(|text| test_id(path, name).contains(text))
}

/// How a test is named in reports: `path::name`.
pub fn test_id(path: &Path, name: &str) -> String {
    format!("{}::{name}", path.display())
}

/// Replaces the cassette with what was recorded; a file that made no model calls
/// keeps no cassette.
fn finish_recording(recording: &Recording) -> Result<()> {
    let recorded = std::fs::metadata(&recording.partial).map_or(0, |m| m.len());
    let outcome = if recorded == 0 {
        let _ = std::fs::remove_file(&recording.partial);
        match std::fs::remove_file(&recording.cassette) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    } else {
        std::fs::rename(&recording.partial, &recording.cassette)
    };
    outcome.map_err(|e| {
        Error::eval(format!(
            "cannot write the cassette {}: {e}",
            recording.cassette.display()
        ))
    })
}

/// Runs the jobs on worker threads, reporting each result as it comes.
fn run_jobs(config: &RunConfig, jobs: Vec<Job>, reporter: &mut Reporter) {
    let count = jobs.len();
    let queue = Arc::new(Mutex::new(VecDeque::from(jobs)));
    let (results, received) = mpsc::channel::<Outcome>();
    let workers = config.jobs.clamp(1, count.max(1));
    let mut handles = Vec::new();
    for _ in 0..workers {
        let queue = queue.clone();
        let results = results.clone();
        let config = config.clone();
        let stack = Limits::stack_for_depth(config.limits.max_depth);
        let spawned = std::thread::Builder::new()
            .name("tasklisp-test".into())
            .stack_size(stack)
            .spawn(move || worker(&config, stack, &queue, &results));
        match spawned {
            Ok(handle) => handles.push(handle),
            Err(e) if handles.is_empty() => {
                eprintln!("tasklisp test: cannot start a worker thread: {e}");
                return;
            }
            Err(_) => break,
        }
    }
    drop(results);
    for outcome in received.iter() {
        reporter.finished(outcome);
    }
    for handle in handles {
        let _ = handle.join();
    }
}

fn worker(
    config: &RunConfig,
    stack: usize,
    queue: &Mutex<VecDeque<Job>>,
    results: &mpsc::Sender<Outcome>,
) {
    loop {
        let job = match queue.lock() {
            Ok(mut queue) => queue.pop_front(),
            Err(_) => None,
        };
        let Some(job) = job else { return };
        // A panic is a bug of the interpreter, but it fails one test, not the run.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_one(config, stack, &job)
        }))
        .unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let error = Error::eval(format!("the interpreter panicked: {message}"));
            job.outcome(Vec::new(), Some(error))
        });
        if results.send(outcome).is_err() {
            return;
        }
    }
}

/// Runs one test in an interpreter of its own, watched by a timeout.
fn run_one(config: &RunConfig, stack: usize, job: &Job) -> Outcome {
    let started = Instant::now();
    let output = Capture::default();
    let limits = Limits {
        stack_size: stack,
        ..config.limits.clone()
    };
    let mut outcome = match Interp::with_output(limits, Box::new(output.clone())) {
        Ok(interp) => {
            let observer = &interp.tasks.observer;
            observer.set_log(config.log.as_ref().map(|log| Rc::new(log.open())));
            observer.set_cache_everything(config.cache);
            observer.keep_answers();
            let watchdog = Watchdog::start(interp.interrupt_flag(), config.timeout);
            let (checks, error) = run_in(&interp, config, job);
            interp.flush();
            let error = match watchdog.stop() {
                true => Some(Error::task_failure(
                    Reason::ExecutionTimeout,
                    format!(
                        "the test ran longer than {}s (--timeout)",
                        config.timeout.as_secs_f64()
                    ),
                )),
                false => error,
            };
            let mut outcome = job.outcome(checks, error);
            outcome.spent = observer.spent();
            outcome.answers = observer.answers();
            let model = job.column.settings.model.as_deref();
            outcome.cost = super::compare::cost(&config.prices, model, &outcome.spent);
            outcome
        }
        Err(e) => job.outcome(Vec::new(), Some(e)),
    };
    outcome.output = output.text();
    outcome.duration = started.elapsed();
    outcome
}

/// Runs the test as a row of the run log over the model calls it makes.
fn run_in(interp: &Interp, config: &RunConfig, job: &Job) -> (Vec<super::Check>, Option<Error>) {
    let observer = &interp.tasks.observer;
    let scope = &interp.state.task.observe;
    let logged = observer.begin_test(scope, &job.outcome(Vec::new(), None).id());
    let (checks, error) = run_test(interp, config, job);
    let failed = checks.iter().filter(|check| !check.passed).count();
    let outcome = match &error {
        Some(error) => Err(error.clone()),
        None if failed > 0 => Err(Error::eval(format!(
            "{failed} of {} checks failed",
            checks.len()
        ))),
        None => Ok(()),
    };
    observer.end_task(scope, logged, &outcome);
    (checks, error)
}

/// Sets up the provider, runs the file's forms, then the test; returns its checks and
/// the error that ended it, if any.
fn run_test(interp: &Interp, config: &RunConfig, job: &Job) -> (Vec<super::Check>, Option<Error>) {
    super::Tests::of(interp).set_judge_model(config.judge_model.clone());
    let path = &job.file.path;
    let prepared = prepare(interp, config, job).and_then(|()| {
        interp.run_file(path, &job.file.text)?;
        super::Tests::of(interp).get(&job.test).ok_or_else(|| {
            Error::eval(format!(
                "the test `{}` was not defined when {} ran",
                job.test,
                path.display()
            ))
        })
    });
    let test = match prepared {
        Ok(test) => test,
        Err(e) => return (Vec::new(), Some(e)),
    };
    super::Tests::of(interp).start();
    let result = interp.apply(&test.body, &[], &None);
    (super::Tests::of(interp).finish(), result.err())
}

impl Job {
    /// How the test ended: its checks and the error that ended it, under its model.
    fn outcome(&self, checks: Vec<super::Check>, error: Option<Error>) -> Outcome {
        let mut outcome = Outcome::new(&self.file.path, &self.test, checks, error);
        outcome.model.clone_from(&self.column.label);
        outcome
    }
}

fn prepare(interp: &Interp, config: &RunConfig, job: &Job) -> Result<()> {
    match job.provider.as_ref() {
        FileProvider::Replay(cassette) => {
            interp.set_native_provider(Arc::new(Replay::new(cassette)?));
        }
        FileProvider::Record(provider) => interp.set_native_provider(provider.clone()),
        FileProvider::Configured(settings) => interp.configure_provider(settings.clone())?,
    }
    for file in &config.imports {
        crate::module::import_file(interp, file, None)?;
    }
    Ok(())
}

/// Interrupts a test at its timeout by setting the interpreter's interrupt flag, which
/// evaluation, `sleep`, programs and providers all watch.
struct Watchdog {
    done: mpsc::Sender<()>,
    fired: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start(flag: Arc<AtomicBool>, timeout: Duration) -> Watchdog {
        let (done, wait) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let fired_here = fired.clone();
        let thread = std::thread::Builder::new()
            .name("tasklisp-test-watchdog".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(timeout) {
                    fired_here.store(true, Ordering::SeqCst);
                    flag.store(true, Ordering::SeqCst);
                }
            })
            .ok();
        Watchdog {
            done,
            fired,
            thread,
        }
    }

    /// Ends the watch; true if the timeout had passed.
    fn stop(self) -> bool {
        let _ = self.done.send(());
        if let Some(thread) = self.thread {
            let _ = thread.join();
        }
        self.fired.load(Ordering::SeqCst)
    }
}

/// A test's printed output, kept up to a cap so a test printing without end cannot
/// fill memory.
#[derive(Clone, Default)]
struct Capture(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

const OUTPUT_CAP: usize = 64 << 10;

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut kept = self.0.borrow_mut();
        let room = OUTPUT_CAP.saturating_sub(kept.len());
        kept.extend_from_slice(bytes.get(..room.min(bytes.len())).unwrap_or_default());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cassettes_sit_beside_their_test_files() {
        assert_eq!(
            cassette_path(Path::new("ex/review.test.sexp"), None),
            Path::new("ex/review.test.cassette.jsonl")
        );
        assert_eq!(
            cassette_path(Path::new("t/a.sexp"), None),
            Path::new("t/a.cassette.jsonl")
        );
    }

    #[test]
    fn captured_output_stops_at_the_cap() {
        let mut capture = Capture::default();
        let chunk = vec![b'x'; 1000];
        for _ in 0..100 {
            capture.write_all(&chunk).unwrap();
        }
        assert_eq!(capture.text().len(), OUTPUT_CAP);
    }
}
