//! Expressions written inside XML (`<arg>` text, `over`, `initial`, S-expression tests),
//! read with the language's own reader and pointed back into the XML file.

use super::text::Text;
use crate::error::{Error, Result};
use crate::eval::reader::{self, Syntax, SyntaxKind};

/// Expressions inside attributes and `<arg>` are small; deeper nesting is refused.
const MAX_EXPRESSION_DEPTH: usize = 256;

/// Reads `text` as exactly one expression; `what` names the place for messages.
pub fn read_one(text: &Text, what: &str) -> Result<Syntax> {
    let text = text.trim();
    if text.as_str().is_empty() {
        return Err(
            Error::validation(format!("{what} is empty; it needs an expression"))
                .with_span(text.span()),
        );
    }
    let mut forms = read_all(&text, what)?.into_iter();
    let (Some(form), None) = (forms.next(), forms.next()) else {
        return Err(Error::validation(format!(
            "{what} holds more than one expression (write a string as \"…\")"
        ))
        .with_span(text.span()));
    };
    Ok(form)
}

/// Reads `text` as one JSON value (`<extra_body>`), as the expression that makes it: an
/// object a map, an array a vector. (serde_json bounds the nesting at 128.)
pub fn read_json(text: &Text, what: &str) -> Result<Syntax> {
    let text = text.trim();
    let json: serde_json::Value = serde_json::from_str(text.as_str()).map_err(|e| {
        Error::validation(format!("{what} must hold JSON: {e}")).with_span(text.span())
    })?;
    Ok(json_syntax(&json, text.span()))
}

fn json_syntax(json: &serde_json::Value, span: crate::source::Span) -> Syntax {
    use serde_json::Value as Json;
    let kind = match json {
        Json::Null => SyntaxKind::Nil,
        Json::Bool(b) => SyntaxKind::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => SyntaxKind::Int(i),
            None => SyntaxKind::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => SyntaxKind::Str(std::rc::Rc::new(s.clone())),
        Json::Array(items) => {
            SyntaxKind::Vector(items.iter().map(|i| json_syntax(i, span)).collect())
        }
        Json::Object(map) => SyntaxKind::Map(
            map.iter()
                .flat_map(|(k, v)| {
                    [
                        json_syntax(&Json::String(k.clone()), span),
                        json_syntax(v, span),
                    ]
                })
                .collect(),
        ),
    };
    Syntax::new(kind, span)
}

/// Reads `text` as any number of expressions (`<code>`).
pub fn read_all(text: &Text, what: &str) -> Result<Vec<Syntax>> {
    let text = text.trim();
    let forms = reader::read_all(text.as_str(), text.source()).map_err(|e| {
        let span = e
            .span()
            .map_or_else(|| text.span(), |s| text.span_of(s.start as usize, s.end()));
        Error::validation(format!("invalid expression in {what}: {}", e.message())).with_span(span)
    })?;
    forms
        .into_iter()
        .map(|form| relocate(form, &text, 0))
        .collect()
}

/// Moves the spans of syntax read from `text` (offsets into its decoded value) to the
/// XML source.
fn relocate(syntax: Syntax, text: &Text, depth: usize) -> Result<Syntax> {
    let span = text.span_of(syntax.span.start as usize, syntax.span.end());
    if depth > MAX_EXPRESSION_DEPTH {
        return Err(Error::validation(format!(
            "expression nested deeper than {MAX_EXPRESSION_DEPTH} levels"
        ))
        .with_span(span));
    }
    let relocate_all = |items: Vec<Syntax>| -> Result<Vec<Syntax>> {
        items
            .into_iter()
            .map(|item| relocate(item, text, depth + 1))
            .collect()
    };
    let kind = match syntax.kind {
        SyntaxKind::List(items) => SyntaxKind::List(relocate_all(items)?),
        SyntaxKind::Vector(items) => SyntaxKind::Vector(relocate_all(items)?),
        SyntaxKind::Map(items) => SyntaxKind::Map(relocate_all(items)?),
        other => other,
    };
    Ok(Syntax::new(kind, span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::source::add_source;

    fn text_at(source_text: &str, start: usize, end: usize) -> Text {
        let id = add_source("<expr-test>", source_text);
        let mut text = Text::empty(id, start);
        text.push_raw(&source_text[start..end], start, false)
            .unwrap();
        text
    }

    #[test]
    fn reads_one_expression_with_spans_in_the_file() {
        let src = "<arg> (f step_results[0].x) </arg>";
        let syntax = read_one(&text_at(src, 5, 28), "<arg>").unwrap();
        let items = syntax.as_list().unwrap();
        assert_eq!(items[1].span.start, 9);
        assert!(matches!(items[1].kind, SyntaxKind::Path(_)));
    }

    #[test]
    fn errors_point_into_the_file() {
        let src = "<arg>(f \"x</arg>";
        let e = read_one(&text_at(src, 5, 10), "<arg>").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert_eq!(e.span().unwrap().start, 8);
        assert!(read_one(&text_at("<arg>a b</arg>", 5, 8), "<arg>").is_err());
        assert!(read_one(&text_at("<arg> </arg>", 5, 6), "<arg>").is_err());
    }

    #[test]
    fn deep_expressions_are_refused() {
        let src = format!("{}{}", "(".repeat(1000), ")".repeat(1000));
        let e = read_one(&text_at(&src, 0, src.len()), "test").unwrap_err();
        assert!(e.message().contains("deeper"), "{}", e.message());
    }
}
