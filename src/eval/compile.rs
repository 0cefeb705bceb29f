//! The analyser: syntax to `Node`, once per form.
//!
//! Special forms are recognised here, macros expanded, `cond`/`when`/`do`/quasiquote
//! rewritten into simpler nodes, and each variable resolved: to a `(depth, slot)` of an
//! enclosing scope, to the global table, or (in a task body) to a by-name lookup in the
//! caller's environment. A scope pushed here is exactly a frame created at run time.

use super::ast::*;
use super::quote::{syntax_to_value, value_to_syntax_within, MAX_CODE_NODES};
use super::Interp;
use crate::bounds::Budget;
use crate::builtins;
use crate::env::Scope;
use crate::error::{Error, Result};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::{well_known, Sym};
use crate::task::forms::SpecialForm;
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
    expansions: usize,
    /// Nodes of code made by macro expansions in this form: expansions that grow at
    /// each step end here even when they stay shallow.
    expanded: Budget,
}

/// Forms whose second element is a name the form binds in the enclosing body.
fn binds_name(head: &str) -> bool {
    matches!(head, "define" | "deftask")
}

/// The special form called `name`: the analyser's own, then those of tasks, modules and
/// tests.
pub fn special_form(name: &str) -> Option<SpecialForm> {
    Some(match name {
        "quote" => |c, items, span| c.quote(items, span),
        "quasiquote" => |c, items, span| c.quasiquote_form(items, span),
        "if" => |c, items, span| c.if_form(items, span),
        "cond" => |c, items, span| c.cond(items, span),
        "case" => |c, items, span| c.case(items, span),
        "when" => |c, items, span| c.when(items, span),
        "unless" => |c, items, span| c.unless(items, span),
        "and" => |c, items, span| c.and(items, span),
        "or" => |c, items, span| c.or(items, span),
        "begin" => |c, items, span| c.begin(items, span),
        "define" => |c, items, span| c.define(items, span),
        "set!" => |c, items, span| c.set(items, span),
        "lambda" | "fn" => |c, items, span| c.lambda_form(items, span),
        "let" => |c, items, span| c.let_form(items, span),
        "let*" => |c, items, span| c.let_star(items, span),
        "letrec" | "letrec*" => |c, items, span| c.letrec(items, span),
        "do" => |c, items, span| c.do_form(items, span),
        "try" => |c, items, span| c.try_form(items, span),
        "defmacro" => |c, items, span| c.defmacro(items, span),
        "unquote" | "unquote-splicing" => |_, items, span| Err(unquote_outside(items, span)),
        _ => {
            return crate::task::forms::special_form(name)
                .or_else(|| crate::module::special_form(name))
                .or_else(|| crate::testing::special_form(name))
        }
    })
}

/// The special forms a program may redefine with `defmacro`, `define` or `deftask`:
/// conveniences written in terms of the others, which tasklisp's own generated code and
/// macros never expand to. Every other special form is an error to redefine. (The
/// message of `check_definable` names them.)
pub const REDEFINABLE_FORMS: [&str; 5] = ["when", "unless", "cond", "case", "do"];

