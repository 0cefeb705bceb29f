//! `tasklisp lsp` driven by a JSON-RPC client over the binary's stdin and stdout:
//! diagnostics as the text changes, hover, completion, definition, symbols,
//! formatting, and a server that survives malformed messages, unknown methods, text
//! that does not parse, a 10 MB file, and macros that would write files or never end.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: i64,
}

impl Client {
    fn start(dir: &std::path::Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tasklisp"))
            .arg("lsp")
            .current_dir(dir)
            .env_clear()
            .env("HOME", dir)
            .env("TASKLISP_LOG", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tasklisp lsp starts");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = Client {
            child,
            input,
            output,
            next_id: 0,
        };
        let init = client.request("initialize", json!({"capabilities": {}}));
        assert_eq!(init["result"]["capabilities"]["hoverProvider"], true);
        client.notify("initialized", json!({}));
        client
    }

    fn send_raw(&mut self, body: &[u8]) {
        write!(self.input, "Content-Length: {}\r\n\r\n", body.len()).expect("write");
        self.input.write_all(body).expect("write");
        self.input.flush().expect("flush");
    }

    fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its response (notifications before it are dropped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return message;
            }
        }
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).expect("read") > 0,
                "server ended"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).expect("body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.receive();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "tasklisp", "version": 1, "text": text}}),
        );
        self.diagnostics(uri)
    }

    fn change(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}),
        );
        self.diagnostics(uri)
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    fn finish(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null);
        self.notify("exit", Value::Null);
        assert_eq!(self.child.wait().expect("exits").code(), Some(0));
    }
}

fn uri_in(dir: &std::path::Path, name: &str) -> String {
    format!("file://{}", dir.join(name).display())
}

#[test]
fn diagnostics_follow_the_text_as_it_changes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut client = Client::start(dir.path());
    let uri = uri_in(dir.path(), "main.sexp");
    let d = client.open(&uri, "(define x 1)\n(prn (+ x 1)\n");
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["message"].as_str().unwrap_or("").contains("unclosed"));
    assert_eq!(d[0]["range"]["start"], json!({"line": 1, "character": 0}));
    let d = client.change(&uri, "(define x 1)\n(prn (+ x 1))\n");
    assert_eq!(d, Vec::<Value>::new());
    // What `check` reports: an unbound name (an error at the top level), and a warning
    // in a procedure's body.
    let d = client.change(&uri, "(prn (+ y 1))\n(define (f) (car 1 2))\n");
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(
        d[0]["message"].as_str().unwrap_or("").contains("y"),
        "{d:?}"
    );
    assert_eq!(d[0]["severity"], 1);
    assert_eq!(d[0]["range"]["start"], json!({"line": 0, "character": 8}));
    assert_eq!(d[1]["severity"], 2);
    client.finish();
}

#[test]
fn hover_completion_definition_symbols_and_formatting() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("lib.xml"),
        "<tasks>\n  <task name=\"shout\">\n    <input name=\"text\"/>\n    <instructions>{{text}}</instructions>\n  </task>\n</tasks>\n",
    )
    .expect("write");
    let mut client = Client::start(dir.path());
    let uri = uri_in(dir.path(), "main.sexp");
    let text = "(import \"lib.xml\")\n(define (twice x)\n(* 2 x))\n(prn (twice (length \"ab\")))\n";
    client.open(&uri, text);

    let hover = client.at("textDocument/hover", &uri, 3, 14);
    let shown = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("length"), "{hover}");
    let hover = client.at("textDocument/hover", &uri, 3, 6);
    let shown = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("procedure (define (twice x)"), "{hover}");
    let hover = client.at("textDocument/hover", &uri, 1, 2);
    let shown = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("special form define"), "{hover}");

    let completion = client.at("textDocument/completion", &uri, 3, 1);
    let labels: Vec<&str> = completion["result"]["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|i| i["label"].as_str()).collect())
        .unwrap_or_default();
    for name in ["define", "map", "twice", "deftask"] {
        assert!(labels.contains(&name), "{name} in {labels:?}");
    }

    let definition = client.at("textDocument/definition", &uri, 3, 7);
    assert_eq!(definition["result"]["uri"], uri.as_str());
    assert_eq!(definition["result"]["range"]["start"]["line"], 1);
    let definition = client.at("textDocument/definition", &uri, 0, 10);
    assert_eq!(definition["result"]["uri"], uri_in(dir.path(), "lib.xml"));

    let symbols = client.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(symbols["result"][0]["name"], "twice", "{symbols}");

    let edits = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(
        edits["result"][0]["newText"],
        "(import \"lib.xml\")\n(define (twice x)\n  (* 2 x))\n(prn (twice (length \"ab\")))\n"
    );
    client.finish();
}

