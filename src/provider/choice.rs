//! `:choice`: an answer that must be exactly one of a list of strings, in the forms
//! servers take it — a JSON Schema (an object whose one property is an enum, as
//! structured output and tool inputs must be objects), or a GBNF grammar (llama.cpp's
//! server) — and the answer read back out of the JSON form.

use serde_json::{json, Value as Json};

/// The property of `choice_schema`'s object that holds the answer.
const PROPERTY: &str = "choice";

/// `{"type": "object", "properties": {"choice": {"type": "string", "enum": […]}}, …}`:
/// strict (closed, every property required), so OpenAI takes it as strict output.
pub fn choice_schema(choices: &[String]) -> Json {
    json!({
        "type": "object",
        "properties": {PROPERTY: {"type": "string", "enum": choices}},
        "required": [PROPERTY],
        "additionalProperties": false,
    })
}

/// The answer inside an answer to `choice_schema` (`{"choice": "a"}`, or a bare JSON
/// string); any other text is the answer as it is.
pub fn chosen(content: &str) -> String {
    match serde_json::from_str::<Json>(content.trim()) {
        Ok(Json::Object(map)) => match map.get(PROPERTY) {
            Some(Json::String(choice)) => choice.clone(),
            _ => content.to_owned(),
        },
        Ok(Json::String(choice)) => choice,
        _ => content.to_owned(),
    }
}

/// A GBNF grammar whose only sentences are the choices: `root ::= "a" | "b"`.
pub fn choice_grammar(choices: &[String]) -> String {
    let alternatives: Vec<String> = choices.iter().map(|c| gbnf_literal(c)).collect();
    format!("root ::= {}", alternatives.join(" | "))
}

/// A GBNF string literal: `"`, `\` and control characters escaped.
fn gbnf_literal(text: &str) -> String {
    let mut literal = String::with_capacity(text.len() + 2);
    literal.push('"');
    for c in text.chars() {
        match c {
            '"' => literal.push_str("\\\""),
            '\\' => literal.push_str("\\\\"),
            '\n' => literal.push_str("\\n"),
            '\r' => literal.push_str("\\r"),
            '\t' => literal.push_str("\\t"),
            c if c.is_control() => literal.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => literal.push(c),
        }
    }
    literal.push('"');
    literal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_grammar_escapes_quotes_backslashes_and_controls() {
        assert_eq!(
            choice_grammar(&strings(&["yes", "say \"no\"", "a\\b\nc\u{1}"])),
            r#"root ::= "yes" | "say \"no\"" | "a\\b\nc\u0001""#
        );
    }

    #[test]
    fn the_answer_is_read_out_of_its_json_forms() {
        assert_eq!(chosen(r#"{"choice": "neutral"}"#), "neutral");
        assert_eq!(chosen(r#" "positive" "#), "positive");
        assert_eq!(chosen("negative"), "negative");
        assert_eq!(chosen(r#"{"other": 1}"#), r#"{"other": 1}"#);
        assert!(crate::provider::openai::structured::is_strict(
            &choice_schema(&strings(&["a"]))
        ));
    }
}
