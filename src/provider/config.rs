//! Building providers from `--provider`/`--model`/`--base-url` and the environment, or
//! from `(set-provider! :openai {...})`. Both paths meet in `build`: options given
//! explicitly win over environment variables, which win over built-in defaults.

use super::cassette::Record;
use super::command::{CommandProvider, Input, Program};
use super::http::{Endpoint, HttpSettings};
use super::kinds::{self, ProviderKind};
use super::{ModelOptions, Provider, Unconfigured};
use crate::capabilities::{Access, Capabilities};
use crate::error::{Error, Result};
use serde_json::{Map, Value as Json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Reads an environment variable (unset and empty are the same); tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

const DEFAULT_CASSETTE: &str = "tasklisp-cassette.jsonl";

/// Provider configuration from flags and the environment.
#[derive(Clone, Debug, Default)]
pub struct ProviderSettings {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The variable holding the API key (from the configuration file).
    pub api_key_env: Option<String>,
    /// `-o NAME VALUE` options.
    pub options: ModelOptions,
    /// `--fallback PROVIDER`s, tried in order after the provider.
    pub fallbacks: Vec<String>,
    /// `--rate-limit RPM`.
    pub requests_per_minute: Option<u32>,
}

/// The provider the flags name, with environment defaults. Flags that do not apply to
/// it (a `TASKLISP_MODEL` set for another provider) are left out rather than refused.
/// With none named, the keys in the environment choose; with no key either, every
/// model call fails saying how to configure one (`echo` answers only when named).
pub fn build_from_settings(
    settings: &ProviderSettings,
    env: EnvLookup,
) -> Result<Arc<dyn Provider>> {
    let mut kind = match settings.provider.clone().or_else(|| chosen_by_keys(env)) {
        Some(kind) => kind,
        None => return Ok(Arc::new(Unconfigured)),
    };
    if kind == "record" {
        if let Some(inner) = env("TASKLISP_RECORD_PROVIDER") {
            kind = format!("record:{inner}");
        }
    }
    let accepted = accepted_options(&kind)?;
    let mut options = Map::new();
    for (key, value) in [
        ("model", &settings.model),
        ("base_url", &settings.base_url),
        ("api_key_env", &settings.api_key_env),
    ] {
        if let Some(value) = value.as_ref().filter(|_| accepted.contains(&key)) {
            options.insert(key.to_owned(), Json::from(value.as_str()));
        }
    }
    build(&kind, &Json::Object(options), env)
}

/// The provider whose API key is set, when no provider is named: the first row's.
fn chosen_by_keys(env: EnvLookup) -> Option<String> {
    kinds::choosing_keys()
        .find(|(key, _)| env(key).is_some())
        .map(|(_, row)| row.name.to_owned())
}

/// The provider `kind` (a row of `kinds::KINDS`, or `record:INNER`) configured by the
/// map `options`, which are trusted.
pub fn build(kind: &str, options: &Json, env: EnvLookup) -> Result<Arc<dyn Provider>> {
    build_checked(kind, options, env, &Capabilities::all())
}

/// `build` for options a program chose: a `base_url` among them must name a host
/// `capabilities` allows, and an `api_key_env` a variable it allows, or a key could be
/// sent anywhere. Addresses and keys from the environment are the user's and pass.
pub fn build_checked(
    kind: &str,
    options: &Json,
    env: EnvLookup,
    capabilities: &Capabilities,
) -> Result<Arc<dyn Provider>> {
    let accepted = accepted_options(kind)?;
    let row = kinds::row_of(kind).ok_or_else(|| kinds::unknown_provider(kind))?;
    let options = Options::new(kind, row, options, &accepted, env, capabilities)?;
    (row.build)(&options)
}

/// `record`: the provider named after the colon, in the options or in the environment,
/// with every exchange written to the cassette.
pub(super) fn build_record(options: &Options) -> Result<Arc<dyn Provider>> {
    let named = match wrapped(options.kind)? {
        Some(inner) => Some(inner),
        None => options.string("provider")?,
    };
    let inner = named
        .or_else(|| (options.env)("TASKLISP_RECORD_PROVIDER"))
        .ok_or_else(|| {
            Error::validation(
                "record needs the provider to record: --provider record:openai, \
                 TASKLISP_RECORD_PROVIDER, or the \"provider\" option",
            )
        })?;
    check_recordable(&inner)?;
    let mut inner_options = options.map.clone();
    for own in options.row.options() {
        inner_options.remove(own);
    }
    let inner_provider = build_checked(
        &inner,
        &Json::Object(inner_options),
        options.env,
        options.capabilities,
    )?;
    Ok(Arc::new(Record::new(
        inner_provider,
        &options.cassette(Access::Write)?,
    )?))
}

/// The options `kind` takes; an unknown kind is an error listing the known ones. A
/// wrapping kind takes its own and those of the provider it wraps (of every recordable
/// one, when it names none).
fn accepted_options(kind: &str) -> Result<Vec<&'static str>> {
    let row = kinds::row_of(kind).ok_or_else(|| kinds::unknown_provider(kind))?;
    let mut accepted: Vec<&str> = row.options().collect();
    if row.wraps {
        match wrapped(kind)? {
            Some(inner) => accepted.extend(accepted_options(&inner)?),
            None => accepted.extend(recordable_rows().flat_map(ProviderKind::options)),
        }
    }
    let mut seen = Vec::new();
    accepted.retain(|name| {
        let new = !seen.contains(name);
        seen.push(*name);
        new
    });
    Ok(accepted)
}

