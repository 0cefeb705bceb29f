//! The provider kinds: one row per provider that `--provider` and `set-provider!` can
//! name. The table drives building, the options each kind takes, the keys that choose a
//! provider when none is named, `--provider`'s help, and the "known" list and "did you
//! mean" of an unknown name. A new provider is its folder beside `openai/` plus a row.

use super::anthropic::{Anthropic, DEFAULT_MAX_TOKENS};
use super::cassette::Replay;
use super::config::{build_record, Options};
use super::openai::OpenAi;
use super::{Echo, Provider};
use crate::capabilities::Access;
use crate::error::{Error, Result};
use std::sync::Arc;

/// One kind of provider.
pub struct ProviderKind {
    /// How `--provider` and `set-provider!` name it.
    pub name: &'static str,
    /// What answers, in a line: the provider's row in `docs/PROVIDERS.md`, which only the
    /// test keeping that table in step reads.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the docs table test reads it")
    )]
    pub doc: &'static str,
    /// The options `set-provider!` takes for it, besides those of its server.
    pub own_options: &'static [&'static str],
    /// The server of an HTTP provider: its defaults and environment variables. A row
    /// with a server takes the options of an HTTP client (`base_url`, `timeout`…).
    pub server: Option<Server>,
    /// Whether `record` may wrap it (recording a cassette would only copy one).
    pub recordable: bool,
    /// Whether it wraps another provider, named after a colon (`record:openai`).
    pub wraps: bool,
    /// The provider, from its checked options.
    pub build: fn(&Options) -> Result<Arc<dyn Provider>>,
}

/// Where an HTTP provider sends, unless its options or the environment say otherwise.
pub struct Server {
    pub base_url: &'static str,
    /// The environment variable that overrides `base_url`.
    pub base_url_env: Option<&'static str>,
    /// The environment variable holding the API key. When it is set and no provider is
    /// named, it chooses this provider (the first such row wins).
    pub api_key_env: Option<&'static str>,
    /// The model used when none is named (flag, environment, option or task).
    pub default_model: Option<&'static str>,
}

/// The options of every provider with a server.
const HTTP_OPTIONS: &[&str] = &[
    "model",
    "base_url",
    "api_key_env",
    "timeout",
    "connect_timeout",
    "max_retries",
];

/// Every provider kind, in the order help and error messages list them.
pub const KINDS: &[ProviderKind] = &[
    ProviderKind {
        name: "echo",
        doc: "nobody: the rendered prompt comes back (offline; only when named)",
        own_options: &[],
        server: None,
        recordable: true,
        wraps: false,
        build: |_| Ok(Arc::new(Echo)),
    },
    ProviderKind {
        name: "openai",
        doc: "any OpenAI-compatible chat-completions server: OpenAI, Ollama, vLLM, llama.cpp, LM Studio…",
        own_options: &[],
        server: Some(Server {
            base_url: "https://api.openai.com/v1",
            base_url_env: Some("OPENAI_BASE_URL"),
            api_key_env: Some("OPENAI_API_KEY"),
            default_model: Some("gpt-4o-mini"),
        }),
        recordable: true,
        wraps: false,
        build: build_openai,
    },
    ProviderKind {
        name: "ollama",
        doc: "the same client, preset for a local Ollama (`http://localhost:11434/v1`, no key)",
        own_options: &[],
        server: Some(Server {
            base_url: "http://localhost:11434/v1",
            base_url_env: None,
            api_key_env: None,
            default_model: None,
        }),
        recordable: true,
        wraps: false,
        build: build_openai,
    },
    ProviderKind {
        name: "anthropic",
        doc: "Anthropic's Messages API",
        own_options: &["max_tokens"],
        server: Some(Server {
            base_url: "https://api.anthropic.com",
            base_url_env: Some("ANTHROPIC_BASE_URL"),
            api_key_env: Some("ANTHROPIC_API_KEY"),
            default_model: Some("claude-3-5-haiku-latest"),
        }),
        recordable: true,
        wraps: false,
        build: |options| {
            let max_tokens = options.integer("max_tokens")?;
            let max_tokens = max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
            Ok(Arc::new(Anthropic::new(options.endpoint()?, max_tokens)))
        },
    },
    ProviderKind {
        name: "command",
        doc: "a local program: the prompt on its stdin, the answer on its stdout",
        own_options: &["command", "input", "timeout", "model"],
        server: None,
        recordable: true,
        wraps: false,
        build: |options| Ok(Arc::new(options.command()?)),
    },
    ProviderKind {
        name: "replay",
        doc: "the cassette file; never a model",
        own_options: &["cassette"],
        server: None,
        recordable: false,
        wraps: false,
        build: |options| Ok(Arc::new(Replay::new(&options.cassette(Access::Read)?)?)),
    },
    ProviderKind {
        name: "record",
        doc: "the provider after the colon (`record:openai`), with every exchange written to a cassette file",
        own_options: &["provider", "cassette"],
        server: None,
        recordable: false,
        wraps: true,
        build: build_record,
    },
];

impl ProviderKind {
    /// The options `set-provider!` takes for it: its server's, then its own.
    pub fn options(&self) -> impl Iterator<Item = &'static str> {
        let server = self.server.as_ref().map_or(&[][..], |_| HTTP_OPTIONS);
        server.iter().chain(self.own_options).copied()
    }
}

/// `openai` and the presets of the same client (`ollama`), under the row's name.
fn build_openai(options: &Options) -> Result<Arc<dyn Provider>> {
    Ok(Arc::new(OpenAi::named(
        options.row.name,
        options.endpoint()?,
    )))
}

