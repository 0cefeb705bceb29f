//! `tasklisp check`'s look at the analysed code of every checked file together: names
//! bound nowhere, calls with the wrong number of arguments or named arguments that name
//! no parameter, and template tags that name nothing, each reported with its span before
//! anything runs. Definitions are gathered from all the files first, so the
//! result does not depend on the order of the files or of the forms in them.

use crate::error::Error;
use crate::eval::ast::{Lambda, Node};
use crate::eval::{arity_error, Interp};
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::call::{input_error, unknown_named_argument};
use crate::value::Value;
use crate::xml::Param;
use std::collections::{HashMap, HashSet};

/// What `check` learned of one checked file.
#[derive(Default)]
pub struct Analysed {
    /// The analysed top-level forms of a `.sexp` file (none for XML).
    pub forms: Vec<Node>,
    /// The file loads or imports `.sexp` code, whose definitions are not known without
    /// running it: its names are not reported as unbound.
    pub opaque: bool,
    /// Every symbol written anywhere in the file: a template tag naming one of them may
    /// be bound by a caller's environment.
    pub symbols: HashSet<Sym>,
    /// The templates of the tasks the file defines.
    pub templates: Vec<TaskTemplate>,
}

/// A template of a defined task and the tags it uses.
pub struct TaskTemplate {
    pub task: String,
    pub params: Vec<String>,
    pub tags: Vec<Sym>,
    pub span: Span,
}

/// Names a task's template may use that no code writes: what memory options, sequential
/// steps, accumulation and audit retries bind while the task runs.
const IMPLICIT_TAGS: &[&str] = &[
    "files",
    "context",
    "step_results",
    "accumulated",
    "output",
    "issues",
];

/// What the analysed code does with a global name.
enum Use {
    Name(Sym, Span),
    Call {
        callee: Sym,
        args: Vec<Arg>,
        span: Span,
    },
    /// `define` of a global (anywhere, not only at the top level), with its arity when
    /// the value is a procedure; `defmacro` too.
    Define(Sym, Option<(usize, Option<usize>)>),
}

/// An argument of a call as `check` sees it: a constant keyword names a parameter.
#[derive(Clone, Copy)]
enum Arg {
    Keyword(Sym),
    Other,
}

impl Arg {
    fn of(node: &Node) -> Arg {
        match node {
            Node::Const(Value::Keyword(name)) => Arg::Keyword(*name),
            _ => Arg::Other,
        }
    }
}

/// Globals a program may use without defining them: `run` binds `*args*`.
const PREDEFINED: &[&str] = &["*args*"];

/// The problems of the checked files, each with the index of its file, in the order
/// they appear in each file.
pub fn problems(
    interp: &Interp,
    files: &[Analysed],
    tasks: &HashMap<String, Option<Vec<Param>>>,
) -> Vec<(usize, Error)> {
    let uses: Vec<Vec<Use>> = files
        .iter()
        .map(|file| {
            let mut uses = Vec::new();
            walk_all(&file.forms, &mut uses);
            uses
        })
        .collect();
    let mut defined: HashSet<Sym> = HashSet::new();
    let mut definitions: HashMap<Sym, usize> = HashMap::new();
    let mut arities: HashMap<Sym, (usize, Option<usize>)> = HashMap::new();
    for each in uses.iter().flatten() {
        if let Use::Define(name, arity) = each {
            *definitions.entry(*name).or_default() += 1;
            let first = defined.insert(*name);
            // A name defined twice may change its arity: leave its calls unchecked.
            match arity {
                Some(arity) if first => {
                    arities.insert(*name, *arity);
                }
                _ => {
                    arities.remove(name);
                }
            }
        }
    }
    let known = |name: Sym| {
        defined.contains(&name)
            || PREDEFINED.contains(&name.name())
            || interp.global(name).is_some()
            || interp.macro_named(name).is_some()
            || tasks.contains_key(name.name())
    };
    let in_scope: Vec<String> = interp
        .global_names()
        .into_iter()
        .chain(defined.iter().copied())
        .map(|s| s.name().to_owned())
        .chain(tasks.keys().cloned())
        .collect();
    let written: HashSet<Sym> = files
        .iter()
        .flat_map(|f| f.symbols.iter().copied())
        .collect();
    let mut found = Vec::new();
    for (index, (file, uses)) in files.iter().zip(uses).enumerate() {
        for each in uses {
            match each {
                Use::Name(name, span) if !file.opaque && !known(name) => {
                    let hint =
                        crate::suggest::hint(name.name(), in_scope.iter().map(String::as_str));
                    let error = Error::eval(format!("unbound symbol: {name}"))
                        .with_span(span)
                        .with_hint(hint);
                    found.push((index, error));
                }
                Use::Call { callee, args, span } if is_task_call(tasks, &definitions, callee) => {
                    if let Some(Some(params)) = tasks.get(callee.name()) {
                        if let Some(error) = task_call_problem(callee.name(), params, &args) {
                            found.push((index, error.with_span(span)));
                        }
                    }
                }
                Use::Call { callee, args, span } => {
                    let args = args.len();
                    let arity = arities.get(&callee).copied().or_else(|| {
                        global_arity(interp, callee).filter(|_| !defined.contains(&callee))
                    });
                    if let Some((min, max)) = arity {
                        if args < min || max.is_some_and(|max| args > max) {
                            let error = arity_error(callee.name(), min, max, args).with_span(span);
                            found.push((index, error));
                        }
                    }
                }
                Use::Name(..) | Use::Define(..) => {}
            }
        }
        for template in &file.templates {
            let bound = |tag: &Sym| {
                template.params.iter().any(|p| p == tag.name())
                    || IMPLICIT_TAGS.contains(&tag.name())
                    || written.contains(tag)
                    || known(*tag)
            };
            for tag in template.tags.iter().filter(|tag| !bound(tag)) {
                let params = template.params.iter().map(String::as_str);
                let error = Error::validation(format!(
                    "task `{}`: template tag {{{{{tag}}}}} names no parameter or binding",
                    template.task
                ))
                .with_span(template.span)
                .with_hint(crate::suggest::hint(tag.name(), params));
                found.push((index, error));
            }
        }
    }
    found
}

