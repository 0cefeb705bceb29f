//! Templates to ordinary `deftask` syntax, so an XML task is exactly a `deftask`.
//!
//! Every generated node carries a span into the XML file, so errors at run time (an
//! unbound name in an `<arg>`, a failing test) point at the template that caused them.

use super::template::{Arg, Case, Input, Kind, Name, Output, Schema, Step, Template};
use super::text::Text;
use crate::error::{Error, Result};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::{from_json, Value};
use std::rc::Rc;

/// A parameter of a task, as far as calls to it need to know.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub optional: bool,
}

/// What a reference to a task resolves to.
pub struct Callee {
    /// The name to call it by (namespaced for tasks of an imported file).
    pub symbol: Sym,
    /// Its parameters, when they are known (`None` for a task whose definition does not
    /// list them).
    pub params: Option<Vec<Param>>,
}

/// Resolves the task names a template refers to; an unknown name is an error.
pub trait Resolve {
    fn resolve(&self, name: &Name) -> Result<Callee>;
}

/// The parameters a template declares.
pub fn template_params(template: &Template) -> Vec<Param> {
    template
        .inputs
        .iter()
        .map(|input| Param {
            name: input.name.text.clone(),
            optional: input.default.is_some(),
        })
        .collect()
}

/// `(deftask NAME (PARAMS) :option value… BODY?)` for `template`, registered as `name`.
pub fn deftask(template: &Template, name: Sym, resolver: &dyn Resolve) -> Result<Syntax> {
    let span = template.span;
    let mut form = vec![
        symbol("deftask", span),
        Syntax::new(SyntaxKind::Symbol(name), template.name.span),
    ];
    form.push(list(template.inputs.iter().map(param).collect(), span));
    let mut option = |key: &str, value: Syntax| {
        form.push(Syntax::new(SyntaxKind::Keyword(Sym::new(key)), value.span));
        form.push(value);
    };
    if let Some(description) = &template.description {
        option("description", text_string(description));
    }
    if let Some(subtype) = &template.subtype {
        option("subtype", name_string(subtype));
    }
    if let Some(system) = &template.system {
        option("system", text_string(system));
    }
    if let Some(instructions) = &template.instructions {
        option("prompt", text_string(instructions));
    }
    if let Some(Output {
        json: true,
        schema,
        strict,
    }) = &template.output
    {
        option("output", string("json", span));
        if *strict {
            option(
                "strict-json",
                Syntax::new(SyntaxKind::Value(Value::Bool(true)), span),
            );
        }
        match schema {
            Some(Schema::Type(kind)) => option("schema", name_string(kind)),
            Some(Schema::Json(json, at)) => option(
                "schema",
                Syntax::new(SyntaxKind::Value(from_json(json)), *at),
            ),
            None => {}
        }
    }
    if let Some(model) = &template.model {
        option("model", text_string(model));
    }
    if let Some(mode) = &template.inherit_context {
        option("inherit-context", name_string(mode));
    }
    if let Some(keys) = &template.context_keys {
        option(
            "context-keys",
            vector(keys.iter().map(name_string).collect(), span),
        );
    }
    if !template.command.is_empty() {
        option(
            "command",
            vector(template.command.iter().map(command_arg).collect(), span),
        );
    }
    if let Some(timeout) = &template.timeout {
        option("timeout", timeout.clone());
    }
    match template.kind {
        Kind::Sequential => {
            let mut sequential = vec![symbol("sequential", span)];
            for step in &template.steps {
                sequential.push(step_form(step, &template.inputs, resolver)?);
            }
            form.push(list(sequential, span));
        }
        Kind::Reduce => {
            if let Some(reduce) = &template.reduce {
                option("type", string("reduce", span));
                let combine = resolver.resolve(&reduce.task)?;
                check_reducer(&combine, &reduce.task)?;
                let initial = reduce
                    .initial
                    .clone()
                    .unwrap_or_else(|| Syntax::new(SyntaxKind::Nil, span));
                form.push(list(
                    vec![
                        symbol("reduce-task", span),
                        Syntax::new(SyntaxKind::Symbol(combine.symbol), reduce.task.span),
                        initial,
                        reduce.over.clone(),
                    ],
                    span,
                ));
            }
        }
        Kind::Atomic | Kind::Script => {}
    }
    Ok(list(form, span))
}

fn param(input: &Input) -> Syntax {
    let name = Syntax::new(
        SyntaxKind::Symbol(Sym::new(&input.name.text)),
        input.name.span,
    );
    match &input.default {
        None => name,
        Some(default) => list(vec![name, text_string(default)], input.name.span),
    }
}

/// The task a `<reduce>` uses is called with two arguments, the accumulator and the item.
fn check_reducer(combine: &Callee, name: &Name) -> Result<()> {
    let Some(params) = &combine.params else {
        return Ok(());
    };
    let required = params.iter().filter(|p| !p.optional).count();
    if required > 2 || params.len() < 2 {
        return Err(Error::validation(format!(
            "<reduce> calls `{}` with two arguments (the accumulator and the item), but it takes {}",
            name.text,
            describe_arity(params)
        ))
        .with_span(name.span));
    }
    Ok(())
}

fn describe_arity(params: &[Param]) -> String {
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    match names.len() {
        0 => "no inputs".into(),
        _ => format!("({})", names.join(" ")),
    }
}

