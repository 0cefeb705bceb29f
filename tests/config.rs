//! The configuration file: its settings under the flags and the environment, what
//! `tasklisp config` shows of them, and errors that name the file, line and key.

use std::path::Path;

#[path = "common/binary.rs"]
mod binary;
use binary::run_binary;

/// A directory whose `tasklisp/config.toml` holds `text`, as `XDG_CONFIG_HOME`.
fn config_home(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("tasklisp")).expect("mkdir");
    std::fs::write(dir.path().join("tasklisp/config.toml"), text).expect("write");
    dir
}

fn settings(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let home = dir.to_str().expect("utf-8");
    let mut env = env.to_vec();
    env.push(("XDG_CONFIG_HOME", home));
    let mut all = args.to_vec();
    all.extend(["--json", "config"]);
    let run = run_binary(dir, &all, &env);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).expect("json");
    rows.into_iter()
        .map(|r| (r["setting"].as_str().unwrap_or("").to_owned(), r))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

const CONFIG: &str = r#"
provider = "echo"
model = "from-file"

[options]
temperature = 0.5

[providers.anthropic]
model = "claude-from-file"
api_key_env = "MY_KEY"

[mcp.files]
command = ["mcp-files"]
"#;

#[test]
fn flags_win_over_the_environment_which_wins_over_the_file() {
    let dir = config_home(CONFIG);
    let s = settings(dir.path(), &[], &[]);
    assert_eq!(s["provider"]["value"], "echo");
    assert_eq!(s["provider"]["source"], "config file");
    assert_eq!(s["model"]["value"], "from-file");
    assert_eq!(s["options.temperature"]["value"], "0.5");
    assert_eq!(s["mcp.files"]["source"], "config file");

    let env = [
        ("TASKLISP_MODEL", "from-env"),
        ("OPENAI_API_KEY", "sk-secret"),
    ];
    let s = settings(dir.path(), &[], &env);
    assert_eq!(s["model"]["value"], "from-env");
    assert_eq!(s["model"]["source"], "environment TASKLISP_MODEL");
    // Keys are shown as set or unset, never their values.
    assert_eq!(s["OPENAI_API_KEY"]["value"], "set");
    assert!(!s.to_string().contains("sk-secret"));

    let s = settings(
        dir.path(),
        &["-m", "from-flag", "-o", "temperature", "1"],
        &env,
    );
    assert_eq!(s["model"]["value"], "from-flag");
    assert_eq!(s["model"]["source"], "flag --model");
    assert_eq!(s["options.temperature"]["value"], "1");
    assert_eq!(s["options.temperature"]["source"], "flag -o");
}

#[test]
fn another_provider_takes_its_own_default_model_from_the_file() {
    let dir = config_home(CONFIG);
    let s = settings(dir.path(), &["--provider", "anthropic"], &[]);
    assert_eq!(s["model"]["value"], "claude-from-file");
    assert_eq!(s["model"]["source"], "config file [providers.anthropic]");
    assert_eq!(s["MY_KEY"]["value"], "unset");
}

#[test]
fn the_files_provider_answers_a_run() {
    let dir = config_home("provider = \"echo\"\n");
    let home = dir.path().to_str().expect("utf-8");
    let run = run_binary(
        dir.path(),
        &[
            "eval",
            "(deftask t () :prompt \"hi there\") (get (t) \"content\")",
        ],
        &[("XDG_CONFIG_HOME", home)],
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("hi there"), "{}", run.stdout);
}

#[test]
fn a_file_that_does_not_parse_names_the_file_line_and_key() {
    for (text, line, words) in [
        (
            "provider = \"echo\"\nmodel = \n",
            2,
            "string values must be quoted",
        ),
        (
            "[providers.openai]\nmodel = 5\n",
            2,
            "`providers.openai.model`: expected a string",
        ),
        ("\n\nmodle = \"x\"\n", 3, "`modle`: unknown key"),
        (
            "[options]\ntemprature = 1\n",
            2,
            "`options.temprature`: unknown model option",
        ),
        (
            "provider = \"nope\"\n",
            1,
            "`provider`: unknown provider nope",
        ),
    ] {
        let dir = config_home(text);
        let home = dir.path().to_str().expect("utf-8");
        let run = run_binary(dir.path(), &["eval", "1"], &[("XDG_CONFIG_HOME", home)]);
        assert_eq!(run.status, Some(2), "{text}: {}", run.stderr);
        let want = format!("tasklisp/config.toml line {line}: ");
        assert!(run.stderr.contains(&want), "{text}: {}", run.stderr);
        assert!(run.stderr.contains(words), "{text}: {}", run.stderr);
    }
}

#[test]
fn no_file_is_no_configuration() {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = settings(dir.path(), &[], &[]);
    assert_eq!(s["provider"]["value"], "-");
    assert!(s["config file"]["value"]
        .as_str()
        .unwrap_or("")
        .ends_with("(none)"));
}

#[test]
fn mcp_connect_reaches_a_server_the_file_names() {
    // `cat` echoes the handshake back: reached through the file's command, it is found
    // out as no MCP server. A name the file does not hold says where names come from.
    let dir = config_home("[mcp.echoer]\ncommand = [\"cat\"]\ntimeout = 20\n");
    let home = dir.path().to_str().expect("utf-8");
    let env = [("XDG_CONFIG_HOME", home), ("TASKLISP_LOG", "off")];
    let run = run_binary(dir.path(), &["eval", "(mcp-connect \"echoer\")"], &env);
    assert_eq!(run.status, Some(1), "{}", run.stdout);
    assert!(run.stderr.contains("echoed"), "{}", run.stderr);
    let run = run_binary(dir.path(), &["eval", "(mcp-connect \"nope\")"], &env);
    assert_eq!(run.status, Some(1), "{}", run.stdout);
    assert!(
        run.stderr.contains("[mcp.NAME]") && run.stderr.contains("\"nope\""),
        "{}",
        run.stderr
    );
}

#[test]
fn a_base_url_is_shown_without_its_credentials() {
    let dir = config_home("");
    let env = [("OPENAI_BASE_URL", "http://u:PASSWD789@127.0.0.1:2/v1")];
    let s = settings(dir.path(), &["--provider", "openai"], &env);
    let shown = s["base_url"]["value"].as_str().unwrap_or("");
    assert!(!shown.contains("PASSWD789"), "{shown}");
    assert!(shown.contains("127.0.0.1:2/v1"), "{shown}");
}