const KIND_COUNT: usize = KINDS.len();

/// The names of the kinds, for "did you mean" and `--provider`'s help.
pub const KNOWN: &[&str] = &{
    let mut names = [""; KIND_COUNT];
    let mut i = 0;
    while i < KIND_COUNT {
        // A constant: `i` stays below the table's length, and the compiler checks it.
        #[allow(clippy::indexing_slicing)]
        {
            names[i] = KINDS[i].name;
        }
        i += 1;
    }
    names
};

/// The row `kind` names: a row's name, or `NAME:INNER` for a row that wraps another.
pub fn row_of(kind: &str) -> Option<&'static ProviderKind> {
    let (name, wrapping) = match kind.split_once(':') {
        Some((name, _)) => (name, true),
        None => (kind, false),
    };
    KINDS
        .iter()
        .find(|row| row.name == name && (row.wraps || !wrapping))
}

/// The kinds as a list for people: `echo, openai, …, record (or record:PROVIDER)`.
pub fn listing() -> String {
    let names: Vec<String> = KINDS
        .iter()
        .map(|row| match row.wraps {
            true => format!("{0} (or {0}:PROVIDER)", row.name),
            false => row.name.to_owned(),
        })
        .collect();
    names.join(", ")
}

/// The failure of a name no row has, listing the known ones and the nearest: the
/// caller's mistake (a `VALIDATION_ERROR`), not the model's.
pub fn unknown_provider(kind: &str) -> Error {
    let hint = crate::suggest::hint(kind, KNOWN.iter().copied())
        .map_or(String::new(), |hint| format!("; {hint}"));
    Error::validation(format!(
        "unknown provider: {kind} (known: {}){hint}",
        listing()
    ))
}

/// The environment variables whose key chooses a provider when none is named.
pub fn choosing_keys() -> impl Iterator<Item = (&'static str, &'static ProviderKind)> {
    KINDS.iter().filter_map(|row| {
        let key = row.server.as_ref()?.api_key_env?;
        Some((key, row))
    })
}

/// Whether `base_url` is a hosted service whose key is required (`api.openai.com`):
/// the host of a row whose server has a key.
pub fn is_hosted(base_url: &str) -> bool {
    choosing_keys().any(|(_, row)| {
        row.server
            .as_ref()
            .map(|server| host(server.base_url))
            .is_some_and(|host| base_url.contains(host))
    })
}

/// The host of a URL (`https://api.openai.com/v1` → `api.openai.com`).
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

/// How to configure a provider, for the failure of a call made without one.
pub fn how_to_configure() -> String {
    let keys: Vec<&str> = choosing_keys().map(|(key, _)| key).collect();
    format!(
        "no model provider is configured: pass --provider ({}) with --model, set \
         TASKLISP_PROVIDER, set {}, or call (set-provider! …) in the program",
        listing(),
        keys.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::build;

    #[test]
    fn every_row_builds_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.jsonl");
        std::fs::write(&cassette, "").unwrap();
        let cassette = cassette.to_string_lossy().into_owned();
        let env = move |name: &str| match name {
            "TASKLISP_CASSETTE" => Some(cassette.clone()),
            "TASKLISP_PROVIDER_COMMAND" => Some("cat".to_owned()),
            "TASKLISP_RECORD_PROVIDER" => Some("echo".to_owned()),
            name if name.ends_with("_API_KEY") => Some("k".to_owned()),
            _ => None,
        };
        for row in KINDS {
            let built = build(row.name, &serde_json::Value::Null, &env);
            let name = built.map(|provider| provider.name().to_owned());
            assert_eq!(name.as_deref().ok(), Some(row.name), "{}", row.name);
        }
    }

    #[test]
    fn the_lists_for_people_name_every_row() {
        let known = listing();
        let unknown = unknown_provider("gpt").message().to_owned();
        let configure = how_to_configure();
        assert_eq!(KNOWN.len(), KINDS.len());
        for (row, name) in KINDS.iter().zip(KNOWN) {
            assert_eq!(row.name, *name);
            assert!(known.contains(row.name), "{known}");
            assert!(unknown.contains(row.name), "{unknown}");
            assert!(configure.contains(row.name), "{configure}");
        }
        for (key, _) in choosing_keys() {
            assert!(configure.contains(key), "{configure}");
        }
    }

    #[test]
    fn the_provider_docs_describe_every_row_and_its_options() {
        let docs = include_str!("../../docs/PROVIDERS.md");
        for row in KINDS {
            assert!(
                docs.contains(row.doc),
                "docs/PROVIDERS.md lacks {}",
                row.doc
            );
            for option in row.options() {
                let line = docs
                    .lines()
                    .find(|line| line.starts_with(&format!("| `\"{option}\"` |")));
                let providers = line.and_then(|line| line.split('|').nth(2));
                assert!(
                    providers.is_some_and(|p| p.contains(row.name)),
                    "docs/PROVIDERS.md: option {option} of {}",
                    row.name
                );
            }
        }
    }

    #[test]
    fn the_hosted_services_are_the_rows_with_keys() {
        assert!(is_hosted("https://api.openai.com/v1"));
        assert!(is_hosted("https://api.anthropic.com"));
        assert!(!is_hosted("http://localhost:11434/v1"));
        assert_eq!(host("https://api.openai.com/v1"), "api.openai.com");
    }

    #[test]
    fn wrapping_rows_are_named_with_a_colon() {
        assert_eq!(row_of("record:openai").map(|row| row.name), Some("record"));
        assert_eq!(row_of("openai:record").map(|row| row.name), None);
        assert_eq!(row_of("opnai").map(|row| row.name), None);
    }
}
