//! The TaskLibrary: every registered task by name, findable by type and subtype.

use super::definition::{Task, TaskKind};
use super::table::TASK_TYPES;
use crate::error::{Error, Result};
use crate::value::{Entries, Value};
use indexmap::IndexMap;
use serde_json::json;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What registering did.
#[derive(Debug, PartialEq, Eq)]
pub enum Registered {
    New,
    /// The name was taken and `replace_on_redefine` is on (the REPL): the old task is gone.
    Replaced,
    /// The name was taken by the same `deftask` form (evaluated again, as in a function
    /// called twice) or the definition says `:replace true`: the old task is gone.
    Renewed,
}

/// Which `deftask` form made a task: one id per form analysed, so a form run again (a
/// function called twice, a loop) is known from another definition of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefinitionId(u64);

impl DefinitionId {
    pub fn fresh() -> DefinitionId {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        DefinitionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// How a task is being defined, for what a name already taken means.
#[derive(Clone, Copy, Default)]
pub struct Definition {
    /// The `deftask` form, when the task comes from one.
    pub id: Option<DefinitionId>,
    /// `:replace true`: the definition replaces whatever has the name.
    pub replace: bool,
}

/// Aliases followed before a lookup gives up: an alias of an alias is fine, a cycle is not.
const MAX_ALIAS_HOPS: usize = 16;

#[derive(Default)]
pub struct TaskLibrary {
    tasks: IndexMap<String, Rc<Task>>,
    /// `name → target`: another name for a task, looked up at each call, so the target
    /// may be registered after the alias.
    aliases: IndexMap<String, String>,
    /// The `deftask` form each task registered by one came from.
    definitions: HashMap<String, DefinitionId>,
    /// At the REPL a redefinition replaces the old task instead of failing.
    pub replace_on_redefine: bool,
}

impl TaskLibrary {
    /// Adds `task`, which no `deftask` form made (an MCP server's tool).
    pub fn register(&mut self, task: Rc<Task>) -> Result<Registered> {
        self.define(task, Definition::default())
    }

    /// Adds `task`. A name already registered is replaced when the same `deftask` form
    /// made it, when `definition` says `:replace true`, or at the REPL; otherwise it is a
    /// `VALIDATION_ERROR` naming the task and, when they are known, the files of both
    /// definitions. A task type's name is refused.
    pub fn define(&mut self, task: Rc<Task>, definition: Definition) -> Result<Registered> {
        refuse_type_name(&task.name)?;
        let same_form =
            definition.id.is_some() && self.definitions.get(&task.name) == definition.id.as_ref();
        let old = self.tasks.get(&task.name);
        let registered = match (old, self.aliases.contains_key(&task.name)) {
            (None, false) => Registered::New,
            _ if same_form || definition.replace => Registered::Renewed,
            _ if self.replace_on_redefine => Registered::Replaced,
            (Some(old), _) => return Err(duplicate_error(old, &task)),
            (None, true) => return Err(alias_taken(&task.name)),
        };
        self.aliases.shift_remove(&task.name);
        match definition.id {
            Some(id) => self.definitions.insert(task.name.clone(), id),
            None => self.definitions.remove(&task.name),
        };
        self.tasks.insert(task.name.clone(), task);
        Ok(registered)
    }

    /// Registers `name` as another name for the task `target`, which need not be
    /// registered yet: each lookup of `name` follows it.
    pub fn register_alias(&mut self, name: &str, target: &str) -> Result<Registered> {
        refuse_type_name(name)?;
        let taken = self.tasks.contains_key(name) || self.aliases.contains_key(name);
        if taken && !self.replace_on_redefine {
            return Err(alias_taken(name));
        }
        self.tasks.shift_remove(name);
        self.definitions.remove(name);
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

    /// The library as seed 004's nested dict, `{type {subtype {name task}}}`: the types
    /// that have tasks, in the table's order; a task with no subtype under `"none"`.
    pub fn nested(&self) -> Entries {
        TASK_TYPES
            .iter()
            .filter_map(|t| {
                let subtypes = self.of_type(t.kind);
                (!subtypes.is_empty()).then(|| (Rc::from(t.name), Value::map(subtypes)))
            })
            .collect()
    }

    /// `taskLibrary.KEY`: the tasks of a type when `KEY` names one, else the task
    /// registered as `KEY` (nil when there is none).
    pub fn field(&self, key: &str) -> Value {
        match TaskKind::parse(key) {
            Some(kind) => Value::map(self.of_type(kind)),
            None => self.get(key).map_or(Value::Nil, Value::Task),
        }
    }

    /// `{subtype {name task}}` of the tasks of one type, in registration order.
    fn of_type(&self, kind: TaskKind) -> Entries {
        let mut subtypes: IndexMap<&str, Entries> = IndexMap::new();
        for task in self.tasks.values().filter(|task| task.kind == kind) {
            subtypes
                .entry(task.subtype().unwrap_or(NO_SUBTYPE))
                .or_default()
                .insert(Rc::from(task.name.as_str()), Value::Task(task.clone()));
        }
        subtypes
            .into_iter()
            .map(|(subtype, tasks)| (Rc::from(subtype), Value::map(tasks)))
            .collect()
    }
}

/// Where the nested library puts a task that has no subtype.
const NO_SUBTYPE: &str = "none";

/// A task type's name would hide the task behind the type in `taskLibrary.NAME`.
fn refuse_type_name(name: &str) -> Result<()> {
    match TaskKind::parse(name) {
        Some(_) => Err(Error::validation(format!(
            "`{name}` is a task type and cannot name a task: choose another name"
        ))),
        None => Ok(()),
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
            lexical: None,
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
    fn the_same_deftask_form_replaces_its_own_task_and_no_other() {
        let mut library = TaskLibrary::default();
        let form = Definition {
            id: Some(DefinitionId::fresh()),
            replace: false,
        };
        let define = |library: &mut TaskLibrary, kind, definition| {
            library.define(task("t", kind, None, Some("a.sexp")), definition)
        };
        assert_eq!(
            define(&mut library, TaskKind::Atomic, form).unwrap(),
            Registered::New
        );
        assert_eq!(
            define(&mut library, TaskKind::Script, form).unwrap(),
            Registered::Renewed,
            "a function that defines the task, called again"
        );
        let other = Definition {
            id: Some(DefinitionId::fresh()),
            replace: false,
        };
        let refused = define(&mut library, TaskKind::Atomic, other).unwrap_err();
        assert_eq!(
            refused.message(),
            "task `t` is already registered (in a.sexp)"
        );
        let replacing = Definition {
            replace: true,
            ..other
        };
        assert_eq!(
            define(&mut library, TaskKind::Atomic, replacing).unwrap(),
            Registered::Renewed
        );
        assert!(
            define(&mut library, TaskKind::Script, form).is_err(),
            "the first form no longer holds the name"
        );
        assert!(library.get("t").is_some_and(|t| t.kind == TaskKind::Atomic));
    }

    #[test]
    fn task_types_name_no_task_and_read_as_the_nested_library() {
        let mut library = TaskLibrary::default();
        for name in ["atomic", "director_evaluator_loop"] {
            let e = library
                .register(task(name, TaskKind::Atomic, None, None))
                .unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Validation);
            assert!(library.register_alias(name, "x").is_err());
        }
        library
            .register(task("judge", TaskKind::Atomic, Some("evaluator"), None))
            .unwrap();
        library
            .register(task("ask", TaskKind::Atomic, None, None))
            .unwrap();
        library
            .register(task("run", TaskKind::Script, None, None))
            .unwrap();
        let nested = Value::map(library.nested());
        assert_eq!(
            crate::value::write_string(&nested),
            r#"{"atomic" {"evaluator" {"judge" #<task judge>} "none" {"ask" #<task ask>}} "script" {"none" {"run" #<task run>}}}"#
        );
        assert_eq!(crate::value::write_string(&library.field("reduce")), "{}");
        assert!(matches!(library.field("ask"), Value::Task(t) if t.name == "ask"));
        assert!(matches!(library.field("nobody"), Value::Nil));
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
