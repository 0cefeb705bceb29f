//! The state of one thread of evaluation — the program's, or one `pmap` item's.
//!
//! Like Lua's `lua_State` or a Janet fiber, everything that belongs to one evaluation
//! lives in one record, and switching evaluations (a `pmap` fiber resuming) swaps the
//! record as a unit: [`EvalState::swap`] destructures every field, so a field added here
//! and not swapped does not compile. The task layer's part is one field, `task`, which
//! switches its own fields the same way. Shared state (globals, the TaskLibrary, the
//! interrupt flag) stays on `Interp`.

use crate::task::state::TaskState;
use std::cell::{Cell, RefCell};
use std::path::PathBuf;

/// One evaluation's state. Fields are cells so the evaluator reads them through
/// `&Interp` without a borrow on its hot path.
#[derive(Default)]
pub struct EvalState {
    /// Procedure frames in progress (against `Limits::max_depth`).
    pub depth: Cell<usize>,
    /// The address below which the Rust stack counts as exhausted.
    pub stack_floor: Cell<usize>,
    /// The files being loaded (run, imported, `load`ed), innermost last: relative paths
    /// resolve against the innermost, and tasks record it as their origin.
    pub loading: RefCell<Vec<PathBuf>>,
    /// The earliest deadline of the scopes in progress that set one (a body task's
    /// `:timeout`): the evaluation stops there as the program's time limit stops it.
    pub task_deadline: Cell<Option<TaskDeadline>>,
    /// The memory a child evaluation (`eval-sandboxed`) may allocate on this thread,
    /// counted from when it started: `None` outside one.
    pub memory: Cell<Option<MemoryBudget>>,
    /// The task layer's part: task depth, provider session, turn budgets, run-log scope.
    pub task: TaskState,
}

/// A child evaluation's memory: this thread's net allocation when it started
/// (`crate::memory::thread_net`) and the bytes it may add to that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    pub base: i64,
    pub limit: u64,
}

/// When a body task's `:timeout` runs out, and what it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskDeadline {
    pub at: std::time::Instant,
    pub timeout: std::time::Duration,
}

impl EvalState {
    /// The state a new `pmap` item starts with: a copy of `parent`'s (the same provider
    /// session, budgets and files being loaded) on a stack whose floor is `stack_floor`.
    pub fn child_of(parent: &EvalState, stack_floor: usize) -> EvalState {
        let EvalState {
            depth,
            stack_floor: _,
            loading,
            task_deadline,
            memory,
            task,
        } = parent;
        EvalState {
            depth: Cell::new(depth.get()),
            stack_floor: Cell::new(stack_floor),
            loading: RefCell::new(loading.borrow().clone()),
            task_deadline: Cell::new(task_deadline.get()),
            memory: Cell::new(memory.get()),
            task: TaskState::child_of(task),
        }
    }

    /// Exchanges every field with `other`'s: how a fiber switches in and out.
    pub fn swap(&self, other: &EvalState) {
        let EvalState {
            depth,
            stack_floor,
            loading,
            task_deadline,
            memory,
            task,
        } = self;
        depth.swap(&other.depth);
        stack_floor.swap(&other.stack_floor);
        loading.swap(&other.loading);
        task_deadline.swap(&other.task_deadline);
        memory.swap(&other.memory);
        task.swap(&other.task);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::metrics::TurnBudget;
    use std::rc::Rc;

    fn sample(n: usize) -> EvalState {
        let state = EvalState::default();
        state.depth.set(n);
        state.stack_floor.set(n + 1);
        state.task.depth.set(n + 2);
        state
            .loading
            .borrow_mut()
            .push(PathBuf::from(format!("f{n}")));
        state
            .task
            .turn_budgets
            .borrow_mut()
            .push(TurnBudget::new("t", n as u64));
        state
    }

    fn fields(state: &EvalState) -> (usize, usize, usize, Vec<PathBuf>, Vec<u64>) {
        (
            state.depth.get(),
            state.stack_floor.get(),
            state.task.depth.get(),
            state.loading.borrow().clone(),
            state
                .task
                .turn_budgets
                .borrow()
                .iter()
                .map(|b| b.limit)
                .collect(),
        )
    }

    #[test]
    fn swap_exchanges_every_field() {
        let (a, b) = (sample(1), sample(10));
        let session_a = a.task.session.borrow().clone();
        let (before_a, before_b) = (fields(&a), fields(&b));
        a.swap(&b);
        assert_eq!(fields(&a), before_b);
        assert_eq!(fields(&b), before_a);
        assert!(Rc::ptr_eq(&b.task.session.borrow(), &session_a));
    }

    #[test]
    fn a_child_shares_its_parents_session_and_budget_counters() {
        let parent = sample(3);
        let child = EvalState::child_of(&parent, 99);
        assert_eq!(child.stack_floor.get(), 99);
        assert_eq!(child.depth.get(), 3);
        assert!(Rc::ptr_eq(
            &child.task.session.borrow(),
            &parent.task.session.borrow()
        ));
        child.task.turn_budgets.borrow()[0].count_turn();
        assert_eq!(parent.task.turn_budgets.borrow()[0].used(), 1);
        child
            .task
            .turn_budgets
            .borrow_mut()
            .push(TurnBudget::new("inner", 1));
        assert_eq!(parent.task.turn_budgets.borrow().len(), 1);
    }
}
