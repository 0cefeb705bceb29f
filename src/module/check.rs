//! `tasklisp check`: files read and checked without running them.

use super::checked::{Checked, TaskParams};
use super::names::{Analysed, TaskTemplate};
use super::registry::library_params;
use super::{alias_name, duplicate, is_xml, only_names, read_module};
use crate::capabilities::Capabilities;
use crate::error::{Error, Reason, Result};
use crate::eval::ast::Node;
use crate::eval::compile::{is_limit, top_level_begin, REDEFINABLE_FORMS};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp, Limits};
use crate::provider::Unconfigured;
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::metrics::Metrics;
use crate::task::table::{self, When};
use crate::task::template::Template;
use crate::task::ProviderChoice;
use crate::value::Value;
use crate::xml::{self, Definition, Param};
use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What checking one text may spend running the only code it runs, the macros the text
/// defines (expanded where they are used): steps, time and memory.
pub const CHECK_FUEL: u64 = 10_000_000;
pub const CHECK_TIME: Duration = Duration::from_secs(2);
pub const CHECK_MEMORY: u64 = 256 << 20;

/// The limits of an interpreter made to check code: nothing outside the interpreter
/// allowed (files, environment, programs, providers, network) and [`CHECK_FUEL`].
pub fn checking_limits(limits: &Limits) -> Limits {
    Limits {
        capabilities: Capabilities::sandbox(),
        fuel: Some(CHECK_FUEL),
        timeout: None,
        ..limits.clone()
    }
}

/// Runs `body`, the check of one text, within the limits of checking: its fuel counted
/// afresh, [`CHECK_TIME`] and [`CHECK_MEMORY`], and no model to answer (a task called
/// by a macro fails as with no provider configured). The session it had is restored.
pub fn within_check_limits<T>(interp: &Interp, body: impl FnOnce() -> Result<T>) -> Result<T> {
    let no_model = ProviderChoice::Native(Arc::new(Unconfigured));
    let session = interp.set_provider(no_model, Metrics::default());
    interp.refuel();
    let result = interp.within_timeout(Some(CHECK_TIME), || {
        interp.within_memory(CHECK_MEMORY, body)
    });
    interp.swap_session(session);
    result
}

/// A limit of checking run out, said as such: the time a macro took is a resource as
/// its steps and memory are, and the hint gives the limits.
pub fn check_limit_error(error: Error) -> Error {
    let error = if error.has_reason(&Reason::ExecutionTimeout) {
        let limit = CHECK_TIME.as_millis() as u64;
        let message = format!(
            "a macro ran longer than the {}s checking allows it",
            CHECK_TIME.as_secs()
        );
        let timed_out = Error::resource("time", limit, limit, message);
        match error.span() {
            Some(span) => timed_out.with_span(span),
            None => timed_out,
        }
    } else {
        error
    };
    error.with_hint(Some(format!(
        "checking expands macros with no capabilities, within {CHECK_FUEL} steps, {}s and {} MiB",
        CHECK_TIME.as_secs(),
        CHECK_MEMORY >> 20
    )))
}

/// Reads and checks a file without running it. An XML file is parsed, validated and its
/// references resolved (against the files checked or declared before it, then the
/// TaskLibrary); a `.sexp` file is read and analysed, and the XML files it imports are
/// checked too, under the names the import gives them. What a definition with constant
/// options would refuse when it runs is reported. The tasks they define are recorded in
/// `checked`.
///
/// What the file's code uses is returned, for [`check_names`] to look at with the code
/// of every other checked file.
pub fn check_file(interp: &Interp, checked: &Checked, path: &Path) -> Result<Analysed> {
    if is_xml(path) {
        return check_xml(interp, checked, path, &XmlImport::default());
    }
    let file = checked.file(path);
    let forms = match checked.take_forms(file) {
        Some(forms) => forms,
        None => {
            let forms = read_module(interp, path)?;
            declare_sexp_tasks(interp, checked, path, &forms);
            forms
        }
    };
    let mut analysed = Analysed {
        forms: Vec::with_capacity(forms.len()),
        ..Analysed::default()
    };
    let mut redefined = Vec::new();
    let outcome = interp.with_file(path, || {
        within_check_limits(interp, || {
            for form in top_level_forms(&forms) {
                check_form(interp, (checked, file), form, &mut analysed, &mut redefined)?;
            }
            Ok(())
        })
    });
    for name in redefined {
        interp.define_global(name, Value::Undefined);
    }
    outcome.map(|()| analysed)
}

