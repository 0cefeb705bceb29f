//! The run log: every model call of a run (and the task calls around it) in a SQLite
//! database, for `tasklisp log`, the cache and tools. See `docs/OBSERVABILITY.md`.
//!
//! Nothing touches the disk until the first call is recorded, so a program that calls
//! no model starts as fast as without a log. Rows go to one writer thread
//! ([`writer`]); the cache reads through a connection of its own.

mod lease;
pub mod otlp;
pub mod query;
mod schema;
pub mod view;
mod writer;

use crate::secrets::Secrets;
use serde_json::Value as Json;
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One run of tasklisp: a script, an `eval`, a REPL session, a `prompt`, a `test`.
#[derive(Clone, Debug)]
pub struct RunRow {
    pub id: String,
    pub started_ms: i64,
    /// `run`, `eval`, `repl`, `prompt`, `test`.
    pub command: String,
    /// The script's path, or the text evaluated (whole here; written scrubbed of
    /// secrets, then shortened).
    pub script: String,
    /// The command line of a `run` (its words after the program's name) and the
    /// directory it ran in: what `tasklisp resume` runs again.
    pub argv: Option<Vec<String>>,
    pub cwd: Option<String>,
}

impl RunRow {
    /// A run starting now, with a fresh id.
    pub fn start(command: &str, script: &str) -> RunRow {
        RunRow {
            id: new_run_id(),
            started_ms: now_ms(),
            command: command.to_owned(),
            script: script.to_owned(),
            argv: None,
            cwd: None,
        }
    }
}

impl RunRow {
    /// The script as the log keeps it: scrubbed first (a key cut in two by shortening
    /// would no longer be found), then shortened.
    fn logged_script(&self, secrets: &Secrets) -> String {
        crate::value::truncate_text(&secrets.scrub(&self.script), 200)
    }

    /// The command line as the log keeps it: each word scrubbed (a key given on the
    /// command line must be given again to a resume).
    fn logged_argv(&self, secrets: &Secrets) -> Option<Vec<String>> {
        let argv = self.argv.as_ref()?;
        Some(argv.iter().map(|word| secrets.scrub(word)).collect())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// A call of a task, the parent of the calls made inside it.
    Task,
    /// One test of `tasklisp test`, the parent of the calls its file and body made.
    Test,
    /// One request to a model.
    Model,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Task => "task",
            CallKind::Test => "test",
            CallKind::Model => "model",
        }
    }
}

/// One row of the `calls` table. `seq` numbers the calls of a run; `parent` is the
/// `seq` of the task call it was made in.
#[derive(Clone, Debug)]
pub struct CallRow {
    pub run_id: String,
    pub seq: u64,
    pub parent: Option<u64>,
    pub kind: CallKind,
    pub task: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub options: Option<Json>,
    pub messages: Option<Json>,
    pub answer: Option<String>,
    pub tool_calls: Option<Json>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Of the input tokens, those the provider's prompt cache served and kept.
    pub cached_input_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    pub latency_ms: Option<f64>,
    pub cost: Option<f64>,
    /// `ok` or `error`.
    pub status: String,
    /// The error as its map (`type`, `reason`, `message`, `details`).
    pub error: Option<Json>,
    pub cache_hit: bool,
    /// Set on the answers the cache may give (see [`RunLog::accept`]).
    pub cache_key: Option<String>,
    pub started_ms: i64,
    /// Why the model stopped, in the provider's word.
    pub finish_reason: Option<String>,
    /// The model's reasoning, kept apart from the answer.
    pub reasoning: Option<String>,
}

/// One step of a run's journal (see `task::journal`): a model call, script run, MCP
/// call or human answer, by the `pmap` item it was made in and its number there.
#[derive(Clone, Debug)]
pub struct JournalRow {
    pub item: String,
    pub step: u32,
    pub kind: String,
    /// JSON text of what was asked and what came back.
    pub request: String,
    pub answer: String,
}

/// A provider batch job as one run saw it: submitted by the run, or resumed by it
/// (`resumed`) after an earlier run that submitted it was stopped.
#[derive(Clone, Debug)]
pub struct BatchRow {
    pub run_id: String,
    pub job_id: String,
    /// The digest of the provider, its base URL and the requests (`provider::batch::job_key`).
    pub key: String,
    pub provider: String,
    pub requests: u64,
    pub resumed: bool,
    pub submitted_ms: i64,
}

/// How a batch job ended, for every run's row of it.
#[derive(Clone, Debug)]
pub struct BatchEnd {
    pub key: String,
    pub job_id: String,
    /// `answered`, `partial`, `failed` or `lost` (see `provider::batch::Ended`).
    pub state: String,
    /// The provider's last word on the job (`completed`, `expired`, `ended`…).
    pub provider_status: Option<String>,
    pub done: Option<u64>,
    pub failed: Option<u64>,
    pub ended_ms: i64,
}

/// An answer found in the log for a cache key.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedAnswer {
    pub content: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub finish_reason: Option<String>,
}

