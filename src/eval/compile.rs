//! The analyser: syntax to `Node`, once per form.
//!
//! Special forms are looked up in the interpreter's registry of layers (`layer.rs`; the
//! core's own are in `forms.rs`), macros expanded, and each variable resolved: to a `(depth, slot)` of an
//! enclosing scope, to the global table, or (in a task body) to a by-name lookup in the
//! caller's environment. A scope pushed here is exactly a frame created at run time.

use super::ast::*;
use super::quote::{syntax_to_value, value_to_syntax_within, MAX_CODE_NODES};
use super::Interp;
use crate::builtins;
use crate::error::{Error, Result};
use crate::eval::env::Scope;
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::{well_known, Sym};
use crate::value::bounds::Budget;
use crate::value::Value;
use std::rc::Rc;

/// How many macro expansions may nest inside one another.
const MAX_EXPANSION_DEPTH: usize = 1_000;

pub struct Compiler<'i> {
    pub interp: &'i Interp,
    scopes: Vec<Rc<Scope>>,
    /// Free variables are looked up by name at run time (task bodies).
    dynamic: bool,
    nesting: usize,
    pub(super) expansions: usize,
    /// Nodes of code made by macro expansions in this form: expansions that grow at
    /// each step end here even when they stay shallow.
    expanded: Budget,
    /// The global a top-level procedure being analysed will be bound to: its calls of
    /// itself go through that global, not through a builtin of the same name.
    pub(super) defining: Option<Sym>,
}

/// Forms whose second element is a name the form binds in the enclosing body.
fn binds_name(head: &str) -> bool {
    matches!(head, "define" | "deftask")
}

/// The special forms a program may redefine with `defmacro`, `define` or `deftask`:
/// conveniences written in terms of the others, which tasklisp's own generated code and
/// macros never expand to. Every other special form is an error to redefine. (The
/// message of `check_definable` names them.)
pub const REDEFINABLE_FORMS: [&str; 5] = ["when", "unless", "cond", "case", "do"];

/// The operator that makes a task value: special only in operator position, so no task
/// may take its name.
const TASK_OPERATOR: &str = "task";

/// Why `name` cannot name a task: it is a special form (or `task`).
pub fn task_name_refused(interp: &Interp, name: &str) -> Option<Error> {
    let form = interp.layers.form(name).is_some() || name == TASK_OPERATOR;
    form.then(|| {
        Error::validation(format!(
            "`{name}` is a special form and cannot name a task: choose another name"
        ))
    })
}

impl<'i> Compiler<'i> {
    /// A compiler for top-level code: free variables are globals.
    pub fn new(interp: &'i Interp) -> Self {
        Compiler {
            interp,
            scopes: Vec::new(),
            dynamic: false,
            nesting: 0,
            expansions: 0,
            expanded: Budget::with_limit("macro expansion", MAX_CODE_NODES),
            defining: None,
        }
    }

    /// A compiler for a task body: `scope` holds the parameters, free variables are
    /// looked up in the caller's environment when the task runs.
    pub fn for_task_body(interp: &'i Interp, scope: Rc<Scope>) -> Self {
        Compiler {
            interp,
            scopes: vec![scope],
            dynamic: true,
            nesting: 0,
            expansions: 0,
            expanded: Budget::with_limit("macro expansion", MAX_CODE_NODES),
            defining: None,
        }
    }

    pub fn compile(&mut self, syntax: &Syntax) -> Result<Node> {
        self.nesting += 1;
        if self.nesting > self.interp.limits.max_depth.max(1_000) {
            self.nesting -= 1;
            return Err(Error::resource(
                "depth",
                self.nesting as u64,
                self.interp.limits.max_depth as u64,
                "code nested too deeply to analyse",
            )
            .with_span(syntax.span));
        }
        let result = self
            .interp
            .check_stack()
            .and_then(|()| self.compile_inner(syntax));
        self.nesting -= 1;
        result
    }

    fn compile_inner(&mut self, syntax: &Syntax) -> Result<Node> {
        let span = syntax.span;
        Ok(match &syntax.kind {
            SyntaxKind::Nil => Node::Const(Value::Nil),
            SyntaxKind::Bool(b) => Node::Const(Value::Bool(*b)),
            SyntaxKind::Int(i) => Node::Const(Value::Int(*i)),
            SyntaxKind::Float(f) => Node::Const(Value::Float(*f)),
            SyntaxKind::Str(s) => Node::Const(Value::Str(s.clone())),
            SyntaxKind::Keyword(k) => Node::Const(Value::Keyword(*k)),
            SyntaxKind::Value(v) => Node::Const(v.clone()),
            SyntaxKind::Symbol(s) => self.variable(*s, span),
            SyntaxKind::Path(p) => Node::Path {
                base: Box::new(self.variable(p.base, span)),
                path: p.clone(),
                span,
            },
            SyntaxKind::Vector(items) => self.builtin_call("list", items, span)?,
            SyntaxKind::Map(items) => self.map_literal(items, span)?,
            SyntaxKind::List(items) => self.list(items, span)?,
        })
    }

