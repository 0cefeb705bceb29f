//! Type predicates, equality and truth.

use super::builtin_table;
use super::fixed_args;
use crate::env::Env;
use crate::error::Result;
use crate::eval::Interp;
use crate::symbol::Sym;
use crate::value::Value;

builtin_table! {
    /// `(nil? v)`: is it nil? `(nil? nil)` ⇒ `true`
    "nil?", 1, Some(1) => is_nil;
    /// `(boolean? v)`: is it true or false? `(boolean? false)` ⇒ `true`
    "boolean?", 1, Some(1) => is_boolean;
    /// `(symbol? v)`: is it a symbol? `(symbol? 'a)` ⇒ `true`
    "symbol?", 1, Some(1) => is_symbol;
    /// `(keyword? v)`: is it a keyword? `(keyword? :a)` ⇒ `true`
    "keyword?", 1, Some(1) => is_keyword;
    /// `(procedure? v)`: can it be called (lambda, builtin or task)? `(procedure? car)` ⇒ `true`
    "procedure?", 1, Some(1) => is_procedure;
    /// `(type-of v)`: the type's name as a symbol. `(type-of 1.5)` ⇒ `float`
    "type-of", 1, Some(1) => type_of;
    /// `(not v)`: true for false and nil. `(not nil)` ⇒ `true`
    "not", 1, Some(1) => not;
    /// `(equal? a b)`: structural equality; 1 and 1.0 differ. `(equal? [1 {"a" 2}] [1 {"a" 2}])` ⇒ `true`
    "equal?", 2, Some(2) => equal;
    /// `(eq? a b)`: identity for procedures, tasks and containers, equality for atoms. `(eq? 'a 'a)` ⇒ `true`
    "eq?", 2, Some(2) => eq;
}

fn is_nil(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("nil?", args)?;
    Ok(Value::Bool(matches!(v, Value::Nil)))
}

fn is_boolean(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("boolean?", args)?;
    Ok(Value::Bool(matches!(v, Value::Bool(_))))
}

fn is_symbol(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("symbol?", args)?;
    Ok(Value::Bool(v.symbol_name().is_some()))
}

fn is_keyword(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("keyword?", args)?;
    Ok(Value::Bool(v.keyword_name().is_some()))
}

fn is_procedure(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("procedure?", args)?;
    Ok(Value::Bool(v.is_procedure()))
}

fn type_of(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("type-of", args)?;
    Ok(Value::Symbol(Sym::new(v.type_name())))
}

fn not(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("not", args)?;
    Ok(Value::Bool(!v.is_truthy()))
}

fn equal(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [a, b] = fixed_args("equal?", args)?;
    a.equal_polled(b, || interp.poll()).map(Value::Bool)
}

fn eq(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [a, b] = fixed_args("eq?", args)?;
    Ok(Value::Bool(a.identical(b)))
}
