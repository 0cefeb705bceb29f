//! Well-formed XML to a tree of elements that carry spans into the source.
//!
//! quick-xml tokenises; this module builds the tree without recursion, decodes character
//! data itself (so offsets survive entity references, see `text.rs`), and refuses what a
//! template file never needs and an attacker would use: a DOCTYPE (external entities,
//! entity expansion bombs), entities other than the five predefined ones, and nesting
//! deeper than `MAX_DEPTH`.

use super::text::Text;
use crate::error::{Error, ErrorKind, Result};
use crate::source::{SourceId, Span};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Elements nested deeper than this are refused (templates need a handful of levels).
pub const MAX_DEPTH: usize = 64;

#[derive(Debug)]
pub struct Element {
    pub name: String,
    /// The start tag, from `<` to `>`.
    pub span: Span,
    pub attributes: Vec<Attribute>,
    pub children: Vec<Element>,
    /// The character data directly inside the element (between its children too).
    pub text: Text,
}

#[derive(Debug)]
pub struct Attribute {
    pub name: String,
    pub name_span: Span,
    pub value: Text,
}

impl Element {
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// True when the element holds nothing but whitespace between its children.
    pub fn has_text(&self) -> bool {
        !self.text.as_str().trim().is_empty()
    }
}

fn parse_error(message: impl Into<String>, span: Span) -> Error {
    Error::new(ErrorKind::XmlParse, message).with_span(span)
}

#[cfg(test)]
/// Parses `text` (registered as `source`) to its root element.
pub fn parse(text: &str, source: SourceId) -> Result<Element> {
    parse_streaming(text, source, |_, child| Ok(Some(child)))
}

/// What [`parse_streaming`] does with each complete child of the root element: keep
/// it (`Some`, it joins the root's children) or consume it (`None`).
pub type ChildOfRoot<'a> = dyn FnMut(&Element, Element) -> Result<Option<Element>> + 'a;

