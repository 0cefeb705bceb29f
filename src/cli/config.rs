//! `tasklisp config`: the settings in effect and where each came from — a flag, the
//! environment, the configuration file or the default. Keys are shown only as set or
//! unset.

use super::{log::env_var, report, Options};
use clap::parser::ValueSource;
use clap::CommandFactory;
use serde_json::json;

/// One line of the report.
struct Row {
    setting: String,
    value: String,
    source: String,
}

fn row(setting: impl Into<String>, value: impl Into<String>, source: impl Into<String>) -> Row {
    Row {
        setting: setting.into(),
        value: value.into(),
        source: source.into(),
    }
}

/// Runs `tasklisp config`; returns the exit status.
pub fn run(options: &Options) -> i32 {
    let settings = match options.provider_settings() {
        Ok(settings) => settings,
        Err(e) => return report(options, &e),
    };
    let config = &options.config;
    let matches = Options::command()
        .try_get_matches_from(std::env::args_os())
        .ok();
    // Where clap took a flag's value from: the command line or its variable.
    let given = |id: &str, var: &str| match matches.as_ref().and_then(|m| m.value_source(id)) {
        Some(ValueSource::CommandLine) => Some(format!("flag --{}", id.replace('_', "-"))),
        Some(ValueSource::EnvVariable) => Some(format!("environment {var}")),
        _ => None,
    };
    let file = || "config file".to_owned();
    let kind = settings.provider.clone().unwrap_or_default();
    let entry = config.providers.get(&kind).cloned().unwrap_or_default();
    let mut rows = vec![row(
        "config file",
        config.file.as_ref().map_or_else(
            || {
                crate::config::location(&env_var)
                    .map_or("none".to_owned(), |p| format!("{} (none)", p.display()))
            },
            |p| p.display().to_string(),
        ),
        "",
    )];
    rows.push(match &settings.provider {
        Some(p) => row(
            "provider",
            p,
            given("provider", "TASKLISP_PROVIDER").unwrap_or_else(file),
        ),
        None => row("provider", "-", "default: chosen by the API keys set"),
    });
    let model_source = given("model", "TASKLISP_MODEL").or_else(|| {
        let from_top = settings.model.is_some() && settings.model == config.model;
        settings.model.as_ref().map(|_| {
            if from_top {
                file()
            } else {
                format!("config file [providers.{kind}]")
            }
        })
    });
    rows.push(match &settings.model {
        Some(m) => row("model", m, model_source.unwrap_or_else(file)),
        None => row("model", "-", "default: the provider's"),
    });
    let base_var = crate::config::base_url_var(&kind);
    rows.push(match (&settings.base_url, base_var.and_then(env_var)) {
        (Some(url), _) => row(
            "base_url",
            shown_url(url),
            given("base_url", "").unwrap_or_else(|| format!("config file [providers.{kind}]")),
        ),
        (None, Some(url)) => row(
            "base_url",
            shown_url(&url),
            format!("environment {}", base_var.unwrap_or("")),
        ),
        (None, None) => row("base_url", "-", "default: the provider's"),
    });
    rows.extend(option_and_key_rows(options, entry.api_key_env));
    print(options, &rows)
}

/// A URL as shown: its user name and password hidden, as keys are.
fn shown_url(url: &str) -> String {
    crate::secrets::Secrets::of_url(url).scrub(url)
}

/// The model options, the keys (set or unset), the kernel's Landlock and the MCP
/// servers.
fn option_and_key_rows(options: &Options, api_key_env: Option<String>) -> Vec<Row> {
    let config = &options.config;
    let file = || "config file".to_owned();
    let mut rows = Vec::new();
    let flagged: Vec<&String> = options.options.iter().step_by(2).collect();
    for (name, value) in config.options.iter().filter(|(n, _)| !flagged.contains(&n)) {
        rows.push(row(format!("options.{name}"), value.to_string(), file()));
    }
    for pair in options.options.chunks(2) {
        if let [name, value] = pair {
            rows.push(row(format!("options.{name}"), value.as_str(), "flag -o"));
        }
    }
    let mut keys = vec!["OPENAI_API_KEY".to_owned(), "ANTHROPIC_API_KEY".to_owned()];
    keys.extend(api_key_env);
    for key in keys {
        let state = if env_var(&key).is_some() {
            "set"
        } else {
            "unset"
        };
        rows.push(row(key, state, "environment"));
    }
    let landlock = crate::process::landlock().to_string();
    rows.push(row("landlock", landlock, "kernel"));
    for name in config.mcp.keys() {
        rows.push(row(format!("mcp.{name}"), "configured", file()));
    }
    rows
}

fn print(options: &Options, rows: &[Row]) -> i32 {
    if options.json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| json!({"setting": r.setting, "value": r.value, "source": r.source}))
            .collect();
        return super::print_stdout(options, &format!("{}\n", serde_json::Value::from(list)));
    }
    let width = rows.iter().map(|r| r.setting.len()).max().unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|r| r.value.chars().count())
        .max()
        .unwrap_or(0);
    let text: String = rows
        .iter()
        .map(|r| {
            let line = format!(
                "{:width$}  {:value_width$}  {}",
                r.setting, r.value, r.source
            );
            format!("{}\n", line.trim_end())
        })
        .collect();
    super::print_stdout(options, &text)
}
