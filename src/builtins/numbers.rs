//! Numbers: integers stay exact until a float joins in; overflow is an error.

use super::{arity_error, fixed_args, leading_args};
use super::{builtin_table, int_arg, type_error};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::value::Value;

builtin_table! {
    /// `(+ n…)`: the sum. `(+ 1 2 3)` ⇒ `6`, `(+ 1 0.5)` ⇒ `1.5`
    "+", 0, None => add;
    /// `(- n m…)`: difference, or negation with one argument. `(- 10 4)` ⇒ `6`
    "-", 1, None => sub;
    /// `(* n…)`: the product. `(* 2 3)` ⇒ `6`
    "*", 0, None => mul;
    /// `(/ n m…)`: division, exact when it divides evenly. `(/ 6 3)` ⇒ `2`, `(/ 7 2)` ⇒ `3.5`
    "/", 1, None => div;
    /// `(quotient n m)`: division truncating toward zero; a float operand gives a float. `(quotient -7 2)` ⇒ `-3`
    "quotient", 2, Some(2) => quotient;
    /// `(remainder n m)`: remainder with the dividend's sign. `(remainder -13 -4.0)` ⇒ `-1.0`
    "remainder", 2, Some(2) => remainder;
    /// `(modulo n m)`: remainder with the divisor's sign. `(modulo -7 2)` ⇒ `1`
    "modulo", 2, Some(2) => modulo;
    /// `(abs n)`: absolute value. `(abs -3)` ⇒ `3`
    "abs", 1, Some(1) => abs;
    /// `(min n…)`: the smallest. `(min 3 1 2)` ⇒ `1`
    "min", 1, None => min;
    /// `(max n…)`: the largest. `(max 3 1 2)` ⇒ `3`
    "max", 1, None => max;
    /// `(floor x)`: round down. `(floor 2.7)` ⇒ `2.0`
    "floor", 1, Some(1) => floor;
    /// `(ceiling x)`: round up. `(ceiling 2.1)` ⇒ `3.0`
    "ceiling", 1, Some(1) => ceiling;
    /// `(round x)`: round to nearest, ties to even. `(round 2.5)` ⇒ `2.0`
    "round", 1, Some(1) => round;
    /// `(truncate x)`: round toward zero. `(truncate -2.7)` ⇒ `-2.0`
    "truncate", 1, Some(1) => truncate;
    /// `(sqrt x)`: square root, exact for perfect squares. `(sqrt 16)` ⇒ `4`, `(sqrt 2)` ⇒ `1.4142135623730951`
    "sqrt", 1, Some(1) => sqrt;
    /// `(expt base power)`: exponentiation. `(expt 2 10)` ⇒ `1024`
    "expt", 2, Some(2) => expt;
    /// `(exact->inexact n)`: the number as a float. `(exact->inexact 1)` ⇒ `1.0`
    "exact->inexact", 1, Some(1) => to_float;
    /// `(inexact->exact x)`: a whole float as an integer. `(inexact->exact 2.0)` ⇒ `2`
    "inexact->exact", 1, Some(1) => to_int;
    /// `(number? v)`: is it a number? `(number? 1.5)` ⇒ `true`
    "number?", 1, Some(1) => is_number;
    /// `(integer? v)`: is it an integer (or a whole float)? `(integer? 2)` ⇒ `true`
    "integer?", 1, Some(1) => is_integer;
    /// `(float? v)`: is it a float? `(float? 2.0)` ⇒ `true`
    "float?", 1, Some(1) => is_float;
    /// `(zero? n)`: is it zero? `(zero? 0.0)` ⇒ `true`
    "zero?", 1, Some(1) => is_zero;
    /// `(positive? n)`: greater than zero? `(positive? 3)` ⇒ `true`
    "positive?", 1, Some(1) => is_positive;
    /// `(negative? n)`: less than zero? `(negative? -3)` ⇒ `true`
    "negative?", 1, Some(1) => is_negative;
    /// `(even? n)`: is the integer even? `(even? 4)` ⇒ `true`
    "even?", 1, Some(1) => is_even;
    /// `(odd? n)`: is the integer odd? `(odd? 3)` ⇒ `true`
    "odd?", 1, Some(1) => is_odd;
    /// `(= a b…)`: numbers numerically, other values structurally. `(= 1 1.0)` ⇒ `true`
    "=", 1, None => num_eq;
    /// `(< a b…)`: strictly increasing (numbers or strings). `(< 1 2 3)` ⇒ `true`
    "<", 1, None => lt;
    /// `(> a b…)`: strictly decreasing. `(> 3 2 1)` ⇒ `true`
    ">", 1, None => gt;
    /// `(<= a b…)`: non-decreasing. `(<= 1 1 2)` ⇒ `true`
    "<=", 1, None => le;
    /// `(>= a b…)`: non-increasing. `(>= 2 2 1)` ⇒ `true`
    ">=", 1, None => ge;
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(who: &str, v: &Value) -> Result<Num> {
    match v {
        Value::Int(i) => Ok(Num::Int(*i)),
        Value::Float(f) => Ok(Num::Float(*f)),
        other => Err(type_error(who, "a number", other)),
    }
}

fn float_of(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn value_of(n: Num) -> Value {
    match n {
        Num::Int(i) => Value::Int(i),
        Num::Float(f) => Value::Float(f),
    }
}

fn overflow() -> Error {
    Error::eval("integer overflow")
}

fn arith(
    who: &str,
    a: Num,
    b: Num,
    int_op: fn(i64, i64) -> Option<i64>,
    float_op: fn(f64, f64) -> f64,
) -> Result<Num> {
    let _ = who;
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => int_op(x, y).map(Num::Int).ok_or_else(overflow),
        _ => Ok(Num::Float(float_op(float_of(a), float_of(b)))),
    }
}

fn fold(
    who: &str,
    args: &[Value],
    init: Num,
    int_op: fn(i64, i64) -> Option<i64>,
    float_op: fn(f64, f64) -> f64,
) -> Result<Value> {
    let mut acc = init;
    for a in args {
        acc = arith(who, acc, num(who, a)?, int_op, float_op)?;
    }
    Ok(value_of(acc))
}

fn add(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    if let [Value::Int(a), Value::Int(b)] = args {
        return a.checked_add(*b).map(Value::Int).ok_or_else(overflow);
    }
    fold("+", args, Num::Int(0), i64::checked_add, |a, b| a + b)
}

fn sub(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    match args {
        [Value::Int(a), Value::Int(b)] => a.checked_sub(*b).map(Value::Int).ok_or_else(overflow),
        [only] => match num("-", only)? {
            Num::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(overflow),
            Num::Float(f) => Ok(Value::Float(-f)),
        },
        [first, rest @ ..] => fold("-", rest, num("-", first)?, i64::checked_sub, |a, b| a - b),
        [] => Err(arity_error("-", 1, None, 0)),
    }
}

fn mul(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    fold("*", args, Num::Int(1), i64::checked_mul, |a, b| a * b)
}

fn divide(a: Num, b: Num) -> Result<Num> {
    match (a, b) {
        (Num::Int(_), Num::Int(0)) => Err(Error::eval("division by zero")),
        (Num::Int(x), Num::Int(y)) => match x.checked_rem(y) {
            Some(0) => x.checked_div(y).map(Num::Int).ok_or_else(overflow),
            Some(_) => Ok(Num::Float(x as f64 / y as f64)),
            // Only i64::MIN / -1 has no remainder: its quotient overflows.
            None => Err(overflow()),
        },
        _ => Ok(Num::Float(float_of(a) / float_of(b))),
    }
}

fn div(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    match args {
        [only] => divide(Num::Int(1), num("/", only)?).map(value_of),
        [first, rest @ ..] => {
            let mut acc = num("/", first)?;
            for r in rest {
                acc = divide(acc, num("/", r)?)?;
            }
            Ok(value_of(acc))
        }
        [] => Err(arity_error("/", 1, None, 0)),
    }
}

/// The operands of an integer division: both integers, or floats when either is one
/// (any float operand gives a float, as in `+`). Dividing by zero is an error either way.
enum DivOperands {
    Ints(i64, i64),
    Floats(f64, f64),
}

fn div_operands(who: &str, args: &[Value]) -> Result<DivOperands> {
    let [a, b] = fixed_args(who, args)?;
    let (a, b) = (num(who, a)?, num(who, b)?);
    if float_of(b) == 0.0 {
        return Err(Error::eval("division by zero"));
    }
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => DivOperands::Ints(x, y),
        _ => DivOperands::Floats(float_of(a), float_of(b)),
    })
}

