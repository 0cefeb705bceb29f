//! `tasklisp completions bash|zsh|fish`: a completion script for the shell, made by
//! clap_complete from the command line's own definition.

use super::Options;
use clap::{CommandFactory, ValueEnum};

/// The shells completion scripts are made for.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Prints the completion script; returns the exit status.
pub fn run(options: &Options, shell: Shell) -> i32 {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut Options::command(), "tasklisp", &mut script);
    super::print_stdout(options, &String::from_utf8_lossy(&script))
}
