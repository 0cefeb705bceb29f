//! XML template files (SPEC §8): parsed, validated and compiled to `deftask` forms.
//!
//! The pipeline is `parse` (well-formed XML to elements with spans) → `template`
//! (elements to typed templates, every element and attribute checked) → `generate`
//! (templates to `deftask` syntax, references resolved). `crate::module` evaluates the
//! generated forms, so an XML task is registered exactly as a `deftask` would be.
//! See `docs/XML.md` for the format.

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
use crate::reader::Syntax;
use crate::source::{add_source, Span};
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
    pub params: Vec<Param>,
    /// The `(deftask …)` form.
    pub form: Syntax,
}

/// Reads, parses and validates a template file.
pub fn read_file(path: &Path, max_bytes: u64) -> Result<TemplateFile> {
    let name = path.display().to_string();
    let bytes = crate::bounds::read_file_bytes(path, max_bytes)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::XmlParse,
            format!(
                "{name} is not valid UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    read_str(&name, &text)
}

/// Parses and validates template text registered under `name`.
pub fn read_str(name: &str, text: &str) -> Result<TemplateFile> {
    let source = add_source(name, text);
    let root = parse::parse(text, source)?;
    Ok(TemplateFile {
        name: name.to_owned(),
        templates: template::templates(&root)?,
    })
}

/// Looks a task name up outside the file: `None` if there is no such task, otherwise its
/// parameters when known.
pub type Library<'a> = dyn Fn(&str) -> Option<Option<Vec<Param>>> + 'a;

/// The `deftask` forms for the tasks of `file`, namespaced as `alias/name` when `alias`
/// is given. `only` selects tasks by name; the tasks of the file they refer to come too,
/// since they cannot run without them. References resolve to the file's own tasks
/// first, then to `library`; an unknown one is an error now, not at call time.
pub fn definitions(
    file: &TemplateFile,
    alias: Option<&str>,
    only: Option<&[(String, Span)]>,
    library: &Library,
) -> Result<Vec<Definition>> {
    let local: HashMap<&str, &Template> = file
        .templates
        .iter()
        .map(|t| (t.name.text.as_str(), t))
        .collect();
    let resolver = FileResolver {
        local: &local,
        alias,
        library,
    };
    let selected = select(file, &local, only)?;
    file.templates
        .iter()
        .filter(|t| selected.contains(t.name.text.as_str()))
        .map(|template| {
            let name = resolver.qualified(&template.name.text);
            Ok(Definition {
                form: generate::deftask(template, Sym::new(&name), &resolver)?,
                params: generate::template_params(template),
                name,
            })
        })
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

/// Every task name a template refers to.
pub fn references(template: &Template) -> Vec<&Name> {
    fn walk<'t>(steps: &'t [template::Step], out: &mut Vec<&'t Name>) {
        for step in steps {
            match step {
                template::Step::Ref(name) => out.push(name),
                template::Step::Call { template, .. } => out.push(template),
                template::Step::Cond { cases, .. } => {
                    for case in cases {
                        walk(&case.steps, out);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&template.steps, &mut out);
    if let Some(reduce) = &template.reduce {
        out.push(&reduce.task);
    }
    out
}

struct FileResolver<'a> {
    local: &'a HashMap<&'a str, &'a Template>,
    alias: Option<&'a str>,
    library: &'a Library<'a>,
}

impl FileResolver<'_> {
    fn qualified(&self, name: &str) -> String {
        match self.alias {
            Some(alias) => format!("{alias}/{name}"),
            None => name.to_owned(),
        }
    }
}

impl Resolve for FileResolver<'_> {
    fn resolve(&self, name: &Name) -> Result<Callee> {
        if let Some(template) = self.local.get(name.text.as_str()) {
            return Ok(Callee {
                symbol: Sym::new(&self.qualified(&name.text)),
                params: Some(generate::template_params(template)),
            });
        }
        match (self.library)(&name.text) {
            Some(params) => Ok(Callee {
                symbol: Sym::new(&name.text),
                params,
            }),
            None => Err(Error::validation(format!(
                "unknown task `{}`: it is neither in this file nor in the TaskLibrary",
                name.text
            ))
            .with_span(name.span)),
        }
    }
}

#[cfg(test)]
mod tests;
