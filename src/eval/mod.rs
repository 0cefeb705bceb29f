//! The evaluator: the interpreter state and the loop that runs analysed code.
//!
//! `eval` is a trampoline: `eval_node` runs a node, looping in place through the tail
//! positions of `if`, `begin`, `let`, `case`…; a call to a closure in tail position is
//! returned as `Tail::Call` instead of recursing, and `run_closure` loops on it. So tail
//! calls never grow the Rust stack, and only non-tail procedure calls count against the
//! frame limit.

pub mod ast;
pub mod compile;
mod forms;
pub mod layer;
pub mod path;
pub mod quote;
pub mod state;

pub use ast::{Lambda, Node};
pub use compile::Compiler;
pub use path::{access_path, PathError};

use crate::builtins::{self, Builtin};
use crate::env::{self, Env, Frame, Slots};
use crate::error::{Error, ErrorKind, Reason, Result};
use crate::reader::{self, Syntax};
use crate::source::Origin;
use crate::symbol::Sym;
use crate::task::{self, Runtime};
use crate::value::{self, Value};
use ast::LetKind;
use smallvec::SmallVec;
pub use state::EvalState;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A procedure made by `lambda`: its code and the environment it was made in.
pub struct Closure {
    pub lambda: Rc<Lambda>,
    pub env: Env,
}

impl Closure {
    pub fn name(&self) -> Option<Sym> {
        self.lambda.name
    }
}

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
    /// allocator is installed, see [`crate::memory`].
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
            max_file_bytes: crate::bounds::DEFAULT_MAX_FILE_BYTES,
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
const STACK_MARGIN: usize = 256 << 10;

/// How an evaluation ended when its last step was a call in tail position.
enum Tail {
    Value(Value),
    /// A closure to call with these slots (arity checked, rest list and self slot made).
    Call(Rc<Closure>, Slots),
}

/// The state of one interpreter: globals, macros, limits, output, and the task runtime.
pub struct Interp {
    globals: RefCell<Vec<Value>>,
    macros: RefCell<HashMap<Sym, Value>>,
    pub limits: Limits,
    /// The running evaluation's state (the program's, or the `pmap` item's on its fiber).
    pub state: EvalState,
    ticks: Cell<u64>,
    started: Instant,
    interrupt: Arc<AtomicBool>,
    out: RefCell<Box<dyn Write>>,
    gensyms: Cell<u64>,
    pub tasks: Runtime,
    /// The special forms and builtins of the layers this interpreter was given.
    pub layers: &'static layer::Registry,
    /// The tests `deftest` defined and the checks of the one running.
    pub tests: crate::testing::Tests,
    /// Frames whose last reference was a finished call, kept to be reused by the next
    /// call instead of freeing and allocating one per call.
    frame_pool: RefCell<Vec<Rc<Frame>>>,
    /// Whether any global that held a builtin was ever redefined; until one is, every
    /// `Prim` call is known to still name its builtin.
    builtin_rebound: Cell<bool>,
}

/// What an interpreter starts with: the builtins and what the prelude defined.
#[derive(Clone)]
struct Start {
    globals: Vec<Value>,
    macros: HashMap<Sym, Value>,
    gensyms: u64,
    builtin_rebound: bool,
}

thread_local! {
    /// The start the first interpreter of the thread made (see [`Interp::start`]).
    static START: RefCell<Option<Start>> = const { RefCell::new(None) };
}

/// How many spare frames the pool keeps.
const FRAME_POOL_SIZE: usize = 64;

impl Interp {
    /// An interpreter with the builtins and the prelude, printing to stdout.
    pub fn new(limits: Limits) -> Result<Interp> {
        let stdout = crate::progress::BesideProgress(std::io::stdout());
        Interp::with_output(limits, Box::new(std::io::BufWriter::new(stdout)))
    }

    pub fn with_output(limits: Limits, out: Box<dyn Write>) -> Result<Interp> {
        let here = 0u8;
        let base = &here as *const u8 as usize;
        let interp = Interp {
            globals: RefCell::new(Vec::new()),
            macros: RefCell::new(HashMap::new()),
            state: EvalState::default(),
            ticks: Cell::new(0),
            started: Instant::now(),
            limits,
            interrupt: Arc::new(AtomicBool::new(false)),
            out: RefCell::new(out),
            gensyms: Cell::new(0),
            tasks: Runtime::default(),
            layers: layer::Registry::standard(),
            tests: crate::testing::Tests::default(),
            frame_pool: RefCell::new(Vec::with_capacity(FRAME_POOL_SIZE)),
            builtin_rebound: Cell::new(false),
        };
        interp
            .state
            .stack_floor
            .set(base.saturating_sub(interp.limits.stack_size.saturating_sub(STACK_MARGIN)));
        interp.start()?;
        Ok(interp)
    }

