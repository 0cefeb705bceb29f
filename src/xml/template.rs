//! Validation: the element tree of a template file to typed templates.
//!
//! Every element and attribute of SPEC §8 is known here; anything else, a missing
//! required part, or a bad value is a `VALIDATION_ERROR` pointing at the element, the
//! attribute or the characters at fault. Expressions (`<arg>`, `test`, `over`,
//! `initial`) are read here too, so a file that validates has no syntax errors left.

use super::expr::read_one;
use super::parse::{Attribute, Element};
use super::shape::{
    bad_value, check_shape, checked_name, plain_name, required_attribute, single, symbol_name,
    text_only,
};
use super::steps::{reduce, steps};
use super::text::Text;
use crate::error::{Error, Result};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use serde_json::Value as Json;
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Atomic,
    Sequential,
    Reduce,
    Script,
}

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
    pub description: Option<Text>,
    pub inputs: Vec<Input>,
    pub system: Option<Text>,
    pub instructions: Option<Text>,
    pub output: Option<Output>,
    pub model: Option<Text>,
    pub inherit_context: Option<Name>,
    pub context_keys: Option<Vec<Name>>,
    pub steps: Vec<Step>,
    pub command: Vec<Text>,
    pub timeout: Option<Syntax>,
    pub reduce: Option<Reduce>,
}

pub struct Input {
    pub name: Name,
    pub default: Option<Text>,
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
    pub task: Name,
}

const TASK_TYPES: [&str; 4] = ["atomic", "sequential", "reduce", "script"];
const SCHEMA_TYPES: [&str; 5] = ["object", "array", "string", "number", "boolean"];
const CONTEXT_MODES: [&str; 3] = ["full", "none", "subset"];
const COMMON_CHILDREN: [&str; 4] = ["description", "inputs", "inherit_context", "context_keys"];

/// The templates of a file whose root element is `<task>` or `<tasks>`.
pub fn templates(root: &Element) -> Result<Vec<Template>> {
    let tasks = match root.name.as_str() {
        "task" => vec![root],
        "tasks" => {
            check_shape(root, &[], &["task"])?;
            root.children.iter().collect()
        }
        other => {
            return Err(Error::validation(format!(
                "the root element of a template file is <task> or <tasks>, not <{other}>"
            ))
            .with_span(root.span))
        }
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(tasks.len());
    for element in tasks {
        let template = template(element)?;
        if !seen.insert(template.name.text.clone()) {
            return Err(Error::validation(format!(
                "task `{}` is defined twice in this file",
                template.name.text
            ))
            .with_span(template.name.span));
        }
        out.push(template);
    }
    Ok(out)
}

fn template(element: &Element) -> Result<Template> {
    if element.attribute("ref").is_some() {
        return Err(Error::validation(
            "a <task ref> is a step: it belongs inside <steps>, <case> or <reduce>",
        )
        .with_span(element.span));
    }
    let kind = match element.attribute("type") {
        None => Kind::Atomic,
        Some(attr) => match attr.value.as_str().trim() {
            "atomic" => Kind::Atomic,
            "sequential" => Kind::Sequential,
            "reduce" => Kind::Reduce,
            "script" => Kind::Script,
            other => return Err(bad_value(attr, other, &TASK_TYPES)),
        },
    };
    let specific: &[&str] = match kind {
        Kind::Atomic => &["system", "instructions", "output_format", "model"],
        Kind::Sequential => &["steps"],
        Kind::Reduce => &["reduce"],
        Kind::Script => &["command", "timeout", "output_format"],
    };
    let children: Vec<&str> = COMMON_CHILDREN.iter().chain(specific).copied().collect();
    check_kind_children(element, kind, &children)?;
    check_shape(
        element,
        &["name", "type", "subtype", "inherit_context", "context_keys"],
        &children,
    )?;
    let name = symbol_name(required_attribute(element, "name")?, "task name")?;
    let mut template = Template {
        name,
        kind,
        span: element.span,
        subtype: element
            .attribute("subtype")
            .map(|a| plain_name(a, "subtype"))
            .transpose()?,
        description: single(element, "description")?.map(text_only).transpose()?,
        inputs: single(element, "inputs")?
            .map(inputs)
            .transpose()?
            .unwrap_or_default(),
        system: single(element, "system")?.map(text_only).transpose()?,
        instructions: single(element, "instructions")?
            .map(text_only)
            .transpose()?,
        output: single(element, "output_format")?.map(output).transpose()?,
        model: single(element, "model")?.map(text_only).transpose()?,
        inherit_context: context_setting(element)?,
        context_keys: context_keys(element)?,
        steps: Vec::new(),
        command: Vec::new(),
        timeout: single(element, "timeout")?.map(timeout).transpose()?,
        reduce: None,
    };
    let missing = |what: &str| {
        Error::validation(format!("a {} task needs {what}", type_name(kind)))
            .with_span(element.span)
    };
    match kind {
        Kind::Atomic => {
            if template.instructions.is_none() {
                return Err(missing("<instructions>"));
            }
        }
        Kind::Sequential => {
            let steps_element = single(element, "steps")?.ok_or_else(|| missing("<steps>"))?;
            template.steps = steps(steps_element, &[])?;
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
            template.reduce = Some(reduce(reduce_element)?);
        }
    }
    if template.context_keys.is_some()
        && template.inherit_context.as_ref().map(|n| n.text.as_str()) != Some("subset")
    {
        return Err(
            Error::validation("context_keys needs inherit_context=\"subset\"")
                .with_span(element.span),
        );
    }
    Ok(template)
}

fn type_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Atomic => "atomic",
        Kind::Sequential => "sequential",
        Kind::Reduce => "reduce",
        Kind::Script => "script",
    }
}

