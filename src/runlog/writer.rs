//! The one thread that writes the log, so a model call never waits on the disk: calls
//! hand it rows over a channel; it writes whatever is queued in one transaction.

use super::schema;
use super::{BatchEnd, BatchRow, CallRow, JournalRow, RunRow};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

pub enum Message {
    Call(Box<CallRow>),
    /// A batch job's row; the sender hears when it is committed.
    Batch(Box<BatchRow>, Sender<()>),
    BatchEnd(Box<BatchEnd>),
    /// A call's answer passed its checks: the cache may give it for `key`.
    Accept {
        run_id: String,
        seq: u64,
        key: String,
    },
    /// The run's script text and command line, scrubbed of a secret learnt after the
    /// run row was written.
    Script {
        run_id: String,
        script: String,
        argv: Option<Vec<String>>,
    },
    /// A step of the run's journal.
    Step {
        run_id: String,
        row: Box<JournalRow>,
    },
    /// The run claims `from` to resume it: `from` is marked resumed by it unless another
    /// run did so first (the sender hears that run's id), and only then its journal is
    /// copied. The sender hears once the claim is committed.
    Resumes {
        run_id: String,
        from: String,
        claimed: Sender<Result<(), String>>,
    },
    End {
        run_id: String,
        status: String,
        ended_ms: i64,
    },
    /// The sender hears once everything sent before is committed.
    Sync(Sender<()>),
}

pub struct Writer {
    sender: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread; it opens the database and writes `run` first. If the database
    /// cannot be opened, it says so once (a notice to the hook in force when it starts,
    /// see `crate::notice`) and drops what it is sent.
    pub fn start(path: PathBuf, run: RunRow) -> Writer {
        let (sender, receiver) = channel();
        let notice = crate::notice::hook();
        let thread = std::thread::Builder::new()
            .name("tasklisp-log".into())
            .spawn(
                move || match schema::open(&path).and_then(|c| insert_run(c, &run)) {
                    Ok(conn) => write_loop(conn, &receiver, &*notice),
                    Err(e) => notice(&format!("tasklisp: the run log is off: {e}")),
                },
            )
            .ok();
        Writer {
            sender: thread.is_some().then_some(sender),
            thread,
        }
    }

    pub fn send(&self, message: Message) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(message);
        }
    }

    /// Waits until everything sent has been written.
    pub fn finish(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.finish();
    }
}

fn insert_run(conn: Connection, run: &RunRow) -> Result<Connection, String> {
    let owner = super::lease::Owner::this_process();
    conn.execute(
        "INSERT OR IGNORE INTO runs (id, started_ms, command, script, status, host, boot, pid,
            pid_start, argv, cwd, journal)
         VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9, ?10, 1)",
        params![
            run.id,
            run.started_ms,
            run.command,
            run.script,
            owner.as_ref().map(|o| &o.host),
            owner.as_ref().map(|o| &o.boot),
            owner.as_ref().map(|o| o.pid),
            owner.as_ref().map(|o| count(o.start)),
            run.argv
                .as_ref()
                .map(|argv| serde_json::json!(argv).to_string()),
            run.cwd,
        ],
    )
    .map_err(|e| e.to_string())?;
    Ok(conn)
}

fn write_loop(mut conn: Connection, receiver: &Receiver<Message>, notice: &dyn Fn(&str)) {
    let mut reported = false;
    while let Ok(first) = receiver.recv() {
        let batch: Vec<Message> = std::iter::once(first)
            .chain(receiver.try_iter().take(255))
            .collect();
        if let Err(e) = write_batch(&mut conn, batch) {
            if !std::mem::replace(&mut reported, true) {
                notice(&format!(
                    "tasklisp: cannot write the run log (rows of this run are lost): {e}"
                ));
            }
        }
    }
}

/// Writes `batch` in one transaction, which takes the database's write lock from its
/// start (so a claim reads what every other process committed); those waiting for a row
/// hear once it is committed.
fn write_batch(conn: &mut Connection, batch: Vec<Message>) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut waiting = Vec::new();
    let mut claims = Vec::new();
    for message in batch {
        match message {
            Message::Call(call) => insert_call(&tx, &call)?,
            Message::Batch(row, written) => {
                insert_batch(&tx, &row)?;
                waiting.push(written);
            }
            Message::BatchEnd(end) => end_batch(&tx, &end)?,
            Message::Sync(written) => waiting.push(written),
            Message::Accept { run_id, seq, key } => {
                tx.execute(
                    "UPDATE calls SET cache_key = ?3 WHERE run_id = ?1 AND seq = ?2",
                    params![run_id, count(seq), key],
                )?;
            }
            Message::Script {
                run_id,
                script,
                argv,
            } => {
                tx.execute(
                    "UPDATE runs SET script = ?2, argv = ?3 WHERE id = ?1",
                    params![run_id, script, argv_json(argv.as_ref())],
                )?;
            }
            Message::Step { run_id, row } => {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO journal (run_id, item, step, kind, request, answer)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![
                    run_id,
                    row.item,
                    row.step,
                    row.kind,
                    row.request,
                    row.answer
                ])?;
            }
            Message::Resumes {
                run_id,
                from,
                claimed,
            } => claims.push((claim(&tx, &run_id, &from)?, claimed)),
            Message::End {
                run_id,
                status,
                ended_ms,
            } => {
                tx.execute(
                    "UPDATE runs SET status = ?2, ended_ms = ?3 WHERE id = ?1",
                    params![run_id, status, ended_ms],
                )?;
            }
        }
    }
    tx.commit()?;
    for written in waiting {
        let _ = written.send(());
    }
    for (outcome, claimed) in claims {
        let _ = claimed.send(outcome);
    }
    Ok(())
}