/// A call of a task by name: defined once at most in the checked files (by its
/// `deftask`; XML tasks not at all), so no `define` rebinds the name.
fn is_task_call(
    tasks: &HashMap<String, Option<Vec<Param>>>,
    definitions: &HashMap<Sym, usize>,
    callee: Sym,
) -> bool {
    tasks.contains_key(callee.name()) && definitions.get(&callee).copied().unwrap_or(0) <= 1
}

/// Why a call's arguments cannot fit a task's parameters, as the call itself would say:
/// a named argument that names no parameter, too many arguments, or a required one
/// missing. Arguments that are not constant keywords count as positional.
fn task_call_problem(task: &str, params: &[Param], args: &[Arg]) -> Option<Error> {
    let mut named = vec![false; params.len()];
    let mut positional = 0;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg {
            Arg::Keyword(name) => {
                let Some(index) = params.iter().position(|p| p.name == name.name()) else {
                    let names = params.iter().map(|p| p.name.as_str());
                    return Some(unknown_named_argument(task, name.name(), names));
                };
                if let Some(slot) = named.get_mut(index) {
                    *slot = true;
                }
                rest.next();
            }
            Arg::Other => positional += 1,
        }
    }
    let free: Vec<&Param> = params
        .iter()
        .zip(&named)
        .filter(|(_, named)| !**named)
        .map(|(param, _)| param)
        .collect();
    if positional > free.len() {
        let message = format!(
            "too many arguments: it takes {} and argument {} is extra",
            params.len(),
            free.len() + 1
        );
        return Some(input_error(task, message));
    }
    let missing = free.iter().skip(positional).find(|p| !p.optional)?;
    Some(input_error(
        task,
        format!("missing required argument `{}`", missing.name),
    ))
}

/// The arity of the builtin or prelude procedure a global names.
fn global_arity(interp: &Interp, name: Sym) -> Option<(usize, Option<usize>)> {
    match interp.global(name)? {
        crate::value::Value::Builtin(b) => Some((b.min_args, b.max_args)),
        crate::value::Value::Closure(c) => Some(lambda_arity(&c.lambda)),
        _ => None,
    }
}

fn lambda_arity(lambda: &Lambda) -> (usize, Option<usize>) {
    let required = lambda.required as usize;
    (required, (!lambda.rest).then_some(required))
}

/// Every global name used and every call of a global by name, in order.
fn walk(node: &Node, out: &mut Vec<Use>) {
    match node {
        Node::Global { name, span } => out.push(Use::Name(*name, *span)),
        Node::SetGlobal { name, value, span } => {
            out.push(Use::Name(*name, *span));
            walk(value, out);
        }
        Node::Path { base, .. } => walk(base, out),
        Node::DefineGlobal { name, value } => {
            let arity = match &**value {
                Node::Lambda(lambda) => Some(lambda_arity(lambda)),
                _ => None,
            };
            out.push(Use::Define(*name, arity));
            walk(value, out);
        }
        Node::DefMacro { name, lambda } => {
            out.push(Use::Define(*name, None));
            walk(&lambda.body, out);
        }
        Node::SetLocal { value, .. }
        | Node::SetDynamic { value, .. }
        | Node::DefineLocal { value, .. } => walk(value, out),
        Node::If(parts) => {
            walk(&parts.0, out);
            walk(&parts.1, out);
            walk(&parts.2, out);
        }
        Node::And(nodes) | Node::Or(nodes) | Node::Begin(nodes) => walk_all(nodes, out),
        Node::Lambda(lambda) => walk(&lambda.body, out),
        Node::Let(let_) => {
            for (_, init) in &let_.inits {
                walk(init, out);
            }
            walk(&let_.body, out);
        }
        Node::Loop(loop_) => {
            walk_all(&loop_.inits, out);
            walk(&loop_.lambda.body, out);
        }
        Node::Call(call) => {
            if let Node::Global { name, .. } = &call.callee {
                out.push(Use::Call {
                    callee: *name,
                    args: call.args.iter().map(Arg::of).collect(),
                    span: call.span,
                });
            }
            walk(&call.callee, out);
            walk_all(&call.args, out);
        }
        Node::Prim(prim) => {
            out.push(Use::Call {
                callee: prim.name,
                args: prim.args.iter().map(Arg::of).collect(),
                span: prim.span,
            });
            walk_all(&prim.args, out);
        }
        Node::Case(case) => {
            walk(&case.key, out);
            for (_, body) in &case.clauses {
                walk(body, out);
            }
            walk(&case.default, out);
        }
        Node::Try(try_) => {
            walk(&try_.body, out);
            if let Some((_, handler)) = &try_.handler {
                walk(handler, out);
            }
            if let Some(finally) = &try_.finally {
                walk(finally, out);
            }
        }
        // Constants, locals, a task body's free variables (bound by its caller), and the
        // task and module forms, which check their own parts.
        Node::Const(_) | Node::Local { .. } | Node::Dynamic { .. } | Node::Extension(_) => {}
    }
}

fn walk_all(nodes: &[Node], out: &mut Vec<Use>) {
    for node in nodes {
        walk(node, out);
    }
}
