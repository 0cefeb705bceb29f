//! The run log, cost, budgets and the cache, seen from outside: the binary runs scripts
//! against a fake OpenAI-compatible server on 127.0.0.1 that counts its requests, with
//! the log in a temporary directory.

#![cfg(unix)]

use serde_json::{json, Value as Json};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;

const KEY: &str = "sk-test-NEVER-LOGGED-4d1f";

/// Answers every chat completion with `answer: PROMPT` and usage 10 + 5, except prompts
/// containing the text `fail_on` holds (a 400) and prompts containing `HANG` (held
/// until the client gives up).
struct Server {
    base: String,
    requests: Arc<AtomicUsize>,
    fail_on: Arc<Mutex<Option<String>>>,
}

impl Server {
    fn start() -> Server {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let base = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let fail_on: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
        let (count, failing) = (requests.clone(), fail_on.clone());
        std::thread::spawn(move || {
            for mut request in server.incoming_requests() {
                count.fetch_add(1, Ordering::SeqCst);
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let body: Json = serde_json::from_str(&body).unwrap_or(Json::Null);
                let prompt = body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .and_then(|m| m["content"].as_str())
                    .unwrap_or("")
                    .to_owned();
                if prompt.contains("HANG") {
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_secs(60));
                        drop(request);
                    });
                    continue;
                }
                let fail = failing
                    .lock()
                    .unwrap()
                    .as_ref()
                    .is_some_and(|f| prompt.contains(f.as_str()));
                let (status, answer) = if fail {
                    (400, json!({"error": {"message": "bad prompt"}}))
                } else {
                    let content = format!("answer: {prompt}");
                    (
                        200,
                        json!({"choices": [{"message": {"role": "assistant", "content": content}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
                    )
                };
                let _ = request.respond(
                    tiny_http::Response::from_string(answer.to_string()).with_status_code(status),
                );
            }
        });
        Server {
            base,
            requests,
            fail_on,
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn fail_on(&self, text: Option<&str>) {
        *self.fail_on.lock().unwrap() = text.map(str::to_owned);
    }
}

struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("state/log.db")
    }

    fn command(&self, server: Option<&Server>, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("TASKLISP_LOG", self.log())
            .env("OPENAI_API_KEY", KEY)
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        if let Some(server) = server {
            command.args([
                "--provider",
                "openai",
                "--model",
                "gpt-4o-mini",
                "--base-url",
                &server.base,
            ]);
        }
        command.args(args);
        command
    }

    fn run(&self, server: Option<&Server>, script: &str, flags: &[&str]) -> Output {
        std::fs::write(self.dir.path().join("main.sexp"), script).unwrap();
        let mut args = flags.to_vec();
        args.extend(["run", "main.sexp"]);
        self.command(server, &args).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Json {
        let output = self.command(None, args).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }

    fn text(&self, args: &[&str]) -> String {
        let output = self.command(None, args).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    }

    /// The calls of the newest run.
    fn last_calls(&self) -> (Json, Vec<Json>) {
        let runs = self.json(&["log", "--json", "-n", "1"]);
        let run = runs[0].clone();
        let tree = self.json(&["log", run["id"].as_str().unwrap(), "--json"]);
        (run, tree["calls"].as_array().unwrap().clone())
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const NESTED: &str = r#"
(deftask ask (q) :prompt "Q: {{q}}")
(deftask pair (a b) (list (ask a) (ask b)))
(deftask outer (a b) (pair a b))
(println (get (get (outer "one" "two") "parsedContent") 1))
(try (ask "FAIL please") (catch e (println (get e "reason"))))
(println (get (ask "three") "notes"))
(println (run-usage))
"#;

#[test]
fn nested_task_calls_and_a_failure_are_logged_as_a_tree() {
    let server = Server::start();
    server.fail_on(Some("FAIL"));
    let sandbox = Sandbox::new();
    let output = sandbox.run(Some(&server), NESTED, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // gpt-4o-mini: 10 input tokens at $0.15 and 5 output tokens at $0.60 per million.
    let cost = (10.0 * 0.15 + 5.0 * 0.60) / 1e6;
    let notes =
        r#"{"task" "ask" "usage" {"input_tokens" 10 "output_tokens" 5} "cost" 4.5e-6 "rounds" 1}"#;
    assert_eq!(
        stdout(&output),
        format!(
            "{{\"content\" \"answer: Q: two\" \"status\" \"COMPLETE\" \"parsedContent\" nil \"notes\" {notes}}}\n\
             llm_error\n\
             {notes}\n\
             {{\"calls\" 4 \"input_tokens\" 30 \"output_tokens\" 15 \"cost\" 1.35e-5}}\n"
        )
    );
    let (run, calls) = sandbox.last_calls();
    assert_eq!(
        (run["calls"].clone(), run["status"].clone()),
        (json!(4), json!("ok"))
    );
    assert_eq!(
        (run["command"].clone(), run["script"].clone()),
        (json!("run"), json!("main.sexp"))
    );
    let shape: Vec<(i64, Option<i64>, &str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["seq"].as_i64().unwrap(),
                c["parent"].as_i64(),
                c["kind"].as_str().unwrap(),
                c["task"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (1, None, "task", "outer", "ok"),
            (2, Some(1), "task", "pair", "ok"),
            (3, Some(2), "task", "ask", "ok"),
            (4, Some(3), "model", "ask", "ok"),
            (5, Some(2), "task", "ask", "ok"),
            (6, Some(5), "model", "ask", "ok"),
            (7, None, "task", "ask", "error"),
            (8, Some(7), "model", "ask", "error"),
            (9, None, "task", "ask", "ok"),
            (10, Some(9), "model", "ask", "ok"),
        ]
    );
    let first = &calls[3];
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": "Q: one"}])
    );
    assert_eq!(first["answer"], "answer: Q: one");
    assert_eq!(
        (first["provider"].clone(), first["model"].clone()),
        (json!("openai"), json!("gpt-4o-mini"))
    );
    assert_eq!(
        (
            first["input_tokens"].clone(),
            first["output_tokens"].clone()
        ),
        (json!(10), json!(5))
    );
    assert_eq!(first["cache_hit"], false);
    assert!((first["cost"].as_f64().unwrap() - cost).abs() < 1e-15);
    assert_eq!(calls[7]["error"]["reason"], "llm_error");

    let tree = sandbox.text(&["log", run["id"].as_str().unwrap()]);
    let lines: Vec<&str> = tree.lines().collect();
    assert!(lines[1].starts_with("#1 task outer"), "{tree}");
    assert!(lines[2].starts_with("  #2 task pair"), "{tree}");
    assert!(
        lines[4].starts_with("      #4 model ask  openai/gpt-4o-mini  10+5 tokens  $0.0000"),
        "{tree}"
    );
    assert!(lines[4].ends_with("→ answer: Q: one"), "{tree}");
    assert!(
        lines[8].contains("#8 model ask") && lines[8].contains("error: "),
        "{tree}"
    );

    let listing = sandbox.text(&["log"]);
    assert!(
        listing
            .lines()
            .nth(1)
            .unwrap()
            .contains("      4       45   $0.0000  ok           run main.sexp"),
        "{listing}"
    );
}

#[test]
fn a_tool_loop_logs_each_turn_with_its_messages_options_and_tool_calls() {
    let sandbox = Sandbox::new();
    let script = r#"
(set-provider! (fn (request)
  (if (= (length request.messages) 1)
      {"tool_calls" [{"id" "c1" "name" "add" "arguments" {"a" 2 "b" 3}}]}
      "5")))
(deftask add (a b) :param-types {"a" "integer" "b" "integer"} (+ a b))
(deftask calc (q) :prompt "{{q}}" :tools [add] :temperature 0)
(println (get (calc "2+3?") "content"))
"#;
    let output = sandbox.run(None, script, &[]);
    assert_eq!(
        stdout(&output),
        "5\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (_, calls) = sandbox.last_calls();
    let turns: Vec<&Json> = calls.iter().filter(|c| c["kind"] == "model").collect();
    assert_eq!(turns.len(), 2);
    assert_eq!(
        turns[0]["tool_calls"],
        json!([{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}])
    );
    assert_eq!(
        turns[0]["options"],
        json!({"temperature": 0, "json_mode": false, "round": 1})
    );
    assert_eq!(turns[1]["tool_calls"], Json::Null);
    assert_eq!(
        turns[1]["messages"][2],
        json!({"role": "tool", "content": "5", "tool_call_id": "c1"})
    );
}

#[test]
fn the_key_never_reaches_the_database() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    let output = sandbox.run(Some(&server), NESTED, &[]);
    assert!(output.status.success());
    let bytes = log_bytes(&sandbox);
    assert!(
        bytes.windows(6).any(|w| w == b"Q: one"),
        "the log holds the prompts"
    );
    assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    assert!(!bytes.windows(6).any(|w| w.eq_ignore_ascii_case(b"Bearer")));
}

/// Every file the run log wrote, as bytes.
fn log_bytes(sandbox: &Sandbox) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(sandbox.log().parent().unwrap()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    bytes
}

#[test]
fn a_key_in_a_prompt_or_an_answer_is_redacted_in_the_log() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    // The fake server echoes the prompt: the key is in the request and in the answer.
    let script = r#"(deftask ask (q) :prompt "Q: {{q}}")
                    (println (get (ask (getenv "OPENAI_API_KEY")) "content"))"#;
    let output = sandbox.run(Some(&server), script, &[]);
    assert_eq!(stdout(&output), format!("answer: Q: {KEY}\n"));
    let bytes = log_bytes(&sandbox);
    assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    let (_, calls) = sandbox.last_calls();
    let model = calls.iter().find(|c| c["kind"] == "model").unwrap();
    assert_eq!(model["answer"], "answer: Q: [REDACTED]", "{model}");
}

#[test]
fn a_key_on_the_command_line_or_in_a_task_error_is_redacted_in_the_log() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    // The text of `prompt` and `eval` is the run's script; the key is also in an error a
    // task raised after its model call.
    let prompt = format!("my key is {KEY}");
    let output = sandbox
        .command(Some(&server), &["--json", "prompt", &prompt])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let program = format!(
        r#"(deftask ask (q) :prompt "Q: {{{{q}}}}")
           (deftask wrap (q) (begin (ask q) (error (str "failed with {KEY}"))))
           (try (wrap "x") (catch e (println "caught")))"#
    );
    let output = sandbox
        .command(Some(&server), &["eval", &program])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&output),
        "caught\nnil\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = log_bytes(&sandbox);
    assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    let runs = sandbox.json(&["log", "--json"]);
    let scripts: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["script"].as_str().unwrap())
        .collect();
    assert!(
        scripts
            .iter()
            .any(|s| s.starts_with("my key is [REDACTED]")),
        "{scripts:?}"
    );
    assert!(
        scripts.iter().any(|s| s.contains("failed with [REDACTED]")),
        "{scripts:?}"
    );
    let (_, calls) = sandbox.last_calls();
    let wrap = calls.iter().find(|c| c["task"] == "wrap").unwrap();
    assert_eq!(wrap["error"]["message"], "failed with [REDACTED]", "{wrap}");
}

