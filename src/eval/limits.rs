//! Limits and polling: the execution limits, the stack, the frame count, fuel, memory,
//! time and Ctrl-C, checked as evaluation goes.

use super::Interp;
use crate::error::{Error, Reason, Result};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Execution limits, settable from the API and the command line.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Nested non-tail procedure calls.
    pub max_depth: usize,
    /// Nested task calls.
    pub max_task_depth: usize,
    /// Procedure calls allowed in all (`None`: unlimited).
    pub fuel: Option<u64>,
    /// Wall-clock time allowed from the interpreter's creation.
    pub timeout: Option<Duration>,
    /// The usable size of the stack the interpreter runs on; see [`run_on_large_stack`].
    pub stack_size: usize,
    /// What the program may do outside the interpreter (programs, files, environment,
    /// providers): everything by default, nothing in a sandbox.
    pub capabilities: crate::capabilities::Capabilities,
    /// Heap bytes the process may use (`None`: unlimited); enforced where the counting
    /// allocator is installed, see [`crate::CountingAllocator`].
    pub max_memory: Option<u64>,
    /// The largest file `run`, `import`, `load` and `read-file` read, in bytes.
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 10_000,
            max_task_depth: 100,
            fuel: None,
            timeout: None,
            stack_size: 1 << 20,
            capabilities: crate::capabilities::Capabilities::all(),
            max_memory: Some(crate::memory::default_budget()),
            max_file_bytes: crate::value::bounds::DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// The deepest `max_depth` allowed: its stack (16 KiB a frame) is reserved up front.
pub const MAX_DEPTH_LIMIT: usize = 100_000;

impl Limits {
    /// A stack big enough for `max_depth` frames of deeply nested code.
    pub fn stack_for_depth(max_depth: usize) -> usize {
        (64usize << 20).max(max_depth.min(MAX_DEPTH_LIMIT).saturating_mul(16 << 10))
    }
}

/// Runs `f` on a new thread with a stack big enough for `limits`, and returns its result.
/// Every interpreter the CLI creates runs this way; tests do the same.
pub fn run_on_large_stack<R: Send + 'static>(
    limits: &Limits,
    f: impl FnOnce(Limits) -> R + Send + 'static,
) -> std::io::Result<R> {
    let mut limits = limits.clone();
    limits.stack_size = Limits::stack_for_depth(limits.max_depth);
    let handle = std::thread::Builder::new()
        .name("tasklisp".into())
        .stack_size(limits.stack_size)
        .spawn(move || f(limits))?;
    handle
        .join()
        .map_err(|_| std::io::Error::other("the interpreter thread panicked"))
}

/// Margin of stack kept free below the limit check, for builtins and error rendering.
pub(super) const STACK_MARGIN: usize = 256 << 10;

impl Interp {
    /// Fails cleanly before the Rust stack runs out, whatever the recursion is.
    #[inline]
    pub fn check_stack(&self) -> Result<()> {
        let here = 0u8;
        if (&here as *const u8 as usize) < self.state.stack_floor.get() {
            return Err(Error::resource(
                "stack",
                self.limits.stack_size as u64,
                self.limits.stack_size as u64,
                "evaluation nested too deeply (stack exhausted)",
            ));
        }
        Ok(())
    }

    /// Sets where the stack-limit check trips, for code run on another stack (coroutines).
    /// Returns the previous floor so it can be restored.
    pub fn set_stack_floor(&self, floor: usize) -> usize {
        self.state.stack_floor.replace(floor)
    }

    pub fn depth(&self) -> usize {
        self.state.depth.get()
    }

    /// Sets the frame count, for code that switches between stacks (pmap's coroutines
    /// each count their own frames).
    pub fn set_depth(&self, depth: usize) {
        self.state.depth.set(depth);
    }

    #[inline]
    pub(super) fn enter(&self) -> Result<()> {
        let depth = self.state.depth.get() + 1;
        if depth > self.limits.max_depth {
            return Err(Error::resource(
                "depth",
                depth as u64,
                self.limits.max_depth as u64,
                format!("recursion deeper than {} frames", self.limits.max_depth),
            ));
        }
        self.state.depth.set(depth);
        Ok(())
    }

