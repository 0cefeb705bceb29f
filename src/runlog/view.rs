//! `tasklisp log` as text: the table of runs and one run's call tree. Every text
//! from the log (a model's answer, an error, a task's or a script's name) is shown on one
//! line with its control characters made visible: an answer cannot clear the screen or
//! reach the clipboard of the person reading the log.

use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::io;

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
            status(run),
            text(&run["command"]),
            text(&run["script"]),
        );
    }
    if runs.iter().any(|run| run["resumable"] == true) {
        out.push_str("↻ can be resumed: tasklisp resume RUN\n");
    }
    out
}

/// The run's status, marked `↻` when `tasklisp resume` can take it up.
fn status(run: &Json) -> String {
    let status = text(&run["status"]);
    if run["resumable"] == true {
        format!("{status} ↻")
    } else {
        status
    }
}

/// Indentation stops growing at this depth; deeper calls name their depth instead, so a
/// chain of 300,000 nested calls prints in space linear in the calls.
const MAX_INDENT: usize = 32;

/// The calls of a run as a tree, written line by line to `out`: task calls with the
/// calls made inside them indented. A call whose parent is not in the log (its task call
/// had not ended) is shown at the top level; calls whose parent links form a cycle (a
/// damaged log) are shown too, from the lowest sequence number of each, marked.
pub fn write_call_tree(calls: &[Json], out: &mut dyn io::Write) -> io::Result<()> {
    let seq = |index: usize| calls.get(index).and_then(|call| call["seq"].as_i64());
    let known: HashSet<i64> = (0..calls.len()).filter_map(seq).collect();
    let mut children: HashMap<i64, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        match call["parent"].as_i64() {
            Some(parent) if known.contains(&parent) => {
                children.entry(parent).or_default().push(index)
            }
            _ => roots.push(index),
        }
    }
    let mut in_order: Vec<usize> = (0..calls.len()).collect();
    in_order.sort_by_key(|&index| seq(index));
    roots.sort_by_key(|&index| seq(index));
    for kids in children.values_mut() {
        kids.sort_by_key(|&index| seq(index));
    }
    let mut tree = Tree {
        calls,
        children,
        shown: vec![false; calls.len()],
        out,
    };
    for root in roots {
        tree.walk(root, "")?;
    }
    // Whatever is left is reached from no root: its parent links go round in a cycle.
    for index in in_order {
        if !tree.shown.get(index).copied().unwrap_or(true) {
            tree.walk(index, "  (parent links form a cycle)")?;
        }
    }
    Ok(())
}

/// The state of one [`write_call_tree`].
struct Tree<'a> {
    calls: &'a [Json],
    children: HashMap<i64, Vec<usize>>,
    /// Calls already written, by index: each is written once, however the links go.
    shown: Vec<bool>,
    out: &'a mut dyn io::Write,
}

impl Tree<'_> {
    /// Writes the call at `start` (with `mark` after it) and everything under it, depth
    /// first, without recursion.
    fn walk(&mut self, start: usize, mark: &str) -> io::Result<()> {
        let mut stack = vec![(start, 0usize)];
        while let Some((index, depth)) = stack.pop() {
            let (Some(call), Some(shown)) = (self.calls.get(index), self.shown.get_mut(index))
            else {
                continue;
            };
            if std::mem::replace(shown, true) {
                continue;
            }
            let indent = "  ".repeat(depth.min(MAX_INDENT));
            let deep = if depth > MAX_INDENT {
                format!("[depth {depth}] ")
            } else {
                String::new()
            };
            let mark = if index == start { mark } else { "" };
            writeln!(self.out, "{indent}{deep}{}{mark}", call_line(call))?;
            if let Some(kids) = call["seq"].as_i64().and_then(|s| self.children.get(&s)) {
                stack.extend(kids.iter().rev().map(|&kid| (kid, depth + 1)));
            }
        }
        Ok(())
    }
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
        if job["provider_status"].is_string() {
            let _ = write!(
                out,
                " ({}: {} done, {} failed)",
                text(&job["provider_status"]),
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
        line.push_str(&prompt_cache(call));
        if call["cache_hit"] == true {
            line.push_str("  cached");
        }
    }
    if call["status"] != "ok" {
        let message = call
            .pointer("/error/message")
            .and_then(Json::as_str)
            .unwrap_or("failed");
        let _ = write!(line, "  {}: {}", text(&call["status"]), one_line(message));
    } else if let Some(answer) = call["answer"].as_str() {
        let short = crate::value::truncate_text(&one_line(answer), 60);
        let _ = write!(line, "  → {short}");
    }
    line
}

/// `  (N cached, M written)`: the input tokens the provider's prompt cache served and
/// kept, when it did either.
fn prompt_cache(call: &Json) -> String {
    let parts: Vec<String> = [
        ("cached", "cached_input_tokens"),
        ("written", "cache_write_tokens"),
    ]
    .into_iter()
    .filter(|(_, key)| number(&call[*key]) > 0)
    .map(|(word, key)| format!("{} {word}", number(&call[key])))
    .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!("  ({})", parts.join(", ")),
    }
}

fn text(value: &Json) -> String {
    match value {
        Json::String(s) => one_line(s),
        Json::Null => "-".to_owned(),
        other => other.to_string(),
    }
}

/// Text from the log as one line of the listing: line breaks as spaces, other control
/// characters visible.
fn one_line(text: &str) -> String {
    crate::value::terminal_safe(&text.replace('\n', " "), false)
}

fn number(value: &Json) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn cost(value: &Json) -> String {
    value
        .as_f64()
        .map_or_else(|| "-".to_owned(), |usd| format!("${usd:.4}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_with_escape_sequences_is_shown_with_them_visible() {
        let call = json!({"seq": 1, "kind": "model", "task": "t\u{1b}[2J", "status": "ok",
            "answer": "hi\u{1b}]52;c;cm0gLXJmIH4=\u{7}\nthere\u{1b}[2J"});
        let line = call_line(&call);
        assert!(!line.contains(['\u{1b}', '\u{7}']), "{line:?}");
        assert!(
            line.ends_with("→ hi\\u{1b}]52;c;cm0gLXJmIH4=\\u{7} there\\u{1b}[2J"),
            "{line}"
        );
        let failed = json!({"seq": 2, "kind": "model", "task": "t", "status": "error",
            "error": {"message": "bad\u{1b}[1A\rok"}});
        assert!(call_line(&failed).ends_with("error: bad\\u{1b}[1A\\u{d}ok"));
    }
}
