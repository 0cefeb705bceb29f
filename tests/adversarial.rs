//! Malformed and adversarial input: the reader and the evaluator must answer every input
//! with a value or a clean error (`SYNTAX_ERROR`, `EVAL_ERROR`, `RESOURCE_EXHAUSTION`…),
//! never a panic, a crash, a signal or a hang.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tasklisp::internals::eval::reader;
use tasklisp::{ErrorKind, Interp, Limits};

// ---- through the binary ---------------------------------------------------------------

struct Outcome {
    /// `None` when the process was killed by a signal.
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `tasklisp run` on a file holding `bytes`, killing it after `limit`.
fn run_bytes(bytes: &[u8], limit: Duration) -> Outcome {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("input.sexp");
    std::fs::write(&file, bytes).expect("write input");
    run_file(dir.path(), &file, limit)
}

fn run_file(dir: &Path, file: &Path, limit: Duration) -> Outcome {
    let stdout = tempfile::tempfile().expect("temp file");
    let stderr = tempfile::tempfile().expect("temp file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .arg("run")
        .arg(file)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().expect("clone"))
        .stderr(stderr.try_clone().expect("clone"))
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(started.elapsed() < limit, "hung for {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        status: status.code(),
        stdout: read_back(stdout),
        stderr: read_back(stderr),
    }
}

fn read_back(mut file: std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut text = Vec::new();
    file.rewind().expect("rewind");
    file.read_to_end(&mut text).expect("read");
    String::from_utf8_lossy(&text).into_owned()
}

/// A hang guard, not a speed test: the slowest case (a million-deep structure) takes
/// about 25 s of CPU in a debug build, and a loaded 2-core machine stretches that
/// several times over (4 minutes were seen with eight builds running).
const LIMIT: Duration = Duration::from_secs(900);

/// Asserts the run ended with exit 1 and a report of the error type `code`.
fn assert_clean_error(outcome: &Outcome, code: &str, what: &str) {
    assert_eq!(
        outcome.status,
        Some(1),
        "{what}: stderr {}",
        head(&outcome.stderr)
    );
    assert!(
        outcome.stderr.contains(code),
        "{what}: wanted {code} in {}",
        head(&outcome.stderr)
    );
    assert!(
        !outcome.stderr.contains("panicked"),
        "{what}: {}",
        head(&outcome.stderr)
    );
}

fn head(text: &str) -> String {
    text.chars().take(600).collect()
}

#[test]
fn a_hundred_thousand_open_brackets() {
    for open in ["(", "[", "{", "'", "`", ",", ",@", "#;"] {
        let text = format!("{}x", open.repeat(100_000));
        let outcome = run_bytes(text.as_bytes(), LIMIT);
        assert_clean_error(&outcome, "SYNTAX_ERROR", open);
        // The report names the place rather than quoting the 100,000-byte line.
        assert!(
            outcome.stderr.len() < 2_000,
            "{open}: a report of {} bytes",
            outcome.stderr.len()
        );
        assert!(
            outcome.stderr.contains("input.sexp:1:"),
            "{}",
            head(&outcome.stderr)
        );
    }
}

#[test]
fn a_hundred_thousand_balanced_brackets() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
        let text = format!("(prn {}{})", open.repeat(100_000), close.repeat(100_000));
        assert_clean_error(
            &run_bytes(text.as_bytes(), LIMIT),
            "nesting deeper than",
            open,
        );
    }
}

#[test]
fn unbalanced_and_mismatched_brackets() {
    for text in [
        ")",
        "(()",
        "(]",
        "[)",
        "{)",
        "(prn 1))",
        "}",
        "(a (b (c ]))",
        "\"unclosed",
        "#| open",
    ] {
        assert_clean_error(&run_bytes(text.as_bytes(), LIMIT), "SYNTAX_ERROR", text);
    }
}

#[test]
fn huge_numbers() {
    let digits = "9".repeat(10_000);
    assert_clean_error(
        &run_bytes(format!("(prn {digits})").as_bytes(), LIMIT),
        "SYNTAX_ERROR",
        "integer",
    );
    assert_clean_error(
        &run_bytes(format!("(prn -{digits})").as_bytes(), LIMIT),
        "SYNTAX_ERROR",
        "negative",
    );
    // A float literal out of range reads as infinity, as f64 parsing does.
    let float = run_bytes(
        format!("(prn {digits}.5 1e999 -1e999 1e-999)").as_bytes(),
        LIMIT,
    );
    assert_eq!(
        (float.status, float.stdout.as_str()),
        (Some(0), "inf inf -inf 0.0\n")
    );
}

#[test]
fn invalid_utf8_files() {
    for bytes in [
        &b"(prn \"\xff\")"[..],
        b"\xc3",
        b"(prn 1)\n\xed\xa0\x80",
        b"\xfe\xff(prn 1)",
    ] {
        let outcome = run_bytes(bytes, LIMIT);
        assert_clean_error(&outcome, "SYNTAX_ERROR", "invalid UTF-8");
        assert!(outcome.stderr.contains("UTF-8"), "{}", outcome.stderr);
        assert_eq!(outcome.stdout, "");
    }
}

