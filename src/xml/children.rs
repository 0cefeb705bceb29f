//! The child elements of a `<task>`, each read into its part of a
//! [`Template`](super::template::Template): the
//! options the task table says are written as one element, `<inputs>`, `<tools>`,
//! `<output_format>` and its schema, the context settings (as attributes, in `<task>`
//! or in `<context_management>`), `<accumulate_data>`, `<loop>`, and the texts of
//! `<command>` and `<file_paths>`.

use super::expr::{read_json, read_one};
use super::parse::{Attribute, Element};
use super::shape::{
    bad_value, check_shape, checked_name, plain_name, required_attribute, single, symbol_name,
    text_only,
};
use super::template::{Input, LoopSpec, Name, Output, Schema};
use super::text::Text;
use crate::error::{Error, Result};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::task::table;
use crate::task::tools::PARAM_TYPES;
use serde_json::Value as Json;
use std::collections::HashSet;

const SCHEMA_TYPES: [&str; 5] = ["object", "array", "string", "number", "boolean"];
const CONTEXT_MODES: [&str; 3] = ["full", "none", "subset"];
const ACCUMULATION_FORMATS: [&str; 2] = ["full_output", "notes_only"];

/// The options written as one element holding a text, a number, a boolean or an
/// expression, read as the table says: in `<task>`, in `<context_management>`, and the
/// model options in `<model_options>`.
pub(super) fn element_options(
    element: &Element,
    management: Option<&Element>,
) -> Result<Vec<(&'static str, Syntax)>> {
    let mut out = Vec::new();
    let managed = management.iter().flat_map(|m| m.children.iter());
    for child in element.children.iter().chain(managed) {
        if child.name == table::MODEL_OPTIONS {
            let names: Vec<&str> = table::contained(table::MODEL_OPTIONS)
                .filter_map(|o| o.xml.element())
                .collect();
            check_shape(child, &[], &names)?;
            for option_element in &child.children {
                let option = table::option_for_element(&option_element.name, Some(&child.name));
                if let Some(option) = option {
                    add_option(&mut out, option, option_element, child)?;
                }
            }
        } else if let Some(option) = table::option_for_element(&child.name, None) {
            add_option(&mut out, option, child, element)?;
        }
    }
    Ok(out)
}

