//! Validation: the element tree of a template file to typed templates.
//!
//! Every element and attribute of SPEC §8 is known here; anything else, a missing
//! required part, or a bad value is a `VALIDATION_ERROR` pointing at the element, the
//! attribute or the characters at fault. Expressions (`<arg>`, `test`, `over`,
//! `initial`) are read here too, so a file that validates has no syntax errors left.

use super::children::{
    accumulation, command_args, context_keys, context_setting, element_options, inputs, loop_spec,
    output, text_children, tools,
};
use super::parse::Element;
use super::shape::{
    bad_value, check_child, check_shape, is_plain_symbol, plain_name, required_attribute, single,
    symbol_name,
};
use super::steps::{cond, reduce, steps};
use super::text::Text;
use crate::error::{Error, Result};
use crate::reader::Syntax;
use crate::source::Span;
use crate::task::table;
use serde_json::Value as Json;
use std::collections::HashSet;

pub use crate::task::TaskKind as Kind;

/// A name written in the file, with where it was written.
#[derive(Clone, Debug)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

pub struct Template {
    pub name: Name,
    pub kind: Kind,
    /// The `<task>` start tag.
    pub span: Span,
    pub subtype: Option<Name>,
    pub inputs: Vec<Input>,
    /// The options written as one element each (`<system>`, `<timeout>`, …; see
    /// `crate::task::table`), in the file's order: the option and its value.
    pub options: Vec<(&'static str, Syntax)>,
    pub output: Option<Output>,
    pub inherit_context: Option<Name>,
    pub context_keys: Option<Vec<Name>>,
    pub steps: Vec<Step>,
    pub command: Vec<Text>,
    /// `<file_paths><path>…</path></file_paths>`: templates, like command arguments.
    pub files: Option<Vec<Text>>,
    pub reduce: Option<Reduce>,
    /// `<task name="x" ref="y"/>` at the top level: `x` is another name for `y`.
    pub alias: Option<Name>,
    /// `<context_management><accumulate_data …>`: the format `{{accumulated}}` uses.
    pub accumulate: Option<Name>,
    /// `<loop director evaluator max_iterations input>` (director_evaluator_loop).
    pub loop_spec: Option<LoopSpec>,
    /// `<tools><tool ref="t"/>…</tools>`: the tasks offered to the model.
    pub tools: Option<Vec<Name>>,
}

pub struct LoopSpec {
    pub director: Name,
    pub evaluator: Name,
    pub max_iterations: Option<Syntax>,
    pub input: Option<Syntax>,
}

impl Template {
    /// A template of nothing but its name, type and place, to be filled in.
    fn empty(name: Name, kind: Kind, span: Span) -> Template {
        Template {
            name,
            kind,
            span,
            subtype: None,
            inputs: Vec::new(),
            options: Vec::new(),
            output: None,
            inherit_context: None,
            context_keys: None,
            steps: Vec::new(),
            command: Vec::new(),
            files: None,
            reduce: None,
            alias: None,
            accumulate: None,
            loop_spec: None,
            tools: None,
        }
    }

