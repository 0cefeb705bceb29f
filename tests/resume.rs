//! `tasklisp resume`: runs killed with SIGKILL at a model call, resumed against a fake
//! OpenAI-compatible server that counts what it is asked; changed programs and bad runs
//! refused before anything runs.

use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// A chat-completions server answering `A:` + the last message, after a delay that
/// depends on the message (so `pmap` items finish out of order). With `hold`, the
/// request of that number (from 1) is never answered and the test hears of it.
struct Fake {
    base: String,
    seen: Arc<AtomicUsize>,
    held: mpsc::Receiver<()>,
}

impl Fake {
    fn start(hold: Option<usize>) -> Fake {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let base = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
        let seen = Arc::new(AtomicUsize::new(0));
        let (tell, held) = mpsc::channel();
        let counter = seen.clone();
        std::thread::spawn(move || {
            while let Ok(mut request) = server.recv() {
                let number = counter.fetch_add(1, Ordering::SeqCst) + 1;
                let tell = tell.clone();
                std::thread::spawn(move || {
                    let mut body = String::new();
                    request.as_reader().read_to_string(&mut body).unwrap();
                    if Some(number) == hold {
                        let _ = tell.send(());
                        // Never answered: the client is killed meanwhile.
                        std::thread::sleep(Duration::from_secs(120));
                        return;
                    }
                    let body: Json = serde_json::from_str(&body).unwrap();
                    let last = body["messages"]
                        .as_array()
                        .and_then(|m| m.last())
                        .and_then(|m| m["content"].as_str())
                        .unwrap_or_default()
                        .to_owned();
                    let delay = last.bytes().map(u64::from).sum::<u64>() % 7;
                    std::thread::sleep(Duration::from_millis(delay * 5));
                    let answer = json!({
                        "model": "m",
                        "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": format!("A:{last}")}}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                    });
                    let _ = request.respond(tiny_http::Response::from_string(answer.to_string()));
                });
            }
        });
        Fake { base, seen, held }
    }

    fn seen(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }
}

fn tasklisp(dir: &Path, base: &str, args: &[&str]) -> Command {
    let mut command = on_terminal(dir, base, args);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// `tasklisp` with the fake's flags and the log in `dir`, its standard streams left
/// as they are (a pseudo-terminal's, for expectrl).
fn on_terminal(dir: &Path, base: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tasklisp"));
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("TASKLISP_LOG", dir.join("log.db"))
        .env("OPENAI_API_KEY", "sk-test")
        .current_dir(dir)
        .args(["--provider", "openai", "--base-url", base, "-m", "m"])
        .args(args);
    command
}

/// Status, stdout, stderr.
fn finish(child: Child) -> (Option<i32>, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run(dir: &Path, base: &str, args: &[&str]) -> (Option<i32>, String, String) {
    finish(tasklisp(dir, base, args).spawn().unwrap())
}

fn db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("log.db")).unwrap()
}

