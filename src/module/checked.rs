//! What `tasklisp check` has learned of the tasks of the files it read, so that files
//! may refer to each other's tasks in any order.
//!
//! Kept as plain Rust data owned by the check, not as interpreter globals: one entry per
//! task is a name, a file number and the parameters — a checked file of 200,000 tasks
//! must fit in little memory.

use super::canonical;
use crate::eval::reader::Syntax;
use crate::xml::Param;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// The tasks of the checked files (interior mutability: the XML reader's callbacks
/// record tasks while references are looked up).
#[derive(Default)]
pub struct Checked {
    inner: RefCell<Inner>,
}

#[derive(Default)]
struct Inner {
    files: Vec<CheckedFile>,
    by_canonical: HashMap<String, usize>,
    tasks: HashMap<Box<str>, CheckedTask>,
    /// The forms of `.sexp` files read when their tasks were declared, kept until the
    /// file is checked (so it is read once).
    forms: HashMap<usize, Vec<Syntax>>,
}

struct CheckedFile {
    /// The path as it was written, for messages.
    shown: String,
    /// Its tasks were all read and recorded before it was checked.
    declared: bool,
}

struct CheckedTask {
    file: usize,
    /// `None` for an alias of a task not known yet: calls of it are left unchecked.
    params: Option<Box<[Param]>>,
}

/// The parameters of every task known to a check, by name (`None` where not known).
pub type TaskParams = HashMap<String, Option<Vec<Param>>>;

impl Checked {
    /// The number of the file at `path` (the same for every spelling of its path).
    pub fn file(&self, path: &Path) -> usize {
        self.file_as(path, None)
    }

    /// The number of the file at `path` imported under `alias`: its tasks have other
    /// names than those of the same file imported without one.
    pub fn file_as(&self, path: &Path, alias: Option<&str>) -> usize {
        let mut key = canonical(path);
        if let Some(alias) = alias {
            key.push_str(" as ");
            key.push_str(alias);
        }
        let mut inner = self.inner.borrow_mut();
        if let Some(index) = inner.by_canonical.get(&key) {
            return *index;
        }
        let index = inner.files.len();
        inner.files.push(CheckedFile {
            shown: path.display().to_string(),
            declared: false,
        });
        inner.by_canonical.insert(key, index);
        index
    }

    pub fn record(&self, name: &str, file: usize, params: Option<&[Param]>) {
        let task = CheckedTask {
            file,
            params: params.map(Box::from),
        };
        self.inner.borrow_mut().tasks.insert(Box::from(name), task);
    }

    /// The file (as written) of the task `name` when a file other than `file` defines it.
    pub fn defined_elsewhere(&self, name: &str, file: usize) -> Option<String> {
        let inner = self.inner.borrow();
        let task = inner.tasks.get(name).filter(|task| task.file != file)?;
        inner.files.get(task.file).map(|f| f.shown.clone())
    }

    pub fn is_declared(&self, file: usize) -> bool {
        self.inner
            .borrow()
            .files
            .get(file)
            .is_some_and(|f| f.declared)
    }

    pub fn mark_declared(&self, file: usize) {
        if let Some(f) = self.inner.borrow_mut().files.get_mut(file) {
            f.declared = true;
        }
    }

    pub fn keep_forms(&self, file: usize, forms: Vec<Syntax>) {
        self.inner.borrow_mut().forms.insert(file, forms);
    }

    /// The forms kept for `file` by [`Checked::keep_forms`], handed over once.
    pub fn take_forms(&self, file: usize) -> Option<Vec<Syntax>> {
        self.inner.borrow_mut().forms.remove(&file)
    }

    /// `None` if no checked file defines `name`; otherwise its parameters, when known.
    pub fn params(&self, name: &str) -> Option<Option<Vec<Param>>> {
        let inner = self.inner.borrow();
        let task = inner.tasks.get(name)?;
        Some(task.params.as_deref().map(<[Param]>::to_vec))
    }

    pub fn names(&self) -> Vec<String> {
        let inner = self.inner.borrow();
        inner.tasks.keys().map(|k| k.to_string()).collect()
    }

    /// Every checked task's parameters, handed over without copying them.
    pub fn into_params(self) -> TaskParams {
        let tasks = self.inner.into_inner().tasks;
        tasks
            .into_iter()
            .map(|(name, task)| (name.into_string(), task.params.map(Vec::from)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_known_by_file_and_parameters() {
        let checked = Checked::default();
        let a = checked.file(Path::new("Cargo.toml"));
        let b = checked.file(Path::new("src/lib.rs"));
        assert_eq!(checked.file(Path::new("./Cargo.toml")), a);
        assert_ne!(checked.file_as(Path::new("Cargo.toml"), Some("c")), a);
        let params = [Param {
            name: "x".into(),
            optional: true,
        }];
        checked.record("t", a, Some(&params));
        checked.record("alias", a, None);
        assert_eq!(checked.params("t"), Some(Some(params.to_vec())));
        assert_eq!(checked.params("alias"), Some(None));
        assert_eq!(checked.params("nothing"), None);
        assert_eq!(checked.defined_elsewhere("t", a), None);
        assert_eq!(
            checked.defined_elsewhere("t", b).as_deref(),
            Some("Cargo.toml")
        );
        assert!(!checked.is_declared(a));
        checked.mark_declared(a);
        assert!(checked.is_declared(a));
        let mut names = checked.names();
        names.sort();
        assert_eq!(names, ["alias", "t"]);
        assert_eq!(checked.into_params().len(), 2);
    }
}
