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
mod checked;
pub mod names;
mod namespace;
mod registry;

pub use check::{
    check_file, check_limit_error, check_names, checking_limits, declare_forms, declare_tasks,
    top_level_forms, within_check_limits,
};
pub use checked::Checked;
pub use registry::library_params;

use registry::{
    imported_files, imported_from, registry_get, registry_insert, ImportOrigin, MODULE_FILES,
};

use crate::capabilities::Access;
use crate::error::{Error, Result};
use crate::eval::ast::{Extension, Node};
use crate::eval::env::Env;
use crate::eval::layer::{FormDef, Layer};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp};
use crate::source::{Origin, Span};
use crate::value::bounds::read_file_text;
use crate::value::Value;
use crate::xml;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The module layer: `import` and `load`.
pub static LAYER: Layer = Layer {
    name: "module",
    builtins: &[],
    keeps_mark: None,
    forms: &[
        FormDef {
            name: "import",
            analyse: import_form,
            synopsis: "(import \"file.xml\" :as ns :only (name…))",
            description: "",
            example: "(import \"templates/review.xml\" :as review)",
        },
        FormDef {
            name: "load",
            analyse: load_form,
            synopsis: "(load \"file.sexp\")",
            description: "runs a file in the global environment",
            example: "(load \"helpers.sexp\")",
        },
    ],
};

const IMPORT_USAGE: &str = "(import \"file\" [:as name] [:only (task…)] [:reload true])";

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
    let mut reload = false;
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
            SyntaxKind::Keyword(k) if k.name() == "reload" => reload = reload_flag(value)?,
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
        reload,
        span,
    })))
}

fn reload_flag(syntax: &Syntax) -> Result<bool> {
    match syntax.kind {
        SyntaxKind::Bool(b) => Ok(b),
        _ => Err(Error::syntax("`:reload` takes true or false", syntax.span)),
    }
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
    reload: bool,
    span: Span,
}

impl Extension for ImportNode {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let path =
            readable_path(interp, &self.file, env, "import").map_err(|e| e.or_span(self.span))?;
        let how = Import {
            alias: self.alias.as_deref(),
            only: self.only.as_deref(),
            reload: self.reload,
        };
        import(interp, &path, &how).map_err(|e| e.or_span(self.span))
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
        let path =
            readable_path(interp, &self.file, env, "load").map_err(|e| e.or_span(self.span))?;
        load(interp, &path).map_err(|e| e.or_span(self.span))
    }
}

/// The file a program names for `import` or `load`, resolved, if the program may read it
/// (the flags' own `--import`s are the user's and not checked; the REPL's `:load` and
/// `:import` are checked too).
fn readable_path(interp: &Interp, node: &Node, env: &Env, who: &str) -> Result<PathBuf> {
    let path = interp.resolve_path(&file_name(interp, node, env, who)?);
    interp.limits.capabilities.check_path(&path, Access::Read)?;
    Ok(path)
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
    let how = Import {
        alias,
        ..Import::default()
    };
    import(interp, path, &how).map(|_| ())
}

/// How to import a file: `:as`, `:only` and `:reload`.
#[derive(Default)]
pub struct Import<'a> {
    pub alias: Option<&'a str>,
    pub only: Option<&'a [(String, Span)]>,
    /// Import again even if imported before, replacing the file's tasks and definitions.
    pub reload: bool,
}

/// Imports `path`; returns the names it bound (as strings), empty if it was imported
/// before (and not reloaded).
pub fn import(interp: &Interp, path: &Path, how: &Import) -> Result<Value> {
    let names = if is_xml(path) {
        import_xml(interp, path, how)?
    } else if how.only.is_some() {
        return Err(Error::validation(format!(
            "`:only` selects tasks of an XML file; the module {} is imported whole",
            path.display()
        )));
    } else {
        import_module(interp, path, how)?
    };
    record_file(interp, path, how);
    Ok(names)
}

