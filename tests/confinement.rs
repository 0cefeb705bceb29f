//! Programs started under `--sandbox` are confined by the kernel (Landlock) to what the
//! flags grant: real children reading, writing and connecting, through script tasks,
//! the `command` provider and a stdio MCP server. This machine's kernel has Landlock;
//! its absence is pretended with the `TASKLISP_TEST_NO_LANDLOCK` test hook.

use serde_json::Value as Json;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

#[path = "common/binary.rs"]
mod binary;
use binary::{run_binary, Run};

/// A directory laid out for a sandboxed run: `allowed/file` (readable), `out/`
/// (writable), and `secret` beside them, which neither flag reaches.
struct Layout {
    root: tempfile::TempDir,
}

impl Layout {
    fn new() -> Layout {
        let root = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(root.path().join("allowed")).expect("allowed/ is made");
        std::fs::create_dir(root.path().join("out")).expect("out/ is made");
        std::fs::write(root.path().join("allowed/file"), "readable\n").expect("written");
        std::fs::write(root.path().join("secret"), "the secret\n").expect("written");
        Layout { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn dir(&self) -> &Path {
        self.root.path()
    }

    /// Runs `program` with `flags` before `run`, the test hook's variables in `env`.
    fn run(&self, flags: &[&str], env: &[(&str, &str)], program: &str) -> Run {
        std::fs::write(self.path("program.sexp"), program).expect("the program is written");
        let mut args = flags.to_vec();
        args.extend(["run", "program.sexp"]);
        run_binary(self.dir(), &args, env)
    }

    /// Runs `program` under `--sandbox` reading `allowed/` and writing `out/`, with
    /// `more` flags.
    fn sandboxed(&self, more: &[&str], program: &str) -> Run {
        let read = format!("--allow-read={}", self.path("allowed").display());
        let write = format!("--allow-write={}", self.path("out").display());
        let mut flags = vec!["--sandbox", read.as_str(), write.as_str()];
        flags.extend(more);
        self.run(&flags, &[], program)
    }
}

/// `words` as a Lisp vector of strings.
fn vector(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| Json::from(*w).to_string()).collect();
    format!("[{}]", quoted.join(" "))
}

/// A script task `name` running `argv`, its result or error printed as JSON.
fn script_outcome(name: &str, argv: &[&str]) -> String {
    format!(
        "(deftask {name} () :command {})\n\
         (println (json-stringify (try ({name}) (catch e e))))\n",
        vector(argv)
    )
}

/// A script task running `sh -c SCRIPT`, its result or error printed as JSON.
fn shell_outcome(script: &str) -> String {
    script_outcome("t", &["sh", "-c", script])
}

/// The JSON lines a run printed.
fn printed(run: &Run) -> Vec<Json> {
    assert_eq!(run.status, Some(0), "stderr: {}", run.stderr);
    run.stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// The one JSON line a run printed.
fn outcome(run: &Run) -> Json {
    let mut lines = printed(run);
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    lines.remove(0)
}

/// The real file of `python3` and the directory it lives under (`sys.prefix`), so a
/// Python installed outside the system's directories can be allowed.
fn python() -> (String, String) {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable); print(sys.prefix)"])
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().map(str::to_owned);
    let executable = lines.next().expect("python3 names its executable");
    (executable, lines.next().expect("python3 names its prefix"))
}

#[test]
fn a_program_reads_the_allowed_directory_and_not_beside_it() {
    let layout = Layout::new();
    let file = layout.path("allowed/file");
    let secret = layout.path("secret");
    let program = script_outcome("allowed", &["cat", &file.to_string_lossy()])
        + &script_outcome("beside", &["cat", &secret.to_string_lossy()]);
    let run = layout.sandboxed(&["--allow-exec=cat"], &program);
    let lines = printed(&run);
    assert_eq!(lines[0]["content"], "readable\n", "{}", lines[0]);
    let refused = &lines[1];
    assert_eq!(refused["reason"], "tool_execution_error", "{refused}");
    assert_eq!(refused["details"]["script_exit_code"], 1, "{refused}");
    let stderr = refused["details"]["script_stderr"].as_str().unwrap_or("");
    assert!(stderr.contains("Permission denied"), "{refused}");
    assert!(!refused.to_string().contains("the secret"), "{refused}");
}

#[test]
fn without_the_sandbox_nothing_is_confined() {
    let layout = Layout::new();
    let secret = layout.path("secret");
    let program = script_outcome("t", &["cat", &secret.to_string_lossy()]);
    let run = layout.run(&[], &[], &program);
    assert_eq!(outcome(&run)["content"], "the secret\n");
}

#[test]
fn a_shell_writes_the_allowed_directory_and_its_own_temporary_one_only() {
    let layout = Layout::new();
    let script = format!(
        "echo kept > {out}/made && echo temp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo \"$TMPDIR\"; \
         echo lost > {beside} || echo refused",
        out = layout.path("out").display(),
        beside = layout.path("beside").display(),
    );
    let run = layout.sandboxed(&["--allow-exec=sh"], &shell_outcome(&script));
    let result = outcome(&run);
    let stdout = result["content"].as_str().unwrap_or("");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"temp"), "{result}");
    assert_eq!(lines.last(), Some(&"refused"), "{result}");
    let stderr = result["notes"]["stderr"].as_str().unwrap_or("");
    assert!(stderr.contains("Permission denied"), "{result}");
    let made = std::fs::read_to_string(layout.path("out/made")).expect("out/made is written");
    assert_eq!(made, "kept\n");
    assert!(!layout.path("beside").exists());
    let private = lines.get(1).map(PathBuf::from).expect("TMPDIR is printed");
    assert!(private.is_absolute(), "{result}");
    assert!(
        !private.exists(),
        "the private directory is removed after the run"
    );
}

