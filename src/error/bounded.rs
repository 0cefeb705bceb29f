//! The map form of an error, bounded in size: nested subtask errors repeat their step
//! results and the model's answers at every level, so a deep failure can grow to
//! megabytes. Long strings and lists are shortened with a marker until the JSON fits.

use serde_json::{Map, Value as Json};

/// The longest message an error keeps, in bytes: a message that prints a value (`raise`
/// of a map holding the last error) would otherwise double with every level of escaping.
pub const MAX_MESSAGE: usize = 64 * 1024;

/// The largest details map (as JSON text) an error takes from code (`raise` of a map):
/// larger ones are shortened as the map form is, so re-raising never copies more.
pub const MAX_DETAILS: usize = 1024 * 1024;

/// `message`, cut with a marker to at most [`MAX_MESSAGE`] bytes when it is longer (so
/// a capped message is kept as it is when raised again).
pub fn cap_message(mut message: String) -> String {
    if message.len() <= MAX_MESSAGE {
        return message;
    }
    // Room for the marker: "…(" + 20 digits + " more bytes)".
    let mut end = MAX_MESSAGE - 40;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let more = message.len() - end;
    message.truncate(end);
    message.push_str(&format!("…({more} more bytes)"));
    message
}

/// A copy of `details`, shortened to [`MAX_DETAILS`] bytes of JSON when it is larger.
pub fn cap_details(details: &Map<String, Json>) -> Map<String, Json> {
    let whole = Json::Object(details.clone());
    match bounded(&whole, MAX_DETAILS) {
        Json::Object(map) => map,
        _ => Map::new(),
    }
}

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

/// The length of `value`'s JSON text, counted without building the text.
fn size(value: &Json) -> usize {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    fn messages_and_details_are_capped() {
        let long = "é".repeat(MAX_MESSAGE);
        let capped = cap_message(long.clone());
        assert!(capped.len() <= MAX_MESSAGE, "{}", capped.len());
        assert!(capped.ends_with(" more bytes)"), "{capped:.100}");
        assert_eq!(cap_message(capped.clone()), capped);
        assert_eq!(cap_message("short".into()), "short");
        let mut details = Map::new();
        details.insert("big".into(), json!("x".repeat(2 * MAX_DETAILS)));
        assert!(size(&Json::Object(cap_details(&details))) <= MAX_DETAILS);
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
