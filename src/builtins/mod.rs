//! Builtins, grouped by topic. Each topic module has a `BUILTINS` table whose entries
//! carry the signature and an example in their doc comment (shown by `:describe`).

mod control;
mod grouping;
mod io;
mod lists;
mod maps;
mod numbers;
pub mod predicate;
mod regexp;
mod strings;
mod types;

use crate::error::{Error, ErrorKind, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::symbol::Sym;
use crate::value::{List, Value};
use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Duration;

pub type BuiltinFn = fn(&Interp, &[Value], &Env) -> Result<Value>;

/// A procedure implemented in Rust.
pub struct Builtin {
    pub name: &'static str,
    pub min_args: usize,
    pub max_args: Option<usize>,
    pub func: BuiltinFn,
    /// Signature and example, from the doc comment on the table entry.
    pub doc: &'static str,
}

/// Declares a topic's `BUILTINS` table: `/// doc` then `"name", min, max => function;`.
macro_rules! builtin_table {
    ($( $(#[doc = $doc:literal])* $name:literal, $min:expr, $max:expr => $func:path; )*) => {
        pub static BUILTINS: &[$crate::builtins::Builtin] = &[ $(
            $crate::builtins::Builtin {
                name: $name,
                min_args: $min,
                max_args: $max,
                func: $func,
                doc: concat!($($doc, "\n"),*),
            }
        ),* ];
    };
}
pub(crate) use builtin_table;

/// The core builtins by topic, with the topic's title (for the language reference):
/// the core layer's tables (see `crate::eval::layer`).
pub static TOPICS: &[(&str, &[Builtin])] = &[
    ("Numbers and comparison", numbers::BUILTINS),
    ("Lists", lists::BUILTINS),
    ("Grouping and ordering", grouping::BUILTINS),
    ("Strings", strings::BUILTINS),
    ("Regular expressions", regexp::BUILTINS),
    ("Maps and path access", maps::BUILTINS),
    ("Input, output and JSON", io::BUILTINS),
    ("Types, equality and truth", types::BUILTINS),
    ("Evaluation, errors and control", control::BUILTINS),
];

#[cfg(test)]
/// The builtin reference of `docs/LANGUAGE.md`: each topic's entries, from their docs.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    for (title, table) in TOPICS {
        out.push_str(&format!("\n### {title}\n\n"));
        for b in *table {
            out.push_str(&format!("- {}\n", b.doc.trim().replace('\n', " ")));
        }
    }
    out
}

/// Binds every builtin of the interpreter's layers in the global environment.
pub fn install(interp: &Interp) {
    for b in interp.layers.builtins() {
        interp.define_global(Sym::new(b.name), Value::Builtin(b));
    }
}

/// The core builtins by name, read from [`TOPICS`] at run time as every registry reads
/// them: a table's entries may be copied into each unit of code that names them, so an
/// address is only ever taken through the one static.
static CORE_BY_NAME: LazyLock<HashMap<&'static str, &'static Builtin>> = LazyLock::new(|| {
    TOPICS
        .iter()
        .flat_map(|(_, table)| *table)
        .map(|b| (b.name, b))
        .collect()
});

/// The core builtin named `name`, whatever the program has rebound the name to.
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    CORE_BY_NAME.get(name).copied()
}

/// `(apply f a b '(c d))` → `f` and `[a b c d]`.
pub fn spread_apply_args(args: &[Value]) -> Result<(Value, Vec<Value>)> {
    // Checked here too: the evaluator's tail call of `apply` skips the table's arity check.
    let [f, middle @ .., last] = args else {
        return Err(arity_error("apply", 2, None, args.len()));
    };
    let mut spread: Vec<Value> = middle.to_vec();
    match last {
        Value::Nil => {}
        other => spread.extend(list_arg("apply", other)?.iter()),
    }
    Ok((f.clone(), spread))
}

// ---- argument helpers shared by the topic modules ---------------------------------------

