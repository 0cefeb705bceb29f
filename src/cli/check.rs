//! `tasklisp check`: every file read and analysed without running it. A problem a run
//! of the file must hit is an error (status 1); one in code a run may never reach — a
//! procedure's body, a branch, a `try` — is a warning (status 0, or 1 with `--strict`),
//! so `check` never fails a program that runs.

use super::{report, ErrorFormat, Options};
use crate::error::Error;
use crate::eval::Interp;
use crate::module::names::{Problem, Reach};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

pub fn check_files(interp: &Interp, options: &Options, files: &[PathBuf], strict: bool) -> i32 {
    let checked = crate::module::Checked::default();
    crate::module::declare_tasks(interp, &checked, files);
    let mut status = 0;
    let mut analysed = Vec::new();
    let mut readable = Vec::new();
    for file in files {
        match crate::module::check_file(interp, &checked, file) {
            Ok(code) => {
                readable.push((file, analysed.len()));
                analysed.push(code);
            }
            Err(e) => {
                interp.flush();
                status = report(options, &e);
            }
        }
    }
    // Names, arguments and template tags are checked across all the files at once,
    // after each was read.
    let problems = crate::module::check_names(interp, checked, &analysed);
    for (file, index) in readable {
        let mine: Vec<&Problem> = problems.iter().filter(|p| p.file == index).collect();
        let mut warnings = 0;
        for problem in &mine {
            interp.flush();
            if problem.reach == Reach::Certain {
                status = report(options, &problem.error);
            } else {
                warn(options, &problem.error);
                warnings += 1;
                if strict {
                    status = 1;
                }
            }
        }
        if warnings == mine.len() && !(strict && warnings > 0) {
            let _ = writeln!(interp.out(), "{}: ok{}", file.display(), counted(warnings));
        }
    }
    status
}

/// A warning as `--error-format` asks: marked as one in text, `"severity": "warning"` in
/// JSON.
fn warn(options: &Options, error: &Error) {
    let shown = match options.error_format {
        ErrorFormat::Text => error
            .render_as(std::io::stderr().is_terminal(), miette::Severity::Warning)
            .trim_end()
            .to_owned(),
        ErrorFormat::Json => {
            let mut map = error.to_bounded_json(crate::error::MAX_JSON_ERROR);
            if let Some(object) = map.as_object_mut() {
                object.insert("severity".into(), "warning".into());
            }
            map.to_string()
        }
    };
    eprintln!("{shown}");
}

fn counted(warnings: usize) -> String {
    match warnings {
        0 => String::new(),
        1 => " (1 warning)".to_owned(),
        n => format!(" ({n} warnings)"),
    }
}
