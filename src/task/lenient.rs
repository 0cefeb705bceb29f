//! Lenient parsing of a model's JSON answer.
//!
//! The answer is parsed strictly first. When that fails, the repairs are tried in a fixed
//! order and each one applied is named (`notes.repairs`): `code fence`, `surrounding
//! text`, then the dialect repairs of [`dialect`] (`trailing comma`, `comments`,
//! `single quotes`, `unquoted keys`, `python literals`). Output cut off mid-value is never
//! completed: it fails with a message saying the answer looks truncated.
//!
//! Every step is one linear scan with a bounded number of restarts, so no answer can make
//! parsing quadratic, and nothing recurses on the input (serde_json bounds its own depth).

mod dialect;

use serde_json::Value as Json;

/// A parsed answer and the repairs it needed, in the order they were applied.
#[derive(Debug, PartialEq)]
pub struct Parsed {
    pub value: Json,
    pub repairs: Vec<&'static str>,
}

/// Why an answer is not JSON.
#[derive(Debug, PartialEq)]
pub struct ParseFailure {
    pub message: String,
    pub truncated: bool,
}

/// How many `{`/`[` positions are tried as the start of the JSON inside prose.
const MAX_CANDIDATES: usize = 16;

/// Parses `text` as JSON, with the repairs unless `strict`.
pub fn parse(text: &str, strict: bool) -> Result<Parsed, ParseFailure> {
    let strict_error = match serde_json::from_str::<Json>(text) {
        Ok(value) => return Ok(Parsed::clean(value)),
        Err(e) => e,
    };
    if strict {
        return Err(ParseFailure::from_serde(&strict_error));
    }
    let mut repairs = Vec::new();
    let mut candidate = text;
    if let Some(inner) = fenced(candidate) {
        repairs.push("code fence");
        candidate = inner;
        if let Ok(value) = serde_json::from_str(candidate) {
            return Ok(Parsed { value, repairs });
        }
    }
    match find_value(candidate) {
        Found::Whole | Found::Nothing => {}
        Found::Inside(inner) => {
            repairs.push("surrounding text");
            candidate = inner;
            if let Ok(value) = serde_json::from_str(candidate) {
                return Ok(Parsed { value, repairs });
            }
        }
        Found::Several => {
            return Err(ParseFailure {
                message: "the answer holds more than one JSON value".into(),
                truncated: false,
            })
        }
        Found::Truncated => return Err(ParseFailure::truncated()),
    }
    let (normalized, dialect_repairs) = dialect::normalize(candidate);
    match serde_json::from_str(&normalized) {
        Ok(value) if !dialect_repairs.is_empty() => {
            repairs.extend(dialect_repairs);
            Ok(Parsed { value, repairs })
        }
        Ok(value) => Ok(Parsed { value, repairs }),
        Err(e) if candidate.len() == text.len() => {
            Err(ParseFailure::from_serde_or(&e, &strict_error))
        }
        Err(e) => Err(ParseFailure::from_serde(&e)),
    }
}

impl Parsed {
    fn clean(value: Json) -> Parsed {
        Parsed {
            value,
            repairs: Vec::new(),
        }
    }
}

impl ParseFailure {
    fn truncated() -> ParseFailure {
        ParseFailure {
            message: "the answer looks truncated: it ends inside a JSON value".into(),
            truncated: true,
        }
    }

    fn from_serde(error: &serde_json::Error) -> ParseFailure {
        if error.classify() == serde_json::error::Category::Eof {
            return ParseFailure {
                message: format!("the answer looks truncated: {error}"),
                truncated: true,
            };
        }
        ParseFailure {
            message: error.to_string(),
            truncated: false,
        }
    }

    /// The repaired text's error when it says the text is cut off, else the original's
    /// (it points at the text the model wrote, not at our rewrite of it).
    fn from_serde_or(repaired: &serde_json::Error, original: &serde_json::Error) -> ParseFailure {
        if repaired.classify() == serde_json::error::Category::Eof {
            ParseFailure::from_serde(repaired)
        } else {
            ParseFailure::from_serde(original)
        }
    }
}

/// The inside of the first Markdown code fence (``` or ~~~, any info string); an
/// unclosed fence runs to the end of the text.
fn fenced(text: &str) -> Option<&str> {
    let (start, fence) = ["```", "~~~"]
        .iter()
        .filter_map(|fence| text.find(fence).map(|at| (at, *fence)))
        .min_by_key(|(at, _)| *at)?;
    let after = &text[start + fence.len()..];
    let body = match after.find('\n') {
        Some(newline) if !after[..newline].contains(fence) => &after[newline + 1..],
        // A fence on one line: ```{"a": 1}```
        _ => after,
    };
    Some(match body.find(fence) {
        Some(end) => &body[..end],
        None => body,
    })
}

