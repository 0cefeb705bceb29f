//! Maps (string keys, insertion order) and the functional forms of path access.
//! Maps are values: `assoc` and `dissoc` return new maps.

use super::{builtin_table, str_arg, type_error};
use super::{fixed_args, leading_args};
use crate::error::{Error, Result};
use crate::eval::env::Env;
use crate::eval::path::{step_into, StepFailure};
use crate::eval::reader::{parse_path_text, PathStep};
use crate::eval::Interp;
use crate::source::Span;
use crate::value::{Entries, Value};
use std::borrow::Cow;
use std::rc::Rc;

builtin_table! {
    /// `(hash-map k v …)`: a map of the pairs; keyword keys mean their names. `(hash-map :a 1)` ⇒ `{"a" 1}`
    "hash-map", 0, None => hash_map;
    /// `(get coll key default?)`: a map's value (nil or `default` when absent) or a list's element. `(get {"a" 1} "a")` ⇒ `1`
    "get", 2, Some(3) => get;
    /// `(get-in coll keys default?)`: `get` along a list of keys and indices. `(get-in {"a" [1 2]} ["a" 1])` ⇒ `2`
    "get-in", 2, Some(3) => get_in;
    /// `(path v "a.b[0]")`: path access as a function. `(path {"a" [5]} "a[0]")` ⇒ `5`
    "path", 2, Some(2) => path;
    /// `(assoc m k v …)`: a new map with the pairs set. `(assoc {} "a" 1)` ⇒ `{"a" 1}`
    "assoc", 3, None => assoc;
    /// `(dissoc m k …)`: a new map without the keys. `(dissoc {"a" 1} "a")` ⇒ `{}`
    "dissoc", 1, None => dissoc;
    /// `(keys m)`: the keys in insertion order (of a task, its fields; of `taskLibrary`, the task types). `(keys {"a" 1 "b" 2})` ⇒ `("a" "b")`
    "keys", 1, Some(1) => keys;
    /// `(values m)`: the values in insertion order (a task and `taskLibrary` read as maps too). `(values {"a" 1 "b" 2})` ⇒ `(1 2)`
    "values", 1, Some(1) => values;
    /// `(has-key? m k)`: does the map have the key? `(has-key? {"a" nil} "a")` ⇒ `true`
    "has-key?", 2, Some(2) => has_key;
    /// `(merge m …)`: the maps merged, later keys winning. `(merge {"a" 1} {"a" 2})` ⇒ `{"a" 2}`
    "merge", 0, None => merge;
    /// `(map? v)`: is it a map (task results included)? `(map? {})` ⇒ `true`
    "map?", 1, Some(1) => is_map;
}

/// A map key from a string, keyword or symbol.
pub fn key_of(who: &str, v: &Value) -> Result<Rc<str>> {
    match v.name_text() {
        Some(name) => Ok(Rc::from(name)),
        None => Err(type_error(who, "a string or keyword key", v)),
    }
}

/// The entries of a map, borrowed (nil is the empty map).
fn entries_of<'a>(who: &str, v: &'a Value) -> Result<Cow<'a, Entries>> {
    match v {
        Value::Map(m) => Ok(Cow::Borrowed(&m.entries)),
        Value::Nil => Ok(Cow::Owned(Entries::new())),
        other => Err(type_error(who, "a map", other)),
    }
}

/// The entries of a value read as a map: a map, nil (empty), a task (its definition) or
/// `taskLibrary` (`{type {subtype {name task}}}`). Tasks and the library are read-only:
/// only the builtins that read use this.
fn readable_entries<'a>(interp: &Interp, who: &str, v: &'a Value) -> Result<Cow<'a, Entries>> {
    match v {
        Value::Task(task) => Ok(Cow::Owned(task.entries())),
        Value::Library => Ok(Cow::Owned(interp.tasks.library_entries())),
        other => entries_of(who, other),
    }
}

/// A copy of a map's entries to edit; the limits are checked before a large copy (an
/// `assoc` in a loop over a big map copies it every step).
fn map_entries(interp: &Interp, who: &str, v: &Value) -> Result<Entries> {
    let entries = entries_of(who, v)?;
    interp.poll_before(entries.len())?;
    Ok(entries.into_owned())
}

