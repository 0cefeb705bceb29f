//! The task special forms: `deftask`, `sequential`, `step`, `cond-output`,
//! `with-provider`, `with-budget`, `with-cache`.

use super::session::ProviderChoice;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::ast::Extension;
use crate::eval::{Compiler, Interp, Node};
use crate::reader::Syntax;
use crate::source::Span;
use crate::value::Value;

pub type SpecialForm = fn(&mut Compiler, &[Syntax], Span) -> Result<Node>;

pub fn special_form(name: &str) -> Option<SpecialForm> {
    Some(match name {
        "deftask" => super::deftask::deftask,
        "sequential" => super::sequential::sequential,
        "step" => super::sequential::step,
        "cond-output" => super::cond_output::cond_output,
        "with-provider" => with_provider,
        "with-budget" => super::scopes::with_budget,
        "with-cache" => super::scopes::with_cache,
        _ => return None,
    })
}

/// `(with-provider p body…)`: the body runs in a provider session of its own; the
/// previous session comes back afterwards, also on error.
struct WithProvider {
    provider: Node,
    body: Node,
    span: Span,
}

fn with_provider(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let provider = items.get(1).ok_or_else(|| {
        Error::syntax("bad syntax: expected (with-provider provider body…)", span)
    })?;
    let provider = compiler.compile(provider)?;
    let body = compile_body(compiler, items.get(2..).unwrap_or_default())?;
    Ok(Node::Extension(Box::new(WithProvider {
        provider,
        body,
        span,
    })))
}

/// A form's body: its expressions in sequence (nil when there are none).
pub fn compile_body(compiler: &mut Compiler, body: &[Syntax]) -> Result<Node> {
    Ok(match body {
        [] => Node::Const(Value::Nil),
        [only] => compiler.compile(only)?,
        _ => Node::Begin(
            body.iter()
                .map(|s| compiler.compile(s))
                .collect::<Result<Vec<_>>>()?
                .into_boxed_slice(),
        ),
    })
}

impl Extension for WithProvider {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let provider = ProviderChoice::from_value(
            &interp.eval(&self.provider, env)?,
            &interp.limits.capabilities,
        )
        .map_err(|e| e.with_span(self.span))?;
        let previous = interp.set_provider(provider, interp.metrics().fresh());
        let result = interp.eval(&self.body, env);
        interp.swap_session(previous);
        result
    }
}