/// Parses `text` like [`parse`], handing each child of the root to `child` as soon as
/// it is complete, so a caller that consumes them never holds the whole tree.
pub fn parse_streaming(
    text: &str,
    source: SourceId,
    mut child: impl FnMut(&Element, Element) -> Result<Option<Element>>,
) -> Result<Element> {
    let mut reader = Reader::from_str(text);
    let mut open: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let start = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) => {
                let at = reader.error_position() as usize;
                return Err(parse_error(
                    format!("malformed XML: {e}"),
                    Span::new(source, at, at + 1),
                ));
            }
        };
        let end = reader.buffer_position() as usize;
        let span = Span::new(source, start, end);
        let raw = text.get(start..end).unwrap_or("");
        match event {
            Event::Start(_) | Event::Empty(_) if root.is_some() => {
                return Err(parse_error(
                    "a document has one root element; this is a second one",
                    span,
                ));
            }
            Event::Start(tag) => {
                if open.len() >= MAX_DEPTH {
                    return Err(
                        Error::validation(format!("elements nested deeper than {MAX_DEPTH} levels")).with_span(span),
                    );
                }
                open.push(element(text, &tag, span)?);
            }
            Event::Empty(tag) => {
                let element = element(text, &tag, span)?;
                attach(element, &mut open, &mut root, &mut child)?;
            }
            Event::End(_) => match open.pop() {
                Some(element) => attach(element, &mut open, &mut root, &mut child)?,
                None => return Err(parse_error("a closing tag with no opening tag", span)),
            },
            Event::Text(_) | Event::GeneralRef(_) => match open.last_mut() {
                Some(parent) => parent.text.push_raw(raw, start, false)?,
                None if raw.trim().is_empty() => {}
                None => return Err(parse_error("text outside the root element", span)),
            },
            Event::CData(data) => {
                let content: &str = &data;
                match open.last_mut() {
                    Some(parent) => parent.text.push_verbatim(content, start + "<![CDATA[".len()),
                    None => return Err(parse_error("CDATA outside the root element", span)),
                }
            }
            Event::DocType(_) => {
                return Err(parse_error(
                    "a DOCTYPE is not allowed in a template file (no DTDs, no custom or external entities)",
                    span,
                ))
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(unclosed) = open.last() {
        return Err(parse_error(
            format!("<{}> is never closed", unclosed.name),
            unclosed.span,
        ));
    }
    root.ok_or_else(|| parse_error("the file has no root element", Span::new(source, 0, 0)))
}

fn attach(
    element: Element,
    open: &mut [Element],
    root: &mut Option<Element>,
    child_of_root: &mut ChildOfRoot,
) -> Result<()> {
    match open {
        [] => *root = Some(element),
        [only] => {
            if let Some(kept) = child_of_root(only, element)? {
                only.children.push(kept);
            }
        }
        [.., parent] => parent.children.push(element),
    }
    Ok(())
}

/// The element for a start tag (or an empty-element tag) spanning `span`.
fn element(text: &str, tag: &BytesStart, span: Span) -> Result<Element> {
    let source = span.source;
    let name = tag.name().as_ref().to_owned();
    let mut attributes = Vec::new();
    for attribute in tag.attributes() {
        let attribute =
            attribute.map_err(|e| parse_error(format!("malformed attribute: {e}"), span))?;
        let key = attribute.key.as_ref();
        let raw_value: &str = &attribute.value;
        let name_at = offset_in(text, key.as_bytes()).unwrap_or(span.start as usize);
        let value_at = offset_in(text, raw_value.as_bytes()).unwrap_or(name_at);
        let mut value = Text::empty(source, value_at);
        value.push_raw(raw_value, value_at, true)?;
        attributes.push(Attribute {
            name: key.to_owned(),
            name_span: Span::new(source, name_at, name_at + key.len()),
            value,
        });
    }
    Ok(Element {
        name,
        span,
        attributes,
        children: Vec::new(),
        text: Text::empty(source, span.end()),
    })
}

/// Where `part` (a slice the reader borrowed from `text`) starts in `text`.
fn offset_in(text: &str, part: &[u8]) -> Option<usize> {
    let base = text.as_ptr() as usize;
    let at = (part.as_ptr() as usize).checked_sub(base)?;
    (at + part.len() <= text.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::add_source;

    fn parse_text(text: &str) -> Result<Element> {
        parse(text, add_source("<parse-test>", text))
    }

    #[test]
    fn builds_the_tree_with_text_and_attributes() {
        let root = parse_text(
            "<?xml version='1.0'?><!-- c --><tasks><task name=\"a&amp;b\">hi &lt;there&gt;<x/></task></tasks>",
        )
        .unwrap();
        assert_eq!(root.name, "tasks");
        let task = &root.children[0];
        assert_eq!(task.attribute("name").unwrap().value.as_str(), "a&b");
        assert_eq!(task.text.as_str(), "hi <there>");
        assert_eq!(task.children[0].name, "x");
    }

    #[test]
    fn attribute_spans_point_at_the_value() {
        let text = "<task\n  name='abc'/>";
        let root = parse_text(text).unwrap();
        let value = &root.attribute("name").unwrap().value;
        assert_eq!(
            &text[value.span().start as usize..value.span().end()],
            "abc"
        );
    }

    #[test]
    fn cdata_is_taken_literally() {
        let root = parse_text("<a><![CDATA[x < y && z]]></a>").unwrap();
        assert_eq!(root.text.as_str(), "x < y && z");
    }

    #[test]
    fn malformed_documents_are_parse_errors() {
        for text in [
            "<a>",
            "<a></b>",
            "</a>",
            "<a x='1' x='2'/>",
            "<a/><b/>",
            "text",
            "",
            "<a>&bogus;</a>",
            "<a x=1/>",
        ] {
            let e = parse_text(text).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::XmlParse, "{text:?}: {}", e.message());
            assert!(e.span().is_some(), "{text:?}");
        }
    }

    #[test]
    fn doctype_is_refused() {
        let e = parse_text("<!DOCTYPE a [<!ENTITY x SYSTEM 'file:///etc/passwd'>]><a>&x;</a>")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::XmlParse);
        assert!(e.message().contains("DOCTYPE"));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = "<a>".repeat(100_000);
        let e = parse_text(&text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
    }
}
