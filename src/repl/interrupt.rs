//! Ctrl-C while an evaluation runs: a SIGINT handler that sets the interpreter's
//! interrupt flag instead of killing the process. It is installed only for the time of
//! one evaluation; while rustyline edits a line the terminal is raw and Ctrl-C is a key.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

/// The flag the handler sets; null when no evaluation is running.
static TARGET: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

/// Routes SIGINT to `flag` until dropped, then restores the previous disposition.
pub struct InterruptGuard {
    // Keeps the flag alive for as long as the handler can reach it.
    _flag: Arc<AtomicBool>,
    #[cfg(unix)]
    previous: Option<libc::sigaction>,
}

impl InterruptGuard {
    pub fn install(flag: Arc<AtomicBool>) -> InterruptGuard {
        TARGET.store(Arc::as_ptr(&flag).cast_mut(), Ordering::SeqCst);
        InterruptGuard {
            #[cfg(unix)]
            previous: unix::install(),
            _flag: flag,
        }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(previous) = &self.previous {
            unix::restore(previous);
        }
        TARGET.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

#[cfg(unix)]
mod unix {
    use super::TARGET;
    use std::sync::atomic::Ordering;

    /// Only async-signal-safe work here: one atomic load and one atomic store.
    extern "C" fn on_sigint(_signal: libc::c_int) {
        let target = TARGET.load(Ordering::SeqCst);
        // SAFETY: a non-null TARGET points into an Arc that the installed guard keeps
        // alive; the guard nulls it before releasing its reference.
        if let Some(flag) = unsafe { target.as_ref() } {
            flag.store(true, Ordering::SeqCst);
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
        // SAFETY: `previous` is the disposition sigaction returned when the guard was made.
        unsafe {
            libc::sigaction(libc::SIGINT, previous, std::ptr::null_mut());
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn sigint_sets_the_flag_only_while_installed() {
        let flag = Arc::new(AtomicBool::new(false));
        {
            let _guard = InterruptGuard::install(flag.clone());
            // SAFETY: raising a signal whose handler we just installed.
            unsafe { libc::raise(libc::SIGINT) };
            assert!(flag.load(Ordering::SeqCst));
        }
        assert!(TARGET.load(Ordering::SeqCst).is_null());
    }
}
