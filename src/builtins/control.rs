//! Evaluation, errors and time.

use super::{builtin_table, str_arg, type_error};
use super::{fixed_args, leading_args};
use crate::env::Env;
use crate::error::{Error, Reason, Result};
use crate::eval::quote::syntax_to_value;
use crate::eval::Interp;
use crate::source::Span;
use crate::value::{to_json, to_json_polled, Value};
use std::time::{Duration, Instant};

builtin_table! {
    /// `(apply f x… xs)`: calls `f` with the `x`s and the elements of `xs`. `(apply + 1 '(2 3))` ⇒ `6`
    "apply", 2, None => apply;
    /// `(eval datum)`: runs code given as data, in the global environment. `(eval '(+ 1 2))` ⇒ `3`
    "eval", 1, Some(1) => eval;
    /// `(read text)`: the first datum of the text, as data. `(read "(a 1)")` ⇒ `(a 1)`
    "read", 1, Some(1) => read;
    /// `(error msg)`: raises an `EVAL_ERROR` whose message is `msg`. `(error "bad input")`
    "error", 1, Some(1) => error;
    /// `(fail reason msg details?)`: raises a `TASK_FAILURE`. `(fail :llm_error "no answer" {"status" 503})`
    "fail", 2, Some(3) => fail;
    /// `(raise err)`: re-raises an error map that `catch` bound. `(try x (catch e (raise e)))`
    "raise", 1, Some(1) => raise;
    /// `(time expr-thunk)`: calls a procedure of no arguments, returns `{"value" v "ms" elapsed}`. `(time (fn () (fib 20)))`
    "time", 1, Some(1) => time;
    /// `(now)`: the current time in UTC as ISO-8601 text, to the millisecond. `(now)` ⇒ `"2026-01-02T03:04:05.678Z"`
    "now", 0, Some(0) => now;
    /// `(time-ms)`: milliseconds since the Unix epoch, as an integer. `(time-ms)` ⇒ `1767323045678`
    "time-ms", 0, Some(0) => time_ms;
    /// `(sleep seconds)`: waits (interruptibly), returns nil. `(sleep 0.1)`
    "sleep", 1, Some(1) => sleep;
    /// `(identity x)`: returns `x`. `(identity 1)` ⇒ `1`
    "identity", 1, Some(1) => identity;
    /// `(exit code?)`: ends the program with the exit status, 0 to 255 (default 0); `try` does not catch it. `(exit 2)`
    "exit", 0, Some(1) => exit;
}

fn apply(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let (f, spread) = super::spread_apply_args(args)?;
    interp.apply(&f, &spread, env)
}

fn eval(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [datum] = fixed_args("eval", args)?;
    interp.eval_value(datum, Span::generated())
}

fn read(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [text] = fixed_args("read", args)?;
    let text = str_arg("read", text)?;
    let forms = crate::reader::read_data("<read>", text)?;
    Ok(forms.first().map_or(Value::Nil, syntax_to_value))
}

fn error(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [message] = fixed_args("error", args)?;
    let message = match message {
        Value::Str(s) => s.to_string(),
        other => crate::value::display_string(other),
    };
    Err(Error::eval(message))
}

fn fail(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([reason, message], details) = leading_args("fail", args)?;
    let reason = match reason.name_text() {
        Some(name) => Reason::parse(name),
        None => return Err(type_error("fail", "a reason (string or keyword)", reason)),
    };
    let mut e = Error::task_failure(reason, crate::value::display_string(message));
    if let Some(details) = details.first() {
        match details {
            Value::Map(_) | Value::Nil => e = e.with_details(to_json(details)?),
            other => return Err(type_error("fail", "a details map", other)),
        }
    }
    Err(e)
}

fn raise(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [error] = fixed_args("raise", args)?;
    let json = to_json_polled(error, &|| interp.poll())?;
    Err(Error::from_json(&json).unwrap_or_else(|| Error::eval(raised_message(error))))
}

/// The message of `(raise value)` for a value that is not an error map: its display
/// form, printed no further than an error message keeps.
fn raised_message(value: &Value) -> String {
    match value {
        Value::Str(text) => text.to_string(),
        other => crate::value::write_prefix(other, crate::error::MAX_MESSAGE),
    }
}

fn time(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [thunk] = fixed_args("time", args)?;
    let start = Instant::now();
    let value = interp.apply(thunk, &[], env)?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let mut entries = crate::value::Entries::new();
    entries.insert("value".into(), value);
    entries.insert("ms".into(), Value::Float((ms * 1000.0).round() / 1000.0));
    Ok(Value::map(entries))
}

fn sleep(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [seconds] = fixed_args("sleep", args)?;
    let seconds = match seconds {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => return Err(type_error("sleep", "a number of seconds", other)),
    };
    if !(0.0..=1e9).contains(&seconds) {
        return Err(Error::eval("sleep: seconds must be between 0 and 1e9"));
    }
    // A sleep past the time limit wakes at the limit, which then ends the program.
    let wanted = Instant::now()
        .checked_add(Duration::from_secs_f64(seconds))
        .ok_or_else(|| Error::eval("sleep: seconds out of range"))?;
    let until = interp
        .deadline()
        .map_or(wanted, |deadline| wanted.min(deadline));
    let interrupt = interp.interrupt_flag();
    interp.flush();
    // Off the interpreter thread inside `pmap`, so sleeping items overlap.
    crate::eval::fiber::run_blocking(interp, move || loop {
        let now = Instant::now();
        if now >= until || interrupt.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(20)));
    });
    interp.check_interrupt()?;
    Ok(Value::Nil)
}

fn identity(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [x] = fixed_args("identity", args)?;
    Ok(x.clone())
}

fn exit(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let code = match args.first() {
        None => 0,
        // The status a process can report is one byte: 256 would read as success.
        Some(Value::Int(i)) => u8::try_from(*i)
            .map_err(|_| Error::eval(format!("exit: the status must be 0 to 255, not {i}")))?,
        Some(other) => return Err(type_error("exit", "an integer status", other)),
    };
    interp.flush();
    Err(Error::exit(i32::from(code)))
}

fn now(_: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    let text = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    Ok(Value::from(text))
}

fn time_ms(_: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| Error::eval(format!("time-ms: the clock is before 1970: {e}")))?;
    Ok(Value::Int(
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX),
    ))
}
