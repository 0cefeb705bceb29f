//! The interactive REPL (rustyline), and the piped mode used when stdin is not a terminal.

mod abbreviate;
mod commands;
mod editor;
mod help;
mod output;
mod piped;
mod session;

use crate::cli::Options;
use crate::eval::Interp;
use std::io::IsTerminal;

pub use commands::describe;
pub use output::{at_line_start, output};
pub use session::completion_names;

pub fn main(interp: &Interp, options: &Options) -> i32 {
    if std::io::stdin().is_terminal() {
        session::run(interp, options)
    } else {
        piped::run(interp, options, &mut |line| {
            std::io::stdin().read_line(line)
        })
    }
}
