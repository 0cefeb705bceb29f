//! The MCP client and server against hostile code, servers and clients: no reaching the
//! caller's connections from a sandbox, no hangs, no floods, no panics.

use super::*;

/// A fake server whose first request (id 2) is answered `ok`.
const ANSWERS_OK: &str = r#"printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}'
read -r line"#;

/// Sandboxed code given the caller's connection (or writing its map) can neither call
/// its tools nor close it: it finds no such connection, and the caller's still works.
#[test]
fn sandboxed_code_cannot_use_or_close_the_callers_connection() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = fake_server(dir.path(), ANSWERS_OK);
    let source = format!(
        r#"(define c (mcp-connect "fake" :command ["sh" "{}"] :timeout 60))
(define forged {{"type" "mcp-connection" "name" "fake" "id" (get c "id")}})
(define plan "(list (try (mcp-call conn \"t\" {{}}) (catch e e.message))
                    (try (mcp-tools conn) (catch e e.message))
                    (mcp-close conn)
                    (try (mcp-connect \"own\" :command [\"sh\"]) (catch e e.reason)))")
(println (json-stringify (get (eval-sandboxed plan :env {{"conn" forged}}) "value")))
(println (json-stringify (get (mcp-call c "t" {{}}) "content")))
(mcp-close c)
"#,
        server.display()
    );
    let run = run_script(dir.path(), &[], &source);
    assert_eq!(run.status, Some(0));
    let lines = json_lines(&run);
    let refused = lines[0].as_array().expect("the plan's list");
    for message in &refused[..2] {
        let message = message.as_str().unwrap_or("");
        assert!(message.contains("no such connection"), "{message}");
    }
    assert_eq!(refused[3], "permission_denied", "connecting needs exec");
    assert_eq!(lines[1], "ok", "the caller's connection still answers");
}

/// `:timeout` that no clock can hold (huge, negative, not a number, zero) is an error
/// naming the option, at the top level and inside `eval-sandboxed` under `--sandbox`.
#[test]
fn an_impossible_timeout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut source = String::new();
    for timeout in [
        "1e300",
        "1e19",
        "-1",
        "(/ 0.0 0.0)",
        "0",
        "9223372036854775807",
    ] {
        let connect = format!(r#"(mcp-connect "x" :command ["true"] :timeout {timeout})"#);
        source.push_str(&format!(
            "(println (json-stringify (try {connect} (catch e e.message))))\n\
             (println (json-stringify (try (eval-sandboxed {:?}) (catch e e.message))))\n",
            connect
        ));
    }
    let run = run_script(dir.path(), &["--sandbox"], &source);
    assert_eq!(run.status, Some(0), "no panic");
    let lines = json_lines(&run);
    assert_eq!(lines.len(), 12);
    for line in lines {
        let message = line.as_str().unwrap_or("");
        assert!(
            message.contains("expected :timeout as positive seconds"),
            "{message}"
        );
    }
}

/// Runs `source` (with `SERVER` standing for a fake server doing `then`) and returns the
/// lines it printed as JSON.
fn with_fake(then: &str, source: &str) -> Vec<Json> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = fake_server(dir.path(), then);
    let source = source.replace("SERVER", &server.display().to_string());
    let run = run_script(dir.path(), &[], &source);
    assert_eq!(run.status, Some(0));
    json_lines(&run)
}

/// A server that stops reading: the first call is read but never answered; the second,
/// larger than any pipe holds, cannot be written. Each ends at the timeout.
#[test]
fn a_server_that_stops_reading_holds_a_write_only_until_the_timeout() {
    let lines = with_fake(
        "sleep 600",
        r#"(define c (mcp-connect "fake" :command ["sh" "SERVER"] :timeout 1))
(define big (string-join (map (fn (i) "0123456789") (range 100000)) ""))
(println (json-stringify (try (mcp-call c "t" {}) (catch e e))))
(println (json-stringify (try (mcp-call c "t" {"big" big}) (catch e e))))
(println (json-stringify (try (mcp-call c "t" {}) (catch e e))))
(mcp-close c)"#,
    );
    assert_fails_naming_the_server(&lines[0], "execution_timeout", "no answer to tools/call");
    assert_fails_naming_the_server(&lines[1], "execution_timeout", "the server stopped reading");
    assert_fails_naming_the_server(
        &lines[2],
        "tool_execution_error",
        "the connection is closed",
    );
}