/// What every thread's handle on one run's log shares: the run, the writer thread (
/// started by the first row) and the numbering of the run's calls.
struct Shared {
    path: PathBuf,
    run: RunRow,
    writer: Mutex<Option<writer::Writer>>,
    next_seq: AtomicU64,
    /// The run's row is on disk (see [`RunLog::make_resumable`]).
    on_disk: std::sync::atomic::AtomicBool,
    /// The secrets of every provider the run has called so far: every column of every
    /// row, and the run's own script text, is scrubbed of them before it is written.
    secrets: Mutex<Secrets>,
}

/// The log of this run, as one thread records into it. Cheap until the first row is
/// recorded.
pub struct RunLog {
    shared: Arc<Shared>,
    /// A read connection for cache look-ups (`None` inside when it cannot be opened).
    reader: OnceCell<Option<rusqlite::Connection>>,
    /// Answers recorded by this run, which the writer may not have written yet.
    recent: RefCell<HashMap<String, CachedAnswer>>,
}

/// A handle on a run's log that can cross threads: each `tasklisp test` worker opens
/// its own [`RunLog`] from it, recording into the same run.
#[derive(Clone)]
pub struct LogHandle(Arc<Shared>);

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LogHandle({})", self.0.run.id)
    }
}

impl LogHandle {
    pub fn open(&self) -> RunLog {
        RunLog::from_shared(self.0.clone())
    }
}

impl RunLog {
    pub fn new(path: PathBuf, run: RunRow) -> RunLog {
        RunLog::from_shared(Arc::new(Shared {
            path,
            run,
            writer: Mutex::new(None),
            next_seq: AtomicU64::new(0),
            on_disk: std::sync::atomic::AtomicBool::new(false),
            secrets: Mutex::new(Secrets::default()),
        }))
    }

    fn from_shared(shared: Arc<Shared>) -> RunLog {
        RunLog {
            shared,
            reader: OnceCell::new(),
            recent: RefCell::new(HashMap::new()),
        }
    }

    /// A handle for other threads recording into this run.
    pub fn handle(&self) -> LogHandle {
        LogHandle(self.shared.clone())
    }

    pub fn run_id(&self) -> &str {
        &self.shared.run.id
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The number of the run's next call (calls and task calls of every thread share
    /// one sequence, so `(run, seq)` names a row).
    pub fn next_seq(&self) -> u64 {
        self.shared.next_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Adds a provider's secrets to those kept out of the log. Called before the rows of
    /// a call are recorded, so the run's own row (written with the first) is scrubbed of
    /// them too; a run row already written is rewritten if the new secrets change it.
    pub fn learn_secrets(&self, secrets: &Secrets) {
        let (before, after) = {
            let mut known = lock(&self.shared.secrets);
            if known.covers(secrets) {
                return;
            }
            let run = &self.shared.run;
            let before = (run.logged_script(&known), run.logged_argv(&known));
            *known = known.with(secrets);
            (before, (run.logged_script(&known), run.logged_argv(&known)))
        };
        let started = lock(&self.shared.writer).is_some();
        if started && before != after {
            self.send(writer::Message::Script {
                run_id: self.shared.run.id.clone(),
                script: after.0,
                argv: after.1,
            });
        }
    }

    /// The row with every secret the run knows, and every URL's credentials, hidden in
    /// every column that holds text.
    fn scrubbed(&self, mut row: CallRow) -> CallRow {
        let secrets = lock(&self.shared.secrets);
        let text = |t: &mut String| *t = secrets.scrub(t);
        let json = |j: &mut Option<Json>| {
            if let Some(j) = j {
                secrets.scrub_json_in_place(j);
            }
        };
        text(&mut row.task);
        row.provider.as_mut().map(text);
        row.model.as_mut().map(text);
        row.answer.as_mut().map(text);
        row.finish_reason.as_mut().map(text);
        row.reasoning.as_mut().map(text);
        json(&mut row.options);
        json(&mut row.messages);
        json(&mut row.tool_calls);
        json(&mut row.error);
        row
    }

    /// Queues a row, scrubbed of secrets; the first one starts the writer (and creates
    /// the database).
    pub fn record(&self, row: CallRow) {
        let row = self.scrubbed(row);
        self.send(writer::Message::Call(Box::new(row)));
    }

    /// Offers the answer of this run's call `seq` to the cache under `key`: it passed
    /// every check of the call that asked for it.
    pub fn accept(&self, seq: u64, key: String, answer: CachedAnswer) {
        self.recent.borrow_mut().insert(key.clone(), answer);
        self.send(writer::Message::Accept {
            run_id: self.run_id().to_owned(),
            seq,
            key,
        });
    }

    /// Records a batch job this run submitted or resumed, and returns once it is on
    /// disk: the next step is waiting for the job, and a run stopped while waiting must
    /// find it again.
    pub fn record_batch(&self, row: BatchRow) {
        let (written, on_disk) = std::sync::mpsc::channel();
        self.send(writer::Message::Batch(Box::new(row), written));
        // The writer answers once the row is committed, or drops the sender if it cannot
        // write; either way this returns.
        let _ = on_disk.recv();
    }

    /// Journals a step of the run, scrubbed of the secrets the run knows.
    pub fn record_step(&self, mut row: JournalRow) {
        {
            let secrets = lock(&self.shared.secrets);
            row.request = secrets.scrub(&row.request);
            row.answer = secrets.scrub(&row.answer);
        }
        self.send(writer::Message::Step {
            run_id: self.run_id().to_owned(),
            row: Box::new(row),
        });
    }

    /// This run claims run `from` and resumes it: `from` is marked resumed, never to be
    /// resumed again, and its journal becomes this run's (so a resume stopped in turn
    /// resumes from all of it). Returns once the claim is on disk; `Err` says why this
    /// run may not go on (another run claimed `from` first, or the log cannot say).
    pub fn resumes(&self, from: &str) -> Result<(), String> {
        let (claimed, outcome) = std::sync::mpsc::channel();
        self.send(writer::Message::Resumes {
            run_id: self.run_id().to_owned(),
            from: from.to_owned(),
            claimed,
        });
        match outcome.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(by)) => Err(format!(
                "run {from} was resumed already, by run {by}: resume that one instead"
            )),
            Err(_) => Err(format!(
                "run {from} cannot be claimed in the run log (see the warning above): not \
                 resumed, so no other resume runs it twice"
            )),
        }
    }