/// Reads one option's element (in `parent`) into `out`; an option written twice is an
/// error.
fn add_option(
    out: &mut Vec<(&'static str, Syntax)>,
    option: &'static table::TaskOption,
    child: &Element,
    parent: &Element,
) -> Result<()> {
    if out.iter().any(|(name, _)| *name == option.name) {
        return Err(Error::validation(format!(
            "<{}> appears twice in <{}>",
            child.name, parent.name
        ))
        .with_span(child.span));
    }
    let value = match option.xml {
        table::Xml::Text(_) => {
            let text = text_only(child)?;
            Syntax::new(
                SyntaxKind::Str(std::rc::Rc::new(text.as_str().to_owned())),
                text.span(),
            )
        }
        table::Xml::Number(_) => number(child)?,
        table::Xml::Bool(_) => boolean(child)?,
        table::Xml::Expr(_) => read_one(&text_only(child)?, &format!("<{}>", child.name))?,
        table::Xml::Json(_) => read_json(&text_only(child)?, &format!("<{}>", child.name))?,
        table::Xml::Element("attachments") => super::attachments::syntax(child)?,
        table::Xml::Element(_) | table::Xml::Attribute(_) => return Ok(()),
    };
    out.push((option.name, value));
    Ok(())
}

// ---- the parts of a task ------------------------------------------------------------------

pub(super) fn inputs(element: &Element) -> Result<Vec<Input>> {
    check_shape(element, &[], &["input"])?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for input in &element.children {
        check_shape(input, &["name", "default", "type"], &[])?;
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
        let kind = match input.attribute("type") {
            None => None,
            Some(attr) => {
                let written = attr.value.as_str().trim();
                if !PARAM_TYPES.contains(&written) {
                    return Err(bad_value(attr, written, &PARAM_TYPES));
                }
                Some(plain_name(attr, "type")?)
            }
        };
        out.push(Input {
            name,
            default: input.attribute("default").map(|a| a.value.clone()),
            kind,
        });
    }
    Ok(out)
}

/// `<tools><tool ref="t"/>…</tools>`: each a task, named once.
pub(super) fn tools(element: &Element) -> Result<Vec<Name>> {
    check_shape(element, &[], &["tool"])?;
    let mut out: Vec<Name> = Vec::new();
    for tool in &element.children {
        check_shape(tool, &["ref"], &[])?;
        if tool.has_text() {
            return Err(
                Error::validation("<tool> takes no text (it is written ref=\"…\")")
                    .with_span(tool.text.first_line_span()),
            );
        }
        let name = symbol_name(required_attribute(tool, "ref")?, "tool reference")?;
        if out.iter().any(|n| n.text == name.text) {
            return Err(
                Error::validation(format!("tool `{}` is offered twice", name.text))
                    .with_span(name.span),
            );
        }
        out.push(name);
    }
    Ok(out)
}

pub(super) fn output(element: &Element) -> Result<Output> {
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

/// A context setting written in the task or in its `<context_management>`, not both.
fn managed_child<'e>(
    element: &'e Element,
    management: Option<&'e Element>,
    name: &str,
) -> Result<Option<&'e Element>> {
    let direct = single(element, name)?;
    let managed = management.map(|m| single(m, name)).transpose()?.flatten();
    match (direct, managed) {
        (Some(_), Some(second)) => Err(Error::validation(format!(
            "<{name}> is given both in the task and in <context_management>"
        ))
        .with_span(second.span)),
        (one, other) => Ok(one.or(other)),
    }
}

/// `<accumulate_data>true</accumulate_data>` or `<accumulate_data format="…"/>`, with
/// `<accumulation_format>`: the format, or `None` when data is not accumulated.
pub(super) fn accumulation(management: &Element) -> Result<Option<Name>> {
    let Some(data) = single(management, "accumulate_data")? else {
        if let Some(format) = single(management, "accumulation_format")? {
            return Err(Error::validation(
                "<accumulation_format> needs <accumulate_data>true</accumulate_data>",
            )
            .with_span(format.span));
        }
        return Ok(None);
    };
    check_shape(data, &["format"], &[])?;
    let on = match data.text.trim().as_str() {
        "" | "true" => true,
        "false" => false,
        other => {
            return Err(Error::validation(format!(
                "`{other}` is not a valid accumulate_data (true or false)"
            ))
            .with_span(data.text.trim().span()))
        }
    };
    let from_element = single(management, "accumulation_format")?
        .map(text_only)
        .transpose()?;
    let format = match (data.attribute("format"), from_element) {
        (Some(_), Some(t)) => {
            return Err(Error::validation(
                "the accumulation format is given both as format= and as <accumulation_format>",
            )
            .with_span(t.span()))
        }
        (Some(attribute), None) => Some(attribute.value.trim()),
        (None, text) => text,
    };
    if !on {
        return Ok(None);
    }
    let Some(format) = format else {
        return Ok(Some(Name {
            text: "notes_only".to_owned(),
            span: data.span,
        }));
    };
    one_of(&format, &ACCUMULATION_FORMATS, "accumulation format").map(Some)
}

/// `<loop director="d" evaluator="e" max_iterations="3" input="expr"/>`.
pub(super) fn loop_spec(element: &Element) -> Result<LoopSpec> {
    check_shape(
        element,
        &["director", "evaluator", "max_iterations", "input"],
        &[],
    )?;
    if element.has_text() {
        return Err(
            Error::validation("<loop> takes no text").with_span(element.text.first_line_span())
        );
    }
    let read = |name: &str| {
        element
            .attribute(name)
            .map(|a| read_one(&a.value, &format!("`{name}`")))
            .transpose()
    };
    Ok(LoopSpec {
        director: symbol_name(required_attribute(element, "director")?, "task reference")?,
        evaluator: symbol_name(required_attribute(element, "evaluator")?, "task reference")?,
        max_iterations: read("max_iterations")?,
        input: read("input")?,
    })
}

