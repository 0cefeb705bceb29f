//! Strings: lengths and indices count Unicode scalar values, not bytes.

use super::{builtin_table, index_arg, list_arg, str_arg, type_error};
use super::{fixed_args, leading_args};
use crate::bounds::{check_string_length, check_string_list, push_within};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::{display_string_checked, write_string, write_string_checked, Value};

builtin_table! {
    /// `(str x…)`: the display forms of the arguments, concatenated. `(str "a" 1 :k)` ⇒ `"a1:k"`
    "str", 0, None => str_concat;
    /// `(string? v)`: is it a string? `(string? "a")` ⇒ `true`
    "string?", 1, Some(1) => is_string;
    /// `(string-length s)`: the number of characters. `(string-length "héllo")` ⇒ `5`
    "string-length", 1, Some(1) => string_length;
    /// `(substring s start end?)`: characters from `start` up to `end`. `(substring "hello" 1 3)` ⇒ `"el"`
    "substring", 2, Some(3) => substring;
    /// `(string-join xs sep?)`: display forms joined by `sep`. `(string-join '("a" "b") "-")` ⇒ `"a-b"`
    "string-join", 1, Some(2) => string_join;
    /// `(string-split s sep)`: the pieces between separators. `(string-split "a,b" ",")` ⇒ `("a" "b")`
    "string-split", 2, Some(2) => string_split;
    /// `(string-upcase s)`: upper case. `(string-upcase "hi")` ⇒ `"HI"`
    "string-upcase", 1, Some(1) => upcase;
    /// `(string-downcase s)`: lower case. `(string-downcase "HI")` ⇒ `"hi"`
    "string-downcase", 1, Some(1) => downcase;
    /// `(string-trim s)`: without leading and trailing whitespace. `(string-trim " a ")` ⇒ `"a"`
    "string-trim", 1, Some(1) => trim;
    /// `(string-contains? s sub)`: does `s` contain `sub`? `(string-contains? "abc" "b")` ⇒ `true`
    "string-contains?", 2, Some(2) => string_contains;
    /// `(string-starts-with? s prefix)`: `(string-starts-with? "abc" "ab")` ⇒ `true`
    "string-starts-with?", 2, Some(2) => starts_with;
    /// `(string-ends-with? s suffix)`: `(string-ends-with? "abc" "bc")` ⇒ `true`
    "string-ends-with?", 2, Some(2) => ends_with;
    /// `(string-replace s old new)`: every occurrence of `old` replaced. `(string-replace "a-b-c" "-" "+")` ⇒ `"a+b+c"`
    "string-replace", 3, Some(3) => replace;
    /// `(string->number s)`: the number `s` spells, or nil. `(string->number "42")` ⇒ `42`
    "string->number", 1, Some(1) => to_number;
    /// `(number->string n)`: the number's printed form. `(number->string 2.5)` ⇒ `"2.5"`
    "number->string", 1, Some(1) => number_to_string;
    /// `(symbol->string sym)`: a symbol's (or keyword's) name. `(symbol->string 'abc)` ⇒ `"abc"`
    "symbol->string", 1, Some(1) => symbol_to_string;
    /// `(string->symbol s)`: the symbol named `s`. `(string->symbol "abc")` ⇒ `abc`
    "string->symbol", 1, Some(1) => string_to_symbol;
    /// `(format template x…)`: each `{}` replaced by the next argument's display form. `(format "{}+{}" 1 2)` ⇒ `"1+2"`
    "format", 1, None => format;
    /// `(string->list s)`: the characters as one-character strings. `(string->list "ab")` ⇒ `("a" "b")`
    "string->list", 1, Some(1) => string_to_list;
    /// `(repr v)`: the canonical printed form as a string. `(repr "a")` ⇒ `"\"a\""`
    "repr", 1, Some(1) => repr;
}

fn str_concat(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let mut out = String::with_capacity(reserve(interp, "str", args)?);
    for (i, a) in args.iter().enumerate() {
        interp.poll_at(i)?;
        match a {
            Value::Str(s) => push_within("str", &mut out, s)?,
            other => {
                let shown = display_string_checked("str", other, &|| interp.poll())?;
                push_within("str", &mut out, &shown)?;
            }
        }
    }
    Ok(Value::from(out))
}

fn is_string(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("string?", args)?;
    Ok(Value::Bool(matches!(v, Value::Str(_))))
}

fn string_length(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string-length", args)?;
    Ok(Value::Int(
        str_arg("string-length", s)?.chars().count() as i64
    ))
}

