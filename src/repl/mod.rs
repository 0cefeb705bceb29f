//! The interactive REPL (rustyline), and the piped mode used when stdin is not a terminal.

use crate::cli::{report, Options};
use crate::eval::Interp;
use crate::reader;
use crate::value::write_string;
use std::io::{Read, Write};

pub fn main(interp: &Interp, options: &Options) -> i32 {
    piped(interp, options)
}

/// Reads all of stdin, runs each form and prints its value; stops at the first error.
fn piped(interp: &Interp, options: &Options) -> i32 {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("tasklisp: cannot read standard input: {e}");
        return 1;
    }
    let forms = match reader::read_source("<stdin>", &text) {
        Ok(f) => f,
        Err(e) => return report(options, &e),
    };
    for form in &forms {
        match interp.eval_syntax(form) {
            Ok(v) => {
                let _ = writeln!(interp.out(), "{}", write_string(&v));
            }
            Err(e) => {
                interp.flush();
                return e.exit_code().unwrap_or_else(|| report(options, &e));
            }
        }
    }
    0
}
