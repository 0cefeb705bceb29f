//! The special forms `deftest`, `expect`, `expect=`, `expect-error`, `expect-schema`
//! and `expect-judge`. The `expect…` forms are special forms rather than procedures
//! because a failure shows the expression as written, and because an error raised by
//! an operand is what they check (or a failure they record), not the end of the test.

use super::check::{request_note, span_text, Check};
use super::TestDef;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::ast::Extension;
use crate::eval::layer::{FormDef, Layer};
use crate::eval::quote::syntax_to_value;
use crate::eval::{Compiler, Interp, Node};
use crate::reader::{Syntax, SyntaxKind};
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::lossy_json;
use crate::task::result::{field, is_task_result};
use crate::value::{write_string, Value};

/// The testing layer: `deftest` and the `expect…` forms.
pub static LAYER: Layer = Layer {
    name: "testing",
    builtins: &[],
    forms: FORMS,
    keeps_mark: None,
};

const FORMS: &[FormDef] = &[
    FormDef {
        name: "deftest",
        analyse: deftest,
        synopsis: "(deftest name body…)",
        description: "a test, run by `tasklisp test`",
        example: "(deftest adds (expect= (+ 1 2) 3))",
    },
    FormDef {
        name: "expect",
        analyse: |c, items, span| expect_form(c, items, span, Kind::Truthy),
        synopsis: "(expect expr)",
        description: "checks that expr is true",
        example: "(expect (> 2 1))",
    },
    FormDef {
        name: "expect=",
        analyse: |c, items, span| expect_form(c, items, span, Kind::Equal),
        synopsis: "(expect= actual expected)",
        description: "checks equality",
        example: "(expect= (+ 1 2) 3)",
    },
    FormDef {
        name: "expect-error",
        analyse: |c, items, span| expect_form(c, items, span, Kind::Error),
        synopsis: "(expect-error expr reason)",
        description: "checks expr raises",
        example: "(expect-error (car 5) :EVAL_ERROR)",
    },
    FormDef {
        name: "expect-schema",
        analyse: |c, items, span| expect_form(c, items, span, Kind::Schema),
        synopsis: "(expect-schema value schema)",
        description: "checks a JSON Schema",
        example: "(expect-schema {\"a\" 1} {\"type\" \"object\"})",
    },
    FormDef {
        name: "expect-judge",
        analyse: |c, items, span| expect_form(c, items, span, Kind::Judge),
        synopsis: "(expect-judge value \"rubric\")",
        description: "asks the judge model",
        example: "(expect-judge answer \"is polite\")",
    },
];

// ---- deftest ----------------------------------------------------------------------

/// `(deftest name body…)`: the body becomes a procedure of no arguments.
struct DefTest {
    name: String,
    body: Node,
    span: Span,
}

fn deftest(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    let bad = || Error::syntax("bad syntax: expected (deftest name body…)", span);
    let name = match items.get(1).map(|s| &s.kind) {
        Some(SyntaxKind::Symbol(name)) => name.name().to_owned(),
        Some(SyntaxKind::Str(name)) if !name.is_empty() => name.to_string(),
        _ => return Err(bad()),
    };
    let body = items.get(2..).unwrap_or_default();
    if body.is_empty() {
        return Err(bad());
    }
    let mut lambda = vec![
        Syntax::new(SyntaxKind::Symbol(Sym::new("lambda")), span),
        Syntax::new(SyntaxKind::List(Vec::new()), span),
    ];
    lambda.extend(body.iter().cloned());
    let body = compiler.compile(&Syntax::new(SyntaxKind::List(lambda), span))?;
    Ok(Node::Extension(Box::new(DefTest { name, body, span })))
}

impl Extension for DefTest {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let body = interp.eval(&self.body, env)?;
        super::Tests::of(interp)
            .define(TestDef {
                name: self.name.clone(),
                body,
            })
            .map_err(|e| e.with_span(self.span))?;
        Ok(Value::from(self.name.as_str()))
    }
}

// ---- the expect forms ---------------------------------------------------------------

