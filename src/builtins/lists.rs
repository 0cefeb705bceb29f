//! Lists: construction, access and the higher-order functions. All run in linear time
//! on long lists and call procedures without nesting the frame count.

use super::predicate::{for_item, judge};
use super::{arity_error, fixed_args, leading_args};
use super::{builtin_table, index_arg, int_arg, list_arg, proc_arg, type_error};
use crate::bounds::{check_list_length, Budget, POLL_EVERY};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::{List, Value};

builtin_table! {
    /// `(list x…)`: a list of the arguments. `(list 1 2)` ⇒ `(1 2)`
    "list", 0, None => list;
    /// `(cons x xs)`: `xs` with `x` in front, in O(1). `(cons 1 '(2))` ⇒ `(1 2)`
    "cons", 2, Some(2) => cons;
    /// `(car xs)`: the first element. `(car '(1 2))` ⇒ `1`
    "car", 1, Some(1) => car;
    /// `(cdr xs)`: all but the first, in O(1). `(cdr '(1 2))` ⇒ `(2)`
    "cdr", 1, Some(1) => cdr;
    /// `(first xs)`: the first element, nil for an empty list. `(first '(1 2))` ⇒ `1`
    "first", 1, Some(1) => first;
    /// `(rest xs)`: all but the first. `(rest '(1 2))` ⇒ `(2)`
    "rest", 1, Some(1) => rest;
    /// `(nth xs i)`: the element at index `i` (0-based). `(nth '(a b) 1)` ⇒ `b`
    "nth", 2, Some(2) => nth;
    /// `(length xs)`: the number of elements of a list, map or string. `(length '(1 2))` ⇒ `2`
    "length", 1, Some(1) => length;
    /// `(append xs…)`: the lists joined; the last is shared. `(append '(1) '(2 3))` ⇒ `(1 2 3)`
    "append", 0, None => append;
    /// `(reverse xs)`: the elements in reverse order. `(reverse '(1 2 3))` ⇒ `(3 2 1)`
    "reverse", 1, Some(1) => reverse;
    /// `(list? v)`: is it a list? `(list? '())` ⇒ `true`
    "list?", 1, Some(1) => is_list;
    /// `(null? v)`: is it `()` or nil? `(null? '())` ⇒ `true`
    "null?", 1, Some(1) => is_null;
    /// `(empty? v)`: is it `()`, `""`, `{}` or nil? `(empty? "")` ⇒ `true`
    "empty?", 1, Some(1) => is_empty;
    /// `(range end)`, `(range start end step?)`: integers from start below end. `(range 3)` ⇒ `(0 1 2)`
    "range", 1, Some(3) => range;
    /// `(map f xs…)`: `f` applied to each element (to parallel elements of several lists). `(map abs '(-1 2))` ⇒ `(1 2)`
    "map", 2, None => map;
    /// `(filter pred xs)`: the elements for which `pred` is true. `(filter odd? '(1 2 3))` ⇒ `(1 3)`
    "filter", 2, Some(2) => filter;
    /// `(remove pred xs)`: the elements for which `pred` is false. `(remove odd? '(1 2 3 4))` ⇒ `(2 4)`
    "remove", 2, Some(2) => remove;
    /// `(find pred xs)`: the first element for which `pred` is true, or nil. `(find even? '(1 2 3))` ⇒ `2`
    "find", 2, Some(2) => find;
    /// `(count pred xs)`: how many elements satisfy `pred`. `(count odd? '(1 2 3))` ⇒ `2`
    "count", 2, Some(2) => count;
    /// `(reduce f init xs)`: folds left, calling `(f acc x)`. `(reduce + 0 '(1 2 3))` ⇒ `6`
    "reduce", 3, Some(3) => reduce;
    /// `(for-each f xs…)`: calls `f` on each element for its effect; returns nil. `(for-each println '(1 2))`
    "for-each", 2, None => for_each;
    /// `(sort xs less?)`: a stable sort, by `<` when no comparison is given. `(sort '(3 1 2))` ⇒ `(1 2 3)`
    "sort", 1, Some(2) => sort;
    /// `(last xs)`: the last element, nil for an empty list. `(last '(1 2 3))` ⇒ `3`
    "last", 1, Some(1) => last;
    /// `(take xs n)`: the first `n` elements. `(take '(1 2 3) 2)` ⇒ `(1 2)`
    "take", 2, Some(2) => take;
    /// `(drop xs n)`: all but the first `n` elements, shared. `(drop '(1 2 3) 2)` ⇒ `(3)`
    "drop", 2, Some(2) => drop;
    /// `(zip xs ys…)`: lists of parallel elements, as long as the shortest. `(zip '(1 2) '(a b))` ⇒ `((1 a) (2 b))`
    "zip", 1, None => zip;
    /// `(any? pred xs)`: is `pred` true for some element? `(any? odd? '(2 3))` ⇒ `true`
    "any?", 2, Some(2) => any;
    /// `(every? pred xs)`: is `pred` true for every element? `(every? odd? '(1 3))` ⇒ `true`
    "every?", 2, Some(2) => every;
    /// `(contains? coll x)`: list member (by `equal?`), map key, or substring. `(contains? '(1 2) 2)` ⇒ `true`
    "contains?", 2, Some(2) => contains;
    /// `(index-of xs x)`: the index of the first element `equal?` to `x`, or nil. `(index-of '(a b) 'b)` ⇒ `1`
    "index-of", 2, Some(2) => index_of;
    /// `(flatten xs)`: nested lists flattened one level deep per nesting. `(flatten '(1 (2 (3))))` ⇒ `(1 2 3)`
    "flatten", 1, Some(1) => flatten;
}