/// The files imported so far that changed on disk since, with the alias they were
/// imported under: what `:reload` imports again.
pub fn changed_imports(interp: &Interp) -> Vec<(PathBuf, Option<String>)> {
    imported_files(interp)
        .into_iter()
        .filter(|file| modified_time(Path::new(&file.shown)) != Some(file.modified))
        .map(|file| (PathBuf::from(file.shown), file.alias))
        .collect()
}

/// The file's modification time in nanoseconds since the epoch, if it can be read.
fn modified_time(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(since.as_nanos()).ok()
}

/// Remembers when `path` was imported, the first time and at each reload; a plain
/// import of a file imported before changes nothing, so it records nothing either.
fn record_file(interp: &Interp, path: &Path, how: &Import) {
    let key = canonical(path);
    if registry_get(interp, registry::IMPORTED_FILES, &key).is_some() && !how.reload {
        return;
    }
    if let Some(modified) = modified_time(path) {
        let shown = path.display().to_string();
        registry::record_file(interp, &key, &shown, how.alias, modified);
    }
}

fn is_xml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
}

fn import_xml(interp: &Interp, path: &Path, how: &Import) -> Result<Value> {
    let file = xml::read_file(path, interp.limits.max_file_bytes)?;
    let mut definitions = xml::definitions(
        &file,
        how.alias,
        how.only,
        &|name| library_params(interp, name),
        xml::Unknown::AtCallTime,
    )?;
    // The templates are not needed once their forms are made: a large file's peak is
    // then its forms, and falls as each is evaluated below.
    drop(file);
    let this_file = canonical(path);
    let shown = path.display().to_string();
    let mut keep = Vec::with_capacity(definitions.len());
    for definition in &definitions {
        keep.push(match imported_from(interp, &definition.name) {
            Some((other, _)) if other == this_file => how.reload,
            Some((_, other_shown)) => return Err(duplicate(definition, &other_shown, &shown)),
            None => {
                if let Some(Value::Task(task)) = interp.tasks.task_value(&definition.name) {
                    let origin = task.field("origin");
                    let other = origin.as_str().unwrap_or("a deftask");
                    return Err(duplicate(definition, other, &shown));
                }
                true
            }
        });
    }
    let mut keep = keep.into_iter();
    definitions.retain(|_| keep.next().unwrap_or(false));
    let mut names = Vec::with_capacity(definitions.len());
    let replacing = interp.tasks.replaces_on_redefine();
    interp
        .tasks
        .set_replace_on_redefine(replacing || how.reload);
    let origin = ImportOrigin::new(&this_file, &shown);
    let loaded = interp.with_file(path, || {
        for definition in definitions {
            interp.eval_syntax(&definition.form)?;
            origin.record(interp, &definition.name);
            names.push(Value::str(definition.name));
        }
        Ok(())
    });
    interp.tasks.set_replace_on_redefine(replacing);
    loaded?;
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
fn import_module(interp: &Interp, path: &Path, how: &Import) -> Result<Value> {
    let alias = how.alias;
    let key = format!("{} as {}", canonical(path), alias.unwrap_or(""));
    if registry_get(interp, MODULE_FILES, &key).is_some() && !how.reload {
        return Ok(Value::empty_list());
    }
    check_cycle(interp, path)?;
    let mut forms = read_module(interp, path)?;
    let names = namespace::top_level_names(&forms);
    if let Some(alias) = alias {
        forms = namespace::qualify(forms, &names, alias);
    }
    let replacing = interp.tasks.replaces_on_redefine();
    interp
        .tasks
        .set_replace_on_redefine(replacing || how.reload);
    let ran = interp.with_file(path, || interp.run_forms(&forms));
    interp.tasks.set_replace_on_redefine(replacing);
    ran?;
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
    let forms = read_module(interp, path)?;
    interp.with_file(path, || interp.run_forms(&forms))
}

fn read_module(interp: &Interp, path: &Path) -> Result<Vec<Syntax>> {
    let text = read_file_text(path, interp.limits.max_file_bytes)?;
    crate::eval::reader::read_source_as(Origin::File, &path.display().to_string(), &text)
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
