//! `pmap :batch true` against the fake batch server shipped in
//! `examples/fake_batch_server.py` (OpenAI's files and batches endpoints, Anthropic's
//! message batches): the exact uploaded JSONL, one job for many items, answers in
//! order, a second job for calls that depend on the first answers, partial failures,
//! an expired job, and a killed run that resumes its job from the run log.

use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The fake server, killed when dropped.
struct FakeBatchServer {
    child: Child,
    base: String,
}

impl FakeBatchServer {
    fn start(extra: &[&str]) -> FakeBatchServer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fake_batch_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fake batch server");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server says where it listens");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .expect("a listening line")
            .to_owned();
        FakeBatchServer { child, base }
    }

    /// Lets every job end (the server was started with `--hold`).
    fn release(&self) {
        ureq::post(format!("{}/_release", self.base))
            .send_empty()
            .expect("release");
    }

    fn stats(&self) -> Json {
        let body = ureq::get(format!("{}/_stats", self.base))
            .call()
            .expect("stats")
            .body_mut()
            .read_to_string()
            .expect("stats body");
        serde_json::from_str(&body).expect("stats JSON")
    }
}

impl Drop for FakeBatchServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `script` (with `{base}` replaced by the server's address) with fast polling.
fn run(server: &FakeBatchServer, script: &str) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_script(dir.path(), server, script);
    Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .arg("run")
        .arg(&file)
        .env("TASKLISP_BATCH_POLL", "0.01")
        .env("TASKLISP_LOG", "off")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Writes `script` to `dir/batch.sexp`, with `{base}` replaced by the server's address.
fn write_script(dir: &Path, server: &FakeBatchServer, script: &str) -> PathBuf {
    let file = dir.join("batch.sexp");
    std::fs::write(&file, script.replace("{base}", &server.base)).expect("write script");
    file
}

/// A `pmap :batch true` of two items.
const TWO_ITEMS: &str = "(prn (pmap (fn (x) (get (ask x) \"content\")) [\"a\" \"b\"] :batch true))";

fn stdout_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const OPENAI: &str = r#"(set-provider! :openai {"base_url" "{base}/v1" "model" "gpt-4o-mini"})
(deftask ask (x) :system "Be brief." :prompt "Say {{x}}")
"#;

#[test]
fn the_uploaded_file_is_exact_jsonl() {
    let server = FakeBatchServer::start(&[]);
    let output = run(&server, &format!("{OPENAI}{TWO_ITEMS}"));
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Say a\" \"answer to: Say b\")\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "no progress line into a pipe"
    );
    let line = |item: usize, word: &str| {
        json!({"custom_id": format!("item-{item}-round-1"), "method": "POST",
               "url": "/v1/chat/completions",
               "body": {"model": "gpt-4o-mini", "messages": [
                   {"role": "system", "content": "Be brief."},
                   {"role": "user", "content": format!("Say {word}")}],
               "prompt_cache_key": "ask"}})
        .to_string()
    };
    let stats = server.stats();
    assert_eq!(stats["submitted"], 1);
    assert_eq!(
        stats["uploads"][0].as_str().unwrap(),
        format!("{}\n{}\n", line(0, "a"), line(1, "b"))
    );
}

