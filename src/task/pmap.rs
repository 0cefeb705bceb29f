//! `(pmap f xs :concurrency n)`: calls `f` on the items concurrently (SPEC §5).
//!
//! Each item runs on its own [`Fiber`] on the interpreter thread; the scheduler here
//! starts up to `n` of them, runs the work they block on ([`run_blocking`]) on worker
//! threads, and resumes each fiber when its work is done. Only blocking work overlaps:
//! evaluation itself stays on one thread, one fiber at a time.
//!
//! [`run_blocking`]: crate::eval::fiber::run_blocking

use super::blocking::ModelCall;
use super::journal;
use crate::builtins::predicate::for_item;
use crate::builtins::{builtin_table, int_arg, list_arg, proc_arg, split_options};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::fiber::{in_fiber, new_stack, Fiber, Job, Step};
use crate::eval::Interp;
use crate::progress::{self, Progress};
use crate::task::observe::Spent;
use crate::value::Value;
use corosensei::stack::DefaultStack;
use std::collections::VecDeque;
use std::sync::mpsc;

builtin_table! {
    /// `(pmap f xs :concurrency n :on-error mode :batch b)`: `(map f xs)` with up to `n` calls (default 8; above 256, 256 run and the rest queue) waiting on scripts or models at once; results in input order. A failed item raises (`:raise`, the default), leaves its error map in its place (`:collect`) or is left out (`:skip`). With `:batch true` (or `tasklisp run --batch`) every item (up to 10,000 at once) runs until it waits for a model, and those calls go to the provider's batch API as one job. `(pmap (fn (x) (* x x)) [1 2 3])` ⇒ `(1 4 9)`
    "pmap", 2, Some(6) => pmap;
}

const DEFAULT_CONCURRENCY: i64 = 8;

/// A `pmap` over more items than this shows a progress line on a terminal.
const PROGRESS_AFTER: usize = 4;

/// Each running item holds a stack of its own, so the bound is capped: a larger
/// `:concurrency` runs this many items at once and queues the rest.
const MAX_CONCURRENCY: i64 = 256;

/// Items waiting in one batch job at most (each holds a stack while it waits); more
/// items go in later jobs.
const MAX_BATCH_ITEMS: i64 = 10_000;

/// The stack an item gets is the interpreter's own size within these bounds (reserved
/// up front, committed as used), and its share of [`ALL_ITEM_STACKS`].
const MIN_ITEM_STACK: usize = 1 << 20;
const MAX_ITEM_STACK: usize = 256 << 20;

/// The stack all running items of one `pmap` may use together: items that each recurse
/// deep commit their whole stacks, so the total is bounded, not each one. An item that
/// needs more than its share ends in `RESOURCE_EXHAUSTION` (resource `stack`).
const ALL_ITEM_STACKS: usize = 1 << 30;

fn pmap(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let (positional, options) = split_options("pmap", args, &["concurrency", "on-error", "batch"])?;
    let [f, xs] = positional else {
        return Err(crate::builtins::arity_error(
            "pmap",
            2,
            Some(2),
            positional.len(),
        ));
    };
    let f = proc_arg("pmap", f)?;
    let items: Vec<Value> = list_arg("pmap", xs)?.iter().collect();
    let mut concurrency = None;
    let mut on_error = OnError::Raise;
    let mut batch = interp.tasks.batch_default();
    for (option, value) in options {
        match option {
            "on-error" => on_error = OnError::from_value(&value)?,
            "batch" => batch = value.is_truthy(),
            _ => concurrency = Some(int_arg("pmap :concurrency", &value)?),
        }
    }
    // A batch job takes every item's call at once, so every item runs at once.
    let all_items = i64::try_from(items.len())
        .unwrap_or(i64::MAX)
        .clamp(1, MAX_BATCH_ITEMS);
    let concurrency = match (concurrency, batch) {
        (Some(n), _) => n,
        (None, true) => all_items,
        (None, false) => DEFAULT_CONCURRENCY,
    };
    let limit = if batch {
        MAX_BATCH_ITEMS
    } else {
        MAX_CONCURRENCY
    };
    if concurrency < 1 {
        return Err(Error::eval(format!(
            "pmap: :concurrency must be at least 1, got {concurrency}"
        )));
    }
    // Each running item holds a fiber stack: past the cap, items queue instead.
    let concurrency = concurrency.min(limit);
    let journal_prefix = journal::pmap_prefix(interp);
    let results = if in_fiber(interp) {
        // A pmap inside a pmap item runs its items one after another in that item's
        // fiber; their blocking work still overlaps with the outer items'.
        let mut results = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let outer = journal::enter_item(interp, &journal_prefix, index);
            let result = interp.apply(f, std::slice::from_ref(item), env);
            journal::leave_item(interp, outer);
            let failed = result.is_err();
            results.push(result);
            if failed && on_error == OnError::Raise {
                break;
            }
        }
        results
    } else {
        let concurrency = usize::try_from(concurrency).unwrap_or(1);
        Scheduler::new(interp, f, env, concurrency, on_error, batch, journal_prefix).run(items)
    };
    let mut values = Vec::with_capacity(results.len());
    for (index, result) in results.into_iter().enumerate() {
        match (result, on_error) {
            (Ok(value), _) => values.push(value),
            (Err(e), OnError::Raise) => return Err(for_item(e, index)),
            (Err(e), _) if stops_the_program(&e) => return Err(e),
            (Err(e), OnError::Collect) => values.push(error_map(for_item(e, index), index)),
            (Err(_), OnError::Skip) => {}
        }
    }
    Ok(Value::list(values))
}

