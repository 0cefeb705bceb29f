//! Reading the log: the cache look-up, the list of runs and one run's calls.

use super::CachedAnswer;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde_json::{json, Value as Json};
use std::path::Path;

/// The newest successful answer to a model call with `key` (cache hits excluded, so an
/// answer is always the provider's own).
pub fn cached_answer(conn: &Connection, key: &str) -> Option<CachedAnswer> {
    conn.query_row(
        "SELECT answer, input_tokens, output_tokens, finish_reason FROM calls
         WHERE cache_key = ?1 AND status = 'ok' AND cache_hit = 0 AND answer IS NOT NULL
         ORDER BY started_ms DESC LIMIT 1",
        params![key],
        |row| {
            Ok(CachedAnswer {
                content: row.get(0)?,
                input_tokens: row.get::<_, Option<i64>>(1)?.map(|n| n.max(0) as u64),
                output_tokens: row.get::<_, Option<i64>>(2)?.map(|n| n.max(0) as u64),
                finish_reason: row.get(3)?,
            })
        },
    )
    .optional()
    .ok()
    .flatten()
}

/// Takes answers out of the cache (the calls stay in the log): those of `task`'s
/// requests, started before `before_ms`, or all. Returns how many answers (distinct
/// keys) were removed.
pub fn clear_cache(
    conn: &Connection,
    task: Option<&str>,
    before_ms: Option<i64>,
) -> rusqlite::Result<usize> {
    const MATCHING: &str = "cache_key IS NOT NULL AND (?1 IS NULL OR task = ?1)
         AND (?2 IS NULL OR started_ms < ?2)";
    let removed: i64 = conn.query_row(
        &format!("SELECT count(DISTINCT cache_key) FROM calls WHERE {MATCHING}"),
        params![task, before_ms],
        |row| row.get(0),
    )?;
    conn.execute(
        &format!("UPDATE calls SET cache_key = NULL WHERE {MATCHING}"),
        params![task, before_ms],
    )?;
    Ok(usize::try_from(removed).unwrap_or(0))
}

/// The job to wait for instead of submitting the requests whose key is `key`: the
/// latest still running or fully answered (a partial, failed or lost job is submitted
/// again, for what it did not answer).
pub fn batch_job(conn: &Connection, key: &str) -> Option<String> {
    conn.query_row(
        "SELECT job_id FROM batches WHERE key = ?1 AND state IN ('running', 'answered')
         ORDER BY submitted_ms DESC, rowid DESC LIMIT 1",
        params![key],
        |row| row.get(0),
    )
    .optional()
    .ok()
    .flatten()
}

