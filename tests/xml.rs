//! XML template files and modules through the public API: `check_file`, `import`,
//! `load`, errors with their locations, hostile and large inputs.
//!
//! Running imported tasks end to end is covered by the golden scripts in
//! `tests/scripts/xml/` (they need the task runtime).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tasklisp::internals::module::{check_file, load, Checked};
use tasklisp::write_string;
use tasklisp::{Error, ErrorKind, Interp, Limits};

fn with_interp<R: Send + 'static>(f: impl FnOnce(&Interp) -> R + Send + 'static) -> R {
    tasklisp::run_on_large_stack(&Limits::default(), |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        f(&interp)
    })
    .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Checks one file, with what earlier checks in `state` learned; its analysed code (not
/// `Send`) is dropped here.
fn checked(interp: &Interp, state: &Checked, path: &Path) -> Result<(), Error> {
    check_file(interp, state, path).map(|_| ())
}

fn check(path: PathBuf) -> Result<(), Error> {
    with_interp(move |interp| checked(interp, &Checked::default(), &path))
}

/// The line and column an error points at, from its JSON form.
fn location(e: &Error) -> (u64, u64) {
    let json = e.to_json();
    (
        json["location"]["line"].as_u64().unwrap_or(0),
        json["location"]["column"].as_u64().unwrap_or(0),
    )
}

fn templates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/xml/templates")
}

#[test]
fn check_accepts_the_template_files_of_the_golden_scripts() {
    for name in ["basic.xml", "review.xml"] {
        check(templates_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {}", e.message()));
    }
}

#[test]
fn check_reports_each_error_with_file_line_and_column() {
    let cases = [
        ("malformed.xml", ErrorKind::XmlParse, (4, 3)),
        ("unknown_ref.xml", ErrorKind::Validation, (4, 23)),
        ("bad_test.xml", ErrorKind::Validation, (4, 41)),
    ];
    for (name, kind, place) in cases {
        let e = check(templates_dir().join(name)).unwrap_err();
        assert_eq!(e.kind(), kind, "{name}: {}", e.message());
        assert_eq!(location(&e), place, "{name}: {}", e.message());
        assert!(e.to_json()["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with(name));
        let report = e.render(false);
        assert!(
            report.contains(&format!("{name}:{}:{}", place.0, place.1)),
            "{report}"
        );
    }
}

#[test]
fn hostile_documents_are_refused_quickly() {
    // Refused before any entity is expanded: the DOCTYPE itself is the error.
    for name in ["billion_laughs.xml", "external_entity.xml"] {
        let e = check(templates_dir().join(name)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::XmlParse, "{name}");
        assert!(e.message().contains("DOCTYPE"), "{}", e.message());
    }
    let dir = tempfile::tempdir().unwrap();
    let deep = write(dir.path(), "deep.xml", &"<a>".repeat(1_000_000));
    assert_eq!(check(deep).unwrap_err().kind(), ErrorKind::Validation);
    let binary = dir.path().join("binary.xml");
    std::fs::write(&binary, [0xff, 0xfe, b'<', 0x00]).unwrap();
    assert_eq!(check(binary).unwrap_err().kind(), ErrorKind::XmlParse);
}

#[test]
fn check_resolves_references_between_files_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let library = write(
        dir.path(),
        "library.xml",
        r#"<task name="shared"><inputs><input name="x"/></inputs><instructions>{{x}}</instructions></task>"#,
    );
    let flow = write(
        dir.path(),
        "flow.xml",
        r#"<task name="flow" type="sequential"><inputs><input name="x"/></inputs><steps><task ref="shared"/></steps></task>"#,
    );
    let again = write(
        dir.path(),
        "again.xml",
        r#"<task name="shared"><instructions>other</instructions></task>"#,
    );
    with_interp(move |interp| {
        let state = Checked::default();
        let checked = |path: &PathBuf| checked(interp, &state, path);
        assert_eq!(checked(&flow).unwrap_err().kind(), ErrorKind::Validation);
        checked(&library).unwrap();
        checked(&flow).unwrap();
        // checking the same file again is fine; the same name from another file is not
        checked(&library).unwrap();
        let e = checked(&again).unwrap_err();
        assert!(
            e.message().contains("`shared` is defined twice"),
            "{}",
            e.message()
        );
        assert!(e.message().contains("library.xml") && e.message().contains("again.xml"));
    });
}

#[test]
fn checking_a_script_checks_the_xml_it_imports() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad.xml",
        "<task name='a'><instructions>x</instructions><extra/></task>",
    );
    let script = write(
        dir.path(),
        "main.sexp",
        "(define x 1)\n(import \"bad.xml\")\n",
    );
    let e = check(script).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(
        e.message().contains("unknown element <extra>"),
        "{}",
        e.message()
    );
    let fine = write(
        dir.path(),
        "fine.sexp",
        "(import \"../nowhere.sexp\" :as m)\n(define y 2)\n",
    );
    check(fine).unwrap();
    // a task the script defines before importing is known to the XML it imports,
    let uses = templates_dir()
        .join("uses_library.xml")
        .display()
        .to_string();
    let defines = format!("(deftask summarize (text (style \"short\")) :prompt \"{{{{text}}}}\")\n(import {uses:?})\n");
    check(write(dir.path(), "defines.sexp", &defines)).unwrap();
    // and so is one it defines after: the import looks it up when the task runs
    let after = format!("(import {uses:?})\n(deftask summarize (text) :prompt \"x\")\n");
    check(write(dir.path(), "after.sexp", &after)).unwrap();
}

