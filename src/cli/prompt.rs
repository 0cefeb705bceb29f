//! `tasklisp prompt`: one request through the configured provider, as an atomic task
//! (so it is logged, priced, cached and budgeted like any other).

use super::Options;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::symbol::Sym;
use crate::task::sink::StreamTo;
use crate::value::{from_json, to_json, Value};
use std::io::{IsTerminal, Read, Write};

/// What `prompt` sends besides its text: `--system`, `--schema`, `-a` files.
pub struct Parts<'a> {
    pub system: Option<&'a str>,
    pub schema: Option<&'a str>,
    pub attachments: &'a [String],
}

/// Sends TEXT (with stdin joined after it when stdin is not a terminal) and prints the
/// answer, or with `--json` the TaskResult.
pub fn run(interp: &Interp, options: &Options, text: &[String], parts: &Parts) -> Result<i32> {
    let Parts {
        system,
        schema,
        attachments,
    } = *parts;
    let text = with_stdin(text.join(" "))?;
    if text.trim().is_empty() {
        return Err(Error::eval(
            "prompt: nothing to ask: give TEXT or pipe it on stdin",
        ));
    }
    let mut options_source = String::new();
    interp.define_global(Sym::new("*prompt-text*"), Value::from(text.as_str()));
    interp.define_global(
        Sym::new("*prompt-system*"),
        system.map_or(Value::Nil, Value::from),
    );
    if system.is_some() {
        options_source.push_str(" :system \"{{system}}\"");
    }
    if !attachments.is_empty() {
        let paths = attachments
            .iter()
            .map(|a| Value::from(a.as_str()))
            .collect();
        interp.define_global(Sym::new("*prompt-attachments*"), Value::list(paths));
        options_source.push_str(" :attachments *prompt-attachments*");
    }
    if let Some(schema) = schema {
        // A JSON Schema, or a type name such as `object`.
        let value = serde_json::from_str(schema)
            .map(|json| from_json(&json))
            .unwrap_or_else(|_| Value::from(schema));
        interp.define_global(Sym::new("*prompt-schema*"), value);
        options_source.push_str(" :schema *prompt-schema*");
    }
    let source = format!(
        "(deftask prompt (text system){options_source} :prompt \"{{{{text}}}}\")
         (prompt *prompt-text* *prompt-system*)"
    );
    // The answer itself streams to stdout; the TaskResult (`--json`) and an answer
    // checked against a schema are printed once complete.
    let streamed = !options.json && schema.is_none();
    if streamed {
        interp.tasks.set_streaming(Some(StreamTo::Stdout));
    }
    let result = interp
        .run_source(SOURCE_NAME, &source)
        .map_err(without_own_source)?;
    if let Some(warning) = crate::task::result::cut_off_warning(&result) {
        interp.flush();
        eprintln!("tasklisp: {warning}");
    }
    let shown = if options.json {
        to_json(&result)?.to_string()
    } else if streamed {
        return Ok(0);
    } else {
        crate::task::result::field(&result, "content")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut out = interp.out();
    writeln!(out, "{shown}").map_err(|e| Error::stdout_write(&e))?;
    Ok(0)
}

/// The name of the code `prompt` runs: tasklisp's own, not the user's.
const SOURCE_NAME: &str = "<prompt>";

/// An error of the code `prompt` runs, pointing nowhere: its report shows no source the
/// user did not write. Errors in files the user gave (`--import`) keep their place.
fn without_own_source(error: Error) -> Error {
    let own = error.span().is_some_and(|span| {
        crate::source::source(span.source).is_some_and(|file| file.name == SOURCE_NAME)
    });
    if own {
        error.without_span()
    } else {
        error
    }
}

/// TEXT, then what stdin holds when it is not a terminal, separated by a blank line.
fn with_stdin(text: String) -> Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(text);
    }
    let mut piped = String::new();
    stdin
        .lock()
        .read_to_string(&mut piped)
        .map_err(|e| Error::eval(format!("prompt: cannot read stdin: {e}")))?;
    let piped = piped.trim_end();
    Ok(match (text.is_empty(), piped.is_empty()) {
        (_, true) => text,
        (true, false) => piped.to_owned(),
        (false, false) => format!("{text}\n\n{piped}"),
    })
}
