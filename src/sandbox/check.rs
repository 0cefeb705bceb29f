//! `check-code`: `tasklisp check`'s analysis of one text, seen from the child
//! interpreter the text would run in (its prelude, builtins, tasks, bindings and
//! capabilities), with positions in the text itself.

use super::child::{code_text, Sandbox, Spec};
use crate::builtins::split_options;
use crate::capabilities::{Access, Capabilities};
use crate::error::{Error, ErrorKind, Reason, Result};
use crate::eval::ast::Node;
use crate::eval::compile::is_limit;
use crate::eval::env::Env;
use crate::eval::reader::{self, Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp};
use crate::module::names::{problems, Analysed};
use crate::module::{check_limit_error, top_level_forms, within_check_limits};
use crate::source::{line_col, Origin, SourceId};
use crate::task::TaskKind;
use crate::value::{Entries, Value};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// The name a checked text is registered under.
const CHECKED_NAME: &str = "<code>";

pub fn check_code(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (rest, options) = split_options("check-code", args, &["tasks", "env", "allow"])?;
    let [code] = rest else {
        return Err(Error::eval(
            "check-code: expected the code (text or data), then options",
        ));
    };
    let spec = Spec::parse("check-code", interp, &options)?;
    // The code is checked against what it would be given, in a child given nothing:
    // checking runs its macros, and nothing else.
    let rights = interp.limits.capabilities.intersect(&spec.allow);
    let nothing = Spec {
        allow: Capabilities::sandbox(),
        ..spec
    };
    let sandbox = Sandbox::new(interp, &nothing)?;
    let problems = check_against(&sandbox.interp, &rights, &code_text(code));
    interp.spend_fuel(sandbox.interp.fuel_used())?;
    Ok(Value::list(problems))
}

/// A problem as `check-code` returns it.
fn problem(kind: &str, error: &Error, source: SourceId, text: &str) -> Value {
    let (line, column) = match error.span() {
        Some(span) if span.source == source => {
            let (line, column) = line_col(text, span.start as usize);
            (Value::Int(line as i64), Value::Int(column as i64))
        }
        _ => (Value::Nil, Value::Nil),
    };
    let mut entries = Entries::new();
    entries.insert(Rc::from("message"), Value::str(error.message()));
    entries.insert(Rc::from("line"), line);
    entries.insert(Rc::from("column"), column);
    entries.insert(Rc::from("kind"), Value::from(kind));
    Value::map(entries)
}

/// The problems of `text` run in `child`, in the order found: what does not read or
/// analyse (nothing after it is looked at), then names, calls and capabilities. Its
/// macros expand within the limits of checking, with no model to answer.
pub fn check(child: &Interp, text: &str) -> Vec<Value> {
    check_against(child, &child.limits.capabilities, text)
}

/// [`check`], the calls refused by `rights` rather than by the child's capabilities.
fn check_against(child: &Interp, rights: &Capabilities, text: &str) -> Vec<Value> {
    let forms = match reader::read_source_as(Origin::Text, CHECKED_NAME, text) {
        Ok(forms) => forms,
        Err(error) => {
            let source = error.span().map_or(SourceId::UNREGISTERED, |s| s.source);
            return vec![problem("syntax", &error, source, text)];
        }
    };
    let Some(source) = forms.first().map(|f| f.span.source) else {
        return Vec::new();
    };
    let found = |kind: &str, error: &Error| problem(kind, error, source, text);
    let analysed = within_check_limits(child, || analyse(child, &forms));
    let analysed = match analysed {
        Ok(analysed) => analysed,
        Err(error) if is_limit(&error) => return vec![found("limit", &check_limit_error(error))],
        Err(error) => return vec![found("syntax", &error)],
    };
    let tasks: HashMap<_, _> = child
        .tasks
        .names()
        .into_iter()
        .filter_map(|name| {
            let params = crate::module::library_params(child, &name)?;
            Some((name, params))
        })
        .collect();
    let mut out: Vec<Value> = problems(child, &[analysed], &tasks)
        .iter()
        .map(|p| found(kind_of(&p.error), &p.error))
        .collect();
    let mut doors = Vec::new();
    for form in &forms {
        walk_doors(child, rights, form, &mut doors);
    }
    out.extend(doors.iter().map(|error| found("capability", error)));
    out
}

/// The forms analysed in `child`, each `defmacro` defined at once so that the forms
/// after it expand it; the first error stops.
fn analyse(child: &Interp, forms: &[Syntax]) -> Result<Analysed> {
    let mut analysed = Analysed::default();
    for form in top_level_forms(forms) {
        let node = Compiler::new(child).compile(form)?;
        if matches!(node, Node::DefMacro { .. }) {
            child.eval_syntax(form)?;
        }
        analysed.forms.push(node);
    }
    Ok(analysed)
}

