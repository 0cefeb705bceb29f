//! Task builtins: `get-task`, `task-names`, `reduce-task`, `pmap`, `set-provider!`,
//! `resource-metrics`.

use crate::builtins::builtin_table;
use crate::env::Env;
use crate::error::Result;
use crate::eval::Interp;
use crate::value::Value;

builtin_table! {
    /// `(task-names)`: the names of the registered tasks. `(task-names)` ⇒ `("summarize")`
    "task-names", 0, Some(0) => task_names;
}

fn task_names(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    Ok(Value::list(interp.tasks.names().into_iter().map(Value::from).collect()))
}
