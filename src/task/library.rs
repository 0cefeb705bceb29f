//! The TaskLibrary: every registered task by name, findable by type and subtype.

use super::definition::{Task, TaskKind};
use crate::error::{Error, Result};
use indexmap::IndexMap;
use serde_json::json;
use std::rc::Rc;

/// What registering did.
#[derive(Debug, PartialEq, Eq)]
pub enum Registered {
    New,
    /// The name was taken and `replace_on_redefine` is on (the REPL): the old task is gone.
    Replaced,
}

#[derive(Default)]
pub struct TaskLibrary {
    tasks: IndexMap<String, Rc<Task>>,
    /// At the REPL a redefinition replaces the old task instead of failing.
    pub replace_on_redefine: bool,
}

impl TaskLibrary {
    /// Adds `task`; a name already registered is a `VALIDATION_ERROR` naming the task and,
    /// when they are known, the files of both definitions.
    pub fn register(&mut self, task: Rc<Task>) -> Result<Registered> {
        if let Some(old) = self.tasks.get(&task.name) {
            if !self.replace_on_redefine {
                return Err(duplicate_error(old, &task));
            }
            self.tasks.insert(task.name.clone(), task);
            return Ok(Registered::Replaced);
        }
        self.tasks.insert(task.name.clone(), task);
        Ok(Registered::New)
    }

    pub fn get(&self, name: &str) -> Option<Rc<Task>> {
        self.tasks.get(name).cloned()
    }

    /// The tasks of a type (and subtype, if given), in registration order.
    pub fn by_type(&self, kind: Option<TaskKind>, subtype: Option<&str>) -> Vec<Rc<Task>> {
        self.tasks
            .values()
            .filter(|t| kind.is_none_or(|k| t.kind == k))
            .filter(|t| subtype.is_none_or(|s| t.subtype.as_deref() == Some(s)))
            .cloned()
            .collect()
    }

    /// Every registered name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tasks.keys().cloned().collect();
        names.sort();
        names
    }
}

fn duplicate_error(old: &Task, new: &Task) -> Error {
    let place = |t: &Task| {
        t.origin
            .clone()
            .unwrap_or_else(|| "<interactive>".to_owned())
    };
    let message = match (&old.origin, &new.origin) {
        (Some(first), Some(second)) if first != second => format!(
            "task `{}` is already registered: defined in {first} and again in {second}",
            new.name
        ),
        _ => format!(
            "task `{}` is already registered (in {})",
            new.name,
            place(old)
        ),
    };
    Error::validation(message).with_details(json!({
        "task": new.name,
        "files": [place(old), place(new)],
    }))
}
