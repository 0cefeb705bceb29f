//! `eval-sandboxed`: a child interpreter with less than its caller may do.
//!
//! The child is a second [`Interp`] on the caller's thread and stack: a fresh copy of
//! what the prelude defined, the tasks and bindings it is given, capabilities within
//! its caller's, fuel, time and memory of its own. Its provider session, budgets and
//! run-log scope are its caller's (so its model calls count there and log under the
//! caller's task call); what it prints is captured; what it returns is copied out as
//! data, so no closure over its environment reaches the caller.

use crate::builtins::{split_options, type_error, Options};
use crate::capabilities::Capabilities;
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::{Interp, Limits};
use crate::symbol::Sym;
use crate::task::state::TaskState;
use crate::task::Task;
use crate::value::bounds::Budget;
use crate::value::{write_string, Entries, Map, Value};
use serde_json::json;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The options `eval-sandboxed` takes.
pub const OPTIONS: &[&str] = &["tasks", "env", "allow", "fuel", "timeout", "max-memory"];

/// The defaults: a million steps, ten seconds, 64 MiB.
const DEFAULT_FUEL: u64 = 1_000_000;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_MEMORY: u64 = 64 << 20;

/// The name the code's text is registered under, which its errors show.
pub const CODE_NAME: &str = "<sandboxed>";

/// What a child evaluation is given: tasks, bindings, capabilities asked for, limits.
pub struct Spec {
    pub tasks: Vec<Rc<Task>>,
    pub env: Vec<(String, Value)>,
    pub allow: Capabilities,
    pub fuel: u64,
    pub timeout: Duration,
    pub max_memory: u64,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            tasks: Vec::new(),
            env: Vec::new(),
            allow: Capabilities::sandbox(),
            fuel: DEFAULT_FUEL,
            timeout: DEFAULT_TIMEOUT,
            max_memory: DEFAULT_MEMORY,
        }
    }
}

impl Spec {
    /// Reads the options of `who` (those of [`OPTIONS`] it was given).
    pub fn parse(who: &str, interp: &Interp, options: &Options) -> Result<Spec> {
        let mut spec = Spec::default();
        for (option, value) in options {
            match *option {
                "tasks" => spec.tasks = tasks_arg(who, interp, value)?,
                "env" => spec.env = env_arg(who, value)?,
                "allow" => spec.allow = allow_arg(who, value)?,
                "fuel" => spec.fuel = positive(who, option, value)? as u64,
                "timeout" => spec.timeout = Duration::from_secs_f64(positive(who, option, value)?),
                "max-memory" => spec.max_memory = positive(who, option, value)? as u64,
                _ => {}
            }
        }
        Ok(spec)
    }
}

/// A positive number given to `:option`.
fn positive(who: &str, option: &str, value: &Value) -> Result<f64> {
    let n = match value {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => return Err(type_error(who, &format!("a number for :{option}"), other)),
    };
    if !(n > 0.0 && n <= 1e12) {
        return Err(Error::eval(format!(
            "{who}: :{option} must be a positive number, got {n}"
        )));
    }
    Ok(n)
}

/// `:tasks`: task names (strings or symbols) or task values.
pub fn tasks_arg(who: &str, interp: &Interp, value: &Value) -> Result<Vec<Rc<Task>>> {
    let list = value
        .as_list()
        .ok_or_else(|| type_error(who, "a list of tasks for :tasks", value))?;
    list.iter()
        .map(|item| match &item {
            Value::Task(task) => Ok(task.clone()),
            other => {
                let name = other
                    .name_text()
                    .ok_or_else(|| type_error(who, "a task or a task name", other))?;
                interp
                    .tasks
                    .get(name)
                    .ok_or_else(|| crate::task::builtins::task_not_found(interp, name))
            }
        })
        .collect()
}

/// `:env`: a map of names to values.
fn env_arg(who: &str, value: &Value) -> Result<Vec<(String, Value)>> {
    let map = value
        .as_map()
        .ok_or_else(|| type_error(who, "a map of names to values for :env", value))?;
    Ok(map
        .entries
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect())
}

