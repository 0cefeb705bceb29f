//! Threads of evaluation: blocking work (a sleep, a script, a model call) and the
//! coroutines a scheduler (`pmap`) runs evaluations on.
//!
//! The interpreter is single-threaded (`Rc` values), so `pmap` gets its concurrency from
//! coroutines on the interpreter thread: each item runs on a [`Fiber`] with a stack of
//! its own and an [`EvalState`] of its own. An item that reaches [`run_blocking`]
//! suspends its fiber, handing the work to the scheduler, which runs it on a worker
//! thread and resumes the fiber when it is done; meanwhile other items run. Outside a
//! fiber the work just runs inline. A layer may suspend a fiber with a payload of its
//! own for its scheduler ([`suspend_gathering`]: the task layer's model calls waiting
//! for a batch job). See "Concurrency: pmap" in `docs/ARCHITECTURE.md`.

use super::{EvalState, Interp};
use crate::error::{Error, Reason, Result};
use crate::value::Value;
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::any::Any;
use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::{mpsc, Arc, Mutex, PoisonError};

/// Work a fiber hands to the scheduler to run off the interpreter thread. Dropping it
/// without running it is allowed: the fiber then runs the work itself.
pub type Job = Box<dyn FnOnce() + Send>;

/// What a suspended fiber waits for.
pub enum Wait {
    /// Work to run on a worker thread.
    Job(Job),
    /// A layer's request for its scheduler to gather (see [`suspend_gathering`]).
    Gathered(Box<dyn Any>),
}

/// Stack kept free above a fiber's guard page, for builtins and error rendering, like
/// the margin the interpreter keeps on its main stack.
const STACK_MARGIN: usize = 256 << 10;

/// The fiber running on this thread now, if any.
#[derive(Clone, Copy)]
struct Active {
    yielder: NonNull<Yielder<(), Wait>>,
    interp: *const Interp,
    /// The fiber's scheduler gathers requests (`pmap :batch true`: model calls into
    /// batch jobs).
    batch: bool,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
}

/// True when `interp` is running a `pmap` item on this thread (so a nested `pmap` must
/// not start a scheduler of its own).
pub fn in_fiber(interp: &Interp) -> bool {
    active_for(interp).is_some()
}

fn active_for(interp: &Interp) -> Option<Active> {
    ACTIVE
        .get()
        .filter(|active| std::ptr::eq(active.interp, interp))
}

/// Runs `work` and returns its result. Inside a `pmap` item the work runs on a worker
/// thread while the item's fiber is suspended, so the other items go on; elsewhere it
/// runs inline. A panic in `work` resumes in the caller either way.
pub fn run_blocking<T: Send + 'static>(
    interp: &Interp,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let Some(active) = active_for(interp) else {
        return work();
    };
    let slot = Arc::new(Mutex::new(Some(work)));
    let (sender, receiver) = mpsc::channel();
    let job: Job = {
        let slot = slot.clone();
        Box::new(move || {
            if let Some(work) = take(&slot) {
                let _ = sender.send(catch_unwind(AssertUnwindSafe(work)));
            }
        })
    };
    // SAFETY: `active` was set by the fiber running this code (see `Fiber::new`); its
    // yielder lives on this fiber's stack, which exists as long as the fiber does.
    let yielder = unsafe { active.yielder.as_ref() };
    yielder.suspend(Wait::Job(job));
    ACTIVE.set(Some(active));
    match receiver.recv() {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => resume_unwind(panic),
        // The job was dropped unrun (no worker thread could start): run the work here.
        Err(_) => match take(&slot) {
            Some(work) => work(),
            None => resume_unwind(Box::new("blocking work was taken but gave no result")),
        },
    }
}

/// True when `interp` runs on a fiber whose scheduler gathers requests.
pub fn in_gathering_fiber(interp: &Interp) -> bool {
    active_for(interp).is_some_and(|active| active.batch)
}

/// Suspends the running fiber of `interp` with `payload` for its scheduler to gather,
/// returning once the scheduler resumes it; false (nothing suspended) outside a
/// gathering fiber. The payload carries its own way back (the task layer's holds the
/// slot its answer goes in).
pub fn suspend_gathering(interp: &Interp, payload: Box<dyn Any>) -> bool {
    let Some(active) = active_for(interp).filter(|active| active.batch) else {
        return false;
    };
    // SAFETY: as in `run_blocking`: the yielder lives on this fiber's stack.
    let yielder = unsafe { active.yielder.as_ref() };
    yielder.suspend(Wait::Gathered(payload));
    ACTIVE.set(Some(active));
    true
}

/// What is in `slot`, taken out.
pub fn take<F>(slot: &Mutex<Option<F>>) -> Option<F> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// A stack of `size` bytes for a fiber: reserved now, committed by the OS as it is used.
pub fn new_stack(size: usize) -> Result<DefaultStack> {
    DefaultStack::new(size).map_err(|e| {
        Error::task_failure(
            Reason::UnexpectedError,
            format!("pmap: cannot reserve a stack of {size} bytes: {e}"),
        )
    })
}

/// What resuming a fiber led to.
pub enum Step {
    /// The item waits for this work; resume the fiber once it has run.
    Blocked(Job),
    /// The item waits for its scheduler to answer this payload (see
    /// [`suspend_gathering`]).
    Gathered(Box<dyn Any>),
    Done(Result<Value>),
}

/// One `pmap` item running on a stack of its own, with its own evaluation state.
pub struct Fiber<'a> {
    coroutine: Coroutine<(), Wait, Result<Value>, DefaultStack>,
    /// The item's state while it is switched out; the interpreter's own while it runs.
    state: EvalState,
    /// The home the item runs in while it is switched out (see `eval::home`): it may
    /// have been calling a procedure of another home when it blocked.
    home: super::home::HomeId,
    /// Ties the fiber to the interpreter it borrows: it cannot outlive it.
    interp: PhantomData<&'a Interp>,
}

