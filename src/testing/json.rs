//! `tasklisp test --json`: the results as one JSON document on stdout, in place of the
//! text (docs/TESTING.md shows its shape). A result per test and model, then each
//! model's totals.

use super::check::Check;
use super::compare::{totals, Totals};
use super::report::Outcome;
use serde_json::{json, Value as Json};

pub fn document(outcomes: &[Outcome], labels: &[Option<String>]) -> Json {
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    json!({
        "models": labels.iter().flatten().collect::<Vec<_>>(),
        "passed": outcomes.len() - failed,
        "failed": failed,
        "results": outcomes.iter().map(result).collect::<Vec<_>>(),
        "totals": labels
            .iter()
            .map(|label| column_totals(label, &totals(outcomes.iter().filter(|o| &o.model == label))))
            .collect::<Vec<_>>(),
    })
}

fn result(outcome: &Outcome) -> Json {
    json!({
        "test": outcome.test_id(),
        "file": outcome.file.display().to_string(),
        "name": outcome.name,
        "model": outcome.model,
        "passed": outcome.passed(),
        "checks": outcome.checks.iter().map(check).collect::<Vec<_>>(),
        "error": outcome.error.as_ref().map(crate::error::Error::to_json),
        "output": outcome.output,
        "answers": outcome.answers,
        "calls": outcome.spent.calls,
        "input_tokens": outcome.spent.input_tokens,
        "output_tokens": outcome.spent.output_tokens,
        "cost": outcome.cost,
        "duration_ms": milliseconds(outcome.duration),
    })
}

fn check(check: &Check) -> Json {
    json!({
        "form": check.form,
        "place": check.place(),
        "expression": check.expression,
        "passed": check.passed,
        "expected": check.expected,
        "actual": check.actual,
        "judge": check.judge,
    })
}

fn column_totals(label: &Option<String>, totals: &Totals) -> Json {
    json!({
        "model": label,
        "passed": totals.passed,
        "failed": totals.failed,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
        "cost": totals.cost,
        "duration_ms": milliseconds(totals.duration),
    })
}

fn milliseconds(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}
