//! Quotation: the data a piece of syntax denotes (`quote`), code rebuilt from data
//! (macro output, `eval`), and quasiquote, analysed into calls that build the data.

use super::ast::Node;
use super::compile::{form_items, internal_call, Compiler};
use crate::bounds::Budget;
use crate::error::{Error, ErrorKind, Result};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::{well_known, Sym};
use crate::value::{Entries, Value};
use std::rc::Rc;

impl Compiler<'_> {
    pub(super) fn quasiquote_form(&mut self, items: &[Syntax], span: Span) -> Result<Node> {
        let ([_, datum], _) = form_items(items, 2, span, "(quasiquote datum)")?;
        self.quasi(datum, 1)
    }

    fn quasi(&mut self, syntax: &Syntax, level: usize) -> Result<Node> {
        let span = syntax.span;
        let items = match &syntax.kind {
            SyntaxKind::List(items) | SyntaxKind::Vector(items) => items,
            SyntaxKind::Map(items) => return self.quasi_map(items, level, span),
            _ => return Ok(Node::Const(syntax_to_value(syntax))),
        };
        if let Some((head, datum)) = quoting(items) {
            if head == *well_known::UNQUOTE {
                return if level == 1 {
                    self.compile(datum)
                } else {
                    Ok(internal_call(
                        "list",
                        vec![
                            Node::Const(Value::Symbol(head)),
                            self.quasi(datum, level - 1)?,
                        ],
                        span,
                    ))
                };
            }
            if head == *well_known::UNQUOTE_SPLICING && level == 1 {
                return Err(Error::syntax(
                    "`,@` splices into the list around it, and there is none here: write `,` to insert the value itself",
                    span,
                ));
            }
            if head == *well_known::QUASIQUOTE {
                return Ok(internal_call(
                    "list",
                    vec![
                        Node::Const(Value::Symbol(head)),
                        self.quasi(datum, level + 1)?,
                    ],
                    span,
                ));
            }
        }
        self.quasi_elements(items, level, span)
    }

    /// A map template: its keys as written, its values templates.
    fn quasi_map(&mut self, items: &[Syntax], level: usize, span: Span) -> Result<Node> {
        let mut args = Vec::new();
        for (i, item) in items.iter().enumerate() {
            args.push(if i % 2 == 0 {
                Node::Const(map_key(item))
            } else {
                self.quasi(item, level)?
            });
        }
        Ok(internal_call("hash-map", args, span))
    }

    /// A list template's elements: runs of plain elements become `(list …)`, splices are
    /// appended between them.
    fn quasi_elements(&mut self, items: &[Syntax], level: usize, span: Span) -> Result<Node> {
        let mut segments: Vec<Node> = Vec::new();
        let mut run: Vec<Node> = Vec::new();
        for item in items {
            let splice = item
                .as_list()
                .and_then(quoting)
                .filter(|(head, _)| *head == *well_known::UNQUOTE_SPLICING);
            match splice {
                Some((_, spliced)) if level == 1 => {
                    if !run.is_empty() {
                        segments.push(internal_call("list", std::mem::take(&mut run), span));
                    }
                    segments.push(self.compile(spliced)?);
                }
                _ => run.push(self.quasi(item, level)?),
            }
        }
        if segments.is_empty() {
            // All constant (plain data or unquoted constants): build the list now.
            let constants: Option<Vec<Value>> = run
                .iter()
                .map(|n| match n {
                    Node::Const(v) => Some(v.clone()),
                    _ => None,
                })
                .collect();
            if let Some(values) = constants {
                return Ok(Node::Const(Value::list(values)));
            }
            return Ok(internal_call("list", run, span));
        }
        if !run.is_empty() {
            segments.push(internal_call("list", run, span));
        }
        Ok(internal_call("append", segments, span))
    }
}

/// `(head datum)` with a symbol head: the shape of `unquote`, `quasiquote` and
/// `unquote-splicing`.
fn quoting(items: &[Syntax]) -> Option<(Sym, &Syntax)> {
    match items {
        [head, datum] => Some((head.as_symbol()?, datum)),
        _ => None,
    }
}

/// A map literal's key: symbols and keywords (interned or read as data) by name.
fn map_key(syntax: &Syntax) -> Value {
    match &syntax.kind {
        SyntaxKind::Keyword(k) | SyntaxKind::Symbol(k) => Value::str(k.name()),
        SyntaxKind::Value(v) => v
            .symbol_or_keyword_name()
            .map_or_else(|| v.clone(), Value::str),
        _ => syntax_to_value(syntax),
    }
}