#[derive(Clone, Copy)]
enum Kind {
    Truthy,
    Equal,
    Error,
    Schema,
    Judge,
}

impl Kind {
    fn form(self) -> &'static str {
        match self {
            Kind::Truthy => "expect",
            Kind::Equal => "expect=",
            Kind::Error => "expect-error",
            Kind::Schema => "expect-schema",
            Kind::Judge => "expect-judge",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Kind::Truthy => "(expect expr)",
            Kind::Equal => "(expect= actual expected)",
            Kind::Error => "(expect-error expr reason)",
            Kind::Schema => "(expect-schema value schema)",
            Kind::Judge => "(expect-judge value \"rubric\")",
        }
    }

    fn operands(self) -> usize {
        match self {
            Kind::Truthy => 1,
            _ => 2,
        }
    }
}

struct Expect {
    kind: Kind,
    operands: Vec<Node>,
    expression: String,
    span: Span,
}

fn expect_form(compiler: &mut Compiler, items: &[Syntax], span: Span, kind: Kind) -> Result<Node> {
    let operands = items.get(1..).unwrap_or_default();
    if operands.len() != kind.operands() {
        return Err(bad_syntax(kind, span));
    }
    let operands = operands
        .iter()
        .map(|s| compiler.compile(s))
        .collect::<Result<Vec<_>>>()?;
    let expression = span_text(span).unwrap_or_else(|| {
        write_string(&syntax_to_value(&Syntax::new(
            SyntaxKind::List(items.to_vec()),
            span,
        )))
    });
    Ok(Node::Extension(Box::new(Expect {
        kind,
        operands,
        expression,
        span,
    })))
}

fn bad_syntax(kind: Kind, span: Span) -> Error {
    Error::syntax(format!("bad syntax: expected {}", kind.usage()), span)
}

/// What evaluating an operand gave: a value, or an error the check sees.
type Outcome = std::result::Result<Value, Error>;

/// What a check concluded: passed, the expected and actual descriptions, the judge.
struct Verdict {
    passed: bool,
    expected: String,
    actual: String,
    judge: Option<String>,
}

impl Extension for Expect {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        // `expect_form` checked the count of operands for the kind.
        let verdict = match (self.kind, self.operands.as_slice()) {
            (Kind::Truthy, [value]) => truthy(attempt(interp, value, env)?),
            (Kind::Equal, [actual, expected]) => equal(
                attempt(interp, actual, env)?,
                attempt(interp, expected, env)?,
            ),
            (Kind::Error, [value, reason]) => {
                raises(attempt(interp, value, env)?, interp.eval(reason, env)?)?
            }
            (Kind::Schema, [value, schema]) => {
                matches_schema(attempt(interp, value, env)?, interp.eval(schema, env)?)
            }
            (Kind::Judge, [value, rubric]) => judged(
                interp,
                env,
                attempt(interp, value, env)?,
                interp.eval(rubric, env)?,
            )?,
            _ => return Err(bad_syntax(self.kind, self.span)),
        };
        super::Tests::of(interp).record(Check {
            form: self.kind.form(),
            span: self.span,
            expression: self.expression.clone(),
            passed: verdict.passed,
            expected: verdict.expected,
            actual: verdict.actual,
            judge: verdict.judge,
        })
    }
}

/// Evaluates an operand, catching its error for the check. What must end the program —
/// an interrupt, a timeout, `(exit n)` — is not caught.
fn attempt(interp: &Interp, node: &Node, env: &Env) -> Result<Outcome> {
    let depth = interp.depth();
    match interp.eval(node, env) {
        Ok(value) => Ok(Ok(value)),
        Err(e) if interp.interrupted() || e.exit_code().is_some() || is_timeout(&e) => Err(e),
        Err(e) => {
            // The frames the error unwound through are gone: restore the count.
            interp.set_depth(depth);
            Ok(Err(e))
        }
    }
}

fn is_timeout(error: &Error) -> bool {
    error.reason() == Some("execution_timeout") && error.details().is_empty()
}