impl<'a> Fiber<'a> {
    /// A fiber, not started yet, that will run `body` on `stack`; with `batch`, its
    /// scheduler gathers requests (`Step::Gathered`).
    pub fn new(
        interp: &'a Interp,
        stack: DefaultStack,
        batch: bool,
        body: impl FnOnce(&Interp) -> Result<Value> + 'static,
    ) -> Fiber<'a> {
        let stack_floor = stack.limit().get().saturating_add(STACK_MARGIN);
        let interp_ptr: *const Interp = interp;
        let coroutine = Coroutine::with_stack(stack, move |yielder: &Yielder<(), Wait>, ()| {
            ACTIVE.set(Some(Active {
                yielder: NonNull::from(yielder),
                interp: interp_ptr,
                batch,
            }));
            // SAFETY: the fiber borrows the interpreter for 'a (see `Fiber::interp`), and
            // the coroutine runs only inside `Fiber::resume` or is unwound when dropped,
            // both within that borrow.
            let interp = unsafe { &*interp_ptr };
            body(interp)
        });
        Fiber {
            coroutine,
            state: EvalState::child_of(&interp.state, stack_floor),
            home: interp.home(),
            interp: PhantomData,
        }
    }

    /// The stack of a fiber that has ended, for the next one (`None` if it has not).
    pub fn into_stack(self) -> Option<DefaultStack> {
        self.coroutine.done().then(|| self.coroutine.into_stack())
    }

    /// Runs the fiber until it blocks or ends, with the interpreter's evaluation state
    /// switched to the fiber's and back. A panic inside the item ends it with an
    /// `unexpected_error`; it does not unwind into the scheduler.
    pub fn resume(&mut self, interp: &Interp) -> Step {
        interp.state.swap(&self.state);
        let outer_home = interp.switch_home(self.home);
        let outer_active = ACTIVE.get();
        let result = catch_unwind(AssertUnwindSafe(|| self.coroutine.resume(())));
        ACTIVE.set(outer_active);
        self.home = interp.switch_home(outer_home);
        interp.state.swap(&self.state);
        match result {
            Ok(CoroutineResult::Yield(Wait::Job(job))) => Step::Blocked(job),
            Ok(CoroutineResult::Yield(Wait::Gathered(payload))) => Step::Gathered(payload),
            Ok(CoroutineResult::Return(result)) => Step::Done(result),
            Err(panic) => Step::Done(Err(Error::task_failure(
                Reason::UnexpectedError,
                format!("a pmap item panicked: {}", panic_message(panic.as_ref())),
            ))),
        }
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Limits;

    fn with_interp<R: Send + 'static>(f: impl FnOnce(&Interp) -> R + Send + 'static) -> R {
        crate::run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
            f(&interp)
        })
        .unwrap()
    }

    #[test]
    fn outside_a_fiber_work_runs_inline() {
        let on_same_thread = with_interp(|interp| {
            let here = std::thread::current().id();
            run_blocking(interp, move || std::thread::current().id() == here)
        });
        assert!(on_same_thread);
    }

    /// Runs `body` on a fiber, running the one job it blocks on with `handle`.
    fn block_once(
        interp: &Interp,
        body: impl FnOnce(&Interp) -> Result<Value> + 'static,
        handle: impl FnOnce(Job),
    ) -> Result<String> {
        let mut fiber = Fiber::new(interp, new_stack(1 << 20)?, false, body);
        let Step::Blocked(job) = fiber.resume(interp) else {
            panic!("expected to block")
        };
        assert!(!in_fiber(interp));
        handle(job);
        let Step::Done(result) = fiber.resume(interp) else {
            panic!("expected to end")
        };
        result.map(|v| crate::value::write_string(&v))
    }

    #[test]
    fn a_fiber_yields_its_work_and_gets_the_result_back() {
        let value = with_interp(|interp| {
            block_once(
                interp,
                |interp| {
                    assert!(in_fiber(interp));
                    Ok(Value::Int(run_blocking(interp, || 20) + 1))
                },
                |job| job(),
            )
        });
        assert_eq!(value.unwrap(), "21");
    }

    #[test]
    fn a_dropped_job_runs_in_the_fiber() {
        let value = with_interp(|interp| {
            block_once(
                interp,
                |interp| Ok(Value::Int(run_blocking(interp, || 7))),
                drop,
            )
        });
        assert_eq!(value.unwrap(), "7");
    }

    #[test]
    fn a_panic_in_the_work_ends_the_item_with_an_error() {
        let result = with_interp(|interp| {
            block_once(
                interp,
                |interp| {
                    run_blocking(interp, || -> i64 { panic!("boom") });
                    Ok(Value::Nil)
                },
                |job| job(),
            )
        });
        assert_eq!(result.unwrap_err().message(), "a pmap item panicked: boom");
    }

    #[test]
    fn the_frame_count_is_the_fibers_own() {
        let (outside, inside) = with_interp(|interp| {
            interp.set_depth(5);
            let outside = std::rc::Rc::new(Cell::new(0));
            let seen = outside.clone();
            let inside = block_once(
                interp,
                |interp| {
                    let start = interp.depth();
                    interp.set_depth(40);
                    run_blocking(interp, || ());
                    Ok(Value::Int((start * 1000 + interp.depth()) as i64))
                },
                |job| {
                    seen.set(interp.depth());
                    job()
                },
            );
            (outside.get(), inside.unwrap())
        });
        assert_eq!(outside, 5);
        assert_eq!(inside, "5040");
    }
}
