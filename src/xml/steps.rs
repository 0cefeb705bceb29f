//! Validation of steps (`<task ref>`, inline `<task>`, `<code>`, `<call>`, `<cond>`) and
//! of `<reduce>`.

use super::expr::{read_all, read_one};
use super::infix::compile_test;
use super::parse::Element;
use super::shape::{check_shape, required_attribute, symbol_name};
use super::template::{template, Arg, Case, Name, Place, Reduce, Step};
use crate::error::{Error, Result};
use std::collections::HashSet;

pub fn reduce(element: &Element, place: &mut Place) -> Result<Reduce> {
    check_shape(element, &["over", "initial"], &["task"])?;
    let over = read_one(&required_attribute(element, "over")?.value, "`over`")?;
    let initial = element
        .attribute("initial")
        .map(|a| read_one(&a.value, "`initial`"))
        .transpose()?;
    let task = match element.children.as_slice() {
        [task] => match task_step(task, place)? {
            step @ (Step::Ref(_) | Step::Inline(_)) => step,
            _ => return Err(one_reducer(element)),
        },
        _ => return Err(one_reducer(element)),
    };
    Ok(Reduce {
        over,
        initial,
        task,
    })
}

fn one_reducer(element: &Element) -> Error {
    Error::validation(
        "<reduce> holds exactly one <task>, the task that combines (a ref or a task written in place)",
    )
    .with_span(element.span)
}

const STEP_ELEMENTS: [&str; 4] = ["task", "call", "cond", "code"];

/// The steps inside `<steps>` or a `<case>` (which has the attributes `attributes`).
pub fn steps(element: &Element, attributes: &[&str], place: &mut Place) -> Result<Vec<Step>> {
    check_shape(element, attributes, &STEP_ELEMENTS)?;
    if element.children.is_empty() {
        return Err(
            Error::validation(format!("<{}> needs at least one step", element.name))
                .with_span(element.span),
        );
    }
    element.children.iter().map(|e| step(e, place)).collect()
}

fn step(element: &Element, place: &mut Place) -> Result<Step> {
    match element.name.as_str() {
        "task" => task_step(element, place),
        "call" => call(element),
        "code" => code(element),
        _ => cond(element, place),
    }
}

/// `<task ref>`, or a task written in place: a `<code>` one runs as code, any other is
/// an anonymous task.
fn task_step(element: &Element, place: &mut Place) -> Result<Step> {
    if element.attribute("ref").is_some() {
        return task_ref(element).map(Step::Ref);
    }
    let code_child = element.children.iter().find(|c| c.name == "code");
    if let Some(code_element) = code_child {
        check_shape(element, &[], &["description", "code"])?;
        return code(code_element);
    }
    template(element, place).map(|t| Step::Inline(Box::new(t)))
}

/// `<code>`: one or more S-expressions.
fn code(element: &Element) -> Result<Step> {
    check_shape(element, &[], &[])?;
    let text = element.text.trim();
    let forms = read_all(&text, "<code>").map_err(|e| {
        e.with_hint(Some(
            "<code> holds tasklisp expressions (S-expressions), not code of another language"
                .into(),
        ))
    })?;
    if forms.is_empty() {
        return Err(Error::validation("<code> is empty").with_span(element.span));
    }
    Ok(Step::Code(forms, element.span))
}

fn task_ref(element: &Element) -> Result<Name> {
    check_shape(element, &["ref"], &[])?;
    if element.has_text() {
        return Err(
            Error::validation("<task ref> takes no text").with_span(element.text.first_line_span())
        );
    }
    symbol_name(required_attribute(element, "ref")?, "task reference")
}

fn call(element: &Element) -> Result<Step> {
    check_shape(element, &["template"], &["arg"])?;
    let template = symbol_name(required_attribute(element, "template")?, "template name")?;
    let mut args = Vec::with_capacity(element.children.len());
    let mut named = HashSet::new();
    for arg in &element.children {
        check_shape(arg, &["name"], &[])?;
        let name = arg
            .attribute("name")
            .map(|a| symbol_name(a, "argument name"))
            .transpose()?;
        if let Some(n) = &name {
            if !named.insert(n.text.clone()) {
                return Err(
                    Error::validation(format!("argument `{}` is given twice", n.text))
                        .with_span(n.span),
                );
            }
        }
        args.push(Arg {
            name,
            expr: read_one(&arg.text, "<arg>")?,
        });
    }
    Ok(Step::Call {
        template,
        args,
        span: element.span,
    })
}

pub fn cond(element: &Element, place: &mut Place) -> Result<Step> {
    check_shape(element, &[], &["case"])?;
    if element.children.is_empty() {
        return Err(
            Error::validation("<cond> needs at least one <case test=\"…\">")
                .with_span(element.span),
        );
    }
    let mut cases = Vec::with_capacity(element.children.len());
    for case in &element.children {
        let steps = steps(case, &["test"], place)?;
        cases.push(Case {
            test: compile_test(&required_attribute(case, "test")?.value)?,
            steps,
        });
    }
    Ok(Step::Cond {
        cases,
        span: element.span,
    })
}