fn latest_run(dir: &Path) -> String {
    db(dir)
        .query_row(
            "SELECT id FROM runs ORDER BY started_ms DESC, rowid DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

fn journaled(dir: &Path, run: &str) -> usize {
    db(dir)
        .query_row(
            "SELECT count(*) FROM journal WHERE run_id = ?1",
            [run],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as usize
}

const SEQUENTIAL: &str = "(deftask ask (q) :prompt \"{{q}}\")
(println (map (fn (i) (get (ask (str \"q\" i)) \"content\")) (range 12)))\n";

/// 16 items of two calls each, 8 at a time: items finish in an order set by the fake's
/// delays, not by their index.
const PARALLEL: &str = "(deftask ask (q) :prompt \"{{q}}\")
(println (pmap (fn (i) (list (get (ask (str \"a\" i)) \"content\")
                            (get (ask (str \"b\" i)) \"content\")))
               (range 16) :concurrency 8))
(println (get (ask \"end\") \"content\"))\n";

fn script_dir(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    std::fs::write(path.join("s.sexp"), text).unwrap();
    (dir, path)
}

/// The program's output uninterrupted, how many calls it makes, and the items of its
/// steps in the order they were journaled.
fn uninterrupted(text: &str) -> (String, usize, Vec<String>) {
    let (_keep, dir) = script_dir(text);
    let fake = Fake::start(None);
    let (status, out, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(0), "{err}");
    let conn = db(&dir);
    let mut items = conn
        .prepare("SELECT item FROM journal ORDER BY rowid")
        .unwrap();
    let items = items
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<String>, _>>()
        .unwrap();
    (out, fake.seen(), items)
}

/// Kills the run when the fake has seen `k` requests, then resumes it: the resume makes
/// exactly the calls the journal did not hold, and prints what an uninterrupted run does.
fn kill_at_and_resume(text: &str, k: usize, expected: &str, calls: usize) {
    let (_keep, dir) = script_dir(text);
    let fake = Fake::start(Some(k));
    let mut child = tasklisp(&dir, &fake.base, &["run", "s.sexp"])
        .spawn()
        .unwrap();
    // A guard far above the time the calls take.
    fake.held
        .recv_timeout(Duration::from_secs(120))
        .expect("the run reaches call k");
    child.kill().unwrap();
    let _ = finish(child);
    let killed = latest_run(&dir);
    let kept = journaled(&dir, &killed);
    assert!(
        kept < k,
        "k={k}: {kept} steps journaled of {} answered",
        k - 1
    );
    let again = Fake::start(None);
    let (status, out, err) = run(&dir, &again.base, &["resume", &killed]);
    assert_eq!(status, Some(0), "k={k}: {err}");
    assert_eq!(out, expected, "k={k}");
    assert_eq!(
        again.seen(),
        calls - kept,
        "k={k}: the calls not journaled, only"
    );
    // The new run logs the replayed calls as answered from the cache, keyed only by the
    // run that made them, and the live ones with their cache keys.
    let count = |condition: &str| -> usize {
        db(&dir)
            .query_row(
                &format!(
                    "SELECT count(*) FROM calls WHERE run_id = ?1 AND kind = 'model' AND {condition}"
                ),
                [latest_run(&dir)],
                |row| row.get(0),
            )
            .unwrap()
    };
    assert_eq!(count("cache_hit = 1 AND cache_key IS NULL"), kept, "k={k}");
    assert_eq!(
        count("cache_hit = 0 AND cache_key IS NOT NULL"),
        calls - kept,
        "k={k}"
    );
}

/// Kill points from a fixed seed (a linear congruential generator), in 1..=calls.
fn kill_points(calls: usize, count: usize) -> Vec<usize> {
    let mut state: u64 = 0x5eed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            1 + (state >> 33) as usize % calls
        })
        .collect()
}

#[test]
fn a_run_killed_at_any_call_resumes_with_exactly_the_missing_calls() {
    let (expected, calls, _) = uninterrupted(SEQUENTIAL);
    assert_eq!(calls, 12);
    for k in kill_points(calls, 20) {
        kill_at_and_resume(SEQUENTIAL, k, &expected, calls);
    }
}

#[test]
fn a_pmap_killed_at_any_call_resumes_with_exactly_the_missing_calls() {
    let (expected, calls, items) = uninterrupted(PARALLEL);
    assert_eq!(calls, 33);
    let index = |item: &String| -> usize {
        let inner = item.trim_end_matches('/').rsplit(':').next().unwrap_or("");
        inner.parse().unwrap_or(usize::MAX)
    };
    assert!(
        items.windows(2).any(|w| index(&w[0]) > index(&w[1])),
        "items finish out of their order: {items:?}"
    );
    for k in kill_points(calls, 20) {
        kill_at_and_resume(PARALLEL, k, &expected, calls);
    }
}

/// Kills a run of `text` at its `k`th call; returns the directory and the run's id.
fn killed_run(text: &str, k: usize) -> (tempfile::TempDir, PathBuf, String) {
    let (keep, dir) = script_dir(text);
    let fake = Fake::start(Some(k));
    let mut child = tasklisp(&dir, &fake.base, &["run", "s.sexp"])
        .spawn()
        .unwrap();
    fake.held.recv_timeout(Duration::from_secs(120)).unwrap();
    child.kill().unwrap();
    let _ = finish(child);
    let id = latest_run(&dir);
    (keep, dir, id)
}

#[test]
fn a_changed_prompt_stops_the_resume_naming_the_step_and_the_difference() {
    let (_keep, dir, id) = killed_run(SEQUENTIAL, 6);
    std::fs::write(dir.join("s.sexp"), SEQUENTIAL.replace("\"q\" i", "\"Q\" i")).unwrap();
    let fake = Fake::start(None);
    let (status, _, err) = run(&dir, &fake.base, &["resume", &id]);
    assert_eq!(status, Some(1), "{err}");
    for words in ["step 0", "\"q0\"", "\"Q0\"", "prompt", "changed"] {
        assert!(err.contains(words), "{words}: {err}");
    }
    assert_eq!(fake.seen(), 0, "nothing was sent");
}

#[test]
fn runs_that_cannot_be_resumed_are_refused_before_anything_runs() {
    let (_keep, dir, id) = killed_run(SEQUENTIAL, 4);
    let fake = Fake::start(None);
    let refused = |id: &str, words: &str| {
        let (status, out, err) = run(&dir, &fake.base, &["resume", id]);
        assert_eq!((status, out.as_str()), (Some(1), ""), "{err}");
        assert!(err.contains(words), "{words}: {err}");
    };
    refused("nope", "no run `nope`");
    let conn = db(&dir);
    // A run of another command, a run an older tasklisp recorded, a damaged journal.
    conn.execute_batch(
        "INSERT INTO runs (id, started_ms, command, script, status)
           VALUES ('e1', 1, 'eval', '(ask 1)', 'error'),
                  ('o1', 2, 'run', 's.sexp', 'error');",
    )
    .unwrap();
    refused("e1", "only runs of `tasklisp run`");
    refused("o1", "older tasklisp");
    conn.execute(
        "UPDATE journal SET answer = '{' WHERE run_id = ?1 AND step = 1",
        [&id],
    )
    .unwrap();
    refused(&id, "damaged");
    assert_eq!(fake.seen(), 0);
    conn.execute(
        "UPDATE journal SET answer = '{\"content\":\"A:q1\",\"usage\":null}' WHERE step = 1",
        [],
    )
    .unwrap();
    // Resumed once; a second resume of the same run would make its calls again.
    let (status, _, err) = run(&dir, &fake.base, &["resume", &id]);
    assert_eq!(status, Some(0), "{err}");
    let before = fake.seen();
    refused(&id, "resumed already");
    assert_eq!(fake.seen(), before);
    let (status, _, _) = run(&dir, &fake.base, &["resume", &latest_run(&dir)]);
    assert_eq!(
        status,
        Some(1),
        "a run that ended well has nothing to resume"
    );
}

#[test]
fn the_log_marks_the_runs_that_can_be_resumed() {
    let (_keep, dir, id) = killed_run(SEQUENTIAL, 2);
    let fake = Fake::start(None);
    let (status, out, err) = run(&dir, &fake.base, &["log"]);
    assert_eq!(status, Some(0), "{err}");
    let line = out.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(line.contains("interrupted ↻"), "{out}");
    assert!(out.contains("tasklisp resume RUN"), "{out}");
}

const ASKS: &str = "(deftask ask (q) :prompt \"{{q}}\")
(println (get (ask \"before\") \"content\"))
(define a (ask-human \"Publish it?\" :choices [\"yes\" \"no\"]))
(println (get (ask (str \"after \" a)) \"content\"))\n";

#[test]
fn ask_human_through_a_pipe_stops_with_status_3_and_resume_answers_it() {
    let (_keep, dir) = script_dir(ASKS);
    let fake = Fake::start(None);
    let (status, out, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!((status, out.as_str()), (Some(3), "A:before\n"), "{err}");
    let id = latest_run(&dir);
    assert!(err.contains(&format!(
        "run {id} waits for an answer to: Publish it? [yes/no]"
    )));
    assert!(
        err.contains(&format!("tasklisp resume {id} --answer TEXT")),
        "{err}"
    );
    let (status, out, err) = run(&dir, &fake.base, &["resume", &id, "--answer", "yes"]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(out, "A:before\nA:after yes\n");
    assert_eq!(
        fake.seen(),
        2,
        "the call before the question is not made again"
    );
    // The answer is journaled: the resumed run, stopped later, replays it.
    let answered: String = db(&dir)
        .query_row(
            "SELECT answer FROM journal WHERE run_id = ?1 AND kind = 'human'",
            [latest_run(&dir)],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(answered, "\"yes\"");
}

/// Two resumes of one run started at once: one claims the run and goes on, the other
/// is refused before it runs any step, naming the run that claimed it. Counted by the
/// fake's requests: the call after the question is made once per trial.
#[test]
fn of_two_resumes_started_at_once_only_one_goes_on() {
    for trial in 0..5 {
        let (_keep, dir) = script_dir(ASKS);
        let fake = Fake::start(None);
        let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
        assert_eq!(status, Some(3), "{err}");
        assert_eq!(fake.seen(), 1);
        let id = latest_run(&dir);
        let resume = || {
            tasklisp(&dir, &fake.base, &["resume", &id, "--answer", "yes"])
                .spawn()
                .unwrap()
        };
        let (first, second) = (resume(), resume());
        let mut outcomes = [finish(first), finish(second)];
        outcomes.sort_by_key(|(status, _, _)| *status);
        let [(won, out, err), (lost, lost_out, lost_err)] = outcomes;
        assert_eq!(
            (won, out.as_str()),
            (Some(0), "A:before\nA:after yes\n"),
            "{err}"
        );
        assert_ne!(lost, Some(0), "trial {trial}: {lost_err}");
        assert_eq!(lost_out, "", "trial {trial}");
        assert!(
            lost_err.contains(&format!("run {id} was resumed already, by run ")),
            "trial {trial}: {lost_err}"
        );
        assert_eq!(
            fake.seen(),
            2,
            "trial {trial}: the step after the question ran twice"
        );
    }
}

#[test]
fn ask_human_at_a_terminal_asks_and_no_input_stops_there_too() {
    use expectrl::Expect;
    let (_keep, dir) = script_dir(ASKS);
    let fake = Fake::start(None);
    let mut command = on_terminal(&dir, &fake.base, &["run", "s.sexp"]);
    command.env("TERM", "dumb").env("NO_COLOR", "1");
    let mut session = expectrl::Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session.expect("Publish it? [yes/no] ").unwrap();
    session.send("maybe\r").unwrap();
    session.expect("answer one of [yes/no]").unwrap();
    session.expect("Publish it? [yes/no] ").unwrap();
    session.send("no\r").unwrap();
    session.expect("A:after no").unwrap();
    session.expect(expectrl::Eof).unwrap();
    // `--no-input` stops at the question even at a terminal.
    let command = on_terminal(&dir, &fake.base, &["--no-input", "run", "s.sexp"]);
    let mut session = expectrl::Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    session
        .expect("waits for an answer to: Publish it?")
        .unwrap();
    session.expect(expectrl::Eof).unwrap();
    let status = session.get_process().wait().unwrap();
    assert_eq!(
        status,
        expectrl::process::unix::WaitStatus::Exited(session.get_process().pid(), 3)
    );
    // The REPL asks inline and the answer is the expression's value.
    let mut command = on_terminal(&dir, &fake.base, &[]);
    command.env("TASKLISP_HISTORY", dir.join("history"));
    let mut repl = expectrl::Session::spawn(command).unwrap();
    repl.set_expect_timeout(Some(Duration::from_secs(60)));
    repl.expect("tl> ").unwrap();
    repl.send("(ask-human \"Your name?\")\r").unwrap();
    repl.expect("Your name? ").unwrap();
    repl.send("Ada\r").unwrap();
    repl.expect("\"Ada\"").unwrap();
    repl.expect("tl> ").unwrap();
}

/// A model that calls the `publish` tool, then answers with what the tool said.
const APPROVES: &str = "(deftask publish (title) :description \"Publish\"
  :param-types {\"title\" \"string\"} :approve true
  (str \"published \" title))
(define (model request)
  (if (= (get (last request.messages) \"role\") \"user\")
      {\"tool_calls\" [{\"name\" \"publish\" \"arguments\" {\"title\" \"x\"}}]}
      (str \"tool said: \" (get (last request.messages) \"content\"))))
(deftask go (q) :prompt \"{{q}}\" :tools [publish])
(with-provider model (println (get (go \"do it\") \"content\")))\n";

#[test]
fn a_tool_call_waits_for_approval_and_a_refusal_goes_to_the_model() {
    let (_keep, dir) = script_dir(APPROVES);
    let fake = Fake::start(None);
    let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(3), "{err}");
    assert!(
        err.contains("Run tool `publish` with these arguments (18 characters, shown whole)?\n{\n  \"title\": \"x\"\n}\nAnswer y to run it:"),
        "{err}"
    );
    let id = latest_run(&dir);
    let (status, out, err) = run(&dir, &fake.base, &["resume", &id, "--answer", "n"]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(
        out,
        "tool said: Error: the user did not allow this call of `publish`\n"
    );
    // Without `:approve`, `--approve-tools` asks all the same; `y` runs the tool.
    std::fs::write(dir.join("s.sexp"), APPROVES.replace(":approve true", "")).unwrap();
    let (status, _, err) = run(&dir, &fake.base, &["--approve-tools", "run", "s.sexp"]);
    assert_eq!(status, Some(3), "{err}");
    let id = latest_run(&dir);
    let (status, out, err) = run(&dir, &fake.base, &["resume", &id, "--answer", "y"]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(out, "tool said: published x\n");
}

/// Arguments padded past any cut are shown whole: what follows the padding cannot
/// hide from the person who approves.
#[test]
fn an_approval_shows_long_arguments_whole() {
    let padded = format!("x{}; touch pwned", " ".repeat(600));
    let (_keep, dir) =
        script_dir(&APPROVES.replace("{\"title\" \"x\"}", &format!("{{\"title\" {padded:?}}}")));
    let fake = Fake::start(None);
    let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(3), "{err}");
    assert!(
        err.contains(&format!("\"title\": {padded:?}\n}}\nAnswer y")),
        "{err}"
    );
    assert!(!err.contains('…'), "{err}");
}

/// A code agent whose code calls `publish`, a tool that asks for approval; when the
/// tool is refused, the agent gives up.
const AGENT: &str = r#"(deftask publish (title) :description "Publish" :approve true
  (str "published " title))
(set-provider!
  (fn (req)
    (if (= req.round 1) "(final-answer (get (publish \"x\") \"content\"))"
      "(final-answer \"gave up\")")))
(println (get (code-agent "go" :tools [publish]) "content"))
"#;

/// A code agent's code calling a tool goes through the same approval as the tool
/// loop: with no one to approve it (no terminal), the tool does not run, whether it
/// says `:approve true` or `--approve-tools` is on.
#[test]
fn a_code_agents_call_of_a_tool_waits_for_approval() {
    let fake = Fake::start(None);
    for (script, flags) in [
        (AGENT.to_owned(), &[][..]),
        (AGENT.replace(":approve true", ""), &["--approve-tools"][..]),
    ] {
        let (_keep, dir) = script_dir(&script);
        let mut args = flags.to_vec();
        args.extend(["run", "s.sexp"]);
        let (status, out, err) = run(&dir, &fake.base, &args);
        assert_eq!((status, out.as_str()), (Some(0), "gave up\n"), "{err}");
        assert!(
            err.contains("not run, as no one can approve it here: Run tool `publish`"),
            "{err}"
        );
    }
    assert_eq!(fake.seen(), 0);
}

/// At a terminal the person approves a code agent's tool call, and only then it runs.
#[test]
fn a_person_approves_a_code_agents_tool_call_at_the_terminal() {
    use expectrl::Expect;
    let (_keep, dir) = script_dir(AGENT);
    let fake = Fake::start(None);
    for (answer, printed) in [("y", "published x"), ("n", "gave up")] {
        let mut command = on_terminal(&dir, &fake.base, &["run", "s.sexp"]);
        command.env("TERM", "dumb").env("NO_COLOR", "1");
        let mut session = expectrl::Session::spawn(command).unwrap();
        session.set_expect_timeout(Some(Duration::from_secs(60)));
        session.expect("Answer y to run it:").unwrap();
        session.send(format!("{answer}\r")).unwrap();
        session.expect(printed).unwrap();
        session.expect(expectrl::Eof).unwrap();
    }
}

/// Text shown to a person has its escape sequences made visible: a question cannot
/// rewrite itself or reach the clipboard.
#[test]
fn a_question_shows_its_control_characters() {
    let (_keep, dir) = script_dir(
        "(ask-human \"\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2K\\rPublish?\" :choices [\"y\\u{1b}[A\" \"n\"])\n",
    );
    let fake = Fake::start(None);
    let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(3), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\r'), "{err:?}");
    assert!(
        err.contains("\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2K\\u{d}Publish? [y\\u{1b}[A/n]"),
        "{err}"
    );
}

/// Sandboxed code may not ask a person: its question would look like tasklisp's own.
#[test]
fn sandboxed_code_may_not_ask_a_person() {
    let (_keep, dir) = script_dir(
        "(println (try (eval-sandboxed \"(ask-human \\\"Session expired. Paste your API key:\\\")\")
  (catch e (get e \"message\"))))\n",
    );
    let fake = Fake::start(None);
    let (status, out, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.contains("sandboxed code may not ask a person"), "{out}");
    assert!(!err.contains("Paste your API key"), "{err}");
}

/// With no terminal, the hint names `tasklisp resume` only for a run it can take up.
#[test]
fn the_hint_of_a_stopped_run_is_true() {
    let (_keep, dir) = script_dir("(ask-human \"Go?\")\n");
    let fake = Fake::start(None);
    let (status, _, err) = run(&dir, &fake.base, &["eval", "(ask-human \"Go?\")"]);
    assert_eq!(status, Some(3), "{err}");
    assert!(!err.contains("tasklisp resume"), "{err}");
    assert!(
        err.contains("only runs of `tasklisp run FILE` can be resumed"),
        "{err}"
    );
    let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp"]);
    assert_eq!(status, Some(3), "{err}");
    assert!(err.contains("go on with: tasklisp resume"), "{err}");
}

/// An OTLP/HTTP receiver: the JSON bodies posted to `/v1/traces`.
struct Receiver {
    base: String,
    bodies: mpsc::Receiver<Json>,
}

impl Receiver {
    fn start() -> Receiver {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let base = format!("http://{}", server.server_addr().to_ip().unwrap());
        let (send, bodies) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(mut request) = server.recv() {
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                assert_eq!(request.url(), "/v1/traces");
                let _ = send.send(serde_json::from_str(&body).unwrap());
                let _ = request.respond(tiny_http::Response::from_string("{}"));
            }
        });
        Receiver { base, bodies }
    }

    /// The spans of the next export, by name.
    fn spans(&self) -> Vec<Json> {
        let body = self.bodies.recv_timeout(Duration::from_secs(60)).unwrap();
        body["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn named<'a>(spans: &'a [Json], name: &str) -> Vec<&'a Json> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn attr(span: &Json, key: &str) -> Json {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == key)
        .map_or(Json::Null, |a| a["value"].clone())
}

const TRACED: &str = "(deftask ask (q) :prompt \"{{q}}\")
(deftask outer (x) (str (get (ask x) \"content\") (get (ask \"two\") \"content\")))
(println (get (outer \"one\") \"content\"))
(deftask publish (title) :description \"Publish\" :param-types {\"title\" \"string\"}
  (str \"published \" title))
(define (model request)
  (if (= (get (last request.messages) \"role\") \"user\")
      {\"tool_calls\" [{\"id\" \"c1\" \"name\" \"publish\" \"arguments\" {\"title\" \"x\"}}]}
      \"done\"))
(deftask go (q) :prompt \"{{q}}\" :tools [publish])
(with-provider model (println (get (go \"do it\") \"content\")))\n";

#[test]
fn a_run_is_exported_as_otlp_spans_with_gen_ai_attributes_and_parents() {
    let (_keep, dir) = script_dir(TRACED);
    let fake = Fake::start(None);
    let receiver = Receiver::start();
    let (status, _, err) = run(
        &dir,
        &fake.base,
        &["--otlp", &receiver.base, "run", "s.sexp"],
    );
    assert_eq!(status, Some(0), "{err}");
    let spans = receiver.spans();
    let [run_span] = named(&spans, "run s.sexp")[..] else {
        panic!("{spans:#?}")
    };
    assert!(run_span.get("parentSpanId").is_none());
    let [outer] = named(&spans, "task outer")[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(outer["parentSpanId"], run_span["spanId"]);
    // `outer` calls `ask` twice, each call a model call (those of `go` went to a
    // procedure provider).
    let asks: Vec<&Json> = named(&spans, "task ask");
    assert_eq!(asks.len(), 2, "{spans:#?}");
    assert!(asks
        .iter()
        .all(|ask| ask["parentSpanId"] == outer["spanId"]));
    let under_ask = |chat: &&Json| asks.iter().any(|a| a["spanId"] == chat["parentSpanId"]);
    let chats: Vec<&Json> = named(&spans, "chat m")
        .into_iter()
        .filter(under_ask)
        .collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for chat in &chats {
        assert_eq!(chat["traceId"], run_span["traceId"]);
        assert_eq!(chat["kind"], 3);
        assert_eq!(
            attr(chat, "gen_ai.operation.name"),
            json!({"stringValue": "chat"})
        );
        assert_eq!(
            attr(chat, "gen_ai.provider.name"),
            json!({"stringValue": "openai"})
        );
        assert_eq!(
            attr(chat, "gen_ai.request.model"),
            json!({"stringValue": "m"})
        );
        assert_eq!(
            attr(chat, "gen_ai.response.model"),
            json!({"stringValue": "m"})
        );
        assert_eq!(
            attr(chat, "gen_ai.usage.input_tokens"),
            json!({"intValue": "3"})
        );
        assert_eq!(
            attr(chat, "gen_ai.usage.output_tokens"),
            json!({"intValue": "2"})
        );
        assert_eq!(
            attr(chat, "gen_ai.response.finish_reasons"),
            json!({"arrayValue": {"values": [{"stringValue": "stop"}]}})
        );
        assert_eq!(
            attr(chat, "gen_ai.input.messages"),
            Json::Null,
            "no contents"
        );
    }
    let [go] = named(&spans, "task go")[..] else {
        panic!("{spans:#?}")
    };
    let [tool] = named(&spans, "execute_tool publish")[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(tool["parentSpanId"], go["spanId"]);
    assert_eq!(
        attr(tool, "gen_ai.tool.name"),
        json!({"stringValue": "publish"})
    );
    assert_eq!(
        attr(tool, "gen_ai.tool.call.id"),
        json!({"stringValue": "c1"})
    );
    // The past run exported again: the same spans, contents only when asked for.
    let id = latest_run(&dir);
    let (status, out, err) = run(
        &dir,
        &fake.base,
        &["log", &id, "--otlp", &receiver.base, "--otlp-content"],
    );
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.starts_with(&format!("exported {} spans of run {id}", spans.len())),
        "{out}"
    );
    let again = receiver.spans();
    let ids = |spans: &[Json]| {
        spans
            .iter()
            .map(|s| s["spanId"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&again), ids(&spans));
    let chat = named(&again, "chat m").into_iter().find(under_ask).unwrap();
    assert!(attr(chat, "gen_ai.input.messages")["stringValue"]
        .as_str()
        .unwrap()
        .contains("one"));
    assert_eq!(
        attr(chat, "gen_ai.output.messages"),
        json!({"stringValue": "A:one"})
    );
}

#[test]
fn an_export_that_fails_is_one_warning_and_the_run_succeeds() {
    let (_keep, dir) = script_dir(TRACED);
    let fake = Fake::start(None);
    let mut command = tasklisp(&dir, &fake.base, &["run", "s.sexp"]);
    command.env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
    let (status, out, err) = finish(command.spawn().unwrap());
    assert_eq!(
        (status, out.as_str()),
        (Some(0), "A:oneA:two\ndone\n"),
        "{err}"
    );
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("not exported")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
}

#[test]
fn a_key_among_the_arguments_is_kept_out_of_the_stored_command_line() {
    let (_keep, dir) = script_dir(SEQUENTIAL);
    let fake = Fake::start(None);
    // The provider's key (OPENAI_API_KEY) given as the script's argument.
    let (status, _, err) = run(&dir, &fake.base, &["run", "s.sexp", "sk-test"]);
    assert_eq!(status, Some(0), "{err}");
    let argv: String = db(&dir)
        .query_row("SELECT argv FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(!argv.contains("sk-test"), "{argv}");
    assert!(argv.contains("[REDACTED]"), "{argv}");
}
