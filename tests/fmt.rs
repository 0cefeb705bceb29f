//! `tasklisp fmt`: the canonical layout is idempotent and keeps meaning on every `.sexp`
//! file of the repository, the repository's own files are formatted, and the command
//! checks, rewrites, and leaves text that does not read alone.

use std::path::{Path, PathBuf};
use tasklisp::internals::fmt::format_text;

#[path = "common/binary.rs"]
mod binary;
use binary::{run_binary, run_binary_with_input};
mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.sexp` file of the repository (not under `target` or hidden directories), as a
/// path relative to its root.
fn sexp_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable directory") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if path.is_dir() && !name.starts_with('.') && name != "target" {
                dirs.push(path);
            } else if name.ends_with(".sexp") {
                files.push(path.strip_prefix(root()).expect("under the root").into());
            }
        }
    }
    files.sort();
    files
}

fn excluded() -> Vec<PathBuf> {
    let list = std::fs::read_to_string(root().join("tests/fmt-exclude")).expect("the list");
    list.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect()
}

/// The data a text reads as, printed: what formatting must not change.
fn meaning(text: &str) -> Option<Vec<String>> {
    let forms = tasklisp::internals::eval::reader::read_data("<fmt>", text).ok()?;
    Some(
        forms
            .iter()
            .map(|f| tasklisp::write_string(&tasklisp::internals::eval::quote::syntax_to_value(f)))
            .collect(),
    )
}

#[test]
fn every_sexp_file_formats_to_the_same_text_twice_and_means_the_same() {
    let files = sexp_files();
    assert!(files.len() > 100, "found {} files", files.len());
    for file in files {
        let text = std::fs::read_to_string(root().join(&file)).expect("a text file");
        let Some(before) = meaning(&text) else {
            continue;
        };
        let once = format_text(&text);
        let twice = format_text(&once);
        assert_eq!(once, twice, "{} formats differently twice", file.display());
        assert_eq!(
            meaning(&once),
            Some(before),
            "formatting changes what {} means",
            file.display()
        );
    }
}

#[test]
fn the_repositorys_own_files_are_formatted() {
    let excluded = excluded();
    for listed in &excluded {
        assert!(
            root().join(listed).is_file(),
            "{} is listed but missing",
            listed.display()
        );
    }
    let unformatted: Vec<PathBuf> = sexp_files()
        .into_iter()
        .filter(|file| !excluded.contains(file))
        .filter(|file| {
            let text = std::fs::read_to_string(root().join(file)).expect("a text file");
            format_text(&text) != text
        })
        .collect();
    assert!(
        unformatted.is_empty(),
        "run `tasklisp fmt` on: {unformatted:?}"
    );
}

const UNFORMATTED: &str = "(define (f x)\n(+ x   1) )\n";
const FORMATTED: &str = "(define (f x)\n  (+ x 1))\n";

#[test]
fn check_lists_the_files_that_would_change_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("ugly.sexp"), UNFORMATTED).expect("write");
    std::fs::write(dir.path().join("fine.sexp"), FORMATTED).expect("write");
    let run = run_binary(dir.path(), &["fmt", "--check"], &[]);
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    assert_eq!(run.stdout, "ugly.sexp\n");
    let ugly = std::fs::read_to_string(dir.path().join("ugly.sexp")).expect("read");
    assert_eq!(ugly, UNFORMATTED);

    let run = run_binary(dir.path(), &["fmt", "ugly.sexp"], &[]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (Some(0), ""),
        "{}",
        run.stderr
    );
    let ugly = std::fs::read_to_string(dir.path().join("ugly.sexp")).expect("read");
    assert_eq!(ugly, FORMATTED);
    let run = run_binary(dir.path(), &["fmt", "--check", "."], &[]);
    assert_eq!(run.status, Some(0), "{}", run.stdout);
}

#[test]
fn a_file_that_does_not_read_is_reported_with_its_span_and_left_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = "(define x\n  (+ 1   2)\n(prn \"open)\n";
    std::fs::write(dir.path().join("broken.sexp"), broken).expect("write");
    let run = run_binary(
        dir.path(),
        &["fmt", "--error-format", "json", "broken.sexp"],
        &[],
    );
    assert_eq!(run.status, Some(1));
    let error: serde_json::Value = serde_json::from_str(run.stderr.trim()).expect("json");
    assert_eq!(error["type"], "SYNTAX_ERROR", "{error}");
    assert_eq!(
        error["location"],
        serde_json::json!({"file": "broken.sexp", "line": 3, "column": 6})
    );
    let after = std::fs::read_to_string(dir.path().join("broken.sexp")).expect("read");
    assert_eq!(after, broken);
}

#[test]
fn standard_input_is_formatted_to_standard_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = run_binary_with_input(dir.path(), &["fmt", "-"], &[], Some(UNFORMATTED));
    assert_eq!((run.status, run.stdout.as_str()), (Some(0), FORMATTED));
    let run = run_binary(dir.path(), &["fmt", "missing.sexp"], &[]);
    assert_eq!(run.status, Some(2), "{}", run.stderr);
}

#[test]
fn the_documented_example_is_formatted() {
    let doc = std::fs::read_to_string(root().join("docs/FORMAT.md")).expect("the doc");
    let blocks = common::code_blocks(&doc, "text");
    assert_eq!(blocks.len(), 1);
    for block in blocks {
        assert_eq!(format_text(&block), block);
    }
}