fn unquote_outside(items: &[Syntax], span: Span) -> Error {
    let name = items
        .first()
        .and_then(Syntax::as_symbol)
        .map_or("unquote", |s| s.name());
    Error::syntax(format!("`{name}` (`,` or `,@`) outside a quasiquote"), span)
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

    fn is_local(&self, name: Sym) -> bool {
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
            && special_form(name.name()).is_some()
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

    fn list(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let Some(head) = items.first() else {
            return Ok(Node::Const(Value::empty_list()));
        };
        if let Some(sym) = head.as_symbol() {
            if !self.is_local(sym) {
                let form = special_form(sym.name()).filter(|_| !self.redefined(sym));
                if let Some(form) = form {
                    return form(self, items, span);
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
            let op = PrimOp::of(builtin.name);
            return Ok(Node::Prim(Box::new(Prim {
                name,
                builtin,
                op,
                args,
                span,
            })));
        }
        let callee = self.compile(head)?;
        Ok(Node::Call(Box::new(Call { callee, args, span })))
    }

    /// The builtin a call's head names now, if the call can use the direct path.
    fn primitive(&self, sym: Sym, argc: usize) -> Option<(Sym, &'static builtins::Builtin)> {
        if self.is_local(sym) || self.dynamic {
            return None;
        }
        match self.interp.global(sym)? {
            Value::Builtin(b)
                if !std::ptr::eq(b, builtins::apply_builtin())
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
            .map_err(|e| e.or_span(span))?;
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

    fn innermost(&self) -> Option<&Rc<Scope>> {
        self.scopes.last()
    }

    /// A body: internal `define`s are declared first, so they can refer to each other.
    pub fn body(&mut self, forms: &[Syntax], span: Span) -> Result<Node> {
        if let Some(scope) = self.innermost().cloned() {
            declare_defines(&scope, forms);
        }
        self.sequence(forms, span)
    }

    fn sequence(&mut self, forms: &[Syntax], _span: Span) -> Result<Node> {
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

    // ---- special forms ------------------------------------------------------------

    fn quote(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, datum], _) = form_items(items, 2, span, "(quote datum)")?;
        Ok(Node::Const(syntax_to_value(datum)))
    }

    fn if_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, test, then], otherwise) = form_items(items, 4, span, "(if test then else?)")?;
        let test = self.compile(test)?;
        let then = self.compile(then)?;
        let otherwise = match otherwise.first() {
            Some(e) => self.compile(e)?,
            None => Node::Const(Value::Nil),
        };
        Ok(Node::If(Box::new((test, then, otherwise))))
    }

    fn when(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, test], body) = form_items(items, usize::MAX, span, "(when test body…)")?;
        let test = self.compile(test)?;
        let body = self.sequence(body, span)?;
        Ok(Node::If(Box::new((test, body, Node::Const(Value::Nil)))))
    }

    fn unless(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, test], body) = form_items(items, usize::MAX, span, "(unless test body…)")?;
        let test = self.compile(test)?;
        let body = self.sequence(body, span)?;
        Ok(Node::If(Box::new((test, Node::Const(Value::Nil), body))))
    }

    fn and(&mut self, items: &[Syntax], _span: Span) -> Result<Node> {
        let operands = operands(items);
        if operands.is_empty() {
            return Ok(Node::Const(Value::Bool(true)));
        }
        let nodes = operands
            .iter()
            .map(|s| self.compile(s))
            .collect::<Result<Vec<_>>>()?;
        Ok(Node::And(nodes.into_boxed_slice()))
    }

    fn or(&mut self, items: &[Syntax], _span: Span) -> Result<Node> {
        let operands = operands(items);
        if operands.is_empty() {
            return Ok(Node::Const(Value::Bool(false)));
        }
        let nodes = operands
            .iter()
            .map(|s| self.compile(s))
            .collect::<Result<Vec<_>>>()?;
        Ok(Node::Or(nodes.into_boxed_slice()))
    }

    fn begin(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        self.sequence(operands(items), span)
    }

    fn cond(&mut self, items: &[Syntax], _span: Span) -> Result<Node> {
        self.cond_clauses(operands(items))
    }

    pub fn cond_clauses(&mut self, clauses: &[Syntax]) -> Result<Node> {
        let Some((clause, later)) = clauses.split_first() else {
            return Ok(Node::Const(Value::Nil));
        };
        let Some((test, body)) = clause.as_list().and_then(|parts| parts.split_first()) else {
            return Err(Error::syntax("a cond clause is (test body…)", clause.span));
        };
        if test.as_symbol() == Some(*well_known::ELSE) {
            if !later.is_empty() {
                return Err(Error::syntax(
                    "`else` must be the last cond clause",
                    clause.span,
                ));
            }
            return self.sequence(body, clause.span);
        }
        if let [arrow, f] = body {
            if arrow.as_symbol() == Some(*well_known::ARROW) {
                return self.cond_arrow(test, f, later, clause.span);
            }
        }
        let test = self.compile(test)?;
        let rest = self.cond_clauses(later)?;
        if body.is_empty() {
            return Ok(Node::Or(vec![test, rest].into_boxed_slice()));
        }
        let body = self.sequence(body, clause.span)?;
        Ok(Node::If(Box::new((test, body, rest))))
    }

    /// `(test => f)`: binds the test's value and, when it is true, calls f with it.
    fn cond_arrow(
        &mut self,
        test: &Syntax,
        f: &Syntax,
        later: &[Syntax],
        span: Span,
    ) -> Result<Node> {
        let tested = self.interp.gensym("cond-value");
        let scope = Scope::new(vec![tested]);
        let init = self.compile(test)?;
        self.push_scope(scope.clone());
        let f = self.compile(f);
        let rest = self.cond_clauses(later);
        self.pop_scope();
        let local = || Node::Local {
            depth: 0,
            slot: 0,
            name: tested,
            span,
        };
        let call = Node::Call(Box::new(Call {
            callee: f?,
            args: vec![local()],
            span,
        }));
        Ok(Node::Let(Box::new(Let {
            kind: LetKind::Parallel,
            scope,
            inits: vec![(0, init)],
            body: Node::If(Box::new((local(), call, rest?))),
        })))
    }

    fn case(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, key], case_clauses) = form_items(
            items,
            usize::MAX,
            span,
            "(case key ((datum…) body…)… (else body…))",
        )?;
        let key = self.compile(key)?;
        let mut clauses = Vec::new();
        let mut default = Node::Const(Value::Nil);
        for (i, clause) in case_clauses.iter().enumerate() {
            let Some((datum, body)) = clause.as_list().and_then(|parts| parts.split_first()) else {
                return Err(Error::syntax(
                    "a case clause is ((datum…) body…)",
                    clause.span,
                ));
            };
            let body = self.sequence(body, clause.span)?;
            if datum.as_symbol() == Some(*well_known::ELSE) {
                if i + 1 != case_clauses.len() {
                    return Err(Error::syntax(
                        "`else` must be the last case clause",
                        clause.span,
                    ));
                }
                default = body;
                continue;
            }
            let datums = match &datum.kind {
                SyntaxKind::List(ds) | SyntaxKind::Vector(ds) => {
                    ds.iter().map(syntax_to_value).collect()
                }
                _ => vec![syntax_to_value(datum)],
            };
            clauses.push((datums, body));
        }
        Ok(Node::Case(Box::new(Case {
            key,
            clauses,
            default,
        })))
    }

    fn define(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, target], body) = form_items(
            items,
            usize::MAX,
            span,
            "(define name value) or (define (name params…) body…)",
        )?;
        let (name, value) = match &target.kind {
            SyntaxKind::Symbol(name) => {
                self.check_definable(*name, target.span)?;
                let value = match body {
                    [] => Node::Const(Value::Nil),
                    [value] => self.compile_named(value, *name)?,
                    _ => return Err(Error::syntax("(define name value) takes one value", span)),
                };
                (*name, value)
            }
            SyntaxKind::List(signature) => {
                let Some((head, params)) = signature.split_first() else {
                    return Err(Error::syntax("define needs a name", target.span));
                };
                let name = head
                    .as_symbol()
                    .ok_or_else(|| Error::syntax("a procedure name must be a symbol", head.span))?;
                self.check_definable(name, head.span)?;
                let lambda = self.lambda(Some(name), params, head.span, body, span)?;
                (name, Node::Lambda(lambda))
            }
            _ => return Err(Error::syntax("define needs a name", target.span)),
        };
        Ok(self.define_node(name, value))
    }

    /// The node that binds `name` in the innermost scope (or globally at top level).
    pub fn define_node(&mut self, name: Sym, value: Node) -> Node {
        match self.innermost() {
            None => Node::DefineGlobal {
                name,
                value: Box::new(value),
            },
            Some(scope) => {
                let slot = scope.slot_of(name).unwrap_or_else(|| scope.declare(name)) as u32;
                Node::DefineLocal {
                    slot,
                    name,
                    value: Box::new(value),
                }
            }
        }
    }

    /// Compiles a value that is being bound to `name`, naming it if it is a lambda.
    fn compile_named(&mut self, syntax: &Syntax, name: Sym) -> Result<Node> {
        if let Some([head, params, body @ ..]) = syntax.as_list() {
            if let Some(head) = head.as_symbol() {
                if matches!(head.name(), "lambda" | "fn") && !self.is_local(head) {
                    let names = lambda_params(params)?;
                    return Ok(Node::Lambda(self.lambda(
                        Some(name),
                        &names,
                        params.span,
                        body,
                        syntax.span,
                    )?));
                }
            }
        }
        self.compile(syntax)
    }

    fn set(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, target, value], _) = form_items(items, 3, span, "(set! name value)")?;
        let name = target
            .as_symbol()
            .ok_or_else(|| Error::syntax("set! needs a variable name", target.span))?;
        let value = Box::new(self.compile(value)?);
        Ok(match self.variable(name, target.span) {
            Node::Local { depth, slot, .. } => Node::SetLocal { depth, slot, value },
            Node::Dynamic { name, span } => Node::SetDynamic { name, value, span },
            _ => Node::SetGlobal {
                name,
                value,
                span: target.span,
            },
        })
    }

    fn lambda_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, params], body) = form_items(items, usize::MAX, span, "(lambda (params…) body…)")?;
        let names = lambda_params(params)?;
        Ok(Node::Lambda(self.lambda(
            None,
            &names,
            params.span,
            body,
            span,
        )?))
    }

    /// Analyses a procedure: parameters (with `. rest`), then the body in a new scope.
    pub fn lambda(
        &mut self,
        name: Option<Sym>,
        params: &[Syntax],
        params_span: Span,
        body: &[Syntax],
        span: Span,
    ) -> Result<Rc<Lambda>> {
        let (names, rest) = parse_params(params, params_span)?;
        let required = names.len() as u32 - u32::from(rest);
        let scope = Scope::new(names);
        self.push_scope(scope.clone());
        let body = self.body(body, span);
        self.pop_scope();
        Ok(Rc::new(Lambda {
            name,
            required,
            rest,
            self_slot: None,
            scope,
            body: body?,
            span,
        }))
    }

    fn bindings<'s>(&self, syntax: &'s Syntax) -> Result<Vec<(Sym, Option<&'s Syntax>, Span)>> {
        let list = match &syntax.kind {
            SyntaxKind::List(l) | SyntaxKind::Vector(l) => l,
            _ => {
                return Err(Error::syntax(
                    "bindings are a list of (name value)",
                    syntax.span,
                ))
            }
        };
        list.iter()
            .map(|b| match &b.kind {
                SyntaxKind::List(pair) | SyntaxKind::Vector(pair) => {
                    let (name, init) = match pair.as_slice() {
                        [name] => (name, None),
                        [name, init] => (name, Some(init)),
                        _ => return Err(Error::syntax("a binding is (name value)", b.span)),
                    };
                    let symbol = name.as_symbol().ok_or_else(|| {
                        Error::syntax("a binding name must be a symbol", name.span)
                    })?;
                    Ok((symbol, init, b.span))
                }
                SyntaxKind::Symbol(name) => Ok((*name, None, b.span)),
                _ => Err(Error::syntax("a binding is (name value)", b.span)),
            })
            .collect()
    }

    fn init(&mut self, init: Option<&Syntax>, name: Sym) -> Result<Node> {
        match init {
            Some(s) => self.compile_named(s, name),
            None => Ok(Node::Const(Value::Nil)),
        }
    }

    fn let_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, first], rest) =
            form_items(items, usize::MAX, span, "(let ((name value)…) body…)")?;
        if let Some(loop_name) = first.as_symbol() {
            let ([_, _, bindings], body) =
                form_items(items, usize::MAX, span, "(let name ((var init)…) body…)")?;
            let bindings = self.bindings(bindings)?;
            let inits = bindings
                .iter()
                .map(|(name, init, _)| self.init(*init, *name))
                .collect::<Result<Vec<_>>>()?;
            let params: Vec<Sym> = bindings.iter().map(|b| b.0).collect();
            let lambda = self.loop_lambda(loop_name, params, body, span)?;
            return Ok(Node::Loop(Box::new(Loop {
                lambda,
                inits,
                span,
            })));
        }
        let bindings = self.bindings(first)?;
        let inits = bindings
            .iter()
            .enumerate()
            .map(|(i, (name, init, _))| Ok((i as u32, self.init(*init, *name)?)))
            .collect::<Result<Vec<_>>>()?;
        let scope = Scope::new(bindings.iter().map(|b| b.0).collect());
        self.push_scope(scope.clone());
        let body = self.body(rest, span);
        self.pop_scope();
        Ok(Node::Let(Box::new(Let {
            kind: LetKind::Parallel,
            scope,
            inits,
            body: body?,
        })))
    }

    /// The procedure of a named `let` or `do`: parameters, then a slot for itself.
    fn loop_lambda(
        &mut self,
        name: Sym,
        params: Vec<Sym>,
        body: &[Syntax],
        span: Span,
    ) -> Result<Rc<Lambda>> {
        let required = params.len() as u32;
        let scope = Scope::new(params);
        let self_slot = scope.declare(name) as u32;
        self.push_scope(scope.clone());
        let body = self.body(body, span);
        self.pop_scope();
        Ok(Rc::new(Lambda {
            name: Some(name),
            required,
            rest: false,
            self_slot: Some(self_slot),
            scope,
            body: body?,
            span,
        }))
    }

    fn let_star(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        self.sequential_let(items, span, "(let* ((name value)…) body…)", false)
    }

    fn letrec(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        self.sequential_let(items, span, "(letrec ((name value)…) body…)", true)
    }

    /// `let*` and `letrec`: one frame whose inits run in order inside it. `letrec`
    /// declares every name first, so each init sees them all; `let*` declares each name
    /// after its init, so an init sees only the names before it.
    fn sequential_let(
        &mut self,
        items: &[Syntax],
        span: Span,
        usage: &str,
        recursive: bool,
    ) -> Result<Node> {
        let ([_, bindings], body) = form_items(items, usize::MAX, span, usage)?;
        let bindings = self.bindings(bindings)?;
        let declared_first = if recursive {
            bindings.iter().map(|b| b.0).collect()
        } else {
            Vec::new()
        };
        let scope = Scope::new(declared_first);
        self.push_scope(scope.clone());
        let result = (|| {
            let mut inits = Vec::new();
            for (i, (name, init, _)) in bindings.iter().enumerate() {
                let node = self.init(*init, *name)?;
                let slot = if recursive { i } else { scope.declare(*name) };
                inits.push((slot as u32, node));
            }
            let body = self.body(body, span)?;
            Ok((inits, body))
        })();
        self.pop_scope();
        let (inits, body) = result?;
        Ok(Node::Let(Box::new(Let {
            kind: LetKind::Sequential,
            scope,
            inits,
            body,
        })))
    }

    /// `(do ((var init step)…) (test result…) body…)` as a named-let loop.
    fn do_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, specs, exit], body) = form_items(
            items,
            usize::MAX,
            span,
            "(do ((var init step)…) (test result…) body…)",
        )?;
        let SyntaxKind::List(specs) = &specs.kind else {
            return Err(Error::syntax(
                "do needs a list of (var init step)",
                specs.span,
            ));
        };
        let Some((test, results)) = exit.as_list().and_then(|l| l.split_first()) else {
            return Err(Error::syntax(
                "do needs an exit clause (test result…)",
                exit.span,
            ));
        };
        let loop_name = self.interp.gensym("do-loop");
        let sym = |s: Sym| Syntax::new(SyntaxKind::Symbol(s), span);
        let list = |items: Vec<Syntax>| Syntax::new(SyntaxKind::List(items), span);
        let mut vars = Vec::new();
        let mut inits = Vec::new();
        let mut steps = vec![sym(loop_name)];
        for spec in specs {
            let (var, init, step) = match spec.as_list() {
                Some([var, init]) => (var, init, var),
                Some([var, init, step]) => (var, init, step),
                _ => {
                    return Err(Error::syntax(
                        "a do variable is (var init step?)",
                        spec.span,
                    ))
                }
            };
            let name = var
                .as_symbol()
                .ok_or_else(|| Error::syntax("a do variable must be a symbol", var.span))?;
            vars.push(name);
            inits.push(self.compile(init)?);
            steps.push(step.clone());
        }
        let mut on_exit = vec![sym(Sym::new("begin")), Syntax::new(SyntaxKind::Nil, span)];
        on_exit.extend(results.iter().cloned());
        let mut again = vec![sym(Sym::new("begin"))];
        again.extend(body.iter().cloned());
        again.push(list(steps));
        let body = list(vec![
            sym(Sym::new("if")),
            test.clone(),
            list(on_exit),
            list(again),
        ]);
        let lambda = self.loop_lambda(loop_name, vars, std::slice::from_ref(&body), span)?;
        Ok(Node::Loop(Box::new(Loop {
            lambda,
            inits,
            span,
        })))
    }

    fn try_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        form_items::<2>(items, usize::MAX, span, "(try expr (catch e body…))")?;
        // A clause follows at least one form of the body: a lone `(catch …)` is the body.
        let mut body = operands(items);
        let mut finally = None;
        if let Some((forms, [clause])) = body.split_last_chunk() {
            if let Some(parts) = clause_parts(clause, "finally").filter(|_| !forms.is_empty()) {
                finally = Some(self.sequence(parts, span)?);
                body = forms;
            }
        }
        let mut handler = None;
        if let Some((forms, [clause])) = body.split_last_chunk() {
            if let Some(parts) = clause_parts(clause, "catch").filter(|_| !forms.is_empty()) {
                let Some((var, catch_body)) = parts
                    .split_first()
                    .and_then(|(var, rest)| Some((var.as_symbol()?, rest)))
                else {
                    return Err(Error::syntax(
                        "catch needs a variable: (catch e body…)",
                        clause.span,
                    ));
                };
                let scope = Scope::new(vec![var]);
                self.push_scope(scope.clone());
                let caught = self.body(catch_body, clause.span);
                self.pop_scope();
                handler = Some((scope, caught?));
                body = forms;
            }
        }
        let body = self.sequence(body, span)?;
        Ok(Node::Try(Box::new(Try {
            body,
            handler,
            finally,
        })))
    }

    fn defmacro(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, name, params], body) =
            form_items(items, usize::MAX, span, "(defmacro name (params…) body…)")?;
        let name_span = name.span;
        let name = name
            .as_symbol()
            .ok_or_else(|| Error::syntax("a macro name must be a symbol", name_span))?;
        self.check_definable(name, name_span)?;
        let params_span = params.span;
        let params = match &params.kind {
            SyntaxKind::List(p) => p.clone(),
            SyntaxKind::Symbol(_) => vec![
                Syntax::new(SyntaxKind::Symbol(*well_known::DOT), params_span),
                params.clone(),
            ],
            _ => {
                return Err(Error::syntax(
                    "macro parameters are a list of symbols",
                    params_span,
                ))
            }
        };
        // Macros run at analysis time, so they see only the global environment.
        let mut global = Compiler::new(self.interp);
        global.expansions = self.expansions;
        let lambda = global.lambda(Some(name), &params, params_span, body, span)?;
        Ok(Node::DefMacro { name, lambda })
    }
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
fn lambda_params(params: &Syntax) -> Result<Vec<Syntax>> {
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

fn parse_params(params: &[Syntax], span: Span) -> Result<(Vec<Sym>, bool)> {
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
fn clause_parts<'a>(clause: &'a Syntax, word: &str) -> Option<&'a [Syntax]> {
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
    Node::Call(Box::new(Call { callee, args, span }))
}