#[test]
fn a_full_disk_is_reported_once_per_run() {
    use std::os::unix::process::CommandExt;
    let server = Server::start();
    let sandbox = Sandbox::new();
    // Files may not grow past 48 KiB (SIGXFSZ ignored, so a write past it fails as on a
    // full disk); 300 calls with 1 KiB prompts need far more.
    let script = r#"(deftask ask (q) :prompt "Q: {{q}}")
                    (define pad (apply str (map (fn (i) "0123456789abcdef") (range 64))))
                    (for-each (fn (i) (ask (str i pad))) (range 300))
                    (println "done")"#;
    std::fs::write(sandbox.dir.path().join("main.sexp"), script).unwrap();
    let mut command = sandbox.command(Some(&server), &["run", "main.sexp"]);
    // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 48 << 10,
                rlim_max: 48 << 10,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stdout(&output), "done\n", "{stderr}");
    assert_eq!(stderr.matches("run log").count(), 1, "{stderr}");
}

#[test]
fn a_long_chat_stores_each_message_once() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    // 300 turns: every request repeats the whole history, which the log once stored
    // again in every row (quadratic: 4 MB here, 148 MB for 2,000 turns).
    let script = r#"(let loop ((c (conversation)) (i 0))
                      (if (< i 300) (loop (get (chat c (str "turn " i)) "conversation") (+ i 1))))
                    (println "done")"#;
    let output = sandbox.run(Some(&server), script, &[]);
    assert_eq!(
        stdout(&output),
        "done\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = log_bytes(&sandbox).len();
    assert!(bytes < 1 << 20, "the log takes {bytes} bytes");
    // `tasklisp log` still shows every call's messages, in order.
    let (_, calls) = sandbox.last_calls();
    let last = calls.last().unwrap();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 599, "{last}");
    assert_eq!(messages[0]["content"], "turn 0");
    assert_eq!(messages[1]["content"], "answer: turn 0");
    assert_eq!(messages[598]["content"], "turn 299");
}

