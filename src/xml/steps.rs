//! Validation of steps (`<task ref>`, `<call>`, `<cond>`) and of `<reduce>`.

use super::expr::read_one;
use super::infix::compile_test;
use super::parse::Element;
use super::shape::{check_shape, required_attribute, symbol_name};
use super::template::{Arg, Case, Name, Reduce, Step};
use crate::error::{Error, Result};
use std::collections::HashSet;

pub fn reduce(element: &Element) -> Result<Reduce> {
    check_shape(element, &["over", "initial"], &["task"])?;
    let over = read_one(&required_attribute(element, "over")?.value, "`over`")?;
    let initial = element
        .attribute("initial")
        .map(|a| read_one(&a.value, "`initial`"))
        .transpose()?;
    let task = match element.children.as_slice() {
        [task] => task_ref(task)?,
        _ => {
            return Err(Error::validation(
                "<reduce> holds exactly one <task ref=\"…\"/>, the task that combines",
            )
            .with_span(element.span))
        }
    };
    Ok(Reduce {
        over,
        initial,
        task,
    })
}

const STEP_ELEMENTS: [&str; 3] = ["task", "call", "cond"];

/// The steps inside `<steps>` or a `<case>` (which has the attributes `attributes`).
pub fn steps(element: &Element, attributes: &[&str]) -> Result<Vec<Step>> {
    check_shape(element, attributes, &STEP_ELEMENTS)?;
    if element.children.is_empty() {
        return Err(
            Error::validation(format!("<{}> needs at least one step", element.name))
                .with_span(element.span),
        );
    }
    element.children.iter().map(step).collect()
}

fn step(element: &Element) -> Result<Step> {
    match element.name.as_str() {
        "task" => task_ref(element).map(Step::Ref),
        "call" => call(element),
        _ => cond(element),
    }
}

fn task_ref(element: &Element) -> Result<Name> {
    if element.attribute("ref").is_none() {
        return Err(Error::validation(
            "a step <task> needs a `ref` attribute naming a task (define tasks at the top level)",
        )
        .with_span(element.span));
    }
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

fn cond(element: &Element) -> Result<Step> {
    check_shape(element, &[], &["case"])?;
    if element.children.is_empty() {
        return Err(
            Error::validation("<cond> needs at least one <case test=\"…\">")
                .with_span(element.span),
        );
    }
    let mut cases = Vec::with_capacity(element.children.len());
    for case in &element.children {
        let steps = steps(case, &["test"])?;
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
