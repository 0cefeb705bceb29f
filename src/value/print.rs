//! The canonical printed form (`write`, `prn`, the REPL) and the display form.

use super::Value;
use crate::error::{Error, Result};
use crate::value::bounds::{
    check_string_length, never_stop, Budget, Poll, MAX_NODES, MAX_STRING_BYTES, POLL_EVERY,
};
use std::fmt::Write;
use std::rc::Rc;

/// The canonical form: strings quoted and escaped, reads back as the same data. Text
/// longer than the string limit is cut there and ends with `…`.
pub fn write_string(value: &Value) -> String {
    let mut out = String::new();
    if !print(value, true, &mut out, MAX_STRING_BYTES, &never_stop).unwrap_or(false) {
        out.push('…');
    }
    out
}

/// The first `max` characters of the canonical form, then `…` if there is more: for a
/// message that shows a value, without printing all of a large one first.
pub fn write_prefix(value: &Value, max: usize) -> String {
    let mut out = String::new();
    // A character is at most 4 bytes: text printed past that would be cut anyway.
    let _ = print(value, true, &mut out, max.saturating_mul(4), &never_stop);
    truncate_text(&out, max)
}

/// The first `max` characters of `text`, then `…` if there is more.
pub fn truncate_text(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// The display form: strings raw, everything else canonical (cut like `write_string`).
pub fn display_string(value: &Value) -> String {
    match value {
        // Not `to_string`, which goes through the formatter and over-allocates.
        Value::Str(s) => s.as_str().to_owned(),
        _ => write_string(value),
    }
}

/// `write_string` for builtins that make strings: text over the string limit (data
/// that shares structure can describe far more) is a `RESOURCE_EXHAUSTION`, and `poll`
/// (the interpreter's limits) can stop a long print.
pub fn write_string_checked(who: &str, value: &Value, poll: Poll) -> Result<String> {
    let mut out = String::new();
    if print(value, true, &mut out, MAX_STRING_BYTES, poll)? {
        return Ok(out);
    }
    check_string_length(who, out.len())?;
    Err(Error::resource(
        "size",
        MAX_NODES + 1,
        MAX_NODES,
        format!("{who}: the data has more than {MAX_NODES} nodes to print"),
    ))
}

/// `display_string` for builtins that make strings; see [`write_string_checked`].
pub fn display_string_checked(who: &str, value: &Value, poll: Poll) -> Result<String> {
    match value {
        Value::Str(s) => Ok(s.as_str().to_owned()),
        _ => write_string_checked(who, value, poll),
    }
}

pub fn format_float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
    } else {
        // Debug gives the shortest text that reads back, with `.0` or an exponent.
        let _ = write!(out, "{f:?}");
    }
}

