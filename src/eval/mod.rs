//! The evaluator: the interpreter state and the loop that runs analysed code.
//!
//! `eval` is a trampoline: `eval_node` runs a node, looping in place through the tail
//! positions of `if`, `begin`, `let`, `case`…; a call to a closure in tail position is
//! returned as `Tail::Call` instead of recursing, and `run_closure` loops on it. So tail
//! calls never grow the Rust stack, and only non-tail procedure calls count against the
//! frame limit.

pub mod ast;
pub mod compile;
pub mod env;
pub mod fiber;
mod forms;
pub mod home;
pub mod layer;
pub use forms::CORE;
mod call;
mod limits;
pub mod path;
pub mod quote;
pub mod reader;
mod run;
pub mod state;
pub mod stdlib;

pub use ast::{Lambda, Node};
pub use compile::Compiler;
pub use limits::{run_on_large_stack, Limits, MAX_DEPTH_LIMIT};
pub use path::access_path;

use crate::builtins;
use crate::error::{Error, Result};
use crate::source::Origin;
use crate::symbol::Sym;
use crate::task::Runtime;
use crate::value::Value;
use env::Env;
use reader::Syntax;
pub use state::EvalState;
use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// A procedure made by `lambda`: its code and the environment it was made in, its
/// frames and its home (the globals its free names mean, see [`home`]).
pub struct Closure {
    pub lambda: Rc<Lambda>,
    pub env: Env,
    pub home: home::HomeId,
}

impl Closure {
    pub fn name(&self) -> Option<Sym> {
        self.lambda.name
    }
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
    /// The state layers above the core keep per interpreter, one value per type
    /// (the testing layer's tests), made on first use: see [`Interp::layer_state`].
    layer_states: RefCell<HashMap<TypeId, Rc<dyn Any>>>,
    /// Where this interpreter's notices go (`None`: the process's hook, see
    /// `crate::notice`).
    notice: RefCell<Option<crate::notice::Notice>>,
    /// Frames whose last reference was a finished call, for the next calls.
    frame_pool: env::FramePool,
    /// The builtins' names that were ever redefined, as a filter: bit `i % 64` is set
    /// for a rebound name of symbol index `i` (`ast::Prim::name_bit`). A `Prim` whose bit
    /// is clear still names its builtin; one whose bit is set looks its name up. A
    /// program that redefines `count` slows only the calls of names that share its bit.
    builtins_rebound: Cell<u64>,
    /// The home whose names `globals`, `macros`, `builtins_rebound` and the task library
    /// hold now (see [`home`]).
    home: Cell<home::HomeId>,
    /// The homes whose procedures this interpreter may call: its ancestors' and its own.
    homes: RefCell<Vec<Rc<home::Home>>>,
}

/// What an interpreter starts with: the builtins and what the prelude defined.
#[derive(Clone)]
struct Start {
    /// The layers it was made with: an interpreter of other layers starts afresh.
    layers: &'static layer::Registry,
    globals: Vec<Value>,
    macros: HashMap<Sym, Value>,
    gensyms: u64,
    builtins_rebound: u64,
}

thread_local! {
    /// The start the first interpreter of the thread made (see [`Interp::start`]).
    static START: RefCell<Option<Start>> = const { RefCell::new(None) };
}