fn step_form(step: &Step, inputs: &[Input], resolver: &dyn Resolve) -> Result<Syntax> {
    match step {
        Step::Ref(name) => {
            let callee = resolver.resolve(name)?;
            let mut call = vec![Syntax::new(SyntaxKind::Symbol(callee.symbol), name.span)];
            for param in callee.params.iter().flatten() {
                let bound_here = inputs.iter().any(|i| i.name.text == param.name);
                if !param.optional || bound_here {
                    call.push(Syntax::new(
                        SyntaxKind::Keyword(Sym::new(&param.name)),
                        name.span,
                    ));
                    call.push(symbol(&param.name, name.span));
                }
            }
            Ok(list(call, name.span))
        }
        Step::Call {
            template,
            args,
            span,
        } => {
            let callee = resolver.resolve(template)?;
            check_arguments(&callee, template, args)?;
            let mut call = vec![Syntax::new(
                SyntaxKind::Symbol(callee.symbol),
                template.span,
            )];
            for arg in args {
                if let Some(name) = &arg.name {
                    call.push(Syntax::new(
                        SyntaxKind::Keyword(Sym::new(&name.text)),
                        name.span,
                    ));
                }
                call.push(arg.expr.clone());
            }
            Ok(list(call, *span))
        }
        Step::Cond { cases, span } => {
            let previous = list(
                vec![symbol("last", *span), symbol("step_results", *span)],
                *span,
            );
            let mut form = vec![symbol("cond-output", *span), previous];
            for case in cases {
                form.push(case_clause(case, inputs, resolver)?);
            }
            form.push(list(
                vec![symbol("else", *span), Syntax::new(SyntaxKind::Nil, *span)],
                *span,
            ));
            Ok(list(form, *span))
        }
    }
}

fn case_clause(case: &Case, inputs: &[Input], resolver: &dyn Resolve) -> Result<Syntax> {
    let mut clause = vec![case.test.clone()];
    for step in &case.steps {
        clause.push(step_form(step, inputs, resolver)?);
    }
    Ok(list(clause, case.test.span))
}

/// Named arguments must name a parameter, and there must not be too many positional ones.
fn check_arguments(callee: &Callee, template: &Name, args: &[Arg]) -> Result<()> {
    let Some(params) = &callee.params else {
        return Ok(());
    };
    for name in args.iter().filter_map(|a| a.name.as_ref()) {
        if !params.iter().any(|p| p.name == name.text) {
            return Err(Error::validation(format!(
                "task `{}` has no input `{}` (its inputs: {})",
                template.text,
                name.text,
                describe_arity(params)
            ))
            .with_span(name.span));
        }
    }
    let positional = args.iter().filter(|a| a.name.is_none()).count();
    if positional > params.len() {
        return Err(Error::validation(format!(
            "task `{}` takes {} input(s) but this call passes {positional} positional arguments",
            template.text,
            params.len()
        ))
        .with_span(template.span));
    }
    Ok(())
}

/// A command argument is a template: `{{name}}` tags become references, the rest is
/// literal; several pieces are joined with `str`.
fn command_arg(arg: &Text) -> Syntax {
    let pieces = template_pieces(arg);
    match pieces.as_slice() {
        [] => Syntax::new(SyntaxKind::Str(Rc::new(String::new())), arg.span()),
        [single @ Syntax {
            kind: SyntaxKind::Str(_),
            ..
        }] => single.clone(),
        _ => {
            let mut call = vec![symbol("str", arg.span())];
            call.extend(pieces);
            list(call, arg.span())
        }
    }
}

/// Splits a template into literal strings and the symbols or paths of its tags. A tag
/// is `{{` symbol-or-path `}}` (spaces allowed inside); anything else stays literal.
fn template_pieces(text: &Text) -> Vec<Syntax> {
    let s = text.as_str();
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut literal_start = 0;
    let mut pos = 0;
    while let Some(open) = s[pos..].find("{{").map(|i| pos + i) {
        let tag = s[open + 2..]
            .find("}}")
            .map(|i| open + 2 + i)
            .and_then(|close| tag_reference(text, open + 2, close).map(|r| (r, close)));
        match tag {
            Some((reference, close)) => {
                literal.push_str(&s[pos..open]);
                if !literal.is_empty() {
                    pieces.push(Syntax::new(
                        SyntaxKind::Str(Rc::new(std::mem::take(&mut literal))),
                        text.span_of(literal_start, open),
                    ));
                }
                pieces.push(reference);
                pos = close + 2;
                literal_start = pos;
            }
            None => {
                literal.push_str(&s[pos..open + 2]);
                pos = open + 2;
            }
        }
    }
    literal.push_str(&s[pos..]);
    if !literal.is_empty() {
        pieces.push(Syntax::new(
            SyntaxKind::Str(Rc::new(literal)),
            text.span_of(literal_start, s.len()),
        ));
    }
    pieces
}

/// The symbol or path inside a tag, if that is what it holds.
fn tag_reference(text: &Text, start: usize, end: usize) -> Option<Syntax> {
    let inner = text.slice(start, end).trim();
    if inner.as_str().is_empty() {
        return None;
    }
    let syntax = super::expr::read_one(&inner, "a tag").ok()?;
    matches!(syntax.kind, SyntaxKind::Symbol(_) | SyntaxKind::Path(_)).then_some(syntax)
}

// ---- syntax builders ---------------------------------------------------------------------

fn symbol(name: &str, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Symbol(Sym::new(name)), span)
}

fn string(value: &str, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Str(Rc::new(value.to_owned())), span)
}

fn text_string(text: &Text) -> Syntax {
    string(text.as_str(), text.span())
}

fn name_string(name: &Name) -> Syntax {
    string(&name.text, name.span)
}

fn list(items: Vec<Syntax>, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::List(items), span)
}

fn vector(items: Vec<Syntax>, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Vector(items), span)
}