fn list(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    Ok(Value::list(args.to_vec()))
}

fn cons(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [x, xs] = fixed_args("cons", args)?;
    Ok(Value::from(list_arg("cons", xs)?.cons(x.clone())))
}

/// The first element (nil for an empty list), errors naming the builtin `who`.
fn head(who: &str, xs: &Value) -> Result<Value> {
    Ok(list_arg(who, xs)?.first().unwrap_or(Value::Nil))
}

fn tail(who: &str, xs: &Value) -> Result<Value> {
    Ok(Value::from(list_arg(who, xs)?.rest()))
}

fn car(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("car", args)?;
    head("car", xs)
}

fn first(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("first", args)?;
    head("first", xs)
}

fn cdr(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("cdr", args)?;
    tail("cdr", xs)
}

fn rest(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("rest", args)?;
    tail("rest", xs)
}

fn nth(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs, i] = fixed_args("nth", args)?;
    let (xs, i) = (list_arg("nth", xs)?, index_arg("nth", i)?);
    xs.get(i).ok_or_else(|| {
        Error::eval(format!(
            "nth: index {i} is out of range (length {})",
            xs.len()
        ))
    })
}

fn length(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("length", args)?;
    let n = match v {
        Value::Str(s) => s.chars().count(),
        Value::Map(m) => m.entries.len(),
        Value::List(..) | Value::Nil => list_arg("length", v)?.len(),
        other => return Err(type_error("length", "a list, string or map", other)),
    };
    Ok(Value::Int(n as i64))
}

fn append(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let Some((last, init)) = args.split_last() else {
        return Ok(Value::empty_list());
    };
    let mut result = list_arg("append", last)?;
    let mut total = result.len() as u128;
    for a in init {
        total += list_arg("append", a)?.len() as u128;
    }
    check_list_length("append", total)?;
    // Each list but the last is copied in one step: the limits are checked before.
    interp.poll_before(total as usize)?;
    for a in init.iter().rev() {
        result = list_arg("append", a)?.append(&result);
    }
    Ok(Value::from(result))
}

