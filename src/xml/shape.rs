//! Checks of an element's shape (its attributes, children and text) and of the names
//! written in attributes, shared by the validation of tasks and of steps.

use super::parse::{Attribute, Element};
use super::template::Name;
use super::text::Text;
use crate::error::{Error, Result};

/// Checks that `element` has only the `attributes` and child elements named, and no text
/// unless it has no children allowed at all.
pub fn check_shape(element: &Element, attributes: &[&str], children: &[&str]) -> Result<()> {
    for attribute in &element.attributes {
        if !attributes.contains(&attribute.name.as_str()) {
            let expected = if attributes.is_empty() {
                format!("<{}> takes no attributes", element.name)
            } else {
                format!("expected {}", attributes.join(", "))
            };
            return Err(Error::validation(format!(
                "unknown attribute `{}` on <{}> ({expected})",
                attribute.name, element.name
            ))
            .with_span(attribute.name_span));
        }
    }
    for child in &element.children {
        check_child(element, child, children)?;
    }
    if !children.is_empty() && element.has_text() {
        return Err(
            Error::validation(format!("<{}> holds elements, not text", element.name))
                .with_span(element.text.first_line_span()),
        );
    }
    Ok(())
}

/// Elements that templates written for the seeds' other implementations use, and what
/// to write in tasklisp instead: a refusal names the replacement, never "unknown" alone.
const PEER_ELEMENTS: &[(&str, &str)] = &[
    (
        "output_slot",
        "a task's result is its value: a later step reads it as step_results[N] (or through <accumulate_data>), and code binds it with (define name (task …))",
    ),
    (
        "criteria",
        "write what the evaluator judges by in its <instructions>, and give it subtype=\"evaluator\"; a provider's own criteria arrive in the TaskResult's `criteria`",
    ),
    (
        "provider",
        "a template does not choose its provider: pick it with --provider or (with-provider …) around the call, and the model with <model>",
    ),
    (
        "input_source",
        "bind a step's inputs where it is called: <arg name> inside <call>, or a parameter of the same name filled from the enclosing task's inputs",
    ),
];

/// Checks that `child` of `element` is one of the `children` allowed there.
pub fn check_child(element: &Element, child: &Element, children: &[&str]) -> Result<()> {
    if children.contains(&child.name.as_str()) {
        return Ok(());
    }
    if let Some((_, instead)) = PEER_ELEMENTS.iter().find(|(name, _)| *name == child.name) {
        return Err(Error::validation(format!(
            "<{}> is not a tasklisp element: {instead}",
            child.name
        ))
        .with_span(child.span));
    }
    let expected = if children.is_empty() {
        format!("<{}> holds only text", element.name)
    } else {
        format!(
            "expected {}",
            children
                .iter()
                .map(|c| format!("<{c}>"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(Error::validation(format!(
        "unknown element <{}> in <{}> ({expected})",
        child.name, element.name
    ))
    .with_span(child.span))
}

pub fn required_attribute<'e>(element: &'e Element, name: &str) -> Result<&'e Attribute> {
    element.attribute(name).ok_or_else(|| {
        Error::validation(format!("<{}> needs a `{name}` attribute", element.name))
            .with_span(element.span)
    })
}

/// The child named `name`, if there is one; two are an error.
pub fn single<'e>(element: &'e Element, name: &str) -> Result<Option<&'e Element>> {
    let mut found = element.children.iter().filter(|c| c.name == name);
    let first = found.next();
    if let Some(second) = found.next() {
        return Err(
            Error::validation(format!("<{name}> appears twice in <{}>", element.name))
                .with_span(second.span),
        );
    }
    Ok(first)
}

/// The trimmed text of an element that holds only text.
pub fn text_only(element: &Element) -> Result<Text> {
    check_shape(element, &[], &[])?;
    Ok(element.text.trim())
}

pub fn bad_value(attribute: &Attribute, value: &str, expected: &[&str]) -> Error {
    Error::validation(format!(
        "`{value}` is not a valid {} (expected one of: {})",
        attribute.name,
        expected.join(", ")
    ))
    .with_span(attribute.value.span())
}

/// A name that becomes a symbol in code (task, input, argument, context key).
pub fn symbol_name(attribute: &Attribute, what: &str) -> Result<Name> {
    checked_name(&attribute.value, what)
}

/// A name the reader reads as one plain symbol (no path, keyword, number or literal).
pub fn is_plain_symbol(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with([':', '#', '\''])
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "()[]{}\";'`,.".contains(c))
        && !matches!(name, "nil" | "null" | "true" | "false")
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && !(name.len() > 1
            && name.starts_with(['-', '+'])
            && name[1..].starts_with(|c: char| c.is_ascii_digit()))
}

pub fn checked_name(text: &Text, what: &str) -> Result<Name> {
    let trimmed = text.trim();
    let name = trimmed.as_str();
    if !is_plain_symbol(name) {
        return Err(Error::validation(format!(
            "`{name}` is not a valid {what} (it must be a plain symbol)"
        ))
        .with_span(trimmed.span()));
    }
    Ok(Name {
        text: name.to_owned(),
        span: trimmed.span(),
    })
}

/// A non-empty attribute value taken as it is (subtype).
pub fn plain_name(attribute: &Attribute, what: &str) -> Result<Name> {
    let trimmed = attribute.value.trim();
    if trimmed.as_str().is_empty() {
        return Err(
            Error::validation(format!("the {what} is empty")).with_span(attribute.name_span)
        );
    }
    Ok(Name {
        text: trimmed.as_str().to_owned(),
        span: trimmed.span(),
    })
}
