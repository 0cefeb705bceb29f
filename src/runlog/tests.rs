use super::*;

fn row(run: &str, seq: u64, parent: Option<u64>, kind: CallKind, answer: &str) -> CallRow {
    CallRow {
        run_id: run.to_owned(),
        seq,
        parent,
        kind,
        task: format!("t{seq}"),
        provider: Some("openai".into()),
        model: Some("gpt-4o".into()),
        options: None,
        messages: Some(serde_json::json!([{"role": "user", "content": "hi"}])),
        answer: Some(answer.to_owned()),
        tool_calls: None,
        input_tokens: Some(3),
        cached_input_tokens: None,
        cache_write_tokens: None,
        output_tokens: Some(4),
        latency_ms: Some(1.5),
        cost: Some(0.25),
        status: "ok".into(),
        error: None,
        cache_hit: false,
        cache_key: None,
        started_ms: now_ms(),
        finish_reason: Some("stop".into()),
        reasoning: None,
    }
}

#[test]
fn rows_written_by_one_run_are_read_back_as_runs_and_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let log = RunLog::new(path.clone(), RunRow::start("run", "demo.sexp"));
    log.record(row(
        log.run_id(),
        2,
        Some(1),
        CallKind::Model,
        "inner answer",
    ));
    log.record(row(log.run_id(), 1, None, CallKind::Task, "outer"));
    log.record(row(log.run_id(), 3, Some(1), CallKind::Model, "rejected"));
    assert_eq!(log.cached("key2"), None, "offered only once accepted");
    let answer = |content: &str| CachedAnswer {
        content: content.into(),
        input_tokens: Some(3),
        output_tokens: Some(4),
        finish_reason: Some("stop".into()),
    };
    log.accept(2, "key2".into(), answer("inner answer"));
    assert_eq!(
        log.cached("key2").map(|a| a.content),
        Some("inner answer".into())
    );
    log.finish("ok");

    let conn = query::open(&path).unwrap().unwrap();
    let runs = query::runs(&conn, 10).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["calls"], 2);
    assert_eq!(runs[0]["status"], "ok");
    assert_eq!(runs[0]["script"], "demo.sexp");
    let id = query::find_run(&conn, &log.run_id()[..4]).unwrap();
    let calls = query::calls(&conn, &id).unwrap();
    let tree = tree_text(&calls);
    assert!(tree.starts_with("#1 task t1"), "{tree}");
    assert!(
        tree.contains("\n  #2 model t2  openai/gpt-4o  3+4 tokens  $0.2500"),
        "{tree}"
    );

    let later = RunLog::new(path, RunRow::start("run", "again"));
    assert_eq!(later.cached("key2").map(|a| a.output_tokens), Some(Some(4)));
    assert_eq!(later.cached("key9"), None);
    assert_eq!(later.cached("key3"), None);
}

#[test]
fn a_run_that_records_nothing_creates_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    RunLog::new(path.clone(), RunRow::start("eval", "(+ 1 2)")).finish("ok");
    assert!(!path.exists());
    assert!(query::open(&path).unwrap().is_none());
}

#[test]
fn the_location_follows_the_environment() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert_eq!(
        location(&env(&[("TASKLISP_LOG", "off"), ("HOME", "/h")])),
        None
    );
    assert_eq!(
        location(&env(&[("TASKLISP_LOG", "/tmp/x.db")])),
        Some(PathBuf::from("/tmp/x.db"))
    );
    assert_eq!(
        location(&env(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])),
        Some(PathBuf::from("/s/tasklisp/log.db"))
    );
    assert_eq!(
        location(&env(&[("HOME", "/h")])),
        Some(PathBuf::from("/h/.local/state/tasklisp/log.db"))
    );
    assert_eq!(location(&env(&[])), None);
}

fn batch(log: &RunLog, job: &str, key: &str) -> BatchRow {
    BatchRow {
        run_id: log.run_id().to_owned(),
        job_id: job.to_owned(),
        key: key.to_owned(),
        provider: "openai".into(),
        requests: 2,
        resumed: false,
        submitted_ms: now_ms(),
    }
}

fn end(job: &str, key: &str, state: &str) -> BatchEnd {
    BatchEnd {
        key: key.to_owned(),
        job_id: job.to_owned(),
        state: state.to_owned(),
        provider_status: Some("completed".into()),
        done: Some(2),
        failed: Some(0),
        ended_ms: now_ms(),
    }
}

#[test]
fn a_batch_job_is_found_by_its_key_while_running_or_answered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let log = RunLog::new(path.clone(), RunRow::start("run", "batch.sexp"));
    log.record_batch(batch(&log, "job-1", "k1"));
    // Written before `record_batch` returned: a second connection sees it at once.
    let other = RunLog::new(path.clone(), RunRow::start("run", "again"));
    assert_eq!(other.batch_job("k1"), Some("job-1".into()));
    assert_eq!(other.batch_job("k2"), None);

    log.record_batch(batch(&log, "job-2", "k2"));
    log.record_batch(batch(&log, "job-3", "k3"));
    log.record_batch_end(end("job-1", "k1", "answered"));
    log.record_batch_end(end("job-2", "k2", "partial"));
    log.record_batch_end(end("job-3", "k3", "lost"));
    log.finish("ok");
    assert_eq!(other.batch_job("k1"), Some("job-1".into()));
    assert_eq!(other.batch_job("k2"), None);
    assert_eq!(other.batch_job("k3"), None);

    let conn = query::open(&path).unwrap().unwrap();
    let jobs = query::batches(&conn, log.run_id()).unwrap();
    assert_eq!(
        view::batch_lines(&jobs[..1]),
        "batch openai job-1  2 requests  answered (completed: 2 done, 0 failed)\n"
    );
    assert_eq!(query::runs(&conn, 10).unwrap().len(), 1);
}

