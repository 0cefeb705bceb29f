//! Ctrl-C while an evaluation runs: a SIGINT handler that sets the interpreter's
//! interrupt flag instead of killing the process, so the evaluation stops with
//! `execution_halted`, running scripts are killed with their process groups, and output
//! is flushed. In the REPL the handler stays installed for the whole session, so a stray
//! Ctrl-C between evaluations is harmless, but it reaches the flag only while an
//! evaluation runs; while rustyline edits a line the terminal is raw and Ctrl-C is a key,
//! not a signal. For `tasklisp run` a second Ctrl-C, while the first is still pending,
//! ends the process at once (a program blocked reading input cannot see the flag).
//!
//! Tested through a real terminal in `tests/repl.rs` (a signal raised inside the unit
//! test process would reach whichever test's interpreter is routed at that moment).

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

/// Lets a call in flight stop early: Ctrl-C in the REPL, or a timeout. Model calls
/// and programs poll it while they wait.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    pub flag: Arc<AtomicBool>,
    pub deadline: Option<std::time::Instant>,
}

/// The flag the handler sets; null when no evaluation is running.
static TARGET: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

/// Whether a Ctrl-C that finds the flag already set ends the process (status 130).
static SECOND_PRESS_EXITS: AtomicBool = AtomicBool::new(false);

/// SIGINT handled by the REPL until dropped, then the previous disposition again.
pub struct SigintHandler {
    #[cfg(unix)]
    previous: Option<libc::sigaction>,
}

/// While alive, SIGINT sets this flag.
pub struct Routing {
    // Keeps the flag alive for as long as the handler can reach it.
    _flag: Arc<AtomicBool>,
}

impl SigintHandler {
    pub fn install() -> SigintHandler {
        SECOND_PRESS_EXITS.store(false, Ordering::SeqCst);
        SigintHandler {
            #[cfg(unix)]
            previous: unix::install(),
        }
    }

    /// The handler for running a script: a second Ctrl-C before the first took effect
    /// ends the process.
    pub fn install_for_script() -> SigintHandler {
        let handler = SigintHandler::install();
        SECOND_PRESS_EXITS.store(true, Ordering::SeqCst);
        handler
    }

    /// Routes SIGINT to `flag` until the returned value is dropped.
    pub fn route_to(&self, flag: Arc<AtomicBool>) -> Routing {
        TARGET.store(Arc::as_ptr(&flag).cast_mut(), Ordering::SeqCst);
        Routing { _flag: flag }
    }
}

impl Drop for Routing {
    fn drop(&mut self) {
        TARGET.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

impl Drop for SigintHandler {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(previous) = &self.previous {
            unix::restore(previous);
        }
    }
}

#[cfg(unix)]
mod unix {
    use super::{SECOND_PRESS_EXITS, TARGET};
    use std::sync::atomic::Ordering;

    /// Only async-signal-safe work here: one atomic load and one atomic store.
    extern "C" fn on_sigint(_signal: libc::c_int) {
        let target = TARGET.load(Ordering::SeqCst);
        // SAFETY: a non-null TARGET points into an Arc that a live `Routing` keeps
        // alive; the Routing nulls it before releasing its reference.
        if let Some(flag) = unsafe { target.as_ref() } {
            if flag.swap(true, Ordering::SeqCst) && SECOND_PRESS_EXITS.load(Ordering::SeqCst) {
                // SAFETY: _exit is async-signal-safe.
                unsafe { libc::_exit(130) };
            }
        }
    }

    pub fn install() -> Option<libc::sigaction> {
        // SAFETY: sigaction is plain data; zeroed is a valid initial value, and the
        // handler only touches atomics.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(libc::SIGINT, &action, &mut previous) == 0).then_some(previous)
        }
    }

    pub fn restore(previous: &libc::sigaction) {
        // SAFETY: `previous` is the disposition sigaction returned at installation.
        unsafe {
            libc::sigaction(libc::SIGINT, previous, std::ptr::null_mut());
        }
    }
}