    /// Whether `tasklisp resume` can take this run up: a `tasklisp run` of a script file.
    pub fn resumable(&self) -> bool {
        let run = &self.shared.run;
        run.command == "run" && run.script != "-" && run.argv.is_some()
    }

    /// Before the run's first step goes out: waits until the run's row (with its
    /// command line) is on disk, so a run killed during that step can be resumed.
    pub fn make_resumable(&self) {
        if self.shared.on_disk.swap(true, Ordering::Relaxed) {
            return;
        }
        let (written, on_disk) = std::sync::mpsc::channel();
        self.send(writer::Message::Sync(written));
        let _ = on_disk.recv();
    }

    /// Records how a batch job ended.
    pub fn record_batch_end(&self, end: BatchEnd) {
        self.send(writer::Message::BatchEnd(Box::new(end)));
    }

    /// The job to wait for instead of submitting requests whose key is `key`: the latest
    /// one still running or fully answered.
    pub fn batch_job(&self, key: &str) -> Option<String> {
        query::batch_job(self.reader()?, key)
    }

    /// Queues a message; the first one starts the writer (and creates the database).
    fn send(&self, message: writer::Message) {
        let shared = &self.shared;
        let mut writer = lock(&shared.writer);
        writer
            .get_or_insert_with(|| writer::Writer::start(shared.path.clone(), self.scrubbed_run()))
            .send(message);
    }

    /// The run's row with its script scrubbed of the secrets known so far.
    fn scrubbed_run(&self) -> RunRow {
        let run = &self.shared.run;
        let secrets = lock(&self.shared.secrets);
        RunRow {
            script: run.logged_script(&secrets),
            argv: run.logged_argv(&secrets),
            ..run.clone()
        }
    }

    fn reader(&self) -> Option<&rusqlite::Connection> {
        self.reader
            .get_or_init(|| schema::open(&self.shared.path).ok())
            .as_ref()
    }

    /// The answer of an earlier successful model call with this cache key, from this run
    /// or an earlier one.
    pub fn cached(&self, key: &str) -> Option<CachedAnswer> {
        if let Some(found) = self.recent.borrow().get(key) {
            return Some(found.clone());
        }
        query::cached_answer(self.reader()?, key)
    }

    /// Marks the run ended with `status` (`ok`, `error`, `interrupted`) and waits for
    /// every row to be written. Does nothing if nothing was recorded.
    pub fn finish(&self, status: &str) {
        let writer = lock(&self.shared.writer).take();
        if let Some(mut writer) = writer {
            writer.send(writer::Message::End {
                run_id: self.shared.run.id.clone(),
                status: status.to_owned(),
                ended_ms: now_ms(),
            });
            writer.finish();
        }
    }
}

/// The last handle on a run that was not finished ends it as an error (a panic).
impl Drop for RunLog {
    fn drop(&mut self) {
        if Arc::strong_count(&self.shared) == 1 {
            self.finish("error");
        }
    }
}

/// A mutex's contents, also after a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the log lives: `TASKLISP_LOG` (`off` for none), else
/// `$XDG_STATE_HOME/tasklisp/log.db`, else `~/.local/state/tasklisp/log.db`.
pub fn location(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = env("TASKLISP_LOG") {
        return (!matches!(path.as_str(), "off" | "0" | "false")).then(|| PathBuf::from(path));
    }
    let state = env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state.join("tasklisp/log.db"))
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Twelve hex digits: random (std's hasher keys are), so runs never collide in practice.
fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_i64(now_ms());
    hasher.write_u32(std::process::id());
    format!("{:012x}", hasher.finish() >> 16)
}

#[cfg(test)]
mod tests;