fn reverse(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("reverse", args)?;
    let xs = list_arg("reverse", xs)?;
    interp.poll_before(xs.len())?;
    let mut items = xs.to_vec();
    items.reverse();
    Ok(Value::list(items))
}

fn is_list(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("list?", args)?;
    Ok(Value::Bool(matches!(v, Value::List(..))))
}

fn is_null(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("null?", args)?;
    Ok(Value::Bool(matches!(v, Value::Nil | Value::List(_, None))))
}

fn is_empty(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("empty?", args)?;
    Ok(Value::Bool(match v {
        Value::Nil | Value::List(_, None) => true,
        Value::Str(s) => s.is_empty(),
        Value::Map(m) => m.entries.is_empty(),
        Value::List(..) => false,
        other => return Err(type_error("empty?", "a list, string or map", other)),
    }))
}

fn range(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (start, end, step) = match args {
        [end] => (0, int_arg("range", end)?, 1),
        [start, end] => (int_arg("range", start)?, int_arg("range", end)?, 1),
        [start, end, step] => (
            int_arg("range", start)?,
            int_arg("range", end)?,
            int_arg("range", step)?,
        ),
        _ => return Err(arity_error("range", 1, Some(3), args.len())),
    };
    if step == 0 {
        return Err(Error::eval("range: step must not be zero"));
    }
    let count = if (step > 0 && end > start) || (step < 0 && end < start) {
        ((end as i128 - start as i128).abs() + step.unsigned_abs() as i128 - 1)
            / step.unsigned_abs() as i128
    } else {
        0
    };
    check_list_length("range", count.unsigned_abs())?;
    let mut items = Vec::with_capacity(count as usize);
    for k in 0..count as i64 {
        interp.poll_at(k as usize)?;
        items.push(Value::Int(start + k * step));
    }
    Ok(Value::list(items))
}

fn map(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let ([f], lists) = leading_args("map", args)?;
    let f = proc_arg("map", f)?;
    if let [xs] = lists {
        let xs = list_arg("map", xs)?;
        let mut out = Vec::with_capacity(xs.len());
        for (i, x) in xs.iter().enumerate() {
            out.push(interp.apply(f, &[x], env).map_err(|e| for_item(e, i))?);
        }
        return Ok(Value::list(out));
    }
    let lists = lists
        .iter()
        .map(|a| list_arg("map", a))
        .collect::<Result<Vec<_>>>()?;
    let n = lists.iter().map(List::len).min().unwrap_or(0);
    let mut iters: Vec<_> = lists.iter().map(List::iter).collect();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let row: Vec<Value> = iters.iter_mut().filter_map(Iterator::next).collect();
        out.push(interp.apply(f, &row, env).map_err(|e| for_item(e, i))?);
    }
    Ok(Value::list(out))
}

fn filter(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("filter", args)?;
    let f = proc_arg("filter", f)?;
    let mut out = Vec::new();
    for (i, x) in list_arg("filter", xs)?.iter().enumerate() {
        if judge(interp, f, std::slice::from_ref(&x), env).map_err(|e| for_item(e, i))? {
            out.push(x);
        }
    }
    Ok(Value::list(out))
}

fn remove(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("remove", args)?;
    let f = proc_arg("remove", f)?;
    let mut out = Vec::new();
    for x in list_arg("remove", xs)?.iter() {
        if !judge(interp, f, std::slice::from_ref(&x), env)? {
            out.push(x);
        }
    }
    Ok(Value::list(out))
}

fn find(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("find", args)?;
    let f = proc_arg("find", f)?;
    for x in list_arg("find", xs)?.iter() {
        if judge(interp, f, std::slice::from_ref(&x), env)? {
            return Ok(x);
        }
    }
    Ok(Value::Nil)
}