/// What `pmap` does with an item that fails.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnError {
    Raise,
    Collect,
    Skip,
}

impl OnError {
    fn from_value(value: &Value) -> Result<OnError> {
        match value.name_text().unwrap_or_default() {
            "raise" => Ok(OnError::Raise),
            "collect" => Ok(OnError::Collect),
            "skip" => Ok(OnError::Skip),
            _ => Err(Error::eval(format!(
                "pmap: :on-error is :raise, :collect or :skip, not {}",
                crate::value::write_string(value)
            ))),
        }
    }
}

/// `(exit)` and Ctrl-C end the program even when failures are collected.
fn stops_the_program(error: &Error) -> bool {
    error.exit_code().is_some() || error.has_reason(&Reason::ExecutionHalted)
}

/// A failed item's place in a collected result: its error map with `"index"`.
fn error_map(error: Error, index: usize) -> Value {
    let mut map = error.to_json_map();
    map.insert("index".into(), serde_json::json!(index));
    crate::value::from_json(&serde_json::Value::Object(map))
}

/// Runs the items of one `pmap` call.
struct Scheduler<'a> {
    interp: &'a Interp,
    f: &'a Value,
    env: &'a Env,
    concurrency: usize,
    stack_size: usize,
    on_error: OnError,
    /// Model calls are gathered into batch jobs (`:batch true`).
    batch: bool,
    /// What the items' names in the journal start with.
    journal_prefix: std::rc::Rc<str>,
}

/// The state of the items while they run.
struct Run<'a> {
    fibers: Vec<Option<Fiber<'a>>>,
    results: Vec<Option<Result<Value>>>,
    /// Fibers to resume: just started, or their blocking work is done.
    ready: VecDeque<usize>,
    running: usize,
    failed: bool,
    /// Stacks of ended fibers, reused: a fresh one costs system calls and page faults.
    spare_stacks: Vec<DefaultStack>,
    finished: mpsc::Receiver<usize>,
    notify: mpsc::Sender<usize>,
    /// Jobs running on worker threads.
    in_flight: usize,
    /// Model calls waiting for the next batch job, with their items' indexes.
    gathered: Vec<(usize, Box<ModelCall>)>,
    /// Items ended, and how many of those failed.
    done: usize,
    failures: usize,
    /// The line on stderr showing the above (on a terminal only).
    progress: Progress,
    /// What the run had spent when this `pmap` started.
    spent_before: Spent,
}

