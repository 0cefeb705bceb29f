//! Standard input that is not a terminal (`echo '(+ 1 2)' | tasklisp`): each form runs
//! as soon as it has been read, its value is printed in full canonical form, and the
//! first error ends the run with status 1.

use crate::cli::{report, Options};
use crate::error::Result;
use crate::eval::Interp;
use crate::reader;
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::write_string;
use std::io::{BufRead, Write};

pub fn run(interp: &Interp, options: &Options, input: impl BufRead) -> i32 {
    match stream(interp, input) {
        Ok(()) => 0,
        Err(e) => {
            interp.flush();
            e.exit_code().unwrap_or_else(|| report(options, &e))
        }
    }
}

/// Gathers lines until the text read so far holds complete forms, then runs them.
fn stream(interp: &Interp, mut input: impl BufRead) -> Result<()> {
    let mut pending = String::new();
    let mut first_line = 1;
    let mut lines_read = 0;
    loop {
        let mut line = String::new();
        let at_end = input
            .read_line(&mut line)
            .map_err(|e| crate::error::Error::eval(format!("cannot read standard input: {e}")))?
            == 0;
        lines_read += usize::from(!at_end);
        pending.push_str(&line);
        let incomplete = matches!(
            reader::read_all(&pending, Span::generated().source),
            Err(e) if e.is_incomplete()
        );
        if incomplete && !at_end {
            continue;
        }
        if !pending.trim().is_empty() {
            run_chunk(interp, &chunk_name(first_line), &pending)?;
        }
        if at_end {
            return Ok(());
        }
        pending.clear();
        first_line = lines_read + 1;
    }
}

/// `<stdin>` for input that starts on the first line, else `<stdin:LINE>`, so a report
/// against a later form still says where it was.
fn chunk_name(first_line: usize) -> String {
    if first_line == 1 {
        "<stdin>".to_owned()
    } else {
        format!("<stdin:{first_line}>")
    }
}

fn run_chunk(interp: &Interp, name: &str, text: &str) -> Result<()> {
    for form in reader::read_source(name, text)? {
        let value = interp.eval_syntax(&form)?;
        let mut out = interp.out();
        let _ = writeln!(out, "{}", write_string(&value));
        let _ = out.flush();
        drop(out);
        interp.define_global(Sym::new("_"), value);
    }
    Ok(())
}