/// A known element that belongs to another type of task gets a message that says so.
fn check_kind_children(element: &Element, kind: Kind, allowed: &[&str]) -> Result<()> {
    const BY_KIND: [(&str, &str); 8] = [
        ("system", "atomic"),
        ("instructions", "atomic"),
        ("model", "atomic"),
        ("steps", "sequential"),
        ("reduce", "reduce"),
        ("command", "script"),
        ("timeout", "script"),
        ("output_format", "atomic or script"),
    ];
    for child in &element.children {
        if allowed.contains(&child.name.as_str()) {
            continue;
        }
        if let Some((_, owner)) = BY_KIND.iter().find(|(name, _)| *name == child.name) {
            return Err(Error::validation(format!(
                "<{}> belongs to an {owner} task, and this task's type is {}",
                child.name,
                type_name(kind)
            ))
            .with_span(child.span));
        }
    }
    Ok(())
}

// ---- the parts of a task ------------------------------------------------------------------

fn inputs(element: &Element) -> Result<Vec<Input>> {
    check_shape(element, &[], &["input"])?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for input in &element.children {
        check_shape(input, &["name", "default"], &[])?;
        if input.has_text() {
            return Err(Error::validation(
                "<input> takes no text (a default is written default=\"…\")",
            )
            .with_span(input.text.first_line_span()));
        }
        let name = symbol_name(required_attribute(input, "name")?, "input name")?;
        if !seen.insert(name.text.clone()) {
            return Err(
                Error::validation(format!("input `{}` is declared twice", name.text))
                    .with_span(name.span),
            );
        }
        out.push(Input {
            name,
            default: input.attribute("default").map(|a| a.value.clone()),
        });
    }
    Ok(out)
}

fn output(element: &Element) -> Result<Output> {
    check_shape(element, &["type", "schema", "strict"], &[])?;
    if element.has_text() {
        return Err(Error::validation("<output_format> takes no text")
            .with_span(element.text.first_line_span()));
    }
    let json = two_way(element, "type", ["json", "text"], true)?;
    let schema = match element.attribute("schema") {
        None => None,
        Some(_) if !json => {
            return Err(Error::validation("a schema needs type=\"json\"").with_span(element.span));
        }
        Some(attr) => Some(schema(attr)?),
    };
    let strict = two_way(element, "strict", ["true", "false"], false)?;
    Ok(Output {
        json,
        schema,
        strict,
    })
}

/// An attribute with two allowed values: true for the first, false for the second,
/// `default` when it is absent.
fn two_way(element: &Element, name: &str, values: [&str; 2], default: bool) -> Result<bool> {
    let Some(attr) = element.attribute(name) else {
        return Ok(default);
    };
    match attr.value.as_str().trim() {
        v if v == values[0] => Ok(true),
        v if v == values[1] => Ok(false),
        other => Err(bad_value(attr, other, &values)),
    }
}