fn recordable_rows() -> impl Iterator<Item = &'static ProviderKind> {
    kinds::KINDS.iter().filter(|row| row.recordable)
}

/// Whether `kind` names a provider (`record:INNER` when INNER is recordable).
pub fn is_known(kind: &str) -> bool {
    accepted_options(kind).is_ok()
}

/// For `record:INNER`, the provider being recorded; `None` for a plain `record`.
fn wrapped(kind: &str) -> Result<Option<String>> {
    let inner = kind.split_once(':').map(|(_, inner)| inner.to_owned());
    if let Some(name) = &inner {
        check_recordable(name)?;
    }
    Ok(inner)
}

/// Recording a cassette provider would only copy a cassette.
fn check_recordable(inner: &str) -> Result<()> {
    if kinds::row_of(inner).is_some_and(|row| !row.recordable) {
        return Err(Error::validation(format!(
            "record cannot record the {inner} provider"
        )));
    }
    Ok(())
}

/// A provider's options after checking names and types, with the environment behind:
/// what a row of `kinds::KINDS` builds its provider from.
pub struct Options<'a> {
    /// The kind as named (`record:openai`), for messages.
    kind: &'a str,
    pub(super) row: &'static ProviderKind,
    map: Map<String, Json>,
    env: EnvLookup<'a>,
    capabilities: &'a Capabilities,
}