/// A server that floods `ping`s while a call waits, reading nothing: a bounded number
/// are answered, and the call ends at its timeout.
#[test]
fn a_ping_flood_during_a_call_ends_at_the_timeout() {
    let lines = with_fake(
        r#"yes '{"jsonrpc":"2.0","id":"p","method":"ping"}' | head -n 200000
sleep 600"#,
        r#"(define c (mcp-connect "fake" :command ["sh" "SERVER"] :timeout 2))
(println (json-stringify (try (mcp-call c "t" {}) (catch e e))))
(mcp-close c)"#,
    );
    assert_fails_naming_the_server(&lines[0], "execution_timeout", "no answer to tools/call");
}

/// Notifications sent between two calls by the hundred thousand are dropped past the
/// inbox's bound; the next call still gets its answer.
#[test]
fn a_notification_flood_between_calls_is_bounded_and_the_next_call_answered() {
    let lines = with_fake(
        r#"printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"one"}]}}'
yes '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}' | head -n 200000
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"two"}]}}'
read -r line"#,
        r#"(define c (mcp-connect "fake" :command ["sh" "SERVER"] :timeout 60))
(println (json-stringify (get (mcp-call c "t" {}) "content")))
(sleep 2)
(println (json-stringify (get (mcp-call c "t" {}) "content")))
(mcp-close c)"#,
    );
    assert_eq!(lines, [Json::from("one"), Json::from("two")]);
}

/// A listing that pages on and on, 200 tools a page, stops at the item limit with an
/// error naming the server.
#[test]
fn a_listing_that_pages_for_ever_is_cut_at_the_limit() {
    let pages = r#"items=$(i=0; while [ $i -lt 199 ]; do printf '{"name":"t%d"},' $i; i=$((i+1)); done)
i=2
while :; do
  printf '{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s{"name":"last"}],"nextCursor":"c%d"}}\n' $i "$items" $i
  i=$((i+1))
  read -r line || exit 0
done"#;
    let lines = with_fake(
        pages,
        r#"(define c (mcp-connect "fake" :command ["sh" "SERVER"] :timeout 60))
(println (json-stringify (try (mcp-tools c) (catch e e))))
(mcp-close c)"#,
    );
    assert_fails_naming_the_server(
        &lines[0],
        "tool_execution_error",
        "tools/list went on past 10000 tools",
    );
}

/// Many idle connections (past the limit of 64): those past it are answered `503` at
/// once and the listener lives; once they go, a request is answered again.
#[test]
fn idle_connections_past_the_limit_are_refused_and_the_server_lives_on() {
    let (mut server, url) = serve_http();
    let idle: Vec<std::net::TcpStream> = (0..200).map(|_| connect(&url)).collect();
    // Each of the 200 is either held (no answer yet) or answered 503 and closed.
    let mut refused = 0;
    for mut stream in idle.iter().skip(64) {
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        assert!(response.starts_with("HTTP/1.1 503 "), "{response}");
        refused += 1;
    }
    assert_eq!(refused, 200 - 64);
    drop(idle);
    // The held connections are given back as the server sees them close.
    let answered = (0..400).find_map(|_| {
        let response = http_exchange(&url, &post(PING));
        if response.starts_with("HTTP/1.1 200 ") {
            return Some(response);
        }
        std::thread::sleep(Duration::from_millis(25));
        None
    });
    let _ = server.kill();
    let _ = server.wait();
    assert_pong(&answered.expect("a request is answered once the idle connections go"));
}

#[test]
fn two_different_content_lengths_are_refused() {
    let (mut server, url) = serve_http();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nContent-Length: 2\r\n\r\n{PING}",
        PING.len()
    );
    let refused = http_exchange(&url, &request);
    let same = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {0}\r\nContent-Length: {0}\r\n\r\n{PING}",
        PING.len()
    );
    let answered = http_exchange(&url, &same);
    let _ = server.kill();
    let _ = server.wait();
    assert!(refused.starts_with("HTTP/1.1 400 "), "{refused}");
    assert!(
        refused.contains("two different Content-Length"),
        "{refused}"
    );
    assert_pong(&answered);
}

