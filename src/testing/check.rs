//! One recorded check: what an `expect…` form saw, and how a failure reads.

use crate::error::{Error, Reason};
use crate::source::{line_col, source, Span};
use serde_json::json;

#[derive(Clone, Debug)]
pub struct Check {
    /// The form: `expect`, `expect=`, `expect-error`, `expect-schema`, `expect-judge`.
    pub form: &'static str,
    pub span: Span,
    /// The form as written.
    pub expression: String,
    pub passed: bool,
    pub expected: String,
    pub actual: String,
    /// For `expect-judge`: the judge's reason (or its answer when that was no verdict).
    pub judge: Option<String>,
}

impl Check {
    /// `file:line:col` of the form, when it has a source.
    pub fn place(&self) -> String {
        place(self.span)
    }

    /// The failure as indented lines: place, expression, expected, actual, judge.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} failed at {}\n  {}\n  expected: {}\n  actual:   {}",
            self.form,
            self.place(),
            self.expression,
            self.expected,
            self.actual
        );
        if let Some(judge) = &self.judge {
            text.push_str(&format!("\n  judge:    {judge}"));
        }
        text
    }

    /// A failed check outside a running test: an `EVAL_ERROR` / `expectation_failed`.
    pub fn to_error(&self) -> Error {
        Error::eval(self.describe())
            .with_reason(Reason::ExpectationFailed)
            .with_details(json!({
                "expression": self.expression,
                "expected": self.expected,
                "actual": self.actual,
                "judge": self.judge,
            }))
            .with_span(self.span)
    }
}

/// For an error from a provider, the request it was about (a cassette miss names
/// the request it had no answer for), as a line to add to a report.
pub fn request_note(error: &Error) -> String {
    match error.details().get("request") {
        Some(request) => format!("\n  request: {request}"),
        None => String::new(),
    }
}

/// `file:line:col` of a span, or `?` for code without source (macro output).
pub fn place(span: Span) -> String {
    match source(span.source) {
        Some(file) => {
            let (line, col) = line_col(&file.text, span.start as usize);
            format!("{}:{line}:{col}", file.name)
        }
        None => "?".to_owned(),
    }
}

/// The text a span covers, when it has one.
pub fn span_text(span: Span) -> Option<String> {
    let file = source(span.source)?;
    file.text
        .get(span.start as usize..span.end())
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}
