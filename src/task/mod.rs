//! Tasks: definitions, the TaskLibrary, calls and results (SPEC §6). See `docs/TASKS.md`.

mod answer;
pub(crate) mod atomic;
mod attachments;
mod audit;
mod batch;
pub mod blocking;
pub mod builtins;
pub(crate) mod call;
mod coerce;
mod command;
mod cond_output;
pub mod conversation;
mod definition;
mod deftask;
pub mod forms;
pub mod human;
pub mod journal;
pub mod lenient;
mod library;
mod loops;
pub mod memory;
pub mod metrics;
pub mod observe;
mod options;
pub mod pmap;
pub mod result;
mod schema;
mod scopes;
pub mod script;
mod sequential;
mod session;
pub mod sink;
pub mod state;
pub mod table;
pub(crate) mod template;
pub mod tools;
mod trace;

pub use call::call;
pub use definition::{lossy_json, Action, InheritContext, Param, Task, TaskKind};
pub use forms::LAYER;
pub use library::{Definition, Registered};
pub use schema::Schema;
pub use session::{send, ProviderChoice, Session};
pub use template::Template;

/// The provider session in force, shared between the program and the `pmap` items that
/// have not changed it.
pub type SessionHandle = Rc<RefCell<Session>>;

use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::provider::rate::RateLimit;
use crate::provider::{ModelOptions, Provider, ProviderSettings};
use crate::value::Value;
use library::TaskLibrary;
use metrics::{Metrics, TurnBudget};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// A home's TaskLibrary while another home's is in place (see `crate::eval::home`).
#[derive(Default)]
pub struct ParkedTasks(TaskLibrary);

/// The task runtime of one interpreter: the TaskLibrary. What belongs to one evaluation
/// (provider session, task depth, `:max-turns` budgets) is in `Interp::state`.
#[derive(Default)]
pub struct Runtime {
    library: RefCell<TaskLibrary>,
    /// `--model` and `-o NAME VALUE`: the least specific settings.
    flags: RefCell<ProviderSettings>,
    /// `--rate-limit RPM`, for sessions without a `:rate-limit` of their own.
    flag_rate: RefCell<Option<Arc<RateLimit>>>,
    /// The run log, cost, usage, budgets and cache (their per-evaluation part is
    /// `EvalState::observe`).
    pub observer: observe::Observer,
    /// The journal of the run being resumed (`tasklisp resume`).
    pub journal: journal::Journal,
    /// The memory system's indexes, kept while their files are unchanged.
    memory: RefCell<memory::Indexes>,
    /// `tasklisp run --batch`: every `pmap` gathers its model calls into batch jobs.
    batch_default: std::cell::Cell<bool>,
    /// `tasklisp run --stream`, `tasklisp prompt`: where top-level answers are shown as
    /// they arrive.
    streaming: std::cell::Cell<Option<sink::StreamTo>>,
    /// A child evaluation's (`eval-sandboxed`, a code agent's steps): its code is not the
    /// user's, so it may not ask a person, and each task it calls is a tool call that
    /// waits for approval as the tool loop's do (see `human`).
    sandboxed: std::cell::Cell<bool>,
}

impl Runtime {
    /// Ranks files for `get-context` and `:context-query`, if the program may read them.
    pub fn get_context(
        &self,
        query: &memory::Query,
        capabilities: &crate::capabilities::Capabilities,
    ) -> Result<Vec<memory::Match>> {
        for path in query.paths() {
            capabilities.check_path(&path, crate::capabilities::Access::Read)?;
        }
        self.memory.borrow_mut().search(query)
    }

    /// Exchanges the TaskLibrary in place with `parked`'s (see `crate::eval::home`).
    pub fn exchange_library(&self, parked: &mut ParkedTasks) {
        std::mem::swap(&mut *self.library.borrow_mut(), &mut parked.0);
    }

    pub fn task_value(&self, name: &str) -> Option<Value> {
        self.get(name).map(Value::Task)
    }

    pub fn get(&self, name: &str) -> Option<Rc<Task>> {
        self.library.borrow().get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.library.borrow().names()
    }

    /// The tasks of a type and subtype, in registration order.
    pub fn by_type(&self, kind: Option<TaskKind>, subtype: Option<&str>) -> Vec<Rc<Task>> {
        self.library.borrow().by_type(kind, subtype)
    }

