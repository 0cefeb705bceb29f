//! What an interpreter has imported and checked, kept in hidden globals (their names
//! contain spaces, which no program can write), and what is known of the parameters of
//! the tasks a template refers to.

use crate::eval::Interp;
use crate::symbol::Sym;
use crate::value::{Map, Value};
use crate::xml::Param;
use std::rc::Rc;

/// `task name → (canonical file, file as written)` for every task imported from XML.
pub const TASK_FILES: &str = "*imported tasks*";
/// `file + alias → true` for every `.sexp` module imported.
pub const MODULE_FILES: &str = "*imported modules*";
/// `canonical file → (file as written, alias or nil, modification time in ns)` for every
/// file imported, so `:reload` can find the ones that changed.
pub const IMPORTED_FILES: &str = "*imported files*";

/// A file imported so far: as written, under which alias, and when it was last changed.
pub struct ImportedFile {
    pub shown: String,
    pub alias: Option<String>,
    pub modified: i64,
}

pub fn record_file(
    interp: &Interp,
    canonical: &str,
    shown: &str,
    alias: Option<&str>,
    modified: i64,
) {
    let alias = alias.map_or(Value::Nil, Value::str);
    let entry = Value::list(vec![Value::str(shown), alias, Value::Int(modified)]);
    registry_insert(interp, IMPORTED_FILES, canonical, entry);
}

pub fn imported_files(interp: &Interp) -> Vec<ImportedFile> {
    let Some(registry) = interp.global(Sym::new(IMPORTED_FILES)) else {
        return Vec::new();
    };
    let Some(map) = registry.as_map() else {
        return Vec::new();
    };
    map.entries
        .values()
        .filter_map(|entry| {
            let parts = entry.as_list()?.to_vec();
            let [Value::Str(shown), alias, Value::Int(modified)] = parts.as_slice() else {
                return None;
            };
            Some(ImportedFile {
                shown: shown.to_string(),
                alias: alias.as_str().map(str::to_owned),
                modified: *modified,
            })
        })
        .collect()
}

pub fn registry_get(interp: &Interp, registry: &str, key: &str) -> Option<Value> {
    interp
        .global(Sym::new(registry))?
        .as_map()?
        .get(key)
        .cloned()
}

pub fn registry_insert(interp: &Interp, registry: &str, key: &str, value: Value) {
    let sym = Sym::new(registry);
    let current = interp.global(sym);
    // Drop the global's reference first so the map is updated in place, not copied.
    interp.define_global(sym, Value::Nil);
    let mut map = match current {
        Some(Value::Map(map)) => map,
        _ => Rc::new(Map::default()),
    };
    Rc::make_mut(&mut map).entries.insert(Rc::from(key), value);
    interp.define_global(sym, Value::Map(map));
}

/// The file a task was imported from: its canonical path (which identifies it) and the
/// path as it was written (for messages).
pub fn imported_from(interp: &Interp, task: &str) -> Option<(String, String)> {
    let entry = registry_get(interp, TASK_FILES, task)?.as_list()?;
    let text = |i: usize| entry.get(i).and_then(|v| v.as_str().map(str::to_owned));
    Some((text(0)?, text(1)?))
}

/// The file the tasks of one import come from, recorded against each of them (its two
/// strings shared by all).
pub struct ImportOrigin {
    canonical: Value,
    shown: Value,
}

impl ImportOrigin {
    pub fn new(canonical: &str, shown: &str) -> ImportOrigin {
        ImportOrigin {
            canonical: Value::str(canonical),
            shown: Value::str(shown),
        }
    }

    pub fn record(&self, interp: &Interp, task: &str) {
        let entry = Value::list(vec![self.canonical.clone(), self.shown.clone()]);
        registry_insert(interp, TASK_FILES, task, entry);
    }
}

/// `None` if no task is called `name`; otherwise its parameters, when they are known.
pub fn library_params(interp: &Interp, name: &str) -> Option<Option<Vec<Param>>> {
    let task = interp.tasks.get(name)?;
    let params = task.params.iter().map(|p| Param {
        name: p.name.name().to_owned(),
        optional: p.default.is_some(),
    });
    Some(Some(params.collect()))
}
