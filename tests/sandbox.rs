//! `--sandbox`: each capability is denied by default, with `permission_denied` naming the
//! flag, and allowed by that flag; and the examples of docs/SECURITY.md run as shown.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{lisp_blocks, promised};

/// Runs `tasklisp FLAGS… run` on `program` in `dir`.
fn run(dir: &Path, flags: &[&str], program: &str) -> Output {
    let file = dir.join("program.sexp");
    std::fs::write(&file, program).unwrap();
    Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .args(flags)
        .arg("run")
        .arg(&file)
        .current_dir(dir)
        .env("TASKLISP_SANDBOX_TEST", "visible")
        .env("TASKLISP_PROVIDER", "echo")
        .output()
        .unwrap()
}

/// What `program` printed; it must succeed.
fn printed(dir: &Path, flags: &[&str], program: &str) -> String {
    let out = run(dir, flags, program);
    assert!(
        out.status.success(),
        "{flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Prints the value of `expr`, or the reason and flag of the error it raises.
fn outcome(expr: &str) -> String {
    format!("(prn (try {expr} (catch e (list e.reason e.details.flag))))")
}

fn denied(flag: &str) -> String {
    format!("(\"permission_denied\" \"{flag}\")\n")
}

#[test]
fn running_programs() {
    let dir = tempfile::tempdir().unwrap();
    let program = format!(
        "(deftask hi () :command [\"echo\" \"hi\"]) {}
         (deftask sh-hi (x) :command [\"echo \\\"$1\\\"\" x] :shell true) {}",
        outcome("(get (hi) \"content\")"),
        outcome("(get (sh-hi \"there\") \"content\")"),
    );
    let path = dir.path();
    assert_eq!(
        printed(path, &["--sandbox"], &program),
        denied("--allow-exec=echo") + &denied("--allow-exec=sh")
    );
    assert_eq!(
        printed(path, &["--sandbox", "--allow-exec=echo"], &program),
        "\"hi\\n\"\n".to_owned() + &denied("--allow-exec=sh")
    );
    assert_eq!(
        printed(path, &["--sandbox", "--allow-exec=echo,sh"], &program),
        "\"hi\\n\"\n\"there\\n\"\n"
    );
    assert_eq!(
        printed(path, &["--sandbox", "--allow-exec"], &program),
        "\"hi\\n\"\n\"there\\n\"\n"
    );
    assert_eq!(printed(path, &[], &program), "\"hi\\n\"\n\"there\\n\"\n");
}

#[test]
fn an_allowed_name_runs_the_program_found_on_tasklisps_path_not_the_tasks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for name in ["wc", "sh"] {
        let fake = bin.join(name);
        std::fs::write(&fake, "#!/bin/sh\necho swapped\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let program = format!(
        r#"(deftask count () :command ["wc" "-c"] :stdin "abc" :env {{"PATH" "{bin}"}})
           (deftask shell () :command ["echo real"] :shell true :env {{"PATH" "{bin}"}})
           (prn (string-trim (get (count) "content")) (get (shell) "content"))"#,
        bin = bin.display()
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox", "--allow-exec=wc,sh"], &program),
        "\"3\" \"real\\n\"\n"
    );
}

#[test]
fn reading_files() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("note.txt"), "hello").unwrap();
    std::fs::write(data.join("lib.sexp"), "(define loaded 42)").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "key").unwrap();
    let real = std::fs::canonicalize(&data).unwrap();
    let program = format!(
        "(deftask quote-it () :files [\"data/note.txt\"] :prompt \"{{{{files}}}}\")
         {} {} {} {} {} {} {}",
        outcome("(read-file \"data/note.txt\")"),
        outcome("(begin (load \"data/lib.sexp\") loaded)"),
        outcome("(file-exists? \"data/note.txt\")"),
        outcome("(list-dir \"data\")"),
        outcome("(get (first (get (get-context \"hello\" :dir \"data\") \"matches\")) \"path\")"),
        outcome("(get (quote-it) \"content\")"),
        outcome("(read-file \"data/../secret.txt\")"),
    );
    let flag = format!("--allow-read={}", real.display());
    let top = format!(
        "--allow-read={}",
        std::fs::canonicalize(dir.path()).unwrap().display()
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox"], &program),
        denied(&flag).repeat(6) + &denied(&top)
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox", "--allow-read=data"], &program),
        "\"hello\"\n42\ntrue\n(\"lib.sexp\" \"note.txt\")\n\"data/note.txt\"\n\"--- data/note.txt ---\\nhello\"\n".to_owned()
            + &denied(&top)
    );
}

#[test]
fn writing_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let real = std::fs::canonicalize(dir.path().join("out")).unwrap();
    let program = outcome(
        "(begin (write-file \"out/result.txt\" \"do\") (append-file \"out/result.txt\" \"ne\"))",
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox"], &program),
        denied(&format!("--allow-write={}", real.display()))
    );
    assert!(!dir.path().join("out/result.txt").exists());
    // Reading is not writing.
    assert_eq!(
        printed(dir.path(), &["--sandbox", "--allow-read=out"], &program),
        denied(&format!("--allow-write={}", real.display()))
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox", "--allow-write=out"], &program),
        "nil\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/result.txt")).unwrap(),
        "done"
    );
}