impl<'a> Options<'a> {
    fn new(
        kind: &'a str,
        row: &'static ProviderKind,
        options: &Json,
        accepted: &[&str],
        env: EnvLookup<'a>,
        capabilities: &'a Capabilities,
    ) -> Result<Options<'a>> {
        let map = match options {
            Json::Null => Map::new(),
            Json::Object(map) => map.clone(),
            other => {
                return Err(Error::validation(format!(
                    "provider options must be a map, not {other}"
                )))
            }
        };
        if let Some(unknown) = map.keys().find(|key| !accepted.contains(&key.as_str())) {
            let takes = match accepted {
                [] => "it takes none".to_owned(),
                names => format!("it takes: {}", names.join(", ")),
            };
            return Err(Error::validation(format!(
                "unknown option \"{unknown}\" for the {kind} provider ({takes})"
            )));
        }
        Ok(Options {
            kind,
            row,
            map,
            env,
            capabilities,
        })
    }

    fn invalid(&self, key: &str, expected: &str) -> Error {
        Error::validation(format!(
            "option \"{key}\" of the {} provider must be {expected}",
            self.kind
        ))
    }

    pub(super) fn string(&self, key: &str) -> Result<Option<String>> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.invalid(key, "a string")),
        }
    }

    /// The option, else the environment variable `var` (when `var` is not empty).
    fn string_or_env(&self, key: &str, var: &str) -> Result<Option<String>> {
        Ok(self
            .string(key)?
            .or_else(|| (!var.is_empty()).then(|| (self.env)(var)).flatten()))
    }

    pub(super) fn integer(&self, key: &str) -> Result<Option<u64>> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.invalid(key, "a whole number ≥ 0")),
        }
    }

    /// Seconds as a number in the option, else in the environment variable `var`.
    fn seconds(&self, key: &str, var: &str) -> Result<Option<Duration>> {
        let (seconds, source) = match self.map.get(key) {
            None | Some(Json::Null) => match (self.env)(var) {
                None => return Ok(None),
                Some(text) => (text.trim().parse::<f64>().ok(), var.to_owned()),
            },
            Some(value) => (value.as_f64(), format!("option \"{key}\"")),
        };
        match seconds.map(Duration::try_from_secs_f64) {
            Some(Ok(duration)) if !duration.is_zero() => Ok(Some(duration)),
            _ => Err(Error::validation(format!(
                "{source} of the {} provider must be a positive number of seconds",
                self.kind
            ))),
        }
    }

    fn http_settings(&self) -> Result<HttpSettings> {
        let defaults = HttpSettings::default();
        let max_retries = match self.integer("max_retries")? {
            Some(n) => n,
            None => match (self.env)("TASKLISP_LLM_RETRIES") {
                None => u64::from(defaults.max_retries),
                Some(text) => text.trim().parse().map_err(|_| {
                    Error::validation(format!(
                        "TASKLISP_LLM_RETRIES must be a whole number, not {text:?}"
                    ))
                })?,
            },
        };
        Ok(HttpSettings {
            connect_timeout: self
                .seconds("connect_timeout", "TASKLISP_LLM_CONNECT_TIMEOUT")?
                .unwrap_or(defaults.connect_timeout),
            timeout: self
                .seconds("timeout", "TASKLISP_LLM_TIMEOUT")?
                .unwrap_or(defaults.timeout),
            max_retries: u32::try_from(max_retries).unwrap_or(u32::MAX).min(20),
            ..defaults
        })
    }

    /// The endpoint of an HTTP provider, on its row's server unless the options or the
    /// environment say otherwise; the key comes from `api_key_env` or the row's variable.
    /// A `base_url` or `api_key_env` in the options must pass the capabilities.
    pub(super) fn endpoint(&self) -> Result<Endpoint> {
        let server = self.row.server.as_ref();
        let default_base = server.map_or("", |server| server.base_url);
        let base_var = server.and_then(|server| server.base_url_env).unwrap_or("");
        let key_var = server.and_then(|server| server.api_key_env).unwrap_or("");
        if let Some(url) = self.string("base_url")? {
            self.capabilities.check_url(&url)?;
        }
        let base_url = self
            .string_or_env("base_url", base_var)?
            .unwrap_or_else(|| default_base.to_owned());
        let named_var = self.string("api_key_env")?;
        if let Some(var) = &named_var {
            self.capabilities.check_env(var)?;
        }
        let key_var = named_var.clone().unwrap_or_else(|| key_var.to_owned());
        let api_key = (!key_var.is_empty())
            .then(|| (self.env)(&key_var))
            .flatten();
        if api_key.is_none() && (kinds::is_hosted(&base_url) || named_var.is_some()) {
            return Err(Error::validation(format!(
                "the {} provider needs an API key: set {key_var}",
                self.kind
            )));
        }
        let endpoint = Endpoint {
            base_url,
            api_key,
            model: self.string("model")?,
            http: self.http_settings()?,
        };
        Ok(match server.and_then(|server| server.default_model) {
            Some(model) => endpoint.with_default_model(model),
            None => endpoint,
        })
    }

    pub(super) fn command(&self) -> Result<CommandProvider> {
        let program = match self.map.get("command") {
            Some(Json::Array(items)) => Program::Argv(
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| self.invalid("command", "a string or a list of strings"))?,
            ),
            _ => Program::Shell(self.string_or_env("command", "TASKLISP_PROVIDER_COMMAND")?.ok_or_else(|| {
                Error::validation("the command provider needs a program: set TASKLISP_PROVIDER_COMMAND or give \"command\"")
            })?),
        };
        let input = match self.string("input")?.as_deref() {
            None | Some("prompt") => Input::Prompt,
            Some("request") => Input::Request,
            Some(_) => return Err(self.invalid("input", "\"prompt\" or \"request\"")),
        };
        let timeout = self
            .seconds("timeout", "TASKLISP_LLM_TIMEOUT")?
            .unwrap_or(HttpSettings::default().timeout);
        CommandProvider::new(program, input, timeout, self.string("model")?)
    }

    /// The cassette file, relative to the current directory, which the provider reads
    /// (`replay`) or writes (`record`): a program must be allowed to.
    pub(super) fn cassette(&self, access: Access) -> Result<PathBuf> {
        let path = self.string_or_env("cassette", "TASKLISP_CASSETTE")?;
        let path = PathBuf::from(path.as_deref().unwrap_or(DEFAULT_CASSETTE));
        self.capabilities.check_path(&path, access)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn error_of(result: Result<Arc<dyn Provider>>) -> Error {
        match result {
            Ok(provider) => panic!("expected an error, got the {} provider", provider.name()),
            Err(error) => error,
        }
    }

    #[test]
    fn with_nothing_named_the_keys_choose_and_without_keys_calls_fail() {
        let chosen = |pairs: &'static [(&'static str, &'static str)]| {
            build_from_settings(&ProviderSettings::default(), &env_of(pairs))
                .unwrap()
                .name()
                .to_owned()
        };
        assert_eq!(chosen(&[("OPENAI_API_KEY", "k")]), "openai");
        assert_eq!(chosen(&[("ANTHROPIC_API_KEY", "k")]), "anthropic");
        assert_eq!(
            chosen(&[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "k")]),
            "openai"
        );
        assert_eq!(chosen(&[]), "none");
        let with_model = ProviderSettings {
            model: Some("gpt-4o-mini".into()),
            ..ProviderSettings::default()
        };
        let none = build_from_settings(&with_model, &env_of(&[])).unwrap();
        let error = none
            .complete(&crate::provider::Request::default(), &Default::default())
            .unwrap_err();
        assert_eq!(error.reason(), Some("llm_error"));
        assert!(
            error.message().contains("--provider"),
            "{}",
            error.message()
        );
        assert!(
            error.message().contains("OPENAI_API_KEY"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn openai_and_anthropic_have_default_models() {
        let env = env_of(&[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]);
        let model = |kind: &str, options: Json| {
            build(kind, &options, &env)
                .unwrap()
                .default_model()
                .map(str::to_owned)
        };
        assert_eq!(model("openai", Json::Null).as_deref(), Some("gpt-4o-mini"));
        assert_eq!(
            model("anthropic", Json::Null).as_deref(),
            Some("claude-3-5-haiku-latest")
        );
        assert_eq!(model("openai", json!({"model": "m"})).as_deref(), Some("m"));
        assert_eq!(model("ollama", Json::Null), None);
    }

    #[test]
    fn unknown_names_are_listed() {
        let env = env_of(&[]);
        let error = error_of(build("gpt", &Json::Null, &env));
        assert_eq!(error.kind().code(), "VALIDATION_ERROR");
        assert!(
            error.message().contains("known: echo, openai"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn the_real_services_need_their_keys() {
        let env = env_of(&[]);
        let error = error_of(build("openai", &json!({"model": "m"}), &env));
        assert!(
            error.message().contains("OPENAI_API_KEY"),
            "{}",
            error.message()
        );
        let error = error_of(build("anthropic", &Json::Null, &env));
        assert!(
            error.message().contains("ANTHROPIC_API_KEY"),
            "{}",
            error.message()
        );
        let keyed = env_of(&[("MY_KEY", "k")]);
        let options = json!({"api_key_env": "MY_KEY"});
        assert_eq!(
            build("anthropic", &options, &keyed).unwrap().name(),
            "anthropic"
        );
    }

    #[test]
    fn a_named_key_variable_must_be_set() {
        let env = env_of(&[]);
        let options = json!({"base_url": "http://127.0.0.1:1/v1", "api_key_env": "UNSET_KEY"});
        let error = error_of(build("openai", &options, &env));
        assert!(
            error.message().contains("set UNSET_KEY"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn a_bad_timeout_in_the_environment_is_named() {
        let env = env_of(&[
            ("TASKLISP_PROVIDER_COMMAND", "cat"),
            ("TASKLISP_LLM_TIMEOUT", "0"),
        ]);
        let error = error_of(build("command", &Json::Null, &env));
        assert!(
            error.message().starts_with("TASKLISP_LLM_TIMEOUT"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn local_servers_need_no_key() {
        let env = env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")]);
        assert_eq!(build("openai", &Json::Null, &env).unwrap().name(), "openai");
        assert_eq!(
            build("ollama", &Json::Null, &env_of(&[])).unwrap().name(),
            "ollama"
        );
    }

    #[test]
    fn a_provider_that_takes_no_options_says_so() {
        let error = error_of(build("echo", &json!({"model": "m"}), &env_of(&[])));
        assert_eq!(
            error.message(),
            "unknown option \"model\" for the echo provider (it takes none)"
        );
    }

    #[test]
    fn options_are_checked_by_name_and_type() {
        let env = env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")]);
        let error = error_of(build("openai", &json!({"modle": "m"}), &env));
        assert!(
            error.message().contains("unknown option \"modle\""),
            "{}",
            error.message()
        );
        let error = error_of(build("openai", &json!({"timeout": "soon"}), &env));
        assert!(
            error
                .message()
                .contains("option \"timeout\" of the openai provider"),
            "{}",
            error.message()
        );
        let error = error_of(build("openai", &json!({"timeout": -1}), &env));
        assert!(error.message().contains("positive"), "{}", error.message());
        let error = error_of(build("openai", &json!(["model"]), &env));
        assert!(
            error.message().contains("must be a map"),
            "{}",
            error.message()
        );
        let bad_env = env_of(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
            ("TASKLISP_LLM_RETRIES", "many"),
        ]);
        let error = error_of(build("openai", &Json::Null, &bad_env));
        assert!(
            error.message().contains("TASKLISP_LLM_RETRIES"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn flags_that_do_not_apply_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.jsonl");
        std::fs::write(&cassette, "").unwrap();
        let path = cassette.to_string_lossy().into_owned();
        let env = move |name: &str| (name == "TASKLISP_CASSETTE").then(|| path.clone());
        let settings = ProviderSettings {
            provider: Some("replay".into()),
            model: Some("from-TASKLISP_MODEL".into()),
            base_url: None,
            ..ProviderSettings::default()
        };
        assert_eq!(
            build_from_settings(&settings, &env).unwrap().name(),
            "replay"
        );
        let error = error_of(build("replay", &json!({"model": "m"}), &env));
        assert!(
            error.message().contains("unknown option"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn record_wraps_the_provider_it_is_told_to() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("r.jsonl").to_string_lossy().into_owned();
        let env = env_of(&[]);
        let options = json!({"cassette": cassette, "command": ["cat"]});
        assert_eq!(
            build("record:command", &options, &env).unwrap().name(),
            "record"
        );
        let options = json!({"cassette": cassette, "provider": "command", "command": "cat"});
        assert_eq!(build("record", &options, &env).unwrap().name(), "record");
        let error = error_of(build("record", &json!({"cassette": cassette}), &env));
        assert!(
            error.message().contains("record needs the provider"),
            "{}",
            error.message()
        );
        let error = error_of(build("record:replay", &Json::Null, &env));
        assert!(
            error.message().contains("cannot record"),
            "{}",
            error.message()
        );
        let from_env = move |name: &str| match name {
            "TASKLISP_RECORD_PROVIDER" => Some("command".to_owned()),
            "TASKLISP_PROVIDER_COMMAND" => Some("cat".to_owned()),
            "TASKLISP_CASSETTE" => Some(cassette.clone()),
            _ => None,
        };
        let settings = ProviderSettings {
            provider: Some("record".into()),
            model: Some("m".into()),
            base_url: Some("http://127.0.0.1:1/v1".into()),
            ..ProviderSettings::default()
        };
        assert_eq!(
            build_from_settings(&settings, &from_env).unwrap().name(),
            "record"
        );
    }

    #[test]
    fn the_command_comes_from_the_option_or_the_environment() {
        let env = env_of(&[("TASKLISP_PROVIDER_COMMAND", "cat")]);
        assert_eq!(
            build("command", &Json::Null, &env).unwrap().name(),
            "command"
        );
        let error = error_of(build("command", &Json::Null, &env_of(&[])));
        assert!(
            error.message().contains("TASKLISP_PROVIDER_COMMAND"),
            "{}",
            error.message()
        );
        let error = error_of(build("command", &json!({"command": ["a", 1]}), &env));
        assert!(
            error.message().contains("list of strings"),
            "{}",
            error.message()
        );
        let error = error_of(build("command", &json!({"input": "file"}), &env));
        assert!(
            error.message().contains("\"request\""),
            "{}",
            error.message()
        );
    }
}