/// Served code that reads its standard input finds it at its end, over stdio as in a
/// library's top level: the protocol's messages are not its to read, and each is still
/// answered.
#[test]
fn served_code_reading_stdin_gets_end_of_input_not_the_protocol() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let library = dir.path().join("library.sexp");
    let tasks = r#"(define at-load (read-line))
(deftask ask () :description "Reads a line" {"read" (read-line) "atLoad" at-load})"#;
    std::fs::write(&library, tasks).expect("the library is written");
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        "",
    ]
    .join("\n");
    let run = serve_stdio(&library, &input);
    let answers = json_lines(&run);
    assert_eq!(answers.len(), 3, "every request answered");
    let read = &answers[1]["result"]["structuredContent"];
    assert_eq!(*read, serde_json::json!({"read": null, "atLoad": null}));
    assert_eq!(answers[2]["id"], 3);
}

/// A stdio server is given only the variables `:env` names and a documented few (PATH,
/// HOME, LANG, LC_*, TERM, TMPDIR, USER): no key of tasklisp's reaches it.
#[test]
fn a_stdio_server_gets_no_keys_from_the_environment() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // The server answers its first request with its environment, one name a line.
    let then = r#"names=$(env | cut -d= -f1 | sort | tr '\n' ' ')
printf '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$names"
read -r line"#;
    let server = fake_server(dir.path(), then);
    let source = format!(
        r#"(define c (mcp-connect "fake" :command ["sh" "{}"] :env {{"GIVEN" "yes"}}))
(println (json-stringify (get (mcp-call c "t" {{}}) "content")))
(mcp-close c)"#,
        server.display()
    );
    std::fs::write(dir.path().join("script.sexp"), source).expect("the script is written");
    let child = tasklisp()
        .current_dir(dir.path())
        .env("OPENAI_API_KEY", "sk-secret")
        .env("SOME_TOKEN", "t")
        .env("HOME", dir.path())
        .env("LC_TIME", "C")
        .arg("run")
        .arg(dir.path().join("script.sexp"))
        .spawn()
        .expect("tasklisp starts");
    let run = finish(child);
    assert_eq!(run.status, Some(0));
    let names = json_lines(&run)[0].as_str().unwrap_or("").to_owned();
    let mut names: Vec<&str> = names.split_whitespace().collect();
    // What `sh` sets itself.
    names.retain(|name| !["PWD", "SHLVL", "_", "OLDPWD"].contains(name));
    assert_eq!(names, ["GIVEN", "HOME", "LC_ALL", "LC_TIME", "PATH"]);
}

/// Ctrl-C while a request cannot be written (the server reads nothing after the
/// handshake, the request is larger than the pipe holds): the one Ctrl-C ends the wait.
#[test]
fn one_ctrl_c_stops_a_write_the_server_does_not_read() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = dir.path().join("deaf-server.sh");
    let script = r#"read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"deaf","version":"0"}}}'
sleep 600"#;
    std::fs::write(&server, script).expect("the server is written");
    let source = format!(
        r#"(define c (mcp-connect "deaf" :command ["sh" "{}"] :timeout 600))
(define big (string-join (map (fn (i) "0123456789") (range 100000)) ""))
(println "started")
(mcp-call c "t" {{"big" big}})"#,
        server.display()
    );
    std::fs::write(dir.path().join("script.sexp"), source).expect("the script is written");
    let mut child = tasklisp()
        .current_dir(dir.path())
        .arg("run")
        .arg(dir.path().join("script.sexp"))
        .spawn()
        .expect("tasklisp starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the program starts");
    assert_eq!(line, "started\n");
    // The write is under way (or about to be); the one Ctrl-C is seen either way.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill with a valid pid and signal has no memory effects.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    child.stdout = Some(stdout.into_inner());
    let run = finish(child);
    assert_eq!(run.status, Some(1), "the program stops at the interrupt");
    assert!(run.stderr.contains("execution_halted"), "{}", run.stderr);
}
