//! Code the model writes (the sandbox layer, `LAYER`): `check-code` looks at a program
//! before it runs, `eval-sandboxed` runs it in a fresh interpreter with less than its
//! caller may do, and `code-agent` loops a model through writing, checking and running
//! such programs until it calls `final-answer`.
//!
//! A program is data until it runs, and the interpreter is the whole world it can see:
//! the child interpreter gets the prelude, the builtins, the tasks and bindings it is
//! given and the capabilities its caller has and it asks for, nothing else. Its fuel,
//! time and memory are its own; its model calls go through its caller's session and
//! budgets and appear in the run log under the caller's task call.

mod agent;
mod check;
mod child;
mod grammar;

use crate::builtins::{builtin_table, fixed_args};
use crate::error::Result;
use crate::eval::env::Env;
use crate::eval::layer::Layer;
use crate::eval::Interp;
use crate::value::Value;
use std::cell::RefCell;

pub use child::copy_out;

/// The sandbox layer: its builtins.
pub static LAYER: Layer = Layer {
    name: "sandbox",
    builtins: &[("Code the model writes", BUILTINS)],
    forms: &[],
    keeps_mark: None,
};

builtin_table! {
    /// `(check-code code :tasks [names…] :env {…} :allow {…})`: the problems `tasklisp check` would report of `code` (text, or data as its printed text) seen with the prelude, the builtins, the named tasks and the `:env` bindings — unbound names, wrong arity, task calls whose arguments cannot bind, capabilities it needs that `:allow` does not give (default: none), syntax errors — as `{"message" … "line" … "column" … "kind" …}` maps, empty when there are none; nothing runs. `(check-code "(+ 1 (frobnicate 2))")` ⇒ `({"message" "unbound symbol: frobnicate" "line" 1 "column" 7 "kind" "unbound"})`
    "check-code", 1, Some(7) => check::check_code;
    /// `(eval-sandboxed code :tasks [names…] :env {…} :allow {…} :fuel n :timeout seconds :max-memory bytes)`: runs `code` in a fresh interpreter that sees the prelude, the builtins, the named tasks and the `:env` bindings; its capabilities are `:allow` (keys `"exec" "read" "write" "env" "provider" "net"`, each a list as the `--allow-*` flags take; default: none) within the caller's; fuel (default 1000000 steps), time (10 s) and memory (64 MiB) are its own, each `RESOURCE_EXHAUSTION` when passed. Returns `{"value" v "output" text}` (what it printed, captured; the value copied out as data); an error inside is raised with `details.code`. `(eval-sandboxed "(print \"hi\") (+ 1 2)")` ⇒ `{"value" 3 "output" "hi"}`
    "eval-sandboxed", 1, Some(13) => child::eval_sandboxed;
    /// `(code-agent goal :tools [tasks…] :max-steps n :allow {…} :model m :system s)`: asks the model for tasklisp code to reach `goal`, the tools (tasks) described by name, parameters and description; each answer is checked with `check-code` (problems go back without running it), then run with `eval-sandboxed` (the tools as its tasks; definitions carry from step to step), and what it printed and its value or error go back. Code ends the run with `(final-answer x)`: a TaskResult with `content` x (JSON text when data), `parsedContent` x when data, `notes.steps` (each step's `code`, `problems`, `output`, `value` or `error`) and `notes.iterations`; after `:max-steps` (default 8) without one, the last step with status `CONTINUATION`. `(code-agent "What is 6 times 7?" :max-steps 3)`
    "code-agent", 1, Some(17) => agent::code_agent;
    /// `(final-answer x)`: inside a code agent's step, ends the agent's run with `x` as its answer; returns `x`. `(final-answer 42)` ⇒ `42`
    "final-answer", 1, Some(1) => final_answer;
}

/// The answer the code running in an interpreter gave with `final-answer`, if any.
#[derive(Default)]
pub struct FinalAnswer(RefCell<Option<Value>>);

impl FinalAnswer {
    /// Takes the answer given since the last call.
    pub fn take(interp: &Interp) -> Option<Value> {
        interp.layer_state::<FinalAnswer>().0.borrow_mut().take()
    }
}

fn final_answer(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [answer] = fixed_args("final-answer", args)?;
    *interp.layer_state::<FinalAnswer>().0.borrow_mut() = Some(answer.clone());
    Ok(answer.clone())
}