/// The batch jobs a run submitted or resumed, in order.
pub fn batches(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<Json>> {
    let mut statement = conn.prepare(
        "SELECT job_id, provider, requests, resumed, state, provider_status, done, failed,
                submitted_ms, ended_ms
         FROM batches WHERE run_id = ?1 ORDER BY submitted_ms, rowid",
    )?;
    let rows = statement.query_map(params![run_id], |row| {
        Ok(json!({
            "job_id": row.get::<_, String>(0)?,
            "provider": row.get::<_, String>(1)?,
            "requests": row.get::<_, i64>(2)?,
            "resumed": row.get::<_, bool>(3)?,
            "state": row.get::<_, String>(4)?,
            "provider_status": row.get::<_, Option<String>>(5)?,
            "done": row.get::<_, Option<i64>>(6)?,
            "failed": row.get::<_, Option<i64>>(7)?,
            "submitted_ms": row.get::<_, i64>(8)?,
            "ended_ms": row.get::<_, Option<i64>>(9)?,
        }))
    })?;
    rows.collect()
}

/// Opens the log for reading; a log that does not exist yet is an empty one.
pub fn open(path: &Path) -> Result<Option<Connection>, String> {
    if !path.exists() {
        return Ok(None);
    }
    super::schema::open(path).map(Some)
}

/// The latest `limit` runs, newest first: `id`, `started` (UTC), `command`, `script`,
/// `calls` (model calls made), `input_tokens`, `output_tokens`, `cost`, `status`,
/// `cache_hits`, `resumable` (see [`RESUMABLE`]). Calls answered from the cache are counted apart and their tokens left
/// out, as `run-usage` does: nothing was sent for them.
pub fn runs(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<Json>> {
    let mut statement = conn.prepare(&format!(
        "SELECT r.id, strftime('%Y-%m-%d %H:%M:%S', r.started_ms / 1000, 'unixepoch'),
                r.command, r.script, r.status,
                coalesce(sum(c.cache_hit = 0), 0),
                sum(CASE WHEN c.cache_hit = 0 THEN c.input_tokens END),
                sum(CASE WHEN c.cache_hit = 0 THEN c.output_tokens END),
                sum(c.cost), coalesce(sum(c.cache_hit = 1), 0), {RESUMABLE}
         FROM runs r LEFT JOIN calls c ON c.run_id = r.id AND c.kind = 'model'
         GROUP BY r.id ORDER BY r.started_ms DESC, r.rowid DESC LIMIT ?1"
    ))?;
    let rows = statement.query_map(params![limit as i64], |row| {
        Ok(json!({
            "id": row.get::<_, String>(0)?,
            "started": row.get::<_, Option<String>>(1)?,
            "command": row.get::<_, String>(2)?,
            "script": row.get::<_, String>(3)?,
            "status": row.get::<_, String>(4)?,
            "calls": row.get::<_, i64>(5)?,
            "input_tokens": row.get::<_, Option<i64>>(6)?.unwrap_or(0),
            "output_tokens": row.get::<_, Option<i64>>(7)?.unwrap_or(0),
            "cost": row.get::<_, Option<f64>>(8)?,
            "cache_hits": row.get::<_, i64>(9)?,
            "resumable": row.get::<_, bool>(10)?,
        }))
    })?;
    rows.collect()
}

/// A run `tasklisp resume` can take up: a script run (not from stdin) with a journal,
/// that stopped before its end and was not resumed yet.
const RESUMABLE: &str = "(r.command = 'run' AND r.journal IS NOT NULL AND r.argv IS NOT NULL
    AND r.resumed_by IS NULL AND r.status NOT IN ('ok', 'running') AND r.script != '-')";

/// What `tasklisp resume` reads of the run it resumes.
#[derive(Debug)]
pub struct ResumeSource {
    pub id: String,
    pub command: String,
    pub script: String,
    pub status: String,
    /// JSON text: the command line's words.
    pub argv: Option<String>,
    pub cwd: Option<String>,
    /// The journal's format; `None` for a run recorded before journals.
    pub journal: Option<i64>,
    pub resumed_by: Option<String>,
}

pub fn resume_source(conn: &Connection, id: &str) -> rusqlite::Result<ResumeSource> {
    conn.query_row(
        "SELECT id, command, script, status, argv, cwd, journal, resumed_by FROM runs
         WHERE id = ?1",
        params![id],
        |row| {
            Ok(ResumeSource {
                id: row.get(0)?,
                command: row.get(1)?,
                script: row.get(2)?,
                status: row.get(3)?,
                argv: row.get(4)?,
                cwd: row.get(5)?,
                journal: row.get(6)?,
                resumed_by: row.get(7)?,
            })
        },
    )
}

/// The steps of a run's journal, by item and number.
pub fn journal(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<super::JournalRow>> {
    let mut statement = conn.prepare(
        "SELECT item, step, kind, request, answer FROM journal WHERE run_id = ?1
         ORDER BY item, step",
    )?;
    let rows = statement.query_map(params![run_id], |row| {
        Ok(super::JournalRow {
            item: row.get(0)?,
            step: row.get(1)?,
            kind: row.get(2)?,
            request: row.get(3)?,
            answer: row.get(4)?,
        })
    })?;
    rows.collect()
}

/// The run whose id is `id` or starts with it (`Err` names the problem).
pub fn find_run(conn: &Connection, id: &str) -> Result<String, String> {
    let pattern = format!("{}%", id.replace(['%', '_'], ""));
    let mut statement = conn
        .prepare("SELECT id FROM runs WHERE id LIKE ?1 ORDER BY started_ms DESC LIMIT 2")
        .map_err(|e| e.to_string())?;
    let ids: Vec<String> = statement
        .query_map(params![pattern], |row| row.get(0))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())?;
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no run `{id}` in the log")),
        _ => Err(format!(
            "`{id}` names more than one run: give more of the id"
        )),
    }
}

