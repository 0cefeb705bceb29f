//! Values: what expressions evaluate to.
//!
//! `Value` is 16 bytes and cheap to clone (numbers inline, everything else one `Rc`).
//! A symbol or keyword is an interned `Sym` inline, or — made from data at run time
//! under a name nothing interned — a data symbol holding its own name, freed with the
//! data. The two are the same symbol to every operation (see `crate::symbol`).
//! Values are single-threaded (`Rc`); concurrency in `pmap` comes from running each
//! item's evaluation as a coroutine on the interpreter thread while the blocking work
//! (a script, an HTTP request) runs on worker threads — see `docs/ARCHITECTURE.md`.

pub mod bounds;
mod json;
pub mod list;
mod print;

pub use crate::terminal::terminal_safe;
pub use json::{from_json, parse_json, to_json, to_json_polled, to_json_text};
pub use list::List;
pub use print::{
    counted, display_string, display_string_checked, truncate_text, write_prefix, write_string,
    write_string_checked,
};

use crate::builtins::Builtin;
use crate::eval::env::Frame;
use crate::eval::Closure;
use crate::symbol::Sym;
use crate::task::Task;
use indexmap::IndexMap;
use list::Block;
use std::collections::HashSet;
use std::rc::Rc;

/// The name a data symbol or keyword holds (boxed so the `Rc` is one word).
pub type DataName = Rc<Box<str>>;

/// A map's entries: string keys in insertion order.
pub type Entries = IndexMap<Rc<str>, Value>;

/// A map value. `task_result` marks the maps that tasks return (SPEC §6): they print
/// and read like any map, but only they are passed through unwrapped by `sequential`.
#[derive(Clone, Default)]
pub struct Map {
    pub entries: Entries,
    pub task_result: bool,
}

impl Map {
    pub fn new(entries: Entries) -> Map {
        Map {
            entries,
            task_result: false,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if self.entries.values().any(Value::owns_nested) {
            let values: Vec<Value> = std::mem::take(&mut self.entries).into_values().collect();
            dismantle(values);
        }
    }
}

/// `repr(u32)` fixes the layout — a 4-byte tag, then the payload at offset 4 or 8 — so a
/// value moves as two aligned words; the default layout packed payloads from offset 1,
/// and the partial copies stalled store forwarding on the evaluator's hot path.
#[derive(Clone, Default)]
#[repr(u32)]
pub enum Value {
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    Symbol(Sym),
    Keyword(Sym),
    /// A symbol made from data (`read`, `string->symbol`) whose name was not interned:
    /// the same symbol as an interned one of that name, but freed with the data.
    DataSymbol(DataName),
    /// A keyword made from data whose name was not interned, as `DataSymbol`.
    DataKeyword(DataName),
    /// A list view `(top, block)`: see [`List`]. Two fields rather than a `List` so
    /// `Value` stays 16 bytes.
    List(u32, Option<Rc<Block>>),
    Map(Rc<Map>),
    Closure(Rc<Closure>),
    Builtin(&'static Builtin),
    Task(Rc<Task>),
    /// The value of `taskLibrary`: reads like a map from task names to tasks.
    Library,
    /// The contents of a slot that is declared but not yet initialised (`letrec`).
    Undefined,
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(s.into()))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::from(List::from_vec(items))
    }

    pub fn empty_list() -> Value {
        Value::List(0, None)
    }

    pub fn map(entries: Entries) -> Value {
        Value::Map(Rc::new(Map::new(entries)))
    }

    /// The keyword `name` of code: interned.
    pub fn keyword(name: &str) -> Value {
        Value::Keyword(Sym::new(name))
    }

    /// The symbol `name` of code: interned.
    pub fn symbol(name: &str) -> Value {
        Value::Symbol(Sym::new(name))
    }

    /// The symbol `name` made from data: the interned one if there is one, else a data
    /// symbol, so reading unbounded input never grows the interner.
    pub fn data_symbol(name: &str) -> Value {
        match Sym::lookup(name) {
            Some(sym) => Value::Symbol(sym),
            None => Value::DataSymbol(Rc::new(name.into())),
        }
    }

    /// The keyword `name` made from data, as [`Value::data_symbol`].
    pub fn data_keyword(name: &str) -> Value {
        match Sym::lookup(name) {
            Some(sym) => Value::Keyword(sym),
            None => Value::DataKeyword(Rc::new(name.into())),
        }
    }

    /// A symbol's name, interned or not.
    pub fn symbol_name(&self) -> Option<&str> {
        match self {
            Value::Symbol(s) => Some(s.name()),
            Value::DataSymbol(name) => Some(name),
            _ => None,
        }
    }

