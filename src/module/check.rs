//! `tasklisp check`: files read and checked without running them.

use super::names::{Analysed, TaskTemplate};
use super::registry::{
    library_params, params_value, registry_get, registry_insert, CHECKED_TASKS, DECLARED_FILES,
};
use super::{canonical, duplicate, is_xml, read_module, with_loading};
use crate::error::Result;
use crate::eval::ast::Node;
use crate::eval::{Compiler, Interp};
use crate::reader::{Syntax, SyntaxKind};
use crate::symbol::Sym;
use crate::task::table::{self, When};
use crate::task::template::Template;
use crate::value::{Entries, Value};
use crate::xml::{self, Param};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Reads and checks a file without running it. An XML file is parsed, validated and its
/// references resolved (against the files checked before it, then the TaskLibrary); a
/// `.sexp` file is read and analysed, and the XML files it imports are checked too.
///
/// What the file's code uses is returned, for [`check_names`] to look at with the code
/// of every other checked file.
pub fn check_file(interp: &Interp, path: &Path) -> Result<Analysed> {
    if is_xml(path) {
        return check_xml(interp, path);
    }
    let forms = read_module(interp, path)?;
    let mut analysed = Analysed {
        forms: Vec::with_capacity(forms.len()),
        ..Analysed::default()
    };
    with_loading(interp, path, || {
        // The XML files it imports may refer to each other in any order, as at run time.
        let imported: Vec<PathBuf> = forms
            .iter()
            .filter_map(imported_xml)
            .map(|file| interp.resolve_path(file))
            .collect();
        declare_xml_tasks(interp, &imported);
        for form in &forms {
            if let Some(imported) = imported_xml(form) {
                let checked = check_xml(interp, &interp.resolve_path(imported))
                    .map_err(|e| e.or_span(form.span))?;
                analysed.templates.extend(checked.templates);
                analysed.symbols.extend(checked.symbols);
            }
            analysed.opaque |= runs_other_code(form);
            let node = Compiler::new(interp).compile(form)?;
            // A macro is defined at once, so the forms after it expand it as a run would.
            if matches!(node, Node::DefMacro { .. }) {
                interp.eval_syntax(form)?;
            }
            analysed.forms.push(node);
            collect_symbols(form, &mut analysed.symbols);
            if let Some((name, params)) = defined_task(form) {
                analysed
                    .templates
                    .extend(task_templates(&name, &params, form));
                record_checked(interp, &name, path, Some(&params));
            }
        }
        Ok(())
    })?;
    Ok(analysed)
}

/// Names bound nowhere, calls whose arguments do not fit, and template tags naming
/// nothing in the checked files, each with the index of its file. Tasks any checked file
/// defines count as bound.
pub fn check_names(interp: &Interp, files: &[Analysed]) -> Vec<(usize, crate::error::Error)> {
    let tasks: HashMap<String, Option<Vec<Param>>> = known_tasks(interp)
        .into_iter()
        .map(|name| {
            let params = library_params(interp, &name).flatten();
            (name, params)
        })
        .collect();
    super::names::problems(interp, files, &tasks)
}

/// The tasks of the library and of the files checked so far.
fn known_tasks(interp: &Interp) -> Vec<String> {
    let mut names = interp.tasks.names();
    if let Some(Value::Map(checked)) = interp.global(Sym::new(CHECKED_TASKS)) {
        names.extend(checked.entries.keys().map(|k| k.to_string()));
    }
    names
}

/// Every symbol written in `form`, and the base of every path.
fn collect_symbols(form: &Syntax, out: &mut HashSet<Sym>) {
    let mut pending = vec![form];
    while let Some(syntax) = pending.pop() {
        match &syntax.kind {
            SyntaxKind::Symbol(name) => {
                out.insert(*name);
            }
            SyntaxKind::Path(path) => {
                out.insert(path.base);
            }
            SyntaxKind::List(items) | SyntaxKind::Vector(items) | SyntaxKind::Map(items) => {
                pending.extend(items)
            }
            _ => {}
        }
    }
}

