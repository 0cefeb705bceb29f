//! Input, output, files, the environment, and JSON text.

use super::fixed_args;
use super::{builtin_table, split_options, str_arg};
use crate::bounds::{read_file_text, Poll};
use crate::capabilities::Access;
use crate::env::Env;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::Interp;
use crate::value::{display_string_checked, parse_json, to_json_text, write_string_checked, Value};
use std::io::{BufRead, Write};

builtin_table! {
    /// `(display x…)`: prints display forms (strings raw), space-separated, no newline. `(display "a" 1)` prints `a 1`
    "display", 0, None => print;
    /// `(print x…)`: the same as `display`. `(print "a")` prints `a`
    "print", 0, None => print;
    /// `(println x…)`: display forms, space-separated, then a newline. `(println "a" [1])` prints `a (1)`
    "println", 0, None => println;
    /// `(write x…)`: prints canonical forms, no newline. `(write "a")` prints `"a"`
    "write", 0, None => write;
    /// `(prn x…)`: canonical forms, then a newline. `(prn "a")` prints `"a"`
    "prn", 0, None => prn;
    /// `(eprint x…)`: display forms to standard error, space-separated, no newline. `(eprint "warning:" 3)`
    "eprint", 0, None => eprint;
    /// `(eprintln x…)`: display forms to standard error, then a newline. `(eprintln "done")`
    "eprintln", 0, None => eprintln;
    /// `(newline)`: prints a newline.
    "newline", 0, Some(0) => newline;
    /// `(read-line)`: a line from standard input without its newline, or nil at the end. `(read-line)`
    "read-line", 0, Some(0) => read_line;
    /// `(read-file path)`: a file's text. `(read-file "notes.txt")`
    "read-file", 1, Some(1) => read_file;
    /// `(write-file path text)`: replaces a file with the text (or a value's display form), whole or not at all. `(write-file "out.txt" "hi")`
    "write-file", 2, Some(2) => write_file;
    /// `(append-file path text)`: adds the text (or a value's display form) to the end of a file, creating it. `(append-file "log.txt" "line\n")`
    "append-file", 2, Some(2) => append_file;
    /// `(file-exists? path)`: is there a file or directory at the path? `(file-exists? "notes.txt")`
    "file-exists?", 1, Some(1) => file_exists;
    /// `(list-dir path)`: the names of the entries of a directory, sorted. `(list-dir ".")`
    "list-dir", 1, Some(1) => list_dir;
    /// `(getenv name)`: an environment variable, or nil. `(getenv "HOME")`
    "getenv", 1, Some(1) => getenv;
    /// `(json-parse text)`: JSON text to data. `(json-parse "[1,null]")` ⇒ `(1 nil)`
    "json-parse", 1, Some(1) => json_parse;
    /// `(json-stringify v :pretty bool?)`: data to compact (or indented) JSON. `(json-stringify {"a" [1]})` ⇒ `"{\"a\":[1]}"`
    "json-stringify", 1, Some(3) => json_stringify;
}

fn emit(interp: &Interp, text: &str) -> Result<Value> {
    interp
        .out()
        .write_all(text.as_bytes())
        .map_err(|e| Error::stdout_write(&e))?;
    Ok(Value::Nil)
}

type Form = fn(&str, &Value, Poll) -> Result<String>;

fn joined(interp: &Interp, who: &str, args: &[Value], form: Form) -> Result<String> {
    Ok(args
        .iter()
        .map(|v| form(who, v, &|| interp.poll()))
        .collect::<Result<Vec<_>>>()?
        .join(" "))
}

fn print(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit(
        interp,
        &joined(interp, "print", args, display_string_checked)?,
    )
}

fn println(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit(
        interp,
        &(joined(interp, "println", args, display_string_checked)? + "\n"),
    )
}

fn write(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit(
        interp,
        &joined(interp, "write", args, write_string_checked)?,
    )
}

fn prn(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit(
        interp,
        &(joined(interp, "prn", args, write_string_checked)? + "\n"),
    )
}