fn count(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("count", args)?;
    let f = proc_arg("count", f)?;
    let mut n = 0;
    for x in list_arg("count", xs)?.iter() {
        if judge(interp, f, std::slice::from_ref(&x), env)? {
            n += 1;
        }
    }
    Ok(Value::Int(n))
}

fn reduce(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, init, xs] = fixed_args("reduce", args)?;
    let f = proc_arg("reduce", f)?;
    let mut acc = init.clone();
    for x in list_arg("reduce", xs)?.iter() {
        acc = interp.apply(f, &[acc, x], env)?;
    }
    Ok(acc)
}

fn for_each(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let ([f], lists) = leading_args("for-each", args)?;
    let f = proc_arg("for-each", f)?;
    let lists = lists
        .iter()
        .map(|a| list_arg("for-each", a))
        .collect::<Result<Vec<_>>>()?;
    let n = lists.iter().map(List::len).min().unwrap_or(0);
    let mut iters: Vec<_> = lists.iter().map(List::iter).collect();
    for i in 0..n {
        let row: Vec<Value> = iters.iter_mut().filter_map(Iterator::next).collect();
        interp.apply(f, &row, env).map_err(|e| for_item(e, i))?;
    }
    Ok(Value::Nil)
}

fn sort(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let ([xs], less) = leading_args("sort", args)?;
    let items = list_arg("sort", xs)?.to_vec();
    let default_less = Value::Builtin(super::lookup("<").ok_or_else(|| Error::eval("sort: no <"))?);
    let less = match less.first() {
        Some(f) => proc_arg("sort", f)?,
        None => &default_less,
    };
    merge_sort(items, |a, b| {
        judge(interp, less, &[a.clone(), b.clone()], env)
    })
    .map(Value::list)
}

/// A stable bottom-up merge sort that stops at the first error of `less`. Unlike the
/// standard library's sorts it accepts any comparison, even one that is not a total
/// order (a user's procedure), without panicking.
pub(super) fn merge_sort(
    mut items: Vec<Value>,
    mut less: impl FnMut(&Value, &Value) -> Result<bool>,
) -> Result<Vec<Value>> {
    let mut width = 1;
    while width < items.len() {
        let mut merged = Vec::with_capacity(items.len());
        let mut runs = items.into_iter().peekable();
        while runs.peek().is_some() {
            let left: Vec<Value> = runs.by_ref().take(width).collect();
            let right: Vec<Value> = runs.by_ref().take(width).collect();
            let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
            while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
                // Taking from the right only when it is strictly less keeps equal items in order.
                let next = if less(r, l)? {
                    right.next()
                } else {
                    left.next()
                };
                merged.extend(next);
            }
            merged.extend(left.chain(right));
        }
        items = merged;
        width *= 2;
    }
    Ok(items)
}

fn last(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("last", args)?;
    let xs = list_arg("last", xs)?;
    Ok(xs
        .len()
        .checked_sub(1)
        .and_then(|i| xs.get(i))
        .unwrap_or(Value::Nil))
}

fn take(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs, n] = fixed_args("take", args)?;
    let (xs, n) = (list_arg("take", xs)?, index_arg("take", n)?);
    interp.poll_before(n.min(xs.len()))?;
    Ok(Value::list(xs.iter().take(n).collect()))
}

fn drop(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs, n] = fixed_args("drop", args)?;
    let (xs, n) = (list_arg("drop", xs)?, index_arg("drop", n)?);
    Ok(Value::from(xs.drop_front(n)))
}

fn zip(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let lists = args
        .iter()
        .map(|a| list_arg("zip", a))
        .collect::<Result<Vec<_>>>()?;
    let n = lists.iter().map(List::len).min().unwrap_or(0);
    let mut iters: Vec<_> = lists.iter().map(List::iter).collect();
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        interp.poll_at(i)?;
        rows.push(Value::list(
            iters.iter_mut().filter_map(Iterator::next).collect(),
        ));
    }
    Ok(Value::list(rows))
}