/// Analyses one top-level form of a `.sexp` file into `analysed`, and defines what the
/// forms after it need defined: its macro, a stand-in for a redefined special form.
fn check_form(
    interp: &Interp,
    (checked, file): (&Checked, usize),
    form: &Syntax,
    analysed: &mut Analysed,
    redefined: &mut Vec<Sym>,
) -> Result<()> {
    let node = match Compiler::new(interp).compile(form) {
        Ok(node) => node,
        // A macro that ran out of checking's limits is reported and the check goes on;
        // what the form would have defined is not known, so no name is called unbound.
        Err(error) if is_limit(&error) => {
            analysed.expansions.push(check_limit_error(error));
            analysed.opaque = true;
            return Ok(());
        }
        Err(error) => return Err(error),
    };
    check_definition(interp, &node)?;
    redefined.extend(stand_in_redefinition(interp, &node));
    if let Some(import) = imported_xml(form) {
        let xml = check_xml(interp, checked, &interp.resolve_path(import.file), &import)
            .map_err(|e| e.or_span(form.span))?;
        analysed.templates.extend(xml.templates);
        analysed.symbols.extend(xml.symbols);
    }
    analysed.opaque |= runs_other_code(form);
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
    Ok(())
}

/// The top-level forms as a run takes them: those of a top-level `begin` one by one.
pub fn top_level_forms(forms: &[Syntax]) -> Vec<&Syntax> {
    let mut out = Vec::with_capacity(forms.len());
    let mut pending: Vec<&Syntax> = forms.iter().rev().collect();
    while let Some(form) = pending.pop() {
        match top_level_begin(form) {
            Some(inner) => pending.extend(inner.iter().rev()),
            None => out.push(form),
        }
    }
    out
}

/// A top-level `define` or `deftask` of a special form a program may redefine (`cond`,
/// `do`…) takes effect for the forms after it, as when it runs: the name gets a global
/// (nil: the value is not computed) until the file has been checked, so the analyser
/// reads its later uses as calls. The name is returned when it had no global before.
fn stand_in_redefinition(interp: &Interp, node: &Node) -> Option<Sym> {
    let Node::DefineGlobal { name, .. } = node else {
        return None;
    };
    let stand_in = REDEFINABLE_FORMS.contains(&name.name()) && interp.global(*name).is_none();
    stand_in.then(|| {
        interp.define_global(*name, Value::Nil);
        *name
    })
}

