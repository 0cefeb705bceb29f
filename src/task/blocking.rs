//! Blocking work (provider calls, scripts) off the interpreter thread.
//!
//! Minimal placeholder with the agreed signature: it runs the work inline. The "scripts"
//! helper's version (which uses worker threads inside `pmap`) replaces this file.

use crate::eval::Interp;

/// Runs `work` and returns its result.
pub fn run_blocking<T: Send + 'static>(
    _interp: &Interp,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    work()
}