#[test]
fn a_thousand_items_go_in_one_job_and_come_back_in_order() {
    let server = FakeBatchServer::start(&["--polls", "3"]);
    let output = run(
        &server,
        &format!(
            "{OPENAI}(define answers (pmap (fn (x) (get (ask x) \"content\")) (range 1000) :batch true))
(prn (length answers))
(prn (= answers (map (fn (x) (str \"answer to: Say \" x)) (range 1000))))"
        ),
    );
    assert_eq!(stdout_of(&output), "1000\ntrue\n");
    let stats = server.stats();
    assert_eq!(stats["submitted"], 1);
    assert_eq!(stats["uploads"][0].as_str().unwrap().lines().count(), 1000);
}

#[test]
fn calls_that_depend_on_answers_go_in_a_second_job() {
    let server = FakeBatchServer::start(&[]);
    let output = run(
        &server,
        &format!(
            "{OPENAI}(deftask again (x) :prompt \"Again {{{{x}}}}\")
(prn (pmap (fn (x) (get (again (get (ask x) \"content\")) \"content\")) [\"a\" \"b\"] :batch true))"
        ),
    );
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Again answer to: Say a\" \"answer to: Again answer to: Say b\")\n"
    );
    let stats = server.stats();
    assert_eq!(stats["submitted"], 2);
    assert!(stats["uploads"][1]
        .as_str()
        .unwrap()
        .contains("Again answer to: Say a"));
}

#[test]
fn a_reask_goes_in_the_next_job_with_the_answer_and_its_problems() {
    let server = FakeBatchServer::start(&[]);
    let output = run(
        &server,
        &format!(
            "{OPENAI}(deftask label (x) :prompt \"Label {{{{x}}}}\" :schema \"object\" :retries 1)
(define results (pmap label [\"a\"] :batch true :on-error :collect))
(prn (get (first results) \"reason\"))"
        ),
    );
    // The fake answers prose twice: the second round fails too.
    assert_eq!(stdout_of(&output), "\"output_format_failure\"\n");
    let stats = server.stats();
    assert_eq!(stats["submitted"], 2);
    let second: Json = serde_json::from_str(stats["uploads"][1].as_str().unwrap().trim()).unwrap();
    assert_eq!(second["custom_id"], "item-0-round-2");
    let messages = second["body"]["messages"].as_array().unwrap();
    assert_eq!(messages[0], json!({"role": "user", "content": "Label a"}));
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": "answer to: Label a"})
    );
    assert_eq!(messages[2]["role"], "user");
    let problems = messages[2]["content"].as_str().unwrap();
    assert!(
        problems.starts_with("Your answer has these problems:\n- "),
        "{problems}"
    );
}

#[test]
fn failed_requests_fail_their_items_only() {
    let server = FakeBatchServer::start(&[]);
    let output = run(
        &server,
        &format!(
            "{OPENAI}(prn (pmap (fn (x) (try (get (ask x) \"content\") (catch e [e.reason e.message])))
                 [\"a\" \"FAIL b\" \"c\"] :batch true))"
        ),
    );
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Say a\" (\"llm_error\" \"openai batch: HTTP 400: the prompt asked to fail\") \"answer to: Say c\")\n"
    );
}

#[test]
fn an_expired_job_answers_what_ran_and_times_out_the_rest() {
    let server = FakeBatchServer::start(&["--expire"]);
    let output = run(
        &server,
        &format!(
            "{OPENAI}(prn (pmap (fn (x) (try (get (ask x) \"content\") (catch e e.reason)))
                 [\"a\" \"b\" \"c\" \"d\"] :batch true))"
        ),
    );
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Say a\" \"answer to: Say b\" \"execution_timeout\" \"execution_timeout\")\n"
    );
}

#[test]
fn anthropic_message_batches() {
    let server = FakeBatchServer::start(&["--polls", "2"]);
    let output = run(
        &server,
        r#"(set-provider! :anthropic {"base_url" "{base}" "model" "claude-test" "max_tokens" 100})
(deftask ask (x) :system "Be brief." :prompt "Say {{x}}")
(prn (pmap (fn (x) (try (get (ask x) "content") (catch e [e.reason e.message])))
           ["a" "FAIL b"] :batch true))"#,
    );
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Say a\" (\"llm_error\" \"anthropic batch: the prompt asked to fail\"))\n"
    );
    let stats = server.stats();
    assert_eq!(stats["submitted"], 1);
    assert_eq!(
        stats["anthropic_requests"][0][0],
        json!({"custom_id": "item-0-round-1", "params": {
            "model": "claude-test", "max_tokens": 100, "system": "Be brief.",
            "messages": [{"role": "user", "content": "Say a"}]}})
    );
}

#[test]
fn run_batch_makes_every_pmap_a_batch() {
    let server = FakeBatchServer::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_script(
        dir.path(),
        &server,
        &format!("{OPENAI}(prn (map (fn (r) r.content) (pmap ask [\"a\" \"b\"])))"),
    );
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .args(["run", "--batch"])
        .arg(&file)
        .env("TASKLISP_BATCH_POLL", "0.01")
        .env("TASKLISP_LOG", "off")
        .output()
        .expect("runs");
    assert_eq!(
        stdout_of(&output),
        "(\"answer to: Say a\" \"answer to: Say b\")\n"
    );
    assert_eq!(server.stats()["submitted"], 1);
}

/// A run killed while it waits for its job (no chance to clean up) leaves the job in
/// the run log; run again with `--cache`, it waits for that job instead of submitting
/// the requests again, and a third run finds every answer in the cache.
#[test]
fn a_killed_run_resumes_its_job_from_the_run_log() {
    let server = FakeBatchServer::start(&["--hold"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_script(dir.path(), &server, &format!("{OPENAI}{TWO_ITEMS}"));
    let log = dir.path().join("log.db");
    let tasklisp = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
        command
            .args(args)
            .env("TASKLISP_BATCH_POLL", "0.01")
            .env("TASKLISP_LOG", &log)
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        command
    };
    let script = file.to_str().expect("a UTF-8 path");

    let mut first = tasklisp(&["--cache", "run", script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    // The job is in the log before its first poll, so once the server has been polled
    // the run can be killed.
    while server.stats()["polls"].as_u64().unwrap_or(0) == 0 {
        assert!(
            first.try_wait().expect("wait").is_none(),
            "the first run ended before polling"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    first.kill().expect("kill");
    first.wait().expect("reaped");
    server.release();

    let answers = "(\"answer to: Say a\" \"answer to: Say b\")\n";
    let second = tasklisp(&["--cache", "run", script])
        .output()
        .expect("runs");
    assert_eq!(stdout_of(&second), answers);
    assert_eq!(server.stats()["submitted"], 1);

    let runs = tasklisp(&["log", "--json", "-n", "1"])
        .output()
        .expect("runs");
    let runs: Json = serde_json::from_str(&stdout_of(&runs)).expect("JSON");
    let run_id = runs[0]["id"].as_str().expect("a run id");
    let tree = stdout_of(&tasklisp(&["log", run_id]).output().expect("runs"));
    assert!(
        tree.ends_with(
            "batch openai batch_0  2 requests  answered (completed: 2 done, 0 failed)  resumed\n"
        ),
        "{tree}"
    );

    let polls = server.stats()["polls"].clone();
    let third = tasklisp(&["--cache", "run", script])
        .output()
        .expect("runs");
    assert_eq!(stdout_of(&third), answers);
    assert_eq!(server.stats()["polls"], polls);
}

/// On a terminal, the job's state shows on `pmap`'s progress line while it runs.
#[cfg(unix)]
#[test]
fn a_terminal_sees_the_job_on_the_progress_line() {
    use expectrl::{Eof, Expect, Session};
    let server = FakeBatchServer::start(&["--hold"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write_script(dir.path(), &server, &format!("{OPENAI}{TWO_ITEMS}"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .arg("run")
        .arg(&file)
        .env("TASKLISP_BATCH_POLL", "0.01")
        .env("TASKLISP_LOG", "off")
        .env("TERM", "xterm");
    let mut session = Session::spawn(command).expect("spawns");
    session
        .get_process_mut()
        .set_window_size(160, 24)
        .expect("window size");
    session.set_expect_timeout(Some(std::time::Duration::from_secs(60)));
    session
        .expect("2 in flight · 0 tokens · $0.0000  openai batch batch_0: 0/2 done, 0 failed, in_progress")
        .expect("the job on the progress line");
    server.release();
    session
        .expect("(\"answer to: Say a\" \"answer to: Say b\")")
        .expect("the answers");
    session.expect(Eof).expect("the run ends");
}

#[path = "common/mod.rs"]
mod common;

/// docs/BATCH.md's example is `examples/batch.sexp`, and it prints what the page says.
#[test]
fn the_documented_example_runs_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/BATCH.md")).expect("docs/BATCH.md");
    let example = std::fs::read_to_string(root.join("examples/batch.sexp")).expect("example");
    let blocks = common::lisp_blocks(&page);
    assert_eq!(blocks.last().map(String::as_str), Some(example.as_str()));
    let server = FakeBatchServer::start(&[]);
    let port = server.base.rsplit(':').next().expect("a port");
    let output = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
        .arg("run")
        .arg(root.join("examples/batch.sexp"))
        .arg(port)
        .env("TASKLISP_BATCH_POLL", "0.01")
        .env("TASKLISP_LOG", "off")
        .output()
        .expect("runs");
    let printed = stdout_of(&output);
    let shown = page
        .lines()
        .skip_while(|line| line.trim() != "It prints")
        .nth(2)
        .expect("the printed line")
        .trim();
    assert_eq!(printed.trim(), shown);
}