#[test]
fn threads_recording_through_handles_share_one_run_and_its_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.db");
    let log = RunLog::new(path.clone(), RunRow::start("test", "tests"));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let handle = log.handle();
            std::thread::spawn(move || {
                let mine = handle.open();
                for _ in 0..50 {
                    let seq = mine.next_seq();
                    mine.record(row(mine.run_id(), seq, None, CallKind::Model, "a"));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    log.finish("ok");
    let conn = query::open(&path).unwrap().unwrap();
    let calls = query::calls(&conn, log.run_id()).unwrap();
    let seqs: Vec<i64> = calls.iter().filter_map(|c| c["seq"].as_i64()).collect();
    assert_eq!(seqs, (1..=100).collect::<Vec<_>>());
    assert_eq!(query::runs(&conn, 10).unwrap()[0]["status"], "ok");
}

fn tree_text(calls: &[serde_json::Value]) -> String {
    let mut out = Vec::new();
    view::write_call_tree(calls, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn linked(seq: i64, parent: Option<i64>) -> serde_json::Value {
    serde_json::json!({"seq": seq, "parent": parent, "kind": "task", "task": format!("t{seq}"), "status": "ok"})
}

#[test]
fn a_deep_chain_of_calls_is_indented_within_a_bound() {
    let calls: Vec<_> = (1..=300_000)
        .map(|seq| linked(seq, (seq > 1).then_some(seq - 1)))
        .collect();
    let tree = tree_text(&calls);
    assert_eq!(tree.lines().count(), 300_000);
    // Linear, not quadratic: each line is at most the cap of indentation plus its text.
    assert!(tree.len() < 300_000 * 120, "{}", tree.len());
    let last = tree.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "{}[depth 299999] #300000 task t300000",
            "  ".repeat(32)
        )),
        "{last}"
    );
}

#[test]
fn calls_whose_parents_form_a_cycle_are_shown_and_marked() {
    // 1 is a root; 2 → 3 → 4 → 2 is a cycle with 5 hanging from 3; 6 is its own parent.
    let calls = vec![
        linked(1, None),
        linked(2, Some(4)),
        linked(3, Some(2)),
        linked(4, Some(3)),
        linked(5, Some(3)),
        linked(6, Some(6)),
        linked(7, Some(99)),
    ];
    let tree = tree_text(&calls);
    assert_eq!(
        tree,
        "#1 task t1\n#7 task t7\n#2 task t2  (parent links form a cycle)\n  #3 task t3\n    #4 task t4\n    #5 task t5\n#6 task t6  (parent links form a cycle)\n"
    );
}

/// A `prompt` run whose one model call failed, its error quoting the answer.
fn failed_prompt_run(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let path = dir.join("log.db");
    let log = RunLog::new(path.clone(), RunRow::start("prompt", "the secret plan"));
    let mut call = row(log.run_id(), 1, None, CallKind::Model, "the secret answer");
    call.status = "error".into();
    call.error = Some(serde_json::json!({"type": "VALIDATION_ERROR",
        "reason": "output_format_failure",
        "message": "the answer is not JSON: the secret answer"}));
    log.record(call);
    let id = log.run_id().to_owned();
    log.finish("error");
    (path, id)
}

#[test]
fn without_content_no_prompt_or_answer_leaves_in_names_or_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = failed_prompt_run(dir.path());
    let conn = query::open(&path).unwrap().unwrap();
    let bare = otlp::traces(&conn, &id, false).unwrap().to_string();
    assert!(!bare.contains("secret"), "{bare}");
    assert!(
        bare.contains("VALIDATION_ERROR output_format_failure"),
        "{bare}"
    );
    let full = otlp::traces(&conn, &id, true).unwrap().to_string();
    assert!(full.contains("prompt the secret plan"), "{full}");
    assert!(
        full.contains("the answer is not JSON: the secret answer"),
        "{full}"
    );
}

/// A collector that redirects is not followed (the redirect's target never hears of
/// the run), and what is said of it hides the URL's password.
#[test]
fn an_export_follows_no_redirect_and_names_no_password() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = failed_prompt_run(dir.path());
    let conn = query::open(&path).unwrap().unwrap();
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    target.set_nonblocking(true).unwrap();
    let collector = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let location = format!("http://{}/v1/traces", target.local_addr().unwrap());
    let port = collector.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = collector.accept().unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Until the body's end: the request is one JSON object.
        while !seen.ends_with(b"}") {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0);
            seen.extend_from_slice(&buf[..n]);
        }
        // A redirect whose chunked body ends early: ureq panicked following it.
        let reply = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\n\
             Transfer-Encoding: chunked\r\n\r\n5\r\nab"
        );
        stream.write_all(reply.as_bytes()).unwrap();
    });
    let export = otlp::Export {
        endpoint: format!("http://user:hunter2@127.0.0.1:{port}"),
        content: false,
    };
    let failed = otlp::export(&conn, &id, &export).unwrap_err();
    server.join().unwrap();
    assert!(failed.contains("307"), "{failed}");
    assert!(!failed.contains("hunter2"), "{failed}");
    assert!(target.accept().is_err(), "the redirect was followed");
    let refused = otlp::Export {
        endpoint: "http://user:hunter2@127.0.0.1:1".into(),
        content: false,
    };
    let failed = otlp::export(&conn, &id, &refused).unwrap_err();
    assert!(!failed.contains("hunter2"), "{failed}");
}