#[test]
fn reading_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let program = outcome("(getenv \"TASKLISP_SANDBOX_TEST\")");
    assert_eq!(
        printed(dir.path(), &["--sandbox"], &program),
        denied("--allow-env=TASKLISP_SANDBOX_TEST")
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox", "--allow-env=HOME"], &program),
        denied("--allow-env=TASKLISP_SANDBOX_TEST")
    );
    assert_eq!(
        printed(
            dir.path(),
            &["--sandbox", "--allow-env=HOME,TASKLISP_SANDBOX_TEST"],
            &program
        ),
        "\"visible\"\n"
    );
}

#[test]
fn choosing_a_provider() {
    let dir = tempfile::tempdir().unwrap();
    let program = format!(
        "{} {} {}",
        outcome("(begin (set-provider! \"openai\" {\"base_url\" \"http://127.0.0.1:9/v1\"}) :set)"),
        outcome("(begin (set-provider! \"echo\") :echo)"),
        outcome("(begin (set-provider! (fn (request) \"a\")) :procedure)"),
    );
    assert_eq!(
        printed(dir.path(), &["--sandbox"], &program),
        denied("--allow-provider=openai") + ":echo\n:procedure\n"
    );
    assert_eq!(
        printed(
            dir.path(),
            &[
                "--sandbox",
                "--allow-provider=openai",
                "--allow-net=127.0.0.1"
            ],
            &program
        ),
        ":set\n:echo\n:procedure\n"
    );
}

/// A cassette is a file: `record` writes it and `replay` reads it, so code choosing them
/// needs `--allow-write` and `--allow-read` for it, besides `--allow-provider`.
#[test]
fn a_cassette_chosen_by_code_needs_the_file_capabilities() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tapes")).unwrap();
    std::fs::write(dir.path().join("victim.txt"), "keep me").unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    let program = format!(
        "{} {}",
        outcome("(begin (set-provider! \"record:echo\" {\"cassette\" \"victim.txt\"}) :recording)"),
        outcome("(begin (set-provider! \"replay\" {\"cassette\" \"victim.txt\"}) :replaying)"),
    );
    let flags = ["--sandbox", "--allow-provider=record,echo,replay"];
    assert_eq!(
        printed(dir.path(), &flags, &program),
        denied(&format!("--allow-write={}", real.display()))
            + &denied(&format!("--allow-read={}", real.display()))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim.txt")).unwrap(),
        "keep me"
    );
    let allowed = program.replace("victim.txt", "tapes/c.jsonl");
    let flags = [
        "--sandbox",
        "--allow-provider=record,echo,replay",
        "--allow-write=tapes",
        "--allow-read=tapes",
    ];
    assert_eq!(
        printed(dir.path(), &flags, &allowed),
        ":recording\n:replaying\n"
    );
}