    fn builtin_call(&mut self, name: &str, items: &[Syntax], span: Span) -> Result<Node> {
        let args = items
            .iter()
            .map(|s| self.compile(s))
            .collect::<Result<Vec<_>>>()?;
        Ok(internal_call(name, args, span))
    }

    fn map_literal(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let mut args = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if i % 2 == 0 {
                if let SyntaxKind::Keyword(k) = item.kind {
                    args.push(Node::Const(Value::str(k.name())));
                    continue;
                }
            }
            args.push(self.compile(item)?);
        }
        Ok(internal_call("hash-map", args, span))
    }

    /// Resolves a name: innermost scope first.
    pub fn variable(&self, name: Sym, span: Span) -> Node {
        if let Some((depth, slot)) = self.resolve(name) {
            return Node::Local {
                depth,
                slot,
                name,
                span,
            };
        }
        if self.dynamic {
            Node::Dynamic { name, span }
        } else {
            Node::Global { name, span }
        }
    }

    fn resolve(&self, name: Sym) -> Option<(u32, u32)> {
        self.scopes
            .iter()
            .rev()
            .enumerate()
            .find_map(|(depth, scope)| scope.slot_of(name).map(|slot| (depth as u32, slot as u32)))
    }

    pub(super) fn is_local(&self, name: Sym) -> bool {
        self.resolve(name).is_some()
    }

    /// A redefinable special form the program has defined as a macro, procedure or task:
    /// its definition is used instead.
    fn redefined(&self, name: Sym) -> bool {
        REDEFINABLE_FORMS.contains(&name.name())
            && (self.interp.macro_named(name).is_some() || self.interp.global(name).is_some())
    }

    /// A global definition of `name` (`define`, `defmacro`, `deftask`) takes effect for
    /// the code after it, so it may not name a special form the language is built on.
    /// A local one shadows any form, as a parameter does.
    pub fn check_definable(&self, name: Sym, span: Span) -> Result<()> {
        let global = self.innermost().is_none();
        if global
            && self.interp.layers.form(name.name()).is_some()
            && !REDEFINABLE_FORMS.contains(&name.name())
        {
            return Err(Error::syntax(
                format!(
                    "`{name}` is a special form and cannot be redefined (of the special forms, only when, unless, cond, case and do can be)"
                ),
                span,
            ));
        }
        Ok(())
    }

    /// `(define task …)`: `task` is special only as an operator, so a variable may take
    /// its name; other forms are `check_definable`'s.
    pub fn check_variable_name(&self, name: Sym, span: Span) -> Result<()> {
        match name.name() {
            TASK_OPERATOR => Ok(()),
            _ => self.check_definable(name, span),
        }
    }

    /// A task may not be named after any special form, not even one a program may
    /// redefine (`cond`…), nor `task`: a template saved as `cond.xml` must not replace
    /// `cond` unnoticed.
    pub fn check_task_name(&self, name: Sym, span: Span) -> Result<()> {
        task_name_refused(self.interp, name.name()).map_or(Ok(()), |e| Err(e.with_span(span)))
    }

    fn list(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let Some(head) = items.first() else {
            return Ok(Node::Const(Value::empty_list()));
        };
        if let Some(sym) = head.as_symbol() {
            if !self.is_local(sym) {
                let form = self.interp.layers.form(sym.name());
                if let Some(form) = form.filter(|_| !self.redefined(sym)) {
                    return (form.analyse)(self, items, span);
                }
                let macro_fn = self.interp.macro_named(sym);
                if let Some(macro_fn) = macro_fn {
                    return self.expand(macro_fn, items, span);
                }
            }
        }
        let args = operands(items)
            .iter()
            .map(|s| self.compile(s))
            .collect::<Result<Vec<_>>>()?;
        if let Some(prim) = head
            .as_symbol()
            .and_then(|sym| self.primitive(sym, args.len()))
        {
            let (name, builtin) = prim;
            return Ok(Node::Prim(Box::new(Prim::new(name, builtin, args, span))));
        }
        let callee = self.compile(head)?;
        Ok(Node::Call(Box::new(Call {
            callee,
            args,
            span,
            tail: false,
            unchanged: 0,
        })))
    }

    /// The builtin a call's head names now, if the call can use the direct path.
    fn primitive(&self, sym: Sym, argc: usize) -> Option<(Sym, &'static builtins::Builtin)> {
        if self.is_local(sym) || self.dynamic || self.defining == Some(sym) {
            return None;
        }
        match self.interp.global(sym)? {
            Value::Builtin(b)
                if !self.interp.layers.is_apply(b)
                    && argc >= b.min_args
                    && b.max_args.is_none_or(|max| argc <= max) =>
            {
                Some((sym, b))
            }
            _ => None,
        }
    }

    fn expand(&mut self, macro_fn: Value, items: &[Syntax], span: Span) -> Result<Node> {
        if self.expansions >= MAX_EXPANSION_DEPTH {
            return Err(Error::resource(
                "macro-expansion",
                self.expansions as u64,
                MAX_EXPANSION_DEPTH as u64,
                "macro expansion does not terminate",
            )
            .with_span(span));
        }
        let args: Vec<Value> = operands(items).iter().map(syntax_to_value).collect();
        let expanded = self
            .interp
            .apply(&macro_fn, &args, &None)
            .map_err(|e| at_use(e, span))?;
        let syntax = value_to_syntax_within(&expanded, span, &mut self.expanded)?;
        self.expansions += 1;
        let node = self.compile(&syntax);
        self.expansions -= 1;
        node
    }

    pub fn push_scope(&mut self, scope: Rc<Scope>) {
        self.scopes.push(scope);
    }

    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    pub(super) fn innermost(&self) -> Option<&Rc<Scope>> {
        self.scopes.last()
    }

    /// A body: internal `define`s are declared first, so they can refer to each other.
    pub fn body(&mut self, forms: &[Syntax], span: Span) -> Result<Node> {
        if let Some(scope) = self.innermost().cloned() {
            declare_defines(&scope, forms);
        }
        self.sequence(forms, span)
    }

    pub(super) fn sequence(&mut self, forms: &[Syntax], _span: Span) -> Result<Node> {
        let mut nodes = forms
            .iter()
            .map(|f| self.compile(f))
            .collect::<Result<Vec<_>>>()?;
        Ok(match nodes.len() {
            0 => Node::Const(Value::Nil),
            1 => nodes.pop().unwrap_or(Node::Const(Value::Nil)),
            _ => Node::Begin(nodes.into_boxed_slice()),
        })
    }
}

