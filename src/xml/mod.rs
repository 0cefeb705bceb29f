//! XML template files (SPEC §8): parsed, validated and compiled to `deftask` forms.
//!
//! The pipeline is `parse` (well-formed XML to elements with spans) → `template`
//! (elements to typed templates, every element and attribute checked) → `generate`
//! (templates to `deftask` syntax, references resolved). `crate::module` evaluates the
//! generated forms, so an XML task is registered exactly as a `deftask` would be.
//! See `docs/XML.md` for the format.

mod attachments;
mod children;
pub mod expr;
pub mod generate;
pub mod infix;
pub mod parse;
mod shape;
mod steps;
pub mod template;
pub mod text;

pub use generate::{Callee, Param};
pub use template::{Name, Template};

use crate::error::{Error, ErrorKind, Result};
use crate::eval::reader::Syntax;
use crate::source::{register, Origin, Span};
use crate::symbol::Sym;
use generate::Resolve;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

/// A validated template file.
pub struct TemplateFile {
    /// The path as it is shown in messages.
    pub name: String,
    pub templates: Vec<Template>,
}

/// One task of a file, ready to evaluate.
pub struct Definition {
    /// The name it is registered under (with the namespace, if any).
    pub name: String,
    /// Its parameters; `None` for an alias of a task not known yet.
    pub params: Option<Vec<Param>>,
    /// The `(deftask …)` form (or `(task-alias …)`).
    pub form: Syntax,
}

/// Reads, parses and validates a template file.
pub fn read_file(path: &Path, max_bytes: u64) -> Result<TemplateFile> {
    let name = path.display().to_string();
    let text = file_text(path, &name, max_bytes)?;
    read_as(Origin::File, &name, &text)
}

/// Parses and validates template text registered under `name`.
pub fn read_str(name: &str, text: &str) -> Result<TemplateFile> {
    read_as(Origin::Text, name, text)
}

fn read_as(origin: Origin, name: &str, text: &str) -> Result<TemplateFile> {
    let mut templates = Vec::new();
    each_template_of(origin, name, text, &mut |template| {
        templates.push(template);
        Ok(())
    })?;
    Ok(TemplateFile {
        name: name.to_owned(),
        templates,
    })
}

/// Reads, parses and validates a template file, handing each of its top-level templates
/// to `each` as soon as it is validated, so a file of 200,000 tasks is never held whole:
/// neither its element tree nor its templates. An error stops the reading.
pub fn each_template(
    path: &Path,
    max_bytes: u64,
    each: &mut dyn FnMut(Template) -> Result<()>,
) -> Result<()> {
    let name = path.display().to_string();
    let text = file_text(path, &name, max_bytes)?;
    each_template_of(Origin::File, &name, &text, each)
}