/// A provider chosen by code sends its key to the server code names: the variable must
/// pass `--allow-env` and the base URL `--allow-net`, whatever `--allow-provider` says.
/// Nothing is sent (the port is closed), so each outcome is the check's.
#[test]
fn a_provider_chosen_by_code_sends_keys_only_to_allowed_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let with = |options: &str| {
        outcome(&format!(
            "(with-provider {{\"provider\" \"openai\" \"model\" \"m\" \"max_retries\" 0 {options}}} :chosen)"
        ))
    };
    let program = [
        with("\"base_url\" \"http://127.0.0.1:9/v1\" \"api_key_env\" \"TASKLISP_SANDBOX_TEST\""),
        with("\"base_url\" \"http://127.0.0.1:9/v1\""),
        with("\"api_key_env\" \"TASKLISP_SANDBOX_TEST\""),
        outcome(
            "(begin (set-provider! \"openai\" {\"base_url\" \"http://Evil.example/v1\"}) :set)",
        ),
    ]
    .join(" ");
    let provider = ["--sandbox", "--allow-provider=openai"];
    assert_eq!(
        printed(dir.path(), &provider, &program),
        denied("--allow-net=127.0.0.1")
            + &denied("--allow-net=127.0.0.1")
            + &denied("--allow-env=TASKLISP_SANDBOX_TEST")
            + &denied("--allow-net=evil.example")
    );
    let net = [&provider[..], &["--allow-net=127.0.0.1:9,evil.example"]].concat();
    assert_eq!(
        printed(dir.path(), &net, &program),
        denied("--allow-env=TASKLISP_SANDBOX_TEST")
            + ":chosen\n"
            + &denied("--allow-env=TASKLISP_SANDBOX_TEST")
            + ":set\n"
    );
    let all = [&net[..], &["--allow-env=TASKLISP_SANDBOX_TEST"]].concat();
    assert_eq!(
        printed(dir.path(), &all, &program),
        ":chosen\n:chosen\n:chosen\n:set\n"
    );
    let port = [
        &provider[..],
        &[
            "--allow-env=TASKLISP_SANDBOX_TEST",
            "--allow-net=127.0.0.1:10,evil.example",
        ],
    ]
    .concat();
    assert_eq!(
        printed(dir.path(), &port, &program),
        denied("--allow-net=127.0.0.1").repeat(2) + ":chosen\n:set\n"
    );
}

#[test]
fn a_denied_action_is_an_ordinary_task_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &["--sandbox", "--error-format", "json"],
        "(getenv \"HOME\")",
    );
    assert_eq!(out.status.code(), Some(1));
    let error: serde_json::Value = serde_json::from_slice(out.stderr.trim_ascii()).unwrap();
    assert_eq!(error["type"], "TASK_FAILURE");
    assert_eq!(error["reason"], "permission_denied");
    assert_eq!(error["details"]["capability"], "env");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("pass --allow-env=HOME"));
}

#[test]
fn allow_flags_need_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--allow-exec=ls"], "(prn 1)");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sandbox"));
}

/// Each `lisp` block of docs/SECURITY.md runs with the flags of its `;; flags:` line and
/// prints what its `(prn …) ; value` lines promise.
#[test]
fn the_security_guide_examples_run() {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/SECURITY.md")).unwrap();
    let blocks = lisp_blocks(&guide);
    assert!(blocks.len() >= 2, "found {} examples", blocks.len());
    let dir = tempfile::tempdir().unwrap();
    for block in blocks {
        let flags: Vec<&str> = block
            .lines()
            .find_map(|line| line.strip_prefix(";; flags:"))
            .map(|flags| flags.split_whitespace().collect())
            .unwrap_or_default();
        let expected: String = block
            .lines()
            .filter_map(promised)
            .map(|value| value + "\n")
            .collect();
        assert_eq!(printed(dir.path(), &flags, &block), expected, "{block}");
    }
}

/// What `eval-sandboxed` gave back as its `value`, printed, for `plan` run with the
/// options `options`, after the caller's `setup`.
fn sandboxed_value(setup: &str, plan: &str, options: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let program = format!(
        "{setup}\n(prn (get (eval-sandboxed {plan:?} {options}) \"value\"))",
        plan = plan
    );
    printed(dir.path(), &[], &program)
}

