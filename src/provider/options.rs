//! Model options — `temperature`, `max_tokens`, `top_p`, `stop`, `seed`,
//! `frequency_penalty`, `presence_penalty`, `reasoning_effort`, `service_tier` and
//! `extra_body` — checked once where they are given, layered (task over scope over
//! provider over flag) and sent in each provider's spelling.

use serde_json::{Map, Value as Json};

/// The options, in the order they are printed and sent.
pub const NAMES: [&str; 10] = [
    "temperature",
    "max_tokens",
    "top_p",
    "stop",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "reasoning_effort",
    "service_tier",
    "extra_body",
];

/// The values `reasoning_effort` takes, least first.
pub const REASONING_EFFORTS: [&str; 4] = ["minimal", "low", "medium", "high"];

/// The option a name spells, accepting kebab case (`max-tokens`) for `max_tokens`.
pub fn canonical(name: &str) -> Option<&'static str> {
    let spelled = name.replace('-', "_");
    NAMES.iter().find(|known| **known == spelled).copied()
}

/// Every spelling `canonical` accepts, for option parsers that need the list.
pub const SPELLINGS: [&str; 17] = [
    "temperature",
    "max_tokens",
    "max-tokens",
    "top_p",
    "top-p",
    "stop",
    "seed",
    "frequency_penalty",
    "frequency-penalty",
    "presence_penalty",
    "presence-penalty",
    "reasoning_effort",
    "reasoning-effort",
    "service_tier",
    "service-tier",
    "extra_body",
    "extra-body",
];

/// A set of options, each checked. Later layers are merged in with `over`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelOptions(Map<String, Json>);

impl ModelOptions {
    /// Sets one option; the error says which names and values are allowed.
    pub fn set(&mut self, name: &str, value: Json) -> Result<(), String> {
        let Some(name) = canonical(name) else {
            return Err(format!(
                "unknown model option `{name}` (known: {})",
                NAMES.join(", ")
            ));
        };
        if value.is_null() {
            self.0.shift_remove(name);
            return Ok(());
        }
        check(name, &value)?;
        self.0.insert(name.to_owned(), value);
        Ok(())
    }

    /// Reads a map of options (`{"temperature" 0 "max-tokens" 10}`).
    pub fn from_map(map: &Map<String, Json>) -> Result<ModelOptions, String> {
        let mut options = ModelOptions::default();
        for (name, value) in map {
            options.set(name, value.clone())?;
        }
        Ok(options)
    }

    /// These options, with `base`'s for the ones not set here.
    pub fn over(&self, base: &ModelOptions) -> ModelOptions {
        let mut merged = Map::new();
        for name in NAMES {
            if let Some(value) = self.0.get(name).or_else(|| base.0.get(name)) {
                merged.insert(name.to_owned(), value.clone());
            }
        }
        ModelOptions(merged)
    }