fn quotient(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    match div_operands("quotient", args)? {
        DivOperands::Ints(a, b) => a.checked_div(b).map(Value::Int).ok_or_else(overflow),
        DivOperands::Floats(a, b) => Ok(Value::Float((a / b).trunc())),
    }
}

fn remainder(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    // Rust's `%` keeps the dividend's sign, for integers and floats alike.
    match div_operands("remainder", args)? {
        DivOperands::Ints(a, b) => Ok(Value::Int(a.checked_rem(b).unwrap_or(0))),
        DivOperands::Floats(a, b) => Ok(Value::Float(a % b)),
    }
}

fn modulo(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    match div_operands("modulo", args)? {
        DivOperands::Ints(a, b) => {
            let r = a.checked_rem(b).unwrap_or(0);
            Ok(Value::Int(if r != 0 && (r < 0) != (b < 0) {
                r + b
            } else {
                r
            }))
        }
        DivOperands::Floats(a, b) => {
            let r = a % b;
            Ok(Value::Float(if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }))
        }
    }
}

fn abs(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("abs", args)?;
    match num("abs", n)? {
        Num::Int(i) => i.checked_abs().map(Value::Int).ok_or_else(overflow),
        Num::Float(f) => Ok(Value::Float(f.abs())),
    }
}

