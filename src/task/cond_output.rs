//! `(cond-output RESULT (test body…)… (else body…))`: `cond` over a result's JSON output,
//! bound to `output`.

use super::result::{field, is_task_result};
use crate::env::{Env, Scope};
use crate::error::{Error, Reason, Result};
use crate::eval::ast::{Extension, Let, LetKind};
use crate::eval::{Compiler, Interp, Node};
use crate::reader::Syntax;
use crate::source::Span;
use crate::symbol::well_known;
use crate::value::{from_json, Value};

/// Evaluates RESULT and turns it into the value `output` is bound to.
struct OutputOf(Node, Span);

impl Extension for OutputOf {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        output_of(&interp.eval(&self.0, env)?).map_err(|e| e.or_span(self.1))
    }
}

pub fn cond_output(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let result = items.get(1).ok_or_else(|| {
        Error::syntax(
            "bad syntax: expected (cond-output result (test body…)… (else body…))",
            span,
        )
    })?;
    let init = Node::Extension(Box::new(OutputOf(compiler.compile(result)?, result.span)));
    let scope = Scope::new(vec![*well_known::OUTPUT]);
    compiler.push_scope(scope.clone());
    // The clauses are `cond`'s own, even where a program redefined `cond`.
    let body = compiler.cond_clauses(items.get(2..).unwrap_or_default());
    compiler.pop_scope();
    Ok(Node::Let(Box::new(Let {
        kind: LetKind::Parallel,
        scope,
        inits: vec![(0, init)],
        body: body?,
    })))
}

/// A TaskResult's `parsedContent`, or its `content` parsed as JSON; a string parsed as
/// JSON; other data as it is. Text that is not JSON is `output_format_failure`.
pub fn output_of(result: &Value) -> Result<Value> {
    if is_task_result(result) {
        let parsed = field(result, "parsedContent");
        if !matches!(parsed, Value::Nil) {
            return Ok(parsed);
        }
        return match field(result, "content") {
            Value::Str(text) => parse_json(&text),
            other => Ok(other),
        };
    }
    match result {
        Value::Str(text) => parse_json(text),
        other => Ok(other.clone()),
    }
}

fn parse_json(text: &str) -> Result<Value> {
    super::lenient::parse(text, false)
        .map(|parsed| from_json(&parsed.value))
        .map_err(|e| {
            Error::task_failure(
                Reason::OutputFormatFailure,
                format!(
                    "cond-output needs JSON output, but the content does not parse ({}): {}",
                    e.message,
                    crate::value::truncate_text(text, 80)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::result::task_result;
    use crate::value::Entries;

    #[test]
    fn output_prefers_parsed_content_then_parses_text() {
        let parsed = task_result("t", "ignored".into(), Value::Int(3), Entries::new());
        assert!(matches!(output_of(&parsed).unwrap(), Value::Int(3)));
        let text = task_result("t", "[1, 2]".into(), Value::Nil, Entries::new());
        assert_eq!(
            output_of(&text).unwrap().as_list().map(|l| l.len()),
            Some(2)
        );
        let bad = task_result("t", "plain".into(), Value::Nil, Entries::new());
        assert_eq!(
            output_of(&bad).unwrap_err().reason(),
            Some("output_format_failure")
        );
        assert!(matches!(
            output_of(&Value::from("true")).unwrap(),
            Value::Bool(true)
        ));
        assert!(matches!(output_of(&Value::Int(1)).unwrap(), Value::Int(1)));
    }
}
