//! The batch side of `pmap :batch true`: the model calls its items wait on, sent as one
//! job per provider through the provider's batch API (`src/provider/batch.rs`), and the
//! answers handed back to the items; the job's state on `pmap`'s progress line. See
//! docs/BATCH.md.

use super::blocking::ModelCall;
use crate::eval::Interp;
use crate::interrupt::Cancel;
use crate::progress::Progress;
use crate::provider::batch::{self, Call, Ended, JobState, Journal, Polling};
use crate::provider::Provider;
use crate::runlog::{now_ms, BatchEnd, BatchRow, RunLog};
use std::sync::Arc;

/// Runs `gathered` (item index, call) as batch jobs, one per provider, puts each answer
/// in its call's slot and returns the indexes of the items to resume, in input order.
/// Each job's state is shown on `progress`.
pub fn answer_gathered(
    interp: &Interp,
    mut gathered: Vec<(usize, Box<ModelCall>)>,
    progress: &Progress,
) -> Vec<usize> {
    gathered.sort_by_key(|(index, _)| *index);
    let mut ready = Vec::with_capacity(gathered.len());
    for group in by_provider(gathered) {
        let Some((_, first)) = group.first() else {
            continue;
        };
        let provider = first.provider.clone();
        let calls: Vec<Call> = group
            .iter()
            .map(|(index, call)| Call::new(*index, &call.request))
            .collect();
        let resumable = group.iter().any(|(_, call)| call.resumable);
        interp.flush();
        let answers = run_job(interp, provider.as_ref(), &calls, resumable, progress);
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

/// One job for `calls`, its state shown on `progress`; a failure of the job as a
/// whole (it could not be submitted, or failed) is every call's answer. The job is
/// recorded in the run log; with `resumable` (the cache is on), a job the log holds for
/// the same requests is waited for instead of submitting them again.
fn run_job(
    interp: &Interp,
    provider: &dyn Provider,
    calls: &[Call],
    resumable: bool,
    progress: &Progress,
) -> Vec<crate::error::Result<crate::provider::Response>> {
    let Some(api) = provider.batch() else {
        return calls
            .iter()
            .map(|call| provider.complete(call.request, &cancel(interp)))
            .collect();
    };
    let log = interp.tasks.observer.log();
    if let Some(log) = &log {
        // The job's row may be the run's first: its script is scrubbed of this key too.
        log.learn_secrets(&provider.secrets());
    }
    let mut journal = log.as_deref().map(|log| LogJournal {
        log,
        provider: provider.name(),
        resumable,
    });
    let outcome = batch::run(
        api,
        calls,
        Polling::from_env(),
        &cancel(interp),
        journal.as_mut().map(|j| j as &mut dyn Journal),
        &mut |job| progress.set_job(job_line(provider.name(), calls.len(), job)),
    );
    progress.set_job(String::new());
    match outcome {
        Ok(answers) => answers,
        Err(error) => calls.iter().map(|_| Err(error.clone())).collect(),
    }
}

/// The run log as the batch driver's journal: every job is recorded; one is looked up
/// only when the cache is on (`resumable`), as cached answers are.
struct LogJournal<'a> {
    log: &'a RunLog,
    provider: &'a str,
    resumable: bool,
}

impl Journal for LogJournal<'_> {
    fn find(&mut self, key: &str) -> Option<String> {
        self.resumable.then(|| self.log.batch_job(key)).flatten()
    }

    fn started(&mut self, key: &str, job: &str, requests: usize, resumed: bool) {
        self.log.record_batch(BatchRow {
            run_id: self.log.run_id().to_owned(),
            job_id: job.to_owned(),
            key: key.to_owned(),
            provider: self.provider.to_owned(),
            requests: requests as u64,
            resumed,
            submitted_ms: now_ms(),
        });
    }

    fn ended(&mut self, key: &str, job: &str, ended: Ended, state: Option<&JobState>) {
        self.log.record_batch_end(BatchEnd {
            key: key.to_owned(),
            job_id: job.to_owned(),
            state: ended.as_str().to_owned(),
            provider_status: state.map(|s| s.status.clone()),
            done: state.map(|s| s.done),
            failed: state.map(|s| s.failed),
            ended_ms: now_ms(),
        });
    }
}

/// A job's state as the progress line shows it: `openai batch batch_0: 40/100 done, 2
/// failed, in_progress`.
fn job_line(provider: &str, calls: usize, job: &JobState) -> String {
    let total = if job.total > 0 {
        job.total
    } else {
        calls as u64
    };
    format!(
        "{provider} batch {}: {}/{total} done, {} failed, {}",
        job.id, job.done, job.failed, job.status
    )
}

/// A batch job stops waiting on Ctrl-C (the interpreter's interrupt flag).
fn cancel(interp: &Interp) -> Cancel {
    Cancel {
        flag: interp.interrupt_flag(),
        deadline: None,
    }
}