#[test]
fn a_procedure_provider_calls_its_callers_helper_not_the_plans() {
    // The provider closes over a key and hands it to a global helper; the plan defines
    // a helper of that name and asks its own prompt task, so the provider is called
    // from the plan's code.
    let setup = "(define (shape text) (str \"answer to \" (string-length text)))
                 (set-provider!
                   (let ((key \"sk-caller-secret\"))
                     (fn (request) (shape (str key (get (last request.messages) \"content\"))))))";
    let plan = "(define stolen nil)
                (define (shape text) (set! stolen text) \"pwned\")
                (deftask ask (q) :prompt \"{{q}}\")
                [(get (ask \"hi\") \"content\") stolen]";
    assert_eq!(sandboxed_value(setup, plan, ""), "(\"answer to 18\" nil)\n");
}

#[test]
fn a_given_task_calls_its_callers_helpers_and_tasks_not_the_plans() {
    let setup = "(define (helper x) (str \"caller's helper \" x))
                 (deftask inner (x) (str \"caller's inner \" x))
                 (deftask wrap (x) (str (helper x) \", \" (get (inner x) \"content\")))";
    let plan = "(define (helper x) (str \"plan's helper \" x))
                (deftask inner (x) (str \"plan's inner \" x))
                (get (wrap \"a\") \"content\")";
    assert_eq!(
        sandboxed_value(setup, plan, ":tasks [\"wrap\"]"),
        "\"caller's helper a, caller's inner a\"\n"
    );
}

#[test]
fn a_given_task_sees_none_of_the_plans_local_bindings() {
    // `:inherit-context "full"` (the default) would look the plan's `let` up first: a
    // task from another home sees only its own home's names.
    let setup = "(define (helper x) (str \"caller's helper \" x))
                 (deftask wrap (x) (helper x))";
    let plan = "(let ((helper (fn (x) (str \"plan's helper \" x))))
                  (get (wrap \"a\") \"content\"))";
    assert_eq!(
        sandboxed_value(setup, plan, ":tasks [\"wrap\"]"),
        "\"caller's helper a\"\n"
    );
}

#[test]
fn a_procedure_given_in_env_calls_its_callers_helper_and_sees_its_updates() {
    let setup = "(define calls 0)
                 (define (helper x) (set! calls (+ calls 1)) (* x 10))
                 (define f (fn (x) (helper x)))";
    // Called from the plan's code, and from the tail of the plan's procedure.
    let plan =
        "(define (helper x) x) (define calls 100) (define (via x) (f x)) [(f 1) (via 2) calls]";
    let dir = tempfile::tempdir().unwrap();
    let program = format!(
        "{setup}\n(prn (get (eval-sandboxed {plan:?} :env {{\"f\" f}}) \"value\"))\n(prn calls)"
    );
    // The caller's helper ran, and counted in the caller's `calls`; the plan's own
    // `calls` is the plan's.
    assert_eq!(printed(dir.path(), &[], &program), "(10 20 100)\n2\n");
}

#[test]
fn the_plans_procedures_see_the_plans_globals_wherever_they_are_called_from() {
    // The plan's closure, called by the caller's procedure, sees the plan's `k`, not
    // the caller's; the plan's own definitions see its later redefinitions.
    let setup = "(define k \"caller's k\") (define (twice f x) (f (f x)))";
    let plan = "(define k 10)
                (define (helper) 1) (define (g) (helper)) (define (helper) 2)
                [(twice (fn (x) (+ x k)) 1) (g)]";
    assert_eq!(
        sandboxed_value(setup, plan, ":env {\"twice\" twice}"),
        "(21 2)\n"
    );
}

#[test]
fn a_procedure_made_by_the_callers_code_comes_out_as_its_text() {
    // Made in the plan by the caller's procedure, it closes over the caller's
    // names: copied out, it is text, as every procedure the plan returns is.
    let setup = "(define secret 42) (define (make n) (fn () (+ n secret)))";
    let plan = "(define secret 0) [((make 1)) (make 1)]";
    assert_eq!(
        sandboxed_value(setup, plan, ":env {\"make\" make}"),
        "(43 \"#<procedure>\")\n"
    );
}

#[test]
fn pmap_items_of_the_plan_keep_their_globals_while_another_calls_the_callers() {
    // Each item calls the caller's procedure, whose task call blocks (the item waits
    // for the model): the other items run meanwhile with the plan's names in place,
    // and the item comes back to the caller's.
    let setup = "(define mine \"caller\")
                 (deftask ask (q) :prompt \"{{q}}\")
                 (define (f x) [(get (ask (str x)) \"content\") mine])";
    let plan = "(define mine \"plan\") (pmap (fn (x) [(f x) mine]) [1 2 3])";
    assert_eq!(
        sandboxed_value(setup, plan, ":env {\"f\" f}"),
        "(((\"1\" \"caller\") \"plan\") ((\"2\" \"caller\") \"plan\") ((\"3\" \"caller\") \"plan\"))\n"
    );
}