#[test]
fn a_run_killed_without_ending_is_marked_interrupted_by_the_next_tasklisp() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    let script = r#"(deftask ask (q) :prompt "Q: {{q}}") (ask "a") (println "asked") (sleep 1000)"#;
    std::fs::write(sandbox.dir.path().join("main.sexp"), script).unwrap();
    let mut child = sandbox
        .command(Some(&server), &["run", "main.sexp"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = [0u8; 6];
    child.stdout.take().unwrap().read_exact(&mut line).unwrap();
    assert_eq!(&line, b"asked\n");
    // The run row is written with the first call; wait for it (a hang guard, not a
    // timing: it is there within milliseconds).
    let mut status = Json::Null;
    for _ in 0..3000 {
        let runs = sandbox.json(&["log", "--json"]);
        status = runs[0]["status"].clone();
        if status == "running" {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(status, "running");
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = sandbox.json(&["log", "--json"]);
    assert_eq!(runs[0]["status"], "interrupted", "{runs}");
    assert!(sandbox.text(&["log"]).contains("interrupted"));
}

#[test]
fn a_program_without_model_calls_creates_no_log_and_off_means_off() {
    let sandbox = Sandbox::new();
    assert!(sandbox.run(None, "(println (+ 1 2))", &[]).status.success());
    assert!(!sandbox.log().exists());
    let server = Server::start();
    assert!(sandbox
        .run(Some(&server), NESTED, &["--no-log"])
        .status
        .success());
    assert!(!sandbox.log().exists());
    assert_eq!(
        sandbox.text(&["log"]),
        format!("no runs yet in {}\n", sandbox.log().display())
    );
}

#[test]
fn the_cache_answers_a_second_run_and_resumes_after_a_failure() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    let script = r#"
(deftask ask (q) :prompt "Q: {{q}}")
(println (map (fn (q) (get (ask q) "content")) ["a" "b" "c" "d"]))
(println (get (ask "a") "notes"))
"#;
    server.fail_on(Some("c"));
    let failed = sandbox.run(Some(&server), script, &["--cache"]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(server.requests(), 3);
    assert_eq!(sandbox.last_calls().0["status"], "error");

    server.fail_on(None);
    let resumed = sandbox.run(Some(&server), script, &["--cache"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    // Only "c" and "d" reach the server; "a" and "b" (and "a" again) come from the log.
    assert_eq!(server.requests(), 5);
    assert_eq!(
        stdout(&resumed),
        "(\"answer: Q: a\" \"answer: Q: b\" \"answer: Q: c\" \"answer: Q: d\")\n\
         {\"task\" \"ask\" \"usage\" {\"input_tokens\" 10 \"output_tokens\" 5} \"cached\" true \"rounds\" 1}\n"
    );
    let (run, calls) = sandbox.last_calls();
    let hits: Vec<bool> = calls
        .iter()
        .filter(|c| c["kind"] == "model")
        .map(|c| c["cache_hit"].as_bool().unwrap())
        .collect();
    assert_eq!(hits, [true, true, false, false, true]);
    // The run's totals count what was sent, as `run-usage` does: cache hits apart.
    assert_eq!(
        (&run["calls"], &run["cache_hits"], &run["input_tokens"]),
        (&json!(2), &json!(3), &json!(20))
    );
    assert!(calls
        .iter()
        .filter(|c| c["cache_hit"] == true)
        .all(|c| c["cost"].is_null()));

    // Without --cache every call goes to the server; with-cache and :cache turn it on.
    assert!(sandbox.run(Some(&server), script, &[]).status.success());
    assert_eq!(server.requests(), 10);
    let scoped = r#"
(deftask ask (q) :prompt "Q: {{q}}")
(deftask cached-ask (q) :prompt "Q: {{q}}" :cache true)
(with-cache (ask "a"))
(cached-ask "b")
(println (run-usage))
"#;
    let output = sandbox.run(Some(&server), scoped, &[]);
    assert_eq!(
        stdout(&output),
        "{\"calls\" 0 \"input_tokens\" 0 \"output_tokens\" 0 \"cost\" 0.0}\n"
    );
    assert_eq!(server.requests(), 10);
    let (run, _) = sandbox.last_calls();
    assert_eq!(
        (&run["calls"], &run["cache_hits"], &run["input_tokens"]),
        (&json!(0), &json!(2), &json!(0))
    );
}

#[test]
fn prices_come_from_the_override_file_and_replay_has_no_cost() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    let prices = sandbox.dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"gpt-4o-mini": {"input": 1000000, "output": 0}}"#,
    )
    .unwrap();
    let script = r#"
(deftask ask (q) :prompt "Q: {{q}}")
(println (get (get (ask "a") "notes") "cost"))
"#;
    let mut command = sandbox.command(Some(&server), &["run", "main.sexp"]);
    std::fs::write(sandbox.dir.path().join("main.sexp"), script).unwrap();
    let output = command.env("TASKLISP_PRICES", &prices).output().unwrap();
    assert_eq!(stdout(&output), "10.0\n");

    let cassette = sandbox.dir.path().join("c.jsonl");
    let recorded = sandbox
        .command(None, &["--provider", "record", "--model", "gpt-4o-mini"])
        .args(["--base-url", &server.base, "run", "main.sexp"])
        .env("TASKLISP_RECORD_PROVIDER", "openai")
        .env("TASKLISP_CASSETTE", &cassette)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&recorded),
        "4.5e-6\n",
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let replay = sandbox
        .command(
            None,
            &[
                "--provider",
                "replay",
                "--model",
                "gpt-4o-mini",
                "run",
                "main.sexp",
            ],
        )
        .env("TASKLISP_CASSETTE", &cassette)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&replay),
        "nil\n",
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let (_, calls) = sandbox.last_calls();
    assert_eq!(calls[1]["provider"], "replay");
    assert!(calls.iter().all(|c| c["cost"].is_null()));
}