enum Found<'a> {
    /// The text is one value (perhaps with whitespace around it).
    Whole,
    /// The first complete value inside other text.
    Inside(&'a str),
    /// A value followed by another complete value.
    Several,
    /// A value starts but the text ends before it does.
    Truncated,
    /// No `{` or `[` at all.
    Nothing,
}

/// The first complete JSON object or array in `text`, by bracket matching that knows
/// strings (both quote kinds) and comments.
fn find_value(text: &str) -> Found<'_> {
    let mut ran_out = false;
    let starts = text
        .char_indices()
        .filter(|(_, c)| matches!(c, '{' | '['))
        .map(|(i, _)| i)
        .take(MAX_CANDIDATES);
    for start in starts {
        let Some(len) = dialect::balanced_len(&text[start..]) else {
            ran_out = true;
            continue;
        };
        let end = start + len;
        let value = &text[start..end];
        if !parses(value) {
            continue;
        }
        if text[..start].trim().is_empty() && text[end..].trim().is_empty() {
            return Found::Whole;
        }
        if another_value_follows(&text[end..]) {
            return Found::Several;
        }
        return Found::Inside(value);
    }
    if ran_out {
        Found::Truncated
    } else {
        Found::Nothing
    }
}

/// Whether the text after a value starts another value (`{…} {…}`), as opposed to prose.
fn another_value_follows(rest: &str) -> bool {
    let rest = rest.trim_start();
    if !rest.starts_with(['{', '[']) {
        return false;
    }
    dialect::balanced_len(rest).is_some_and(|len| parses(&rest[..len]))
}

fn parses(text: &str) -> bool {
    serde_json::from_str::<Json>(text).is_ok()
        || serde_json::from_str::<Json>(&dialect::normalize(text).0).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lenient(text: &str) -> (Json, Vec<&'static str>) {
        let parsed = parse(text, false).unwrap_or_else(|e| panic!("{text}: {}", e.message));
        (parsed.value, parsed.repairs)
    }

    #[test]
    fn valid_json_needs_no_repair() {
        assert_eq!(lenient(" {\"a\": 1} "), (json!({"a": 1}), vec![]));
        assert_eq!(lenient("42"), (json!(42), vec![]));
    }

    #[test]
    fn each_repair_is_named() {
        let fence = "```json\n{\"a\": 1}\n```";
        assert_eq!(lenient(fence), (json!({"a": 1}), vec!["code fence"]));
        let prose = "Sure! Here it is: {\"label\": \"bug\"} Hope this helps.";
        assert_eq!(
            lenient(prose),
            (json!({"label": "bug"}), vec!["surrounding text"])
        );
        assert_eq!(
            lenient("Sure! {\"label\": \"bug\",}"),
            (
                json!({"label": "bug"}),
                vec!["surrounding text", "trailing comma"]
            )
        );
        assert_eq!(
            lenient("{\"a\": 1 // one\n, /* two */ \"b\": 2}"),
            (json!({"a": 1, "b": 2}), vec!["comments"])
        );
        assert_eq!(
            lenient("{'a': 'it\\'s \"x\"'}"),
            (json!({"a": "it's \"x\""}), vec!["single quotes"])
        );
        assert_eq!(
            lenient("{a: 1, b_2: [True, False, None]}"),
            (
                json!({"a": 1, "b_2": [true, false, null]}),
                vec!["unquoted keys", "python literals"]
            )
        );
    }

    #[test]
    fn prose_with_braces_before_the_value_is_skipped() {
        let (value, repairs) = lenient("Use {braces} wisely. {\"a\": [1]}");
        assert_eq!(value, json!({"a": [1]}));
        assert_eq!(repairs, vec!["surrounding text"]);
    }

    #[test]
    fn truncated_answers_are_not_completed() {
        for text in [
            "{\"a\": [1, 2",
            "Sure! {\"a\": \"hel",
            "```json\n{\"a\": 1",
            "[1, 2,",
        ] {
            let failure = parse(text, false).expect_err(text);
            assert!(failure.truncated, "{text}: {}", failure.message);
            assert!(failure.message.contains("truncated"), "{}", failure.message);
        }
    }

    #[test]
    fn two_values_and_prose_are_failures() {
        let two = parse("{\"a\": 1}\n{\"b\": 2}", false).expect_err("two values");
        assert!(two.message.contains("more than one"), "{}", two.message);
        let prose = parse("I cannot answer that.", false).expect_err("prose");
        assert!(!prose.truncated);
        assert!(
            prose.message.contains("expected value"),
            "{}",
            prose.message
        );
    }

    #[test]
    fn strict_mode_repairs_nothing() {
        let failure = parse("```json\n{\"a\": 1}\n```", true).expect_err("fenced");
        assert!(
            failure.message.contains("expected value"),
            "{}",
            failure.message
        );
        assert!(parse("{\"a\": ", true).expect_err("cut").truncated);
    }
}