/// Every call of a run in order, each a map with all its columns (JSON columns parsed).
pub fn calls(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<Json>> {
    let mut statement = conn.prepare(
        "SELECT seq, parent, kind, task, provider, model, options, messages, answer,
                tool_calls, input_tokens, output_tokens, latency_ms, cost, status, error,
                cache_hit, started_ms, last_message, finish_reason, reasoning,
                cached_input_tokens, cache_write_tokens
         FROM calls WHERE run_id = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map(params![run_id], |row| {
        Ok((call_json(row)?, row.get::<_, Option<String>>(18)?))
    })?;
    let mut chains = Chains::default();
    rows.map(|row| {
        let (mut call, last) = row?;
        if let (Some(last), Some(fields)) = (last, call.as_object_mut()) {
            fields.insert(
                "messages".into(),
                Json::Array(chains.messages(conn, &last)?),
            );
        }
        Ok(call)
    })
    .collect()
}

/// The message chains read so far, by the hash of their last node: the calls of a
/// conversation share their history, so each node is read and parsed once.
#[derive(Default)]
struct Chains {
    nodes: std::collections::HashMap<String, (Option<String>, Json)>,
}

impl Chains {
    /// The messages of the chain ending at `last`, first to last. A node that is missing,
    /// or a chain that comes back on itself (a damaged log), ends the chain.
    fn messages(&mut self, conn: &Connection, last: &str) -> rusqlite::Result<Vec<Json>> {
        let mut messages = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut next = Some(last.to_owned());
        while let Some(hash) = next.filter(|hash| seen.insert(hash.clone())) {
            if !self.nodes.contains_key(&hash) {
                let node = conn
                    .query_row(
                        "SELECT previous, body FROM messages WHERE hash = ?1",
                        params![hash],
                        |row| Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?)),
                    )
                    .optional()?;
                let Some((previous, body)) = node else { break };
                let message = serde_json::from_str(&body).unwrap_or(Json::Null);
                self.nodes.insert(hash.clone(), (previous, message));
            }
            let Some((previous, message)) = self.nodes.get(&hash) else {
                break;
            };
            messages.push(message.clone());
            next = previous.clone();
        }
        messages.reverse();
        Ok(messages)
    }
}

fn call_json(row: &Row) -> rusqlite::Result<Json> {
    let parsed = |index: usize| -> rusqlite::Result<Json> {
        Ok(row
            .get::<_, Option<String>>(index)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Json::Null))
    };
    Ok(json!({
        "seq": row.get::<_, i64>(0)?,
        "parent": row.get::<_, Option<i64>>(1)?,
        "kind": row.get::<_, String>(2)?,
        "task": row.get::<_, String>(3)?,
        "provider": row.get::<_, Option<String>>(4)?,
        "model": row.get::<_, Option<String>>(5)?,
        "options": parsed(6)?,
        "messages": parsed(7)?,
        "answer": row.get::<_, Option<String>>(8)?,
        "tool_calls": parsed(9)?,
        "input_tokens": row.get::<_, Option<i64>>(10)?,
        "output_tokens": row.get::<_, Option<i64>>(11)?,
        "latency_ms": row.get::<_, Option<f64>>(12)?,
        "cost": row.get::<_, Option<f64>>(13)?,
        "status": row.get::<_, String>(14)?,
        "error": parsed(15)?,
        "cache_hit": row.get::<_, bool>(16)?,
        "started_ms": row.get::<_, i64>(17)?,
        "finish_reason": row.get::<_, Option<String>>(19)?,
        "reasoning": row.get::<_, Option<String>>(20)?,
        "cached_input_tokens": row.get::<_, Option<i64>>(21)?,
        "cache_write_tokens": row.get::<_, Option<i64>>(22)?,
    }))
}