/// What kind of problem `check`'s error is.
fn kind_of(error: &Error) -> &'static str {
    if error.kind() == ErrorKind::Syntax {
        "syntax"
    } else if error.message().starts_with("unbound symbol") {
        "unbound"
    } else if error.reason() == Some(Reason::InputValidationFailure.as_str()) {
        "arguments"
    } else {
        "arity"
    }
}

/// The builtins that reach outside the interpreter, and the capability each needs.
const DOORS: &[(&str, Door)] = &[
    ("write-file", Door::Write),
    ("append-file", Door::Write),
    ("read-file", Door::Read),
    ("file-exists?", Door::Read),
    ("list-dir", Door::Read),
    ("load", Door::Read),
    ("import", Door::Read),
    ("get-context", Door::Read),
    ("getenv", Door::Env),
    ("set-provider!", Door::Provider),
    ("with-provider", Door::Provider),
    ("mcp-connect", Door::Exec),
];

#[derive(Clone, Copy)]
enum Door {
    Read,
    Write,
    Env,
    Provider,
    Exec,
}

/// The calls in `form` that the capabilities refuse: with a constant argument, as the
/// call would be checked; otherwise when the capability is not given at all.
fn walk_doors(child: &Interp, rights: &Capabilities, form: &Syntax, out: &mut Vec<Error>) {
    let mut pending = vec![form];
    while let Some(form) = pending.pop() {
        let (SyntaxKind::List(items) | SyntaxKind::Vector(items) | SyntaxKind::Map(items)) =
            &form.kind
        else {
            continue;
        };
        pending.extend(items.iter());
        if let SyntaxKind::List(items) = &form.kind {
            if let Some(error) = refused_call(child, rights, items) {
                out.push(error.with_span(form.span));
            }
        }
    }
}

fn refused_call(child: &Interp, caps: &Capabilities, items: &[Syntax]) -> Option<Error> {
    let head = items.first()?.as_symbol()?;
    let first = items.get(1).and_then(constant_text);
    if let Some(task) = child.tasks.get(head.name()) {
        return (task.kind == TaskKind::Script && caps.exec.as_ref().is_some_and(Vec::is_empty))
            .then(|| {
                Error::task_failure(
                    Reason::PermissionDenied,
                    format!(
                        "the task {} runs a program, which this code may not do",
                        task.name
                    ),
                )
            });
    }
    let (_, door) = DOORS.iter().find(|(name, _)| *name == head.name())?;
    let outcome = match (door, first) {
        (Door::Read, Some(path)) => caps.check_path(Path::new(&path), Access::Read),
        (Door::Write, Some(path)) => caps.check_path(Path::new(&path), Access::Write),
        (Door::Env, Some(name)) => caps.check_env(&name),
        (Door::Provider, Some(kind)) => caps
            .check_provider(&kind)
            .and_then(|()| base_url(items).map_or(Ok(()), |url| caps.check_url(&url))),
        (door, _) => closed(head.name(), *door, caps),
    };
    outcome.err()
}

/// A call whose argument is not a constant: refused when its capability is not given
/// at all.
fn closed(name: &str, door: Door, caps: &Capabilities) -> Result<()> {
    let (given, key) = match door {
        Door::Read => (caps.read.as_ref().is_none_or(|l| !l.is_empty()), "read"),
        Door::Write => (caps.write.as_ref().is_none_or(|l| !l.is_empty()), "write"),
        Door::Env => (caps.env.as_ref().is_none_or(|l| !l.is_empty()), "env"),
        Door::Provider => (
            caps.providers.as_ref().is_none_or(|l| !l.is_empty()),
            "provider",
        ),
        Door::Exec => (caps.exec.as_ref().is_none_or(|l| !l.is_empty()), "exec"),
    };
    if given {
        return Ok(());
    }
    Err(Error::task_failure(
        Reason::PermissionDenied,
        format!("{name} needs the {key:?} capability, which this code is not given"),
    ))
}

/// A string, keyword or symbol written as the argument.
fn constant_text(syntax: &Syntax) -> Option<String> {
    match &syntax.kind {
        SyntaxKind::Str(text) => Some(text.to_string()),
        SyntaxKind::Keyword(name) => Some(name.name().to_owned()),
        _ => None,
    }
}

/// A `"base_url"` written in a map literal among a call's arguments.
fn base_url(items: &[Syntax]) -> Option<String> {
    items.iter().find_map(|item| match &item.kind {
        SyntaxKind::Map(entries) => entries.chunks(2).find_map(|pair| match pair {
            [key, value] if constant_text(key).as_deref() == Some("base_url") => {
                constant_text(value)
            }
            _ => None,
        }),
        _ => None,
    })
}
