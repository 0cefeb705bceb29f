//! `tasklisp test --models m1,m2,…`: every test once per model. The models as the
//! command line names them, each one's cassette, what a run cost, and the test × model
//! table printed after the summary (`html.rs` and `json.rs` give the same results).

use super::report::Outcome;
use crate::prices::Prices;
use crate::provider::ProviderSettings;
use crate::task::observe::Spent;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tests run once per column: the model it compares (`None` when `--models` was
/// not given: the configured provider as it is) and the provider settings that run it.
#[derive(Clone, Debug)]
pub struct Column {
    pub label: Option<String>,
    pub settings: ProviderSettings,
}

/// A model `--models` names: `MODEL` (of the configured provider) or `PROVIDER:MODEL`,
/// split at the first colon (so `ollama:llama3:8b` is `llama3:8b` on `ollama`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelChoice {
    /// As written: the table's column heading.
    pub label: String,
    pub provider: Option<String>,
    pub model: String,
}

/// Reads `--models`; an empty name, an unknown provider or a model named twice (or two
/// that would share a cassette) is bad usage, the message saying which.
pub fn parse_models(names: &[String]) -> Result<Vec<ModelChoice>, String> {
    let mut choices: Vec<ModelChoice> = Vec::new();
    for name in names {
        let name = name.trim();
        let (provider, model) = match name.split_once(':') {
            Some((provider, model)) => (Some(provider), model),
            None => (None, name),
        };
        if model.is_empty() || provider.is_some_and(str::is_empty) {
            let place = if name.is_empty() {
                String::new()
            } else {
                format!(" in `{name}`")
            };
            return Err(format!(
                "--models: an empty model name{place} (write --models MODEL,PROVIDER:MODEL,…)"
            ));
        }
        if let Some(provider) = provider.filter(|p| !crate::provider::is_known(p)) {
            let known = crate::provider::kinds::unknown_provider(provider);
            return Err(format!("--models `{name}`: {}", known.message()));
        }
        if let Some(twin) = choices.iter().find(|c| slug(&c.label) == slug(name)) {
            return Err(format!(
                "--models names `{}` and `{name}`, which would share a cassette",
                twin.label
            ));
        }
        choices.push(ModelChoice {
            label: name.to_owned(),
            provider: provider.map(str::to_owned),
            model: model.to_owned(),
        });
    }
    Ok(choices)
}

/// A model's name as a part of a file name: anything but letters, digits, `.`, `-` and
/// `_` becomes `_`.
fn slug(label: &str) -> String {
    label
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect()
}

/// The cassette of a test file: `dir/review.test.sexp` → `dir/review.test.cassette.jsonl`,
/// and for the model `openai:gpt-4o` of a comparison
/// `dir/review.test@openai_gpt-4o.cassette.jsonl`.
pub fn cassette_path(path: &Path, model: Option<&str>) -> PathBuf {
    match model {
        None => path.with_extension("cassette.jsonl"),
        Some(model) => {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            path.with_file_name(format!("{stem}@{}.cassette.jsonl", slug(model)))
        }
    }
}

/// What a test's model calls cost at the price of the model its column ran (the
/// embedded table or `$TASKLISP_PRICES`), cached tokens counted as input: `None` when
/// that price is unknown, and 0 for a test that used no tokens. Replayed answers are
/// priced as if they had been asked, so a comparison from cassettes shows what the
/// recorded run cost.
pub fn cost(prices: &Prices, model: Option<&str>, spent: &Spent) -> Option<f64> {
    if spent.input_tokens == 0 && spent.output_tokens == 0 {
        return Some(0.0);
    }
    let price = prices.get(model?)?;
    Some(price.cost(spent.input_tokens, spent.output_tokens, 0, 0))
}

/// The tests in the order of their ids, each with its outcome under each column.
pub fn grid<'a>(
    outcomes: &'a [Outcome],
    labels: &[Option<String>],
) -> Vec<(String, Vec<Option<&'a Outcome>>)> {
    let mut tests: Vec<String> = outcomes.iter().map(Outcome::test_id).collect();
    tests.sort();
    tests.dedup();
    tests
        .into_iter()
        .map(|test| {
            let cells = labels
                .iter()
                .map(|label| {
                    outcomes
                        .iter()
                        .find(|o| o.test_id() == test && &o.model == label)
                })
                .collect();
            (test, cells)
        })
        .collect()
}

/// A column's sums: tests passed and failed, tokens, cost (`None` when a test's is
/// unknown), time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: Option<f64>,
    pub duration: Duration,
}

pub fn totals<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Totals {
    outcomes.fold(
        Totals {
            cost: Some(0.0),
            ..Totals::default()
        },
        |sum, o| Totals {
            passed: sum.passed + usize::from(o.passed()),
            failed: sum.failed + usize::from(!o.passed()),
            input_tokens: sum.input_tokens.saturating_add(o.spent.input_tokens),
            output_tokens: sum.output_tokens.saturating_add(o.spent.output_tokens),
            cost: sum.cost.zip(o.cost).map(|(a, b)| a + b),
            duration: sum.duration + o.duration,
        },
    )
}

