//! Modules: the `import` and `load` special forms, `--import`, and `tasklisp check`.
//!
//! `(import "x.xml")` registers the tasks of an XML template file (see `crate::xml`);
//! `(import "m.sexp")` runs a module's definitions. Both are imported once per
//! interpreter: a second import of the same file (with the same `:as`) does nothing.
//! `(load "f.sexp")` runs a file every time. Paths are relative to the file being loaded;
//! the file is pushed on `interp.loading` while it runs, so the paths inside it resolve
//! against it and a cycle of imports is found instead of recursing forever.
//!
//! What has been imported is kept in hidden globals (their names contain spaces, which
//! no program can write), so this module needs no field of its own in `Interp`.

mod namespace;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::ast::{Extension, Node};
use crate::eval::{Compiler, Interp};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::forms::SpecialForm;
use crate::value::{Entries, Map, Value};
use crate::xml::{self, Param};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// `task name → file` for every task imported from XML.
const TASK_FILES: &str = "*imported tasks*";
/// `file + alias → true` for every `.sexp` module imported.
const MODULE_FILES: &str = "*imported modules*";
/// `task name → {file, params}` for the tasks of files `tasklisp check` has seen.
const CHECKED_TASKS: &str = "*checked tasks*";

/// The special forms this module defines.
pub fn special_form(name: &str) -> Option<SpecialForm> {
    match name {
        "import" => Some(import_form),
        "load" => Some(load_form),
        _ => None,
    }
}

const IMPORT_USAGE: &str = "(import \"file\" [:as name] [:only (task…)])";

/// `(import FILE [:as name] [:only (a b)])`: FILE is evaluated, the options are not.
fn import_form(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let Some(file) = items.get(1) else {
        return Err(Error::syntax(
            format!("bad syntax: expected {IMPORT_USAGE}"),
            span,
        ));
    };
    let mut alias = None;
    let mut only = None;
    for pair in items.get(2..).unwrap_or(&[]).chunks(2) {
        let (key, value) = match pair {
            [key, value] => (key, value),
            [key] => {
                return Err(Error::syntax(
                    format!("this option needs a value: {IMPORT_USAGE}"),
                    key.span,
                ))
            }
            _ => continue,
        };
        match &key.kind {
            SyntaxKind::Keyword(k) if k.name() == "as" => alias = Some(alias_name(value)?),
            SyntaxKind::Keyword(k) if k.name() == "only" => only = Some(only_names(value)?),
            _ => {
                return Err(Error::syntax(
                    format!("unknown import option; expected {IMPORT_USAGE}"),
                    key.span,
                ))
            }
        }
    }
    Ok(Node::Extension(Box::new(ImportNode {
        file: compiler.compile(file)?,
        alias,
        only,
        span,
    })))
}

fn alias_name(syntax: &Syntax) -> Result<String> {
    match syntax.kind {
        SyntaxKind::Symbol(s) if !s.name().contains('/') => Ok(s.name().to_owned()),
        _ => Err(Error::syntax(
            "`:as` takes a plain name, as in `:as rv`",
            syntax.span,
        )),
    }
}

fn only_names(syntax: &Syntax) -> Result<Vec<(String, Span)>> {
    let bad = || {
        Error::syntax(
            "`:only` takes a list of task names, as in `:only (summarize classify)`",
            syntax.span,
        )
    };
    let items = match &syntax.kind {
        SyntaxKind::List(items) | SyntaxKind::Vector(items) => items,
        _ => return Err(bad()),
    };
    items
        .iter()
        .map(|item| {
            item.as_symbol()
                .map(|s| (s.name().to_owned(), item.span))
                .ok_or_else(bad)
        })
        .collect()
}

struct ImportNode {
    file: Node,
    alias: Option<String>,
    only: Option<Vec<(String, Span)>>,
    span: Span,
}

impl Extension for ImportNode {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let file = file_name(interp, &self.file, env, "import")?;
        import(
            interp,
            &interp.resolve_path(&file),
            self.alias.as_deref(),
            self.only.as_deref(),
        )
        .map_err(|e| e.or_span(self.span))
    }
}