#[test]
fn ctrl_c_keeps_the_calls_that_completed() {
    let server = Server::start();
    let sandbox = Sandbox::new();
    let script = r#"
(deftask ask (q) :prompt "Q: {{q}}")
(ask "first")
(println "started")
(ask "HANG")
"#;
    std::fs::write(sandbox.dir.path().join("main.sexp"), script).unwrap();
    let mut child = sandbox
        .command(Some(&server), &["run", "main.sexp"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut byte = [0u8; 1];
    let out = child.stdout.as_mut().unwrap();
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {}
    // Wait until the hanging request has reached the server.
    while server.requests() < 2 {
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill with a valid pid and signal has no memory effects.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let (run, calls) = sandbox.last_calls();
    assert_eq!(run["status"], "interrupted");
    let statuses: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c["kind"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("task", "ok"),
            ("model", "ok"),
            ("task", "interrupted"),
            ("model", "interrupted")
        ]
    );
}

#[test]
fn the_examples_of_the_observability_guide_run_and_print_what_they_say() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/OBSERVABILITY.md"
    ))
    .unwrap();
    let blocks = common::lisp_blocks(&guide);
    assert!(blocks.len() >= 3, "found {} examples", blocks.len());
    for block in blocks {
        let sandbox = Sandbox::new();
        let output = sandbox.run(None, &block, &["--provider", "echo"]);
        assert!(
            output.status.success(),
            "{block}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let expected: Vec<String> = block.lines().filter_map(common::promised).collect();
        let printed: Vec<String> = stdout(&output).lines().map(str::to_owned).collect();
        assert_eq!(printed, expected, "{block}");
    }
}

/// A code agent's steps are rows under its own, each with its model call, and the
/// model calls the sandboxed code makes (a tool's) sit under the step that ran it.
#[test]
fn a_code_agents_steps_and_its_sandboxed_calls_are_logged_under_it() {
    let sandbox = Sandbox::new();
    let script = r#"
(set-provider!
  (fn (req)
    (if (= req.task "code-agent")
      (if (= req.round 1) "(define a (get (ask \"x\") \"content\"))" "(final-answer a)")
      "fact")))
(deftask ask (q) :prompt "Q: {{q}}")
(println (get (code-agent "go" :tools [ask]) "content"))
"#;
    let output = sandbox.run(None, script, &[]);
    assert_eq!(stdout(&output), "fact\n", "{output:?}");
    let (_, calls) = sandbox.last_calls();
    let shape: Vec<(Option<i64>, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["parent"].as_i64(),
                c["kind"].as_str().unwrap(),
                c["task"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (None, "task", "code-agent"),
            (Some(1), "task", "code-agent step 1"),
            (Some(2), "model", "code-agent"),
            (Some(2), "task", "ask"),
            (Some(4), "model", "ask"),
            (Some(1), "task", "code-agent step 2"),
            (Some(6), "model", "code-agent"),
        ]
    );
}