fn show(outcome: &Outcome) -> String {
    match outcome {
        Ok(value) => write_string(value),
        Err(e) => format!("error {}", describe_error(e)),
    }
}

/// `TYPE reason: message`, as a failure line shows an error, and the request when a
/// provider failed.
fn describe_error(error: &Error) -> String {
    format!("{} {error}{}", error.kind().code(), request_note(error))
}

fn verdict(passed: bool, expected: String, actual: String) -> Verdict {
    Verdict {
        passed,
        expected,
        actual,
        judge: None,
    }
}

fn truthy(outcome: Outcome) -> Verdict {
    let passed = matches!(&outcome, Ok(v) if v.is_truthy());
    verdict(passed, "a true value".into(), show(&outcome))
}

fn equal(actual: Outcome, expected: Outcome) -> Verdict {
    let passed = matches!((&actual, &expected), (Ok(a), Ok(b)) if a.equal(b));
    verdict(passed, show(&expected), show(&actual))
}

/// Passes when the expression raised an error whose reason or type is `reason`
/// (`nil`: any error).
fn raises(outcome: Outcome, reason: Value) -> Result<Verdict> {
    let wanted = match &reason {
        Value::Nil => None,
        other => match other.name_text() {
            Some(name) => Some(name.to_owned()),
            None => {
                return Err(crate::builtins::type_error(
                    "expect-error",
                    "a reason (string or keyword) or nil",
                    other,
                ))
            }
        },
    };
    let passed = match (&outcome, &wanted) {
        (Err(_), None) => true,
        (Err(e), Some(wanted)) => {
            e.reason() == Some(wanted.as_str()) || e.kind().code() == wanted.as_str()
        }
        (Ok(_), _) => false,
    };
    let expected = match wanted {
        Some(reason) => format!("an error {reason}"),
        None => "an error".to_owned(),
    };
    let actual = match &outcome {
        Ok(value) => format!("no error, the value {}", write_string(value)),
        Err(_) => show(&outcome),
    };
    Ok(verdict(passed, expected, actual))
}

/// A TaskResult is checked by what its task parsed (or its text when it parsed nothing).
fn checked_data(value: &Value) -> Value {
    if !is_task_result(value) {
        return value.clone();
    }
    match field(value, "parsedContent") {
        Value::Nil => field(value, "content"),
        parsed => parsed,
    }
}

fn matches_schema(outcome: Outcome, schema: Value) -> Verdict {
    let expected = format!("a value matching {}", lossy_json(&schema));
    let value = match outcome {
        Ok(value) => value,
        Err(_) => return verdict(false, expected, show(&outcome)),
    };
    let data = checked_data(&value);
    let problem = crate::task::Schema::from_value(&schema)
        .and_then(|schema| schema.check(&lossy_json(&data)))
        .err();
    let actual = match &problem {
        None => write_string(&data),
        Some(e) => format!("{} ({})", write_string(&data), e.message()),
    };
    verdict(problem.is_none(), expected, actual)
}

fn judged(interp: &Interp, env: &Env, outcome: Outcome, rubric: Value) -> Result<Verdict> {
    let rubric = match &rubric {
        Value::Str(s) => s.to_string(),
        other => {
            return Err(crate::builtins::type_error(
                "expect-judge",
                "a rubric string",
                other,
            ))
        }
    };
    let value = match outcome {
        Ok(value) => checked_data(&value),
        Err(_) => return Ok(verdict(false, rubric, show(&outcome))),
    };
    let actual = write_string(&value);
    Ok(match super::judge::ask(interp, env, &value, &rubric) {
        Ok(answer) => Verdict {
            passed: answer.pass,
            expected: rubric,
            actual,
            judge: Some(answer.reason),
        },
        Err(e) if interp.interrupted() || is_timeout(&e) => return Err(e),
        Err(e) => Verdict {
            passed: false,
            expected: rubric,
            actual,
            judge: Some(format!("no verdict: {}", describe_error(&e))),
        },
    })
}
