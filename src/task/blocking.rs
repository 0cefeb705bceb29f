//! Model calls as blocking work: run on a worker thread inside a `pmap` item, or
//! gathered into the item's batch job (`pmap :batch true`). The fibers themselves are
//! the core's (`crate::eval::fiber`).

use crate::error::{Error, Reason, Result};
use crate::eval::fiber::{in_gathering_fiber, run_blocking, suspend_gathering, take};
use crate::eval::Interp;
use crate::interrupt::Cancel;
use crate::provider::{Provider, Request, Response};
use std::sync::{Arc, Mutex};

/// A model call waiting for its batch: the scheduler puts the answer in `answer` and
/// resumes the fiber.
pub struct ModelCall {
    pub provider: Arc<dyn Provider>,
    pub request: Request,
    pub answer: Arc<Mutex<Option<Result<Response>>>>,
    /// The cache is on for the call: its job may be one a stopped run submitted.
    pub resumable: bool,
}

/// Sends `request` to a native provider. Inside an item of a `pmap :batch true`, and
/// when the provider has a batch API, the call waits for the item's batch job instead
/// (see `pmap.rs`); elsewhere it runs as blocking work. `resumable`: the cache is on
/// for the call (see `ModelCall`).
pub fn run_model(
    interp: &Interp,
    provider: Arc<dyn Provider>,
    request: Request,
    cancel: Cancel,
    resumable: bool,
) -> Result<Response> {
    if !in_gathering_fiber(interp) || provider.batch().is_none() {
        return run_blocking(interp, move || provider.complete(&request, &cancel));
    }
    let answer = Arc::new(Mutex::new(None));
    let call = ModelCall {
        provider,
        request,
        answer: answer.clone(),
        resumable,
    };
    suspend_gathering(interp, Box::new(call));
    take(&answer).unwrap_or_else(|| {
        Err(Error::task_failure(
            Reason::UnexpectedError,
            "the batch job gave no answer for this call",
        ))
    })
}