    /// The value of an option written as an element.
    pub fn option(&self, name: &str) -> Option<&Syntax> {
        self.options
            .iter()
            .find(|(option, _)| *option == name)
            .map(|(_, value)| value)
    }
}

pub struct Input {
    pub name: Name,
    pub default: Option<Text>,
    /// `type="integer"`: the JSON type of the parameter in the task's tool schema.
    pub kind: Option<Name>,
}

pub struct Output {
    pub json: bool,
    pub schema: Option<Schema>,
    /// `strict="true"`: no repairs of the answer.
    pub strict: bool,
}

pub enum Schema {
    /// `object`, `array`, `string`, `number`, `boolean`.
    Type(Name),
    /// A JSON-Schema object.
    Json(Json, Span),
}

pub enum Step {
    /// `<task ref="x"/>`: call `x`, passing the bindings of its parameters by name.
    Ref(Name),
    /// `<task type=…>…</task>` written in place: an anonymous task named
    /// `parent/step-N`, called like a reference.
    Inline(Box<Template>),
    /// `<code>` (or an inline `<task>` holding one): expressions run in the sequence's
    /// environment, so a `define` there is seen by the later steps.
    Code(Vec<Syntax>, Span),
    /// `<call template="x"><arg name="p">expr</arg>…</call>`.
    Call {
        template: Name,
        args: Vec<Arg>,
        span: Span,
    },
    /// `<cond><case test="…">steps</case>…</cond>` on the previous step's output.
    Cond { cases: Vec<Case>, span: Span },
}

pub struct Arg {
    pub name: Option<Name>,
    pub expr: Syntax,
}

pub struct Case {
    pub test: Syntax,
    pub steps: Vec<Step>,
}

pub struct Reduce {
    pub over: Syntax,
    pub initial: Option<Syntax>,
    /// A `Step::Ref` or `Step::Inline`.
    pub task: Step,
}

/// The elements of every `<task>` besides its options.
const COMMON_CHILDREN: [&str; 2] = ["inputs", "context_management"];
const CONTEXT_MANAGEMENT: [&str; 5] = [
    "inherit_context",
    "context_keys",
    "accumulate_data",
    "accumulation_format",
    "fresh_context",
];

/// Where a `<task>` element is written, and for inline ones the numbering they share.
pub struct Place<'c> {
    /// The name of the task it is written in (for inline tasks).
    pub parent: Option<&'c str>,
    /// How many inline tasks the top-level task has so far.
    pub counter: &'c mut usize,
    /// The name a top-level task written without one takes: the file's (its root).
    pub unnamed: Option<Name>,
}
/// Validates the top-level `<task>`s of a file one at a time, as the XML reader hands
/// each over (and then drops its elements), and passes each template on to `each`.
pub struct TopLevel<'a> {
    seen: HashSet<String>,
    /// The file's name without its directory and extension (none for a text that is
    /// not a file).
    stem: Option<String>,
    each: &'a mut dyn FnMut(Template) -> Result<()>,
}

impl<'a> TopLevel<'a> {
    /// Templates of the file `file` (as shown in messages), if they come from one.
    pub fn new(
        file: Option<&str>,
        each: &'a mut dyn FnMut(Template) -> Result<()>,
    ) -> TopLevel<'a> {
        let stem = file
            .and_then(|file| std::path::Path::new(file).file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        TopLevel {
            seen: HashSet::new(),
            stem,
            each,
        }
    }

    /// The template of `element`, a child of the `<tasks>` root.
    pub fn add(&mut self, root: &Element, element: &Element) -> Result<()> {
        check_child(root, element, &["task"])?;
        let template = top_level(element, None)?;
        if !self.seen.insert(template.name.text.clone()) {
            return Err(Error::validation(format!(
                "task `{}` is defined twice in this file",
                template.name.text
            ))
            .with_span(template.name.span));
        }
        (self.each)(template)
    }

    /// The end of the file whose root is `root`: a `<task>` alone is its one template
    /// (named after the file when it has no name); a `<cond>` alone is a task named
    /// after the file that branches on its input; a `<tasks>` root has had its children
    /// added.
    pub fn finish(self, root: &Element) -> Result<()> {
        match root.name.as_str() {
            "task" => {
                let unnamed = match root.attribute("name") {
                    Some(_) => None,
                    None => Some(self.file_name(root)?),
                };
                let template = top_level(root, unnamed)?;
                (self.each)(template)
            }
            "cond" => {
                let template = cond_file(root, self.file_name(root)?)?;
                (self.each)(template)
            }
            "tasks" => check_shape(root, &[], &["task"]),
            other => Err(Error::validation(format!(
                "the root element of a template file is <task>, <tasks> or <cond>, not <{other}>"
            ))
            .with_span(root.span)),
        }
    }

    /// The file's name as the name of the task its root, which has none, defines.
    fn file_name(&self, root: &Element) -> Result<Name> {
        let Some(stem) = &self.stem else {
            return Err(Error::validation(format!(
                "<{}> needs a `name` attribute (only a file's root takes the file's name)",
                root.name
            ))
            .with_span(root.span));
        };
        if !is_plain_symbol(stem) {
            return Err(Error::validation(format!(
                "this <{}> has no name, so it takes the file's, but `{stem}` is not a valid task name (it must be a plain symbol): give it name=\"…\"",
                root.name
            ))
            .with_span(root.span));
        }
        Ok(Name {
            text: stem.clone(),
            span: root.span,
        })
    }
}

fn top_level(element: &Element, unnamed: Option<Name>) -> Result<Template> {
    let mut counter = 0;
    template(
        element,
        &mut Place {
            parent: None,
            counter: &mut counter,
            unnamed,
        },
    )
}

/// The input of the task a `<cond>` file defines: the result its cases test.
pub const COND_INPUT: &str = "result";

