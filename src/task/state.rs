//! The task layer's part of one thread of evaluation: what `EvalState` holds for it as
//! one field, switched with the rest when a `pmap` fiber resumes.

use super::journal;
use super::metrics::TurnBudget;
use super::observe;
use super::SessionHandle;
use std::cell::{Cell, RefCell};

/// One evaluation's task state. [`TaskState::swap`] and [`TaskState::child_of`]
/// destructure every field, so a field added here and not switched does not compile.
#[derive(Default)]
pub struct TaskState {
    /// Task calls in progress (against `Limits::max_task_depth`).
    pub depth: Cell<usize>,
    /// The provider session and scope in force (`set-provider!`, `with-provider`).
    pub session: RefCell<SessionHandle>,
    /// The `:max-turns` budgets of the task calls in progress, outermost first. An item
    /// starts with its parent's (their counters are shared, so its turns count against
    /// the tasks that started the `pmap`), and budgets it enters stay its own.
    pub turn_budgets: RefCell<Vec<TurnBudget>>,
    /// The run log's current task call, the `with-budget` budgets and `with-cache`. An
    /// item starts with its parent's: its calls are children of the task that started
    /// the `pmap`, and it spends from the same budgets.
    pub observe: RefCell<observe::Scope>,
    /// Where this evaluation is in the run's journal (a `pmap` item sets its own).
    pub journal: RefCell<journal::Cursor>,
}

impl TaskState {
    /// The state a new `pmap` item starts with: a copy of `parent`'s (the same provider
    /// session and budgets).
    pub fn child_of(parent: &TaskState) -> TaskState {
        let TaskState {
            depth,
            session,
            turn_budgets,
            observe,
            journal,
        } = parent;
        TaskState {
            depth: Cell::new(depth.get()),
            session: RefCell::new(session.borrow().clone()),
            turn_budgets: RefCell::new(turn_budgets.borrow().clone()),
            observe: RefCell::new(observe.borrow().clone()),
            journal: RefCell::new(journal.borrow().clone()),
        }
    }

    /// Exchanges every field with `other`'s.
    pub fn swap(&self, other: &TaskState) {
        let TaskState {
            depth,
            session,
            turn_budgets,
            observe,
            journal,
        } = self;
        depth.swap(&other.depth);
        session.swap(&other.session);
        turn_budgets.swap(&other.turn_budgets);
        observe.swap(&other.observe);
        journal.swap(&other.journal);
    }
}