/// `inherit_context` as an attribute of the task or as an element, not both.
pub(super) fn context_setting(
    element: &Element,
    management: Option<&Element>,
) -> Result<Option<Name>> {
    let Some(text) = attribute_or_element(element, management, "inherit_context")? else {
        return Ok(None);
    };
    let text = text.trim();
    one_of(&text, &CONTEXT_MODES, "inherit_context").map(Some)
}

/// A setting written as an attribute of the task or as an element, not both.
fn attribute_or_element(
    element: &Element,
    management: Option<&Element>,
    name: &str,
) -> Result<Option<Text>> {
    let from_attribute = element.attribute(name).map(|a| a.value.clone());
    let from_element = managed_child(element, management, name)?
        .map(text_only)
        .transpose()?;
    match (from_attribute, from_element) {
        (Some(_), Some(t)) => Err(Error::validation(format!(
            "{name} is given both as an attribute and as an element"
        ))
        .with_span(t.span())),
        (Some(t), None) | (None, Some(t)) => Ok(Some(t)),
        (None, None) => Ok(None),
    }
}

/// `text` as a name when it is one of `allowed`, else an error naming them.
fn one_of(text: &Text, allowed: &[&str], what: &str) -> Result<Name> {
    if !allowed.contains(&text.as_str()) {
        return Err(Error::validation(format!(
            "`{}` is not a valid {what} (expected one of: {})",
            text.as_str(),
            allowed.join(", ")
        ))
        .with_span(text.span()));
    }
    Ok(Name {
        text: text.as_str().to_owned(),
        span: text.span(),
    })
}

/// `context_keys`: names separated by spaces or commas, as an attribute or an element.
pub(super) fn context_keys(
    element: &Element,
    management: Option<&Element>,
) -> Result<Option<Vec<Name>>> {
    let Some(text) = attribute_or_element(element, management, "context_keys")? else {
        return Ok(None);
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

/// A number that is not negative; the option's own check (at definition) says more.
fn number(element: &Element) -> Result<Syntax> {
    let text = text_only(element)?;
    match read_one(&text, &format!("<{}>", element.name)) {
        Ok(
            syntax @ Syntax {
                kind: SyntaxKind::Int(0..),
                ..
            },
        ) => Ok(syntax),
        Ok(
            syntax @ Syntax {
                kind: SyntaxKind::Float(f),
                ..
            },
        ) if f >= 0.0 && f.is_finite() => Ok(syntax),
        _ => Err(Error::validation(format!(
            "`{}` is not a valid {} (a number)",
            text.as_str(),
            element.name
        ))
        .with_span(text.span())),
    }
}

/// `true` or `false`; also `enabled` or `disabled`, as the design documents write
/// `fresh_context`.
fn boolean(element: &Element) -> Result<Syntax> {
    let text = text_only(element)?;
    let value = match text.as_str() {
        "true" | "enabled" => true,
        "false" | "disabled" => false,
        other => {
            return Err(Error::validation(format!(
                "`{other}` is not a valid {} (true or false; enabled or disabled)",
                element.name
            ))
            .with_span(text.span()))
        }
    };
    Ok(Syntax::new(SyntaxKind::Bool(value), text.span()))
}

/// The texts of an element's children, all named `child`.
pub(super) fn text_children(element: &Element, child: &str) -> Result<Vec<Text>> {
    check_shape(element, &[], &[child])?;
    element.children.iter().map(text_only).collect()
}

pub(super) fn command_args(element: &Element) -> Result<Vec<Text>> {
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