fn extreme(who: &str, args: &[Value], pick_second: fn(f64, f64) -> bool) -> Result<Value> {
    let ([first], rest) = leading_args(who, args)?;
    let mut best = num(who, first)?;
    let mut any_float = matches!(best, Num::Float(_));
    for a in rest {
        let n = num(who, a)?;
        any_float |= matches!(n, Num::Float(_));
        if pick_second(float_of(best), float_of(n)) {
            best = n;
        }
    }
    Ok(if any_float {
        Value::Float(float_of(best))
    } else {
        value_of(best)
    })
}

fn min(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    extreme("min", args, |best, n| n < best)
}

fn max(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    extreme("max", args, |best, n| n > best)
}

fn rounding(who: &str, args: &[Value], f: fn(f64) -> f64) -> Result<Value> {
    let [v] = fixed_args(who, args)?;
    match num(who, v)? {
        Num::Int(i) => Ok(Value::Int(i)),
        Num::Float(x) => Ok(Value::Float(f(x))),
    }
}

fn floor(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    rounding("floor", args, f64::floor)
}

fn ceiling(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    rounding("ceiling", args, f64::ceil)
}

fn round(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    rounding("round", args, f64::round_ties_even)
}

fn truncate(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    rounding("truncate", args, f64::trunc)
}

fn sqrt(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("sqrt", args)?;
    match num("sqrt", n)? {
        Num::Int(i) if i >= 0 => {
            let r = (i as f64).sqrt();
            let exact = r as i64;
            if exact.checked_mul(exact) == Some(i) {
                Ok(Value::Int(exact))
            } else {
                Ok(Value::Float(r))
            }
        }
        n => Ok(Value::Float(float_of(n).sqrt())),
    }
}

fn expt(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [base, power] = fixed_args("expt", args)?;
    match (num("expt", base)?, num("expt", power)?) {
        (Num::Int(b), Num::Int(e)) if e >= 0 => {
            let e = u32::try_from(e).map_err(|_| overflow())?;
            b.checked_pow(e).map(Value::Int).ok_or_else(overflow)
        }
        (b, e) => Ok(Value::Float(float_of(b).powf(float_of(e)))),
    }
}