/// `(load FILE)`: runs a `.sexp` file in the global environment; its last value.
fn load_form(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let [_, file] = items else {
        return Err(Error::syntax(
            "bad syntax: expected (load \"file.sexp\")",
            span,
        ));
    };
    Ok(Node::Extension(Box::new(LoadNode {
        file: compiler.compile(file)?,
        span,
    })))
}

struct LoadNode {
    file: Node,
    span: Span,
}

impl Extension for LoadNode {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let file = file_name(interp, &self.file, env, "load")?;
        load(interp, &interp.resolve_path(&file)).map_err(|e| e.or_span(self.span))
    }
}

fn file_name(interp: &Interp, node: &Node, env: &Env, who: &str) -> Result<String> {
    match interp.eval(node, env)? {
        Value::Str(s) => Ok(s.to_string()),
        other => Err(crate::builtins::type_error(
            who,
            "a file name (a string)",
            &other,
        )),
    }
}

/// Imports an XML template file or a `.sexp` module (what `--import FILE` does).
pub fn import_file(interp: &Interp, path: &Path, alias: Option<&str>) -> Result<()> {
    import(interp, path, alias, None).map(|_| ())
}

/// Imports `path`; returns the names it bound (as strings), empty if it was imported
/// before.
pub fn import(
    interp: &Interp,
    path: &Path,
    alias: Option<&str>,
    only: Option<&[(String, Span)]>,
) -> Result<Value> {
    if is_xml(path) {
        return import_xml(interp, path, alias, only);
    }
    if only.is_some() {
        return Err(Error::validation(format!(
            "`:only` selects tasks of an XML file; the module {} is imported whole",
            path.display()
        )));
    }
    import_module(interp, path, alias)
}

fn is_xml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
}

fn import_xml(
    interp: &Interp,
    path: &Path,
    alias: Option<&str>,
    only: Option<&[(String, Span)]>,
) -> Result<Value> {
    let file = xml::read_file(path)?;
    let definitions = xml::definitions(&file, alias, only, &|name| library_params(interp, name))?;
    let this_file = canonical(path);
    let mut fresh = Vec::with_capacity(definitions.len());
    for definition in &definitions {
        match registry_get(interp, TASK_FILES, &definition.name) {
            Some(Value::Str(other)) if other.as_str() == this_file => continue,
            Some(Value::Str(other)) => return Err(duplicate(definition, &other, &this_file)),
            _ => {}
        }
        if let Some(Value::Task(task)) = interp.tasks.task_value(&definition.name) {
            let origin = task.field("origin");
            let other = origin.as_str().unwrap_or("a deftask");
            return Err(duplicate(definition, other, &this_file));
        }
        fresh.push(definition);
    }
    let mut names = Vec::with_capacity(fresh.len());
    with_loading(interp, path, || {
        for definition in &fresh {
            interp.eval_syntax(&definition.form)?;
            registry_insert(
                interp,
                TASK_FILES,
                &definition.name,
                Value::str(this_file.as_str()),
            );
            names.push(Value::str(definition.name.as_str()));
        }
        Ok(())
    })?;
    Ok(Value::list(names))
}

fn duplicate(definition: &xml::Definition, other: &str, this: &str) -> Error {
    Error::validation(format!(
        "task `{}` is defined twice: in {other} and in {this}",
        definition.name
    ))
    .with_span(
        definition
            .form
            .as_list()
            .and_then(|f| f.get(1))
            .map_or(definition.form.span, |n| n.span),
    )
    .with_details(json!({"task": definition.name, "files": [other, this]}))
}

