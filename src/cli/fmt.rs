//! `tasklisp fmt`: `.sexp` files rewritten in the canonical layout (`crate::fmt`), or with
//! `--check` listed when they would change. A file that does not read is reported with
//! its syntax error and left as it is.

use super::{report, Options, USAGE};
use crate::error::{Error, Result};
use crate::value::bounds::read_file_bytes;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct FmtArgs {
    /// Files, and directories to search for .sexp files (hidden ones and `target`
    /// skipped); `-` formats standard input to standard output. None: the current
    /// directory.
    pub paths: Vec<PathBuf>,
    /// Change nothing: list the files that would change, and exit 1 if there are any.
    #[arg(long)]
    pub check: bool,
}

/// Runs `tasklisp fmt`; returns the exit status.
pub fn run(options: &Options, args: &FmtArgs) -> i32 {
    if args.paths.iter().any(|p| p == Path::new("-")) {
        return match args.paths.len() {
            1 => stdin(options, args.check),
            _ => {
                eprintln!("tasklisp: fmt: `-` (standard input) cannot be given with files");
                USAGE
            }
        };
    }
    let files = match files(&args.paths) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("tasklisp: fmt: {message}");
            return USAGE;
        }
    };
    let mut status = 0;
    for file in files {
        match format_file(&file, options.max_file_size, args.check) {
            Ok(false) => {}
            Ok(true) => {
                println!("{}", file.display());
                status = 1;
            }
            Err(e) => status = report(options, &e),
        }
    }
    status
}

/// The files the paths name: files as given, the `.sexp` files under directories.
fn files(paths: &[PathBuf]) -> std::result::Result<Vec<PathBuf>, String> {
    let here = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &here[..] } else { paths };
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            found.extend(crate::testing::discover::sexp_files(path, |_| true));
        } else if path.is_file() {
            found.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    Ok(found)
}

/// Formats one file; returns whether it would change (with `check`) — a file rewritten
/// is not reported.
fn format_file(file: &Path, limit: u64, check: bool) -> Result<bool> {
    let text = super::decode(file, read_file_bytes(file, limit)?)?;
    let formatted = crate::fmt::format_source(&file.display().to_string(), &text)?;
    if formatted == text {
        return Ok(false);
    }
    if check {
        return Ok(true);
    }
    crate::atomic_file::write(file, formatted.as_bytes())
        .map_err(|e| Error::eval(format!("cannot write {}: {e}", file.display())))?;
    Ok(false)
}

/// `tasklisp fmt -`: standard input formatted on standard output (nothing when it does
/// not read: the error goes to stderr).
fn stdin(options: &Options, check: bool) -> i32 {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("tasklisp: fmt: cannot read standard input: {e}");
        return USAGE;
    }
    match crate::fmt::format_source("<stdin>", &text) {
        Ok(formatted) if check => i32::from(formatted != text),
        Ok(formatted) => super::print_stdout(options, &formatted),
        Err(e) => report(options, &e),
    }
}
