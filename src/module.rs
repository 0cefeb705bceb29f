//! Modules: the `import` and `load` special forms, `--import`, and `tasklisp check`.
//!
//! `(import "x.xml")` registers the tasks of an XML template file (see `crate::xml`);
//! `(import "m.sexp")` runs a module's definitions. Both are imported once per
//! interpreter: a second import of the same file (with the same `:as`) does nothing.
//! `(load "f.sexp")` runs a file every time. Paths are relative to the file being loaded;
//! the file is pushed on `interp.loading` while it runs, so the paths inside it resolve
//! against it and a cycle of imports is found instead of recursing forever.
//!
//! What has been imported is kept in hidden globals (see `registry`), so this module
//! needs no field of its own in `Interp`.

mod check;
mod namespace;
mod registry;

pub use check::{check_file, declare_xml_tasks};

use registry::{
    imported_from, library_params, record_import, registry_get, registry_insert, MODULE_FILES,
};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::ast::{Extension, Node};
use crate::eval::{Compiler, Interp};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::task::forms::SpecialForm;
use crate::value::Value;
use crate::xml;
use serde_json::json;
use std::path::{Path, PathBuf};

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
    let definitions = xml::definitions(
        &file,
        alias,
        only,
        &|name| library_params(interp, name),
        xml::Unknown::AtCallTime,
    )?;
    let this_file = canonical(path);
    let shown = path.display().to_string();
    let mut fresh = Vec::with_capacity(definitions.len());
    for definition in &definitions {
        match imported_from(interp, &definition.name) {
            Some((other, _)) if other == this_file => continue,
            Some((_, other_shown)) => return Err(duplicate(definition, &other_shown, &shown)),
            None => {}
        }
        if let Some(Value::Task(task)) = interp.tasks.task_value(&definition.name) {
            let origin = task.field("origin");
            let other = origin.as_str().unwrap_or("a deftask");
            return Err(duplicate(definition, other, &shown));
        }
        fresh.push(definition);
    }
    let mut names = Vec::with_capacity(fresh.len());
    with_loading(interp, path, || {
        for definition in &fresh {
            interp.eval_syntax(&definition.form)?;
            record_import(interp, &definition.name, &this_file, &shown);
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
    let loading = interp.loading().borrow();
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
    interp.loading().borrow_mut().push(path.to_path_buf());
    let result = body();
    interp.loading().borrow_mut().pop();
    result
}

fn canonical(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_files_are_recognised_by_extension() {
        assert!(is_xml(Path::new("a/b.XML")));
        assert!(!is_xml(Path::new("a/b.sexp")));
        assert!(!is_xml(Path::new("xml")));
    }
}