/// The byte offset of character `index`, or the length of `s` past its end.
fn char_offset(s: &str, index: usize) -> usize {
    s.char_indices().nth(index).map_or(s.len(), |(i, _)| i)
}

fn substring(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([s, start], end) = leading_args("substring", args)?;
    let s = str_arg("substring", s)?;
    let len = s.chars().count();
    let start = index_arg("substring", start)?;
    let end = match end.first() {
        Some(Value::Nil) | None => len,
        Some(e) => index_arg("substring", e)?,
    };
    if start > end || end > len {
        return Err(Error::eval(format!(
            "substring: range {start}..{end} is outside the string (length {len})"
        )));
    }
    // Both offsets fall on character boundaries, so `get` always finds the text.
    let part = s.get(char_offset(s, start)..char_offset(s, end));
    Ok(Value::from(part.unwrap_or_default()))
}

/// The bytes to reserve for joining `parts` (their strings' total), refused at once
/// when that alone passes the limit: the result is allocated once rather than grown
/// by doubling, which would hold the old and the new buffer at once. The limits are
/// checked before a large copy (doubling a string in a loop meets them every step).
fn reserve(
    interp: &Interp,
    who: &str,
    parts: impl IntoIterator<Item = impl std::borrow::Borrow<Value>>,
) -> Result<usize> {
    let total = parts
        .into_iter()
        .map(|v| match v.borrow() {
            Value::Str(s) => s.len(),
            _ => 0,
        })
        .fold(0usize, usize::saturating_add);
    check_string_length(who, total)?;
    poll_before_text(interp, total)?;
    Ok(total)
}

/// The limits, checked before building a large string in one step: text counts as many
/// items as values of its size (16 bytes each).
fn poll_before_text(interp: &Interp, bytes: usize) -> Result<()> {
    interp.poll_before(bytes / 16)
}

fn string_join(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([items], sep) = leading_args("string-join", args)?;
    let sep = match sep.first() {
        Some(s) => str_arg("string-join", s)?,
        None => "",
    };
    let items = list_arg("string-join", items)?;
    let mut out = String::with_capacity(reserve(interp, "string-join", items.iter())?);
    for (i, item) in items.iter().enumerate() {
        interp.poll_at(i)?;
        if i > 0 {
            push_within("string-join", &mut out, sep)?;
        }
        match &item {
            Value::Str(s) => push_within("string-join", &mut out, s)?,
            other => {
                let shown = display_string_checked("string-join", other, &|| interp.poll())?;
                push_within("string-join", &mut out, &shown)?;
            }
        }
    }
    Ok(Value::from(out))
}

fn string_split(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s, sep] = fixed_args("string-split", args)?;
    let (s, sep) = (str_arg("string-split", s)?, str_arg("string-split", sep)?);
    let pieces = if sep.is_empty() {
        s.chars().count()
    } else {
        s.matches(sep).count() + 1
    };
    check_string_list("string-split", pieces, s.len())?;
    if sep.is_empty() {
        return characters(interp, s);
    }
    let mut parts = Vec::with_capacity(pieces);
    for (i, part) in s.split(sep).enumerate() {
        interp.poll_at(i)?;
        parts.push(Value::from(part));
    }
    Ok(Value::list(parts))
}

/// The characters of `s` as one-character strings.
fn characters(interp: &Interp, s: &str) -> Result<Value> {
    let mut chars = Vec::new();
    for (i, c) in s.chars().enumerate() {
        interp.poll_at(i)?;
        chars.push(Value::from(c.to_string()));
    }
    Ok(Value::list(chars))
}

fn upcase(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string-upcase", args)?;
    let s = str_arg("string-upcase", s)?;
    check_string_length("string-upcase", mapped_len(s, char::to_uppercase))?;
    poll_before_text(interp, s.len())?;
    Ok(Value::from(s.to_uppercase()))
}

fn downcase(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string-downcase", args)?;
    let s = str_arg("string-downcase", s)?;
    check_string_length("string-downcase", mapped_len(s, char::to_lowercase))?;
    poll_before_text(interp, s.len())?;
    Ok(Value::from(s.to_lowercase()))
}

/// The length in bytes of `s` with every character case-mapped by `map`, counted
/// before anything is built: a mapping can triple the length (`ΐ` upper-cases to three
/// characters). The context-dependent final sigma has the length of `σ`.
fn mapped_len<I: Iterator<Item = char>>(s: &str, map: impl Fn(char) -> I) -> usize {
    s.chars()
        .map(|c| map(c).map(char::len_utf8).sum::<usize>())
        .fold(0, usize::saturating_add)
}