/// The arguments of builtin `name`, which takes exactly `N`: the builtin table checks the
/// count before the call, so the error only guards a call made another way.
pub fn fixed_args<'a, const N: usize>(name: &str, args: &'a [Value]) -> Result<&'a [Value; N]> {
    args.try_into()
        .map_err(|_| arity_error(name, N, Some(N), args.len()))
}

/// The first `N` arguments of builtin `name` and the rest (checked as for `fixed_args`).
pub fn leading_args<'a, const N: usize>(
    name: &str,
    args: &'a [Value],
) -> Result<(&'a [Value; N], &'a [Value])> {
    args.split_first_chunk()
        .ok_or_else(|| arity_error(name, N, None, args.len()))
}

pub fn arity_error(name: &str, min: usize, max: Option<usize>, got: usize) -> Error {
    let expected = match max {
        Some(max) if max == min => format!("{min}"),
        Some(max) => format!("{min} to {max}"),
        None => format!("at least {min}"),
    };
    let plural = if max.unwrap_or(min) == 1 { "" } else { "s" };
    Error::new(
        ErrorKind::Eval,
        format!("{name}: expected {expected} argument{plural}, got {got}"),
    )
}

pub fn type_error(who: &str, expected: &str, got: &Value) -> Error {
    Error::eval(format!(
        "{who}: expected {expected}, got {}",
        described(got)
    ))
}

/// A value as a type error names it: once, with its type where the text alone does not
/// say it (`nil`, `true`, but `an integer 5`).
fn described(value: &Value) -> String {
    match value {
        Value::Nil | Value::Bool(_) => crate::value::write_prefix(value, 60),
        _ => format!(
            "{} {}",
            article(value.type_name()),
            crate::value::write_prefix(value, 60)
        ),
    }
}

/// `integer` → `an integer`, `list` → `a list`.
pub fn article(word: &str) -> String {
    let vowel = word.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {word}", if vowel { "an" } else { "a" })
}

pub fn int_arg(who: &str, v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
        other => Err(type_error(who, "an integer", other)),
    }
}

pub fn index_arg(who: &str, v: &Value) -> Result<usize> {
    let i = int_arg(who, v)?;
    usize::try_from(i).map_err(|_| Error::eval(format!("{who}: index {i} is negative")))
}

pub fn str_arg<'a>(who: &str, v: &'a Value) -> Result<&'a str> {
    v.as_str().ok_or_else(|| type_error(who, "a string", v))
}

pub fn list_arg(who: &str, v: &Value) -> Result<List> {
    match v {
        Value::Nil => Ok(List::new()),
        _ => v.as_list().ok_or_else(|| type_error(who, "a list", v)),
    }
}

/// The longest wait a program may ask for, in seconds (about 31 years): any longer
/// would overflow the clock's arithmetic.
pub const MAX_SECONDS: f64 = 1e9;

/// A wait given to `:option` of `who` as a duration: a positive number of seconds of at
/// most [`MAX_SECONDS`]; anything else (0, negative, NaN, infinite, huge) is an error.
pub fn seconds_arg(who: &str, option: &str, v: &Value) -> Result<Duration> {
    let seconds = match v {
        Value::Int(n) => *n as f64,
        Value::Float(x) => *x,
        _ => f64::NAN,
    };
    if seconds > 0.0 && seconds <= MAX_SECONDS {
        return Ok(Duration::from_secs_f64(seconds));
    }
    let expected = format!(":{option} as positive seconds of at most {MAX_SECONDS:e}");
    Err(type_error(who, &expected, v))
}

pub fn proc_arg<'a>(who: &str, v: &'a Value) -> Result<&'a Value> {
    if v.is_procedure() {
        Ok(v)
    } else {
        Err(type_error(who, "a procedure", v))
    }
}

