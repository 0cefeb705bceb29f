//! `(with-budget {"usd" n "tokens" n "calls" n} body…)` and `(with-cache body…)`: the
//! body's model calls are limited, or may be answered from the run log. Both hold for
//! the `pmap` items started inside the body, and nest.

use super::forms::compile_body;
use super::observe::{self, BudgetLimits};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::ast::Extension;
use crate::eval::{Compiler, Interp, Node};
use crate::reader::Syntax;
use crate::source::Span;
use crate::value::{write_string, Value};

struct WithBudget {
    limits: Node,
    body: Node,
    span: Span,
}

pub fn with_budget(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let limits = items.get(1).ok_or_else(|| {
        Error::syntax(
            "bad syntax: expected (with-budget {\"usd\" n \"tokens\" n \"calls\" n} body…)",
            span,
        )
    })?;
    Ok(Node::Extension(Box::new(WithBudget {
        limits: compiler.compile(limits)?,
        body: compile_body(compiler, items.get(2..).unwrap_or_default())?,
        span,
    })))
}

impl Extension for WithBudget {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let limits =
            budget_limits(&interp.eval(&self.limits, env)?).map_err(|e| e.with_span(self.span))?;
        observe::with_budget(&interp.state.task.observe, limits, || {
            interp.eval(&self.body, env)
        })
    }
}

/// Reads `{"usd" n "tokens" n "calls" n}`, every key optional.
fn budget_limits(value: &Value) -> Result<BudgetLimits> {
    let bad = |what: String| Error::eval(format!("with-budget: {what}"));
    let map = value.as_map().ok_or_else(|| {
        bad(format!(
            "expected a map of limits, not {}",
            write_string(value)
        ))
    })?;
    let mut limits = BudgetLimits::default();
    for (key, limit) in map.entries.iter() {
        let count = || match limit {
            Value::Int(n) if *n >= 0 => Ok(*n as u64),
            other => Err(bad(format!(
                "\"{key}\" is a count, not {}",
                write_string(other)
            ))),
        };
        match &**key {
            "usd" => {
                limits.usd = Some(match limit {
                    Value::Int(n) if *n >= 0 => *n as f64,
                    Value::Float(x) if *x >= 0.0 => *x,
                    other => {
                        return Err(bad(format!(
                            "\"usd\" is an amount, not {}",
                            write_string(other)
                        )))
                    }
                })
            }
            "tokens" => limits.tokens = Some(count()?),
            "calls" => limits.calls = Some(count()?),
            other => {
                return Err(bad(format!(
                    "unknown limit \"{other}\": the limits are \"usd\", \"tokens\" and \"calls\""
                )))
            }
        }
    }
    Ok(limits)
}

struct WithCache {
    body: Node,
}

pub fn with_cache(compiler: &mut Compiler, items: &[Syntax], _span: Span) -> Result<Node> {
    Ok(Node::Extension(Box::new(WithCache {
        body: compile_body(compiler, items.get(1..).unwrap_or_default())?,
    })))
}

impl Extension for WithCache {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        observe::with_cache(&interp.state.task.observe, || interp.eval(&self.body, env))
    }
}
