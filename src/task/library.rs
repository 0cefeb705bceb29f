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

/// Aliases followed before a lookup gives up: an alias of an alias is fine, a cycle is not.
const MAX_ALIAS_HOPS: usize = 16;

#[derive(Default)]
pub struct TaskLibrary {
    tasks: IndexMap<String, Rc<Task>>,
    /// `name → target`: another name for a task, looked up at each call, so the target
    /// may be registered after the alias.
    aliases: IndexMap<String, String>,
    /// At the REPL a redefinition replaces the old task instead of failing.
    pub replace_on_redefine: bool,
}

impl TaskLibrary {
    /// Adds `task`; a name already registered is a `VALIDATION_ERROR` naming the task and,
    /// when they are known, the files of both definitions.
    pub fn register(&mut self, task: Rc<Task>) -> Result<Registered> {
        if self.aliases.contains_key(&task.name) {
            if !self.replace_on_redefine {
                return Err(alias_taken(&task.name));
            }
            self.aliases.shift_remove(&task.name);
            self.tasks.insert(task.name.clone(), task);
            return Ok(Registered::Replaced);
        }
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

    /// Registers `name` as another name for the task `target`, which need not be
    /// registered yet: each lookup of `name` follows it.
    pub fn register_alias(&mut self, name: &str, target: &str) -> Result<Registered> {
        let taken = self.tasks.contains_key(name) || self.aliases.contains_key(name);
        if taken && !self.replace_on_redefine {
            return Err(alias_taken(name));
        }
        self.tasks.shift_remove(name);
        self.aliases.insert(name.to_owned(), target.to_owned());
        Ok(if taken {
            Registered::Replaced
        } else {
            Registered::New
        })
    }

    /// The task registered as `name`, following aliases.
    pub fn get(&self, name: &str) -> Option<Rc<Task>> {
        let mut name = name;
        for _ in 0..=MAX_ALIAS_HOPS {
            if let Some(task) = self.tasks.get(name) {
                return Some(task.clone());
            }
            name = self.aliases.get(name)?;
        }
        None
    }

    /// The tasks of a type (and subtype, if given), in registration order.
    pub fn by_type(&self, kind: Option<TaskKind>, subtype: Option<&str>) -> Vec<Rc<Task>> {
        self.tasks
            .values()
            .filter(|t| kind.is_none_or(|k| t.kind == k))
            .filter(|t| subtype.is_none_or(|s| t.subtype() == Some(s)))
            .cloned()
            .collect()
    }

    /// Every registered name (aliases too), sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tasks
            .keys()
            .chain(self.aliases.keys())
            .cloned()
            .collect();
        names.sort();
        names
    }
}

fn alias_taken(name: &str) -> Error {
    Error::validation(format!(
        "task `{name}` is already registered (as a task or an alias)"
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::env::Scope;
    use crate::eval::Node;
    use crate::task::definition::{Action, InheritContext};
    use crate::value::{Entries, Value};

    fn task(name: &str, kind: TaskKind, subtype: Option<&str>, origin: Option<&str>) -> Rc<Task> {
        Rc::new(Task {
            name: name.to_owned(),
            kind,
            subtype: subtype
                .map(|s| std::cell::OnceCell::from(s.to_owned()))
                .unwrap_or_default(),
            description: None,
            params: Vec::new(),
            scope: Scope::new(Vec::new()),
            issues_slot: None,
            json_output: false,
            strict_json: false,
            schema: None,
            model: None,
            options: crate::provider::ModelOptions::default(),
            tools: Vec::new(),
            constraints: Default::default(),
            param_types: std::collections::HashMap::new(),
            input_schema: None,
            context: InheritContext::Full,
            max_turns: None,
            cache: false,
            approve: false,
            retries: 0,
            audits: Vec::new(),
            extra_metadata: Entries::new(),
            origin: origin.map(str::to_owned),
            span: None,
            action: Action::Body(Rc::new(Node::Const(Value::Nil)), None),
            home: None,
        })
    }

    #[test]
    fn duplicates_name_the_task_and_both_files() {
        let mut library = TaskLibrary::default();
        let first = task("t", TaskKind::Atomic, None, Some("a.xml"));
        assert_eq!(library.register(first).unwrap(), Registered::New);
        let e = library
            .register(task("t", TaskKind::Atomic, None, Some("b.xml")))
            .unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::Validation);
        assert_eq!(
            e.message(),
            "task `t` is already registered: defined in a.xml and again in b.xml"
        );
        assert_eq!(e.details()["files"], serde_json::json!(["a.xml", "b.xml"]));
        let same_file = library.register(task("t", TaskKind::Atomic, None, Some("a.xml")));
        assert_eq!(
            same_file.unwrap_err().message(),
            "task `t` is already registered (in a.xml)"
        );
    }

    #[test]
    fn aliases_are_followed_at_each_lookup() {
        let mut library = TaskLibrary::default();
        assert_eq!(
            library.register_alias("write", "draft").unwrap(),
            Registered::New
        );
        library.register_alias("pen", "write").unwrap();
        assert!(
            library.get("write").is_none(),
            "the target is not registered yet"
        );
        library
            .register(task("draft", TaskKind::Atomic, None, None))
            .unwrap();
        assert_eq!(
            library.get("pen").map(|t| t.name.clone()).as_deref(),
            Some("draft")
        );
        assert_eq!(library.names(), ["draft", "pen", "write"]);
        assert!(
            library.register_alias("draft", "x").is_err(),
            "a task's name"
        );
        assert!(
            library.register_alias("write", "x").is_err(),
            "an alias's name"
        );
        let e = library
            .register(task("write", TaskKind::Atomic, None, None))
            .unwrap_err();
        assert_eq!(
            e.message(),
            "task `write` is already registered (as a task or an alias)"
        );
        library.register_alias("a", "b").unwrap();
        library.register_alias("b", "a").unwrap();
        assert!(library.get("a").is_none(), "a cycle ends");
    }

    #[test]
    fn redefinition_replaces_when_asked() {
        let mut library = TaskLibrary {
            replace_on_redefine: true,
            ..TaskLibrary::default()
        };
        library
            .register(task("t", TaskKind::Atomic, None, None))
            .unwrap();
        let replaced = library.register(task("t", TaskKind::Script, None, None));
        assert_eq!(replaced.unwrap(), Registered::Replaced);
        assert!(library.get("t").is_some_and(|t| t.kind == TaskKind::Script));
    }

    #[test]
    fn lookup_by_type_and_subtype_keeps_registration_order() {
        let mut library = TaskLibrary::default();
        for (name, kind, subtype) in [
            ("z", TaskKind::Atomic, Some("evaluator")),
            ("a", TaskKind::Atomic, None),
            ("s", TaskKind::Script, None),
        ] {
            library.register(task(name, kind, subtype, None)).unwrap();
        }
        let names = |kind, subtype| -> Vec<String> {
            library
                .by_type(kind, subtype)
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(names(Some(TaskKind::Atomic), None), ["z", "a"]);
        assert_eq!(names(None, Some("evaluator")), ["z"]);
        assert_eq!(names(Some(TaskKind::Composite), None), Vec::<String>::new());
        assert_eq!(library.names(), ["a", "s", "z"]);
    }
}
