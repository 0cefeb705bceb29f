//! The price table: USD per million tokens, per model: input, output, and the cached
//! input prices where the provider discounts them. Embedded for common OpenAI and
//! Anthropic models; `$TASKLISP_PRICES` or `~/.config/tasklisp/prices.json` adds models
//! or overrides them:
//! `{"my-model": {"input": 0.5, "output": 1.5, "cached_input": 0.05, "cache_write": 0.6}}`
//! (the last two optional).

use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// USD per million input tokens.
    pub input: f64,
    /// USD per million output tokens.
    pub output: f64,
    /// USD per million input tokens read from the provider's prompt cache; `None`: the
    /// input price.
    pub cached_input: Option<f64>,
    /// USD per million input tokens written to the prompt cache (Anthropic's 5-minute
    /// cache writes); `None`: the input price.
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of a call: of its `input` tokens, those `cached` at the cached-input
    /// price, those `written` to the cache at the cache-write price, the rest at the
    /// input price.
    pub fn cost(&self, input: u64, output: u64, cached: u64, written: u64) -> f64 {
        let cached = cached.min(input);
        let written = written.min(input - cached);
        let plain = input - cached - written;
        (plain as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + output as f64 * self.output)
            / 1e6
    }
}

/// A model and its prices: input, output, cached input, cache write.
type PriceRow = (&'static str, f64, f64, Option<f64>, Option<f64>);

/// List prices (USD per million tokens): input, output, cached input, cache write.
/// OpenAI discounts cached input (no write price); Anthropic reads its cache at a tenth
/// of the input price and writes it (5-minute entries) at 1.25 times it.
#[rustfmt::skip]
const EMBEDDED: &[PriceRow] = &[
    ("gpt-5", 1.25, 10.0, Some(0.125), None),
    ("gpt-5-mini", 0.25, 2.0, Some(0.025), None),
    ("gpt-5-nano", 0.05, 0.40, Some(0.005), None),
    ("gpt-4.1", 2.0, 8.0, Some(0.50), None),
    ("gpt-4.1-mini", 0.40, 1.60, Some(0.10), None),
    ("gpt-4.1-nano", 0.10, 0.40, Some(0.025), None),
    ("gpt-4o", 2.50, 10.0, Some(1.25), None),
    ("gpt-4o-mini", 0.15, 0.60, Some(0.075), None),
    ("gpt-4-turbo", 10.0, 30.0, None, None),
    ("gpt-4", 30.0, 60.0, None, None),
    ("gpt-3.5-turbo", 0.50, 1.50, None, None),
    ("o1", 15.0, 60.0, Some(7.50), None),
    ("o1-mini", 1.10, 4.40, Some(0.55), None),
    ("o3", 2.0, 8.0, Some(0.50), None),
    ("o3-mini", 1.10, 4.40, Some(0.55), None),
    ("o4-mini", 1.10, 4.40, Some(0.275), None),
    ("claude-opus-4-5", 5.0, 25.0, Some(0.50), Some(6.25)),
    ("claude-opus-4-1", 15.0, 75.0, Some(1.50), Some(18.75)),
    ("claude-opus-4", 15.0, 75.0, Some(1.50), Some(18.75)),
    ("claude-sonnet-4-5", 3.0, 15.0, Some(0.30), Some(3.75)),
    ("claude-sonnet-4", 3.0, 15.0, Some(0.30), Some(3.75)),
    ("claude-haiku-4-5", 1.0, 5.0, Some(0.10), Some(1.25)),
    ("claude-3-7-sonnet", 3.0, 15.0, Some(0.30), Some(3.75)),
    ("claude-3-5-sonnet", 3.0, 15.0, Some(0.30), Some(3.75)),
    ("claude-3-5-haiku", 0.80, 4.0, Some(0.08), Some(1.0)),
    ("claude-3-opus", 15.0, 75.0, Some(1.50), Some(18.75)),
    ("claude-3-haiku", 0.25, 1.25, Some(0.03), Some(0.30)),
];

pub struct Prices {
    table: HashMap<String, Price>,
}

impl Prices {
    /// The embedded table with the user's file over it. A file that cannot be read or
    /// parsed is reported once (a notice, see `crate::notice`) and ignored.
    pub fn load(env: &dyn Fn(&str) -> Option<String>) -> Prices {
        let mut prices = Prices::embedded();
        let file = env("TASKLISP_PRICES").map(PathBuf::from).or_else(|| {
            dirs::config_dir()
                .map(|d| d.join("tasklisp/prices.json"))
                .filter(|p| p.exists())
        });
        if let Some(path) = file {
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| prices.add_json(&text))
            {
                Ok(()) => {}
                Err(e) => crate::notice::emit(&format!(
                    "tasklisp: ignoring prices in {}: {e}",
                    path.display()
                )),
            }
        }
        prices
    }

    pub fn embedded() -> Prices {
        Prices {
            table: EMBEDDED
                .iter()
                .map(|&(model, input, output, cached_input, cache_write)| {
                    let price = Price {
                        input,
                        output,
                        cached_input,
                        cache_write,
                    };
                    (model.to_owned(), price)
                })
                .collect(),
        }
    }

    /// Adds or replaces prices from `{"model": {"input": n, "output": n}}`.
    pub fn add_json(&mut self, text: &str) -> Result<(), String> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let map = json.as_object().ok_or("expected a map of models")?;
        for (model, price) in map {
            let rate = |key: &str| {
                price[key]
                    .as_f64()
                    .filter(|n| n.is_finite() && *n >= 0.0)
                    .ok_or_else(|| {
                        format!("`{model}` needs a number \"{key}\" (USD per million tokens)")
                    })
            };
            let optional = |key: &str| match price.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(_) => rate(key).map(Some),
            };
            let price = Price {
                input: rate("input")?,
                output: rate("output")?,
                cached_input: optional("cached_input")?,
                cache_write: optional("cache_write")?,
            };
            self.table.insert(model.clone(), price);
        }
        Ok(())
    }

    /// The price of `model`: its own entry, else the longest entry it extends with a
    /// dated or other suffix (`gpt-4o-mini-2024-07-18` is `gpt-4o-mini`).
    pub fn get(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.table.get(model) {
            return Some(*price);
        }
        self.table
            .iter()
            .filter(|(name, _)| {
                model
                    .strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(['-', '@', ':']))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| *price)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_models_take_the_longest_matching_entry() {
        let prices = Prices::embedded();
        assert_eq!(
            prices.get("gpt-4o-mini-2024-07-18"),
            prices.get("gpt-4o-mini")
        );
        assert_eq!(prices.get("gpt-4o-2024-08-06"), prices.get("gpt-4o"));
        assert_ne!(prices.get("gpt-4o"), prices.get("gpt-4"));
        assert!(prices.get("claude-sonnet-4-5-20250929").is_some());
        assert_eq!(prices.get("llama3"), None);
        assert_eq!(prices.get("gpt-4omega"), None);
    }

    #[test]
    fn cost_is_per_million_tokens() {
        let price = Price {
            input: 2.0,
            output: 10.0,
            cached_input: None,
            cache_write: None,
        };
        assert!((price.cost(1_000_000, 500_000, 0, 0) - 7.0).abs() < 1e-12);
    }

    #[test]
    fn cached_input_is_priced_at_the_discount_and_writes_at_the_write_price() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cached_input: Some(0.3),
            cache_write: Some(3.75),
        };
        let cost = |price: Price| price.cost(1_000_000, 0, 600_000, 300_000);
        // 0.1M plain at 3, 0.6M cached at 0.3, 0.3M written at 3.75.
        assert!((cost(price) - (0.3 + 0.18 + 1.125)).abs() < 1e-12);
        let undiscounted = Price {
            cached_input: None,
            cache_write: None,
            ..price
        };
        assert!((cost(undiscounted) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn a_file_adds_and_overrides() {
        let mut prices = Prices::embedded();
        prices
            .add_json(
                r#"{"local": {"input": 1, "output": 2}, "gpt-4o": {"input": 0, "output": 0}}"#,
            )
            .unwrap();
        assert_eq!(prices.get("local").map(|p| p.output), Some(2.0));
        assert_eq!(prices.get("gpt-4o").map(|p| p.input), Some(0.0));
        assert!(prices.add_json(r#"{"x": {"input": "cheap"}}"#).is_err());
        prices
            .add_json(r#"{"c": {"input": 1, "output": 2, "cached_input": 0.1}}"#)
            .unwrap();
        assert_eq!(prices.get("c").and_then(|p| p.cached_input), Some(0.1));
        assert!(prices
            .add_json(r#"{"c": {"input": 1, "output": 2, "cache_write": -1}}"#)
            .is_err());
        assert!(prices.add_json("[1]").is_err());
    }
}
