//! Regular expressions on the `regex` crate: linear-time matching, no backtracking, so a
//! pattern from a model or a user cannot hang the interpreter.

use super::fixed_args;
use super::{builtin_table, str_arg};
use crate::bounds::{check_string_list, push_within};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::Value;
use regex::{Captures, Regex, RegexBuilder};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;

builtin_table! {
    /// `(re-find re s)`: the first match: its text, or `(whole group…)` when the pattern has groups; nil if none. `(re-find "\\d+" "ab12c3")` ⇒ `"12"`
    "re-find", 2, Some(2) => re_find;
    /// `(re-matches re s)`: the match when the whole string matches (shaped as `re-find`), else nil. `(re-matches "(\\w+)@(\\w+)" "me@host")` ⇒ `("me@host" "me" "host")`
    "re-matches", 2, Some(2) => re_matches;
    /// `(re-seq re s)`: every match, in order, each shaped as `re-find`. `(re-seq "\\d" "a1b2")` ⇒ `("1" "2")`
    "re-seq", 2, Some(2) => re_seq;
    /// `(re-replace re s replacement)`: every match replaced; `$1` and `${name}` insert groups. `(re-replace "(\\w+)@" "me@host" "$1 at ")` ⇒ `"me at host"`
    "re-replace", 3, Some(3) => re_replace;
}

/// Compiled patterns, so a pattern used in a loop is compiled once. Bounded: cleared
/// when full, since programs may build patterns from data.
const CACHE_SIZE: usize = 64;

/// The compiled program may use at most this much memory.
const SIZE_LIMIT: usize = 1 << 20;

thread_local! {
    static CACHE: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

fn compile(who: &str, pattern: &str) -> Result<Regex> {
    if let Some(re) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| Error::eval(format!("{who}: invalid regular expression: {e}")))?;
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), re.clone());
    });
    Ok(re)
}

fn pattern_and_text<'a>(who: &str, pattern: &Value, text: &'a Value) -> Result<(Regex, &'a str)> {
    Ok((compile(who, str_arg(who, pattern)?)?, str_arg(who, text)?))
}

/// A match as the program sees it: the text, or the whole text and each group (nil when
/// a group took no part).
fn shaped(re: &Regex, caps: &Captures) -> Value {
    if re.captures_len() == 1 {
        return caps.get(0).map_or(Value::Nil, |m| Value::from(m.as_str()));
    }
    Value::list(
        caps.iter()
            .map(|g| g.map_or(Value::Nil, |m| Value::from(m.as_str())))
            .collect(),
    )
}

fn re_find(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [pattern, text] = fixed_args("re-find", args)?;
    let (re, text) = pattern_and_text("re-find", pattern, text)?;
    Ok(re
        .captures(text)
        .map_or(Value::Nil, |caps| shaped(&re, &caps)))
}

fn re_matches(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [pattern, text] = fixed_args("re-matches", args)?;
    let pattern = str_arg("re-matches", pattern)?;
    // Checked alone first: wrapping can make an invalid pattern (`a)|(b`) valid.
    compile("re-matches", pattern)?;
    let whole = compile("re-matches", &format!(r"\A(?:{pattern})\z"))?;
    let text = str_arg("re-matches", text)?;
    Ok(whole.captures(text).map_or(Value::Nil, |caps| {
        // The anchored pattern adds no group, so the shape is the user's pattern's.
        shaped(&whole, &caps)
    }))
}

/// Every match, refused as soon as the strings made so far pass the size bounds: a short
/// pattern can match hundreds of millions of times in a large text.
fn re_seq(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [pattern, text] = fixed_args("re-seq", args)?;
    let (re, text) = pattern_and_text("re-seq", pattern, text)?;
    let (mut strings, mut bytes) = (0usize, 0usize);
    let mut matches = Vec::new();
    for (i, caps) in re.captures_iter(text).enumerate() {
        interp.poll_at(i)?;
        strings = strings.saturating_add(re.captures_len());
        bytes = bytes.saturating_add(caps.iter().flatten().map(|m| m.len()).sum());
        check_string_list("re-seq", strings, bytes)?;
        matches.push(shaped(&re, &caps));
    }
    Ok(Value::list(matches))
}

/// Every match replaced, refused before the result passes the string limit (a
/// replacement longer than its match grows the text with every match). A replacement
/// without `$` needs only where each match is, not its groups.
fn re_replace(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [pattern, text, replacement] = fixed_args("re-replace", args)?;
    let (re, text) = pattern_and_text("re-replace", pattern, text)?;
    let replacement = str_arg("re-replace", replacement)?;
    let mut out = Rebuilt::new(text);
    if replacement.contains('$') {
        let mut expanded = String::new();
        for (i, caps) in re.captures_iter(text).enumerate() {
            interp.poll_at(i)?;
            let Some(whole) = caps.get(0) else { continue };
            expanded.clear();
            caps.expand(replacement, &mut expanded);
            out.replace(whole.range(), &expanded)?;
        }
    } else {
        for (i, found) in re.find_iter(text).enumerate() {
            interp.poll_at(i)?;
            out.replace(found.range(), replacement)?;
        }
    }
    out.finish().map(Value::from)
}

/// A text rebuilt with some of its ranges replaced, in order, within the string limit.
struct Rebuilt<'a> {
    text: &'a str,
    out: String,
    copied_to: usize,
}

impl<'a> Rebuilt<'a> {
    fn new(text: &'a str) -> Self {
        Rebuilt {
            text,
            out: String::new(),
            copied_to: 0,
        }
    }

    /// Copies the text up to `range`, then `with` in its place.
    fn replace(&mut self, range: Range<usize>, with: &str) -> Result<()> {
        let before = self.text.get(self.copied_to..range.start).unwrap_or("");
        push_within("re-replace", &mut self.out, before)?;
        push_within("re-replace", &mut self.out, with)?;
        self.copied_to = range.end;
        Ok(())
    }

    /// The rest of the text copied.
    fn finish(mut self) -> Result<String> {
        let rest = self.text.get(self.copied_to..).unwrap_or("");
        push_within("re-replace", &mut self.out, rest)?;
        Ok(self.out)
    }
}