pub fn write_escaped(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// What is left to print: a value, a map key, or literal text such as a bracket.
enum Work {
    Value(Value, bool),
    Key(Rc<str>),
    Text(&'static str),
}

/// Prints with an explicit stack rather than recursion, so data nested a million deep
/// prints in full without exhausting the stack. Stops, returning false, once the text
/// is longer than the string limit or more nodes were printed than a traversal may
/// visit (data that shares structure describes more than memory holds); fails with
/// the error of `poll`, called every [`POLL_EVERY`] nodes.
fn print(value: &Value, quoted: bool, out: &mut String, limit: usize, poll: Poll) -> Result<bool> {
    let mut work = vec![Work::Value(value.clone(), quoted)];
    let mut budget = Budget::new("print", value);
    while let Some(item) = work.pop() {
        if out.len() > limit {
            return Ok(false);
        }
        let (value, quoted) = match item {
            Work::Text(text) => {
                out.push_str(text);
                continue;
            }
            Work::Key(key) => {
                write_escaped(&key, out);
                out.push(' ');
                continue;
            }
            Work::Value(value, quoted) => (value, quoted),
        };
        if budget.visit().is_err() {
            return Ok(false);
        }
        if budget.visited().is_multiple_of(POLL_EVERY) {
            poll()?;
        }
        match &value {
            Value::List(..) | Value::Map(_) => push_children(&value, out, &mut work),
            Value::Nil => out.push_str("nil"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => format_float(*f, out),
            Value::Str(s) if quoted => write_escaped(s, out),
            Value::Str(s) => out.push_str(s),
            Value::Symbol(s) => out.push_str(s.name()),
            Value::DataSymbol(name) => out.push_str(name),
            Value::Keyword(s) => {
                out.push(':');
                out.push_str(s.name());
            }
            Value::DataKeyword(name) => {
                out.push(':');
                out.push_str(name);
            }
            Value::Closure(c) => match c.name() {
                Some(name) => {
                    let _ = write!(out, "#<procedure {name}>");
                }
                None => out.push_str("#<procedure>"),
            },
            Value::Builtin(b) => {
                let _ = write!(out, "#<builtin {}>", b.name);
            }
            Value::Task(t) => {
                let _ = write!(out, "#<task {}>", t.name);
            }
            Value::Library => out.push_str("#<task-library>"),
            Value::Undefined => out.push_str("#<undefined>"),
        }
    }
    Ok(true)
}

/// Opens a list or map: its bracket now, its elements and the closing bracket as work.
fn push_children(value: &Value, out: &mut String, work: &mut Vec<Work>) {
    match value {
        Value::List(..) => {
            out.push('(');
            work.push(Work::Text(")"));
            let items: Vec<Value> = value.as_list().unwrap_or_default().iter().collect();
            for (i, item) in items.into_iter().enumerate().rev() {
                work.push(Work::Value(item, true));
                if i > 0 {
                    work.push(Work::Text(" "));
                }
            }
        }
        Value::Map(map) => {
            out.push('{');
            work.push(Work::Text("}"));
            for (i, (key, value)) in map.entries.iter().enumerate().rev() {
                work.push(Work::Value(value.clone(), true));
                work.push(Work::Key(key.clone()));
                if i > 0 {
                    work.push(Work::Text(" "));
                }
            }
        }
        _ => {}
    }
}

/// `n` and its noun, the noun plural unless `n` is 1: `1 turn`, `2 turns`.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_count_agrees_with_its_noun() {
        assert_eq!(super::counted(1, "turn"), "1 turn");
        assert_eq!(super::counted(0, "turn"), "0 turns");
        assert_eq!(super::counted(2, "turn"), "2 turns");
    }

    use super::*;

    #[test]
    fn a_prefix_prints_only_the_start_of_a_long_list() {
        let long = Value::list((0..1_000_000).map(Value::Int).collect());
        assert_eq!(write_prefix(&long, 12), "(0 1 2 3 4 5…");
        assert_eq!(write_prefix(&Value::from("ab"), 12), "\"ab\"");
    }

    #[test]
    fn floats_print_shortest_with_a_point_or_exponent() {
        let cases = [
            (3.0, "3.0"),
            (0.1, "0.1"),
            (1e21, "1e21"),
            (1e-7, "1e-7"),
            (2.5, "2.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (f, text) in cases {
            assert_eq!(write_string(&Value::Float(f)), text);
        }
    }

    #[test]
    fn strings_escape_in_canonical_form() {
        let v = Value::str("a\"b\\c\nd\te\r\u{1}é");
        assert_eq!(write_string(&v), r#""a\"b\\c\nd\te\r\u{1}é""#);
        assert_eq!(display_string(&v), "a\"b\\c\nd\te\r\u{1}é");
    }

    #[test]
    fn containers() {
        let mut e = super::super::Entries::new();
        e.insert("a".into(), Value::Int(1));
        e.insert("b".into(), Value::list(vec![Value::Int(2), Value::Int(3)]));
        assert_eq!(write_string(&Value::map(e)), r#"{"a" 1 "b" (2 3)}"#);
        assert_eq!(write_string(&Value::empty_list()), "()");
        assert_eq!(write_string(&Value::keyword("kw")), ":kw");
    }

    #[test]
    fn a_million_deep_nest_prints_in_full() {
        let mut v = Value::empty_list();
        for _ in 0..1_000_000 {
            v = Value::list(vec![v, Value::Int(1)]);
        }
        let text = write_string(&v);
        assert_eq!(text.len(), 1_000_000 * 4 + 2);
        assert!(text.starts_with("((((") && text.ends_with(" 1) 1) 1)"));
        assert!(text.contains("((() 1) 1)"));
    }
}