/// A file whose root is `<cond>`: a task named `name` of one input, `result` (a
/// TaskResult, JSON text or data), that runs the steps of the first case whose test
/// holds of it.
fn cond_file(root: &Element, name: Name) -> Result<Template> {
    let mut counter = 0;
    let cond = cond(
        root,
        &mut Place {
            parent: Some(&name.text),
            counter: &mut counter,
            unnamed: None,
        },
    )?;
    let mut template = Template::empty(name, Kind::Composite, root.span);
    template.inputs.push(Input {
        name: Name {
            text: COND_INPUT.to_owned(),
            span: root.span,
        },
        default: None,
        kind: None,
    });
    template.steps.push(cond);
    Ok(template)
}

/// A `<task>` element: at the top level (a named task or an alias) or inline.
pub fn template(element: &Element, place: &mut Place) -> Result<Template> {
    if place.parent.is_none() && element.attribute("ref").is_some() {
        return alias(element, place.unnamed.take());
    }
    let kind = task_kind(element)?;
    let children = allowed_children(kind);
    check_kind_children(element, kind, &children)?;
    let own_name: &[&str] = if place.parent.is_none() {
        &["name"]
    } else {
        &[]
    };
    let attributes: Vec<&str> = own_name
        .iter()
        .copied()
        .chain(["inherit_context", "context_keys"])
        .chain(table::TASK_OPTIONS.iter().filter_map(|o| match o.xml {
            table::Xml::Attribute(a) => Some(a),
            _ => None,
        }))
        .collect();
    check_shape(element, &attributes, &children)?;
    let name = task_name(element, place)?;
    let management = single(element, "context_management")?;
    if let Some(management) = management {
        check_shape(management, &[], &CONTEXT_MANAGEMENT)?;
    }
    let mut template = Template {
        name,
        kind,
        span: element.span,
        subtype: element
            .attribute("subtype")
            .map(|a| plain_name(a, "subtype"))
            .transpose()?,
        inputs: single(element, "inputs")?
            .map(inputs)
            .transpose()?
            .unwrap_or_default(),
        options: element_options(element, management)?,
        output: single(element, "output_format")?.map(output).transpose()?,
        inherit_context: context_setting(element, management)?,
        context_keys: context_keys(element, management)?,
        steps: Vec::new(),
        command: Vec::new(),
        files: single(element, "file_paths")?
            .map(|e| text_children(e, "path"))
            .transpose()?,
        reduce: None,
        alias: None,
        accumulate: management.map(accumulation).transpose()?.flatten(),
        loop_spec: None,
        tools: single(element, "tools")?.map(tools).transpose()?,
    };
    read_work(element, &mut template, place)?;
    check_context(&template, element)?;
    Ok(template)
}

/// The `type` attribute: atomic when it is left out.
fn task_kind(element: &Element) -> Result<Kind> {
    let Some(attr) = element.attribute("type") else {
        return Ok(Kind::Atomic);
    };
    let written = attr.value.as_str().trim();
    table::xml_type(written).ok_or_else(|| bad_value(attr, written, &table::type_names(true)))
}

/// A top-level task's name (or the file's, for a root written without one); an inline
/// task's, numbered after the task it is written in.
fn task_name(element: &Element, place: &mut Place) -> Result<Name> {
    Ok(match (place.parent, place.unnamed.take()) {
        (None, Some(unnamed)) => unnamed,
        (None, None) => symbol_name(required_attribute(element, "name")?, "task name")?,
        (Some(parent), _) => {
            let text = format!("{parent}/step-{}", place.counter);
            *place.counter += 1;
            Name {
                text,
                span: element.span,
            }
        }
    })
}