    #[inline]
    pub(super) fn leave(&self) {
        self.state.depth.set(self.state.depth.get() - 1);
    }

    /// Counts a procedure call against fuel, and now and then checks the interrupt flag
    /// and the deadline.
    #[inline]
    pub fn tick(&self) -> Result<()> {
        self.tick_call(self.home()).map(drop)
    }

    /// [`Interp::tick`] for a call of a procedure made in `home`, and whether it may run
    /// in the running home. Only a metered interpreter checks: every child is metered
    /// (`Interp::child`), and only a child is given procedures of other homes, so an
    /// unmetered interpreter's calls pay nothing for the check.
    #[inline(always)]
    pub(super) fn tick_call(&self, home: super::home::HomeId) -> Result<bool> {
        let ticks = self.ticks.get() + 1;
        self.ticks.set(ticks);
        if let Some(fuel) = self.limits.fuel {
            if ticks > fuel {
                return Err(Error::resource("fuel", ticks, fuel, "out of fuel"));
            }
            if home != self.home() {
                return Ok(false);
            }
        }
        if ticks & 0x3ff == 0 {
            self.check_interrupt()?;
            self.check_memory()?;
        }
        Ok(true)
    }

    /// For loops inside builtins that can run long (comparing, walking or building
    /// data): counts one unit of fuel and checks the interrupt flag, the deadline and
    /// the memory budget. Callers poll every few thousand steps.
    pub fn poll(&self) -> Result<()> {
        let ticks = self.ticks.get() + 1;
        self.ticks.set(ticks);
        if let Some(fuel) = self.limits.fuel {
            if ticks > fuel {
                return Err(Error::resource("fuel", ticks, fuel, "out of fuel"));
            }
        }
        self.check_interrupt()?;
        self.check_memory()
    }

    /// The fuel used so far: procedure calls, and the steps of long builtins counted
    /// by [`Interp::poll`].
    pub fn fuel_used(&self) -> u64 {
        self.ticks.get()
    }

    /// [`Interp::poll`] on every [`POLL_EVERY`](crate::value::bounds::POLL_EVERY)-th step of a
    /// loop inside a builtin (`step` counts from 0): how such loops meet the limits.
    #[inline]
    pub fn poll_at(&self, step: usize) -> Result<()> {
        if (step as u64 + 1).is_multiple_of(crate::value::bounds::POLL_EVERY) {
            return self.poll();
        }
        Ok(())
    }

    /// [`Interp::poll`] before a builtin copies `items` values in one step, when they
    /// are [`POLL_EVERY`](crate::value::bounds::POLL_EVERY) or more: a loop of such copies
    /// (doubling a list) meets the limits at every large step.
    #[inline]
    pub fn poll_before(&self, items: usize) -> Result<()> {
        if items as u64 >= crate::value::bounds::POLL_EVERY {
            return self.poll();
        }
        Ok(())
    }

