//! The state of one thread of evaluation — the program's, or one `pmap` item's.
//!
//! Like Lua's `lua_State` or a Janet fiber, everything that belongs to one evaluation
//! lives in one record, and switching evaluations (a `pmap` fiber resuming) swaps the
//! record as a unit: [`EvalState::swap`] destructures every field, so a field added here
//! and not swapped does not compile. Shared state (globals, the TaskLibrary, the
//! interrupt flag) stays on `Interp`.

use crate::task::metrics::TurnBudget;
use crate::task::observe;
use crate::task::SessionHandle;
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
    /// Task calls in progress (against `Limits::max_task_depth`).
    pub task_depth: Cell<usize>,
    /// The provider session and scope in force (`set-provider!`, `with-provider`).
    pub session: RefCell<SessionHandle>,
    /// The `:max-turns` budgets of the task calls in progress, outermost first. An item
    /// starts with its parent's (their counters are shared, so its turns count against
    /// the tasks that started the `pmap`), and budgets it enters stay its own.
    pub turn_budgets: RefCell<Vec<TurnBudget>>,
    /// The files being loaded (run, imported, `load`ed), innermost last: relative paths
    /// resolve against the innermost, and tasks record it as their origin.
    pub loading: RefCell<Vec<PathBuf>>,
    /// The run log's current task call, the `with-budget` budgets and `with-cache`. An
    /// item starts with its parent's: its calls are children of the task that started
    /// the `pmap`, and it spends from the same budgets.
    pub observe: RefCell<observe::Scope>,
    /// The `:timeout` of the innermost body task in progress that has one (the earliest
    /// deadline wins): the evaluation stops there as the program's time limit stops it.
    pub task_deadline: Cell<Option<TaskDeadline>>,
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
            task_depth,
            session,
            turn_budgets,
            loading,
            observe,
            task_deadline,
        } = parent;
        EvalState {
            depth: Cell::new(depth.get()),
            stack_floor: Cell::new(stack_floor),
            task_depth: Cell::new(task_depth.get()),
            session: RefCell::new(session.borrow().clone()),
            turn_budgets: RefCell::new(turn_budgets.borrow().clone()),
            loading: RefCell::new(loading.borrow().clone()),
            observe: RefCell::new(observe.borrow().clone()),
            task_deadline: Cell::new(task_deadline.get()),
        }
    }

    /// Exchanges every field with `other`'s: how a fiber switches in and out.
    pub fn swap(&self, other: &EvalState) {
        let EvalState {
            depth,
            stack_floor,
            task_depth,
            session,
            turn_budgets,
            loading,
            observe,
            task_deadline,
        } = self;
        depth.swap(&other.depth);
        stack_floor.swap(&other.stack_floor);
        task_depth.swap(&other.task_depth);
        session.swap(&other.session);
        turn_budgets.swap(&other.turn_budgets);
        loading.swap(&other.loading);
        observe.swap(&other.observe);
        task_deadline.swap(&other.task_deadline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn sample(n: usize) -> EvalState {
        let state = EvalState::default();
        state.depth.set(n);
        state.stack_floor.set(n + 1);
        state.task_depth.set(n + 2);
        state
            .loading
            .borrow_mut()
            .push(PathBuf::from(format!("f{n}")));
        state
            .turn_budgets
            .borrow_mut()
            .push(TurnBudget::new("t", n as u64));
        state
    }

    fn fields(state: &EvalState) -> (usize, usize, usize, Vec<PathBuf>, Vec<u64>) {
        (
            state.depth.get(),
            state.stack_floor.get(),
            state.task_depth.get(),
            state.loading.borrow().clone(),
            state
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
        let session_a = a.session.borrow().clone();
        let (before_a, before_b) = (fields(&a), fields(&b));
        a.swap(&b);
        assert_eq!(fields(&a), before_b);
        assert_eq!(fields(&b), before_a);
        assert!(Rc::ptr_eq(&b.session.borrow(), &session_a));
    }

    #[test]
    fn a_child_shares_its_parents_session_and_budget_counters() {
        let parent = sample(3);
        let child = EvalState::child_of(&parent, 99);
        assert_eq!(child.stack_floor.get(), 99);
        assert_eq!(child.depth.get(), 3);
        assert!(Rc::ptr_eq(
            &child.session.borrow(),
            &parent.session.borrow()
        ));
        child.turn_budgets.borrow()[0].count_turn();
        assert_eq!(parent.turn_budgets.borrow()[0].used(), 1);
        child
            .turn_budgets
            .borrow_mut()
            .push(TurnBudget::new("inner", 1));
        assert_eq!(parent.turn_budgets.borrow().len(), 1);
    }
}