/// `:allow`: `{"exec" [...] "read" [...] …}`, each absent key allowing nothing.
fn allow_arg(who: &str, value: &Value) -> Result<Capabilities> {
    let map = value
        .as_map()
        .ok_or_else(|| type_error(who, "a map of capabilities for :allow", value))?;
    let mut allowed = Capabilities::sandbox();
    for (key, list) in &map.entries {
        let names = names_arg(who, key, list)?;
        match &**key {
            "exec" => allowed.exec = Some(names),
            "read" => allowed.read = Some(names.into_iter().map(PathBuf::from).collect()),
            "write" => allowed.write = Some(names.into_iter().map(PathBuf::from).collect()),
            "env" => allowed.env = Some(names),
            "provider" => allowed.providers = Some(names),
            "net" => allowed.net = Some(names),
            other => {
                return Err(Error::eval(format!(
                    "{who}: unknown capability {other:?} in :allow \
                     (exec, read, write, env, provider, net)"
                )))
            }
        }
    }
    Ok(allowed)
}

fn names_arg(who: &str, key: &str, value: &Value) -> Result<Vec<String>> {
    let expected = || {
        type_error(
            who,
            &format!("a list of names for {key:?} in :allow"),
            value,
        )
    };
    let list = value.as_list().ok_or_else(expected)?;
    list.iter()
        .map(|item| item.name_text().map(str::to_owned).ok_or_else(expected))
        .collect()
}

/// The text of code given as text, or as data (then its printed form).
pub fn code_text(code: &Value) -> String {
    match code {
        Value::Str(text) => text.to_string(),
        data => write_string(data),
    }
}

/// What the child prints: kept for the caller.
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A child interpreter and what it was given. Each [`Sandbox::run`] starts with the
/// whole of its fuel, time and memory; definitions carry from one run to the next.
pub struct Sandbox {
    pub interp: Interp,
    output: Rc<RefCell<Vec<u8>>>,
    timeout: Duration,
    max_memory: u64,
}

/// One run's outcome: its value (copied out) or error, and what it printed.
pub struct Ran {
    pub value: Result<Value>,
    pub output: String,
}

impl Sandbox {
    pub fn new(parent: &Interp, spec: &Spec) -> Result<Sandbox> {
        let limits = Limits {
            fuel: Some(spec.fuel.min(parent.fuel_left().unwrap_or(u64::MAX))),
            timeout: None,
            capabilities: parent.limits.capabilities.intersect(&spec.allow),
            ..parent.limits.clone()
        };
        let output = Rc::new(RefCell::new(Vec::new()));
        let interp = parent.child(limits, Box::new(Capture(output.clone())))?;
        interp.tasks.inherit(&parent.tasks);
        interp
            .state
            .task
            .swap(&TaskState::child_of(&parent.state.task));
        for name in WITHHELD {
            interp.define_global(Sym::new(name), Value::Undefined);
        }
        for (name, instead) in REPLACED {
            let builtin = interp.global(Sym::new(instead)).unwrap_or_default();
            interp.define_global(Sym::new(name), builtin);
        }
        for task in &spec.tasks {
            interp.tasks.register(task.clone())?;
        }
        for (name, value) in &spec.env {
            interp.define_global(Sym::new(name), value.clone());
        }
        Ok(Sandbox {
            interp,
            output,
            timeout: spec.timeout,
            max_memory: spec.max_memory,
        })
    }

    /// Runs `code` within the limits. The caller's own limits are met too: the child's
    /// fuel is charged to it and the child's time ends at the caller's deadline; an `Err`
    /// here is the caller's own (its fuel or time run out, Ctrl-C), the code's own
    /// outcome is in [`Ran::value`].
    pub fn run(&self, parent: &Interp, code: &str) -> Result<Ran> {
        let child = &self.interp;
        child.refuel();
        *child.state.task.observe.borrow_mut() = parent.state.task.observe.borrow().clone();
        let now = Instant::now();
        let timeout = match parent.deadline() {
            Some(deadline) => self.timeout.min(deadline.saturating_duration_since(now)),
            None => self.timeout,
        };
        // The caller's names wait in its home, where the procedures and tasks it gave
        // the code run with them (see `crate::eval::home`).
        let lent = parent.lend_home();
        let value = child.within_timeout(Some(timeout), || {
            child.within_memory(self.max_memory, || {
                let value = child.run_source(CODE_NAME, code)?;
                copy_out(&value)
            })
        });
        drop(lent);
        child.flush();
        let output =
            String::from_utf8_lossy(&std::mem::take(&mut *self.output.borrow_mut())).into_owned();
        parent.tasks.observer.absorb(&child.tasks.observer);
        parent.spend_fuel(child.fuel_used())?;
        // Ctrl-C, or the caller's own time running out, stops the caller too: not an
        // error of the code to report and go on from.
        parent.check_interrupt()?;
        let value = value.map_err(|e| {
            let e = time_as_resource(contained_exit(e), now, timeout);
            let e = allow_key_hint(e);
            e.with_detail("code", json!(code))
        });
        Ok(Ran { value, output })
    }
}

