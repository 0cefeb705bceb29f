//! `tasklisp check`'s look at the analysed code of every checked file together: names
//! bound nowhere and calls with the wrong number of arguments, each reported with its
//! span before anything runs. Definitions are gathered from all the files first, so the
//! result does not depend on the order of the files or of the forms in them.

use crate::error::Error;
use crate::eval::ast::{Lambda, Node};
use crate::eval::{arity_error, Interp};
use crate::source::Span;
use crate::symbol::Sym;
use std::collections::{HashMap, HashSet};

/// The analysed top-level forms of one checked `.sexp` file.
pub struct Analysed {
    pub forms: Vec<Node>,
    /// The file loads or imports `.sexp` code, whose definitions are not known without
    /// running it: its names are not reported as unbound.
    pub opaque: bool,
}

/// What the analysed code does with a global name.
enum Use {
    Name(Sym, Span),
    Call {
        callee: Sym,
        args: usize,
        span: Span,
    },
    /// `define` of a global (anywhere, not only at the top level), with its arity when
    /// the value is a procedure; `defmacro` too.
    Define(Sym, Option<(usize, Option<usize>)>),
}

/// Globals a program may use without defining them: `run` binds `*args*`.
const PREDEFINED: &[&str] = &["*args*"];

/// The problems of the checked files, each with the index of its file, in the order
/// they appear in each file.
pub fn problems(interp: &Interp, files: &[Analysed], tasks: &[String]) -> Vec<(usize, Error)> {
    let uses: Vec<Vec<Use>> = files
        .iter()
        .map(|file| {
            let mut uses = Vec::new();
            walk_all(&file.forms, &mut uses);
            uses
        })
        .collect();
    let mut defined: HashSet<Sym> = HashSet::new();
    let mut arities: HashMap<Sym, (usize, Option<usize>)> = HashMap::new();
    for each in uses.iter().flatten() {
        if let Use::Define(name, arity) = each {
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
            || tasks.iter().any(|t| t == name.name())
    };
    let in_scope: Vec<String> = interp
        .global_names()
        .into_iter()
        .chain(defined.iter().copied())
        .map(|s| s.name().to_owned())
        .chain(tasks.iter().cloned())
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
                Use::Call { callee, args, span } => {
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
    }
    found
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
                    args: call.args.len(),
                    span: call.span,
                });
            }
            walk(&call.callee, out);
            walk_all(&call.args, out);
        }
        Node::Prim(prim) => {
            out.push(Use::Call {
                callee: prim.name,
                args: prim.args.len(),
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