impl Interp {
    /// An interpreter with the special forms and builtins of `layers` and the prelude,
    /// printing to `out`. (`Interp::new` and `Interp::with_output`, in `crate::layers`,
    /// give it the standard layers.)
    pub fn with_layers(
        limits: Limits,
        out: Box<dyn Write>,
        layers: &'static layer::Registry,
    ) -> Result<Interp> {
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
            layers,
            layer_states: RefCell::default(),
            notice: RefCell::new(None),
            frame_pool: env::FramePool::default(),
            builtins_rebound: Cell::new(0),
            home: Cell::new(home::TOP),
            homes: RefCell::new(vec![home::Home::new(home::TOP)]),
        };
        interp.state.stack_floor.set(
            base.saturating_sub(
                interp
                    .limits
                    .stack_size
                    .saturating_sub(limits::STACK_MARGIN),
            ),
        );
        interp.start()?;
        Ok(interp)
    }

    /// An interpreter for a child evaluation on this thread (`eval-sandboxed`): the same
    /// layers and a fresh copy of what the prelude defined, `limits` of its own,
    /// printing to `out`. It shares this one's interrupt flag and notice hook, and runs
    /// on this stack, so the stack check trips where this one's does. It has a home of
    /// its own and knows this one's, so the procedures it is given run with theirs.
    /// A child is always metered (no fuel given: as much as a `u64` counts), which is
    /// what makes its calls check their procedures' homes (`Interp::tick_call`).
    pub fn child(&self, limits: Limits, out: Box<dyn Write>) -> Result<Interp> {
        let limits = Limits {
            fuel: Some(limits.fuel.unwrap_or(u64::MAX)),
            ..limits
        };
        let mut child = Interp::with_layers(limits, out, self.layers)?;
        self.adopt_homes(&child, home::Home::fresh());
        child.interrupt = self.interrupt.clone();
        *child.notice.get_mut() = self.notice.borrow().clone();
        child.state.stack_floor.set(self.state.stack_floor.get());
        child.state.depth.set(self.state.depth.get());
        Ok(child)
    }

    /// Installs the builtins and runs the prelude, or, after the first interpreter of
    /// the thread did, copies the globals and macros they made: every interpreter starts
    /// from the same definitions, and copying them costs a tenth of making them.
    fn start(&self) -> Result<()> {
        let same_layers = |start: &Start| std::ptr::eq(start.layers, self.layers);
        if let Some(start) = START.with(|s| s.borrow().clone()).filter(same_layers) {
            *self.globals.borrow_mut() = start.globals;
            *self.macros.borrow_mut() = start.macros;
            self.gensyms.set(start.gensyms);
            self.builtins_rebound.set(start.builtins_rebound);
            return Ok(());
        }
        builtins::install(self);
        self.define_global(Sym::new("taskLibrary"), Value::Library);
        self.define_global(Sym::new("*args*"), Value::empty_list());
        crate::eval::stdlib::load(self)?;
        let start = Start {
            layers: self.layers,
            globals: self.globals.borrow().clone(),
            macros: self.macros.borrow().clone(),
            gensyms: self.gensyms.get(),
            builtins_rebound: self.builtins_rebound.get(),
        };
        START.with(|s| *s.borrow_mut() = Some(start));
        Ok(())
    }

    /// Sends this interpreter's notices (a task redefined…) to `hook`.
    pub fn on_notice(&self, hook: crate::notice::Notice) {
        *self.notice.borrow_mut() = Some(hook);
    }

    /// Gives `text` to the notice hook: the interpreter's own, or the process's.
    pub fn notice(&self, text: &str) {
        let hook = self.notice.borrow().clone();
        hook.unwrap_or_else(crate::notice::hook)(text)
    }

    /// The state of type `T` a layer keeps in this interpreter, made (by `Default`) on
    /// first use. A layer's own state stays in the layer, and the core names no type of
    /// it (rhai keeps a package's state the same way, in a type-keyed map).
    pub fn layer_state<T: Default + 'static>(&self) -> Rc<T> {
        let existing = self.layer_states.borrow().get(&TypeId::of::<T>()).cloned();
        if let Some(state) = existing.and_then(|state| state.downcast::<T>().ok()) {
            return state;
        }
        let state = Rc::new(T::default());
        let erased: Rc<dyn Any> = state.clone();
        self.layer_states
            .borrow_mut()
            .insert(TypeId::of::<T>(), erased);
        state
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
                let bit = ast::Prim::name_bit(name);
                self.builtins_rebound.set(self.builtins_rebound.get() | bit);
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

    /// Runs `body` with `path` as the file being loaded (pushed on [`Interp::loading`]
    /// for its duration, also when it fails).
    pub fn with_file<T>(&self, path: &Path, body: impl FnOnce() -> Result<T>) -> Result<T> {
        self.state.loading.borrow_mut().push(path.to_path_buf());
        let result = body();
        self.state.loading.borrow_mut().pop();
        result
    }

    /// Runs the text of the file at `path` (`-`: stdin) as the file being loaded.
    pub fn run_file(&self, path: &Path, text: &str) -> Result<Value> {
        let name = if path == Path::new("-") {
            "<stdin>".to_owned()
        } else {
            path.display().to_string()
        };
        self.with_file(path, || self.run_source_as(Origin::File, &name, text))
    }

    /// The file being loaded now, if any.
    pub fn current_file(&self) -> Option<PathBuf> {
        self.state.loading.borrow().last().cloned()
    }
}

fn symbol_at(index: usize) -> Option<Sym> {
    // Symbols are dense indices; rebuild the Sym through its name table.
    let name = crate::symbol::name_at(index)?;
    Some(Sym::new(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(program: &'static str) -> String {
        run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let fast_path_intact = interp.builtins_rebound.get() == 0;
            let value = interp
                .run_source("<test>", program)
                .map(|v| crate::value::write_string(&v))
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
                    .map(|v| crate::value::write_string(&v))
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
    fn redefining_a_builtin_marks_its_own_name_only() {
        let marked = run_on_large_stack(&Limits::default(), |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let value = interp.run_source("<test>", "(define (count k n) k) (count 4 5)");
            (
                value.map(|v| v.to_string()).ok(),
                interp.builtins_rebound.get(),
            )
        })
        .expect("thread");
        assert_eq!(marked.0.as_deref(), Some("4"));
        assert_eq!(marked.1, ast::Prim::name_bit(Sym::new("count")));
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
    fn a_self_tail_call_in_its_own_frame_gives_what_a_fresh_frame_gives() {
        // A body's `define` is undefined again at each call; a local procedure loops in
        // its frame too; a frame captured while the arguments were evaluated is kept.
        let program = "(define (f n) (when (= n 1) (prn y)) (define y n) (if (= n 1) 'end (f (- n 1))))
                       (define (g k acc) (if (= k 0) acc (g (- k 1) (+ acc k))))
                       (define (outer) (define (lp i acc) (if (= i 0) acc (lp (- i 1) (+ acc i)))) (lp 100 0))
                       (define (caps i acc) (if (= i 3) (map (fn (f) (f)) acc) (caps (+ i 1) (cons (fn () i) acc))))
                       [(try (f 2) (catch e (get e :message))) (g 100 0) (outer) (caps 0 '()) (g 1000000 0)]";
        assert_eq!(
            run(program),
            "true (\"y is used before its definition\" 5050 5050 (2 1 0) 500000500000)"
        );
    }

    #[test]
    fn a_self_tail_call_keeps_the_errors_of_its_arguments() {
        let overflow = "(define (h k) (if (= k 0) 0 (h (+ k 1)))) (h 9223372036854775807)";
        assert_eq!(run(overflow), "true integer overflow");
        let not_a_number = "(define (s k) (if (= k 0) 0 (s (- k \"a\")))) (s 1)";
        assert_eq!(
            run(not_a_number),
            "true -: expected a number, got a string \"a\""
        );
    }

    #[test]
    fn a_loop_reuses_its_frame_unless_a_closure_kept_it() {
        let program = "(define (collect i acc)
                         (if (= i 3) acc (collect (+ i 1) (cons (fn () i) acc))))
                       (map (fn (f) (f)) (collect 0 '()))";
        assert_eq!(run(program), "true (2 1 0)");
    }
}