/// The data a piece of syntax denotes when quoted.
pub fn syntax_to_value(syntax: &Syntax) -> Value {
    match &syntax.kind {
        SyntaxKind::Nil => Value::Nil,
        SyntaxKind::Bool(b) => Value::Bool(*b),
        SyntaxKind::Int(i) => Value::Int(*i),
        SyntaxKind::Float(f) => Value::Float(*f),
        SyntaxKind::Str(s) => Value::Str(s.clone()),
        SyntaxKind::Symbol(s) => Value::Symbol(*s),
        SyntaxKind::Keyword(k) => Value::Keyword(*k),
        SyntaxKind::Path(p) => Value::Symbol(Sym::new(&p.text)),
        SyntaxKind::List(items) | SyntaxKind::Vector(items) => {
            Value::list(items.iter().map(syntax_to_value).collect())
        }
        SyntaxKind::Map(items) => {
            let mut entries = Entries::new();
            // The reader refuses a map literal of an odd number of forms.
            let (pairs, _) = items.as_chunks();
            for [key, value] in pairs {
                let key = match map_key(key) {
                    Value::Str(s) => Rc::from(s.as_str()),
                    other => Rc::from(crate::value::write_string(&other).as_str()),
                };
                entries.insert(key, syntax_to_value(value));
            }
            Value::map(entries)
        }
        SyntaxKind::Value(v) => v.clone(),
    }
}

/// Code rebuilt from data visits at most this many nodes (per `eval`, and per top-level
/// form for macro expansions).
pub const MAX_CODE_NODES: u64 = 1 << 20;

/// Code built as data (macro expansions, `eval`) back to syntax, every node at `span`.
pub fn value_to_syntax(value: &Value, span: Span) -> Result<Syntax> {
    value_to_syntax_within(
        value,
        span,
        &mut Budget::for_value("code", MAX_CODE_NODES, value),
    )
}

/// `value_to_syntax` counting its nodes against `budget`. The datum of a `quote` stays
/// data (shared structure is kept, not copied out into a tree), except inside a
/// quasiquote, where it may hold unquotes.
pub fn value_to_syntax_within(value: &Value, span: Span, budget: &mut Budget) -> Result<Syntax> {
    let mut convert = ToSyntax { span, budget };
    convert.value(value, 0, false)
}

struct ToSyntax<'b> {
    span: Span,
    budget: &'b mut Budget,
}

impl ToSyntax<'_> {
    fn value(&mut self, value: &Value, depth: usize, in_quasiquote: bool) -> Result<Syntax> {
        let span = self.span;
        if depth > crate::reader::MAX_NESTING {
            return Err(
                Error::new(ErrorKind::ResourceExhaustion, "code nested too deeply").with_span(span),
            );
        }
        self.budget.visit().map_err(|e| e.with_span(span))?;
        let kind = match value {
            Value::Nil => SyntaxKind::Nil,
            Value::Bool(b) => SyntaxKind::Bool(*b),
            Value::Int(i) => SyntaxKind::Int(*i),
            Value::Float(f) => SyntaxKind::Float(*f),
            Value::Str(s) => SyntaxKind::Str(s.clone()),
            Value::Keyword(k) => SyntaxKind::Keyword(*k),
            // Data becomes code here, so its names are interned now.
            Value::DataKeyword(name) => SyntaxKind::Keyword(Sym::new(name)),
            // A symbol whose name is a path (`a.b`) is code for a path lookup.
            Value::Symbol(s) => {
                crate::reader::symbol_kind(s.name(), span).unwrap_or(SyntaxKind::Symbol(*s))
            }
            Value::DataSymbol(name) => crate::reader::symbol_kind(name, span)
                .unwrap_or_else(|| SyntaxKind::Symbol(Sym::new(name))),
            Value::List(..) => {
                let list = value.as_list().unwrap_or_default();
                let head = list.first();
                let is = |sym: Sym| head.as_ref().is_some_and(|h| h.is_symbol_sym(sym));
                if is(*well_known::QUOTE) && list.len() == 2 && !in_quasiquote {
                    let datum = list.get(1).unwrap_or_default();
                    SyntaxKind::List(vec![
                        Syntax::new(SyntaxKind::Symbol(*well_known::QUOTE), span),
                        Syntax::new(SyntaxKind::Value(datum), span),
                    ])
                } else {
                    let in_quasiquote = in_quasiquote || is(*well_known::QUASIQUOTE);
                    let mut items = Vec::with_capacity(list.len());
                    for item in list.iter() {
                        items.push(self.value(&item, depth + 1, in_quasiquote)?);
                    }
                    SyntaxKind::List(items)
                }
            }
            other => SyntaxKind::Value(other.clone()),
        };
        Ok(Syntax::new(kind, span))
    }
}
