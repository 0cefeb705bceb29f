//! Keeping credentials out of everything tasklisp shows or writes: error messages and
//! their details, `--error-format json`, cassettes, run logs.
//!
//! A [`Secrets`] knows the values to hide (a provider's API key, the password of a base
//! URL) and finds them however a server echoed them back: verbatim, JSON-escaped a
//! character at a time (`sk\u002d…`, `\/`) or percent-encoded. Independently of any
//! known value, the credentials part of every URL (`scheme://user:pw@host`) is hidden.
//! Whoever writes text that may hold a secret to a file or an error runs it through
//! [`Secrets::scrub`] first.

use regex::Regex;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::LazyLock;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// `scheme://user:password@` in any text: group 1 is the scheme and its slashes.
static URL_CREDENTIALS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#@\s"'<>\\]+@"#).ok());

/// The secrets one provider (or one run) must keep out of what it writes. Cheap to
/// clone; the default knows no values but still hides URL credentials.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    values: Vec<String>,
    /// Matches any of `values` in any of its encodings; `None` when there are none.
    pattern: Option<Regex>,
}

impl Secrets {
    /// Secrets for these values; empty values are ignored.
    pub fn new<I, S>(values: I) -> Secrets
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(Into::into)
            .filter(|v| !v.is_empty())
            .collect();
        values.sort();
        values.dedup();
        // Longest first: a secret that contains another is hidden whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let alternatives: Vec<String> = values.iter().map(|v| encodings(v)).collect();
        let pattern = (!alternatives.is_empty())
            .then(|| Regex::new(&alternatives.join("|")).ok())
            .flatten();
        Secrets { values, pattern }
    }

    /// These secrets and `other`'s.
    pub fn with(&self, other: &Secrets) -> Secrets {
        Secrets::new(self.values.iter().chain(&other.values).cloned())
    }

    /// The password in `url`'s credentials (`http://user:pw@host`), and the whole
    /// `user:pw`, as secrets.
    pub fn of_url(url: &str) -> Secrets {
        let credentials = url
            .split_once("://")
            .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or_default())
            .and_then(|authority| authority.rsplit_once('@'))
            .map(|(userinfo, _)| userinfo);
        let Some(userinfo) = credentials else {
            return Secrets::default();
        };
        let password = userinfo.split_once(':').map(|(_, pw)| pw.to_owned());
        Secrets::new(password.into_iter().chain([userinfo.to_owned()]))
    }

    /// Whether every value `other` knows is known here too.
    pub fn covers(&self, other: &Secrets) -> bool {
        other.values.iter().all(|v| self.values.contains(v))
    }

    /// Whether no value is known (URL credentials are still hidden).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret, in any encoding, and every URL's credentials replaced
    /// by `[REDACTED]`.
    pub fn scrub(&self, text: &str) -> String {
        self.scrubbed(text).into_owned()
    }

    /// [`Secrets::scrub`], borrowing `text` back when nothing in it is hidden (the
    /// common case: the log scrubs every field of every call).
    fn scrubbed<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let text = match &self.pattern {
            Some(pattern) => pattern.replace_all(text, |found: &regex::Captures| {
                let whole = found.get(0).map_or(0..0, |m| m.range());
                if within_a_word(text, whole.clone()) {
                    text.get(whole).unwrap_or_default().to_owned()
                } else {
                    REDACTED.to_owned()
                }
            }),
            None => text.into(),
        };
        let Some(url) = &*URL_CREDENTIALS else {
            return text;
        };
        let hidden = |found: &regex::Captures| {
            let scheme = found.get(1).map_or("", |m| m.as_str());
            format!("{scheme}{REDACTED}@")
        };
        let changed = match url.replace_all(&text, hidden) {
            Cow::Owned(changed) => Some(changed),
            Cow::Borrowed(_) => None,
        };
        changed.map_or(text, Cow::Owned)
    }

    /// Every string in `json` (keys too) scrubbed.
    pub fn scrub_json(&self, json: &serde_json::Value) -> serde_json::Value {
        let mut json = json.clone();
        self.scrub_json_in_place(&mut json);
        json
    }

    /// [`Secrets::scrub_json`] on a value the caller owns: only what changes is
    /// rewritten.
    pub fn scrub_json_in_place(&self, json: &mut serde_json::Value) {
        use serde_json::Value as Json;
        match json {
            Json::String(text) => {
                if let Cow::Owned(changed) = self.scrubbed(text) {
                    *text = changed;
                }
            }
            Json::Array(items) => items.iter_mut().for_each(|v| self.scrub_json_in_place(v)),
            Json::Object(map) => {
                if map
                    .keys()
                    .any(|key| matches!(self.scrubbed(key), Cow::Owned(_)))
                {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(key, value)| (self.scrub(&key), value))
                        .collect();
                }
                map.values_mut().for_each(|v| self.scrub_json_in_place(v));
            }
            _ => {}
        }
    }
}

