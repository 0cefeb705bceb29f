//! `tasklisp test --html FILE`: the results as one self-contained HTML page (its style
//! inline, no script, nothing fetched): the test × model table with each cell's
//! tokens, cost and time, a failure's cell opening (`<details>`) on its checks — the
//! expression, what was expected, what came — the error that ended it and the model's
//! answers.

use super::check::Check;
use super::compare::{cost_text, grid, latency_text, totals};
use super::report::{error_text, Outcome};
use quick_xml::escape::escape;
use std::fmt::Write;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.4em .6em;vertical-align:top;text-align:left}
thead th{background:#f3f3f3}td.pass{background:#eaf7ea}td.fail{background:#fbeaea}
.verdict{font-weight:bold}.metrics{color:#555;font-size:.85em;display:block}
summary{cursor:pointer}pre{white-space:pre-wrap;margin:.2em 0;max-width:60em;background:#fff;padding:.3em;border:1px solid #eee}
dt{font-weight:bold;margin-top:.4em}dd{margin-left:1em}tfoot th,tfoot td{font-weight:bold}";

pub fn report(outcomes: &[Outcome], labels: &[Option<String>]) -> String {
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let summary = format!("{} passed, {failed} failed", outcomes.len() - failed);
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>tasklisp test: {summary}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n\
         <h1>tasklisp test</h1>\n<p id=\"summary\">{summary}</p>\n<table id=\"results\">\n<thead><tr><th>test</th>"
    );
    for label in labels {
        let heading = label.as_deref().unwrap_or("result");
        let _ = write!(html, "<th>{}</th>", text(heading));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for (test, cells) in grid(outcomes, labels) {
        let _ = write!(html, "<tr><th scope=\"row\">{}</th>", text(&test));
        for outcome in cells {
            cell(&mut html, outcome);
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n<tfoot><tr><th>total</th>");
    for label in labels {
        let sums = totals(outcomes.iter().filter(|o| &o.model == label));
        let _ = write!(
            html,
            "<td>{} passed, {} failed<span class=\"metrics\">{}</span></td>",
            sums.passed,
            sums.failed,
            metrics(
                sums.input_tokens.saturating_add(sums.output_tokens),
                sums.cost,
                sums.duration
            )
        );
    }
    html.push_str("</tr></tfoot>\n</table>\n</body>\n</html>\n");
    html
}

fn metrics(tokens: u64, cost: Option<f64>, duration: std::time::Duration) -> String {
    format!(
        "{tokens} tok · {} · {}",
        cost_text(cost),
        latency_text(duration)
    )
}

/// A passing cell shows its numbers; a failing one opens on why it failed.
fn cell(html: &mut String, outcome: Option<&Outcome>) {
    let Some(o) = outcome else {
        html.push_str("<td>not run</td>");
        return;
    };
    let numbers = metrics(
        o.spent.input_tokens.saturating_add(o.spent.output_tokens),
        o.cost,
        o.duration,
    );
    let verdict = |word: &str| {
        format!("<span class=\"verdict\">{word}</span><span class=\"metrics\">{numbers}</span>")
    };
    if o.passed() {
        let _ = write!(html, "<td class=\"pass\">{}</td>", verdict("ok"));
        return;
    }
    let _ = write!(
        html,
        "<td class=\"fail\"><details><summary>{}</summary>",
        verdict("FAILED")
    );
    for check in o.failed_checks() {
        failed_check(html, check);
    }
    if let Some(error) = &o.error {
        let _ = write!(
            html,
            "<dl><dt>error</dt><dd><pre>{}</pre></dd></dl>",
            text(&error_text(error))
        );
    }
    for (i, answer) in o.answers.iter().enumerate() {
        let n = if o.answers.len() > 1 {
            format!(" {}", i + 1)
        } else {
            String::new()
        };
        let _ = write!(
            html,
            "<dl class=\"answer\"><dt>the model's answer{n}</dt><dd><pre>{}</pre></dd></dl>",
            text(answer)
        );
    }
    if !o.output.is_empty() {
        let _ = write!(
            html,
            "<dl><dt>output</dt><dd><pre>{}</pre></dd></dl>",
            text(&o.output)
        );
    }
    html.push_str("</details></td>");
}

fn failed_check(html: &mut String, check: &Check) {
    let _ = write!(
        html,
        "<dl class=\"check\"><dt>{} failed at {}</dt><dd><pre class=\"expression\">{}</pre></dd>\
         <dt>expected</dt><dd><pre class=\"expected\">{}</pre></dd>\
         <dt>actual</dt><dd><pre class=\"actual\">{}</pre></dd>",
        text(check.form),
        text(&check.place()),
        text(&check.expression),
        text(&check.expected),
        text(&check.actual)
    );
    if let Some(judge) = &check.judge {
        let _ = write!(html, "<dt>judge</dt><dd><pre>{}</pre></dd>", text(judge));
    }
    html.push_str("</dl>");
}

fn text(raw: &str) -> std::borrow::Cow<'_, str> {
    escape(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::source::Span;
    use std::path::Path;

    #[test]
    fn a_failure_opens_on_its_check_error_and_answers_all_escaped() {
        let mut failing = Outcome::new(
            Path::new("a.sexp"),
            "t<1>",
            vec![Check {
                form: "expect=",
                span: Span::generated(),
                expression: "(expect= (f) \"<b>\")".into(),
                passed: false,
                expected: "\"<b>\"".into(),
                actual: "\"&\"".into(),
                judge: None,
            }],
            Some(Error::eval("boom")),
        );
        failing.model = Some("m&1".into());
        failing.answers = vec!["<script>x</script>".into()];
        let page = report(&[failing], &[Some("m&1".into())]);
        assert!(page.contains("<th>m&amp;1</th>"), "{page}");
        assert!(page.contains("<th scope=\"row\">a.sexp::t&lt;1&gt;</th>"));
        assert!(
            page.contains("<pre class=\"expression\">(expect= (f) &quot;&lt;b&gt;&quot;)</pre>")
        );
        assert!(page.contains("<pre class=\"actual\">&quot;&amp;&quot;</pre>"));
        assert!(page.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(page.contains("error: "));
        assert!(!page.contains("<script"));
        assert!(!page.contains("http"), "nothing fetched");
    }
}