    pub fn get(&self, name: &str) -> Option<&Json> {
        self.0.get(name)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The options as a JSON map, in `NAMES` order.
    pub fn to_json(&self) -> Json {
        Json::Object(self.to_map())
    }

    /// The map of `to_json`, for callers that add a key.
    pub fn to_map(&self) -> Map<String, Json> {
        self.over(&ModelOptions::default()).0
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Json)> {
        self.0.iter()
    }

    /// The options a request body carries under their own names: all but `extra_body`,
    /// which `merge_extra_body` adds last.
    pub fn fields(&self) -> impl Iterator<Item = (&String, &Json)> {
        self.0.iter().filter(|(name, _)| *name != "extra_body")
    }

    /// Sets every field of `extra_body` in `body` as it is, over what tasklisp wrote: the
    /// way to send a field tasklisp does not model.
    pub fn merge_extra_body(&self, body: &mut Map<String, Json>) {
        if let Some(Json::Object(extra)) = self.0.get("extra_body") {
            for (name, value) in extra {
                body.insert(name.clone(), value.clone());
            }
        }
    }
}

/// Refuses a value the option cannot take, before any server sees it.
fn check(name: &str, value: &Json) -> Result<(), String> {
    let number_in = |low: f64, high: f64| value.as_f64().is_some_and(|x| x >= low && x <= high);
    let ok = match name {
        "temperature" => number_in(0.0, 2.0),
        "frequency_penalty" | "presence_penalty" => number_in(-2.0, 2.0),
        "reasoning_effort" => value
            .as_str()
            .is_some_and(|effort| REASONING_EFFORTS.contains(&effort)),
        "service_tier" => value.as_str().is_some_and(|tier| !tier.is_empty()),
        "extra_body" => value.is_object(),
        "top_p" => number_in(0.0, 1.0),
        "max_tokens" => value.as_u64().is_some_and(|n| n > 0),
        "seed" => value.is_i64() || value.is_u64(),
        "stop" => match value {
            Json::String(_) => true,
            Json::Array(items) => items.iter().all(Json::is_string),
            _ => false,
        },
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let expected = match name {
        "temperature" => "a number from 0 to 2",
        "top_p" => "a number from 0 to 1",
        "max_tokens" => "a positive integer",
        "seed" => "an integer",
        "frequency_penalty" | "presence_penalty" => "a number from -2 to 2",
        "reasoning_effort" => "one of \"minimal\", \"low\", \"medium\", \"high\"",
        "service_tier" => "a tier's name (\"auto\", \"flex\", …)",
        "extra_body" => "a map of request fields ({\"field\" value …})",
        _ => "a string or a list of strings",
    };
    Err(format!(
        "model option `{name}` must be {expected} (got {})",
        crate::provider::http::excerpt(&value.to_string(), 200)
    ))
}

/// `-o NAME VALUE`'s value: JSON when it reads as JSON (`0.2`, `["a"]`), else the text.
pub fn parse_flag_value(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(pairs: &[(&str, Json)]) -> ModelOptions {
        let mut options = ModelOptions::default();
        for (name, value) in pairs {
            options.set(name, value.clone()).unwrap();
        }
        options
    }

    #[test]
    fn kebab_case_names_are_the_same_option() {
        assert_eq!(canonical("max-tokens"), Some("max_tokens"));
        assert_eq!(canonical("top-p"), Some("top_p"));
        assert_eq!(canonical("temprature"), None);
        for spelling in SPELLINGS {
            assert!(canonical(spelling).is_some(), "{spelling}");
        }
    }

    #[test]
    fn the_upper_layer_wins_and_order_is_fixed() {
        let task = options(&[("seed", json!(7)), ("temperature", json!(0))]);
        let flag = options(&[("temperature", json!(1)), ("max-tokens", json!(5))]);
        assert_eq!(
            task.over(&flag).to_json().to_string(),
            r#"{"temperature":0,"max_tokens":5,"seed":7}"#
        );
    }

    #[test]
    fn bad_values_and_names_are_refused() {
        let mut set = ModelOptions::default();
        for (name, value) in [
            ("temperature", json!(3)),
            ("temperature", json!("hot")),
            ("top_p", json!(1.5)),
            ("max_tokens", json!(0)),
            ("max_tokens", json!(1.5)),
            ("seed", json!("x")),
            ("stop", json!([1])),
            ("colour", json!(1)),
            ("frequency_penalty", json!(3)),
            ("presence-penalty", json!("x")),
            ("reasoning_effort", json!("extreme")),
            ("reasoning-effort", json!(1)),
            ("service_tier", json!("")),
            ("extra_body", json!([1])),
            ("extra-body", json!("{}")),
        ] {
            assert!(set.set(name, value.clone()).is_err(), "{name} {value}");
        }
        assert!(set.is_empty());
        set.set("stop", json!(["END", "\n"])).unwrap();
        set.set("stop", Json::Null).unwrap();
        assert!(set.is_empty());
    }

    #[test]
    fn the_open_options_are_checked_and_named_in_the_error() {
        let mut set = ModelOptions::default();
        let error = set.set("reasoning-effort", json!("extreme")).unwrap_err();
        assert!(error.contains("`reasoning_effort`"), "{error}");
        assert!(error.contains("\"minimal\""), "{error}");
        let error = set.set("extra-body", json!([1])).unwrap_err();
        assert!(error.contains("`extra_body` must be a map"), "{error}");
        set.set("reasoning_effort", json!("low")).unwrap();
        set.set("extra-body", json!({"top_k": 5})).unwrap();
        set.set("presence_penalty", json!(-1.5)).unwrap();
        set.set("service-tier", json!("flex")).unwrap();
        assert_eq!(
            set.to_json().to_string(),
            r#"{"presence_penalty":-1.5,"reasoning_effort":"low","service_tier":"flex","extra_body":{"top_k":5}}"#
        );
    }

    #[test]
    fn flag_values_are_json_or_text() {
        assert_eq!(parse_flag_value("0.5"), json!(0.5));
        assert_eq!(parse_flag_value("END"), json!("END"));
        assert_eq!(parse_flag_value("[\"a\"]"), json!(["a"]));
    }
}