/// Options given as `:name value`, by name.
pub type Options = Vec<(&'static str, Value)>;

/// Splits trailing `:key value` options off an argument list.
pub fn split_options<'a>(
    who: &str,
    args: &'a [Value],
    known: &[&'static str],
) -> Result<(&'a [Value], Options)> {
    let mut values = args;
    let mut options = Vec::new();
    while let Some((before, [name, value])) = values.split_last_chunk() {
        let Some(name) = name.keyword_name() else {
            break;
        };
        match known.iter().find(|k| **k == name) {
            Some(known) => {
                options.push((*known, value.clone()));
                values = before;
            }
            None if values.len() == args.len() => {
                return Err(Error::eval(format!("{who}: unknown option :{name}")))
            }
            None => break,
        }
    }
    Ok((values, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_documented_and_unique() {
        let mut names = std::collections::HashSet::new();
        for b in crate::layers::registry().builtins() {
            assert!(names.insert(b.name), "duplicate builtin {}", b.name);
            let signature = format!("`({}", b.name);
            assert!(
                b.doc.trim_start().starts_with(&signature),
                "builtin {} needs its signature first in its doc",
                b.name
            );
        }
    }

    /// The evaluator checks arity before calling a builtin. Called past that check with
    /// too few arguments, no builtin (the task builtins included) panics: each answers (some variadic ones are lenient,
    /// `(=)` is true) or fails with an error naming it.
    #[test]
    fn no_builtin_panics_on_too_few_arguments() {
        let failures = crate::run_on_large_stack(&crate::Limits::default(), |limits| {
            let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude");
            let mut failures = Vec::new();
            for b in crate::layers::registry().builtins() {
                for count in 0..b.min_args {
                    let args = vec![Value::Nil; count];
                    let call = || (b.func)(&interp, &args, &None);
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
                        Ok(Ok(_)) => {}
                        Ok(Err(e)) if e.message().starts_with(&format!("{}: ", b.name)) => {}
                        Ok(Err(e)) => failures.push(format!("{} with {count}: {e}", b.name)),
                        Err(_) => failures.push(format!("{} with {count}: panicked", b.name)),
                    }
                }
            }
            failures
        })
        .expect("the test thread");
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn seconds_are_positive_and_bounded() {
        let ok = |v: Value| seconds_arg("f", "timeout", &v).map(|d| d.as_secs_f64());
        assert_eq!(ok(Value::Int(2)).ok(), Some(2.0));
        assert_eq!(ok(Value::Float(0.5)).ok(), Some(0.5));
        assert_eq!(ok(Value::Float(MAX_SECONDS)).ok(), Some(MAX_SECONDS));
        let refused = [
            Value::Float(1e300),
            Value::Float(1e19),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Float(-1.0),
            Value::Int(-1),
            Value::Int(0),
            Value::Int(i64::MAX),
            Value::from("1"),
        ];
        for value in refused {
            let error = ok(value).expect_err("refused");
            assert!(
                error.message().starts_with("f: expected :timeout"),
                "{error}"
            );
        }
    }

    #[test]
    fn apply_is_the_registered_builtin() {
        let registry = crate::layers::registry();
        assert!(registry
            .builtin("apply")
            .is_some_and(|b| registry.is_apply(b)));
    }

    const BEGIN: &str = "<!-- builtins:begin (generated from the builtin tables; \
                         UPDATE_DOCS=1 cargo test --lib builtins rewrites it) -->";
    const END: &str = "<!-- builtins:end -->";

    /// `docs/LANGUAGE.md` lists every core builtin as its doc comment says.
    #[test]
    fn the_language_reference_lists_every_builtin() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/LANGUAGE.md");
        let text = std::fs::read_to_string(&path).expect("docs/LANGUAGE.md exists");
        let start = text.find(BEGIN).expect("the begin marker") + BEGIN.len();
        let end = text.find(END).expect("the end marker");
        let generated = reference_markdown() + "\n";
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
            std::fs::write(&path, updated).expect("rewrite docs/LANGUAGE.md");
            return;
        }
        assert!(
            text[start..end] == generated,
            "docs/LANGUAGE.md is out of date: run UPDATE_DOCS=1 cargo test --lib builtins"
        );
    }
}
