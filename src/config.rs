//! The configuration file, `$XDG_CONFIG_HOME/tasklisp/config.toml` (else
//! `~/.config/tasklisp/config.toml`): defaults under the flags and the environment.
//! It is read whole and checked before anything runs: a file that does not parse, a
//! key it does not know or a value of the wrong type is an error naming the file, the
//! line and the key.

use crate::error::{Error, Result};
use crate::provider::{EnvLookup, ProviderSettings};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// What the configuration file says; empty when there is none.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file read, when there was one.
    pub file: Option<PathBuf>,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// `[options]`: model options, as `-o NAME VALUE` gives them.
    pub options: Vec<(String, Json)>,
    /// `[providers.NAME]`: the settings of each provider.
    pub providers: BTreeMap<String, ProviderEntry>,
    /// `[mcp.NAME]`: the MCP servers, each table as JSON.
    pub mcp: BTreeMap<String, Json>,
}

/// `[providers.NAME]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderEntry {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    /// The provider's default model.
    pub model: Option<String>,
}

/// Where the configuration file is, whether or not it exists.
pub fn location(env: EnvLookup) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("tasklisp").join("config.toml"))
}

/// Reads the configuration file, if there is one.
pub fn load(env: EnvLookup) -> Result<Config> {
    let Some(path) = location(env) else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => {
            return Err(Error::validation(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    let mut config = parse(&path, &text)?;
    config.file = Some(path);
    Ok(config)
}

/// The configuration `text` (of the file `path`, which errors name) says.
pub fn parse(path: &Path, text: &str) -> Result<Config> {
    let file = File { path, text };
    let table = DeTable::parse(text).map_err(|e| {
        let line = file.line(e.span().map_or(0, |s| s.start));
        Error::validation(format!(
            "{} line {line}: {}",
            path.display(),
            e.message().trim_end()
        ))
    })?;
    let mut config = Config::default();
    for (key, value) in table.get_ref() {
        let name = key.get_ref().as_ref();
        match name {
            "provider" => {
                let provider = file.string(name, value)?;
                if !crate::provider::is_known(&provider) {
                    return Err(file.error(name, value, &format!("unknown provider {provider}")));
                }
                config.provider = Some(provider);
            }
            "model" => config.model = Some(file.string(name, value)?),
            "options" => config.options = file.options(value)?,
            "providers" => config.providers = file.providers(value)?,
            "mcp" => {
                for (server, entry) in file.table(name, value)? {
                    let key = format!("mcp.{}", server.get_ref());
                    file.table(&key, entry)?;
                    config
                        .mcp
                        .insert(server.get_ref().to_string(), json(entry.get_ref()));
                }
            }
            _ => {
                return Err(file.error(
                    name,
                    key,
                    "unknown key (known: provider, model, options, providers, mcp)",
                ))
            }
        }
    }
    Ok(config)
}

/// The text of the configuration file, for errors that name its lines.
struct File<'a> {
    path: &'a Path,
    text: &'a str,
}

impl File<'_> {
    fn line(&self, offset: usize) -> usize {
        self.text
            .get(..offset)
            .map_or(0, |t| t.matches('\n').count())
            + 1
    }

    fn error<T>(&self, key: &str, at: &Spanned<T>, why: &str) -> Error {
        Error::validation(format!(
            "{} line {}: `{key}`: {why}",
            self.path.display(),
            self.line(at.span().start)
        ))
    }

    fn string(&self, key: &str, value: &Spanned<DeValue>) -> Result<String> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.error(key, value, "expected a string")),
        }
    }

    fn table<'v, 'i>(&self, key: &str, value: &'v Spanned<DeValue<'i>>) -> Result<&'v DeTable<'i>> {
        match value.get_ref() {
            DeValue::Table(table) => Ok(table),
            _ => Err(self.error(key, value, "expected a table")),
        }
    }

    /// `[options]`: each a model option `-o` accepts, with a value it accepts.
    fn options(&self, value: &Spanned<DeValue>) -> Result<Vec<(String, Json)>> {
        let mut options = Vec::new();
        for (name, value) in self.table("options", value)? {
            let name = name.get_ref().to_string();
            let json = json(value.get_ref());
            crate::provider::ModelOptions::default()
                .set(&name, json.clone())
                .map_err(|why| self.error(&format!("options.{name}"), value, &why))?;
            options.push((name, json));
        }
        Ok(options)
    }

    /// `[providers.NAME]`: known providers, each with `base_url`, `api_key_env`, `model`.
    fn providers(&self, value: &Spanned<DeValue>) -> Result<BTreeMap<String, ProviderEntry>> {
        let mut providers = BTreeMap::new();
        for (kind, entry) in self.table("providers", value)? {
            let kind = kind.get_ref().to_string();
            let key = format!("providers.{kind}");
            if !crate::provider::is_known(&kind) {
                return Err(self.error(&key, entry, "unknown provider"));
            }
            let mut settings = ProviderEntry::default();
            for (name, value) in self.table(&key, entry)? {
                let key = format!("{key}.{}", name.get_ref());
                let slot = match name.get_ref().as_ref() {
                    "base_url" => &mut settings.base_url,
                    "api_key_env" => &mut settings.api_key_env,
                    "model" => &mut settings.model,
                    _ => {
                        return Err(self.error(
                            &key,
                            name,
                            "unknown key (known: base_url, api_key_env, model)",
                        ))
                    }
                };
                *slot = Some(self.string(&key, value)?);
            }
            providers.insert(kind, settings);
        }
        Ok(providers)
    }
}

