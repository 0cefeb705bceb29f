//! Calling a procedure or a task for each item of a list: a task used as a predicate is
//! judged by its answer (`parsedContent` true or false), and an error raised for an item
//! says which item it was.

use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::Value;
use serde_json::json;

/// Whether `f` holds for `args`. A procedure's value counts by its truth; a task's
/// result by its `parsedContent`, which must be a boolean.
pub fn judge(interp: &Interp, f: &Value, args: &[Value], env: &Env) -> Result<bool> {
    let answer = interp.apply(f, args, env)?;
    let Value::Task(task) = f else {
        return Ok(answer.is_truthy());
    };
    task.verdict(&answer)
}

/// An error raised for item `index` of a batch (`map`, `for-each`, `filter`, `pmap`,
/// `reduce-task`): `details.index` and `item N` in the message. An error that already
/// names an item (from an inner batch) and a request to exit pass unchanged.
pub fn for_item(error: Error, index: usize) -> Error {
    if error.exit_code().is_some() || error.details().contains_key("index") {
        return error;
    }
    let message = format!("item {index}: {}", error.message());
    error
        .with_message(message)
        .with_detail("index", json!(index))
}