#[test]
fn tcp_connects_only_to_the_ports_of_allow_net() {
    let allowed = TcpListener::bind("127.0.0.1:0").expect("a port");
    let other = TcpListener::bind("127.0.0.1:0").expect("another port");
    let port = |l: &TcpListener| l.local_addr().expect("an address").port();
    let (python, prefix) = python();
    let code = format!(
        "import socket\n\
         for port in ({}, {}):\n\
         \x20   try:\n\
         \x20       socket.create_connection(('127.0.0.1', port), timeout=60).close()\n\
         \x20       print(port, 'connected')\n\
         \x20   except OSError as e:\n\
         \x20       print(port, 'refused', e.errno)\n",
        port(&allowed),
        port(&other)
    );
    let layout = Layout::new();
    let exec = format!("--allow-exec={python}");
    let read = format!("--allow-read={prefix}");
    let net = format!("--allow-net=127.0.0.1:{}", port(&allowed));
    let run = layout.sandboxed(
        &[&exec, &read, &net],
        &script_outcome("t", &[&python, "-c", &code]),
    );
    let result = outcome(&run);
    let expected = format!(
        "{} connected\n{} refused {}\n",
        port(&allowed),
        port(&other),
        libc::EACCES
    );
    assert_eq!(result["content"], expected.as_str(), "{result}");
}

#[test]
fn the_command_provider_is_confined_too() {
    let layout = Layout::new();
    let command = format!("cat {}", layout.path("secret").display());
    let program = "(deftask ask () :prompt \"hi\")\n\
                   (println (json-stringify (try (ask) (catch e e))))";
    std::fs::write(layout.path("program.sexp"), program).expect("written");
    let run = run_binary(
        layout.dir(),
        &["--sandbox", "--provider", "command", "run", "program.sexp"],
        &[("TASKLISP_PROVIDER_COMMAND", command.as_str())],
    );
    let error = outcome(&run);
    assert!(
        error["details"]["stderr"]
            .as_str()
            .is_some_and(|s| s.contains("Permission denied")),
        "{error}"
    );
    assert!(!error.to_string().contains("the secret"), "{error}");
}