/// Reads the element holding the task's work, as its type says: the prompt, the steps,
/// the command, the reduction or the loop.
fn read_work(element: &Element, template: &mut Template, place: &mut Place) -> Result<()> {
    let kind = template.kind;
    let missing = |what: &str| {
        Error::validation(format!("a {} task needs {what}", kind.name())).with_span(element.span)
    };
    match kind {
        Kind::Atomic => {
            if template.option("prompt").is_none() {
                // An inline task with only a description asks it (the seeds' examples).
                let description = template.option("description").cloned();
                match description {
                    Some(text) if place.parent.is_some() => template.options.push(("prompt", text)),
                    _ => return Err(missing("<instructions>")),
                }
            }
        }
        Kind::Sequential => {
            let steps_element = single(element, "steps")?.ok_or_else(|| missing("<steps>"))?;
            let parent = template.name.text.clone();
            template.steps = steps(
                steps_element,
                &[],
                &mut Place {
                    parent: Some(&parent),
                    counter: place.counter,
                    unnamed: None,
                },
            )?;
            if let Some(Step::Cond { span, .. }) = template.steps.first() {
                return Err(Error::validation(
                    "a <cond> tests the previous step's output, so it cannot be the first step",
                )
                .with_span(*span));
            }
        }
        Kind::Script => {
            let command = single(element, "command")?.ok_or_else(|| missing("<command>"))?;
            template.command = command_args(command)?;
        }
        Kind::Reduce => {
            let reduce_element = single(element, "reduce")?.ok_or_else(|| missing("<reduce>"))?;
            let parent = template.name.text.clone();
            template.reduce = Some(reduce(
                reduce_element,
                &mut Place {
                    parent: Some(&parent),
                    counter: place.counter,
                    unnamed: None,
                },
            )?);
        }
        Kind::DirectorEvaluatorLoop => {
            let loop_element = single(element, "loop")?.ok_or_else(|| missing("<loop>"))?;
            template.loop_spec = Some(loop_spec(loop_element)?);
        }
        // Not an XML type: `task_kind` refused it.
        Kind::Composite => {}
    }
    Ok(())
}

/// The settings that only make sense together: accumulation with steps, context keys
/// with a subset context.
fn check_context(template: &Template, element: &Element) -> Result<()> {
    let kind = template.kind;
    if template.accumulate.is_some() && kind != Kind::Sequential {
        return Err(Error::validation(
            "<accumulate_data> is for sequential tasks: it gives each step the earlier steps' outputs",
        )
        .with_span(element.span));
    }
    if template.context_keys.is_some()
        && template.inherit_context.as_ref().map(|n| n.text.as_str()) != Some("subset")
    {
        return Err(
            Error::validation("context_keys needs inherit_context=\"subset\"")
                .with_span(element.span),
        );
    }
    Ok(())
}

/// The elements a `<task>` of this type may hold: its inputs, the element holding its
/// work, and the options that apply to it.
fn allowed_children(kind: Kind) -> Vec<&'static str> {
    let work = table::task_type(kind).xml_element;
    let options = table::TASK_OPTIONS
        .iter()
        .filter(|o| o.applies_to(kind))
        .filter_map(table::task_child);
    let mut children: Vec<&str> = Vec::new();
    for name in COMMON_CHILDREN.into_iter().chain(work).chain(options) {
        if !children.contains(&name) {
            children.push(name);
        }
    }
    children
}

/// A known element that belongs to another type of task gets a message that says so.
fn check_kind_children(element: &Element, kind: Kind, allowed: &[&str]) -> Result<()> {
    for child in &element.children {
        let name = child.name.as_str();
        if allowed.contains(&name) {
            continue;
        }
        let option = table::TASK_OPTIONS
            .iter()
            .find(|o| table::task_child(o) == Some(name));
        let owners: Vec<&str> = match option {
            Some(option) => option.types.iter().map(|k| k.name()).collect(),
            None => table::TASK_TYPES
                .iter()
                .filter(|t| t.xml_element == Some(name))
                .map(|t| t.name)
                .collect(),
        };
        if let Some(first) = owners.first() {
            let article = if first.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            return Err(Error::validation(format!(
                "<{name}> belongs to {article} {} task, and this task's type is {}",
                owners.join(" or "),
                kind.name()
            ))
            .with_span(child.span));
        }
    }
    Ok(())
}

/// `<task name="x" ref="y"/>`: another name for a task.
/// `<task name="x" ref="y"/>` at the top level (a file's root may leave out the name:
/// it is then `unnamed`, the file's).
fn alias(element: &Element, unnamed: Option<Name>) -> Result<Template> {
    check_shape(element, &["name", "ref"], &[])?;
    if element.has_text() {
        return Err(Error::validation("an alias <task name ref/> takes no text")
            .with_span(element.text.first_line_span()));
    }
    let name = match unnamed {
        Some(name) => name,
        None => symbol_name(required_attribute(element, "name")?, "task name")?,
    };
    let mut template = Template::empty(name, Kind::Composite, element.span);
    template.alias = Some(symbol_name(
        required_attribute(element, "ref")?,
        "task reference",
    )?);
    Ok(template)
}