impl<'a> Scheduler<'a> {
    fn new(
        interp: &'a Interp,
        f: &'a Value,
        env: &'a Env,
        concurrency: usize,
        on_error: OnError,
        batch: bool,
        journal_prefix: std::rc::Rc<str>,
    ) -> Scheduler<'a> {
        Scheduler {
            interp,
            f,
            env,
            concurrency,
            on_error,
            batch,
            journal_prefix,
            stack_size: item_stack_size(interp.limits.stack_size, concurrency),
        }
    }

    /// Runs the items and returns their results in input order. When failures raise,
    /// no new item starts after one; those running finish (the lowest-index failure is
    /// the one raised).
    fn run(&self, items: Vec<Value>) -> Vec<Result<Value>> {
        let (notify, finished) = mpsc::channel();
        // A line for a pmap long enough to wait for, and for every batch job.
        let shown = self.batch || items.len() > PROGRESS_AFTER;
        let mut run = Run {
            progress: Progress::new("pmap", items.len(), shown),
            spent_before: self.interp.tasks.observer.spent(),
            done: 0,
            failures: 0,
            fibers: items.iter().map(|_| None).collect(),
            results: items.iter().map(|_| None).collect(),
            ready: VecDeque::new(),
            running: 0,
            failed: false,
            spare_stacks: Vec::new(),
            finished,
            notify,
            in_flight: 0,
            gathered: Vec::new(),
        };
        let mut pending = items.into_iter().enumerate();
        loop {
            while run.running < self.concurrency && !run.failed {
                let Some((index, item)) = pending.next() else {
                    break;
                };
                self.start(&mut run, index, item);
            }
            if let Some(index) = run.ready.pop_front() {
                self.resume(&mut run, index);
            } else if run.running == 0 {
                break;
            } else if run.in_flight == 0 && !run.gathered.is_empty() {
                // Every item still running waits for a model: one batch job for all.
                self.show(&run);
                self.run_batches(&mut run);
            } else {
                self.show(&run);
                // Our own `notify` keeps the channel open, so this waits for a worker.
                if let Ok(index) = run.finished.recv() {
                    run.in_flight -= 1;
                    run.ready.push_back(index);
                }
            }
        }
        run.results.into_iter().flatten().collect()
    }

    fn start(&self, run: &mut Run<'a>, index: usize, item: Value) {
        let (f, env) = (self.f.clone(), self.env.clone());
        let prefix = self.journal_prefix.clone();
        let body = move |interp: &Interp| {
            journal::enter_item(interp, &prefix, index);
            interp.apply(&f, std::slice::from_ref(&item), &env)
        };
        let stack = match run.spare_stacks.pop() {
            Some(stack) => stack,
            None => match new_stack(self.stack_size) {
                Ok(stack) => stack,
                Err(e) => return self.finish(run, index, Err(e)),
            },
        };
        if let Some(slot) = run.fibers.get_mut(index) {
            *slot = Some(Fiber::new(self.interp, stack, self.batch, body));
            run.ready.push_back(index);
            run.running += 1;
        }
    }

    /// Shows the items' progress: done of all, failures, in flight, what they spent.
    fn show(&self, run: &Run<'a>) {
        run.progress.set(run.done, || {
            let now = self.interp.tasks.observer.spent();
            let tokens = (now.input_tokens + now.output_tokens)
                .saturating_sub(run.spent_before.input_tokens + run.spent_before.output_tokens);
            format!(
                "{} failed · {} in flight · {} tokens · ${:.4}",
                run.failures,
                run.running,
                progress::tokens(tokens),
                (now.cost - run.spent_before.cost).max(0.0)
            )
        });
    }

    fn finish(&self, run: &mut Run<'a>, index: usize, result: Result<Value>) {
        run.done += 1;
        run.failures += usize::from(result.is_err());
        if self.on_error == OnError::Raise {
            run.failed |= result.is_err();
        } else {
            run.failed |= result.as_ref().is_err_and(stops_the_program);
        }
        if let Some(slot) = run.results.get_mut(index) {
            *slot = Some(result);
        }
    }

    /// Sends the gathered model calls as batch jobs (one per provider) and makes their
    /// items ready with the answers.
    fn run_batches(&self, run: &mut Run<'a>) {
        let gathered = std::mem::take(&mut run.gathered);
        run.ready.extend(super::batch::answer_gathered(
            self.interp,
            gathered,
            &run.progress,
        ));
    }

    fn resume(&self, run: &mut Run<'a>, index: usize) {
        let Some(fiber) = run.fibers.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        match fiber.resume(self.interp) {
            Step::Blocked(job) => dispatch(run, index, job),
            Step::Gathered(payload) => match payload.downcast::<ModelCall>() {
                Ok(call) => run.gathered.push((index, call)),
                // Only model calls are gathered here; anything else ends its item.
                Err(_) => self.end(run, index, Err(unexpected_payload())),
            },
            Step::Done(result) => self.end(run, index, result),
        }
    }

    /// An item has ended with `result`: its stack is kept for the next one.
    fn end(&self, run: &mut Run<'a>, index: usize, result: Result<Value>) {
        let ended = run.fibers.get_mut(index).and_then(Option::take);
        run.spare_stacks.extend(ended.and_then(Fiber::into_stack));
        run.running -= 1;
        self.finish(run, index, result);
    }
}

fn unexpected_payload() -> Error {
    Error::task_failure(
        Reason::UnexpectedError,
        "pmap: an item waited for something other than a model call",
    )
}

/// An item's stack: the interpreter's own size, at most its share of all items' stacks.
fn item_stack_size(interpreter_stack: usize, concurrency: usize) -> usize {
    (ALL_ITEM_STACKS / concurrency.max(1))
        .min(interpreter_stack)
        .clamp(MIN_ITEM_STACK, MAX_ITEM_STACK)
}

/// Runs a fiber's blocking work on a thread of its own (at most one per running item,
/// so at most `concurrency` at once), which reports back when done. If no thread can
/// start, the job is dropped and the fiber, resumed at once, does the work itself.
fn dispatch(run: &mut Run, index: usize, job: Job) {
    let notify = run.notify.clone();
    let worker = std::thread::Builder::new()
        .name("tasklisp-pmap".into())
        .spawn(move || {
            // `run_blocking`'s jobs catch their own panics; this guards the report, so
            // a fiber is never left waiting forever.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            let _ = notify.send(index);
        });
    match worker {
        Ok(_) => run.in_flight += 1,
        Err(_) => run.ready.push_back(index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_share_a_bounded_stack() {
        assert_eq!(item_stack_size(64 << 20, 1), 64 << 20);
        assert_eq!(item_stack_size(1 << 30, 1), MAX_ITEM_STACK);
        assert_eq!(item_stack_size(160 << 20, 256), 4 << 20);
        assert_eq!(item_stack_size(1 << 16, 8), MIN_ITEM_STACK);
        assert!(item_stack_size(160 << 20, 256) * 256 <= ALL_ITEM_STACKS);
    }

    #[test]
    fn the_builtin_is_documented_with_an_example() {
        for b in BUILTINS {
            assert!(b.doc.contains("(pmap"), "{} needs a signature", b.name);
            assert!(b.doc.contains('⇒'), "{} needs an example", b.name);
        }
    }
}
