//! The map form of an error, bounded in size: nested subtask errors repeat their step
//! results and the model's answers at every level, so a deep failure can grow to
//! megabytes. Long strings and lists are shortened with a marker until the JSON fits.

use serde_json::{Map, Value as Json};

/// The shortening limits tried in turn: (characters of a string, items of a list,
/// levels of nesting).
const STEPS: [(usize, usize, usize); 6] = [
    (4096, 100, 64),
    (1024, 20, 32),
    (256, 8, 16),
    (80, 3, 8),
    (40, 2, 6),
    (20, 1, 4),
];

/// `value` as it is if its JSON text is at most `max` bytes, else shortened to fit.
pub fn bounded(value: &Json, max: usize) -> Json {
    if size(value) <= max {
        return value.clone();
    }
    for (chars, items, depth) in STEPS {
        let short = shorten(value, chars, items, depth);
        if size(&short) <= max {
            return short;
        }
    }
    let mut last = Map::new();
    for key in ["type", "reason"] {
        if let Some(v) = value.get(key) {
            last.insert(key.into(), v.clone());
        }
    }
    let message = value.get("message").and_then(Json::as_str).unwrap_or("");
    last.insert("message".into(), Json::from(cut(message, 1000)));
    last.insert("details".into(), Json::from("…(too large to show)"));
    Json::Object(last)
}

fn size(value: &Json) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |text| text.len())
}

fn shorten(value: &Json, chars: usize, items: usize, depth: usize) -> Json {
    if depth == 0 {
        return Json::from("…(nested too deep)");
    }
    match value {
        Json::String(text) => Json::from(cut(text, chars)),
        Json::Array(list) => {
            let mut out: Vec<Json> = list
                .iter()
                .take(items)
                .map(|v| shorten(v, chars, items, depth - 1))
                .collect();
            if list.len() > items {
                out.push(Json::from(format!("…({} more)", list.len() - items)));
            }
            Json::Array(out)
        }
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shorten(v, chars, items, depth - 1)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The first `chars` characters of `text`, with a marker saying how much was cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_owned(),
        Some((end, _)) => format!(
            "{}…({} more characters)",
            &text[..end],
            text[end..].chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_values_are_kept_and_large_ones_fit() {
        let small = json!({"message": "x", "details": {"a": [1, 2]}});
        assert_eq!(bounded(&small, 1000), small);
        let big = json!({
            "message": "boom",
            "details": {"content": "y".repeat(200_000), "step_results": vec!["z".repeat(5000); 50]}
        });
        let short = bounded(&big, 64 * 1024);
        assert!(size(&short) <= 64 * 1024);
        assert_eq!(short["message"], "boom");
        let content = short["details"]["content"].as_str().unwrap_or("");
        assert!(content.ends_with("more characters)"), "{content:.100}");
    }

    #[test]
    fn deep_nesting_is_cut() {
        let mut deep = json!("x".repeat(100));
        for _ in 0..200 {
            deep = json!({"subtaskError": deep, "pad": "p".repeat(2000)});
        }
        let short = bounded(&json!({"message": "m", "details": deep}), 64 * 1024);
        assert!(size(&short) <= 64 * 1024);
    }
}
