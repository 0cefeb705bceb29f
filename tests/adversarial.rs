//! Adversarial programs under `eval-sandboxed` with no capabilities: 1,000 random
//! programs, made by a generator over the reader's syntax and the names the
//! interpreter binds (deterministic seed), mixed with attempts at each door. None may
//! write a file, run a program, read the environment, reach the network or bring the
//! host down; each ends with a value or an error.

use std::io::ErrorKind;
use std::net::TcpListener;
use tasklisp::internals::symbol::Sym;
use tasklisp::{Interp, Limits, Value};

// The binary's allocator, so the children's memory limit is enforced here too.
#[global_allocator]
static ALLOCATOR: tasklisp::CountingAllocator = tasklisp::CountingAllocator;

/// xorshift64*: the same programs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &'a [String]) -> &'a str {
        &items[self.below(items.len())]
    }
}

/// What programs are made of: the interpreter's names, and strings that aim at doors.
struct Pool {
    names: Vec<String>,
    strings: Vec<String>,
    doors: Vec<String>,
}

impl Pool {
    fn new(interp: &Interp, dir: &str, port: u16) -> Pool {
        let mut names: Vec<String> = interp
            .global_names()
            .iter()
            .map(|s| s.name().to_owned())
            .collect();
        names.sort();
        names.extend(
            [
                "define", "fn", "lambda", "let", "if", "do", "try", "catch", "deftask", "quote",
            ]
            .map(String::from),
        );
        let url = format!("http://127.0.0.1:{port}/v1");
        let strings = vec![
            format!("{dir}/written.txt"),
            "written-here.txt".into(),
            "/etc/passwd".into(),
            "PATH".into(),
            "HOME".into(),
            url.clone(),
            "openai".into(),
            "touch".into(),
            "a b c".into(),
            String::new(),
        ];
        let doors = vec![
            format!("(write-file \"{dir}/written.txt\" \"x\")"),
            format!("(append-file \"{dir}/appended.txt\" \"x\")"),
            "(read-file \"/etc/passwd\")".into(),
            "(getenv \"PATH\")".into(),
            format!("(deftask t () :command [\"touch\" \"{dir}/ran\"]) (t)"),
            format!("(deftask t () :command \"touch {dir}/ran\" :shell true) (t)"),
            format!("(set-provider! :openai {{\"base_url\" \"{url}\" \"api_key\" \"k\"}})"),
            format!("(mcp-connect \"m\" :url \"{url}/mcp\")"),
            format!("(mcp-connect \"m\" :command [\"touch\" \"{dir}/ran\"])"),
            format!("(eval-sandboxed \"(write-file \\\"{dir}/nested.txt\\\" 1)\" :allow {{\"write\" [\"{dir}\"]}})"),
            "(import \"/etc/passwd\")".into(),
            "(load \"/etc/passwd\")".into(),
            "(list-dir \"/\")".into(),
            "(exit 3)".into(),
            "(read-line)".into(),
            "(define (f) (f)) (f)".into(),
            "(sleep 100)".into(),
        ];
        Pool {
            names,
            strings,
            doors,
        }
    }

    /// A random form at most `depth` deep.
    fn form(&self, rng: &mut Rng, depth: usize, out: &mut String) {
        let choice = if depth == 0 {
            rng.below(6)
        } else {
            rng.below(12)
        };
        match choice {
            0 => out.push_str(&(rng.below(2000) as i64 - 1000).to_string()),
            1 => out.push_str(&format!("{:?}", rng.pick(&self.strings))),
            2 => out.push_str(rng.pick(&self.names)),
            3 => out.push_str(&format!(":{}", rng.pick(&self.names))),
            4 => out.push_str(["nil", "true", "false", "1.5", "'x"][rng.below(5)]),
            5 => out.push_str(rng.pick(&self.names)),
            6..=8 => {
                out.push('(');
                out.push_str(rng.pick(&self.names));
                for _ in 0..rng.below(4) {
                    out.push(' ');
                    self.form(rng, depth - 1, out);
                }
                out.push(')');
            }
            9 => self.items(rng, depth, out, '[', ']'),
            10 => self.items(rng, depth, out, '{', '}'),
            _ => out.push_str(rng.pick(&self.doors)),
        }
    }

    fn items(&self, rng: &mut Rng, depth: usize, out: &mut String, open: char, close: char) {
        out.push(open);
        for _ in 0..rng.below(4) * 2 {
            self.form(rng, depth - 1, out);
            out.push(' ');
        }
        out.push(close);
    }

    /// A program: a few forms, now and then cut short or with a stray bracket.
    fn program(&self, rng: &mut Rng) -> String {
        let mut out = String::new();
        for _ in 0..1 + rng.below(3) {
            self.form(rng, 4, &mut out);
            out.push('\n');
        }
        match rng.below(20) {
            0 => {
                out.truncate(out.len() / 2);
                while !out.is_char_boundary(out.len()) {
                    out.pop();
                }
            }
            1 => out.push(')'),
            _ => {}
        }
        out
    }
}

#[test]
fn a_thousand_random_programs_reach_no_door() {
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().display().to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let path_value = std::env::var("PATH").unwrap_or_default();
    let outcomes = tasklisp::run_on_large_stack(&Limits::default(), move |limits| {
        let interp = Interp::with_output(limits, Box::new(std::io::sink())).unwrap();
        let pool = Pool::new(&interp, &dir_text, port);
        let mut rng = Rng(0x5eed_cafe_f00d_0001);
        let mut outcomes = Vec::new();
        for _ in 0..1000 {
            let program = pool.program(&mut rng);
            interp.define_global(Sym::new("program"), Value::from(program.clone()));
            let result = interp.run_source(
                "<adversary>",
                "(eval-sandboxed program :fuel 20000 :timeout 0.2 :max-memory 16000000)",
            );
            let seen = match result {
                Ok(value) => tasklisp::write_string(&value),
                Err(error) => {
                    assert!(error.exit_code().is_none(), "{program}: ended its caller");
                    error.to_json().to_string()
                }
            };
            outcomes.push((program, seen));
        }
        outcomes
    })
    .expect("the interpreter thread survives every program");
    assert_eq!(outcomes.len(), 1000);
    for (program, seen) in &outcomes {
        assert!(
            path_value.len() < 8 || !seen.contains(&path_value),
            "{program}: read PATH"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "files were written or programs ran: {left:?}"
    );
    assert!(!std::path::Path::new("written-here.txt").exists());
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("a program reached the network: {other:?}"),
    }
    // Each door was tried and the trials ended in errors, values or both.
    let refused = outcomes
        .iter()
        .filter(|(_, seen)| seen.contains("permission_denied"))
        .count();
    assert!(
        refused > 10,
        "only {refused} refusals: the doors were not tried"
    );
}