/// A refusal inside names the `:allow` entry that would permit it, not the process's
/// `--allow-*` flag: the caller gives the sandbox its capabilities.
fn allow_key_hint(error: Error) -> Error {
    if !error.has_reason(&Reason::PermissionDenied) {
        return error;
    }
    let details = error.details();
    let (Some(capability), Some(flag)) = (
        details.get("capability").and_then(|c| c.as_str()),
        details.get("flag").and_then(|f| f.as_str()),
    ) else {
        return error;
    };
    let entry = match flag.split_once('=') {
        Some((_, value)) => format!("{{{capability:?} [{value:?}]}}"),
        None => format!("{{{capability:?} […]}}"),
    };
    let message = error.message().replace(
        &format!("pass {flag} to allow it"),
        &format!("give it :allow {entry} to allow it (within the caller's own)"),
    );
    error.with_message(message)
}

/// `(exit n)` in the child ends the child's code, not its caller's program.
fn contained_exit(error: Error) -> Error {
    match error.exit_code() {
        Some(code) => Error::eval(format!(
            "the code called (exit {code}): sandboxed code cannot end its caller"
        )),
        None => error,
    }
}

/// Builtins a child does not get: `read-line` would read its caller's standard input.
const WITHHELD: &[&str] = &["read-line"];

/// Builtins a child gets in another's place: what it writes to standard error is
/// captured with the rest of its output.
const REPLACED: &[(&str, &str)] = &[("eprint", "print"), ("eprintln", "println")];

/// The child's time running out is a `RESOURCE_EXHAUSTION` of time, as its fuel and
/// memory running out are.
fn time_as_resource(error: Error, started: Instant, timeout: Duration) -> Error {
    let elapsed = started.elapsed();
    if error.reason() != Some(Reason::ExecutionTimeout.as_str()) || elapsed < timeout {
        return error;
    }
    Error::resource(
        "time",
        elapsed.as_millis() as u64,
        timeout.as_millis() as u64,
        format!("the code ran longer than {:.3}s", timeout.as_secs_f64()),
    )
}

/// `value` as data the caller can hold: procedures and tasks (which close over the
/// child's environment) become their printed text.
pub fn copy_out(value: &Value) -> Result<Value> {
    let mut budget = Budget::new("eval-sandboxed", value);
    copy(value, 0, &mut budget)
}

/// How deeply nested a value copied out may be.
const MAX_DEPTH: usize = 10_000;

fn copy(value: &Value, depth: usize, budget: &mut Budget) -> Result<Value> {
    budget.visit()?;
    if depth > MAX_DEPTH {
        return Err(Error::resource(
            "depth",
            depth as u64,
            MAX_DEPTH as u64,
            "a value nested too deeply to copy out of the sandbox",
        ));
    }
    Ok(match value {
        Value::Closure(_) | Value::Task(_) | Value::Library | Value::Undefined => {
            Value::str(write_string(value))
        }
        Value::List(..) => {
            let list = value.as_list().unwrap_or_default();
            let mut items = Vec::with_capacity(list.len());
            for item in list.iter() {
                items.push(copy(&item, depth + 1, budget)?);
            }
            Value::list(items)
        }
        Value::Map(map) => {
            let mut entries = Entries::with_capacity(map.entries.len());
            for (key, item) in &map.entries {
                entries.insert(key.clone(), copy(item, depth + 1, budget)?);
            }
            Value::Map(Rc::new(Map {
                entries,
                task_result: map.task_result,
            }))
        }
        other => other.clone(),
    })
}

pub fn eval_sandboxed(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (rest, options) = split_options("eval-sandboxed", args, OPTIONS)?;
    let [code] = rest else {
        return Err(Error::eval(
            "eval-sandboxed: expected the code (text or data), then options",
        ));
    };
    let spec = Spec::parse("eval-sandboxed", interp, &options)?;
    let sandbox = Sandbox::new(interp, &spec)?;
    let ran = sandbox.run(interp, &code_text(code))?;
    let value = ran.value?;
    let mut entries = Entries::new();
    entries.insert(Rc::from("value"), value);
    entries.insert(Rc::from("output"), Value::str(ran.output));
    Ok(Value::map(entries))
}