#[test]
fn import_errors_are_found_before_anything_is_registered() {
    with_interp(|interp| {
        let file = templates_dir().join("bad_test.xml");
        let code = format!("(import {:?})", file.display().to_string());
        let e = interp.run_source("<test>", &code).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert_eq!(location(&e), (4, 41));
        assert!(interp.tasks.names().is_empty());
    });
}

#[test]
fn import_forms_are_checked_when_analysed() {
    with_interp(|interp| {
        for code in [
            "(import)",
            "(import \"x.xml\" :as)",
            "(import \"x.xml\" :as a/b)",
            "(import \"x.xml\" :only greet)",
            "(import \"x.xml\" :colour red)",
            "(load)",
            "(load \"a\" \"b\")",
        ] {
            let e = interp.run_source("<test>", code).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Syntax, "{code}: {}", e.message());
        }
        let e = interp.run_source("<test>", "(import 42)").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Eval);
        let e = interp
            .run_source("<test>", "(import \"missing.sexp\")")
            .unwrap_err();
        assert!(e.message().contains("cannot read"), "{}", e.message());
        let e = interp
            .run_source("<test>", "(import \"m.sexp\" :only (a))")
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        let e = interp
            .run_source("<test>", "(load \"templates.xml\")")
            .unwrap_err();
        assert!(e.message().contains("import"), "{}", e.message());
    });
}

#[test]
fn sexp_modules_import_once_namespaced_and_cycles_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "counter.sexp",
        "(define tally 0)\n(define (bump) (set! tally (+ tally 1)) tally)\n",
    );
    write(
        dir.path(),
        "a.sexp",
        "(import \"b.sexp\")\n(define from-a 1)\n",
    );
    write(dir.path(), "b.sexp", "(import \"sub/c.sexp\")\n");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(dir.path(), "sub/c.sexp", "(import \"../a.sexp\")\n");
    let main = write(
        dir.path(),
        "main.sexp",
        "(import \"counter.sexp\" :as c)\n(import \"counter.sexp\" :as c)\n(c/bump)\n(c/bump)\n",
    );
    let root = dir.path().to_path_buf();
    with_interp(move |interp| {
        let value = load(interp, &main).unwrap();
        assert_eq!(write_string(&value), "2");
        assert!(
            interp.run_source("<test>", "tally").is_err(),
            "only c/tally is defined"
        );
        let e = load(interp, &root.join("a.sexp")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert!(e.message().starts_with("import cycle: "), "{}", e.message());
        assert!(
            e.message().contains("b.sexp") && e.message().contains("c.sexp"),
            "{}",
            e.message()
        );
        assert!(
            interp.loading().borrow().is_empty(),
            "the loading stack unwinds on error"
        );
    });
}

#[test]
fn load_runs_every_time_relative_to_the_loading_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "inc.sexp", "(set! n (+ n 1))\nn\n");
    let main = write(
        dir.path(),
        "main.sexp",
        "(define n 0)\n(load \"inc.sexp\")\n(load \"inc.sexp\")\n",
    );
    with_interp(move |interp| {
        assert_eq!(write_string(&load(interp, &main).unwrap()), "2");
    });
}

/// `count` templates: atomic ones, and sequential ones that refer to earlier tasks.
fn many_templates(count: usize, instructions: &str) -> String {
    let mut xml = String::from("<tasks>\n");
    for i in 0..count {
        if i % 4 == 3 {
            let _ = writeln!(
                xml,
                "<task name=\"t{i}\" type=\"sequential\"><inputs><input name=\"text\"/></inputs><steps>\
                 <task ref=\"t{}\"/><call template=\"t{}\"><arg name=\"text\">step_results[0].content</arg></call>\
                 <cond><case test=\"output.ok == true &amp;&amp; output.n &gt; 2\"><task ref=\"t{}\"/></case></cond>\
                 </steps></task>",
                i - 1,
                i - 2,
                i - 3
            );
        } else {
            let _ = writeln!(
                xml,
                "<task name=\"t{i}\" subtype=\"standard\"><description>Task {i}</description>\
                 <inputs><input name=\"text\"/><input name=\"style\" default=\"brief\"/></inputs>\
                 <instructions>{instructions} {{{{style}}}} {{{{text}}}}</instructions>\
                 <output_format type=\"json\" schema=\"object\"/></task>"
            );
        }
    }
    xml.push_str("</tasks>\n");
    xml
}