/// A short secret written verbatim is hidden only as a word of its own: a key `x` must
/// not turn `max_tokens` into `ma[REDACTED]_tokens`. Real keys are long; a short value
/// (a test's key, a URL's password) is still hidden wherever it stands alone.
const SHORT_SECRET: usize = 8;

/// Whether the match at `range` of `text` is a short secret inside a longer word.
fn within_a_word(text: &str, range: std::ops::Range<usize>) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let Some(found) = text.get(range.clone()) else {
        return false;
    };
    let before = text.get(..range.start).and_then(|t| t.chars().next_back());
    let after = text.get(range.end..).and_then(|t| t.chars().next());
    let joined = |outside: Option<char>, edge: Option<char>| {
        outside.is_some_and(is_word) && edge.is_some_and(is_word)
    };
    found.len() < SHORT_SECRET
        && (joined(before, found.chars().next()) || joined(after, found.chars().next_back()))
}

/// A regex matching `secret` with each character as itself, as a JSON `\uXXXX` escape
/// (any case), as a percent escape, or (for `/`) as JSON's `\/`.
fn encodings(secret: &str) -> String {
    let mut pattern = String::new();
    for c in secret.chars() {
        let literal = regex::escape(c.encode_utf8(&mut [0; 4]));
        if c.is_ascii() {
            let code = u32::from(c);
            let _ = write!(
                pattern,
                r"(?:{literal}|\\u(?i:00{code:02x})|%(?i:{code:02x})"
            );
            if c == '/' {
                pattern.push_str(r"|\\/");
            }
            pattern.push(')');
        } else {
            pattern.push_str(&literal);
        }
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_of_every_secret_is_replaced() {
        let secrets = Secrets::new(["sk-123", "", "abc"]);
        assert_eq!(
            secrets.scrub("key sk-123 and sk-123, abc"),
            "key [REDACTED] and [REDACTED], [REDACTED]"
        );
    }

    #[test]
    fn json_and_percent_escaped_secrets_are_found() {
        let secrets = Secrets::new(["sk-a/b"]);
        for echoed in [
            r"sk\u002da\/b",
            r"\u0073k\u002Da\u002fb",
            "sk%2da%2Fb",
            r#"{"key":"sk\u002da/b"}"#,
        ] {
            let scrubbed = secrets.scrub(echoed);
            assert!(scrubbed.contains(REDACTED), "{echoed} → {scrubbed}");
            assert!(!scrubbed.contains("a/b") && !scrubbed.contains(r"a\/b"));
        }
    }

    #[test]
    fn url_credentials_are_hidden_even_when_unknown() {
        let text = "HTTP 500 from http://user:pw@host:8080/v1/chat and https://tok@x.y";
        assert_eq!(
            Secrets::default().scrub(text),
            "HTTP 500 from http://[REDACTED]@host:8080/v1/chat and https://[REDACTED]@x.y"
        );
        assert_eq!(
            Secrets::default().scrub("mail me@host, see http://host/a@b"),
            "mail me@host, see http://host/a@b"
        );
    }

    #[test]
    fn the_password_of_a_url_is_a_secret_wherever_it_appears() {
        let secrets = Secrets::of_url("http://alice:s3cr3t@host/v1");
        assert_eq!(secrets.scrub("denied for s3cr3t"), "denied for [REDACTED]");
        assert!(Secrets::of_url("http://host/v1@x").is_empty());
    }

    #[test]
    fn a_short_secret_is_hidden_as_a_word_not_inside_other_words() {
        let secrets = Secrets::new(["x", "k3y"]);
        assert_eq!(
            secrets.scrub(r#"{"max_tokens":5,"x":"k3y","k3yring":1} x"#),
            r#"{"max_tokens":5,"[REDACTED]":"[REDACTED]","k3yring":1} [REDACTED]"#
        );
        // A long key is hidden wherever it appears, inside words too.
        let secrets = Secrets::new(["sk-0123456789"]);
        assert_eq!(secrets.scrub("abcsk-0123456789def"), "abc[REDACTED]def");
    }

    #[test]
    fn a_longer_secret_containing_a_shorter_one_is_hidden_whole() {
        let secrets = Secrets::new(["pw", "user:pw"]);
        assert_eq!(secrets.scrub("user:pw"), REDACTED);
    }

    #[test]
    fn json_is_scrubbed_in_keys_and_values() {
        let secrets = Secrets::new(["k3y"]);
        let json = serde_json::json!({"k3y": ["a k3y", 1], "n": null});
        assert_eq!(
            secrets.scrub_json(&json),
            serde_json::json!({"[REDACTED]": ["a [REDACTED]", 1], "n": null})
        );
    }

    #[test]
    fn regex_metacharacters_in_a_secret_are_literal() {
        let secrets = Secrets::new(["a.b*c"]);
        assert_eq!(secrets.scrub("axbbc a.b*c"), "axbbc [REDACTED]");
    }
}