fn trim(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string-trim", args)?;
    Ok(Value::from(str_arg("string-trim", s)?.trim()))
}

fn string_contains(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s, sub] = fixed_args("string-contains?", args)?;
    let s = str_arg("string-contains?", s)?;
    Ok(Value::Bool(s.contains(str_arg("string-contains?", sub)?)))
}

fn starts_with(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s, prefix] = fixed_args("string-starts-with?", args)?;
    let s = str_arg("string-starts-with?", s)?;
    Ok(Value::Bool(
        s.starts_with(str_arg("string-starts-with?", prefix)?),
    ))
}

fn ends_with(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s, suffix] = fixed_args("string-ends-with?", args)?;
    let s = str_arg("string-ends-with?", s)?;
    Ok(Value::Bool(
        s.ends_with(str_arg("string-ends-with?", suffix)?),
    ))
}

fn replace(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s, old, new] = fixed_args("string-replace", args)?;
    let s = str_arg("string-replace", s)?;
    let old = str_arg("string-replace", old)?;
    let new = str_arg("string-replace", new)?;
    if old.is_empty() {
        return Err(Error::eval(
            "string-replace: the text to replace must not be empty",
        ));
    }
    let count = s.matches(old).count();
    let len = (s.len() - count * old.len()).saturating_add(count.saturating_mul(new.len()));
    check_string_length("string-replace", len)?;
    poll_before_text(interp, s.len().max(len))?;
    Ok(Value::from(s.replace(old, new)))
}

fn to_number(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string->number", args)?;
    let s = str_arg("string->number", s)?.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    let numeric = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && s.bytes().any(|b| b.is_ascii_digit());
    Ok(match s.parse::<f64>() {
        Ok(f) if numeric => Value::Float(f),
        _ => Value::Nil,
    })
}

fn number_to_string(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("number->string", args)?;
    match n {
        v @ (Value::Int(_) | Value::Float(_)) => Ok(Value::from(write_string(v))),
        other => Err(type_error("number->string", "a number", other)),
    }
}

fn symbol_to_string(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [sym] = fixed_args("symbol->string", args)?;
    match sym.symbol_or_keyword_name() {
        Some(name) => Ok(Value::from(name)),
        None => Err(type_error("symbol->string", "a symbol", sym)),
    }
}

fn string_to_symbol(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string->symbol", args)?;
    Ok(Value::data_symbol(str_arg("string->symbol", s)?))
}

fn format(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([template], values) = leading_args("format", args)?;
    let template = str_arg("format", template)?;
    let mut values = values.iter();
    let mut out = String::with_capacity(reserve(interp, "format", args)?);
    let mut rest = template;
    while let Some((before, after)) = rest.split_once("{}") {
        push_within("format", &mut out, before)?;
        let v = values.next().ok_or_else(|| {
            Error::eval(format!(
                "format: more {{}} than arguments in {:?}",
                template
            ))
        })?;
        let shown = display_string_checked("format", v, &|| interp.poll())?;
        push_within("format", &mut out, &shown)?;
        rest = after;
    }
    push_within("format", &mut out, rest)?;
    if values.next().is_some() {
        return Err(Error::eval(format!(
            "format: more arguments than {{}} in {:?}",
            template
        )));
    }
    Ok(Value::from(out))
}

fn string_to_list(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [s] = fixed_args("string->list", args)?;
    let s = str_arg("string->list", s)?;
    check_string_list("string->list", s.chars().count(), s.len())?;
    characters(interp, s)
}

fn repr(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("repr", args)?;
    write_string_checked("repr", v, &|| interp.poll()).map(Value::from)
}

#[cfg(test)]
mod tests {
    use super::mapped_len;

    #[test]
    fn the_case_mapped_length_is_counted_exactly() {
        for s in [
            "hello",
            "\u{390}",
            "stra\u{df}e",
            "\u{130}stanbul",
            "\u{fb03}",
            "\u{3a3}\u{391}\u{3a3}",
            "",
        ] {
            assert_eq!(
                mapped_len(s, char::to_uppercase),
                s.to_uppercase().len(),
                "{s}"
            );
            assert_eq!(
                mapped_len(s, char::to_lowercase),
                s.to_lowercase().len(),
                "{s}"
            );
        }
    }
}
