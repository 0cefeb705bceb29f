//! Finding test files and the tests in them.
//!
//! A test file is a `.sexp` file with top-level `(deftest name …)` forms. With no paths,
//! the files are `tests/**/*.sexp` and every `*.test.sexp` under the working directory
//! (not under hidden directories or `target`). A directory given is searched for
//! `.sexp` files; a file given is taken as it is. Files that do not mention `deftest`
//! are passed over without being read as code, so helper scripts can sit beside tests.

use crate::error::Error;
use crate::eval::reader::{read_source_as, SyntaxKind};
use crate::source::Origin;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// A file's tests, in the order they are defined.
pub struct TestFile {
    pub path: PathBuf,
    pub text: String,
    /// The names of its top-level `deftest`s, or why they could not be read.
    pub tests: Result<Vec<String>, Error>,
}

/// The files to test; a path that does not exist is bad usage (the message).
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = BTreeSet::new();
    if paths.is_empty() {
        let tests = Path::new("tests");
        if tests.is_dir() {
            found.extend(sexp_files(tests, |_| true));
        }
        found.extend(sexp_files(Path::new("."), |name| {
            name.ends_with(".test.sexp")
        }));
        return Ok(found.into_iter().collect());
    }
    for path in paths {
        if path.is_dir() {
            found.extend(sexp_files(path, |_| true));
        } else if path.is_file() {
            found.insert(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    Ok(found.into_iter().collect())
}

/// The `.sexp` files under `dir` whose names `wanted` accepts, skipping hidden
/// directories and `target`.
pub fn sexp_files(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0 || !(name.starts_with('.') || name == "target")
        })
        .filter_map(std::result::Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy();
            name.ends_with(".sexp") && wanted(&name)
        })
        .map(|entry| clean(entry.path()))
        .collect()
}

/// `./a/b.sexp` as `a/b.sexp`: test names read as the user would write the path.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}

/// Reads a file's tests; `None` when it is not a test file (it never says `deftest`).
pub fn read_test_file(path: &Path) -> Option<TestFile> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            return Some(TestFile {
                path: path.to_owned(),
                text: String::new(),
                tests: Err(Error::eval(format!("cannot read {}: {e}", path.display()))),
            })
        }
    };
    if !text.contains("deftest") {
        return None;
    }
    let tests = test_names(path, &text);
    Some(TestFile {
        path: path.to_owned(),
        text,
        tests,
    })
}

/// The names of the top-level `deftest` forms, each once (a name defined twice fails
/// when the file runs).
fn test_names(path: &Path, text: &str) -> Result<Vec<String>, Error> {
    let forms = read_source_as(Origin::File, &path.display().to_string(), text)?;
    let mut names: Vec<String> = forms
        .iter()
        .filter_map(|form| {
            let items = form.as_list()?;
            if items.first()?.as_symbol()?.name() != "deftest" {
                return None;
            }
            match &items.get(1)?.kind {
                SyntaxKind::Symbol(name) => Some(name.name().to_owned()),
                SyntaxKind::Str(name) => Some(name.to_string()),
                _ => None,
            }
        })
        .collect();
    let mut seen = BTreeSet::new();
    names.retain(|name| seen.insert(name.clone()));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_deftests_are_found_in_order() {
        let names = test_names(
            Path::new("t.sexp"),
            "(define x 1)\n(deftest b (expect x))\n(deftest \"a c\" 1)\n(begin (deftest hidden 1))\n(deftest b 2)",
        )
        .unwrap();
        assert_eq!(names, ["b", "a c"]);
    }

    #[test]
    fn files_are_found_by_the_default_patterns_and_given_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "tests/a.sexp",
            "tests/sub/b.sexp",
            "tests/notes.txt",
            "src/c.test.sexp",
            "src/d.sexp",
            "target/e.test.sexp",
            ".git/f.test.sexp",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
        }
        let found = sexp_files(root, |name| name.ends_with(".test.sexp"));
        assert_eq!(found, [root.join("src/c.test.sexp")]);
        let given = find_files(&[root.join("tests")]).unwrap();
        assert_eq!(
            given,
            [root.join("tests/a.sexp"), root.join("tests/sub/b.sexp")]
        );
        assert!(find_files(&[root.join("missing")])
            .unwrap_err()
            .contains("no such file"));
    }
}
