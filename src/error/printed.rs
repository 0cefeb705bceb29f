//! What a printed report shows of an error's details: each distinct error once. The map
//! form (`catch`, `--error-format json`) keeps everything; the text report states the
//! task calls crossed on one line with runs of repeated calls counted, and of the nested
//! `subtaskError`s of a sequence only the innermost, the error that happened.

use serde_json::{Map, Value as Json};

/// Entries of `details` that the report states elsewhere: the trace as the chain line,
/// the cause in the message, the nested errors by the innermost one's details.
const STATED_ELSEWHERE: &[&str] = &["trace", "cause", "subtaskError"];

/// A printed details line is cut after this many bytes.
const MAX_LINE: usize = 2_000;

/// The report's lines about the details: the chain of task calls, the error's own
/// details, and the details of the innermost error a sequence's failure wraps.
pub fn lines(details: &Map<String, Json>) -> Vec<String> {
    let chain = chain(details);
    // Without a chain line, a trace that names nothing is still worth showing.
    let own = unstated(details, chain.is_none());
    let cause = innermost(details).map(|inner| unstated(inner, false));
    let mut lines: Vec<String> = chain.into_iter().collect();
    if !own.is_empty() {
        lines.push(format!("details: {}", json_line(own)));
    }
    if let Some(cause) = cause.filter(|cause| !cause.is_empty()) {
        lines.push(format!("cause details: {}", json_line(cause)));
    }
    lines
}

/// The entries of `details` not stated elsewhere (the trace kept when asked).
fn unstated(details: &Map<String, Json>, keep_trace: bool) -> Map<String, Json> {
    details
        .iter()
        .filter(|(key, _)| {
            !STATED_ELSEWHERE.contains(&key.as_str()) || (keep_trace && key.as_str() == "trace")
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

fn json_line(map: Map<String, Json>) -> String {
    truncate(&Json::Object(map).to_string(), MAX_LINE)
}

/// The details of the innermost error under `subtaskError`s; `None` when there is no
/// nested error.
fn innermost(details: &Map<String, Json>) -> Option<&Map<String, Json>> {
    let mut inner = nested(details)?;
    while let Some(deeper) = nested(inner) {
        inner = deeper;
    }
    Some(inner)
}

/// The details of the error a `subtask_failure` wraps.
fn nested(details: &Map<String, Json>) -> Option<&Map<String, Json>> {
    details
        .get("subtaskError")
        .and_then(|e| e.get("details"))
        .and_then(Json::as_object)
}

/// A repeated group of calls is found among at most this many entries: recursion
/// through up to four tasks (or steps) is counted rather than listed.
const MAX_PERIOD: usize = 4;

/// The task calls and steps an error crossed, outermost first, on one line, from
/// `details.trace`: `in release › step 0 › check-file`. A run of the same calls is
/// printed once with a count: `in t ×100`, `in (a › step 0 › b › step 0) ×50`.
fn chain(details: &Map<String, Json>) -> Option<String> {
    let Some(Json::Array(trace)) = details.get("trace") else {
        return None;
    };
    let calls: Vec<String> = trace.iter().filter_map(call).collect();
    if calls.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let mut at = 0;
    while let Some(rest) = calls.get(at..).filter(|rest| !rest.is_empty()) {
        match longest_repeat(rest) {
            Some((period, times)) => {
                let group = rest.get(..period).unwrap_or_default().join(" › ");
                parts.push(if group.contains(" › ") {
                    format!("({group}) ×{times}")
                } else {
                    format!("{group} ×{times}")
                });
                at += period * times;
            }
            None => {
                parts.extend(rest.first().cloned());
                at += 1;
            }
        }
    }
    Some(format!("in {}", parts.join(" › ")))
}

/// One trace entry as the chain names it: `task`, `step i` or `task › step i`.
fn call(entry: &Json) -> Option<String> {
    let task = entry.get("task").and_then(Json::as_str).map(str::to_owned);
    let step = entry
        .get("step")
        .and_then(Json::as_u64)
        .map(|i| format!("step {i}"));
    let words: Vec<String> = task.into_iter().chain(step).collect();
    (!words.is_empty()).then(|| words.join(" › "))
}

/// The group at the start of `calls` that repeats at once, covering the most calls
/// (the shortest group on a tie): its length and how many times it comes in a row.
fn longest_repeat(calls: &[String]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for period in 1..=MAX_PERIOD.min(calls.len() / 2) {
        let group = calls.get(..period)?;
        let times = calls
            .chunks_exact(period)
            .take_while(|chunk| *chunk == group)
            .count();
        let covers = |(p, t): (usize, usize)| p * t;
        if times >= 2 && best.is_none_or(|b| covers((period, times)) > covers(b)) {
            best = Some((period, times));
        }
    }
    best
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text.get(..end).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn details(value: Json) -> Map<String, Json> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn trace(tasks: &[&str]) -> Map<String, Json> {
        let entries: Vec<Json> = tasks
            .iter()
            .map(|t| json!({"task": t, "step": null, "file": "a.sexp", "line": 1}))
            .collect();
        details(json!({ "trace": entries }))
    }

    #[test]
    fn runs_of_the_same_calls_are_counted() {
        let mut tasks = vec!["main"];
        tasks.extend(["t"; 100]);
        tasks.push("leaf");
        assert_eq!(
            chain(&trace(&tasks)).as_deref(),
            Some("in main › t ×100 › leaf")
        );
        let cycle: Vec<&str> = ["a", "b", "c"].repeat(5);
        assert_eq!(chain(&trace(&cycle)).as_deref(), Some("in (a › b › c) ×5"));
        assert_eq!(
            chain(&trace(&["a", "b", "a"])).as_deref(),
            Some("in a › b › a")
        );
        assert_eq!(chain(&trace(&["a", "a"])).as_deref(), Some("in a ×2"));
    }

    #[test]
    fn a_step_counts_with_its_task() {
        let entry = |task| json!({"task": task, "step": 0, "file": null, "line": null});
        let entries: Vec<Json> = (0..6)
            .map(|i| entry(if i % 2 == 0 { "a" } else { "b" }))
            .collect();
        let details = details(json!({ "trace": entries }));
        assert_eq!(
            chain(&details).as_deref(),
            Some("in (a › step 0 › b › step 0) ×3")
        );
    }

    #[test]
    fn nested_errors_are_shown_once_by_the_innermost() {
        let inner = json!({"type": "TASK_FAILURE", "details": {"code": 3, "trace": []}});
        let middle = json!({"type": "TASK_FAILURE", "details": {
            "step": 0, "cause": "x", "subtaskError": inner, "trace": []}});
        let outer = details(json!({"step": 1, "step_results": ["r"], "cause": "x",
            "subtaskError": middle,
            "trace": [{"task": "top", "step": 1, "file": null, "line": null}]}));
        assert_eq!(
            lines(&outer),
            [
                "in top › step 1",
                "details: {\"step\":1,\"step_results\":[\"r\"]}",
                "cause details: {\"code\":3}",
            ]
        );
    }

    #[test]
    fn a_trace_that_names_nothing_stays_in_the_details() {
        let entries = json!([{"task": null, "step": null}]);
        let lines = lines(&details(json!({ "trace": entries })));
        assert_eq!(
            lines,
            ["details: {\"trace\":[{\"task\":null,\"step\":null}]}"]
        );
    }
}