    /// A keyword's name (without the colon), interned or not.
    pub fn keyword_name(&self) -> Option<&str> {
        match self {
            Value::Keyword(k) => Some(k.name()),
            Value::DataKeyword(name) => Some(name),
            _ => None,
        }
    }

    /// The name of a symbol or a keyword.
    pub fn symbol_or_keyword_name(&self) -> Option<&str> {
        self.symbol_name().or_else(|| self.keyword_name())
    }

    /// A string's text or a symbol's or keyword's name: what names are given as.
    pub fn name_text(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            other => other.symbol_or_keyword_name(),
        }
    }

    /// Whether this is the keyword `sym`: by index when interned, by name when not.
    pub fn is_keyword_sym(&self, sym: Sym) -> bool {
        match self {
            Value::Keyword(k) => *k == sym,
            Value::DataKeyword(name) => ***name == *sym.name(),
            _ => false,
        }
    }

    /// Whether this is the symbol `sym`, as [`Value::is_keyword_sym`].
    pub fn is_symbol_sym(&self, sym: Sym) -> bool {
        match self {
            Value::Symbol(s) => *s == sym,
            Value::DataSymbol(name) => ***name == *sym.name(),
            _ => false,
        }
    }

    /// Only `false` and `nil` are false.
    #[inline]
    pub fn is_truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    pub fn as_list(&self) -> Option<List> {
        match self {
            Value::List(top, block) => Some(List::from_parts(block.clone(), *top)),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_procedure(&self) -> bool {
        matches!(self, Value::Closure(_) | Value::Builtin(_) | Value::Task(_))
    }

    /// What identifies a list view or a map (`None` for anything else): equal keys
    /// mean the same container.
    pub fn container_identity(&self) -> Option<(usize, u32)> {
        match self {
            Value::List(..) => self.as_list().map(|l| l.identity()),
            Value::Map(m) => Some((Rc::as_ptr(m) as usize, u32::MAX)),
            _ => None,
        }
    }

    /// Whether a container is referred to from more than one place besides this value
    /// (which the caller holds as its own copy): only such a container can be reached
    /// twice in one walk.
    pub fn is_shared(&self) -> bool {
        match self {
            Value::List(_, Some(block)) => Rc::strong_count(block) > 2,
            Value::Map(m) => Rc::strong_count(m) > 2,
            _ => false,
        }
    }

    /// Whether dropping this may free more values nested inside it: a list, a map or a
    /// closure (whose environment holds values).
    fn owns_nested(&self) -> bool {
        matches!(
            self,
            Value::List(_, Some(_)) | Value::Map(_) | Value::Closure(_)
        )
    }

    /// Whether this value owns nothing, so dropping it does nothing.
    #[inline(always)]
    pub(crate) fn is_atom(&self) -> bool {
        matches!(
            self,
            Value::Nil
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Symbol(_)
                | Value::Keyword(_)
                | Value::Builtin(_)
                | Value::Library
                | Value::Undefined
                | Value::List(_, None)
        )
    }

    /// Whether this is the last owner of something that holds more values, so dropping
    /// it would free them in turn.
    pub(crate) fn frees_nested(&self) -> bool {
        match self {
            Value::List(_, Some(block)) => Rc::strong_count(block) == 1,
            Value::Map(map) => Rc::strong_count(map) == 1,
            Value::Closure(closure) => Rc::strong_count(closure) == 1,
            _ => false,
        }
    }

    /// The type's name as errors and `type-of` give it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Symbol(_) | Value::DataSymbol(_) => "symbol",
            Value::Keyword(_) | Value::DataKeyword(_) => "keyword",
            Value::List(..) => "list",
            Value::Map(m) if m.task_result => "task-result",
            Value::Map(_) => "map",
            Value::Closure(_) | Value::Builtin(_) => "procedure",
            Value::Task(_) => "task",
            Value::Library => "task-library",
            Value::Undefined => "undefined",
        }
    }

    /// Structural equality (`equal?`): numbers of different types are different.
    pub fn equal(&self, other: &Value) -> bool {
        match self.equal_polled(other, || Ok::<(), std::convert::Infallible>(())) {
            Ok(same) => same,
            Err(never) => match never {},
        }
    }

    /// Structural equality that calls `poll` now and then, so a long comparison can be
    /// stopped (Ctrl-C, the time limit). Iterative, so data nested a million deep
    /// compares without exhausting the stack; pairs of containers already met are not
    /// compared again, so data that shares structure compares in time proportional to
    /// its distinct nodes rather than to the tree it describes.
    pub fn equal_polled<E>(
        &self,
        other: &Value,
        mut poll: impl FnMut() -> std::result::Result<(), E>,
    ) -> std::result::Result<bool, E> {
        let mut pending = vec![(self.clone(), other.clone())];
        let mut met: HashSet<((usize, u32), (usize, u32))> = HashSet::new();
        let mut steps = 0u64;
        while let Some((a, b)) = pending.pop() {
            steps += 1;
            if steps.is_multiple_of(crate::value::bounds::POLL_EVERY) {
                poll()?;
            }
            // A pair can come back only if both sides are shared.
            let may_recur = a.is_shared() && b.is_shared();
            match (&a, &b) {
                (Value::List(..), Value::List(..)) => {
                    let (Some(x), Some(y)) = (a.as_list(), b.as_list()) else {
                        return Ok(false);
                    };
                    if x.ptr_eq(&y) {
                        continue;
                    }
                    if x.len() != y.len() {
                        return Ok(false);
                    }
                    if may_recur && !met.insert((x.identity(), y.identity())) {
                        continue;
                    }
                    pending.extend(x.iter().zip(y.iter()));
                }
                (Value::Map(x), Value::Map(y)) => {
                    if Rc::ptr_eq(x, y) {
                        continue;
                    }
                    if x.entries.len() != y.entries.len() {
                        return Ok(false);
                    }
                    if may_recur
                        && !met.insert(((Rc::as_ptr(x) as usize, 0), (Rc::as_ptr(y) as usize, 0)))
                    {
                        continue;
                    }
                    for (k, v) in &x.entries {
                        match y.entries.get(k) {
                            Some(w) => pending.push((v.clone(), w.clone())),
                            None => return Ok(false),
                        }
                    }
                }
                _ if !a.atom_equal(&b) => return Ok(false),
                _ => {}
            }
        }
        Ok(true)
    }

    /// Equality of two values that are not both lists or both maps.
    fn atom_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Symbol(a), Value::Symbol(b)) | (Value::Keyword(a), Value::Keyword(b)) => a == b,
            // A data symbol may share its name with an interned one (interned since).
            (Value::Symbol(_) | Value::DataSymbol(_), Value::Symbol(_) | Value::DataSymbol(_)) => {
                self.symbol_name() == other.symbol_name()
            }
            (
                Value::Keyword(_) | Value::DataKeyword(_),
                Value::Keyword(_) | Value::DataKeyword(_),
            ) => self.keyword_name() == other.keyword_name(),
            (Value::Closure(a), Value::Closure(b)) => Rc::ptr_eq(a, b),
            (Value::Builtin(a), Value::Builtin(b)) => std::ptr::eq(*a, *b),
            (Value::Task(a), Value::Task(b)) => Rc::ptr_eq(a, b),
            (Value::Library, Value::Library) => true,
            _ => false,
        }
    }

    /// `=`: numbers compare numerically, everything else structurally.
    pub fn num_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Float(b)) | (Value::Float(b), Value::Int(a)) => {
                compare_int_float(*a, *b) == Some(std::cmp::Ordering::Equal)
            }
            _ => self.equal(other),
        }
    }

    /// `eq?`: identity for procedures, tasks and containers, equality for atoms.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::List(..), Value::List(..)) => match (self.as_list(), other.as_list()) {
                (Some(a), Some(b)) => a.ptr_eq(&b),
                _ => false,
            },
            (Value::Map(a), Value::Map(b)) => Rc::ptr_eq(a, b),
            (Value::Str(a), Value::Str(b)) => a == b,
            _ => self.equal(other),
        }
    }
}