/// `$0.000123`; `—` for a price not known.
pub fn cost_text(cost: Option<f64>) -> String {
    cost.map_or_else(|| "—".to_owned(), |usd| format!("${usd:.6}"))
}

/// `41 ms`, or `2.35 s` from a second on.
pub fn latency_text(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// One cell of the table: `ok, 120 tok, $0.000120, 41 ms`.
fn cell(outcome: Option<&Outcome>) -> String {
    let Some(o) = outcome else {
        return "not run".to_owned();
    };
    format!(
        "{}, {} tok, {}, {}",
        if o.passed() { "ok" } else { "FAILED" },
        o.spent.input_tokens.saturating_add(o.spent.output_tokens),
        cost_text(o.cost),
        latency_text(o.duration)
    )
}

fn total_cell(totals: &Totals) -> String {
    format!(
        "{} passed, {} failed, {} tok, {}, {}",
        totals.passed,
        totals.failed,
        totals.input_tokens.saturating_add(totals.output_tokens),
        cost_text(totals.cost),
        latency_text(totals.duration)
    )
}

/// The test × model table, one row per test and a last row of totals, its columns
/// padded to line up (a Markdown table as well).
pub fn table(outcomes: &[Outcome], labels: &[Option<String>]) -> String {
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("test".to_owned())
        .chain(labels.iter().map(|l| l.clone().unwrap_or_default()))
        .collect()];
    for (test, cells) in grid(outcomes, labels) {
        rows.push(
            std::iter::once(test)
                .chain(cells.into_iter().map(cell))
                .collect(),
        );
    }
    let sums = labels
        .iter()
        .map(|label| total_cell(&totals(outcomes.iter().filter(|o| &o.model == label))));
    rows.push(std::iter::once("total".to_owned()).chain(sums).collect());
    let widths: Vec<usize> = (0..=labels.len())
        .map(|i| {
            rows.iter()
                .filter_map(|row| row.get(i))
                .map(|text| text.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(text, width)| format!("{text:<width$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut text = String::new();
    for (i, row) in rows.into_iter().enumerate() {
        text.push_str(&line(row));
        if i == 0 {
            text.push_str(&line(rule.clone()).replace(' ', "-"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        text.split(',').map(str::to_owned).collect()
    }

    #[test]
    fn models_are_names_or_provider_colon_name() {
        let choices =
            parse_models(&names("gpt-4o,anthropic:claude-3-5-haiku,ollama:llama3:8b")).unwrap();
        let parts: Vec<(Option<&str>, &str)> = choices
            .iter()
            .map(|c| (c.provider.as_deref(), c.model.as_str()))
            .collect();
        assert_eq!(
            parts,
            [
                (None, "gpt-4o"),
                (Some("anthropic"), "claude-3-5-haiku"),
                (Some("ollama"), "llama3:8b")
            ]
        );
        assert_eq!(choices[1].label, "anthropic:claude-3-5-haiku");
    }

    #[test]
    fn bad_model_lists_say_what_is_wrong() {
        for (list, says) in [
            ("a,,b", "an empty model name (write"),
            ("openai:", "an empty model name in `openai:`"),
            (":m", "an empty model name"),
            ("nope:m", "unknown provider: nope (known:"),
            ("a,a", "names `a` and `a`"),
            ("a:b,a_b", "unknown provider: a"),
            ("openai:x,openai_x", "which would share a cassette"),
        ] {
            let error = parse_models(&names(list)).unwrap_err();
            assert!(error.contains(says), "{list}: {error}");
        }
    }

    #[test]
    fn each_model_has_its_own_cassette() {
        let file = Path::new("ex/review.test.sexp");
        assert_eq!(
            cassette_path(file, None),
            Path::new("ex/review.test.cassette.jsonl")
        );
        assert_eq!(
            cassette_path(file, Some("openai:gpt-4.1")),
            Path::new("ex/review.test@openai_gpt-4.1.cassette.jsonl")
        );
    }

    #[test]
    fn cost_is_the_tokens_at_the_models_price() {
        let prices = Prices::embedded();
        let spent = Spent {
            calls: 1,
            input_tokens: 1_000_000,
            output_tokens: 0,
            cost: 0.0,
        };
        let priced = cost(&prices, Some("claude-3-haiku"), &spent);
        assert_eq!(priced, Some(0.25));
        assert_eq!(cost(&prices, Some("my-own-model"), &spent), None);
        assert_eq!(cost(&prices, None, &spent), None);
        assert_eq!(cost(&prices, None, &Spent::default()), Some(0.0));
        assert_eq!(cost_text(None), "—");
        assert_eq!(cost_text(Some(0.00012)), "$0.000120");
        assert_eq!(latency_text(Duration::from_millis(41)), "41 ms");
        assert_eq!(latency_text(Duration::from_millis(2346)), "2.35 s");
    }
}