fn file_text(path: &Path, name: &str, max_bytes: u64) -> Result<String> {
    let bytes = crate::value::bounds::read_file_bytes(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::XmlParse,
            format!(
                "{name} is not valid UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn each_template_of(
    origin: Origin,
    name: &str,
    text: &str,
    each: &mut dyn FnMut(Template) -> Result<()>,
) -> Result<()> {
    let source = register(origin, name, text);
    // Only a file has a name a task written without one can take.
    let file = (origin == Origin::File).then_some(name);
    let mut top_level = template::TopLevel::new(file, each);
    // Each <task> of a <tasks> file is validated as soon as it is parsed, and its
    // elements dropped.
    let root = parse::parse_streaming(text, source, |root, task| {
        if root.name != "tasks" {
            return Ok(Some(task));
        }
        top_level.add(root, &task)?;
        Ok(None)
    })?;
    top_level.finish(&root)
}

/// Looks a task name up outside the file: `None` if there is no such task, otherwise its
/// parameters when known.
pub type Library<'a> = dyn Fn(&str) -> Option<Option<Vec<Param>>> + 'a;

/// How references to tasks that neither the file nor the library defines are treated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unknown<'a> {
    /// Looked up when the task runs (import: the order of imports does not matter).
    AtCallTime,
    /// An error now (`tasklisp check`), suggesting the nearest of these other names.
    Error(&'a [String]),
}

/// The `deftask` forms for the tasks of `file`, namespaced as `alias/name` when `alias`
/// is given, each preceded by the forms of the tasks written inline in it. `only`
/// selects tasks by name; the tasks of the file they refer to come too, since they
/// cannot run without them. References resolve to the file's own tasks first, then to
/// `library`, then as `unknown` says.
pub fn definitions(
    file: &TemplateFile,
    alias: Option<&str>,
    only: Option<&[(String, Span)]>,
    library: &Library,
    unknown: Unknown,
) -> Result<Vec<Definition>> {
    let mut out = Vec::new();
    each_definition(file, alias, only, library, unknown, &mut |definition| {
        out.push(definition);
        Ok(())
    })?;
    Ok(out)
}

/// [`definitions`] handed to `each` one at a time, in the same order, so a caller that
/// needs each only briefly (`tasklisp check`) never holds them all.
pub fn each_definition(
    file: &TemplateFile,
    alias: Option<&str>,
    only: Option<&[(String, Span)]>,
    library: &Library,
    unknown: Unknown,
    each: &mut dyn FnMut(Definition) -> Result<()>,
) -> Result<()> {
    let local = local_templates(file);
    let resolver = FileResolver {
        local: &local,
        alias,
        library,
        unknown,
    };
    let selected = select(file, &local, only)?;
    for template in file
        .templates
        .iter()
        .filter(|t| selected.contains(t.name.text.as_str()))
    {
        for inline in inline_templates(template) {
            each(definition(inline, &resolver)?)?;
        }
        each(definition(template, &resolver)?)?;
    }
    Ok(())
}

fn definition(template: &Template, resolver: &FileResolver) -> Result<Definition> {
    let name = resolver.qualified(&template.name.text);
    Ok(Definition {
        form: generate::deftask(template, Sym::new(&name), resolver)?,
        params: match &template.alias {
            Some(target) => resolver.resolve(target)?.and_then(|callee| callee.params),
            None => generate::template_params(template),
        },
        name,
    })
}

/// The tasks written inline in a template, innermost first, so each is defined before
/// the task that calls it.
fn inline_templates(template: &Template) -> Vec<&Template> {
    fn walk<'t>(steps: &[&'t template::Step], out: &mut Vec<&'t Template>) {
        for step in steps {
            match step {
                template::Step::Inline(inner) => {
                    out.extend(inline_templates(inner));
                    out.push(inner);
                }
                template::Step::Cond { cases, .. } => {
                    for case in cases {
                        walk(&case.steps.iter().collect::<Vec<_>>(), out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let mut steps: Vec<&template::Step> = template.steps.iter().collect();
    steps.extend(template.reduce.as_ref().map(|r| &r.task));
    walk(&steps, &mut out);
    out
}

/// The names of the tasks of `file` an import with `only` registers.
pub fn selected<'t>(
    file: &'t TemplateFile,
    only: Option<&[(String, Span)]>,
) -> Result<HashSet<&'t str>> {
    select(file, &local_templates(file), only)
}

fn local_templates(file: &TemplateFile) -> HashMap<&str, &Template> {
    file.templates
        .iter()
        .map(|t| (t.name.text.as_str(), t))
        .collect()
}

/// The names `only` asks for and the local tasks they refer to, transitively.
fn select<'t>(
    file: &'t TemplateFile,
    local: &HashMap<&'t str, &'t Template>,
    only: Option<&[(String, Span)]>,
) -> Result<HashSet<&'t str>> {
    let Some(only) = only else {
        return Ok(local.keys().copied().collect());
    };
    let mut selected = HashSet::new();
    let mut queue = VecDeque::new();
    for (name, span) in only {
        let template = local.get(name.as_str()).ok_or_else(|| {
            Error::validation(format!("{} has no task `{name}` to import", file.name))
                .with_span(*span)
        })?;
        queue.push_back(*template);
    }
    while let Some(template) = queue.pop_front() {
        if !selected.insert(template.name.text.as_str()) {
            continue;
        }
        for reference in references(template) {
            if let Some(target) = local.get(reference.text.as_str()) {
                queue.push_back(target);
            }
        }
    }
    Ok(selected)
}

/// Every task name a template (and the tasks written inline in it) refers to.
pub fn references(template: &Template) -> Vec<&Name> {
    fn walk<'t>(step: &'t template::Step, out: &mut Vec<&'t Name>) {
        match step {
            template::Step::Ref(name) => out.push(name),
            template::Step::Call { template, .. } => out.push(template),
            template::Step::Cond { cases, .. } => {
                for case in cases {
                    case.steps.iter().for_each(|s| walk(s, out));
                }
            }
            template::Step::Inline(inner) => out.extend(references(inner)),
            template::Step::Code(..) => {}
        }
    }
    let mut out = Vec::new();
    template.steps.iter().for_each(|s| walk(s, &mut out));
    if let Some(reduce) = &template.reduce {
        walk(&reduce.task, &mut out);
    }
    if let Some(spec) = &template.loop_spec {
        out.push(&spec.director);
        out.push(&spec.evaluator);
    }
    out.extend(&template.alias);
    out
}

/// The name a task `name` of a file imported under `alias` is registered under.
pub fn qualified(alias: Option<&str>, name: &str) -> String {
    match alias {
        Some(alias) => format!("{alias}/{name}"),
        None => name.to_owned(),
    }
}

struct FileResolver<'a> {
    local: &'a HashMap<&'a str, &'a Template>,
    alias: Option<&'a str>,
    library: &'a Library<'a>,
    unknown: Unknown<'a>,
}

impl Resolve for FileResolver<'_> {
    fn qualified(&self, name: &str) -> String {
        qualified(self.alias, name)
    }

    fn resolve(&self, name: &Name) -> Result<Option<Callee>> {
        if let Some(template) = self.local.get(name.text.as_str()) {
            return Ok(Some(Callee {
                symbol: Sym::new(&self.qualified(&name.text)),
                params: generate::template_params(template),
            }));
        }
        match ((self.library)(&name.text), self.unknown) {
            (Some(params), _) => Ok(Some(Callee {
                symbol: Sym::new(&name.text),
                params,
            })),
            (None, Unknown::AtCallTime) => Ok(None),
            (None, Unknown::Error(known)) => Err(Error::validation(format!(
                "unknown task `{}`: it is neither in the files checked nor in the TaskLibrary",
                name.text
            ))
            .with_span(name.span)
            .with_hint(crate::suggest::hint(
                &name.text,
                self.local
                    .keys()
                    .copied()
                    .chain(known.iter().map(String::as_str)),
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
