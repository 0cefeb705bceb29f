//! Templates to ordinary `deftask` syntax, so an XML task is exactly a `deftask`.
//!
//! Every generated node carries a span into the XML file, so errors at run time (an
//! unbound name in an `<arg>`, a failing test) point at the template that caused them.

use super::template::{Arg, Case, Input, Kind, LoopSpec, Name, Output, Schema, Step, Template};
use super::text::Text;
use crate::error::{Error, Result};
use crate::eval::reader::{Syntax, SyntaxKind};
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

/// Resolves the task names a template refers to. `None` is a name not known yet: the
/// generated code looks it up when it runs (an error instead when checking strictly).
pub trait Resolve {
    fn resolve(&self, name: &Name) -> Result<Option<Callee>>;
    /// The name a task of this file is registered under.
    fn qualified(&self, name: &str) -> String;
}

/// The parameters a template declares.
/// A template's parameters: its inputs, or `None` for an alias (`<task name ref/>`),
/// whose parameters are its target's.
pub fn template_params(template: &Template) -> Option<Vec<Param>> {
    if template.alias.is_some() {
        return None;
    }
    let params = template.inputs.iter().map(|input| Param {
        name: input.name.text.clone(),
        optional: input.default.is_some(),
    });
    Some(params.collect())
}

/// `(deftask NAME (PARAMS) :option value… BODY?)` for `template`, registered as `name`.
pub fn deftask(template: &Template, name: Sym, resolver: &dyn Resolve) -> Result<Syntax> {
    if let Some(target) = &template.alias {
        return alias(template, name, target, resolver);
    }
    let span = template.span;
    let mut form = vec![
        symbol("deftask", span),
        Syntax::new(SyntaxKind::Symbol(name), template.name.span),
    ];
    form.push(list(template.inputs.iter().map(param).collect(), span));
    push_options(&mut form, template, resolver)?;
    push_work(&mut form, template, resolver)?;
    Ok(list(form, span))
}

/// `:key value` at the end of a form.
fn push_option(form: &mut Vec<Syntax>, key: &str, value: Syntax) {
    form.push(Syntax::new(SyntaxKind::Keyword(Sym::new(key)), value.span));
    form.push(value);
}

/// The options of a template's `deftask`, in the order `deftask` lists them.
fn push_options(form: &mut Vec<Syntax>, template: &Template, resolver: &dyn Resolve) -> Result<()> {
    let span = template.span;
    if let Some(subtype) = &template.subtype {
        push_option(form, "subtype", name_string(subtype));
    }
    for (name, value) in &template.options {
        push_option(form, name, value.clone());
    }
    push_output(form, &template.output, span);
    if let Some(mode) = &template.inherit_context {
        push_option(form, "inherit-context", name_string(mode));
    }
    if let Some(tools) = &template.tools {
        let mut offered = Vec::new();
        for tool in tools {
            offered.push(callee_symbol(resolver.resolve(tool)?.as_ref(), tool));
        }
        push_option(form, "tools", vector(offered, span));
    }
    if let Some(types) = param_types(&template.inputs) {
        push_option(form, "param-types", types);
    }
    if let Some(keys) = &template.context_keys {
        push_option(
            form,
            "context-keys",
            vector(keys.iter().map(name_string).collect(), span),
        );
    }
    if let Some(files) = &template.files {
        push_option(
            form,
            "files",
            vector(files.iter().map(command_arg).collect(), span),
        );
    }
    if !template.command.is_empty() {
        push_option(
            form,
            "command",
            vector(template.command.iter().map(command_arg).collect(), span),
        );
    }
    Ok(())
}

/// `:output "json"`, `:strict-json` and `:schema` for an `<output_format>` asking for JSON.
fn push_output(form: &mut Vec<Syntax>, output: &Option<Output>, span: Span) {
    if let Some(Output {
        json: true,
        schema,
        strict,
    }) = output
    {
        push_option(form, "output", string("json", span));
        if *strict {
            push_option(
                form,
                "strict-json",
                Syntax::new(SyntaxKind::Value(Value::Bool(true)), span),
            );
        }
        match schema {
            Some(Schema::Type(kind)) => push_option(form, "schema", name_string(kind)),
            Some(Schema::Json(json, at)) => push_option(
                form,
                "schema",
                Syntax::new(SyntaxKind::Value(from_json(json)), *at),
            ),
            None => {}
        }
    }
}