    /// Installs the builtins and runs the prelude, or, after the first interpreter of
    /// the thread did, copies the globals and macros they made: every interpreter starts
    /// from the same definitions, and copying them costs a tenth of making them.
    fn start(&self) -> Result<()> {
        if let Some(start) = START.with(|s| s.borrow().clone()) {
            *self.globals.borrow_mut() = start.globals;
            *self.macros.borrow_mut() = start.macros;
            self.gensyms.set(start.gensyms);
            self.builtin_rebound.set(start.builtin_rebound);
            return Ok(());
        }
        builtins::install(self);
        self.define_global(Sym::new("taskLibrary"), Value::Library);
        self.define_global(Sym::new("*args*"), Value::empty_list());
        crate::stdlib::load(self)?;
        let start = Start {
            globals: self.globals.borrow().clone(),
            macros: self.macros.borrow().clone(),
            gensyms: self.gensyms.get(),
            builtin_rebound: self.builtin_rebound.get(),
        };
        START.with(|s| *s.borrow_mut() = Some(start));
        Ok(())
    }

    /// The flag that interrupts evaluation (Ctrl-C); share it with a signal handler.
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    pub fn out(&self) -> RefMut<'_, Box<dyn Write>> {
        self.out.borrow_mut()
    }

    pub fn flush(&self) {
        let _ = self.out.borrow_mut().flush();
    }

    /// A fresh symbol no program can write (it contains a space).
    pub fn gensym(&self, stem: &str) -> Sym {
        let n = self.gensyms.get() + 1;
        self.gensyms.set(n);
        Sym::new(&format!("{stem} {n}"))
    }

    // ---- globals and macros ---------------------------------------------------------

    pub fn define_global(&self, name: Sym, value: Value) {
        let mut globals = self.globals.borrow_mut();
        let i = name.index();
        if globals.len() <= i {
            globals.resize(Sym::count().max(i + 1), Value::Undefined);
        }
        // Always there: the table was just resized to hold it.
        if let Some(global) = globals.get_mut(i) {
            if matches!(global, Value::Builtin(_)) {
                self.builtin_rebound.set(true);
            }
            *global = value;
        }
    }

    /// The global binding of `name`, if it has one.
    #[inline(always)]
    pub fn global(&self, name: Sym) -> Option<Value> {
        match self.globals.borrow().get(name.index()) {
            None | Some(Value::Undefined) => None,
            Some(v) => Some(v.clone()),
        }
    }

    /// Every bound global name (for completion and `:env`).
    pub fn global_names(&self) -> Vec<Sym> {
        let globals = self.globals.borrow();
        globals
            .iter()
            .enumerate()
            .filter(|(_, value)| !matches!(value, Value::Undefined))
            .map(|(i, _)| i)
            // Names with a space are the interpreter's own bookkeeping (gensyms, modules).
            .filter(|&i| crate::symbol::name_at(i).is_some_and(|n| !n.contains(' ')))
            .filter_map(|i| {
                let count = Sym::count();
                (i < count).then(|| symbol_at(i))
            })
            .flatten()
            .collect()
    }

    pub fn macro_named(&self, name: Sym) -> Option<Value> {
        self.macros.borrow().get(&name).cloned()
    }

    pub fn macro_names(&self) -> Vec<Sym> {
        self.macros.borrow().keys().copied().collect()
    }

    /// Looks a free name up: the frames of `env`, the globals, then the TaskLibrary.
    pub fn lookup(&self, env: &Env, name: Sym) -> Option<Value> {
        env::lookup_by_name(env, name)
            .or_else(|| self.global(name))
            .or_else(|| self.tasks.task_value(name.name()))
    }

    #[inline]
    fn global_or_task(&self, name: Sym, span: crate::source::Span) -> Result<Value> {
        if let Some(v) = self.globals.borrow().get(name.index()) {
            if !matches!(v, Value::Undefined) {
                return Ok(v.clone());
            }
        }
        self.task_or_unbound(name, span)
    }

    /// A name no global binds: the task of that name. Out of line, so that the global
    /// read above stays small enough to inline into every global call.
    #[cold]
    #[inline(never)]
    fn task_or_unbound(&self, name: Sym, span: crate::source::Span) -> Result<Value> {
        self.tasks
            .task_value(name.name())
            .ok_or_else(|| self.unbound(name, span))
    }

    /// The error for a name bound nowhere, with the nearest bound name as a hint.
    #[cold]
    pub fn unbound(&self, name: Sym, span: crate::source::Span) -> Error {
        let globals = self.global_names();
        let tasks = self.tasks.names();
        let in_scope = globals
            .iter()
            .map(|s| s.name())
            .chain(tasks.iter().map(String::as_str));
        Error::eval(format!("unbound symbol: {name}"))
            .with_span(span)
            .with_hint(crate::suggest::hint(name.name(), in_scope))
    }

    // ---- running source ---------------------------------------------------------------

    /// Reads all of `text` (a syntax error anywhere means nothing runs), then analyses and
    /// runs each form in turn, returning the last value.
    pub fn run_source(&self, name: &str, text: &str) -> Result<Value> {
        self.run_source_as(Origin::Text, name, text)
    }

    /// [`Interp::run_source`] for a text of another origin (a file).
    pub fn run_source_as(&self, origin: Origin, name: &str, text: &str) -> Result<Value> {
        let forms = reader::read_source_as(origin, name, text)?;
        self.run_forms(&forms)
    }

    pub fn run_forms(&self, forms: &[Syntax]) -> Result<Value> {
        let mut last = Value::Nil;
        for form in forms {
            last = self.eval_syntax(form)?;
        }
        Ok(last)
    }

    /// Analyses one top-level form and runs it in the global environment; the forms of
    /// a top-level `begin` one after another.
    pub fn eval_syntax(&self, form: &Syntax) -> Result<Value> {
        if let Some(forms) = compile::top_level_begin(form) {
            return self.run_forms(forms);
        }
        let node = Compiler::new(self).compile(form)?;
        self.eval(&node, &None)
    }

    /// `(eval datum)`: code as data, run in the global environment.
    pub fn eval_value(&self, code: &Value, span: crate::source::Span) -> Result<Value> {
        let syntax = quote::value_to_syntax(code, span)?;
        self.eval_syntax(&syntax)
    }

    /// A path as the program wrote it, relative to the file being loaded (or the
    /// working directory).
    pub fn resolve_path(&self, path: &str) -> PathBuf {
        let path = std::path::Path::new(path);
        match self.state.loading.borrow().last().and_then(|f| f.parent()) {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// The files being loaded by the running evaluation, innermost last.
    pub fn loading(&self) -> &RefCell<Vec<PathBuf>> {
        &self.state.loading
    }

    /// The file being loaded now, if any.
    pub fn current_file(&self) -> Option<PathBuf> {
        self.state.loading.borrow().last().cloned()
    }

    // ---- limits -------------------------------------------------------------------

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
    fn enter(&self) -> Result<()> {
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
    fn leave(&self) {
        self.state.depth.set(self.state.depth.get() - 1);
    }

    /// Counts a procedure call against fuel, and now and then checks the interrupt flag
    /// and the deadline.
    #[inline]
    pub fn tick(&self) -> Result<()> {
        let ticks = self.ticks.get() + 1;
        self.ticks.set(ticks);
        if let Some(fuel) = self.limits.fuel {
            if ticks > fuel {
                return Err(Error::resource("fuel", ticks, fuel, "out of fuel"));
            }
        }
        if ticks & 0x3ff == 0 {
            self.check_interrupt()?;
            self.check_memory()?;
        }
        Ok(())
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

    /// [`Interp::poll`] on every [`POLL_EVERY`](crate::bounds::POLL_EVERY)-th step of a
    /// loop inside a builtin (`step` counts from 0): how such loops meet the limits.
    #[inline]
    pub fn poll_at(&self, step: usize) -> Result<()> {
        if (step as u64 + 1).is_multiple_of(crate::bounds::POLL_EVERY) {
            return self.poll();
        }
        Ok(())
    }

    /// [`Interp::poll`] before a builtin copies `items` values in one step, when they
    /// are [`POLL_EVERY`](crate::bounds::POLL_EVERY) or more: a loop of such copies
    /// (doubling a list) meets the limits at every large step.
    #[inline]
    pub fn poll_before(&self, items: usize) -> Result<()> {
        if items as u64 >= crate::bounds::POLL_EVERY {
            return self.poll();
        }
        Ok(())
    }

    /// Fails with `RESOURCE_EXHAUSTION` when the process uses more heap than
    /// `Limits::max_memory`.
    pub fn check_memory(&self) -> Result<()> {
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
        let inner = at.map(|at| state::TaskDeadline { at, timeout });
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

    // ---- evaluation -------------------------------------------------------------------

    /// Evaluates `node` in `env`. Constants and variables are answered here without
    /// entering the general loop, since they are most of what a program evaluates.
    #[inline]
    pub fn eval(&self, node: &Node, env: &Env) -> Result<Value> {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Local {
                depth,
                slot,
                name,
                span,
            } => self.local(env, *depth, *slot, *name, *span),
            Node::Global { name, span } => self.global_or_task(*name, *span),
            Node::Prim(prim) => self.eval_prim(prim, env),
            _ => self.eval_compound(node, env),
        }
    }

    /// `eval` for an argument: constants and variables of this frame without a call.
    #[inline(always)]
    fn operand(&self, node: &Node, env: &Env) -> Result<Value> {
        match node {
            Node::Const(v) => Ok(v.clone()),
            Node::Local { depth: 0, slot, .. } => {
                if let Some(frame) = env {
                    if let Some(v) = frame.slots.borrow().get(*slot as usize) {
                        if !matches!(v, Value::Undefined) {
                            return Ok(v.clone());
                        }
                    }
                }
                self.eval(node, env)
            }
            Node::Prim(prim) => self.eval_prim(prim, env),
            _ => self.eval(node, env),
        }
    }

    #[inline(never)]
    fn eval_compound(&self, node: &Node, env: &Env) -> Result<Value> {
        self.check_stack()?;
        match self.eval_node(node, env)? {
            Tail::Value(v) => Ok(v),
            Tail::Call(closure, slots) => {
                self.run_closure(closure, slots).map_err(|e| match node {
                    Node::Call(call) => e.seen_from(call.span),
                    _ => e,
                })
            }
        }
    }

    fn run_closure(&self, mut closure: Rc<Closure>, slots: Slots) -> Result<Value> {
        self.enter()?;
        let first = self.make_frame(closure.lambda.scope.clone(), slots, closure.env.clone());
        let mut frame: Env = Some(first);
        let result = loop {
            if let Err(e) = self.tick() {
                break Err(e);
            }
            match self.eval_node(&closure.lambda.body, &frame) {
                Ok(Tail::Value(v)) => break Ok(v),
                Ok(Tail::Call(next, next_slots)) => {
                    frame = Some(self.next_frame(frame.take(), &closure, &next, next_slots));
                    closure = next;
                }
                Err(e) => break Err(e),
            }
        };
        self.recycle(frame);
        self.leave();
        result
    }

    /// The frame for a tail call. A loop — the same procedure calling itself, its frame
    /// captured by nothing — reuses its frame in place.
    fn next_frame(
        &self,
        frame: Env,
        current: &Rc<Closure>,
        next: &Rc<Closure>,
        slots: Slots,
    ) -> Rc<Frame> {
        let same_code = Rc::ptr_eq(&current.lambda, &next.lambda)
            && match (&current.env, &next.env) {
                (None, None) => true,
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                _ => false,
            };
        let mut frame = frame;
        if same_code {
            if let Some(mut reused) = frame.take() {
                if let Some(f) = Rc::get_mut(&mut reused) {
                    let target = f.slots.get_mut();
                    *target = slots;
                    let size = next.lambda.scope.len();
                    if target.len() < size {
                        target.resize(size, Value::Undefined);
                    }
                    return reused;
                }
                frame = Some(reused);
            }
        }
        self.recycle(frame);
        self.make_frame(next.lambda.scope.clone(), slots, next.env.clone())
    }

    /// A frame for a call, reusing a pooled allocation when there is one.
    fn make_frame(&self, scope: Rc<env::Scope>, mut slots: Slots, parent: Env) -> Rc<Frame> {
        let size = scope.len();
        if slots.len() < size {
            slots.resize(size, Value::Undefined);
        }
        let pooled = self.frame_pool.borrow_mut().pop();
        if let Some(mut frame) = pooled {
            if let Some(f) = Rc::get_mut(&mut frame) {
                f.scope = scope;
                f.parent = parent;
                *f.slots.get_mut() = slots;
                return frame;
            }
        }
        Rc::new(Frame {
            slots: RefCell::new(slots),
            scope,
            parent,
        })
    }

    /// Returns a finished call's frame to the pool unless a closure still holds it.
    fn recycle(&self, frame: Env) {
        let Some(mut frame) = frame else { return };
        if let Some(f) = Rc::get_mut(&mut frame) {
            // Emptied before pooling, so what the call held is freed now, not later.
            f.slots.get_mut().clear();
            f.parent = None;
            let mut pool = self.frame_pool.borrow_mut();
            if pool.len() < FRAME_POOL_SIZE {
                pool.push(frame);
            }
        }
    }

    /// Runs `node`, looping in place through tail positions. `own` holds the frame of a
    /// `let` entered on the way; `env` is re-derived from it after every change.
    fn eval_node(&self, mut node: &Node, outer: &Env) -> Result<Tail> {
        let mut own: Option<Env> = None;
        loop {
            let env = own.as_ref().unwrap_or(outer);
            let value = match node {
                Node::Const(_) | Node::Local { .. } | Node::Global { .. } => {
                    self.eval(node, env)?
                }
                Node::Call(call) => return self.eval_call(call, env),
                // A rebound name keeps its tail call (a program's own `count`, say).
                Node::Prim(prim) if !self.prim_unchanged(prim) => {
                    return self.call_rebound(prim, env)
                }
                Node::Prim(prim) => self.eval_prim(prim, env)?,
                Node::If(parts) => {
                    let (test, then, otherwise) = &**parts;
                    // A comparison of integers decides the branch without making a value.
                    if let Node::Prim(prim) = test {
                        if let Some(truth) = self.int_comparison(prim, env) {
                            node = if truth { then } else { otherwise };
                            continue;
                        }
                    }
                    node = if self.eval(test, env)?.is_truthy() {
                        then
                    } else {
                        otherwise
                    };
                    continue;
                }
                Node::Dynamic { name, span } => self
                    .lookup(env, *name)
                    .ok_or_else(|| self.unbound(*name, *span))?,
                Node::Path { base, path, span } => {
                    let base = self.eval(base, env)?;
                    access_path(&base, path, self).map_err(|e| e.into_error().with_span(*span))?
                }
                Node::Begin(nodes) => {
                    let (last, init) = nodes
                        .split_last()
                        .ok_or_else(|| Error::eval("empty begin"))?;
                    for n in init {
                        self.eval(n, env)?;
                    }
                    node = last;
                    continue;
                }
                Node::And(nodes) | Node::Or(nodes) => {
                    let is_and = matches!(node, Node::And(_));
                    let (last, init) = nodes
                        .split_last()
                        .ok_or_else(|| Error::eval("empty and/or"))?;
                    let mut early = None;
                    for n in init {
                        let v = self.eval(n, env)?;
                        if v.is_truthy() != is_and {
                            early = Some(v);
                            break;
                        }
                    }
                    match early {
                        Some(v) => v,
                        None => {
                            node = last;
                            continue;
                        }
                    }
                }
                Node::Let(l) => {
                    let frame = self.let_frame(l, env)?;
                    own = Some(Some(frame));
                    node = &l.body;
                    continue;
                }
                Node::Case(c) => {
                    let key = self.eval(&c.key, env)?;
                    node = c
                        .clauses
                        .iter()
                        .find(|(datums, _)| datums.iter().any(|d| d.equal(&key)))
                        .map_or(&c.default, |(_, body)| body);
                    continue;
                }
                Node::Lambda(lambda) => Value::Closure(Rc::new(Closure {
                    lambda: lambda.clone(),
                    env: env.clone(),
                })),
                Node::Loop(l) => {
                    let closure = Rc::new(Closure {
                        lambda: l.lambda.clone(),
                        env: env.clone(),
                    });
                    let mut args: SmallVec<[Value; 4]> =
                        SmallVec::with_capacity(l.lambda.scope.len());
                    for init in &l.inits {
                        args.push(self.eval(init, env)?);
                    }
                    let slots = self.bind(&closure, args).map_err(|e| e.or_span(l.span))?;
                    return Ok(Tail::Call(closure, slots));
                }
                Node::SetLocal { depth, slot, value } => {
                    let v = self.eval(value, env)?;
                    let frame = env::frame_at(env, *depth as usize)
                        .ok_or_else(|| Error::eval("internal error: no frame for variable"))?;
                    store(frame, *slot, v)?;
                    Value::Nil
                }
                Node::DefineLocal { slot, name, value } => {
                    let v = self.eval(value, env)?;
                    let frame = env
                        .as_ref()
                        .ok_or_else(|| Error::eval("internal error: local define at top level"))?;
                    store(frame, *slot, v)?;
                    Value::Symbol(*name)
                }
                Node::SetGlobal { name, value, span } => {
                    let v = self.eval(value, env)?;
                    if self.global(*name).is_none() {
                        return Err(Error::eval(format!("set! of unbound variable: {name}"))
                            .with_span(*span));
                    }
                    self.define_global(*name, v);
                    Value::Nil
                }
                Node::SetDynamic { name, value, span } => {
                    let v = self.eval(value, env)?;
                    if !env::assign_by_name(env, *name, v.clone()) {
                        if self.global(*name).is_none() {
                            return Err(Error::eval(format!("set! of unbound variable: {name}"))
                                .with_span(*span));
                        }
                        self.define_global(*name, v);
                    }
                    Value::Nil
                }
                Node::DefineGlobal { name, value } => {
                    let v = self.eval(value, env)?;
                    self.define_global(*name, v);
                    Value::Symbol(*name)
                }
                Node::Try(t) => self.eval_try(t, env)?,
                Node::DefMacro { name, lambda } => {
                    let closure = Value::Closure(Rc::new(Closure {
                        lambda: lambda.clone(),
                        env: None,
                    }));
                    self.macros.borrow_mut().insert(*name, closure);
                    Value::Symbol(*name)
                }
                Node::Extension(ext) => ext.eval(self, env)?,
            };
            return Ok(Tail::Value(value));
        }
    }

    /// A call: builtins run at once; closures come back as a tail call to run.
    #[inline(always)]
    fn eval_call(&self, call: &ast::Call, env: &Env) -> Result<Tail> {
        // A global procedure is taken straight from its slot, never moved as a `Value`.
        if let Node::Global { name, .. } = &call.callee {
            let closure = match self.globals.borrow().get(name.index()) {
                Some(Value::Closure(c)) if !c.lambda.rest => Some(c.clone()),
                _ => None,
            };
            if let Some(closure) = closure {
                return self.call_closure_with(closure, call, env);
            }
        }
        let callee = self.eval(&call.callee, env)?;
        let result = match callee {
            Value::Builtin(b) if !std::ptr::eq(b, builtins::apply_builtin()) => {
                self.call_builtin_with(b, &call.args, env).map(Tail::Value)
            }
            Value::Closure(closure) if !closure.lambda.rest => {
                return self.call_closure_with(closure, call, env);
            }
            _ => {
                let mut args: SmallVec<[Value; 4]> = SmallVec::with_capacity(call.args.len());
                for arg in &call.args {
                    args.push(self.eval(arg, env)?);
                }
                self.call_tail(callee, args, env)
            }
        };
        result.map_err(|e| e.or_span(call.span))
    }

    /// A call of a closure without a rest parameter: the arguments go straight into the
    /// new frame's slots, and the call comes back as a tail call.
    #[inline(always)]
    fn call_closure_with(&self, closure: Rc<Closure>, call: &ast::Call, env: &Env) -> Result<Tail> {
        let mut slots = Slots::new();
        for arg in &call.args {
            slots.push(self.operand(arg, env)?);
        }
        match self.bind(&closure, slots) {
            Ok(slots) => Ok(Tail::Call(closure, slots)),
            Err(e) => Err(e.or_span(call.span)),
        }
    }

    /// Integer arithmetic on constants and variables of this frame, read in place: no
    /// clone, no call. Everything else takes `eval_prim_general`.
    #[inline]
    fn eval_prim(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        if let [a, b] = prim.args.as_slice() {
            if let (Some(x), Some(y)) = (int_operand(a, env), int_operand(b, env)) {
                if self.prim_unchanged(prim) {
                    if let Some(v) = prim.op.on_ints(x, y) {
                        return Ok(v);
                    }
                }
            }
        }
        self.eval_prim_general(prim, env)
    }

    /// The truth of `(< a b)`-like tests on integer constants and frame variables, or
    /// `None` when the general path must decide.
    #[inline(always)]
    fn int_comparison(&self, prim: &ast::Prim, env: &Env) -> Option<bool> {
        if let (ast::PrimOp::Not, [Node::Prim(inner)]) = (prim.op, prim.args.as_slice()) {
            return (self.prim_unchanged(prim) && inner.op != ast::PrimOp::Not)
                .then(|| self.int_comparison(inner, env).map(|truth| !truth))
                .flatten();
        }
        let [a, b] = prim.args.as_slice() else {
            return None;
        };
        let (x, y) = (int_operand(a, env)?, int_operand(b, env)?);
        if !self.prim_unchanged(prim) {
            return None;
        }
        match prim.op {
            ast::PrimOp::Lt => Some(x < y),
            ast::PrimOp::Gt => Some(x > y),
            ast::PrimOp::Le => Some(x <= y),
            ast::PrimOp::Ge => Some(x >= y),
            ast::PrimOp::NumEq => Some(x == y),
            _ => None,
        }
    }

    /// A `Prim` whose name the program rebound: a call of whatever the name holds now,
    /// coming back as a tail call when it is a closure.
    fn call_rebound(&self, prim: &ast::Prim, env: &Env) -> Result<Tail> {
        let callee = self.global_or_task(prim.name, prim.span)?;
        let mut args: SmallVec<[Value; 4]> = SmallVec::with_capacity(prim.args.len());
        for arg in &prim.args {
            args.push(self.eval(arg, env)?);
        }
        self.call_tail(callee, args, env)
            .map_err(|e| e.or_span(prim.span))
    }

    /// Whether the global a `Prim` names still holds the builtin it was analysed with.
    #[inline]
    fn prim_unchanged(&self, prim: &ast::Prim) -> bool {
        !self.builtin_rebound.get()
            || matches!(
                self.globals.borrow().get(prim.name.index()),
                Some(Value::Builtin(b)) if std::ptr::eq(*b, prim.builtin)
            )
    }

    #[inline(never)]
    fn eval_prim_general(&self, prim: &ast::Prim, env: &Env) -> Result<Value> {
        if !self.prim_unchanged(prim) {
            self.check_stack()?;
            return match self.call_rebound(prim, env)? {
                Tail::Value(v) => Ok(v),
                Tail::Call(closure, slots) => self.run_closure(closure, slots),
            };
        }
        let (a, b) = match prim.args.as_slice() {
            [a, b] if !matches!(prim.op, ast::PrimOp::Other) => (a, b),
            args => {
                return self
                    .call_builtin_with(prim.builtin, args, env)
                    .map_err(|e| e.or_span(prim.span))
            }
        };
        let a = self.eval(a, env)?;
        let b = self.eval(b, env)?;
        if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
            if let Some(v) = prim.op.on_ints(*x, *y) {
                return Ok(v);
            }
        }
        self.call_builtin(prim.builtin, &[a, b], env)
            .map_err(|e| e.or_span(prim.span))
    }

    /// Evaluates the arguments of a builtin call on the stack for the common small
    /// arities, then calls it.
    fn call_builtin_with(&self, b: &'static Builtin, args: &[Node], env: &Env) -> Result<Value> {
        match args {
            [] => self.call_builtin(b, &[], env),
            [a] => {
                let a = self.operand(a, env)?;
                self.call_builtin(b, &[a], env)
            }
            [a, b2] => {
                let a = self.operand(a, env)?;
                let b2 = self.operand(b2, env)?;
                self.call_builtin(b, &[a, b2], env)
            }
            [a, b2, c] => {
                let a = self.operand(a, env)?;
                let b2 = self.operand(b2, env)?;
                let c = self.operand(c, env)?;
                self.call_builtin(b, &[a, b2, c], env)
            }
            _ => {
                let values = args
                    .iter()
                    .map(|a| self.eval(a, env))
                    .collect::<Result<Vec<_>>>()?;
                self.call_builtin(b, &values, env)
            }
        }
    }

    fn let_frame(&self, l: &ast::Let, env: &Env) -> Result<Rc<Frame>> {
        Ok(match l.kind {
            LetKind::Parallel => {
                let mut slots = Slots::with_capacity(l.scope.len());
                for (_, init) in &l.inits {
                    slots.push(self.eval(init, env)?);
                }
                Frame::new(l.scope.clone(), slots, env.clone())
            }
            LetKind::Sequential => {
                let frame = Frame::new(l.scope.clone(), Slots::new(), env.clone());
                let inner = Some(frame.clone());
                for (slot, init) in &l.inits {
                    let v = self.eval(init, &inner)?;
                    store(&frame, *slot, v)?;
                }
                frame
            }
        })
    }

    #[inline]
    fn local(
        &self,
        env: &Env,
        depth: u32,
        slot: u32,
        name: Sym,
        span: crate::source::Span,
    ) -> Result<Value> {
        if let Some(frame) = env::frame_at(env, depth as usize) {
            if let Some(v) = frame.slots.borrow().get(slot as usize) {
                if !matches!(v, Value::Undefined) {
                    return Ok(v.clone());
                }
            }
        }
        Err(Error::eval(format!("{name} is used before its definition")).with_span(span))
    }

    fn eval_try(&self, t: &ast::Try, env: &Env) -> Result<Value> {
        let depth = self.state.depth.get();
        let result = self.eval(&t.body, env);
        let result = match (result, &t.handler) {
            (Err(e), Some((scope, handler))) if !self.interrupted() && e.exit_code().is_none() => {
                // The frames the error unwound through are gone: restore the count.
                self.state.depth.set(depth);
                let error = value::from_json(&e.to_json());
                let frame = Frame::new(scope.clone(), SmallVec::from_elem(error, 1), env.clone());
                self.eval(handler, &Some(frame))
            }
            (result, _) => result,
        };
        if let Some(finally) = &t.finally {
            self.eval(finally, env)?;
        }
        result
    }

    /// The slots of a call of `closure` with `args`: the arity checked, the rest list and
    /// the self slot made.
    #[inline(always)]
    fn bind(&self, closure: &Rc<Closure>, args: SmallVec<[Value; 4]>) -> Result<Slots> {
        let lambda = &closure.lambda;
        if args.len() == lambda.required as usize && !lambda.rest && lambda.self_slot.is_none() {
            return Ok(args);
        }
        self.bind_general(closure, args)
    }

    #[inline(never)]
    fn bind_general(&self, closure: &Rc<Closure>, mut args: SmallVec<[Value; 4]>) -> Result<Slots> {
        let lambda = &closure.lambda;
        let required = lambda.required as usize;
        if args.len() < required || (!lambda.rest && args.len() > required) {
            return Err(arity_error(
                &closure
                    .name()
                    .map_or("anonymous procedure".to_owned(), |n| n.to_string()),
                required,
                if lambda.rest { None } else { Some(required) },
                args.len(),
            ));
        }
        if lambda.rest {
            let rest = value::List::from_vec(args.drain(required..).collect());
            args.push(Value::from(rest));
        }
        if let Some(slot) = lambda.self_slot {
            args.resize(slot as usize, Value::Undefined);
            args.push(Value::Closure(closure.clone()));
        }
        Ok(args)
    }

    fn call_tail(&self, callee: Value, args: SmallVec<[Value; 4]>, env: &Env) -> Result<Tail> {
        match callee {
            Value::Closure(closure) => {
                let slots = self.bind(&closure, args)?;
                Ok(Tail::Call(closure, slots))
            }
            Value::Builtin(b) if std::ptr::eq(b, builtins::apply_builtin()) => {
                let (f, spread) = builtins::spread_apply_args(&args)?;
                self.call_tail(f, spread.into_iter().collect(), env)
            }
            other => self.call_value(&other, &args, env).map(Tail::Value),
        }
    }

    fn call_value(&self, callee: &Value, args: &[Value], env: &Env) -> Result<Value> {
        match callee {
            Value::Builtin(b) => self.call_builtin(b, args, env),
            Value::Task(t) => task::call(self, t, args, env),
            Value::Closure(_) => self.apply(callee, args, env),
            other => Err(Error::eval(format!(
                "not a procedure: {} ({})",
                value::write_prefix(other, 80),
                builtins::article(other.type_name())
            ))),
        }
    }

    fn call_builtin(&self, b: &'static Builtin, args: &[Value], env: &Env) -> Result<Value> {
        if args.len() < b.min_args || b.max_args.is_some_and(|max| args.len() > max) {
            return Err(arity_error(b.name, b.min_args, b.max_args, args.len()));
        }
        (b.func)(self, args, env)
    }

    /// Calls any procedure (closure, builtin or task) with evaluated arguments. `env` is
    /// the caller's environment, which tasks with `inherit-context "full"` see.
    pub fn apply(&self, f: &Value, args: &[Value], env: &Env) -> Result<Value> {
        match f {
            Value::Closure(closure) => {
                self.check_stack()?;
                let slots = self.bind(closure, args.iter().cloned().collect())?;
                self.run_closure(closure.clone(), slots)
            }
            // Builtins and tasks called from builtins (`map`, `filter`…) count as calls
            // too, so those loops meet the limits.
            other => {
                self.tick()?;
                self.call_value(other, args, env)
            }
        }
    }
}

/// The integer a constant or a current-frame variable holds, if it is one.
#[inline]
fn int_operand(node: &Node, env: &Env) -> Option<i64> {
    match node {
        Node::Const(Value::Int(i)) => Some(*i),
        Node::Local { depth: 0, slot, .. } => {
            match env.as_ref()?.slots.borrow().get(*slot as usize) {
                Some(Value::Int(i)) => Some(*i),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Stores `value` in `slot` of `frame`. The analyser gives a node only slots of its
/// scope, and a frame holds a slot for each name of its scope.
#[inline]
fn store(frame: &Frame, slot: u32, value: Value) -> Result<()> {
    match frame.slots.borrow_mut().get_mut(slot as usize) {
        Some(place) => {
            *place = value;
            Ok(())
        }
        None => Err(Error::eval("internal error: no slot for variable")),
    }
}

fn symbol_at(index: usize) -> Option<Sym> {
    // Symbols are dense indices; rebuild the Sym through its name table.
    let name = crate::symbol::name_at(index)?;
    Some(Sym::new(name))
}

/// The arguments of builtin `name`, which takes exactly `N`: the builtin table checks the
/// count before the call, so the error only guards a call made another way.
pub fn fixed_args<'a, const N: usize>(name: &str, args: &'a [Value]) -> Result<&'a [Value; N]> {
    args.try_into()
        .map_err(|_| arity_error(name, N, Some(N), args.len()))
}

/// The first `N` arguments of builtin `name` and the rest (checked as for `fixed_args`).
pub fn leading_args<'a, const N: usize>(
    name: &str,
    args: &'a [Value],
) -> Result<(&'a [Value; N], &'a [Value])> {
    args.split_first_chunk()
        .ok_or_else(|| arity_error(name, N, None, args.len()))
}

pub fn arity_error(name: &str, min: usize, max: Option<usize>, got: usize) -> Error {
    let expected = match max {
        Some(max) if max == min => format!("{min}"),
        Some(max) => format!("{min} to {max}"),
        None => format!("at least {min}"),
    };
    let plural = if max.unwrap_or(min) == 1 { "" } else { "s" };
    Error::new(
        ErrorKind::Eval,
        format!("{name}: expected {expected} argument{plural}, got {got}"),
    )
}

pub fn truncate_text(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(program: &'static str) -> String {
        run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let fast_path_intact = !interp.builtin_rebound.get();
            let value = interp
                .run_source("<test>", program)
                .map(|v| value::write_string(&v))
                .unwrap_or_else(|e| e.to_string());
            format!("{fast_path_intact} {value}")
        })
        .expect("thread")
    }

    #[test]
    fn the_prelude_leaves_every_builtin_in_place() {
        assert_eq!(run("1"), "true 1");
    }

    #[test]
    fn interpreters_of_one_thread_start_alike_and_apart() {
        let outcome = run_on_large_stack(&Limits::default(), |limits| {
            let make = || Interp::with_output(limits.clone(), Box::new(std::io::sink()));
            let first = make().expect("the first interpreter starts");
            let shown = |interp: &Interp, code| {
                interp
                    .run_source("<test>", code)
                    .map(|v| value::write_string(&v))
                    .unwrap_or_else(|e| e.to_string())
            };
            let changed = shown(
                &first,
                "(define (inc n) 0) (define mine 1) (defmacro twice (x) `(list ,x ,x)) (inc 5)",
            );
            // The second copies the start the first made, not what the first did since.
            let second = make().expect("the second interpreter starts");
            let fresh = shown(&second, "(-> 5 inc (list (dec 5) (third '(1 2 3))))");
            let apart = shown(&second, "mine");
            let macro_apart = shown(&second, "(twice 1)");
            (changed, fresh, apart, macro_apart)
        })
        .expect("thread");
        assert_eq!(outcome.0, "0");
        assert_eq!(outcome.1, "(6 4 3)");
        assert!(outcome.2.contains("unbound symbol: mine"), "{}", outcome.2);
        assert!(outcome.3.contains("unbound symbol: twice"), "{}", outcome.3);
    }

    #[test]
    fn a_rebound_builtin_is_seen_by_code_analysed_before() {
        let program = "(define (add a b) (+ a b))
                       (define before (add 1 2))
                       (define (+ a b) (* a b))
                       [before (add 2 5)]";
        assert_eq!(run(program), "true (3 10)");
    }

    #[test]
    fn if_tests_on_integers_take_the_fast_path_and_see_rebinding() {
        let program = "(define (pick a b) (if (not (< a b)) 'ge 'lt))
                       (define before [(pick 1 2) (pick 2 1) (if (= 1 1.0) 'eq 'ne)])
                       (define (< a b) true)
                       [before (pick 2 1)]";
        assert_eq!(run(program), "true ((lt ge eq) lt)");
    }

    #[test]
    fn a_loop_reuses_its_frame_unless_a_closure_kept_it() {
        let program = "(define (collect i acc)
                         (if (= i 3) acc (collect (+ i 1) (cons (fn () i) acc))))
                       (map (fn (f) (f)) (collect 0 '()))";
        assert_eq!(run(program), "true (2 1 0)");
    }

    #[test]
    fn storing_past_a_frames_slots_is_an_error_not_a_panic() {
        let frame = Frame::new(env::Scope::new(vec![Sym::new("x")]), Slots::new(), None);
        assert!(store(&frame, 0, Value::Int(1)).is_ok());
        let error = store(&frame, 1, Value::Int(2)).unwrap_err();
        assert_eq!(error.message(), "internal error: no slot for variable");
        assert!(matches!(frame.slots.borrow().as_slice(), [Value::Int(1)]));
    }
}