/// A macro's error where the macro is used: a limit run out (fuel, time, memory) is the
/// use's, wherever in the macro's code it ran out; another error keeps its own place.
fn at_use(error: Error, span: Span) -> Error {
    if is_limit(&error) {
        error.with_span(span)
    } else {
        error.or_span(span)
    }
}

/// Whether an error is a limit run out: fuel, time, memory, nesting.
pub fn is_limit(error: &Error) -> bool {
    error.kind() == crate::error::ErrorKind::ResourceExhaustion
        || error.has_reason(&crate::error::Reason::ExecutionTimeout)
}

/// The forms of a top-level `(begin form…)`: each is a top-level form of its own,
/// analysed after the one before it has run, so a `defmacro` (or the redefinition of
/// `cond`…) in it takes effect for the forms after it, as it would at the top level.
pub fn top_level_begin(form: &Syntax) -> Option<&[Syntax]> {
    let items = form.as_list()?;
    let head = items.first()?.as_symbol()?;
    (head.name() == "begin").then(|| operands(items))
}

/// Declares the names that a body's `define`s (and `deftask`s) bind, before analysis.
fn declare_defines(scope: &Scope, forms: &[Syntax]) {
    for form in forms {
        let Some(items) = form.as_list() else {
            continue;
        };
        let Some(head) = items.first().and_then(Syntax::as_symbol) else {
            continue;
        };
        if head.name() == "begin" {
            declare_defines(scope, operands(items));
        } else if binds_name(head.name()) {
            let name = match items.get(1).map(|s| &s.kind) {
                Some(SyntaxKind::Symbol(s)) => Some(*s),
                Some(SyntaxKind::List(sig)) => sig.first().and_then(Syntax::as_symbol),
                _ => None,
            };
            if let Some(name) = name {
                if scope.slot_of(name).is_none() {
                    scope.declare(name);
                }
            }
        }
    }
}

/// A lambda's parameter syntax as a list: `(a b)`, `[a b]`, or `args` (all rest).
pub(super) fn lambda_params(params: &Syntax) -> Result<Vec<Syntax>> {
    match &params.kind {
        SyntaxKind::List(p) | SyntaxKind::Vector(p) => Ok(p.clone()),
        SyntaxKind::Symbol(_) => Ok(vec![
            Syntax::new(SyntaxKind::Symbol(*well_known::DOT), params.span),
            params.clone(),
        ]),
        _ => Err(Error::syntax(
            "lambda parameters are a list of symbols",
            params.span,
        )),
    }
}

