//! `(script program arg…)`: what a script task does without the task layer —
//! `run_script` through `run_blocking` — as a builtin for the pmap tests and benchmark.

use tasklisp::internals::builtins::Builtin;
use tasklisp::internals::eval::env::Env;
use tasklisp::internals::eval::fiber::run_blocking;
use tasklisp::internals::process::ProcessSpec;
use tasklisp::internals::task::script::run_script;
use tasklisp::Cancel;
use tasklisp::{Interp, Result, Value};

pub static SCRIPT: Builtin = Builtin {
    name: "script",
    min_args: 1,
    max_args: None,
    func: script,
    doc: "`(script program arg…)`: runs a program through run_script, returns its stdout.",
};

fn script(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let argv = args.iter().map(tasklisp::display_string).collect();
    let output = run_blocking(interp, move || {
        run_script(&ProcessSpec::new(argv), &Cancel::default())
    })?;
    Ok(Value::from(output.stdout.as_str()))
}
