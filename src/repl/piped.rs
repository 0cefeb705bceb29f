//! Standard input that is not a terminal (`echo '(+ 1 2)' | tasklisp`): each form runs
//! as soon as it has been read, its value is printed in full canonical form, and the
//! first error ends the run with status 1.

use super::Settings;
use crate::error::{Error, Result};
use crate::eval::Interp;
use crate::reader;
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::write_string;
use std::io::Write;

/// Reads one line into the buffer, as `BufRead::read_line` does.
pub type LineSource<'a> = &'a mut dyn FnMut(&mut String) -> std::io::Result<usize>;

/// `read_line` is called for each line rather than holding standard input locked, so
/// the program's own `read-line` can read the lines that follow its form.
pub fn run(interp: &Interp, settings: &Settings, read_line: LineSource) -> i32 {
    match stream(interp, read_line) {
        Ok(()) => 0,
        Err(e) => {
            interp.flush();
            e.exit_code().unwrap_or_else(|| {
                eprintln!("{}", e.formatted(settings.error_format));
                1
            })
        }
    }
}

/// A form longer than this many lines is re-read only each time it has doubled in
/// length (and at the end of input), so reading it stays linear.
const EAGER_LINES: usize = 1_000;

/// Gathers lines until the text read so far holds complete forms, then runs them.
fn stream(interp: &Interp, read_line: LineSource) -> Result<()> {
    let mut pending = String::new();
    let mut pending_lines = 0;
    let mut next_attempt = 1;
    let mut first_line = 1;
    loop {
        let mut line = String::new();
        let at_end = read_line(&mut line)
            .map_err(|e| Error::eval(format!("cannot read standard input: {e}")))?
            == 0;
        pending.push_str(&line);
        pending_lines += usize::from(!at_end);
        if !at_end && pending_lines < next_attempt {
            continue;
        }
        if !at_end && is_incomplete(&pending) {
            next_attempt = if pending_lines < EAGER_LINES {
                pending_lines + 1
            } else {
                pending_lines * 2
            };
            continue;
        }
        if !pending.trim().is_empty() {
            run_chunk(interp, &chunk_name(first_line), &pending)?;
        }
        if at_end {
            return Ok(());
        }
        first_line += pending_lines;
        pending.clear();
        pending_lines = 0;
        next_attempt = 1;
    }
}

fn is_incomplete(text: &str) -> bool {
    matches!(reader::read_all(text, Span::generated().source), Err(e) if e.is_incomplete())
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
        writeln!(out, "{}", write_string(&value))
            .and_then(|()| out.flush())
            .map_err(|e| Error::stdout_write(&e))?;
        drop(out);
        super::session::warn_if_cut_off(&value);
        interp.define_global(Sym::new("_"), value);
    }
    Ok(())
}