fn schema(attribute: &Attribute) -> Result<Schema> {
    let value = attribute.value.trim();
    if value.as_str().starts_with('{') {
        return match serde_json::from_str::<Json>(value.as_str()) {
            Ok(json @ Json::Object(_)) => Ok(Schema::Json(json, value.span())),
            Ok(_) => Err(Error::validation("a JSON schema is an object").with_span(value.span())),
            Err(e) => {
                let at = line_column_offset(value.as_str(), e.line(), e.column());
                Err(Error::validation(format!("invalid JSON schema: {e}"))
                    .with_span(value.span_of(at, at + 1)))
            }
        };
    }
    if SCHEMA_TYPES.contains(&value.as_str()) {
        return Ok(Schema::Type(Name {
            text: value.as_str().to_owned(),
            span: value.span(),
        }));
    }
    Err(bad_value(
        attribute,
        value.as_str(),
        &[&SCHEMA_TYPES[..], &["{ a JSON schema }"]].concat(),
    ))
}

/// The byte offset of a 1-based line and column (serde_json's error position).
fn line_column_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// `inherit_context` as an attribute of the task or as an element, not both.
fn context_setting(element: &Element) -> Result<Option<Name>> {
    let from_attribute = element
        .attribute("inherit_context")
        .map(|a| a.value.clone());
    let from_element = single(element, "inherit_context")?
        .map(text_only)
        .transpose()?;
    let text = match (from_attribute, from_element) {
        (Some(_), Some(t)) => {
            return Err(Error::validation(
                "inherit_context is given both as an attribute and as an element",
            )
            .with_span(t.span()))
        }
        (Some(t), None) | (None, Some(t)) => t.trim(),
        (None, None) => return Ok(None),
    };
    if !CONTEXT_MODES.contains(&text.as_str()) {
        return Err(Error::validation(format!(
            "`{}` is not a valid inherit_context (expected one of: full, none, subset)",
            text.as_str()
        ))
        .with_span(text.span()));
    }
    Ok(Some(Name {
        text: text.as_str().to_owned(),
        span: text.span(),
    }))
}

/// `context_keys`: names separated by spaces or commas, as an attribute or an element.
fn context_keys(element: &Element) -> Result<Option<Vec<Name>>> {
    let from_attribute = element.attribute("context_keys").map(|a| a.value.clone());
    let from_element = single(element, "context_keys")?
        .map(text_only)
        .transpose()?;
    let text = match (from_attribute, from_element) {
        (Some(_), Some(t)) => {
            return Err(Error::validation(
                "context_keys is given both as an attribute and as an element",
            )
            .with_span(t.span()))
        }
        (Some(t), None) | (None, Some(t)) => t,
        (None, None) => return Ok(None),
    };
    let mut keys = Vec::new();
    let mut start = 0;
    for (i, c) in text
        .as_str()
        .char_indices()
        .chain(std::iter::once((text.as_str().len(), ' ')))
    {
        if c.is_whitespace() || c == ',' {
            if i > start {
                keys.push(checked_name(&text.slice(start, i), "context key")?);
            }
            start = i + c.len_utf8();
        }
    }
    Ok(Some(keys))
}

fn timeout(element: &Element) -> Result<Syntax> {
    let text = text_only(element)?;
    let value = read_one(&text, "<timeout>");
    match value {
        Ok(
            syntax @ Syntax {
                kind: SyntaxKind::Int(n),
                ..
            },
        ) if n > 0 => Ok(syntax),
        Ok(
            syntax @ Syntax {
                kind: SyntaxKind::Float(f),
                ..
            },
        ) if f > 0.0 && f.is_finite() => Ok(syntax),
        _ => Err(Error::validation(format!(
            "`{}` is not a valid timeout (a positive number of seconds)",
            text.as_str()
        ))
        .with_span(text.span())),
    }
}

fn command_args(element: &Element) -> Result<Vec<Text>> {
    check_shape(element, &[], &["arg"])?;
    if element.children.is_empty() {
        return Err(
            Error::validation("<command> needs at least one <arg> (the program)")
                .with_span(element.span),
        );
    }
    element
        .children
        .iter()
        .map(|arg| {
            check_shape(arg, &[], &[])?;
            Ok(arg.text.clone())
        })
        .collect()
}