/// What defining would refuse, found without running code: a `deftask` whose options
/// are constants is built (and not registered).
fn check_definition(interp: &Interp, node: &Node) -> Result<()> {
    match node {
        Node::DefineGlobal { value, .. } => match value.as_ref() {
            Node::Extension(definition) => definition.check(interp),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Names bound nowhere, calls whose arguments do not fit, and template tags naming
/// nothing in the checked files, each with the index of its file. Tasks any checked file
/// defines count as bound.
pub fn check_names(
    interp: &Interp,
    checked: Checked,
    files: &[Analysed],
) -> Vec<super::names::Problem> {
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

/// `(load …)`, `(eval …)` or `(import …)` of something other than an XML file, anywhere
/// in the form: definitions the check cannot see without running code.
fn runs_other_code(form: &Syntax) -> bool {
    let mut pending = vec![form];
    while let Some(syntax) = pending.pop() {
        let Some(items) = syntax.as_list() else {
            continue;
        };
        match items.first().and_then(Syntax::as_symbol).map(|s| s.name()) {
            Some("load" | "eval") => return true,
            Some("import") if imported_xml(syntax).is_none() => return true,
            _ => pending.extend(items),
        }
    }
    false
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

/// Records the tasks of the files about to be checked, so that a file may refer to a
/// task a file given after it defines: the tasks of the XML files, and of each `.sexp`
/// file its `deftask`s and the tasks of the XML files it imports. A file that does not
/// read or validate is skipped here, and so is a task another file already defines:
/// checking reports them.
pub fn declare_tasks(interp: &Interp, checked: &Checked, paths: &[PathBuf]) {
    for path in paths {
        if is_xml(path) {
            declare_xml_tasks(interp, checked, path, &XmlImport::default());
        } else if let Ok(forms) = read_module(interp, path) {
            declare_sexp_tasks(interp, checked, path, &forms);
            checked.keep_forms(checked.file(path), forms);
        }
    }
}

/// Declares the tasks of a `.sexp` file from forms read already (an editor's unsaved
/// text), which [`check_file`] then checks instead of the file on disk.
pub fn declare_forms(interp: &Interp, checked: &Checked, path: &Path, forms: Vec<Syntax>) {
    declare_sexp_tasks(interp, checked, path, &forms);
    checked.keep_forms(checked.file(path), forms);
}

/// Records the `deftask`s of a `.sexp` file's top level and the tasks of the XML files
/// it imports.
fn declare_sexp_tasks(interp: &Interp, checked: &Checked, path: &Path, forms: &[Syntax]) {
    let file = checked.file(path);
    let _ = interp.with_file(path, || {
        for import in forms.iter().filter_map(imported_xml) {
            let imported = interp.resolve_path(import.file);
            declare_xml_tasks(interp, checked, &imported, &import);
        }
        Ok(())
    });
    for (name, params) in forms.iter().filter_map(defined_task) {
        if checked.defined_elsewhere(&name, file).is_none() {
            checked.record(&name, file, Some(&params));
        }
    }
}

fn declare_xml_tasks(interp: &Interp, checked: &Checked, path: &Path, import: &XmlImport) {
    let file = checked.file_as(path, import.alias.as_deref());
    if checked.is_declared(file) {
        return;
    }
    let Ok(tasks) = top_level_tasks(interp, path, import) else {
        return;
    };
    for (name, params) in &tasks {
        if checked.defined_elsewhere(name, file).is_none() {
            checked.record(name, file, params.as_deref());
        }
    }
    checked.mark_declared(file);
}

/// The names (as the import gives them) and parameters of the top-level tasks an import
/// of an XML file registers.
fn top_level_tasks(
    interp: &Interp,
    path: &Path,
    import: &XmlImport,
) -> Result<Vec<(String, Option<Vec<Param>>)>> {
    let max_bytes = interp.limits.max_file_bytes;
    let mut tasks = Vec::new();
    let mut add = |template: &xml::Template| {
        let params = xml::generate::template_params(template);
        tasks.push((import.qualified(&template.name.text), params));
    };
    match &import.only {
        None => xml::each_template(path, max_bytes, &mut |template| {
            add(&template);
            Ok(())
        })?,
        Some(only) => {
            let file = xml::read_file(path, max_bytes)?;
            let selected = xml::selected(&file, Some(only))?;
            file.templates
                .iter()
                .filter(|t| selected.contains(t.name.text.as_str()))
                .for_each(add);
        }
    }
    Ok(tasks)
}

/// Checks an XML file as `import` imports it. Without `:only` it is read one task at a
/// time (its tasks are declared first, so each refers to the others through the
/// checked tasks): no more than one task's template and forms are held at once.
fn check_xml(
    interp: &Interp,
    checked: &Checked,
    path: &Path,
    import: &XmlImport,
) -> Result<Analysed> {
    let file = checked.file_as(path, import.alias.as_deref());
    let max_bytes = interp.limits.max_file_bytes;
    declare_xml_tasks(interp, checked, path, import);
    if !checked.is_declared(file) {
        // The file does not read or validate: reading it whole reports why.
        xml::read_file(path, max_bytes)?;
    }
    let known = known_tasks(interp, checked);
    let shown = path.display().to_string();
    // The file's own tasks under the names the import gives them, then the others.
    let library = |name: &str| {
        checked
            .params(&import.qualified(name))
            .or_else(|| checked.params(name))
            .or_else(|| library_params(interp, name))
    };
    let unknown = xml::Unknown::Error(&known);
    let alias = import.alias.as_deref();
    let mut analysed = Analysed::default();
    let mut each = |definition: Definition| {
        if let Some(other_shown) = checked.defined_elsewhere(&definition.name, file) {
            return Err(duplicate(&definition, &other_shown, &shown));
        }
        let node = Compiler::new(interp).compile(&definition.form)?;
        check_definition(interp, &node)?;
        checked.record(&definition.name, file, definition.params.as_deref());
        collect_symbols(&definition.form, &mut analysed.symbols);
        let params = definition.params.as_deref().unwrap_or_default();
        let templates = task_templates(&definition.name, params, &definition.form);
        analysed.templates.extend(templates);
        Ok(())
    };
    match &import.only {
        None => xml::each_template(path, max_bytes, &mut |template| {
            let xml_file = xml::TemplateFile {
                name: shown.clone(),
                templates: vec![template],
            };
            xml::each_definition(&xml_file, alias, None, &library, unknown, &mut each)
        })?,
        Some(only) => {
            let whole = xml::read_file(path, max_bytes)?;
            xml::each_definition(&whole, alias, Some(only), &library, unknown, &mut each)?;
        }
    }
    Ok(analysed)
}

/// A top-level `(import "x.xml" :as a :only (…))`: the file, and the names it imports
/// the file's tasks under. Options that do not read are left out here; analysing the
/// form reports them.
#[derive(Default)]
struct XmlImport<'s> {
    file: &'s str,
    alias: Option<String>,
    only: Option<Vec<(String, Span)>>,
}

impl XmlImport<'_> {
    fn qualified(&self, name: &str) -> String {
        xml::qualified(self.alias.as_deref(), name)
    }
}

/// A top-level `(import "x.xml" …)` form.
fn imported_xml(form: &Syntax) -> Option<XmlImport<'_>> {
    let items = form.as_list()?;
    let head = items.first()?.as_symbol()?;
    let file = match (head.name(), &items.get(1)?.kind) {
        ("import", SyntaxKind::Str(file)) if is_xml(Path::new(file.as_str())) => file.as_str(),
        _ => return None,
    };
    let mut import = XmlImport {
        file,
        ..XmlImport::default()
    };
    for pair in items.get(2..).unwrap_or_default().chunks(2) {
        let [key, value] = pair else { continue };
        match key.as_keyword().map(|k| k.name()) {
            Some("as") => import.alias = alias_name(value).ok(),
            Some("only") => import.only = only_names(value).ok(),
            _ => {}
        }
    }
    Some(import)
}