/// Run `run_id` takes `from` up, if no other run has: one `UPDATE … WHERE resumed_by IS
/// NULL`, so of two resumes only one changes the row. The winner gets `from`'s journal;
/// the loser, the id of the run that claimed it.
fn claim(
    tx: &rusqlite::Transaction,
    run_id: &str,
    from: &str,
) -> rusqlite::Result<Result<(), String>> {
    let changed = tx.execute(
        "UPDATE runs SET resumed_by = ?1 WHERE id = ?2 AND resumed_by IS NULL",
        params![run_id, from],
    )?;
    if changed == 0 {
        let by: Option<String> = tx
            .query_row(
                "SELECT resumed_by FROM runs WHERE id = ?1",
                params![from],
                |row| row.get(0),
            )
            .optional()?
            .flatten();
        return Ok(Err(by.unwrap_or_else(|| "(not in the log)".to_owned())));
    }
    tx.execute(
        "INSERT OR IGNORE INTO journal (run_id, item, step, kind, request, answer)
         SELECT ?1, item, step, kind, request, answer FROM journal
         WHERE run_id = ?2",
        params![run_id, from],
    )?;
    Ok(Ok(()))
}

fn insert_batch(tx: &rusqlite::Transaction, row: &BatchRow) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO batches (run_id, job_id, key, provider, requests, resumed,
            state, submitted_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7)",
        params![
            row.run_id,
            row.job_id,
            row.key,
            row.provider,
            count(row.requests),
            row.resumed,
            row.submitted_ms
        ],
    )?;
    Ok(())
}

/// Every run's row of the job ends: a later run must not resume a lost or failed job
/// because an earlier run's row of it still says `running`.
fn end_batch(tx: &rusqlite::Transaction, end: &BatchEnd) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE batches SET state = ?3, provider_status = ?4, done = ?5, failed = ?6,
            ended_ms = ?7
         WHERE key = ?1 AND job_id = ?2",
        params![
            end.key,
            end.job_id,
            end.state,
            end.provider_status,
            end.done.map(count),
            end.failed.map(count),
            end.ended_ms
        ],
    )?;
    Ok(())
}

fn argv_json(argv: Option<&Vec<String>>) -> Option<String> {
    argv.map(|argv| serde_json::json!(argv).to_string())
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn insert_call(tx: &rusqlite::Transaction, call: &CallRow) -> rusqlite::Result<()> {
    let json = |v: &Option<serde_json::Value>| v.as_ref().map(serde_json::Value::to_string);
    let tokens = |n: Option<u64>| n.map(count);
    let mut statement = tx.prepare_cached(
        "INSERT OR REPLACE INTO calls (run_id, seq, parent, kind, task, provider, model,
            options, last_message, answer, tool_calls, input_tokens, output_tokens,
            latency_ms, cost, status, error, cache_hit, cache_key, started_ms, finish_reason,
            reasoning, cached_input_tokens, cache_write_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
    )?;
    statement.execute(params![
        call.run_id,
        call.seq,
        call.parent,
        call.kind.as_str(),
        call.task,
        call.provider,
        call.model,
        json(&call.options),
        insert_messages(tx, call.messages.as_ref())?,
        call.answer,
        json(&call.tool_calls),
        tokens(call.input_tokens),
        tokens(call.output_tokens),
        call.latency_ms,
        call.cost,
        call.status,
        json(&call.error),
        call.cache_hit,
        call.cache_key,
        call.started_ms,
        call.finish_reason,
        call.reasoning,
        tokens(call.cached_input_tokens),
        tokens(call.cache_write_tokens),
    ])?;
    Ok(())
}

/// Stores each message of a request once, as a chain: a node is the hash of the chain
/// before it and the message's JSON, so the calls of a conversation share every message
/// they have in common and a call adds only what is new. Returns the last node's hash
/// (`None` for no messages).
fn insert_messages(
    tx: &rusqlite::Transaction,
    messages: Option<&serde_json::Value>,
) -> rusqlite::Result<Option<String>> {
    use sha2::{Digest, Sha256};
    let Some(serde_json::Value::Array(messages)) = messages else {
        return Ok(None);
    };
    let mut statement = tx.prepare_cached(
        "INSERT OR IGNORE INTO messages (hash, previous, body) VALUES (?1, ?2, ?3)",
    )?;
    let mut previous: Option<String> = None;
    for message in messages {
        let body = message.to_string();
        let mut hasher = Sha256::new();
        hasher.update(previous.as_deref().unwrap_or("").as_bytes());
        hasher.update(b"\n");
        hasher.update(body.as_bytes());
        let hash = crate::digest::finish_hex(hasher);
        statement.execute(params![hash, previous, body])?;
        previous = Some(hash);
    }
    Ok(previous)
}