#[test]
fn nul_bytes() {
    assert_clean_error(
        &run_bytes(b"(prn 1)\0", LIMIT),
        "SYNTAX_ERROR",
        "NUL after a form",
    );
    assert_clean_error(
        &run_bytes(b"(prn a\0b)", LIMIT),
        "SYNTAX_ERROR",
        "NUL in a symbol",
    );
    // Inside a string a NUL is just a character.
    let inside = run_bytes(b"(prn \"a\0b\")", LIMIT);
    assert_eq!(
        (inside.status, inside.stdout.as_str()),
        (Some(0), "\"a\\u{0}b\"\n")
    );
}

#[test]
fn a_million_deep_structure_built_at_run_time() {
    let program = r#"
        (define (nest n) (let loop ((i 0) (acc (list))) (if (= i n) acc (loop (+ i 1) (list acc)))))
        (define a (nest 1000000))
        (define b (nest 1000000))
        (prn (string-length (repr a)))
        (prn (equal? a b) (= a b) (equal? a (nest 999999)))
        (prn (try (json-stringify a) (catch e e.type)))
        (prn (try (eval a) (catch e e.type)))
        (prn (flatten a))
        (define m (let loop ((i 0) (acc {})) (if (= i 1000000) acc (loop (+ i 1) {"k" acc}))))
        (prn (string-length (repr m)) (equal? m m))
        (prn (try (json-stringify m) (catch e e.type)))
        (json-stringify a)
    "#;
    let outcome = run_bytes(program.as_bytes(), LIMIT);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "deep structure");
    assert_eq!(
        outcome.stdout,
        "2000002\ntrue true false\n\"RESOURCE_EXHAUSTION\"\n\"RESOURCE_EXHAUSTION\"\n()\n\
         6000002 true\n\"RESOURCE_EXHAUSTION\"\n"
    );
}

#[test]
fn chains_of_two_million_closures_are_freed_without_recursion() {
    // Each closure captures the one before through its environment: freeing the chain
    // once overflowed the stack — when the last reference went, at exit, and through
    // lists and maps that hold closures that hold lists.
    let chain = r#"
        (define (chain n acc) (if (= n 0) acc (chain (- n 1) (let ((prev acc)) (fn () prev)))))
        (define (mixed n acc)
          (if (= n 0) acc (mixed (- n 1) (let ((prev (list acc))) {"f" (fn () prev)}))))
    "#;
    for (what, program) in [
        (
            "dropped",
            "(define c (chain 2000000 nil)) (set! c nil) (prn \"freed\")",
        ),
        ("at exit", "(define c (chain 2000000 nil)) (prn \"freed\")"),
        (
            "interleaved",
            "(define c (mixed 1000000 nil)) (set! c 0) (prn \"freed\")",
        ),
    ] {
        let outcome = run_bounded(&format!("{chain}{program}"), &[]);
        assert_eq!(outcome.status, Some(0), "{what}: {}", head(&outcome.stderr));
        assert_eq!(outcome.stdout, "\"freed\"\n", "{what}");
    }
}

