//! The core's special forms: quotation, conditionals, definitions, procedures, `let`
//! and its kin, `do`, `try` and `defmacro` — the rows of the core [`Layer`] and the
//! analysers they name. (The analyser itself, which dispatches to them, is `compile.rs`.)

use super::ast::*;
use super::compile::{clause_parts, form_items, lambda_params, operands, parse_params};
use super::layer::{FormDef, Layer};
use super::quote::syntax_to_value;
use super::Compiler;
use crate::error::{Error, Result};
use crate::eval::env::Scope;
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::{well_known, Sym};
use crate::value::Value;
use std::rc::Rc;

/// The core layer: the special forms the analyser is built on, and the core builtins.
pub static CORE: Layer = Layer {
    name: "core",
    builtins: crate::builtins::TOPICS,
    forms: CORE_FORMS,
    keeps_mark: None,
};

const CORE_FORMS: &[FormDef] = &[
    FormDef {
        name: "quote",
        analyse: |c, items, span| c.quote(items, span),
        synopsis: "(quote datum) or 'datum",
        description: "the datum, unevaluated",
        example: "'(a b) ⇒ (a b)",
    },
    FormDef {
        name: "quasiquote",
        analyse: |c, items, span| c.quasiquote_form(items, span),
        synopsis: "`(a ,b ,@cs)",
        description: "a template; , inserts a value, ,@ splices a list",
        example: "`(1 ,(+ 1 1) ,@(list 3 4)) ⇒ (1 2 3 4)",
    },
    FormDef {
        name: "unquote",
        analyse: |_, items, span| Err(unquote_outside(items, span)),
        synopsis: ",expr inside a quasiquote",
        description: "inserts the value of expr",
        example: "`(a ,(+ 1 2)) ⇒ (a 3)",
    },
    FormDef {
        name: "unquote-splicing",
        analyse: |_, items, span| Err(unquote_outside(items, span)),
        synopsis: ",@expr inside a quasiquote",
        description: "splices in the elements of a list",
        example: "`(a ,@(list 1 2)) ⇒ (a 1 2)",
    },
    FormDef {
        name: "if",
        analyse: |c, items, span| c.if_form(items, span),
        synopsis: "(if test then else?)",
        description: "",
        example: "(if (> 2 1) \"yes\" \"no\") ⇒ \"yes\"",
    },
    FormDef {
        name: "cond",
        analyse: |c, items, span| c.cond(items, span),
        synopsis: "(cond (test body…)… (test => f) (else body…))",
        description: "",
        example: "(cond ((< 5 0) \"neg\") (else \"non-neg\")) ⇒ \"non-neg\"",
    },
    FormDef {
        name: "case",
        analyse: |c, items, span| c.case(items, span),
        synopsis: "(case key ((datum…) body…)… (else body…))",
        description: "",
        example: "(case 2 ((1) \"one\") ((2 3) \"few\") (else \"many\")) ⇒ \"few\"",
    },
    FormDef {
        name: "when",
        analyse: |c, items, span| c.when(items, span),
        synopsis: "(when test body…)",
        description: "",
        example: "(when (> 2 1) \"ran\") ⇒ \"ran\"",
    },
    FormDef {
        name: "unless",
        analyse: |c, items, span| c.unless(items, span),
        synopsis: "(unless test body…)",
        description: "",
        example: "(unless (> 2 1) \"ran\") ⇒ nil",
    },
    FormDef {
        name: "and",
        analyse: |c, items, span| c.and(items, span),
        synopsis: "(and expr…)",
        description: "the first false value, or the last",
        example: "(and 1 2 3) ⇒ 3",
    },
    FormDef {
        name: "or",
        analyse: |c, items, span| c.or(items, span),
        synopsis: "(or expr…)",
        description: "the first true value, or the last",
        example: "(or false nil 7) ⇒ 7",
    },
    FormDef {
        name: "begin",
        analyse: |c, items, span| c.begin(items, span),
        synopsis: "(begin expr…)",
        description: "the value of the last",
        example: "(begin (println \"hi\") 2) ⇒ 2",
    },
    FormDef {
        name: "define",
        analyse: |c, items, span| c.define(items, span),
        synopsis: "(define name expr) or (define (name arg… . rest) body…)",
        description: "",
        example: "(define (square x) (* x x))",
    },
    FormDef {
        name: "set!",
        analyse: |c, items, span| c.set(items, span),
        synopsis: "(set! name expr)",
        description: "assigns an existing binding",
        example: "(begin (define n 1) (set! n 2) n) ⇒ 2",
    },
    FormDef {
        name: "lambda",
        analyse: |c, items, span| c.lambda_form(items, span),
        synopsis: "(lambda (arg… . rest) body…)",
        description: "a procedure",
        example: "((lambda (x) (* x 2)) 21) ⇒ 42",
    },
    FormDef {
        name: "fn",
        analyse: |c, items, span| c.lambda_form(items, span),
        synopsis: "(fn (arg… . rest) body…) or (fn [arg…] body…)",
        description: "lambda",
        example: "((fn [x] (+ x 1)) 1) ⇒ 2",
    },
    FormDef {
        name: "let",
        analyse: |c, items, span| c.let_form(items, span),
        synopsis: "(let ((name expr)…) body…), or named",
        description: "(let loop ((name init)…) body…)",
        example: "(let ((a 1) (b 2)) (+ a b)) ⇒ 3",
    },
    FormDef {
        name: "let*",
        analyse: |c, items, span| c.let_star(items, span),
        synopsis: "(let* ((name expr)…) body…)",
        description: "each init sees the earlier names",
        example: "(let* ((a 1) (b (+ a 1))) b) ⇒ 2",
    },
    FormDef {
        name: "letrec",
        analyse: |c, items, span| c.letrec(items, span),
        synopsis: "(letrec ((name expr)…) body…)",
        description: "mutually recursive bindings",
        example: "(letrec ((ev? (fn (n) (if (= n 0) true (od? (- n 1))))) (od? (fn (n) (if (= n 0) false (ev? (- n 1)))))) (ev? 10)) ⇒ true",
    },
    FormDef {
        name: "letrec*",
        analyse: |c, items, span| c.letrec(items, span),
        synopsis: "(letrec* ((name expr)…) body…)",
        description: "letrec, the inits run in order",
        example: "(letrec* ((a 1) (b (+ a 1))) b) ⇒ 2",
    },
    FormDef {
        name: "do",
        analyse: |c, items, span| c.do_form(items, span),
        synopsis: "(do ((var init step)…) (test result…) body…)",
        description: "",
        example: "(do ((i 0 (+ i 1)) (acc '() (cons i acc))) ((= i 3) acc)) ⇒ (2 1 0)",
    },
    FormDef {
        name: "try",
        analyse: |c, items, span| c.try_form(items, span),
        synopsis: "(try expr (catch e body…) (finally body…))",
        description: "e is the error as a map",
        example: "(try (car 5) (catch e e.type)) ⇒ \"EVAL_ERROR\"",
    },
    FormDef {
        name: "defmacro",
        analyse: |c, items, span| c.defmacro(items, span),
        synopsis: "(defmacro name (arg…) body…)",
        description: "a non-hygienic macro",
        example: "(defmacro swap (a b) `(list ,b ,a))",
    },
];

fn unquote_outside(items: &[Syntax], span: Span) -> Error {
    let name = items
        .first()
        .and_then(Syntax::as_symbol)
        .map_or("unquote", |s| s.name());
    Error::syntax(format!("`{name}` (`,` or `,@`) outside a quasiquote"), span)
}

impl Compiler<'_> {
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
            tail: false,
            unchanged: 0,
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
                self.check_variable_name(*name, target.span)?;
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
        let outer = self.defining;
        if self.innermost().is_none() && name.is_some() {
            self.defining = name;
        }
        self.push_scope(scope.clone());
        let body = self.body(body, span);
        self.pop_scope();
        self.defining = outer;
        let mut body = body?;
        mark_tail_calls(&mut body);
        Ok(Rc::new(Lambda {
            name,
            required,
            rest,
            self_slot: None,
            scope,
            body,
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
        let mut body = body?;
        mark_tail_calls(&mut body);
        Ok(Rc::new(Lambda {
            name: Some(name),
            required,
            rest: false,
            self_slot: Some(self_slot),
            scope,
            body,
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