/// The templates a `(deftask name (params…) :option value …)` form writes as strings.
fn task_templates(name: &str, params: &[Param], form: &Syntax) -> Vec<TaskTemplate> {
    let Some(options) = form.as_list().and_then(|items| items.get(3..)) else {
        return Vec::new();
    };
    options
        .chunks(2)
        .map_while(|pair| match pair {
            [keyword, value] => keyword
                .as_keyword()
                .map(|keyword| (table::option_spelled(keyword.name()), value)),
            _ => None,
        })
        .filter_map(|(option, value)| match (option, &value.kind) {
            (Some(option), SyntaxKind::Str(text)) if option.when == When::Template => {
                Some(TaskTemplate {
                    task: name.to_owned(),
                    params: params.iter().map(|p| p.name.clone()).collect(),
                    tags: Template::parse(text).names().collect(),
                    span: value.span,
                })
            }
            _ => None,
        })
        .collect()
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
fn record_checked(interp: &Interp, name: &str, path: &Path, params: Option<&[Param]>) {
    let mut entry = Entries::new();
    entry.insert(Rc::from("file"), Value::str(canonical(path)));
    entry.insert(Rc::from("shown"), Value::str(path.display().to_string()));
    // Unknown parameters (an alias of a task not known yet) leave its calls unchecked.
    entry.insert(Rc::from("params"), params.map_or(Value::Nil, params_value));
    registry_insert(interp, CHECKED_TASKS, name, Value::map(entry));
}

/// Records the tasks of the XML files about to be checked, so that a file may refer to a
/// task a file given after it defines. A file that does not read or validate is skipped
/// here, and so is a task another file already defines: checking reports them.
pub fn declare_xml_tasks(interp: &Interp, paths: &[PathBuf]) {
    for path in paths.iter().filter(|p| is_xml(p)) {
        let mut tasks = Vec::new();
        let read = xml::each_template(path, interp.limits.max_file_bytes, &mut |template| {
            let params = xml::generate::template_params(&template);
            tasks.push((template.name.text, params));
            Ok(())
        });
        if read.is_err() {
            continue;
        }
        let this_file = canonical(path);
        for (name, params) in &tasks {
            if checked_elsewhere(interp, name, &this_file).is_none() {
                record_checked(interp, name, path, params.as_deref());
            }
        }
        registry_insert(interp, DECLARED_FILES, &this_file, Value::Bool(true));
    }
}

/// The file (as written) of the task `name` when a file other than `this_file` (a
/// canonical path) defines it.
fn checked_elsewhere(interp: &Interp, name: &str, this_file: &str) -> Option<String> {
    let earlier = registry_get(interp, CHECKED_TASKS, name)?;
    let map = earlier.as_map()?;
    let field = |key: &str| map.get(key).and_then(Value::as_str);
    (field("file")? != this_file).then(|| field("shown").map(str::to_owned))?
}

/// Checks an XML file one task at a time (its tasks are declared first, so each
/// refers to the others through the checked tasks): no more than one task's template
/// and forms are held at once.
fn check_xml(interp: &Interp, path: &Path) -> Result<Analysed> {
    let this_file = canonical(path);
    if registry_get(interp, DECLARED_FILES, &this_file).is_none() {
        declare_xml_tasks(interp, &[path.to_path_buf()]);
    }
    if registry_get(interp, DECLARED_FILES, &this_file).is_none() {
        // The file does not read or validate: reading it whole reports why.
        xml::read_file(path, interp.limits.max_file_bytes)?;
    }
    let known = known_tasks(interp);
    let shown = path.display().to_string();
    let library = |name: &str| library_params(interp, name);
    let mut analysed = Analysed::default();
    xml::each_template(path, interp.limits.max_file_bytes, &mut |template| {
        let file = xml::TemplateFile {
            name: shown.clone(),
            templates: vec![template],
        };
        let unknown = xml::Unknown::Error(&known);
        xml::each_definition(&file, None, None, &library, unknown, &mut |definition| {
            if let Some(other_shown) = checked_elsewhere(interp, &definition.name, &this_file) {
                return Err(duplicate(&definition, &other_shown, &shown));
            }
            Compiler::new(interp).compile(&definition.form)?;
            record_checked(interp, &definition.name, path, definition.params.as_deref());
            collect_symbols(&definition.form, &mut analysed.symbols);
            let params = definition.params.as_deref().unwrap_or_default();
            let templates = task_templates(&definition.name, params, &definition.form);
            analysed.templates.extend(templates);
            Ok(())
        })
    })?;
    Ok(analysed)
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
