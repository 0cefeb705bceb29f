//! `(script program arg…)`: what a script task does without the task layer —
//! `run_script` through `run_blocking` — as a builtin for the pmap tests and benchmark.

use tasklisp::builtins::Builtin;
use tasklisp::env::Env;
use tasklisp::eval::fiber::run_blocking;
use tasklisp::process::ProcessSpec;
use tasklisp::provider::Cancel;
use tasklisp::task::script::run_script;
use tasklisp::{Interp, Result, Value};

pub static SCRIPT: Builtin = Builtin {
    name: "script",
    min_args: 1,
    max_args: None,
    func: script,
    doc: "`(script program arg…)`: runs a program through run_script, returns its stdout.",
};

fn script(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let argv = args.iter().map(tasklisp::value::display_string).collect();
    let output = run_blocking(interp, move || {
        run_script(&ProcessSpec::new(argv), &Cancel::default())
    })?;
    Ok(Value::from(output.stdout.as_str()))
}