/// A TOML value as JSON (a date as its text).
fn json(value: &DeValue) -> Json {
    let digits = |s: &str| s.replace('_', "");
    match value {
        DeValue::String(s) => Json::from(s.as_ref()),
        DeValue::Integer(i) => i64::from_str_radix(&digits(i.as_str()), i.radix())
            .map_or_else(|_| Json::from(i.as_str()), Json::from),
        DeValue::Float(f) => digits(f.as_str())
            .parse::<f64>()
            .map_or_else(|_| Json::from(f.as_str()), Json::from),
        DeValue::Boolean(b) => Json::from(*b),
        DeValue::Datetime(d) => Json::from(d.to_string()),
        DeValue::Array(items) => items.iter().map(|v| json(v.get_ref())).collect(),
        DeValue::Table(table) => Json::Object(
            table
                .iter()
                .map(|(k, v)| (k.get_ref().to_string(), json(v.get_ref())))
                .collect(),
        ),
    }
}

impl Config {
    /// The settings the flags and the environment gave (`settings`), with what they
    /// leave unset taken from the file. `provider` and `model` apply together: the
    /// file's `model` is its `provider`'s, so `--provider anthropic` with a file that
    /// says `provider = "openai"` takes the model of `[providers.anthropic]`. A
    /// `base_url` from the file gives way to the provider's variable (`OPENAI_BASE_URL`).
    pub fn apply(&self, settings: &mut ProviderSettings, env: EnvLookup) {
        if settings.provider.is_none() {
            settings.provider.clone_from(&self.provider);
        }
        let kind = settings.provider.clone().unwrap_or_default();
        let entry = self.providers.get(&kind).cloned().unwrap_or_default();
        if settings.model.is_none() {
            let file_provider = self.provider.is_none() || self.provider == settings.provider;
            settings.model = self.model.clone().filter(|_| file_provider).or(entry.model);
        }
        if settings.base_url.is_none() && base_url_var(&kind).and_then(env).is_none() {
            settings.base_url = entry.base_url;
        }
        if settings.api_key_env.is_none() {
            settings.api_key_env = entry.api_key_env;
        }
    }
}

/// The variable that gives a provider's base URL, which a file's `base_url` gives way to.
pub fn base_url_var(kind: &str) -> Option<&'static str> {
    match kind {
        "openai" => Some("OPENAI_BASE_URL"),
        "anthropic" => Some("ANTHROPIC_BASE_URL"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        parse(Path::new("config.toml"), text).expect("parses")
    }

    #[test]
    fn a_files_base_url_gives_way_to_the_providers_variable() {
        let c = config("provider = \"openai\"\n[providers.openai]\nbase_url = \"http://f/v1\"\n");
        let mut settings = ProviderSettings::default();
        c.apply(&mut settings, &|_| None);
        assert_eq!(settings.base_url.as_deref(), Some("http://f/v1"));
        let mut settings = ProviderSettings::default();
        c.apply(&mut settings, &|name| {
            (name == "OPENAI_BASE_URL").then(|| "http://env/v1".to_owned())
        });
        assert_eq!(settings.base_url, None);
    }

    #[test]
    fn values_read_as_json() {
        // Keys come in order (the parser keeps no order of its own).
        let c = config("[options]\nmax_tokens = 1_000\ntop_p = 0.5\nstop = [\"a\"]\n");
        assert_eq!(
            c.options,
            [
                ("max_tokens".to_owned(), Json::from(1000)),
                ("stop".to_owned(), serde_json::json!(["a"])),
                ("top_p".to_owned(), Json::from(0.5)),
            ]
        );
    }
}