#[test]
fn a_stdio_mcp_server_is_confined() {
    let layout = Layout::new();
    // A server that answers `initialize` naming itself after what reading the secret
    // gave it.
    let server = format!(
        "read -r line; info=$(cat {} 2>&1 | tr -d '\"\\n'); \
         printf '%s\\n' \"{{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{{\\\"protocolVersion\\\":\\\"2025-11-25\\\",\\\"capabilities\\\":{{}},\\\"serverInfo\\\":{{\\\"name\\\":\\\"$info\\\",\\\"version\\\":\\\"0\\\"}}}}}}\"; \
         cat >/dev/null",
        layout.path("secret").display()
    );
    let program = format!(
        "(define c (mcp-connect \"s\" :command {}))\n\
         (println (json-stringify c.server))\n(mcp-close c)",
        vector(&["sh", "-c", &server])
    );
    let confined = outcome(&layout.sandboxed(&["--allow-exec=sh"], &program));
    let name = confined["name"].as_str().unwrap_or("");
    assert!(name.contains("Permission denied"), "{confined}");
    let free = outcome(&layout.run(&[], &[], &program));
    assert_eq!(free["name"], "the secret", "{free}");
}

#[test]
fn a_kernel_without_landlock_is_named_once_and_the_programs_run() {
    let layout = Layout::new();
    let secret = layout.path("secret").to_string_lossy().into_owned();
    let program =
        script_outcome("one", &["cat", &secret]) + &script_outcome("two", &["cat", &secret]);
    let run = layout.run(
        &["--sandbox", "--allow-exec=cat"],
        &[("TASKLISP_TEST_NO_LANDLOCK", "1")],
        &program,
    );
    for line in printed(&run) {
        assert_eq!(line["content"], "the secret\n", "{line}");
    }
    let named: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("Landlock"))
        .collect();
    assert_eq!(named.len(), 1, "{}", run.stderr);
    assert!(named[0].contains("not confined"), "{}", run.stderr);
}

#[test]
fn required_confinement_that_cannot_be_had_fails_before_the_program_starts() {
    let layout = Layout::new();
    let marker = layout.path("out/started");
    let program = shell_outcome(&format!("touch {}", marker.display()));
    let run = layout.run(
        &[
            "--sandbox",
            "--allow-exec=sh",
            &format!("--allow-write={}", layout.path("out").display()),
            "--require-confinement",
        ],
        &[("TASKLISP_TEST_NO_LANDLOCK", "1")],
        &program,
    );
    let error = outcome(&run);
    assert_eq!(error["type"], "TASK_FAILURE", "{error}");
    assert_eq!(error["reason"], "tool_execution_error", "{error}");
    let message = error["message"].as_str().unwrap_or("");
    assert!(message.starts_with("confinement unavailable: "), "{error}");
    assert!(!marker.exists(), "the program never started");
    assert!(!run.stderr.contains("not confined"), "{}", run.stderr);
}

#[test]
fn require_confinement_needs_the_sandbox() {
    let layout = Layout::new();
    let run = layout.run(&["--require-confinement"], &[], "(println 1)");
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--sandbox"), "{}", run.stderr);
}

#[test]
fn config_shows_the_landlock_abi_found() {
    let layout = Layout::new();
    let found = run_binary(layout.dir(), &["config"], &[]);
    let line = found
        .stdout
        .lines()
        .find(|l| l.starts_with("landlock"))
        .unwrap_or_default()
        .to_owned();
    assert!(line.contains("ABI "), "{}", found.stdout);
    let pretended = run_binary(
        layout.dir(),
        &["config"],
        &[("TASKLISP_TEST_NO_LANDLOCK", "1")],
    );
    assert!(
        pretended
            .stdout
            .contains("unavailable (pretended by TASKLISP_TEST_NO_LANDLOCK)"),
        "{}",
        pretended.stdout
    );
}

