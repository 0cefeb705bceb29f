//! Grouping, counting, ordering by a key, and removing duplicates.

use super::{builtin_table, list_arg, proc_arg};
use super::{fixed_args, leading_args};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::{write_string, Entries, Value};
use std::collections::HashMap;
use std::rc::Rc;

builtin_table! {
    /// `(group-by f xs)`: a map from each key `(f x)` to the elements with that key, in order. `(group-by even? '(1 2 3))` ⇒ `{"false" (1 3) "true" (2)}`
    "group-by", 2, Some(2) => group_by;
    /// `(frequencies xs)`: a map from each distinct element to how often it occurs. `(frequencies '("a" "b" "a"))` ⇒ `{"a" 2 "b" 1}`
    "frequencies", 1, Some(1) => frequencies;
    /// `(sort-by f xs less?)`: `xs` ordered by the keys `(f x)`, each computed once; stable. `(sort-by length '("ccc" "a" "bb"))` ⇒ `("a" "bb" "ccc")`
    "sort-by", 2, Some(3) => sort_by;
    /// `(distinct xs)`: the elements without repeats (`equal?`), first occurrences in order. `(distinct '(1 2 1 3 2))` ⇒ `(1 2 3)`
    "distinct", 1, Some(1) => distinct;
}

/// The map key a grouping value stands for: strings as they are, keywords and symbols by
/// name, anything else in its canonical printed form (`1` → `"1"`), since map keys are strings.
fn key_text(v: &Value) -> Rc<str> {
    match v.name_text() {
        Some(name) => Rc::from(name),
        None => Rc::from(write_string(v).as_str()),
    }
}

fn group_by(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("group-by", args)?;
    let f = proc_arg("group-by", f)?;
    let mut groups: indexmap::IndexMap<Rc<str>, Vec<Value>> = indexmap::IndexMap::new();
    for x in list_arg("group-by", xs)?.iter() {
        let key = key_text(&interp.apply(f, std::slice::from_ref(&x), env)?);
        groups.entry(key).or_default().push(x);
    }
    let entries: Entries = groups
        .into_iter()
        .map(|(k, xs)| (k, Value::list(xs)))
        .collect();
    Ok(Value::map(entries))
}

fn frequencies(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let mut counts: indexmap::IndexMap<Rc<str>, i64> = indexmap::IndexMap::new();
    let [xs] = fixed_args("frequencies", args)?;
    for (i, x) in list_arg("frequencies", xs)?.iter().enumerate() {
        interp.poll_at(i)?;
        *counts.entry(key_text(&x)).or_default() += 1;
    }
    let entries: Entries = counts
        .into_iter()
        .map(|(k, n)| (k, Value::Int(n)))
        .collect();
    Ok(Value::map(entries))
}

fn sort_by(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let ([f, xs], less) = leading_args("sort-by", args)?;
    let f = proc_arg("sort-by", f)?;
    let default_less =
        Value::Builtin(super::lookup("<").ok_or_else(|| Error::eval("sort-by: no <"))?);
    let less = match less.first() {
        Some(l) => proc_arg("sort-by", l)?,
        None => &default_less,
    };
    let items = list_arg("sort-by", xs)?.to_vec();
    let mut keys = Vec::with_capacity(items.len());
    for x in &items {
        keys.push(interp.apply(f, std::slice::from_ref(x), env)?);
    }
    // Sorts positions by their keys, so each key is computed once.
    let positions = (0..items.len() as i64).map(Value::Int).collect();
    let key_at = |v: &Value| match v {
        Value::Int(i) => keys.get(*i as usize).cloned().unwrap_or(Value::Nil),
        _ => Value::Nil,
    };
    let sorted = super::lists::merge_sort(positions, |a, b| {
        Ok(interp
            .apply(less, &[key_at(a), key_at(b)], env)?
            .is_truthy())
    })?;
    Ok(Value::list(
        sorted
            .iter()
            .filter_map(|p| match p {
                Value::Int(i) => items.get(*i as usize).cloned(),
                _ => None,
            })
            .collect(),
    ))
}

fn distinct(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    // Buckets by printed form, then `equal?` within a bucket: printing is not injective
    // for procedures, which two different closures of one name share.
    let mut seen: HashMap<String, Vec<Value>> = HashMap::new();
    let mut kept = Vec::new();
    let [xs] = fixed_args("distinct", args)?;
    for (i, x) in list_arg("distinct", xs)?.iter().enumerate() {
        interp.poll_at(i)?;
        let bucket = seen.entry(write_string(&x)).or_default();
        if !bucket.iter().any(|y| y.equal(&x)) {
            bucket.push(x.clone());
            kept.push(x);
        }
    }
    Ok(Value::list(kept))
}