#[test]
fn deep_code_from_macros_and_eval() {
    let program = r#"
        (defmacro deep (n) (let loop ((i 0) (acc 1)) (if (= i n) acc (loop (+ i 1) (list '+ acc 0)))))
        (prn (deep 500))
        (prn (try (eval (let loop ((i 0) (acc 1)) (if (= i 100000) acc (loop (+ i 1) (list 'inc acc))))) (catch e e.type)))
        (deep 100000)
    "#;
    let outcome = run_bytes(program.as_bytes(), LIMIT);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "deep code");
    assert_eq!(outcome.stdout, "1\n\"RESOURCE_EXHAUSTION\"\n");
}

#[test]
fn deep_non_tail_recursion_in_many_shapes() {
    let program = r#"
        (define (a n) (+ 1 (a n)))
        (define (b n) (list (b n)))
        (define (c n) (car (map c (list n))))
        (define (d n) (apply d (list n)) 1)
        (define (e n) (sort (list 1 2) (fn (x y) (e n))))
        (define (f n) (try (+ 1 (f n)) (catch err (raise err))))
        (prn (map (fn (g) (try (g 0) (catch err err.type))) (list a b c d e f)))
        (a 0)
    "#;
    let outcome = run_bytes(program.as_bytes(), LIMIT);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "recursion");
    let all = "\"RESOURCE_EXHAUSTION\" ".repeat(6);
    assert_eq!(outcome.stdout, format!("({})\n", all.trim_end()));
}

#[test]
fn a_long_line_and_a_long_string() {
    let text = format!(
        "(prn (string-length \"{}\"))\n(prn '{})",
        "é".repeat(1_000_000),
        "x".repeat(1_000_000)
    );
    let outcome = run_bytes(text.as_bytes(), LIMIT);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert!(outcome.stdout.starts_with("1000000\nxxxx"));
}

#[test]
fn bad_escapes_in_strings() {
    for text in [
        r#""\u{""#,
        r#""\u{110000}""#,
        r#""\u{zz}""#,
        r#""\u{1234567}""#,
        r#""\x""#,
        "\"\\",
    ] {
        assert_clean_error(&run_bytes(text.as_bytes(), LIMIT), "SYNTAX_ERROR", text);
    }
}

// ---- in process: the reader and the evaluator under a fuzz loop ------------------------

/// A small deterministic generator (xorshift64), so every run tests the same inputs.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that mean something to the reader, mixed with arbitrary ones.
const READER_BYTES: &[u8] = b"()[]{}'`,@#;|\"\\ \n\tabcxyz019.:-+eE/_!?<>=*";

fn random_bytes(rng: &mut XorShift) -> Vec<u8> {
    let len = rng.below(64);
    (0..len)
        .map(|_| {
            if rng.below(8) == 0 {
                rng.next() as u8
            } else {
                READER_BYTES[rng.below(READER_BYTES.len())]
            }
        })
        .collect()
}

/// Tokens of real programs, so the evaluator sees forms that read.
const TOKENS: &[&str] = &[
    "(",
    "(",
    "(",
    ")",
    ")",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    "`",
    ",",
    ",@",
    "0",
    "1",
    "-1",
    "2.5",
    "1e300",
    "9223372036854775807",
    "\"s\"",
    "\"\"",
    "nil",
    "true",
    ":k",
    "x",
    "xs",
    "xs[0]",
    "m.k",
    "m.k[1].z",
    "+",
    "-",
    "*",
    "/",
    "quotient",
    "modulo",
    "expt",
    "abs",
    "car",
    "cdr",
    "cons",
    "list",
    "append",
    "reverse",
    "nth",
    "map",
    "filter",
    "reduce",
    "sort",
    "apply",
    "range",
    "length",
    "str",
    "substring",
    "string-split",
    "format",
    "get",
    "get-in",
    "assoc",
    "path",
    "json-parse",
    "json-stringify",
    "eval",
    "read",
    "repr",
    "error",
    "fail",
    "raise",
    "define",
    "set!",
    "lambda",
    "fn",
    "let",
    "let*",
    "letrec",
    "do",
    "if",
    "cond",
    "else",
    "=>",
    "case",
    "when",
    "unless",
    "and",
    "or",
    "begin",
    "quote",
    "quasiquote",
    "unquote",
    "try",
    "catch",
    "finally",
    "defmacro",
    "f",
    "g",
    "args",
    ".",
    "=",
    "<",
    "equal?",
];

/// A random sequence of tokens with its brackets balanced, so that most programs read
/// and the evaluator, not only the reader, is exercised.
fn random_program(rng: &mut XorShift) -> String {
    let len = 1 + rng.below(40);
    let mut text = String::from("(define xs [1 2 3]) (define m {\"k\" [0 {\"z\" 1}]}) ");
    let mut open = Vec::new();
    for _ in 0..len {
        let token = TOKENS[rng.below(TOKENS.len())];
        match token {
            "(" => open.push(")"),
            "[" => open.push("]"),
            "{" => open.push("}"),
            ")" | "]" | "}" if open.last() != Some(&token) => continue,
            ")" | "]" | "}" => {
                open.pop();
            }
            _ => {}
        }
        text.push_str(token);
        text.push(' ');
    }
    while let Some(close) = open.pop() {
        text.push_str(close);
    }
    text
}

fn fuzz_limits() -> Limits {
    Limits {
        max_depth: 2_000,
        fuel: Some(200_000),
        timeout: Some(Duration::from_secs(2)),
        ..Limits::default()
    }
}

#[test]
fn random_bytes_never_crash_the_reader() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..5_000 {
        let bytes = random_bytes(&mut rng);
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = reader::read_source("<fuzz>", &text) {
            assert_eq!(e.kind(), ErrorKind::Syntax, "{text:?}: {e}");
        }
    }
}

#[test]
fn random_programs_end_in_a_value_or_a_clean_error() {
    let outcome = tasklisp::run_on_large_stack(&fuzz_limits(), |limits| {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let (mut values, mut errors) = (0, 0);
        for _ in 0..5_000 {
            let program = random_program(&mut rng);
            let interp = Interp::with_output(limits.clone(), Box::new(std::io::sink()))
                .expect("prelude loads");
            match interp.run_source("<fuzz>", &program) {
                Ok(_) => values += 1,
                Err(e) => {
                    assert!(e.exit_code().is_none(), "{program}");
                    errors += 1;
                }
            }
        }
        (values, errors)
    });
    let (values, errors) = outcome.expect("no panic in the interpreter thread");
    assert!(
        values > 200 && errors > 200,
        "{values} values and {errors} errors: a weak generator"
    );
}

#[test]
fn random_bytes_as_programs() {
    let outcome = tasklisp::run_on_large_stack(&fuzz_limits(), |limits| {
        let mut rng = XorShift(0xdead_beef_cafe_f00d);
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude loads");
        for _ in 0..3_000 {
            let bytes = random_bytes(&mut rng);
            let _ = interp.run_source("<fuzz>", &String::from_utf8_lossy(&bytes));
            interp.clear_interrupt();
        }
    });
    outcome.expect("no panic in the interpreter thread");
}

// ---- resource bounds: every run under a 2 GiB address-space limit -----------------------

/// The address space each bounded run may use: the issue's "under 2 GB".
const ADDRESS_SPACE: u64 = 2 << 30;

/// Runs `tasklisp ARGS… run input.sexp` on `program` with the address space limited
/// to [`ADDRESS_SPACE`] (so the default memory budget is half of it).
fn run_bounded(program: &str, args: &[&str]) -> Outcome {
    run_within(program, args, ADDRESS_SPACE)
}

/// [`run_bounded`] with another limit on the address space.
fn run_within(program: &str, args: &[&str], address_space: u64) -> Outcome {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("input.sexp");
    std::fs::write(&file, program).expect("write input");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command.env("TASKLISP_LOG", "off");
    command.args(args).arg("run").arg(&file);
    run_command_within(command, dir.path(), address_space)
}

fn run_bounded_command(command: Command, dir: &Path) -> Outcome {
    run_command_within(command, dir, ADDRESS_SPACE)
}

fn run_command_within(mut command: Command, dir: &Path, address_space: u64) -> Outcome {
    use std::os::unix::process::CommandExt;
    let stdout = tempfile::tempfile().expect("temp file");
    let stderr = tempfile::tempfile().expect("temp file");
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().expect("clone"))
        .stderr(stderr.try_clone().expect("clone"));
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: address_space,
                rlim_max: address_space,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().expect("the binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("hung for {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        status: status.code(),
        stdout: read_back(stdout),
        stderr: read_back(stderr),
    }
}

/// Definitions the programs below share: `(outcome thunk)` runs the thunk and gives the
/// type and resource of the error it raises; `(double s n)` doubles a string `n` times.
const HELPERS: &str = r#"
    (define (outcome thunk)
      (try (thunk) (catch e (list e.type (get e.details "resource")))))
    (define (double s n) (if (= n 0) s (double (str s s) (- n 1))))
"#;

/// A tree of 2⁴⁰ leaves described by 40 shared lists.
const SHARED: &str = r#"
    (define (dbl n x) (if (= n 0) x (dbl (- n 1) (list x x))))
    (define big (dbl 40 1))
"#;

#[test]
fn shared_structure_is_walked_within_a_budget() {
    let program = format!(
        "{HELPERS}{SHARED}{}",
        r#"
        (prn (equal? big (dbl 40 1)) (equal? big (dbl 40 2)) (= big (dbl 40 1)))
        (prn (equal? (eval (list 'quote big)) big))
        (prn (outcome (fn () (eval (list 'list big)))))
    "#
    );
    let outcome = run_bounded(&program, &[]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(
        outcome.stdout,
        "true false true\ntrue\n(\"RESOURCE_EXHAUSTION\" \"size\")\n"
    );
    // One process each: every walk visits millions of nodes before its budget ends it.
    for walk in [
        "(json-stringify big)",
        "(flatten big)",
        "(flatten (dbl 40 '()))",
        "(str big)",
        "(repr (dbl 40 {}))",
        "(prn big)",
    ] {
        let program = format!("{HELPERS}{SHARED}(prn (outcome (fn () {walk}))) {walk}");
        let outcome = run_bounded(&program, &[]);
        assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", walk);
        assert_eq!(
            outcome.stdout, "(\"RESOURCE_EXHAUSTION\" \"size\")\n",
            "{walk}"
        );
    }
}

#[test]
fn macro_expansion_that_grows_ends() {
    let program = format!(
        "{HELPERS}{}",
        r#"
        (defmacro grow (x) (list 'grow (list 'quote (list x x))))
        (defmacro grow-code (x) (list 'grow-code (list 'list x x)))
        (prn (outcome (fn () (eval '(grow 1)))))
        (prn (outcome (fn () (eval '(grow-code 1)))))
        (grow 1)
    "#
    );
    let outcome = run_bounded(&program, &[]);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "growing macro");
    assert_eq!(
        outcome.stdout,
        "(\"RESOURCE_EXHAUSTION\" \"macro-expansion\")\n(\"RESOURCE_EXHAUSTION\" \"size\")\n"
    );
}

#[test]
fn builtins_refuse_results_over_the_limit_before_building_them() {
    let program = format!(
        "{HELPERS}{}",
        r#"
        (define mib (double "a" 20))
        (define big (double mib 6))
        (prn (string-length big))
        (prn (outcome (fn () (string-replace big "a" mib))))
        (prn (outcome (fn () (string->list big))))
        (prn (outcome (fn () (string-split big ""))))
        (prn (outcome (fn () (str big big big big big))))
        (prn (outcome (fn () (range 100000000))))
        (prn (length (string->list (double "ab" 10))))
        (define greek (double "\u{390}" 26))
        (prn (outcome (fn () (string-upcase greek))))
        (prn (string-length (string-downcase greek)))
        (string-replace big "a" "aaaaa")
    "#
    );
    let outcome = run_bounded(&program, &[]);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "big results");
    let memory = "(\"RESOURCE_EXHAUSTION\" \"memory\")";
    assert_eq!(
        outcome.stdout,
        format!(
            "67108864\n{memory}\n{memory}\n{memory}\n{memory}\n{memory}\n2048\n{memory}\n67108864\n"
        )
    );
}

#[test]
fn regular_expressions_refuse_results_over_the_limit_while_matching() {
    // A one-character pattern matches 64 Mi times in 64 MiB of text, and a replacement
    // longer than its match grows the text with every match: the matches and the replaced
    // text are refused as they pass the bounds, never built whole first.
    let program = format!(
        "{HELPERS}{}",
        r#"
        (define big (double "a" 26))
        (define text (double "a" 16))
        (prn (outcome (fn () (re-seq "a" big))))
        (prn (outcome (fn () (re-replace "a" text (double "b" 13)))))
        (prn (length (re-seq "a" (double "a" 20))) (re-replace "" "abc" "-"))
        (prn (re-replace "(b)" "abcb" "[$1$1]"))
        (re-replace "a" text (double "b" 13))
    "#
    );
    let outcome = run_bounded(&program, &[]);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "regex results");
    let memory = "(\"RESOURCE_EXHAUSTION\" \"memory\")";
    assert_eq!(
        outcome.stdout,
        format!("{memory}\n{memory}\n1048576 \"-a-b-c-\"\n\"a[bb]c[bb]\"\n")
    );
}

#[test]
fn composing_a_million_procedures_takes_linear_memory() {
    // `compose` once re-applied itself to the rest of its arguments at every step: a
    // million procedures took minutes and gigabytes. Calling the result nests a million
    // calls, which the depth limit stops.
    let program = r#"
        (define many (apply compose (map (fn (i) inc) (range 1000000))))
        (prn (try (many 0) (catch e e.type)))
        (prn ((apply compose (map (fn (i) inc) (range 1000))) 0))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "400M"]);
    assert_eq!(
        outcome.stdout, "\"RESOURCE_EXHAUSTION\"\n1000\n",
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_runaway_program_meets_the_memory_budget() {
    let program = format!(
        "{HELPERS}{}",
        r#"
        (define (hoard acc n) (hoard (cons (str "item " n) acc) (+ n 1)))
        (prn (outcome (fn () (hoard '() 0))))
        (prn (outcome (fn () (length (map str (range 10000000))))))
        (hoard '() 0)
    "#
    );
    let outcome = run_bounded(&program, &["--max-memory", "50M"]);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "runaway program");
    let memory = "(\"RESOURCE_EXHAUSTION\" \"memory\")";
    assert_eq!(outcome.stdout, format!("{memory}\n{memory}\n"));
    assert!(
        outcome.stderr.contains("--max-memory"),
        "{}",
        head(&outcome.stderr)
    );
    // Without the flag the budget is half the address space: still a clean error.
    let program = "(define (grow acc s) (grow (cons s acc) (str s \"xxxx\"))) (grow '() \"\")";
    let outcome = run_bounded(program, &[]);
    assert_clean_error(&outcome, "RESOURCE_EXHAUSTION", "quadratic growth");
    assert!(
        outcome.stderr.contains("memory"),
        "{}",
        head(&outcome.stderr)
    );
}

#[test]
fn errors_that_print_the_last_error_stay_bounded() {
    // Each raise printed the caught error into its message, escaping it once more: the
    // message doubled with every level, and the map form of level 30 asked for more than
    // the budget in one allocation. Messages are capped, so the levels stay the same size.
    let program = r#"
        (define (nest n acc) (if (= n 0) acc (nest (- n 1) (try (raise {"prev" acc}) (catch e e)))))
        (define last (nest 30 {}))
        (prn last.type (<= 60000 (string-length last.message) 65536))
        (define again (try (raise last) (catch e e)))
        (prn (= last.message again.message))
        (define deep (nest 30 {"type" "EVAL_ERROR" "message" (apply str (map str (range 100000)))}))
        (prn (< (string-length (json-stringify deep)) 4000000))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "1G"]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(outcome.stdout, "\"EVAL_ERROR\" true\ntrue\ntrue\n");
}

#[test]
fn files_that_never_end_or_block_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo");
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let big = dir.path().join("big.sexp");
    std::fs::write(&big, format!("(prn {})", "1 ".repeat(600_000))).expect("write");
    for (form, wanted) in [
        ("(import \"/dev/zero\")", "not a regular file"),
        ("(load \"/dev/zero\")", "not a regular file"),
        ("(read-file \"/dev/zero\")", "not a regular file"),
        ("(read-file \"fifo\")", "not a regular file"),
        ("(import \"fifo\")", "not a regular file"),
        ("(load \"big.sexp\")", "RESOURCE_EXHAUSTION"),
    ] {
        let program = dir.path().join("main.sexp");
        std::fs::write(&program, form).expect("write");
        let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
        command.env("TASKLISP_LOG", "off");
        command.args(["--max-file-size", "1M", "run"]).arg(&program);
        let outcome = run_bounded_command(command, dir.path());
        assert_eq!(outcome.status, Some(1), "{form}: {}", head(&outcome.stderr));
        assert!(
            outcome.stderr.contains(wanted),
            "{form}: {}",
            head(&outcome.stderr)
        );
    }
    // The flag raises the limit.
    std::fs::write(dir.path().join("main.sexp"), "(load \"big.sexp\")").expect("write");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command.env("TASKLISP_LOG", "off");
    command.args(["--max-file-size", "2M", "run", "main.sexp"]);
    let outcome = run_bounded_command(command, dir.path());
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    // A script that is not a regular file is bad usage.
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command.env("TASKLISP_LOG", "off");
    command.args(["run", "/dev/zero"]);
    let outcome = run_bounded_command(command, dir.path());
    assert_eq!(outcome.status, Some(2), "{}", head(&outcome.stderr));
}

#[test]
fn the_frame_limit_is_capped() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command.env("TASKLISP_LOG", "off");
    command.args(["--max-depth", "1000000000", "eval", "1"]);
    let outcome = run_bounded_command(command, Path::new("."));
    assert_eq!(outcome.status, Some(2), "{}", head(&outcome.stderr));
    assert!(
        outcome.stderr.contains("100000"),
        "{}",
        head(&outcome.stderr)
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command.env("TASKLISP_LOG", "off");
    command.args([
        "--max-depth",
        "100000",
        "eval",
        "(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1))))) (f 90000)",
    ]);
    let outcome = run_bounded_command(command, Path::new("."));
    assert_eq!(outcome.stdout, "90000\n", "{}", head(&outcome.stderr));
}

#[test]
fn long_builtins_meet_the_time_limit_and_fuel() {
    let outcome = tasklisp::run_on_large_stack(&Limits::default(), |limits| {
        let timed = Limits {
            timeout: Some(Duration::from_millis(300)),
            ..limits.clone()
        };
        let interp = Interp::with_output(timed, Box::new(std::io::sink())).expect("prelude loads");
        let started = Instant::now();
        let slept = interp.run_source("<sleep>", "(sleep 1000)");
        let sleep_took = started.elapsed();
        let fueled = Limits {
            fuel: Some(1_000),
            ..limits
        };
        let interp = Interp::with_output(fueled, Box::new(std::io::sink())).expect("prelude loads");
        let compared = interp.run_source(
            "<equal>",
            "(define xs (map (fn (i) (list i)) (range 2000000))) \
             (equal? xs (map (fn (i) (list i)) (range 2000000)))",
        );
        (slept.map(|_| ()), sleep_took, compared.map(|_| ()))
    });
    let (slept, sleep_took, compared) = outcome.expect("no panic");
    let e = slept.expect_err("the time limit ends the sleep");
    assert_eq!(e.reason(), Some("execution_timeout"));
    // A hang guard, far above the 0.3 s limit and far below the 1,000 s sleep.
    assert!(sleep_took < Duration::from_secs(100), "{sleep_took:?}");
    let e = compared.expect_err("fuel ends the comparison");
    assert_eq!(e.details()["resource"], "fuel");
}

#[test]
fn deep_recursion_in_every_pmap_item_stays_within_bounded_stacks() {
    let program = r#"
        (define (deep n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))
        (define outcomes
          (pmap (fn (i) (try (deep 1000000) (catch e e.type))) (range 256) :concurrency 256))
        (prn (length outcomes) (length (filter (fn (o) (= o "RESOURCE_EXHAUSTION")) outcomes)))
    "#;
    let outcome = run_bounded(program, &[]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(outcome.stdout, "256 256\n");
}

#[test]
fn reading_many_texts_runs_in_bounded_memory() {
    // Each text read used to be kept for good; 300,000 of them took tens of MiB.
    let program = r#"
        (define (sum i acc)
          (if (= i 300000)
              acc
              (sum (+ i 1) (+ acc (get (read (str "{\"n\" " i " \"text\" \"model output " i "\"}")) "n")))))
        (prn (sum 0 0))
        (prn (try (read "(unclosed") (catch e e.type)))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "24M"]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(outcome.stdout, "44999850000\n\"SYNTAX_ERROR\"\n");
}

#[test]
fn doubling_a_string_stops_at_the_limit_without_reserving_twice_the_limit() {
    // `str`, `string-join` and `format` check the length before they grow the result: a
    // 256 MiB string doubled used to reserve 512 MiB first, and abort under 700 MiB.
    let program = r#"
        (define (double-str s) (double-str (str s s)))
        (prn (try (double-str "x") (catch e (list e.type e.details.resource))))
        (define (double-join s) (double-join (string-join (list s s) "")))
        (prn (try (double-join "x") (catch e e.type)))
        (define (double-format s) (double-format (format "{}{}" s s)))
        (prn (try (double-format "x") (catch e e.type)))
    "#;
    let outcome = run_within(program, &[], 700 << 20);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(
        outcome.stdout,
        "(\"RESOURCE_EXHAUSTION\" \"memory\")\n\"RESOURCE_EXHAUSTION\"\n\"RESOURCE_EXHAUSTION\"\n"
    );
}

#[test]
fn evaluating_many_texts_with_syntax_errors_runs_in_bounded_memory() {
    // A text `read` cannot parse is kept for its error report, and an agent that reads
    // model output may get many: the registry keeps only the most recent of them.
    // Keeping all 60,000 (about 7 MiB) would pass the 4 MiB budget.
    let program = r#"
        (define (attempt i)
          (try (eval (read (str "(+ " i " \"" i " unclosed")))
               (catch e (if (= e.type "SYNTAX_ERROR") 1 0))))
        (define (count i acc)
          (if (= i 60000) acc (count (+ i 1) (+ acc (attempt i)))))
        (prn (count 0 0))
        (prn (eval (read "(+ 1 2)")))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "4M"]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(outcome.stdout, "60000\n3\n");
}

#[test]
fn reading_many_new_symbols_runs_in_bounded_memory() {
    // Every symbol and keyword made from data used to be interned for good: these 300,000
    // new names needed more than 24 MiB of heap. Names nothing interned are now freed
    // with the data, and the program runs within 1 MiB of heap.
    let program = r#"
        (define (loop i acc)
          (if (= i 100000)
              acc
              (loop (+ i 1)
                    (+ acc (length (read (str "(model-word-" i " :model-key-" i ")")))
                       (if (symbol? (string->symbol (str "made-" i))) 1 0)))))
        (prn (loop 0 0))
        (prn (read "(model-word-7 :model-key-7)"))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "8M"]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(outcome.stdout, "300000\n(model-word-7 :model-key-7)\n");
}

#[test]
fn texts_that_fail_to_read_are_freed_with_their_errors() {
    // A syntax error used to register its text for good, to be shown: 3,000 unclosed
    // texts of 2 KB needed more than 4 MiB. The error now keeps the text itself.
    let program = r#"
        (define padding (apply str (map (fn (i) "model text") (range 200))))
        (define (loop i n)
          (if (= i 3000)
              n
              (loop (+ i 1) (+ n (try (read (str "(answer " i " " padding)) (catch e 1))))))
        (prn (loop 0 0))
        (prn (try (read "(a\n  (b") (catch e e.location)))
    "#;
    let outcome = run_bounded(program, &["--max-memory", "4M"]);
    assert_eq!(outcome.status, Some(0), "{}", head(&outcome.stderr));
    assert_eq!(
        outcome.stdout,
        "3000\n{\"file\" \"<read>\" \"line\" 2 \"column\" 3}\n"
    );
}

/// Bytes that mean something to the lenient JSON parser, mixed with arbitrary ones.
const ANSWER_BYTES: &[u8] = b"{}[]\"',:/*\\ \n`~TrueFalseNon0-19.eE+xyz#";

/// A provider that answers each request with the next of its answers.
struct Answers(std::sync::Mutex<std::vec::IntoIter<String>>);

impl tasklisp::Provider for Answers {
    fn name(&self) -> &str {
        "answers"
    }
    fn complete(
        &self,
        _: &tasklisp::Request,
        _: &tasklisp::Cancel,
    ) -> tasklisp::Result<tasklisp::Response> {
        let next = self.0.lock().ok().and_then(|mut a| a.next());
        Ok(tasklisp::Response {
            content: next.unwrap_or_default(),
            ..Default::default()
        })
    }
}

#[test]
fn random_model_answers_give_a_result_or_an_output_format_failure() {
    let mut rng = XorShift(0x0123_4567_89ab_cdef);
    let mut answers: Vec<String> = (0..3_000)
        .map(|_| {
            let len = rng.below(120);
            let bytes: Vec<u8> = (0..len)
                .map(|_| match rng.below(10) {
                    0 => rng.next() as u8,
                    _ => ANSWER_BYTES[rng.below(ANSWER_BYTES.len())],
                })
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .collect();
    // Shapes that defeat naive parsers: deep nesting, endless openings, long strings.
    answers.push("[".repeat(200_000));
    answers.push(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)));
    answers.push(format!("Sure: {}", "{'a': ".repeat(50_000)));
    answers.push(format!("\"{}", "\\".repeat(100_001)));
    answers.push("/*".repeat(100_000));
    answers.push("```".repeat(100_000));
    let count = answers.len();
    let outcome = tasklisp::run_on_large_stack(&Limits::default(), move |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude loads");
        let provider = Answers(std::sync::Mutex::new(answers.into_iter()));
        interp.set_native_provider(std::sync::Arc::new(provider));
        let program = format!(
            r#"(deftask loose () :prompt "go" :output "json")
               (deftask typed () :prompt "go" :schema {{"type" "object" "properties" {{"n" {{"type" "integer"}}}}}})
               (define parsed 0)
               (define failed 0)
               (for-each (fn (i)
                   (try (begin (if (even? i) (loose) (typed)) (set! parsed (+ parsed 1)))
                        (catch e (if (= e.reason "output_format_failure")
                                     (set! failed (+ failed 1))
                                     (raise e)))))
                 (range {count}))
               [parsed failed]"#
        );
        interp
            .run_source("<answers>", &program)
            .map(|v| tasklisp::write_string(&v))
            .map_err(|e| e.to_string())
    });
    let counts = outcome
        .expect("no panic")
        .expect("only output_format_failure");
    let numbers: Vec<usize> = counts
        .trim_matches(['(', ')'])
        .split(' ')
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(numbers.iter().sum::<usize>(), count, "{counts}");
    assert!(
        numbers.iter().all(|&n| n > 100),
        "a weak generator: {counts}"
    );
}

/// A model that asks for random tools with random arguments, or answers.
struct RandomToolCalls(std::sync::Mutex<XorShift>);

impl tasklisp::Provider for RandomToolCalls {
    fn name(&self) -> &str {
        "random-tools"
    }
    fn complete(
        &self,
        _: &tasklisp::Request,
        _: &tasklisp::Cancel,
    ) -> tasklisp::Result<tasklisp::Response> {
        let Ok(mut rng) = self.0.lock() else {
            return Ok(tasklisp::Response::default());
        };
        if rng.below(4) == 0 {
            return Ok(tasklisp::Response {
                content: "done".into(),
                ..Default::default()
            });
        }
        let names = ["add", "missing", "", "add\u{0}", "ADD"];
        let values = [
            serde_json::json!(1),
            serde_json::json!("2"),
            serde_json::json!(null),
            serde_json::json!([1, 2]),
            serde_json::json!({"a": {"b": 1}}),
            serde_json::json!(1e300),
            serde_json::json!(-5),
        ];
        let calls = (0..rng.below(4))
            .map(|i| {
                let arguments = match rng.below(4) {
                    0 => serde_json::json!("{not json"),
                    1 => values[rng.below(values.len())].clone(),
                    _ => serde_json::json!({
                        "a": values[rng.below(values.len())].clone(),
                        "b": values[rng.below(values.len())].clone(),
                        "extra": if rng.below(3) == 0 { serde_json::json!(true) } else { serde_json::json!(null) },
                    }),
                };
                tasklisp::ToolCall {
                    id: if rng.below(3) == 0 { String::new() } else { format!("c{i}") },
                    name: names[rng.below(names.len())].to_owned(),
                    arguments,
                }
            })
            .collect();
        Ok(tasklisp::Response {
            tool_calls: calls,
            ..Default::default()
        })
    }
}

#[test]
fn random_tool_calls_end_in_an_answer_or_the_turn_limit() {
    let outcome = tasklisp::run_on_large_stack(&Limits::default(), move |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).expect("prelude loads");
        let provider = RandomToolCalls(std::sync::Mutex::new(XorShift(0x5eed_7001_cafe_f00d)));
        interp.set_native_provider(std::sync::Arc::new(provider));
        let program = r#"(deftask add (a b) :param-types {"a" "integer" "b" "integer"} (+ a b))
               (deftask calc () :prompt "go" :tools [add] :max-turns 4)
               (define answered 0)
               (define stopped 0)
               (for-each (fn (i)
                   (try (begin (calc) (set! answered (+ answered 1)))
                        (catch e (if (= e.type "RESOURCE_EXHAUSTION")
                                     (set! stopped (+ stopped 1))
                                     (raise e)))))
                 (range 400))
               [answered stopped]"#;
        interp
            .run_source("<tools>", program)
            .map(|v| tasklisp::write_string(&v))
            .map_err(|e| e.to_string())
    });
    let counts = outcome
        .expect("no panic")
        .expect("only answers and the turn limit");
    let numbers: Vec<usize> = counts
        .trim_matches(['(', ')'])
        .split(' ')
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(numbers.iter().sum::<usize>(), 400, "{counts}");
    assert!(
        numbers.iter().all(|&n| n > 20),
        "a weak generator: {counts}"
    );
}

// ---- a large template file: `tasklisp check` and `import` -------------------------------

/// An XML template file of `tasks` small tasks.
fn many_tasks(tasks: usize) -> String {
    let mut xml = String::from("<tasks>\n");
    for i in 0..tasks {
        xml.push_str(&format!(
            "<task name=\"t{i}\"><description>Task {i}</description>\
             <inputs><input name=\"x\"/><input name=\"y\" default=\"d\"/></inputs>\
             <instructions>Do {{{{x}}}} with {{{{y}}}}, number {i}</instructions></task>\n"
        ));
    }
    xml + "</tasks>\n"
}

/// `tasklisp ARGS…`'s exit status and peak resident memory in KiB, from `wait4`.
#[allow(clippy::zombie_processes)] // waited for by `wait4`, which also gives its rusage
fn peak_kib(dir: &Path, args: &[&str]) -> (i32, i64) {
    let child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .env("TASKLISP_LOG", "off")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

/// The peak resident memory a task adds, in bytes, when `tasklisp ARGS…` (from `args`
/// of the file's name) reads a file of 20,000 tasks rather than one; and the two peaks.
fn bytes_per_task(args: impl Fn(&str) -> Vec<String>) -> (i64, i64, i64) {
    const TASKS: usize = 20_000;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("one.xml"), many_tasks(1)).expect("write");
    std::fs::write(dir.path().join("many.xml"), many_tasks(TASKS)).expect("write");
    let peak = |file: &str| {
        let args = args(file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (status, kib) = peak_kib(dir.path(), &args);
        assert_eq!(status, 0, "tasklisp {args:?}");
        kib
    };
    let (base, peak) = (peak("one.xml"), peak("many.xml"));
    ((peak - base) * 1024 / TASKS as i64, base, peak)
}

#[test]
fn checking_many_tasks_takes_little_memory_per_task() {
    let (per_task, base, peak) = bytes_per_task(|file| vec!["check".into(), file.into()]);
    // Recording each task's parameters as interpreter values took about 2.8 KiB a task
    // (a debug build: 76 MB for 20,000 tasks); the check's own records take 1.6.
    assert!(
        per_task < 2 * 1024,
        "{per_task} bytes a task ({base} → {peak} KiB)"
    );
}

#[test]
fn importing_many_tasks_takes_little_memory_per_task() {
    let (per_task, base, peak) =
        bytes_per_task(|file| vec!["eval".into(), format!("(length (import \"{file}\"))")]);
    // Holding every template, every generated form and every task at once took about
    // 5.2 KiB a task (a debug build); the templates are now dropped once their forms are
    // made, and each form once it is evaluated: about 3.3.
    assert!(
        per_task < 4 * 1024,
        "{per_task} bytes a task ({base} → {peak} KiB)"
    );
}