/// What the task runs, by its type: the `(sequential …)`, `(reduce-task …)`,
/// `(director-evaluator-loop …)` or `cond` body (atomic and script tasks have options).
fn push_work(form: &mut Vec<Syntax>, template: &Template, resolver: &dyn Resolve) -> Result<()> {
    let span = template.span;
    match template.kind {
        Kind::Sequential => {
            let mut sequential = vec![symbol("sequential", span)];
            if let Some(format) = &template.accumulate {
                sequential.push(Syntax::new(
                    SyntaxKind::Keyword(Sym::new("accumulate")),
                    format.span,
                ));
                sequential.push(name_string(format));
            }
            for step in &template.steps {
                sequential.push(step_form(step, &template.inputs, resolver)?);
            }
            form.push(list(sequential, span));
        }
        Kind::Reduce => {
            if let Some(reduce) = &template.reduce {
                push_option(form, "type", string("reduce", span));
                let (combine, at) = step_callee(&reduce.task, resolver)?;
                if let Some(callee) = &combine {
                    check_reducer(callee, &at)?;
                }
                let initial = reduce
                    .initial
                    .clone()
                    .unwrap_or_else(|| Syntax::new(SyntaxKind::Nil, span));
                form.push(list(
                    vec![
                        symbol("reduce-task", span),
                        callee_symbol(combine.as_ref(), &at),
                        initial,
                        reduce.over.clone(),
                    ],
                    span,
                ));
            }
        }
        Kind::DirectorEvaluatorLoop => {
            if let Some(spec) = &template.loop_spec {
                push_option(form, "type", string("director_evaluator_loop", span));
                form.push(loop_form(spec, resolver, span)?);
            }
        }
        Kind::Composite => {
            // A file whose root is <cond>: its cases test the task's one input.
            if let ([Step::Cond { cases, span }], [input]) =
                (template.steps.as_slice(), template.inputs.as_slice())
            {
                let subject = symbol(&input.name.text, input.name.span);
                form.push(cond_form(
                    subject,
                    cases,
                    *span,
                    &template.inputs,
                    resolver,
                )?);
            }
        }
        Kind::Atomic | Kind::Script => {}
    }
    Ok(())
}

/// `<task name="x" ref="y"/>`: a task `x` with `y`'s parameters that calls `y`. An
/// optional parameter left out (nil) is left out of the call too, so `y`'s default applies.
/// When `y` is not known at import, `x` is an alias in the TaskLibrary, followed at each
/// call.
fn alias(template: &Template, name: Sym, target: &Name, resolver: &dyn Resolve) -> Result<Syntax> {
    let span = template.span;
    let Some(params) = resolver.resolve(target)?.and_then(|callee| callee.params) else {
        // Not known yet: the name is followed at each call.
        return Ok(list(
            vec![
                symbol("task-alias", span),
                string(name.name(), template.name.span),
                string(&target.text, target.span),
            ],
            span,
        ));
    };
    let mut declared = Vec::with_capacity(params.len());
    let mut bindings = Vec::with_capacity(params.len() * 2);
    for param in &params {
        let symbol_syntax = symbol(&param.name, target.span);
        declared.push(if param.optional {
            list(
                vec![symbol_syntax.clone(), Syntax::new(SyntaxKind::Nil, span)],
                span,
            )
        } else {
            symbol_syntax.clone()
        });
        bindings.push(string(&param.name, target.span));
        bindings.push(symbol_syntax);
    }
    Ok(list(
        vec![
            symbol("deftask", span),
            Syntax::new(SyntaxKind::Symbol(name), template.name.span),
            list(declared, span),
            Syntax::new(SyntaxKind::Keyword(Sym::new("description")), span),
            string(&format!("another name for {}", target.text), span),
            list(
                vec![
                    symbol("call-task", span),
                    string(&resolver.qualified(&target.text), target.span),
                    Syntax::new(SyntaxKind::Map(bindings), span),
                ],
                span,
            ),
        ],
        span,
    ))
}

/// `(director-evaluator-loop :director d :evaluator e :max-iterations n :input x)`.
fn loop_form(spec: &LoopSpec, resolver: &dyn Resolve, span: Span) -> Result<Syntax> {
    let mut form = vec![symbol("director-evaluator-loop", span)];
    let mut option = |key: &str, value: Syntax| {
        form.push(Syntax::new(SyntaxKind::Keyword(Sym::new(key)), value.span));
        form.push(value);
    };
    for (key, name) in [("director", &spec.director), ("evaluator", &spec.evaluator)] {
        let callee = resolver.resolve(name)?;
        option(key, callee_symbol(callee.as_ref(), name));
    }
    if let Some(n) = &spec.max_iterations {
        option("max-iterations", n.clone());
    }
    if let Some(input) = &spec.input {
        option("input", input.clone());
    }
    Ok(list(form, span))
}

/// What a `<task>` step calls: a reference (resolved now or at call time) or a task
/// written in place; and the name as written, for messages and spans.
fn step_callee(step: &Step, resolver: &dyn Resolve) -> Result<(Option<Callee>, Name)> {
    match step {
        Step::Ref(name) => Ok((resolver.resolve(name)?, name.clone())),
        Step::Inline(template) => Ok((
            Some(Callee {
                symbol: Sym::new(&resolver.qualified(&template.name.text)),
                params: template_params(template),
            }),
            template.name.clone(),
        )),
        _ => Err(Error::validation("expected a <task> step").with_span(Span::generated())),
    }
}

/// The symbol a call uses: the resolved one, or the name as written, looked up when the
/// call runs.
fn callee_symbol(callee: Option<&Callee>, name: &Name) -> Syntax {
    let symbol = callee.map_or_else(|| Sym::new(&name.text), |c| c.symbol);
    Syntax::new(SyntaxKind::Symbol(symbol), name.span)
}

