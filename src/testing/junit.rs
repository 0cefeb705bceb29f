//! `--junit FILE`: the results as JUnit XML, the shape CI servers read (the common
//! `junit.xsd`): `testsuites` > `testsuite` per file > `testcase` per test, with a
//! `failure` (a check failed) or an `error` (the test ended with an error) and the
//! test's `system-out`.

use super::report::Outcome;
use quick_xml::escape::escape;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

pub fn report(outcomes: &[Outcome]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total: Duration = outcomes.iter().map(|o| o.duration).sum();
    let (failures, errors) = counts(outcomes.iter());
    let _ = writeln!(
        xml,
        "<testsuites name=\"tasklisp test\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">",
        outcomes.len(),
        seconds(total)
    );
    let mut files: Vec<&PathBuf> = outcomes.iter().map(|o| &o.file).collect();
    files.dedup();
    for file in files {
        let cases: Vec<&Outcome> = outcomes.iter().filter(|o| &o.file == file).collect();
        suite(&mut xml, &file.display().to_string(), &cases);
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn suite(xml: &mut String, name: &str, cases: &[&Outcome]) {
    let (failures, errors) = counts(cases.iter().copied());
    let time: Duration = cases.iter().map(|o| o.duration).sum();
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{}\">",
        text(name),
        cases.len(),
        seconds(time)
    );
    for case in cases {
        testcase(xml, name, case);
    }
    xml.push_str("  </testsuite>\n");
}

fn testcase(xml: &mut String, suite: &str, case: &Outcome) {
    let test = if case.name.is_empty() {
        suite
    } else {
        &case.name
    };
    let name = match &case.model {
        Some(model) => format!("{test} [{model}]"),
        None => test.to_owned(),
    };
    let _ = write!(
        xml,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        text(&name),
        text(suite),
        seconds(case.duration)
    );
    if case.passed() && case.output.is_empty() {
        xml.push_str("/>\n");
        return;
    }
    xml.push_str(">\n");
    if !case.passed() {
        let (element, kind, message) = match (&case.error, case.failed_checks().next()) {
            (Some(error), _) => ("error", error.kind().code().to_owned(), error.to_string()),
            (None, Some(check)) => (
                "failure",
                check.form.to_owned(),
                format!("{} failed at {}", check.form, check.place()),
            ),
            (None, None) => ("failure", String::new(), String::new()),
        };
        let _ = writeln!(
            xml,
            "      <{element} message=\"{}\" type=\"{}\">{}</{element}>",
            text(&message),
            text(&kind),
            text(&case.failure_text())
        );
    }
    if !case.output.is_empty() {
        let _ = writeln!(xml, "      <system-out>{}</system-out>", text(&case.output));
    }
    xml.push_str("    </testcase>\n");
}

/// (tests failed by a check, tests ended by an error).
fn counts<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> (usize, usize) {
    outcomes
        .filter(|o| !o.passed())
        .fold((0, 0), |(failures, errors), o| match o.error {
            Some(_) => (failures, errors + 1),
            None => (failures + 1, errors),
        })
}

fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// Text escaped for XML, without the control characters XML 1.0 cannot hold at all.
fn text(raw: &str) -> String {
    let allowed: String = raw
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'))
        .collect();
    escape(allowed.as_str()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::path::Path;

    #[test]
    fn names_and_text_are_escaped_and_control_characters_dropped() {
        assert_eq!(text("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\n");
    }

    #[test]
    fn a_suite_per_file_counts_failures_and_errors_apart() {
        let ok = Outcome::new(Path::new("a.sexp"), "ok", Vec::new(), None);
        let broken = Outcome::new(
            Path::new("a.sexp"),
            "boom",
            Vec::new(),
            Some(Error::eval("boom")),
        );
        let mut printed = Outcome::new(Path::new("b.sexp"), "p", Vec::new(), None);
        printed.output = "hi".into();
        let xml = report(&[ok, broken, printed]);
        assert!(xml.contains(
            "<testsuites name=\"tasklisp test\" tests=\"3\" failures=\"0\" errors=\"1\""
        ));
        assert!(xml.contains("<testsuite name=\"a.sexp\" tests=\"2\" failures=\"0\" errors=\"1\""));
        assert!(xml.contains("<error message=\"boom\" type=\"EVAL_ERROR\">"));
        assert!(xml.contains("<system-out>hi</system-out>"));
    }
}