#[test]
fn a_shebang_read_otherwise_than_the_kernel_reads_it_grants_nothing() {
    // The kernel runs `L\r` (a link to `sh`); a reader that cut the line at `\r` would
    // grant `L`, a link to `/`, and with it the whole file system.
    let layout = Layout::new();
    let out = layout.path("out");
    std::os::unix::fs::symlink("/", out.join("L")).expect("L -> /");
    let sh = std::fs::canonicalize("/bin/sh").expect("sh exists");
    std::os::unix::fs::symlink(&sh, out.join("L\r")).expect("L\\r -> sh");
    let script = out.join("S");
    let body = format!(
        "#!{}\r\ncat {}\n",
        out.join("L").display(),
        layout.path("secret").display()
    );
    std::fs::write(&script, body).expect("S is written");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&script, mode).expect("S is executable");
    let program = script_outcome("s", &[&script.to_string_lossy()]);
    let read = format!("--allow-read={}", out.display());
    let run = layout.sandboxed(&["--allow-exec", &read], &program);
    let result = outcome(&run);
    assert!(!result.to_string().contains("the secret"), "{result}");
    let stderr = result["details"]["script_stderr"].as_str().unwrap_or("");
    assert!(stderr.contains("Permission denied"), "{result}");
}

#[test]
fn mptcp_cannot_connect_past_the_port_filter() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let (python, prefix) = python();
    let code = format!(
        "import socket\n\
         try:\n\
         \x20   s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)\n\
         \x20   s.settimeout(60)\n\
         \x20   s.connect(('127.0.0.1', {port}))\n\
         \x20   print('connected')\n\
         except OSError as e:\n\
         \x20   print('refused', e.errno)\n"
    );
    let layout = Layout::new();
    let exec = format!("--allow-exec={python}");
    let read = format!("--allow-read={prefix}");
    let run = layout.sandboxed(
        &[&exec, &read, "--allow-net=127.0.0.1:1"],
        &script_outcome("t", &[&python, "-c", &code]),
    );
    let result = outcome(&run);
    let expected = format!("refused {}\n", libc::EPROTONOSUPPORT);
    assert_eq!(result["content"], expected.as_str(), "{result}");
}

#[test]
fn the_private_temporary_directory_is_the_programs_alone() {
    let layout = Layout::new();
    let run = layout.sandboxed(
        &["--allow-exec=sh"],
        &shell_outcome("stat -c %a \"$TMPDIR\""),
    );
    assert_eq!(outcome(&run)["content"], "700\n");
}

#[test]
fn a_sandboxed_program_inherits_no_keys_but_what_allow_env_names() {
    let layout = Layout::new();
    let program = "(deftask t () :command [\"sh\" \"-c\" \"echo ${OPENAI_API_KEY:-none} ${MY_TOKEN:-none} $GIVEN\"] :env {\"GIVEN\" \"given\"})\n\
                   (println (json-stringify (try (t) (catch e e))))\n";
    let keys = [("OPENAI_API_KEY", "sk-secret"), ("MY_TOKEN", "tok")];
    let run = |flags: &[&str]| {
        let read = format!("--allow-read={}", layout.path("allowed").display());
        let mut all = vec!["--sandbox", "--allow-exec=sh", read.as_str()];
        all.extend(flags);
        outcome(&layout.run(&all, &keys, program))["content"].clone()
    };
    assert_eq!(run(&[]), "none none given\n");
    assert_eq!(run(&["--allow-env=MY_TOKEN"]), "none tok given\n");
    let free = outcome(&layout.run(&[], &keys, program));
    assert_eq!(
        free["content"], "sk-secret tok given\n",
        "without the sandbox, all"
    );
}