/// Runs a `.sexp` module once per (file, alias).
fn import_module(interp: &Interp, path: &Path, alias: Option<&str>) -> Result<Value> {
    let key = format!("{} as {}", canonical(path), alias.unwrap_or(""));
    if registry_get(interp, MODULE_FILES, &key).is_some() {
        return Ok(Value::empty_list());
    }
    check_cycle(interp, path)?;
    let mut forms = read_module(path)?;
    let names = namespace::top_level_names(&forms);
    if let Some(alias) = alias {
        forms = namespace::qualify(forms, &names, alias);
    }
    with_loading(interp, path, || interp.run_forms(&forms))?;
    registry_insert(interp, MODULE_FILES, &key, Value::Bool(true));
    let prefix = alias.map(|a| format!("{a}/")).unwrap_or_default();
    Ok(Value::list(
        names
            .iter()
            .map(|n| Value::str(format!("{prefix}{n}")))
            .collect(),
    ))
}

/// Runs a `.sexp` file in the global environment; returns its last value.
pub fn load(interp: &Interp, path: &Path) -> Result<Value> {
    if is_xml(path) {
        return Err(Error::eval(format!(
            "load runs .sexp files; import {} to register its templates",
            path.display()
        )));
    }
    check_cycle(interp, path)?;
    let forms = read_module(path)?;
    with_loading(interp, path, || interp.run_forms(&forms))
}

fn read_module(path: &Path) -> Result<Vec<Syntax>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::eval(format!("cannot read {name}: {e}")))?;
    crate::reader::read_source(&name, &text)
}

/// A file that is already being loaded would load itself again, forever.
fn check_cycle(interp: &Interp, path: &Path) -> Result<()> {
    let target = canonical(path);
    let loading = interp.loading.borrow();
    if let Some(start) = loading.iter().position(|file| canonical(file) == target) {
        let chain: Vec<String> = loading
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .map(|f| f.display().to_string())
            .chain(std::iter::once(path.display().to_string()))
            .collect();
        return Err(Error::validation(format!(
            "import cycle: {}",
            chain.join(" → ")
        )));
    }
    Ok(())
}

/// Runs `body` with `path` as the file being loaded.
fn with_loading<T>(interp: &Interp, path: &Path, body: impl FnOnce() -> Result<T>) -> Result<T> {
    interp.loading.borrow_mut().push(path.to_path_buf());
    let result = body();
    interp.loading.borrow_mut().pop();
    result
}

fn canonical(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}

// ---- checking without running ---------------------------------------------------------

/// Reads and checks a file without running it. An XML file is parsed, validated and its
/// references resolved (against the files checked before it, then the TaskLibrary); a
/// `.sexp` file is read and analysed, and the XML files it imports are checked too.
pub fn check_file(interp: &Interp, path: &Path) -> Result<()> {
    if is_xml(path) {
        return check_xml(interp, path);
    }
    let forms = read_module(path)?;
    with_loading(interp, path, || {
        for form in &forms {
            if let Some(imported) = imported_xml(form) {
                check_xml(interp, &interp.resolve_path(imported))
                    .map_err(|e| e.or_span(form.span))?;
            }
            Compiler::new(interp).compile(form)?;
            if let Some((name, params)) = defined_task(form) {
                record_checked(interp, &name, &canonical(path), &params);
            }
        }
        Ok(())
    })
}

/// The name and parameters of a top-level `(deftask name (params…) …)`, so the XML
/// files a script imports after it can refer to it.
fn defined_task(form: &Syntax) -> Option<(String, Vec<Param>)> {
    let items = form.as_list()?;
    if items.first()?.as_symbol()?.name() != "deftask" {
        return None;
    }
    let name = items.get(1)?.as_symbol()?.name().to_owned();
    let params = match &items.get(2)?.kind {
        SyntaxKind::List(params) | SyntaxKind::Vector(params) => params,
        _ => return None,
    };
    let params = params
        .iter()
        .filter_map(|param| match &param.kind {
            SyntaxKind::Symbol(s) => Some(Param {
                name: s.name().to_owned(),
                optional: false,
            }),
            SyntaxKind::List(pair) => pair.first()?.as_symbol().map(|s| Param {
                name: s.name().to_owned(),
                optional: true,
            }),
            _ => None,
        })
        .collect();
    Some((name, params))
}