    pub fn register_alias(&self, name: &str, target: &str) -> Result<Registered> {
        self.library.borrow_mut().register_alias(name, target)
    }

    pub fn register(&self, task: Rc<Task>) -> Result<Registered> {
        self.library.borrow_mut().register(task)
    }

    /// Registers the task of a `deftask` form (see `TaskLibrary::define`).
    pub fn define(&self, task: Rc<Task>, definition: Definition) -> Result<Registered> {
        self.library.borrow_mut().define(task, definition)
    }

    /// `taskLibrary` as seed 004's nested dict `{type {subtype {name task}}}`.
    pub fn library_entries(&self) -> crate::value::Entries {
        self.library.borrow().nested()
    }

    /// `taskLibrary.KEY`: the tasks of a type, or else the task of that name.
    pub fn library_field(&self, key: &str) -> Value {
        self.library.borrow().field(key)
    }

    /// Whether a `pmap` without `:batch` gathers its model calls (`run --batch`).
    pub fn batch_default(&self) -> bool {
        self.batch_default.get()
    }

    pub fn set_batch_default(&self, batch: bool) {
        self.batch_default.set(batch);
    }

    /// Where answers of top-level atomic tasks are streamed, if anywhere.
    pub fn streaming(&self) -> Option<sink::StreamTo> {
        self.streaming.get()
    }

    pub fn set_streaming(&self, to: Option<sink::StreamTo>) {
        self.streaming.set(to);
    }

    /// What a child evaluation's runtime takes from its caller's (`eval-sandboxed`): the
    /// flags' model settings and rate, the run log and the cache setting, batching,
    /// `--no-input` and `--approve-tools`. Its library starts empty; it is sandboxed.
    pub fn inherit(&self, parent: &Runtime) {
        *self.flags.borrow_mut() = parent.flags.borrow().clone();
        *self.flag_rate.borrow_mut() = parent.flag_rate.borrow().clone();
        self.observer.set_log(parent.observer.log());
        self.observer.inherit_cache_setting(&parent.observer);
        self.batch_default.set(parent.batch_default.get());
        self.journal.set_no_input(parent.journal.no_input());
        self.journal
            .set_approve_tools(parent.journal.approve_tools());
        self.sandboxed.set(true);
    }

    /// Whether this is a child evaluation's runtime, running code that is not the user's.
    pub fn sandboxed(&self) -> bool {
        self.sandboxed.get()
    }

    /// At the REPL a redefinition replaces the old task (with a note) instead of failing.
    pub fn set_replace_on_redefine(&self, replace: bool) {
        self.library.borrow_mut().replace_on_redefine = replace;
    }

    pub fn replaces_on_redefine(&self) -> bool {
        self.library.borrow().replace_on_redefine
    }
}

/// The provider session and task-call bookkeeping of the running evaluation.
impl Interp {
    /// Starts a new provider session with `provider`, returning the previous session.
    pub fn set_provider(&self, provider: ProviderChoice, metrics: Metrics) -> SessionHandle {
        self.swap_session(Rc::new(RefCell::new(Session::new(provider, metrics))))
    }

    /// Installs a native provider (what `--provider` configures) in a new session.
    pub fn set_native_provider(&self, provider: Arc<dyn Provider>) {
        self.set_provider(ProviderChoice::Native(provider), Metrics::default());
    }

    /// Makes `session` current and returns the one it replaces.
    pub fn swap_session(&self, session: SessionHandle) -> SessionHandle {
        self.state.task.session.replace(session)
    }

    pub fn current_session(&self) -> SessionHandle {
        self.state.task.session.borrow().clone()
    }

    pub fn metrics(&self) -> Metrics {
        self.state.task.session.borrow().borrow().metrics.clone()
    }

    /// Checks the limits before a turn; returns the provider to send it to and the
    /// model options in force above the task's (scope over provider over flag).
    #[allow(clippy::type_complexity)]
    fn check_turn(
        &self,
        input_tokens: u64,
    ) -> Result<(ProviderChoice, ModelOptions, Option<Arc<RateLimit>>)> {
        let handle = self.state.task.session.borrow();
        let session = handle.borrow();
        session
            .metrics
            .check_turn(input_tokens, &self.state.task.turn_budgets.borrow())?;
        let options = session
            .scope_options
            .over(&session.provider_options)
            .over(&self.tasks.flags.borrow().options);
        let rate = session
            .rate
            .clone()
            .or_else(|| self.tasks.flag_rate.borrow().clone());
        Ok((session.provider.clone(), options, rate))
    }