fn hash_map(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (pairs, []) = args.as_chunks() else {
        return Err(Error::eval("hash-map: expected keys and values in pairs"));
    };
    let mut entries = Entries::with_capacity(pairs.len());
    for [key, value] in pairs {
        entries.insert(key_of("hash-map", key)?, value.clone());
    }
    Ok(Value::map(entries))
}

fn step_for(who: &str, key: &Value) -> Result<PathStep> {
    match key {
        Value::Int(i) => Ok(PathStep::Index(*i)),
        other => key_of(who, other).map(PathStep::Key),
    }
}

/// One lenient lookup step: nil and absent keys and indices give `None`; a key that is
/// present with the value nil gives nil, not the default.
fn lookup(interp: &Interp, who: &str, coll: &Value, key: &Value) -> Result<Option<Value>> {
    let step = step_for(who, key)?;
    match (coll, &step) {
        (Value::Nil, _) => return Ok(None),
        (Value::Map(m), PathStep::Key(k)) => return Ok(m.get(k).cloned()),
        _ => {}
    }
    match step_into(coll, &step, interp) {
        Ok(Value::Nil) => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(StepFailure::Nil | StepFailure::OutOfRange(_)) => Ok(None),
        Err(StepFailure::WrongType(t)) => Err(Error::eval(format!(
            "{who}: cannot look up {} in {}",
            crate::value::write_string(key),
            super::article(t)
        ))),
    }
}

fn get(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([coll, key], default) = leading_args("get", args)?;
    let found = lookup(interp, "get", coll, key)?;
    Ok(found
        .or_else(|| default.first().cloned())
        .unwrap_or(Value::Nil))
}

fn get_in(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([coll, keys], default) = leading_args("get-in", args)?;
    let keys = super::list_arg("get-in", keys)?;
    let mut current = Some(coll.clone());
    for key in keys.iter() {
        current = match current {
            Some(c) => lookup(interp, "get-in", &c, &key)?,
            None => None,
        };
    }
    Ok(current
        .or_else(|| default.first().cloned())
        .unwrap_or(Value::Nil))
}

fn path(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [value, text] = fixed_args("path", args)?;
    let text = str_arg("path", text)?;
    let steps = parse_path_text(text, Span::generated())
        .map_err(|e| Error::eval(e.message().to_owned()))?;
    let spec = crate::eval::reader::PathSpec {
        text: text.to_owned(),
        base: crate::symbol::Sym::new(""),
        steps,
    };
    crate::eval::access_path(value, &spec, interp).map_err(|e| e.into_error())
}

fn assoc(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([map], pairs) = leading_args("assoc", args)?;
    let (pairs, []) = pairs.as_chunks() else {
        return Err(Error::eval(
            "assoc: expected a map then keys and values in pairs",
        ));
    };
    let mut entries = map_entries(interp, "assoc", map)?;
    for [key, value] in pairs {
        entries.insert(key_of("assoc", key)?, value.clone());
    }
    Ok(interp.layers.edited(map, entries))
}

fn dissoc(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([map], keys) = leading_args("dissoc", args)?;
    let mut entries = map_entries(interp, "dissoc", map)?;
    for k in keys {
        entries.shift_remove(&*key_of("dissoc", k)?);
    }
    Ok(interp.layers.edited(map, entries))
}

fn keys(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [map] = fixed_args("keys", args)?;
    let entries = readable_entries(interp, "keys", map)?;
    interp.poll_before(entries.len())?;
    Ok(Value::list(
        entries.keys().map(|k| Value::from(&**k)).collect(),
    ))
}

fn values(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [map] = fixed_args("values", args)?;
    let entries = readable_entries(interp, "values", map)?;
    interp.poll_before(entries.len())?;
    Ok(Value::list(entries.values().cloned().collect()))
}

fn has_key(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [map, key] = fixed_args("has-key?", args)?;
    let entries = readable_entries(interp, "has-key?", map)?;
    Ok(Value::Bool(
        entries.contains_key(&*key_of("has-key?", key)?),
    ))
}

fn merge(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let mut entries = Entries::new();
    for m in args {
        let more = entries_of("merge", m)?;
        interp.poll_before(more.len())?;
        entries.extend(more.iter().map(|(k, v)| (Rc::clone(k), v.clone())));
    }
    Ok(match args.first() {
        Some(first) => interp.layers.edited(first, entries),
        None => Value::map(entries),
    })
}

fn is_map(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("map?", args)?;
    Ok(Value::Bool(matches!(v, Value::Map(_))))
}