fn to_float(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("exact->inexact", args)?;
    Ok(Value::Float(float_of(num("exact->inexact", n)?)))
}

fn to_int(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("inexact->exact", args)?;
    match num("inexact->exact", n)? {
        Num::Int(i) => Ok(Value::Int(i)),
        Num::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(Value::Int(f as i64)),
        Num::Float(f) => Err(Error::eval(format!(
            "inexact->exact: {f} is not a whole number in range"
        ))),
    }
}

fn is_number(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("number?", args)?;
    Ok(Value::Bool(matches!(v, Value::Int(_) | Value::Float(_))))
}

fn is_integer(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("integer?", args)?;
    Ok(Value::Bool(match v {
        Value::Int(_) => true,
        Value::Float(f) => f.is_finite() && f.fract() == 0.0,
        _ => false,
    }))
}

fn is_float(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [v] = fixed_args("float?", args)?;
    Ok(Value::Bool(matches!(v, Value::Float(_))))
}

fn sign_test(who: &str, args: &[Value], test: fn(f64) -> bool) -> Result<Value> {
    let [v] = fixed_args(who, args)?;
    Ok(Value::Bool(test(float_of(num(who, v)?))))
}

fn is_zero(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    sign_test("zero?", args, |x| x == 0.0)
}

fn is_positive(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    sign_test("positive?", args, |x| x > 0.0)
}

fn is_negative(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    sign_test("negative?", args, |x| x < 0.0)
}

fn is_even(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("even?", args)?;
    Ok(Value::Bool(int_arg("even?", n)? % 2 == 0))
}

fn is_odd(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [n] = fixed_args("odd?", args)?;
    Ok(Value::Bool(int_arg("odd?", n)? % 2 != 0))
}

fn num_eq(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    Ok(Value::Bool(pairs(args).all(|(a, b)| a.num_equal(b))))
}

/// Orders two numbers, or two strings.
fn compare(who: &str, a: &Value, b: &Value) -> Result<std::cmp::Ordering> {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Ok(x.cmp(y)),
        (Value::Str(_), other) | (other, Value::Str(_)) => Err(type_error(who, "a string", other)),
        (Value::Int(x), Value::Float(y)) => {
            Ok(crate::value::compare_int_float(*x, *y).unwrap_or(Ordering::Less))
        }
        (Value::Float(x), Value::Int(y)) => {
            Ok(crate::value::compare_int_float(*y, *x).map_or(Ordering::Less, Ordering::reverse))
        }
        _ => {
            let (x, y) = (float_of(num(who, a)?), float_of(num(who, b)?));
            Ok(x.partial_cmp(&y).unwrap_or(Ordering::Less))
        }
    }
}

fn chain(who: &str, args: &[Value], ok: fn(std::cmp::Ordering) -> bool) -> Result<Value> {
    if let [Value::Int(a), Value::Int(b)] = args {
        return Ok(Value::Bool(ok(a.cmp(b))));
    }
    let mut result = true;
    for (a, b) in pairs(args) {
        let order = compare(who, a, b)?;
        // NaN compares false whatever the operator.
        let nan = matches!((a, b), (Value::Float(x), _) if x.is_nan())
            || matches!((a, b), (_, Value::Float(y)) if y.is_nan());
        result &= !nan && ok(order);
    }
    if let [only] = args {
        compare(who, only, only)?;
    }
    Ok(Value::Bool(result))
}

/// Each argument with the next: `(a b c)` → `(a, b)`, `(b, c)`.
fn pairs(args: &[Value]) -> impl Iterator<Item = (&Value, &Value)> {
    args.iter().zip(args.iter().skip(1))
}

fn lt(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    chain("<", args, |o| o.is_lt())
}

fn gt(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    chain(">", args, |o| o.is_gt())
}

fn le(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    chain("<=", args, |o| o.is_le())
}

fn ge(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    chain(">=", args, |o| o.is_ge())
}