fn any(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("any?", args)?;
    let f = proc_arg("any?", f)?;
    for x in list_arg("any?", xs)?.iter() {
        if judge(interp, f, &[x], env)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn every(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, xs] = fixed_args("every?", args)?;
    let f = proc_arg("every?", f)?;
    for x in list_arg("every?", xs)?.iter() {
        if !judge(interp, f, &[x], env)? {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn contains(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [coll, x] = fixed_args("contains?", args)?;
    Ok(Value::Bool(match (coll, x) {
        (Value::Map(m), key) => key
            .name_text()
            .is_some_and(|name| m.entries.contains_key(name)),
        (Value::Str(s), Value::Str(sub)) => s.contains(sub.as_str()),
        (Value::Str(_), other) => {
            return Err(type_error("contains?", "a string to look for", other))
        }
        (coll, x) => position(interp, "contains?", coll, x)?.is_some(),
    }))
}

fn index_of(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs, x] = fixed_args("index-of", args)?;
    Ok(position(interp, "index-of", xs, x)?.map_or(Value::Nil, |i| Value::Int(i as i64)))
}

/// Where `x` first occurs in the list `coll` (by `equal?`), meeting the limits on a
/// long list.
fn position(interp: &Interp, who: &str, coll: &Value, x: &Value) -> Result<Option<usize>> {
    for (i, y) in list_arg(who, coll)?.iter().enumerate() {
        interp.poll_at(i)?;
        if y.equal_polled(x, || interp.poll())? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Walks nested lists with a node budget: lists that share structure can describe far
/// more leaves than memory holds.
fn flatten(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [xs] = fixed_args("flatten", args)?;
    let mut out = Vec::new();
    let mut budget = Budget::new("flatten", xs);
    let mut stack = vec![list_arg("flatten", xs)?.iter()];
    while let Some(top) = stack.last_mut() {
        budget.visit()?;
        if budget.visited().is_multiple_of(POLL_EVERY) {
            interp.poll()?;
        }
        match top.next() {
            Some(v @ Value::List(..)) => stack.push(v.as_list().unwrap_or_default().iter()),
            Some(v) => out.push(v),
            None => {
                stack.pop();
            }
        }
    }
    Ok(Value::list(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: &Value) -> i64 {
        if let Value::Int(i) = v {
            *i
        } else {
            -1
        }
    }

    fn ints(items: &[Value]) -> Vec<i64> {
        items.iter().map(int).collect()
    }

    #[test]
    fn merge_sort_is_stable_and_total() {
        let items: Vec<Value> = [5, 3, 8, 1, 9, 2, 7].map(Value::Int).to_vec();
        let by_value = |a: &Value, b: &Value| Ok(int(a) < int(b));
        assert_eq!(
            ints(&merge_sort(items, by_value).unwrap()),
            [1, 2, 3, 5, 7, 8, 9]
        );
        // Compared by tens only: equal keys keep their input order.
        let items: Vec<Value> = [21, 12, 25, 11, 23].map(Value::Int).to_vec();
        let by_tens = |a: &Value, b: &Value| Ok(int(a) / 10 < int(b) / 10);
        assert_eq!(
            ints(&merge_sort(items, by_tens).unwrap()),
            [12, 11, 21, 25, 23]
        );
    }

    #[test]
    fn merge_sort_survives_a_comparison_that_is_not_an_order() {
        let items: Vec<Value> = (0..1000).map(Value::Int).collect();
        let sorted = merge_sort(items, |_, _| Ok(true)).unwrap();
        assert_eq!(sorted.len(), 1000);
    }

    #[test]
    fn merge_sort_stops_at_the_first_error() {
        let items: Vec<Value> = (0..10).map(Value::Int).collect();
        let mut calls = 0;
        let result = merge_sort(items, |_, _| {
            calls += 1;
            Err(Error::eval("no"))
        });
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }
}
