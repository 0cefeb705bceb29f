//! The interactive REPL (rustyline), and the piped mode used when stdin is not a terminal.

mod abbreviate;
mod commands;
mod editor;
mod help;
mod output;
mod piped;
mod session;

use crate::error::ErrorFormat;
use crate::eval::Interp;
use std::io::IsTerminal;

pub use commands::describe;
pub use output::{at_line_start, output};
pub use session::completion_names;

/// What the REPL is told by whoever starts it (the command line's flags).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// How errors are printed.
    pub error_format: ErrorFormat,
    /// No start-up banner.
    pub quiet: bool,
}

pub fn main(interp: &Interp, settings: &Settings) -> i32 {
    if std::io::stdin().is_terminal() {
        session::run(interp, settings)
    } else {
        piped::run(interp, settings, &mut |line| {
            std::io::stdin().read_line(line)
        })
    }
}
