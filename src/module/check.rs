//! `tasklisp check`: files read and checked without running them.

use super::names::Analysed;
use super::registry::{library_params, params_value, registry_get, registry_insert, CHECKED_TASKS};
use super::{canonical, duplicate, is_xml, read_module, with_loading};
use crate::error::Result;
use crate::eval::ast::Node;
use crate::eval::{Compiler, Interp};
use crate::reader::{Syntax, SyntaxKind};
use crate::value::{Entries, Value};
use crate::xml::{self, Param};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Reads and checks a file without running it. An XML file is parsed, validated and its
/// references resolved (against the files checked before it, then the TaskLibrary); a
/// `.sexp` file is read and analysed, and the XML files it imports are checked too.
///
/// A `.sexp` file's analysed code is returned, for [`check_names`] to look at with the
/// code of every other checked file.
pub fn check_file(interp: &Interp, path: &Path) -> Result<Option<Analysed>> {
    if is_xml(path) {
        return check_xml(interp, path).map(|()| None);
    }
    let forms = read_module(interp, path)?;
    let mut analysed = Analysed {
        forms: Vec::with_capacity(forms.len()),
        opaque: false,
    };
    with_loading(interp, path, || {
        for form in &forms {
            if let Some(imported) = imported_xml(form) {
                check_xml(interp, &interp.resolve_path(imported))
                    .map_err(|e| e.or_span(form.span))?;
            }
            analysed.opaque |= runs_other_code(form);
            let node = Compiler::new(interp).compile(form)?;
            // A macro is defined at once, so the forms after it expand it as a run would.
            if matches!(node, Node::DefMacro { .. }) {
                interp.eval_syntax(form)?;
            }
            analysed.forms.push(node);
            if let Some((name, params)) = defined_task(form) {
                record_checked(interp, &name, path, &params);
            }
        }
        Ok(())
    })?;
    Ok(Some(analysed))
}

/// Names bound nowhere and calls with the wrong number of arguments in the checked
/// files, each with the index of its file. Tasks any checked file defines count as bound.
pub fn check_names(interp: &Interp, files: &[Analysed]) -> Vec<(usize, crate::error::Error)> {
    let mut tasks = interp.tasks.names();
    if let Some(Value::Map(checked)) = interp.global(crate::symbol::Sym::new(CHECKED_TASKS)) {
        tasks.extend(checked.entries.keys().map(|k| k.to_string()));
    }
    super::names::problems(interp, files, &tasks)
}

/// `(load …)`, or `(import …)` of something other than an XML file: definitions the
/// check cannot see without running code.
fn runs_other_code(form: &Syntax) -> bool {
    let Some(items) = form.as_list() else {
        return false;
    };
    match items.first().and_then(Syntax::as_symbol).map(|s| s.name()) {
        Some("load") => true,
        Some("import") => imported_xml(form).is_none(),
        _ => false,
    }
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

/// Records a task a checked file defines: its file (canonical, and as written) and its
/// parameters.
fn record_checked(interp: &Interp, name: &str, path: &Path, params: &[Param]) {
    let mut entry = Entries::new();
    entry.insert(Rc::from("file"), Value::str(canonical(path)));
    entry.insert(Rc::from("shown"), Value::str(path.display().to_string()));
    entry.insert(Rc::from("params"), params_value(params));
    registry_insert(interp, CHECKED_TASKS, name, Value::map(entry));
}

/// Records the tasks of the XML files about to be checked, so that a file may refer to a
/// task a file given after it defines. A file that does not read or validate is skipped
/// here: checking it reports that.
pub fn declare_xml_tasks(interp: &Interp, paths: &[PathBuf]) {
    for path in paths.iter().filter(|p| is_xml(p)) {
        let Ok(file) = xml::read_file(path, interp.limits.max_file_bytes) else {
            continue;
        };
        for template in &file.templates {
            let params = xml::generate::template_params(template);
            record_checked(interp, &template.name.text, path, &params);
        }
    }
}

fn check_xml(interp: &Interp, path: &Path) -> Result<()> {
    let file = xml::read_file(path, interp.limits.max_file_bytes)?;
    let definitions = xml::definitions(
        &file,
        None,
        None,
        &|name| library_params(interp, name),
        xml::Unknown::Error,
    )?;
    let this_file = canonical(path);
    for definition in &definitions {
        let earlier = registry_get(interp, CHECKED_TASKS, &definition.name);
        let field = |key: &str| {
            let map = earlier.as_ref().and_then(Value::as_map)?;
            map.get(key).and_then(Value::as_str).map(str::to_owned)
        };
        if let (Some(other), Some(other_shown)) = (field("file"), field("shown")) {
            if other != this_file {
                let shown = path.display().to_string();
                return Err(duplicate(definition, &other_shown, &shown));
            }
        }
        Compiler::new(interp).compile(&definition.form)?;
        record_checked(interp, &definition.name, path, &definition.params);
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