    /// The model `--model` names, if any.
    fn flag_model(&self) -> Option<String> {
        self.tasks.flags.borrow().model.clone()
    }

    /// The base system prompt of the provider in force.
    pub fn base_system(&self) -> Option<String> {
        self.state
            .task
            .session
            .borrow()
            .borrow()
            .base_system
            .clone()
    }

    /// Sets what `set-provider!` gives along with the provider: its options and base
    /// system prompt.
    pub fn set_provider_defaults(
        &self,
        options: ModelOptions,
        system: Option<String>,
        rate: Option<RateLimit>,
    ) {
        let handle = self.state.task.session.borrow();
        let mut session = handle.borrow_mut();
        session.provider_options = options;
        session.base_system = system;
        session.rate = rate.map(Arc::new);
    }

    /// The options of the enclosing `with-provider` blocks.
    pub fn scope_options(&self) -> ModelOptions {
        self.state
            .task
            .session
            .borrow()
            .borrow()
            .scope_options
            .clone()
    }

    pub fn set_scope_options(&self, options: ModelOptions) {
        self.state.task.session.borrow().borrow_mut().scope_options = options;
    }

    /// Counts a finished turn in the session and in every `:max-turns` budget in force.
    fn record_turn(&self, tokens: u64) -> Result<()> {
        for budget in self.state.task.turn_budgets.borrow().iter() {
            budget.count_turn();
        }
        self.state
            .task
            .session
            .borrow()
            .borrow_mut()
            .metrics
            .record_turn(tokens)
    }

    /// Counts a task call in progress against the nesting limit (and its `:max-turns`)
    /// until the guard is dropped.
    fn enter_call(&self, task: &Task) -> Result<CallGuard<'_>> {
        let max_depth = self.limits.max_task_depth;
        let depth = self.state.task.depth.get() + 1;
        if depth > max_depth {
            return Err(Error::resource(
                "task_depth",
                depth as u64,
                max_depth as u64,
                format!(
                    "task calls nested deeper than {max_depth} (at `{}`)",
                    task.name
                ),
            ));
        }
        self.state.task.depth.set(depth);
        let budget = task.max_turns.map(|limit| {
            let budget = TurnBudget::new(&task.name, limit);
            self.state
                .task
                .turn_budgets
                .borrow_mut()
                .push(budget.clone());
            budget
        });
        Ok(CallGuard {
            interp: self,
            budget,
        })
    }
}

struct CallGuard<'i> {
    interp: &'i Interp,
    /// The call's `:max-turns` budget.
    budget: Option<TurnBudget>,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        let state = &self.interp.state.task;
        state.depth.set(state.depth.get().saturating_sub(1));
        if let Some(budget) = &self.budget {
            state
                .turn_budgets
                .borrow_mut()
                .retain(|b| !b.same_as(budget));
        }
    }
}

impl Interp {
    /// Sets the provider the command line and environment ask for: when they name none,
    /// the one whose API key is set, else one whose every call fails saying how to
    /// configure a provider.
    pub fn configure_provider(&self, settings: ProviderSettings) -> Result<()> {
        *self.tasks.flags.borrow_mut() = settings.clone();
        *self.tasks.flag_rate.borrow_mut() = settings
            .requests_per_minute
            .map(|rpm| Arc::new(RateLimit::new(Some(rpm), None)));
        let first = ProviderChoice::Native(crate::provider::from_settings(&settings)?);
        if settings.fallbacks.is_empty() {
            self.set_provider(first, Metrics::default());
            return Ok(());
        }
        // A fallback is configured from the environment, with `--model` when given.
        let options = match &settings.model {
            Some(model) => serde_json::json!({"model": model}),
            None => serde_json::json!({}),
        };
        let mut chain = vec![first];
        for name in &settings.fallbacks {
            let options = if name == "echo" {
                serde_json::json!({})
            } else {
                options.clone()
            };
            chain.push(ProviderChoice::Native(crate::provider::from_language(
                name,
                &options,
                &crate::capabilities::Capabilities::all(),
            )?));
        }
        self.set_provider(ProviderChoice::Fallback(chain), Metrics::default());
        Ok(())
    }
}