/// Standard error is unbuffered; stdout is flushed first so the two interleave as written.
fn emit_stderr(interp: &Interp, text: &str) -> Result<Value> {
    interp.flush();
    crate::progress::suspend(|| std::io::stderr().write_all(text.as_bytes()))
        .map_err(|e| Error::eval(format!("cannot write to standard error: {e}")))?;
    Ok(Value::Nil)
}

fn eprint(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit_stderr(
        interp,
        &joined(interp, "eprint", args, display_string_checked)?,
    )
}

fn eprintln(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    emit_stderr(
        interp,
        &(joined(interp, "eprintln", args, display_string_checked)? + "\n"),
    )
}

fn newline(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    emit(interp, "\n")
}

fn read_line(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    interp.flush();
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Error::eval(format!("read-line: {e}")))?;
    if n == 0 {
        return Ok(Value::Nil);
    }
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    Ok(Value::from(line))
}

fn read_file(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [path] = fixed_args("read-file", args)?;
    let path = interp.resolve_path(str_arg("read-file", path)?);
    interp.limits.capabilities.check_path(&path, Access::Read)?;
    read_file_text(&path, interp.limits.max_file_bytes)
        .map(Value::from)
        .map_err(|e| match e.kind() {
            ErrorKind::Eval => Error::eval(format!("read-file: {}", e.message())),
            _ => e,
        })
}

fn write_file(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [path, text] = fixed_args("write-file", args)?;
    let path = interp.resolve_path(str_arg("write-file", path)?);
    interp
        .limits
        .capabilities
        .check_path(&path, Access::Write)?;
    let text = display_string_checked("write-file", text, &|| interp.poll())?;
    crate::atomic_file::write(&path, text.as_bytes())
        .map(|()| Value::Nil)
        .map_err(|e| Error::eval(format!("write-file: cannot write {}: {e}", path.display())))
}

fn append_file(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [path, text] = fixed_args("append-file", args)?;
    let path = interp.resolve_path(str_arg("append-file", path)?);
    interp
        .limits
        .capabilities
        .check_path(&path, Access::Write)?;
    let cannot = |e: std::io::Error| {
        Error::eval(format!("append-file: cannot write {}: {e}", path.display()))
    };
    let text = display_string_checked("append-file", text, &|| interp.poll())?;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(cannot)?
        .write_all(text.as_bytes())
        .map_err(cannot)?;
    Ok(Value::Nil)
}

fn file_exists(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [path] = fixed_args("file-exists?", args)?;
    let path = interp.resolve_path(str_arg("file-exists?", path)?);
    interp.limits.capabilities.check_path(&path, Access::Read)?;
    Ok(Value::Bool(path.exists()))
}

fn list_dir(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [path] = fixed_args("list-dir", args)?;
    let path = interp.resolve_path(str_arg("list-dir", path)?);
    interp.limits.capabilities.check_path(&path, Access::Read)?;
    let cannot =
        |e: std::io::Error| Error::eval(format!("list-dir: cannot read {}: {e}", path.display()));
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&path).map_err(cannot)? {
        names.push(
            entry
                .map_err(cannot)?
                .file_name()
                .to_string_lossy()
                .into_owned(),
        );
    }
    names.sort();
    Ok(Value::list(names.into_iter().map(Value::from).collect()))
}

fn getenv(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [name] = fixed_args("getenv", args)?;
    let name = str_arg("getenv", name)?;
    interp.limits.capabilities.check_env(name)?;
    Ok(std::env::var(name).map_or(Value::Nil, Value::from))
}

fn json_parse(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [text] = fixed_args("json-parse", args)?;
    let text = str_arg("json-parse", text)?;
    parse_json("json-parse", text, &|| interp.poll())
}

fn json_stringify(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (values, options) = split_options("json-stringify", args, &["pretty"])?;
    let [value] = values else {
        return Err(Error::eval(
            "json-stringify: expected one value and :pretty",
        ));
    };
    let pretty = options.iter().any(|(_, v)| v.is_truthy());
    to_json_text("json-stringify", value, pretty, &|| interp.poll()).map(Value::from)
}
