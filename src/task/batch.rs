//! The batch side of `pmap :batch true`: the model calls its items wait on, sent as one
//! job per provider through the provider's batch API (`src/provider/batch/`), and the
//! answers handed back to the items. See docs/BATCH.md.

use super::blocking::ModelCall;
use crate::eval::Interp;
use crate::provider::batch::{self, Call, JobState, Polling};
use crate::provider::{Cancel, Provider};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

/// Runs `gathered` (item index, call) as batch jobs, one per provider, puts each answer
/// in its call's slot and returns the indexes of the items to resume, in input order.
pub fn answer_gathered(interp: &Interp, mut gathered: Vec<(usize, Box<ModelCall>)>) -> Vec<usize> {
    gathered.sort_by_key(|(index, _)| *index);
    let mut ready = Vec::with_capacity(gathered.len());
    for group in by_provider(gathered) {
        let Some((_, first)) = group.first() else {
            continue;
        };
        let provider = first.provider.clone();
        let calls: Vec<Call> = group
            .iter()
            .map(|(index, call)| Call::new(*index, call.request.clone()))
            .collect();
        interp.flush();
        let answers = run_job(interp, provider.as_ref(), &calls);
        for ((index, call), answer) in group.into_iter().zip(answers) {
            if let Ok(mut slot) = call.answer.lock() {
                *slot = Some(answer);
            }
            ready.push(index);
        }
    }
    ready.sort_unstable();
    ready
}

/// The calls grouped by the provider they go to (the same provider object), each group
/// in item order.
fn by_provider(gathered: Vec<(usize, Box<ModelCall>)>) -> Vec<Vec<(usize, Box<ModelCall>)>> {
    let mut groups: Vec<Vec<(usize, Box<ModelCall>)>> = Vec::new();
    for (index, call) in gathered {
        let same = |group: &&mut Vec<(usize, Box<ModelCall>)>| {
            group
                .first()
                .is_some_and(|(_, c)| Arc::ptr_eq(&c.provider, &call.provider))
        };
        match groups.iter_mut().find(same) {
            Some(group) => group.push((index, call)),
            None => groups.push(vec![(index, call)]),
        }
    }
    groups
}

/// One job for `calls`, with a progress line on a terminal; a failure of the job as a
/// whole (it could not be submitted, or failed) is every call's answer.
fn run_job(
    interp: &Interp,
    provider: &dyn Provider,
    calls: &[Call],
) -> Vec<crate::error::Result<crate::provider::Response>> {
    let Some(api) = provider.batch() else {
        return calls
            .iter()
            .map(|call| provider.complete(&call.request, &cancel(interp)))
            .collect();
    };
    let mut progress = Progress::new(provider.name(), calls.len());
    let outcome = batch::run(
        api,
        calls,
        None,
        Polling::from_env(),
        &cancel(interp),
        &mut |_| {},
        &mut |job| progress.show(job),
    );
    progress.finish();
    match outcome {
        Ok(answers) => answers,
        Err(error) => calls.iter().map(|_| Err(error.clone())).collect(),
    }
}

/// A batch job stops waiting on Ctrl-C (the interpreter's interrupt flag).
fn cancel(interp: &Interp) -> Cancel {
    Cancel {
        flag: interp.interrupt_flag(),
        deadline: None,
    }
}

/// The line that shows a job's progress on stderr, when stderr is a terminal.
struct Progress {
    provider: String,
    calls: usize,
    started: Instant,
    shown: bool,
}

impl Progress {
    fn new(provider: &str, calls: usize) -> Progress {
        Progress {
            provider: provider.to_owned(),
            calls,
            started: Instant::now(),
            shown: false,
        }
    }

    fn show(&mut self, job: &JobState) {
        let mut stderr = std::io::stderr();
        if !stderr.is_terminal() {
            return;
        }
        let total = if job.total > 0 {
            job.total
        } else {
            self.calls as u64
        };
        let _ = write!(
            stderr,
            "\r\x1b[2K{} batch {}: {}/{} done, {} failed, {} ({:.0}s)",
            self.provider,
            job.id,
            job.done,
            total,
            job.failed,
            job.status,
            self.started.elapsed().as_secs_f64()
        );
        let _ = stderr.flush();
        self.shown = true;
    }

    fn finish(&mut self) {
        if self.shown {
            eprintln!();
        }
    }
}
