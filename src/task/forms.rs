//! The task special forms: `deftask`, `task`, `sequential`, `step`, `cond-output`,
//! `with-provider`, `with-fallback`, `with-budget`, `with-cache`.

use super::session::ProviderChoice;
use crate::error::{Error, Result};
use crate::eval::ast::Extension;
use crate::eval::env::Env;
use crate::eval::layer::{FormDef, Layer};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp, Node};
use crate::provider::options::{self as model_options, ModelOptions};
use crate::source::Span;
use crate::value::{to_json, Value};

/// The task layer: its special forms here, its builtins in `builtins.rs`, `pmap.rs`,
/// `conversation.rs`, `attachments.rs` and `human.rs`.
pub static LAYER: Layer = Layer {
    name: "task",
    builtins: &[
        ("Tasks", super::builtins::BUILTINS),
        ("Parallel map", super::pmap::BUILTINS),
        ("Conversations", super::conversation::BUILTINS),
        ("Attachments", super::attachments::BUILTINS),
        ("People in the loop", super::human::BUILTINS),
    ],
    forms: FORMS,
    keeps_mark: Some(super::result::is_valid),
};

const FORMS: &[FormDef] = &[
    FormDef {
        name: "deftask",
        analyse: super::deftask::deftask,
        synopsis: "(deftask name (param (param default)…) :option value… body…)",
        description: "",
        example: "(deftask greet (who) :prompt \"Say hello to {{who}}\")",
    },
    FormDef {
        name: "task",
        analyse: super::deftask::task,
        synopsis: "(task (param (param default)…) :option value… body…)",
        description: "an anonymous task: deftask's options, registered nowhere; its templates also see the bindings where it was made",
        example: "(define (labeler label) (task (text) :prompt \"{{label}}: {{text}}\"))",
    },
    FormDef {
        name: "sequential",
        analyse: super::sequential::sequential,
        synopsis: "(sequential step…)",
        description: "steps see step_results",
        example: "(deftask flow (x) (sequential (step draft) (step polish)))",
    },
    FormDef {
        name: "step",
        analyse: super::sequential::step,
        synopsis: "(step task :inputs-from [i \"name\"] :input builder)",
        description: "inside sequential",
        example: "(step polish :inputs-from [0 \"text\"])",
    },
    FormDef {
        name: "cond-output",
        analyse: super::cond_output::cond_output,
        synopsis: "(cond-output result (test body…)… (else body…))",
        description: "binds output",
        example: "(cond-output (classify x) ((= output \"bug\") (fix x)) (else nil))",
    },
    FormDef {
        name: "with-provider",
        analyse: with_provider,
        synopsis: "(with-provider provider :temperature t … body…)",
        description: "",
        example: "(with-provider :echo :temperature 0 (greet \"Ada\"))",
    },
    FormDef {
        name: "with-fallback",
        analyse: with_fallback,
        synopsis: "(with-fallback [provider…] body…)",
        description: "the next provider when one fails",
        example: "(with-fallback [:openai :echo] (greet \"Ada\"))",
    },
    FormDef {
        name: "with-budget",
        analyse: super::scopes::with_budget,
        synopsis: "(with-budget {\"usd\" u \"tokens\" t \"calls\" n} body…)",
        description: "model calls past a limit fail",
        example: "(with-budget {\"calls\" 2} (+ 1 2)) ⇒ 3",
    },
    FormDef {
        name: "with-cache",
        analyse: super::scopes::with_cache,
        synopsis: "(with-cache body…)",
        description: "the body's model calls answered from the run log when asked before",
        example: "(with-cache (+ 1 2)) ⇒ 3",
    },
];

/// `(with-provider p :temperature 0 … body…)`: the body runs in a provider session of
/// its own, with the model options given (over those of enclosing blocks); the previous
/// session comes back afterwards, also on error.
struct WithProvider {
    provider: Node,
    options: Vec<(&'static str, Node)>,
    body: Node,
    span: Span,
}

fn with_provider(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let provider = items.get(1).ok_or_else(|| {
        Error::syntax("bad syntax: expected (with-provider provider body…)", span)
    })?;
    let provider = compiler.compile(provider)?;
    let mut body = items.get(2..).unwrap_or_default();
    let mut options = Vec::new();
    while let [first, value, rest @ ..] = body {
        let SyntaxKind::Keyword(keyword) = first.kind else {
            break;
        };
        let name = model_options::canonical(keyword.name()).ok_or_else(|| {
            Error::syntax(
                format!(
                    "with-provider: unknown option :{keyword} (model options: {})",
                    model_options::NAMES.join(", ")
                ),
                first.span,
            )
        })?;
        options.push((name, compiler.compile(value)?));
        body = rest;
    }
    let body = compile_body(compiler, body)?;
    Ok(Node::Extension(Box::new(WithProvider {
        provider,
        options,
        body,
        span,
    })))
}

/// `(with-fallback [p1 p2 …] body…)`: the body runs in a session whose requests go to
/// `p1`, and to the next provider when one fails transiently.
struct WithFallback {
    providers: Node,
    body: Node,
    span: Span,
}

fn with_fallback(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let providers = items.get(1).ok_or_else(|| {
        Error::syntax(
            "bad syntax: expected (with-fallback [provider…] body…)",
            span,
        )
    })?;
    Ok(Node::Extension(Box::new(WithFallback {
        providers: compiler.compile(providers)?,
        body: compile_body(compiler, items.get(2..).unwrap_or_default())?,
        span,
    })))
}

impl Extension for WithFallback {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let providers = interp.eval(&self.providers, env)?;
        let chain = providers
            .as_list()
            .filter(|list| !list.is_empty())
            .ok_or_else(|| {
                Error::eval("with-fallback: expected a non-empty list of providers")
                    .with_span(self.span)
            })?
            .iter()
            .map(|p| {
                ProviderChoice::from_value(&p, &interp.limits.capabilities)
                    .map_err(|e| e.with_span(self.span))
            })
            .collect::<Result<Vec<_>>>()?;
        let previous =
            interp.set_provider(ProviderChoice::Fallback(chain), interp.metrics().fresh());
        let result = interp.eval(&self.body, env);
        interp.swap_session(previous);
        result
    }
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
        let mut scope = ModelOptions::default();
        for (name, node) in &self.options {
            scope
                .set(name, to_json(&interp.eval(node, env)?)?)
                .map_err(|e| Error::eval(format!("with-provider: {e}")).with_span(self.span))?;
        }
        let scope = scope.over(&interp.scope_options());
        let previous = interp.set_provider(provider, interp.metrics().fresh());
        interp.set_scope_options(scope);
        let result = interp.eval(&self.body, env);
        interp.swap_session(previous);
        result
    }
}
