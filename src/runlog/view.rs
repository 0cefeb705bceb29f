//! `tasklisp log` as text: the table of runs and one run's call tree.

use serde_json::Value as Json;
use std::collections::HashMap;
use std::fmt::Write;

/// One line per run: id, start (UTC), calls, tokens, cost, status, script.
pub fn runs_table(runs: &[Json]) -> String {
    let mut out = String::from(
        "RUN           STARTED (UTC)        CALLS   TOKENS      COST  STATUS       SCRIPT\n",
    );
    for run in runs {
        let tokens = number(&run["input_tokens"]) + number(&run["output_tokens"]);
        let _ = writeln!(
            out,
            "{:<12}  {:<19}  {:>5}  {:>7}  {:>8}  {:<11}  {} {}",
            text(&run["id"]),
            text(&run["started"]),
            number(&run["calls"]),
            tokens,
            cost(&run["cost"]),
            text(&run["status"]),
            text(&run["command"]),
            text(&run["script"]).replace('\n', " "),
        );
    }
    out
}

/// The calls of a run as a tree: task calls with the calls made inside them indented.
pub fn call_tree(calls: &[Json]) -> String {
    let mut children: HashMap<Option<i64>, Vec<&Json>> = HashMap::new();
    for call in calls {
        children
            .entry(call["parent"].as_i64())
            .or_default()
            .push(call);
    }
    let mut out = String::new();
    // A parent that is not in the log (its task call had not ended) shows its calls at
    // the top level.
    let known: std::collections::HashSet<i64> =
        calls.iter().filter_map(|c| c["seq"].as_i64()).collect();
    let mut roots: Vec<&Json> = calls
        .iter()
        .filter(|c| c["parent"].as_i64().is_none_or(|p| !known.contains(&p)))
        .collect();
    roots.sort_by_key(|c| c["seq"].as_i64());
    let mut stack: Vec<(&Json, usize)> = roots.into_iter().rev().map(|c| (c, 0)).collect();
    while let Some((call, depth)) = stack.pop() {
        let _ = writeln!(out, "{}{}", "  ".repeat(depth), call_line(call));
        if let Some(kids) = children.get(&call["seq"].as_i64()) {
            let mut kids = kids.clone();
            kids.sort_by_key(|c| c["seq"].as_i64());
            stack.extend(kids.into_iter().rev().map(|c| (c, depth + 1)));
        }
    }
    out
}

/// One line per batch job of a run: provider, job id, requests, how it stands.
pub fn batch_lines(batches: &[Json]) -> String {
    let mut out = String::new();
    for job in batches {
        let _ = write!(
            out,
            "batch {} {}  {} requests  {}",
            text(&job["provider"]),
            text(&job["job_id"]),
            number(&job["requests"]),
            text(&job["state"]),
        );
        if let Some(status) = job["provider_status"].as_str() {
            let _ = write!(
                out,
                " ({status}: {} done, {} failed)",
                number(&job["done"]),
                number(&job["failed"])
            );
        }
        if job["resumed"] == true {
            out.push_str("  resumed");
        }
        out.push('\n');
    }
    out
}

fn call_line(call: &Json) -> String {
    let mut line = format!(
        "#{} {} {}",
        number(&call["seq"]),
        text(&call["kind"]),
        text(&call["task"])
    );
    if call["kind"] == "model" {
        let _ = write!(
            line,
            "  {}/{}  {}+{} tokens  {}  {:.0} ms",
            text(&call["provider"]),
            text(&call["model"]),
            number(&call["input_tokens"]),
            number(&call["output_tokens"]),
            cost(&call["cost"]),
            call["latency_ms"].as_f64().unwrap_or(0.0),
        );
        if call["cache_hit"] == true {
            line.push_str("  cached");
        }
    }
    if call["status"] != "ok" {
        let message = call
            .pointer("/error/message")
            .and_then(Json::as_str)
            .unwrap_or("failed");
        let _ = write!(line, "  {}: {}", text(&call["status"]), message);
    } else if let Some(answer) = call["answer"].as_str() {
        let short = crate::eval::truncate_text(&answer.replace('\n', " "), 60);
        let _ = write!(line, "  → {short}");
    }
    line
}

fn text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => "-".to_owned(),
        other => other.to_string(),
    }
}

fn number(value: &Json) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn cost(value: &Json) -> String {
    value
        .as_f64()
        .map_or_else(|| "-".to_owned(), |usd| format!("${usd:.4}"))
}
