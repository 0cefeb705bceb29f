//! The canonical printed form (`write`, `prn`, the REPL) and the display form.

use super::Value;
use std::fmt::Write;

/// Nesting deeper than this prints as `...`, so printing never exhausts the stack.
const MAX_PRINT_DEPTH: usize = 10_000;

/// The canonical form: strings quoted and escaped, reads back as the same data.
pub fn write_string(value: &Value) -> String {
    let mut out = String::new();
    print(value, true, 0, &mut out);
    out
}

/// The display form: strings raw, everything else canonical.
pub fn display_string(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        _ => write_string(value),
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

fn print(value: &Value, quoted: bool, depth: usize, out: &mut String) {
    if depth > MAX_PRINT_DEPTH {
        out.push_str("...");
        return;
    }
    match value {
        Value::Nil => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => format_float(*f, out),
        Value::Str(s) if quoted => write_escaped(s, out),
        Value::Str(s) => out.push_str(s),
        Value::Symbol(s) => out.push_str(s.name()),
        Value::Keyword(s) => {
            out.push(':');
            out.push_str(s.name());
        }
        Value::List(..) => {
            out.push('(');
            if let Some(list) = value.as_list() {
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    print(&item, true, depth + 1, out);
                }
            }
            out.push(')');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, v)) in map.entries.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_escaped(k, out);
                out.push(' ');
                print(v, true, depth + 1, out);
            }
            out.push('}');
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