    /// Fails with `RESOURCE_EXHAUSTION` when the process uses more heap than
    /// `Limits::max_memory`, or a child evaluation more than its own budget.
    pub fn check_memory(&self) -> Result<()> {
        self.check_child_memory()?;
        if let (Some(limit), Some(used)) = (self.limits.max_memory, crate::memory::in_use()) {
            if used > limit {
                return Err(Error::resource(
                    "memory",
                    used,
                    limit,
                    format!(
                        "the program uses more than {} MiB of memory (--max-memory)",
                        limit >> 20
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The memory budget of a child evaluation: what this thread allocated since it
    /// started, against its limit.
    fn check_child_memory(&self) -> Result<()> {
        let (Some(budget), Some(now)) = (self.state.memory.get(), crate::memory::thread_net())
        else {
            return Ok(());
        };
        let used = now.saturating_sub(budget.base).max(0) as u64;
        if used > budget.limit {
            return Err(Error::resource(
                "memory",
                used,
                budget.limit,
                format!(
                    "the evaluation allocated more than {} KiB of memory",
                    budget.limit >> 10
                ),
            ));
        }
        Ok(())
    }

    /// Runs `body` as a child evaluation allowed `limit` bytes of memory from now
    /// (within any budget already in force).
    pub fn within_memory<T>(&self, limit: u64, body: impl FnOnce() -> Result<T>) -> Result<T> {
        let Some(base) = crate::memory::thread_net() else {
            return body();
        };
        let outer = self.state.memory.get();
        let left = outer.map_or(u64::MAX, |o| {
            o.limit
                .saturating_sub(base.saturating_sub(o.base).max(0) as u64)
        });
        let budget = super::state::MemoryBudget {
            base,
            limit: limit.min(left),
        };
        self.state.memory.set(Some(budget));
        let result = body();
        self.state.memory.set(outer);
        result
    }

    /// Charges `steps` a child evaluation used against this evaluation's fuel.
    pub fn spend_fuel(&self, steps: u64) -> Result<()> {
        let ticks = self.ticks.get().saturating_add(steps);
        self.ticks.set(ticks);
        match self.limits.fuel {
            Some(fuel) if ticks > fuel => Err(Error::resource("fuel", ticks, fuel, "out of fuel")),
            _ => Ok(()),
        }
    }

    /// The fuel left (`None`: unlimited).
    pub fn fuel_left(&self) -> Option<u64> {
        self.limits
            .fuel
            .map(|fuel| fuel.saturating_sub(self.ticks.get()))
    }

    /// Starts counting fuel afresh: each run in a child that keeps its definitions (a
    /// code agent's step) gets the whole of its fuel.
    pub fn refuel(&self) {
        self.ticks.set(0);
    }

    /// When the time limit, or the `:timeout` of the body task in progress, runs out:
    /// whichever comes first.
    pub fn deadline(&self) -> Option<Instant> {
        let program = self
            .limits
            .timeout
            .and_then(|limit| self.started.checked_add(limit));
        let task = self.state.task_deadline.get().map(|task| task.at);
        match (program, task) {
            (Some(program), Some(task)) => Some(program.min(task)),
            (program, task) => program.or(task),
        }
    }

    /// Runs `body` (a body task's) with `timeout`, if it has one, as a deadline that
    /// [`Interp::check_interrupt`] enforces like the program's time limit; an earlier
    /// deadline of an enclosing task still holds.
    pub fn within_timeout<T>(
        &self,
        timeout: Option<Duration>,
        body: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let Some(timeout) = timeout else {
            return body();
        };
        let outer = self.state.task_deadline.get();
        let at = Instant::now().checked_add(timeout);
        let inner = at.map(|at| super::state::TaskDeadline { at, timeout });
        let earliest = match (outer, inner) {
            (Some(outer), Some(inner)) if outer.at <= inner.at => Some(outer),
            (outer, inner) => inner.or(outer),
        };
        self.state.task_deadline.set(earliest);
        let result = body();
        self.state.task_deadline.set(outer);
        result
    }

    /// Fails with `execution_halted` if Ctrl-C was pressed or the time limit passed.
    pub fn check_interrupt(&self) -> Result<()> {
        if self.interrupt.load(Ordering::Relaxed) {
            return Err(Error::task_failure(Reason::ExecutionHalted, "interrupted"));
        }
        if let Some(limit) = self.limits.timeout {
            if self.started.elapsed() > limit {
                return Err(Error::task_failure(
                    Reason::ExecutionTimeout,
                    format!("the program ran longer than {:.3}s", limit.as_secs_f64()),
                ));
            }
        }
        if let Some(task) = self.state.task_deadline.get() {
            if Instant::now() >= task.at {
                return Err(Error::task_failure(
                    Reason::ExecutionTimeout,
                    format!(
                        "the task ran longer than its :timeout of {:.3}s",
                        task.timeout.as_secs_f64()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// True while an interrupt is pending: `try` does not catch it.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    pub fn clear_interrupt(&self) {
        self.interrupt.store(false, Ordering::Relaxed);
    }
}