/// Orders an integer and a float exactly (no rounding of the integer to f64, so
/// 2^53 + 1 is greater than 2^53 as a float); `None` when the float is NaN.
pub fn compare_int_float(int: i64, float: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    // 2^63 as f64: every float at or above it is greater than any i64.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if float.is_nan() {
        return None;
    }
    if float >= TWO_63 {
        return Some(Ordering::Less);
    }
    if float < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let whole = float.trunc();
    // In range and integral, so the conversion is exact.
    let by_whole = int.cmp(&(whole as i64));
    Some(by_whole.then(0.0.partial_cmp(&(float - whole))?))
}

impl From<List> for Value {
    fn from(list: List) -> Value {
        let (block, top) = list.into_parts();
        Value::List(top, block)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(Rc::new(s))
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&write_string(self))
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&display_string(self))
    }
}

/// Drops values without recursion: containers this is the last owner of are opened and
/// their contents queued, so a million-deep nest costs heap, not stack.
fn dismantle(values: Vec<Value>) {
    dismantle_all(values, Vec::new());
}

/// [`dismantle`] for values and environment frames together: a closure's frame holds
/// values, which hold closures, so a chain of a million closures each capturing the one
/// before is opened here link by link instead of dropped recursively.
pub(crate) fn dismantle_all(mut values: Vec<Value>, mut frames: Vec<Rc<Frame>>) {
    loop {
        if let Some(value) = values.pop() {
            match value {
                Value::List(_, Some(block)) => {
                    if let Ok(mut block) = Rc::try_unwrap(block) {
                        block.take_contents(&mut values);
                    }
                }
                Value::Map(map) => {
                    if let Ok(mut map) = Rc::try_unwrap(map) {
                        values.extend(std::mem::take(&mut map.entries).into_values());
                    }
                }
                Value::Closure(closure) => {
                    if let Ok(Closure { env, .. }) = Rc::try_unwrap(closure) {
                        frames.extend(env);
                    }
                }
                other => drop(other),
            }
        } else if let Some(frame) = frames.pop() {
            if let Ok(mut frame) = Rc::try_unwrap(frame) {
                frame.take_contents(&mut values, &mut frames);
            }
        } else {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn truth() {
        assert!(!Value::Nil.is_truthy());
        assert!(!Value::Bool(false).is_truthy());
        assert!(Value::Int(0).is_truthy());
        assert!(Value::str("").is_truthy());
        assert!(Value::empty_list().is_truthy());
    }

    #[test]
    fn equality_kinds() {
        assert!(Value::Int(1).num_equal(&Value::Float(1.0)));
        assert!(!Value::Int(1).equal(&Value::Float(1.0)));
        let a = Value::list(vec![Value::Int(1), Value::str("x")]);
        let b = Value::list(vec![Value::Int(1), Value::str("x")]);
        assert!(a.equal(&b));
        assert!(!a.identical(&b));
        assert!(a.identical(&a.clone()));
        assert!(!Value::empty_list().equal(&Value::Nil));
    }

    #[test]
    fn deep_nests_compare_without_recursion() {
        let nest = |leaf: i64| {
            let mut v = Value::Int(leaf);
            for _ in 0..1_000_000 {
                v = Value::list(vec![v]);
            }
            v
        };
        let (a, b, c) = (nest(1), nest(1), nest(2));
        assert!(a.equal(&b));
        assert!(!a.equal(&c));
    }

    #[test]
    fn data_symbols_are_the_symbols_of_their_names() {
        let data = Value::data_symbol("value-test-never-interned");
        assert!(matches!(data, Value::DataSymbol(_)));
        assert_eq!(Sym::lookup("value-test-never-interned"), None);
        assert!(data.equal(&Value::data_symbol("value-test-never-interned")));
        assert!(data.identical(&Value::data_symbol("value-test-never-interned")));
        assert!(!data.equal(&Value::data_keyword("value-test-never-interned")));
        assert_eq!(data.type_name(), "symbol");
        assert_eq!(write_string(&data), "value-test-never-interned");
        // Interned later (code named it), the old data symbol is still that symbol.
        let sym = Sym::new("value-test-never-interned");
        assert!(data.identical(&Value::Symbol(sym)));
        assert!(Value::Symbol(sym).equal(&data));
        assert!(data.is_symbol_sym(sym));
        assert!(matches!(
            Value::data_symbol("value-test-never-interned"),
            Value::Symbol(s) if s == sym
        ));
    }

    #[test]
    fn data_keywords_print_and_compare_as_keywords() {
        let data = Value::data_keyword("value-test-kw-never-interned");
        assert!(matches!(data, Value::DataKeyword(_)));
        assert_eq!(data.type_name(), "keyword");
        assert_eq!(write_string(&data), ":value-test-kw-never-interned");
        assert_eq!(data.keyword_name(), Some("value-test-kw-never-interned"));
        assert_eq!(data.symbol_name(), None);
        let sym = Sym::new("value-test-kw-never-interned");
        assert!(data.is_keyword_sym(sym));
        assert!(data.equal(&Value::Keyword(sym)));
        assert!(!data.equal(&Value::Symbol(sym)));
    }

    #[test]
    fn deep_map_nest_drops_without_recursion() {
        let mut v = Value::Nil;
        for _ in 0..500_000 {
            let mut e = Entries::new();
            e.insert(Rc::from("a"), v);
            v = Value::map(e);
        }
        drop(v);
    }
}