fn record_checked(interp: &Interp, name: &str, file: &str, params: &[Param]) {
    let mut entry = Entries::new();
    entry.insert(Rc::from("file"), Value::str(file));
    entry.insert(Rc::from("params"), params_value(params));
    registry_insert(interp, CHECKED_TASKS, name, Value::map(entry));
}

fn check_xml(interp: &Interp, path: &Path) -> Result<()> {
    let file = xml::read_file(path)?;
    let definitions = xml::definitions(&file, None, None, &|name| library_params(interp, name))?;
    let this_file = canonical(path);
    for definition in &definitions {
        if let Some(other) = registry_get(interp, CHECKED_TASKS, &definition.name)
            .as_ref()
            .and_then(Value::as_map)
            .and_then(|m| m.get("file").and_then(Value::as_str).map(str::to_owned))
        {
            if other != this_file {
                return Err(duplicate(definition, &other, &this_file));
            }
        }
        Compiler::new(interp).compile(&definition.form)?;
        record_checked(interp, &definition.name, &this_file, &definition.params);
    }
    Ok(())
}

/// The file of a top-level `(import "x.xml" …)` form.
fn imported_xml(form: &Syntax) -> Option<&str> {
    let items = form.as_list()?;
    let head = items.first()?.as_symbol()?;
    match (head.name(), &items.get(1)?.kind) {
        ("import", SyntaxKind::Str(file)) if is_xml(Path::new(file.as_str())) => {
            Some(file.as_str())
        }
        _ => None,
    }
}

// ---- what the TaskLibrary knows about a task's parameters -------------------------------

/// `None` if no task is called `name`; otherwise its parameters, when they are known.
fn library_params(interp: &Interp, name: &str) -> Option<Option<Vec<Param>>> {
    if let Some(checked) = registry_get(interp, CHECKED_TASKS, name) {
        return Some(
            checked
                .as_map()
                .and_then(|m| m.get("params"))
                .and_then(params_of),
        );
    }
    match interp.tasks.task_value(name)? {
        Value::Task(task) => Some(params_of(&task.field("params"))),
        _ => Some(None),
    }
}

fn params_value(params: &[Param]) -> Value {
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
    let bare_names = list
        .iter()
        .all(|item| matches!(item, Value::Str(_) | Value::Symbol(_)));
    let params: Option<Vec<Param>> = list
        .iter()
        .map(|item| match &item {
            Value::Str(name) => Some(Param {
                name: name.to_string(),
                optional: false,
            }),
            Value::Symbol(name) => Some(Param {
                name: name.name().to_owned(),
                optional: false,
            }),
            Value::List(..) => {
                let parts = item.as_list()?;
                let name = parts.get(0)?;
                let name = name.as_str().map(str::to_owned).or_else(|| match name {
                    Value::Symbol(s) => Some(s.name().to_owned()),
                    _ => None,
                })?;
                Some(Param {
                    name,
                    optional: parts.len() > 1,
                })
            }
            Value::Map(map) => Some(Param {
                name: map.get("name")?.as_str()?.to_owned(),
                optional: map_says_optional(map),
            }),
            _ => None,
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

// ---- hidden registries -------------------------------------------------------------------

fn registry_get(interp: &Interp, registry: &str, key: &str) -> Option<Value> {
    interp
        .global(Sym::new(registry))?
        .as_map()?
        .get(key)
        .cloned()
}

fn registry_insert(interp: &Interp, registry: &str, key: &str, value: Value) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read_source;

    fn params(code: &str) -> Option<Vec<(String, bool)>> {
        let value =
            crate::eval::compile::syntax_to_value(&read_source("<params-test>", code).unwrap()[0]);
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

    #[test]
    fn xml_files_are_recognised_by_extension() {
        assert!(is_xml(Path::new("a/b.XML")));
        assert!(!is_xml(Path::new("a/b.sexp")));
        assert!(!is_xml(Path::new("xml")));
    }
}