#[test]
fn a_thousand_templates_in_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "many.xml",
        &many_templates(1_000, "Summarize in a"),
    );
    // Checked, not timed: a loaded machine decides the time, not the code.
    check(path).unwrap();
}

#[test]
fn a_ten_megabyte_file() {
    let dir = tempfile::tempdir().unwrap();
    let filler = "lorem ipsum &amp; dolor sit amet ".repeat(400);
    let xml = many_templates(1_000, &filler);
    assert!(xml.len() > 10_000_000, "{} bytes", xml.len());
    let path = write(dir.path(), "big.xml", &xml);
    // Checked, not timed: a loaded machine decides the time, not the code.
    check(path).unwrap();
}

#[test]
fn the_command_line_checks_and_imports() {
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
            .env("TASKLISP_LOG", "off")
            .args(args)
            .current_dir(templates_dir())
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stdout, _) = run(&["check", "basic.xml", "review.xml"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout, "basic.xml: ok\nreview.xml: ok\n");
    let (code, stdout, stderr) = run(&["check", "basic.xml", "unknown_ref.xml"]);
    assert_eq!(code, Some(1));
    assert_eq!(stdout, "basic.xml: ok\n");
    assert!(
        stderr.contains("VALIDATION_ERROR") && stderr.contains("unknown_ref.xml:4:23"),
        "{stderr}"
    );
    // a reference to a task a file given later defines is fine; one no file defines is not
    let (code, stdout, stderr) = run(&["check", "seeds/refs.xml", "seeds/polish.xml"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "seeds/refs.xml: ok\nseeds/polish.xml: ok\n");
    let (code, _, stderr) = run(&["check", "seeds/refs.xml"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("unknown task `polish`"), "{stderr}");
    let (code, _, stderr) = run(&["--import", "malformed.xml", "eval", "1"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("XML_PARSE_ERROR") && stderr.contains("malformed.xml:4:3"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["--error-format", "json", "check", "bad_test.xml"]);
    assert_eq!(code, Some(1));
    let error: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(error["type"], "VALIDATION_ERROR");
    assert_eq!(error["location"]["line"], 4);
    assert_eq!(error["location"]["column"], 41);
}

/// The XML examples of the design documents, copied as written: those in tasklisp's
/// terms check as they are; the one whose `<code>` is TypeScript is refused there.
#[test]
fn the_seeds_examples_check_as_written() {
    let seeds = templates_dir().join("seeds/as_written");
    let scratch = tempfile::tempdir().unwrap();
    let library = write(
        scratch.path(),
        "process_data.sexp",
        "(deftask process_data (data) :prompt \"Process {{data}}\")\n",
    );
    with_interp(move |interp| {
        let state = Checked::default();
        checked(interp, &state, &library).unwrap();
        for name in [
            "automatic_step_results.xml",
            "handle_result.xml",
            "fresh_enabled.xml",
        ] {
            checked(interp, &state, &seeds.join(name))
                .unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        }
        let e = checked(interp, &state, &seeds.join("explicit_binding.xml")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
        assert_eq!(location(&e), (9, 16));
        assert!(e
            .render(false)
            .contains("<code> holds tasklisp expressions"));
    });
}

/// The complete example of `docs/XML.md` imports and runs as written: its XML block is
/// saved as the file its `lisp` block imports, and each `(prn …) ; value` line prints
/// that value.
#[test]
fn the_complete_example_in_the_docs_runs() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/XML.md")).unwrap();
    let section = doc
        .split("## A complete example")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the section");
    let xml = section
        .split("```xml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the XML block");
    let code = section
        .split("```lisp\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the lisp block");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "triage.xml", xml);
    let script = write(dir.path(), "main.sexp", code);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .arg("run")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let promised: Vec<&str> = code
        .lines()
        .filter(|l| l.starts_with("(prn "))
        .filter_map(|l| l.rsplit_once(" ; ").map(|(_, v)| v))
        .collect();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed.lines().collect::<Vec<_>>(), promised);
}

/// Every complete `<task>` or `<tasks>` example in docs/XML.md parses and validates.
#[test]
fn the_xml_guide_examples_validate() {
    let guide = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/XML.md"))
        .expect("docs/XML.md");
    let blocks = common::code_blocks(&guide, "xml");
    let documents: Vec<&String> = blocks
        .iter()
        .filter(|b| {
            let b = b.trim_start();
            (b.starts_with("<task name") || b.starts_with("<tasks>")) && !b.contains('…')
        })
        .collect();
    assert!(documents.len() >= 8, "found {} examples", documents.len());
    for block in documents {
        if let Err(e) = tasklisp::internals::xml::read_str("<guide>", block) {
            panic!("{block}\n{}", e.message());
        }
    }
}
