//! What an interpreter has imported and checked, kept in hidden globals (their names
//! contain spaces, which no program can write), and what is known of the parameters of
//! the tasks a template refers to.

use crate::eval::Interp;
use crate::symbol::Sym;
use crate::value::{Entries, Map, Value};
use crate::xml::Param;
use std::rc::Rc;

/// `task name → (canonical file, file as written)` for every task imported from XML.
pub const TASK_FILES: &str = "*imported tasks*";
/// `file + alias → true` for every `.sexp` module imported.
pub const MODULE_FILES: &str = "*imported modules*";
/// `task name → {file, shown, params}` for the tasks of files `tasklisp check` has seen.
pub const CHECKED_TASKS: &str = "*checked tasks*";
/// `canonical file → true` for the XML files `tasklisp check` has read and validated
/// whole, their tasks recorded in `CHECKED_TASKS`.
pub const DECLARED_FILES: &str = "*declared template files*";
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

pub fn record_import(interp: &Interp, task: &str, canonical: &str, shown: &str) {
    let entry = Value::list(vec![Value::str(canonical), Value::str(shown)]);
    registry_insert(interp, TASK_FILES, task, entry);
}

/// `None` if no task is called `name`; otherwise its parameters, when they are known.
pub fn library_params(interp: &Interp, name: &str) -> Option<Option<Vec<Param>>> {
    if let Some(checked) = registry_get(interp, CHECKED_TASKS, name) {
        return Some(
            checked
                .as_map()
                .and_then(|m| m.get("params"))
                .and_then(params_of),
        );
    }
    let task = interp.tasks.get(name)?;
    let params = task.params.iter().map(|p| Param {
        name: p.name.name().to_owned(),
        optional: p.default.is_some(),
    });
    Some(Some(params.collect()))
}

pub fn params_value(params: &[Param]) -> Value {
    Value::list(
        params
            .iter()
            .map(|p| {
                let mut entry = Entries::new();
                entry.insert(Rc::from("name"), Value::str(p.name.as_str()));
                entry.insert(Rc::from("optional"), Value::Bool(p.optional));
                Value::map(entry)
            })
            .collect(),
    )
}

/// Reads a task's `params` in the forms a definition may list them: names, `(name
/// default)` lists, or maps with `name` and `default` / `optional` / `required`.
///
/// A list of bare names does not say which parameters have defaults, so they are all
/// taken as optional: a `<task ref>` then passes those its template declares, and a
/// required one it cannot pass is reported by the call (`input_validation_failure`)
/// rather than guessed from whatever is bound where the step runs.
fn params_of(value: &Value) -> Option<Vec<Param>> {
    let list = value.as_list()?;
    let bare_name = |item: &Value| {
        item.as_str()
            .or_else(|| item.symbol_name())
            .map(str::to_owned)
    };
    let bare_names = list.iter().all(|item| bare_name(&item).is_some());
    let params: Option<Vec<Param>> = list
        .iter()
        .map(|item| match &item {
            Value::List(..) => {
                let parts = item.as_list()?;
                let name = bare_name(&parts.get(0)?)?;
                Some(Param {
                    name,
                    optional: parts.len() > 1,
                })
            }
            Value::Map(map) => Some(Param {
                name: map.get("name")?.as_str()?.to_owned(),
                optional: map_says_optional(map),
            }),
            other => bare_name(other).map(|name| Param {
                name,
                optional: false,
            }),
        })
        .collect();
    params.map(|params| {
        params
            .into_iter()
            .map(|p| Param {
                optional: p.optional || bare_names,
                ..p
            })
            .collect()
    })
}

fn map_says_optional(map: &Map) -> bool {
    map.get("default")
        .is_some_and(|d| !matches!(d, Value::Undefined))
        || matches!(map.get("optional"), Some(Value::Bool(true)))
        || matches!(map.get("required"), Some(Value::Bool(false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read_source;

    fn params(code: &str) -> Option<Vec<(String, bool)>> {
        let value =
            crate::eval::quote::syntax_to_value(&read_source("<params-test>", code).unwrap()[0]);
        params_of(&value).map(|ps| ps.into_iter().map(|p| (p.name, p.optional)).collect())
    }

    #[test]
    fn parameters_are_read_in_every_form_a_definition_lists_them() {
        let both = Some(vec![("text".to_owned(), false), ("style".to_owned(), true)]);
        assert_eq!(params(r#"("text" ("style" "brief"))"#), both);
        assert_eq!(params(r#"(text (style "brief"))"#), both);
        assert_eq!(
            params(r#"({"name" "text"} {"name" "style" "default" "brief"})"#),
            both
        );
        assert_eq!(
            params(r#"({"name" "text" "required" true} {"name" "style" "optional" true})"#),
            both
        );
        assert_eq!(
            params(r#"("a" b)"#),
            Some(vec![("a".to_owned(), true), ("b".to_owned(), true)])
        );
        assert_eq!(params("nil"), None);
        assert_eq!(params("(1 2)"), None);
    }
}
