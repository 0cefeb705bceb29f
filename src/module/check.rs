//! `tasklisp check`: files read and checked without running them.

use super::checked::{Checked, TaskParams};
use super::names::{Analysed, TaskTemplate};
use super::registry::library_params;
use super::{duplicate, is_xml, read_module, with_loading};
use crate::error::Result;
use crate::eval::ast::Node;
use crate::eval::{Compiler, Interp};
use crate::reader::{Syntax, SyntaxKind};
use crate::symbol::Sym;
use crate::task::table::{self, When};
use crate::task::template::Template;
use crate::xml::{self, Param};
use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Reads and checks a file without running it. An XML file is parsed, validated and its
/// references resolved (against the files checked before it, then the TaskLibrary); a
/// `.sexp` file is read and analysed, and the XML files it imports are checked too.
/// The tasks they define are recorded in `checked`.
///
/// What the file's code uses is returned, for [`check_names`] to look at with the code
/// of every other checked file.
pub fn check_file(interp: &Interp, checked: &Checked, path: &Path) -> Result<Analysed> {
    if is_xml(path) {
        return check_xml(interp, checked, path);
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
        declare_xml_tasks(interp, checked, &imported);
        let file = checked.file(path);
        for form in &forms {
            if let Some(imported) = imported_xml(form) {
                let xml = check_xml(interp, checked, &interp.resolve_path(imported))
                    .map_err(|e| e.or_span(form.span))?;
                analysed.templates.extend(xml.templates);
                analysed.symbols.extend(xml.symbols);
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
                checked.record(&name, file, Some(&params));
            }
        }
        Ok(())
    })?;
    Ok(analysed)
}

/// Names bound nowhere, calls whose arguments do not fit, and template tags naming
/// nothing in the checked files, each with the index of its file. Tasks any checked file
/// defines count as bound.
pub fn check_names(
    interp: &Interp,
    checked: Checked,
    files: &[Analysed],
) -> Vec<(usize, crate::error::Error)> {
    let mut tasks: TaskParams = checked.into_params();
    for name in interp.tasks.names() {
        if let Entry::Vacant(slot) = tasks.entry(name) {
            let params = library_params(interp, slot.key()).flatten();
            slot.insert(params);
        }
    }
    super::names::problems(interp, files, &tasks)
}

/// The tasks of the library and of the files checked so far.
fn known_tasks(interp: &Interp, checked: &Checked) -> Vec<String> {
    let mut names = interp.tasks.names();
    names.extend(checked.names());
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

/// Records the tasks of the XML files about to be checked, so that a file may refer to a
/// task a file given after it defines. A file that does not read or validate is skipped
/// here, and so is a task another file already defines: checking reports them.
pub fn declare_xml_tasks(interp: &Interp, checked: &Checked, paths: &[PathBuf]) {
    for path in paths.iter().filter(|p| is_xml(p)) {
        let file = checked.file(path);
        let mut tasks = Vec::new();
        let read = xml::each_template(path, interp.limits.max_file_bytes, &mut |template| {
            let params = xml::generate::template_params(&template);
            tasks.push((template.name.text, params));
            Ok(())
        });
        if read.is_err() {
            continue;
        }
        for (name, params) in &tasks {
            if checked.defined_elsewhere(name, file).is_none() {
                checked.record(name, file, params.as_deref());
            }
        }
        checked.mark_declared(file);
    }
}

/// Checks an XML file one task at a time (its tasks are declared first, so each
/// refers to the others through the checked tasks): no more than one task's template
/// and forms are held at once.
fn check_xml(interp: &Interp, checked: &Checked, path: &Path) -> Result<Analysed> {
    let file = checked.file(path);
    if !checked.is_declared(file) {
        declare_xml_tasks(interp, checked, &[path.to_path_buf()]);
    }
    if !checked.is_declared(file) {
        // The file does not read or validate: reading it whole reports why.
        xml::read_file(path, interp.limits.max_file_bytes)?;
    }
    let known = known_tasks(interp, checked);
    let shown = path.display().to_string();
    let library = |name: &str| {
        checked
            .params(name)
            .or_else(|| library_params(interp, name))
    };
    let mut analysed = Analysed::default();
    xml::each_template(path, interp.limits.max_file_bytes, &mut |template| {
        let xml_file = xml::TemplateFile {
            name: shown.clone(),
            templates: vec![template],
        };
        let unknown = xml::Unknown::Error(&known);
        xml::each_definition(
            &xml_file,
            None,
            None,
            &library,
            unknown,
            &mut |definition| {
                if let Some(other_shown) = checked.defined_elsewhere(&definition.name, file) {
                    return Err(duplicate(&definition, &other_shown, &shown));
                }
                Compiler::new(interp).compile(&definition.form)?;
                checked.record(&definition.name, file, definition.params.as_deref());
                collect_symbols(&definition.form, &mut analysed.symbols);
                let params = definition.params.as_deref().unwrap_or_default();
                let templates = task_templates(&definition.name, params, &definition.form);
                analysed.templates.extend(templates);
                Ok(())
            },
        )
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
