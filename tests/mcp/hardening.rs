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
                    (mcp-close conn))")
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
    assert_eq!(lines[1], "ok", "the caller's connection still answers");
}

/// `:timeout` that no clock can hold (huge, negative, not a number, zero) is an error
/// naming the option, at the top level and inside `eval-sandboxed` under `--sandbox`.
#[test]
fn an_impossible_timeout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut source = String::new();
    for timeout in ["1e300", "1e19", "-1", "(/ 0.0 0.0)", "0", "9223372036854775807"] {
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
        assert!(message.contains("expected :timeout as positive seconds"), "{message}");
    }
}