pub(super) fn parse_params(params: &[Syntax], span: Span) -> Result<(Vec<Sym>, bool)> {
    let mut names = Vec::with_capacity(params.len());
    let mut rest = false;
    for (i, p) in params.iter().enumerate() {
        let name = p
            .as_symbol()
            .ok_or_else(|| Error::syntax("a parameter must be a symbol", p.span))?;
        if name == *well_known::DOT {
            let last = params
                .get(i + 1)
                .and_then(Syntax::as_symbol)
                .filter(|_| i + 2 == params.len())
                .ok_or_else(|| {
                    Error::syntax("`.` must be followed by exactly one rest parameter", p.span)
                })?;
            names.push(last);
            rest = true;
            break;
        }
        if names.contains(&name) {
            return Err(Error::syntax(
                format!("duplicate parameter `{name}`"),
                p.span,
            ));
        }
        names.push(name);
    }
    let _ = span;
    Ok((names, rest))
}

/// A special form's first `MIN` items (its head and required operands) and the rest,
/// when it has at most `max` items; otherwise its usage as a syntax error.
pub(super) fn form_items<'a, const MIN: usize>(
    items: &'a [Syntax],
    max: usize,
    span: Span,
    usage: &str,
) -> Result<(&'a [Syntax; MIN], &'a [Syntax])> {
    match items.split_first_chunk() {
        Some(split) if items.len() <= max => Ok(split),
        _ => Err(Error::syntax(format!("bad syntax: expected {usage}"), span)),
    }
}

/// A form's items after its head.
pub(super) fn operands(items: &[Syntax]) -> &[Syntax] {
    items.split_first().map_or(&[], |(_, rest)| rest)
}

/// The items after the head of `clause` when it is a list headed by the symbol `word`.
pub(super) fn clause_parts<'a>(clause: &'a Syntax, word: &str) -> Option<&'a [Syntax]> {
    let (head, parts) = clause.as_list()?.split_first()?;
    (head.as_symbol()?.name() == word).then_some(parts)
}

/// A call to a builtin that user definitions cannot shadow (list literals, quasiquote).
pub fn internal_call(name: &str, args: Vec<Node>, span: Span) -> Node {
    let callee = match builtins::lookup(name) {
        Some(b) => Node::Const(Value::Builtin(b)),
        None => Node::Global {
            name: Sym::new(name),
            span,
        },
    };
    Node::Call(Box::new(Call {
        callee,
        args,
        span,
        tail: false,
        unchanged: 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{reader, run_on_large_stack, Limits};

    /// The kind of the call in the else branch of `(define (NAME …) (if … … CALL))`.
    fn self_call_kind(program: &'static str) -> &'static str {
        run_on_large_stack(&Limits::default(), move |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let forms = reader::read_source("<test>", program).expect("reads");
            let node = Compiler::new(&interp).compile(&forms[0]).expect("analyses");
            let Node::DefineGlobal { value, .. } = node else {
                return "not a global definition";
            };
            let Node::Lambda(lambda) = *value else {
                return "not a procedure";
            };
            match &lambda.body {
                Node::If(parts) => match &parts.2 {
                    Node::Call(_) => "call",
                    Node::Prim(_) => "prim",
                    _ => "other",
                },
                _ => "no if",
            }
        })
        .expect("thread")
    }

    #[test]
    fn only_calls_in_tail_position_of_a_body_may_reuse_its_frame() {
        let marks = run_on_large_stack(&Limits::default(), |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let program = "(define (f n) (if (g n) (begin (g n) (f n)) (let ((x n)) (f x))))";
            let forms = reader::read_source("<test>", program).expect("reads");
            let node = Compiler::new(&interp).compile(&forms[0]).expect("analyses");
            let Node::DefineGlobal { value, .. } = node else {
                return None;
            };
            let Node::Lambda(lambda) = *value else {
                return None;
            };
            let tail = |node: &Node| matches!(node, Node::Call(call) if call.tail);
            let Node::If(parts) = &lambda.body else {
                return None;
            };
            let (Node::Begin(then), Node::Let(otherwise)) = (&parts.1, &parts.2) else {
                return None;
            };
            Some([
                tail(&parts.0),
                tail(&then[0]),
                tail(&then[1]),
                tail(&otherwise.body),
            ])
        })
        .expect("thread");
        assert_eq!(marks, Some([false, false, true, false]));
    }

    #[test]
    fn a_procedure_named_like_a_builtin_calls_itself_through_its_global() {
        let mine = "(define (count k n) (if (= k n) k (count (+ k 1) n)))";
        assert_eq!(self_call_kind(mine), "call");
        let other = "(define (total k n) (if (= k n) k (count (+ k 1) n)))";
        assert_eq!(self_call_kind(other), "prim");
    }
}
