//! Tasks: definitions, the TaskLibrary, calls and results (SPEC §6).

pub mod builtins;
pub mod forms;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::Value;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A registered task.
pub struct Task {
    pub name: String,
    pub kind: String,
    pub subtype: Option<String>,
    pub description: Option<String>,
}

impl Task {
    /// A task reads like a map of its definition.
    pub fn field(&self, key: &str) -> Value {
        match key {
            "name" => Value::from(self.name.as_str()),
            "type" => Value::from(self.kind.as_str()),
            "subtype" => self.subtype.as_deref().map_or(Value::Nil, Value::from),
            "description" => self.description.as_deref().map_or(Value::Nil, Value::from),
            _ => Value::Nil,
        }
    }

    pub fn describe_json(&self) -> Json {
        serde_json::json!({
            "name": self.name,
            "type": self.kind,
            "subtype": self.subtype,
            "description": self.description,
        })
    }
}

/// The task runtime of one interpreter: the TaskLibrary and provider state.
#[derive(Default)]
pub struct Runtime {
    library: RefCell<HashMap<String, Rc<Task>>>,
}

impl Runtime {
    pub fn task_value(&self, name: &str) -> Option<Value> {
        self.library.borrow().get(name).cloned().map(Value::Task)
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.library.borrow().keys().cloned().collect();
        names.sort();
        names
    }
}

/// Calls a task with evaluated arguments from the environment `env`.
pub fn call(_interp: &Interp, task: &Rc<Task>, _args: &[Value], _env: &Env) -> Result<Value> {
    Err(Error::task_failure(
        "unexpected_error",
        format!("task {} cannot run yet", task.name),
    ))
}

/// Provider configuration from flags and the environment.
#[derive(Clone, Debug, Default)]
pub struct ProviderSettings {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

impl Runtime {
    pub fn configure(&self, settings: ProviderSettings) -> Result<()> {
        match settings.provider.as_deref() {
            None | Some("echo") => Ok(()),
            Some(other) => Err(Error::task_failure("llm_error", format!("unknown provider: {other}"))),
        }
    }
}

/// Imports an XML template file or `.sexp` module into the global environment.
pub fn import_file(_interp: &Interp, path: &std::path::Path, _alias: Option<&str>) -> Result<()> {
    Err(Error::validation(format!("cannot import {} yet", path.display())))
}

/// Reads and checks a `.sexp` or `.xml` file without running it.
pub fn check_file(interp: &Interp, path: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::eval(format!("cannot read {}: {e}", path.display())))?;
    let forms = crate::reader::read_source(&path.display().to_string(), &text)?;
    for form in &forms {
        crate::eval::Compiler::new(interp).compile(form)?;
    }
    Ok(())
}
