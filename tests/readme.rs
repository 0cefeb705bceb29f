//! The README's tour is true: each `lisp` block runs, and every `(prn …)` line with a
//! `; value` comment prints that value.

use std::process::Command;

mod common;
use common::{lisp_blocks, promised};

#[test]
fn the_readme_tour_runs_and_prints_what_it_says() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let blocks: Vec<String> = lisp_blocks(&readme)
        .into_iter()
        .filter(|b| !b.contains("(import "))
        .collect();
    assert!(blocks.len() >= 2, "the tour has code blocks");
    let dir = tempfile::tempdir().unwrap();
    for (i, block) in blocks.iter().enumerate() {
        let path = dir.path().join(format!("block{i}.sexp"));
        std::fs::write(&path, block).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
            .env("TASKLISP_LOG", "off")
            .arg("run")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "block {i} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        let expected: Vec<String> = block.lines().filter_map(promised).collect();
        assert_eq!(printed, expected, "block {i}");
    }
}

/// The XML module the README shows is the file it imports, and the import runs as
/// written from the repository's root.
#[test]
fn the_readme_xml_module_is_shipped_and_imports() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let shown = readme
        .split("```xml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows an XML module");
    let shipped = std::fs::read_to_string(format!("{root}/examples/templates/greet.xml")).unwrap();
    assert_eq!(shown, shipped);
    let block = lisp_blocks(&readme)
        .into_iter()
        .find(|b| b.contains("(import "))
        .expect("the README imports the module");
    let out = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .args(["eval", &block])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: Vec<String> = block.lines().filter_map(promised).collect();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed.lines().next(), expected.first().map(String::as_str));
}