/// Kills the server if the test has not finished with it within `bound` (a hang guard:
/// reading from a killed server fails the test instead of waiting for ever).
fn hang_guard(client: &Client, bound: std::time::Duration) -> std::sync::mpsc::Sender<()> {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let pid = client.child.id().to_string();
    std::thread::spawn(move || {
        if finished.recv_timeout(bound).is_err() {
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    done
}

#[test]
fn opening_a_file_runs_no_macro_with_rights_and_no_macro_for_ever() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut client = Client::start(dir.path());
    let guard = hang_guard(&client, std::time::Duration::from_secs(120));
    let uri = uri_in(dir.path(), "main.sexp");
    let d = client.open(
        &uri,
        "(defmacro w () (write-file \"written.txt\" \"x\") 1)\n(prn (w))\n",
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(!dir.path().join("written.txt").exists());
    let d = client.change(
        &uri,
        "(defmacro spin () (define (f n) (f (+ n 1))) (f 0))\n(prn (spin))\n(car 1 2)\n",
    );
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0]["range"]["start"], json!({"line": 1, "character": 5}));
    let d = client.change(&uri, "(defmacro nap () (sleep 100000))\n(nap)\n");
    assert!(
        d[0]["message"].as_str().unwrap_or("").contains("2s"),
        "{d:?}"
    );
    client.finish();
    drop(guard);
}

#[test]
fn the_server_survives_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut client = Client::start(dir.path());
    // Not JSON: a parse error, and the server reads on.
    client.send_raw(b"{not json");
    let reply = client.receive();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    // A header that is not UTF-8: a parse error too.
    client
        .input
        .write_all(b"Content-Length: 2\r\nX: \xff\r\n\r\n{}")
        .expect("write");
    let reply = client.receive();
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    // An unknown method: method not found; an unknown notification: nothing.
    client.notify("workspace/somethingNew", json!({}));
    let reply = client.request("workspace/unknownRequest", json!({}));
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    // Requests about documents never opened, or with nonsense positions.
    let uri = uri_in(dir.path(), "x.sexp");
    let reply = client.at("textDocument/hover", &uri, 0, 0);
    assert_eq!(reply["result"], Value::Null);
    client.open(&uri, "(a b");
    let reply = client.at("textDocument/hover", &uri, 99, 99);
    assert!(reply.get("result").is_some(), "{reply}");
    let reply = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(
        reply["result"],
        Value::Null,
        "text that does not read is not formatted"
    );
    // A 10 MB file: diagnostics arrive (a hang guard far above the time it takes).
    let big = "(define (f x) (+ x 1))\n".repeat(10 * 1024 * 1024 / 23);
    let big_uri = uri_in(dir.path(), "big.sexp");
    let d = client.open(&big_uri, &big);
    assert!(d.len() < 10, "{}", d.len());
    let d = client.change(&big_uri, &format!("{big}(")); // and when it stops parsing
    assert_eq!(d.len(), 1);
    client.finish();
}

/// Neovim as the client, when it is installed (CI installs it: `.ci/run` runs the same
/// script).
#[test]
fn neovim_shows_the_diagnostics() {
    let found = Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    if !found.is_ok_and(|s| s.success()) {
        eprintln!("nvim is not installed: skipped (tests/editors/nvim-lsp installs it)");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/editors/nvim-lsp");
    let output = Command::new(script)
        .arg(env!("CARGO_BIN_EXE_tasklisp"))
        .stdin(Stdio::null())
        .output()
        .expect("the script runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("unbound symbol: greting"), "{stdout}");
}