/// `{"name" "type" …}` for the inputs declared with a `type`, when any is.
fn param_types(inputs: &[Input]) -> Option<Syntax> {
    let typed: Vec<(&Input, &Name)> = inputs
        .iter()
        .filter_map(|input| input.kind.as_ref().map(|kind| (input, kind)))
        .collect();
    let (_, first) = typed.first()?;
    let map: serde_json::Map<String, serde_json::Value> = typed
        .iter()
        .map(|(input, kind)| (input.name.text.clone(), kind.text.clone().into()))
        .collect();
    Some(Syntax::new(
        SyntaxKind::Value(from_json(&serde_json::Value::Object(map))),
        first.span,
    ))
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
        Step::Ref(_) | Step::Inline(_) => {
            let (callee, name) = step_callee(step, resolver)?;
            Ok(match callee {
                Some(callee) => call_by_parameters(&callee, &name, inputs),
                None => call_at_run_time(&name, inputs),
            })
        }
        Step::Code(forms, span) => {
            let mut form = vec![symbol("begin", *span)];
            form.extend(forms.iter().cloned());
            Ok(list(form, *span))
        }
        Step::Call {
            template,
            args,
            span,
        } => {
            let callee = resolver.resolve(template)?;
            if let Some(callee) = &callee {
                check_arguments(callee, template, args)?;
            }
            check_data_arguments(args, inputs, resolver)?;
            let mut call = vec![callee_symbol(callee.as_ref(), template)];
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
            cond_form(previous, cases, *span, inputs, resolver)
        }
    }
}

/// `(cond-output SUBJECT (test steps…)… (else nil))`.
fn cond_form(
    subject: Syntax,
    cases: &[Case],
    span: Span,
    inputs: &[Input],
    resolver: &dyn Resolve,
) -> Result<Syntax> {
    let mut form = vec![symbol("cond-output", span), subject];
    for case in cases {
        form.push(case_clause(case, inputs, resolver)?);
    }
    form.push(list(
        vec![symbol("else", span), Syntax::new(SyntaxKind::Nil, span)],
        span,
    ));
    Ok(list(form, span))
}

/// `(x :p p …)`: the task's required parameters, and the optional ones the enclosing
/// task binds, passed by name from the bindings where the step runs.
fn call_by_parameters(callee: &Callee, name: &Name, inputs: &[Input]) -> Syntax {
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
    list(call, name.span)
}

/// `(call-task "x" {"input" input …})` for a task not known yet: the enclosing task's
/// inputs, of which the task takes those it has parameters for when it is called.
fn call_at_run_time(name: &Name, inputs: &[Input]) -> Syntax {
    let mut bindings = Vec::with_capacity(inputs.len() * 2);
    for input in inputs {
        bindings.push(string(&input.name.text, input.name.span));
        bindings.push(symbol(&input.name.text, input.name.span));
    }
    list(
        vec![
            symbol("call-task", name.span),
            string(&name.text, name.span),
            Syntax::new(SyntaxKind::Map(bindings), name.span),
        ],
        name.span,
    )
}

fn case_clause(case: &Case, inputs: &[Input], resolver: &dyn Resolve) -> Result<Syntax> {
    let mut clause = vec![case.test.clone()];
    for step in &case.steps {
        clause.push(step_form(step, inputs, resolver)?);
    }
    Ok(list(clause, case.test.span))
}

/// An `<arg>` that is a bare word naming a task (and no input of this template) would
/// pass the task itself, whose definition then lands in the prompt: arguments are data.
fn check_data_arguments(args: &[Arg], inputs: &[Input], resolver: &dyn Resolve) -> Result<()> {
    for arg in args {
        let SyntaxKind::Symbol(word) = &arg.expr.kind else {
            continue;
        };
        let word = Name {
            text: word.name().to_owned(),
            span: arg.expr.span,
        };
        if inputs.iter().any(|i| i.name.text == word.text)
            || !matches!(resolver.resolve(&word), Ok(Some(_)))
        {
            continue;
        }
        return Err(Error::validation(format!(
            "<arg> `{0}` names the task {0}, not data: pass an input, a path such as \
             step_results[0].content, or \"{0}\" for the word itself",
            word.text
        ))
        .with_span(word.span));
    }
    Ok(())
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
            .with_span(name.span)
            .with_hint(crate::suggest::hint(
                &name.text,
                params.iter().map(|p| p.name.as_str()),
            )));
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
pub(super) fn command_arg(arg: &Text) -> Syntax {
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

pub(super) fn symbol(name: &str, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Symbol(Sym::new(name)), span)
}

fn string(value: &str, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Str(Rc::new(value.to_owned())), span)
}

pub(super) fn text_string(text: &Text) -> Syntax {
    string(text.as_str(), text.span())
}

fn name_string(name: &Name) -> Syntax {
    string(&name.text, name.span)
}

pub(super) fn list(items: Vec<Syntax>, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::List(items), span)
}

pub(super) fn vector(items: Vec<Syntax>, span: Span) -> Syntax {
    Syntax::new(SyntaxKind::Vector(items), span)
}
