//! Prompt templates: `{{ name }}` and `{{ path.to[0].value }}` tags filled from the
//! task's environment. A template is parsed once, when the task is defined; what a tag
//! inserts is never looked at again, so a value containing `{{x}}` stays as it is.

use super::definition::lossy_json;
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::reader::{parse_path_text, PathSpec};
use crate::eval::{access_path, Interp};
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::Value;
use std::rc::Rc;

enum Part {
    Text(String),
    Name(Sym),
    Path(Rc<PathSpec>),
}

pub struct Template {
    source: String,
    parts: Vec<Part>,
}

impl Template {
    pub fn parse(source: &str) -> Template {
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut rest = source;
        while let Some(open) = rest.find("{{") {
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else { break };
            let tag = &after[..close];
            text.push_str(&rest[..open]);
            match reference(tag.trim()) {
                Some(part) => {
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(part);
                }
                None => {
                    text.push_str("{{");
                    text.push_str(tag);
                    text.push_str("}}");
                }
            }
            rest = &after[close + 2..];
        }
        text.push_str(rest);
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Template {
            source: source.to_owned(),
            parts,
        }
    }

    /// The name each tag starts with, in order: what the template needs bound.
    pub fn names(&self) -> impl Iterator<Item = Sym> + '_ {
        self.parts.iter().filter_map(|part| match part {
            Part::Text(_) => None,
            Part::Name(name) => Some(*name),
            Part::Path(path) => Some(path.base),
        })
    }

    /// The template as it was written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Fills the tags from `env`; an unbound name is `input_validation_failure`.
    pub fn render(&self, interp: &Interp, env: &Env) -> Result<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Name(name) => insert(&mut out, &lookup(interp, env, *name)?),
                Part::Path(path) => {
                    let base = lookup(interp, env, path.base)?;
                    let value = access_path(&base, path, interp).map_err(|e| {
                        Error::task_failure(
                            Reason::InputValidationFailure,
                            format!(
                                "template tag {{{{{}}}}}: {}",
                                path.text,
                                e.into_error().message()
                            ),
                        )
                    })?;
                    insert(&mut out, &value);
                }
            }
        }
        Ok(out)
    }
}

/// A tag's text as a symbol or path, or `None` when it is neither (then it is literal).
fn reference(tag: &str) -> Option<Part> {
    if tag.contains(char::is_whitespace) {
        return None;
    }
    let base_end = tag.find(['.', '[']).unwrap_or(tag.len());
    let base = &tag[..base_end];
    let plain = !base.is_empty()
        && !base.starts_with(|c: char| c.is_ascii_digit() || c == ':')
        && !base.contains(|c: char| "()[]{}\"';`,".contains(c));
    if !plain {
        return None;
    }
    if base_end == tag.len() {
        return Some(Part::Name(Sym::new(tag)));
    }
    let steps = parse_path_text(&tag[base_end..], Span::generated()).ok()?;
    Some(Part::Path(Rc::new(PathSpec {
        text: tag.to_owned(),
        base: Sym::new(base),
        steps,
    })))
}

fn lookup(interp: &Interp, env: &Env, name: Sym) -> Result<Value> {
    interp.lookup(env, name).ok_or_else(|| {
        Error::task_failure(
            Reason::InputValidationFailure,
            format!("template tag {{{{{name}}}}} names an unbound symbol: {name}"),
        )
    })
}

/// A string as it is, other data as compact JSON.
fn insert(out: &mut String, value: &Value) {
    match value {
        Value::Str(s) => out.push_str(s),
        other => out.push_str(&lossy_json(other).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(template: &Template) -> Vec<String> {
        template
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => format!("text:{t}"),
                Part::Name(n) => format!("name:{n}"),
                Part::Path(p) => format!("path:{}", p.text),
            })
            .collect()
    }

    #[test]
    fn names_are_each_tags_first_name() {
        let t = Template::parse("{{a}} {{b.c[0]}} {{ not a tag }} {{a}}");
        let names: Vec<String> = t.names().map(|n| n.name().to_owned()).collect();
        assert_eq!(names, ["a", "b", "a"]);
    }

    #[test]
    fn tags_symbols_and_paths() {
        let t = Template::parse("Hi {{ name }}, see {{a.b[0]}}!");
        assert_eq!(
            shape(&t),
            [
                "text:Hi ",
                "name:name",
                "text:, see ",
                "path:a.b[0]",
                "text:!"
            ]
        );
    }

    #[test]
    fn non_references_stay_literal() {
        let t = Template::parse("{{}} {{ two words }} {{1x}} {{a.}} {{unclosed");
        assert_eq!(
            shape(&t),
            ["text:{{}} {{ two words }} {{1x}} {{a.}} {{unclosed"]
        );
    }

    #[test]
    fn non_ascii_names_and_paths() {
        let t = Template::parse("{{ é }}{{é.ü[1]}}");
        assert_eq!(shape(&t), ["name:é", "path:é.ü[1]"]);
    }

    #[test]
    fn a_tag_ends_at_the_first_close() {
        let t = Template::parse("{{a}}}}");
        assert_eq!(shape(&t), ["name:a", "text:}}"]);
    }
}
