//! The log's tables and their migrations. `PRAGMA user_version` is the schema version:
//! each entry of `MIGRATIONS` takes the database from version `i` to `i + 1`, so a new
//! version is one more entry, and an old database is brought up to date when opened.

use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: runs and their calls (task calls and the model calls inside them).
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_ms INTEGER NOT NULL,
        ended_ms INTEGER,
        command TEXT NOT NULL,
        script TEXT NOT NULL,
        status TEXT NOT NULL
     );
     CREATE INDEX runs_by_start ON runs (started_ms);
     CREATE TABLE calls (
        run_id TEXT NOT NULL REFERENCES runs (id),
        seq INTEGER NOT NULL,
        parent INTEGER,
        kind TEXT NOT NULL,
        task TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        options TEXT,
        messages TEXT,
        answer TEXT,
        tool_calls TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        latency_ms REAL,
        cost REAL,
        status TEXT NOT NULL,
        error TEXT,
        cache_hit INTEGER NOT NULL DEFAULT 0,
        cache_key TEXT,
        started_ms INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
     );
     CREATE INDEX calls_by_cache_key ON calls (cache_key) WHERE cache_key IS NOT NULL;",
    // 2: provider batch jobs, so a stopped run waits for its job instead of submitting
    // it again. `key` is a digest of the provider, its base URL and the requests; a row
    // per run that submitted or resumed the job; `state` is the job's (`running`,
    // `answered`, `partial`, `failed`, `lost`).
    "CREATE TABLE batches (
        run_id TEXT NOT NULL REFERENCES runs (id),
        job_id TEXT NOT NULL,
        key TEXT NOT NULL,
        provider TEXT NOT NULL,
        requests INTEGER NOT NULL,
        resumed INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        provider_status TEXT,
        done INTEGER,
        failed INTEGER,
        submitted_ms INTEGER NOT NULL,
        ended_ms INTEGER,
        PRIMARY KEY (run_id, job_id)
     );
     CREATE INDEX batches_by_key ON batches (key);",
    // 3: the process that owns a run (see `lease`), so a run killed without a chance to
    // end is marked `interrupted` by the next tasklisp; and each message of a request
    // stored once, as a chain (`previous` is the hash of the messages before it), so a
    // conversation's calls share their history instead of repeating it. `last_message`
    // names a call's chain; `messages` stays for the rows written before.
    "ALTER TABLE runs ADD COLUMN host TEXT;
     ALTER TABLE runs ADD COLUMN boot TEXT;
     ALTER TABLE runs ADD COLUMN pid INTEGER;
     ALTER TABLE runs ADD COLUMN pid_start INTEGER;
     CREATE INDEX runs_by_status ON runs (status);
     CREATE TABLE messages (
        hash TEXT PRIMARY KEY,
        previous TEXT,
        body TEXT NOT NULL
     );
     ALTER TABLE calls ADD COLUMN last_message TEXT;",
    // 4: why the model stopped (`stop`, `length`, `end_turn`, `max_tokens`…), so an
    // answer cut off by the token limit is still marked when the cache gives it again.
    "ALTER TABLE calls ADD COLUMN finish_reason TEXT;",
    // 5: the model's reasoning, when the provider returns it apart from the answer.
    "ALTER TABLE calls ADD COLUMN reasoning TEXT;",
    // 6: the input tokens the provider's prompt cache served (`cached_input_tokens`) and
    // kept (`cache_write_tokens`), of the call's `input_tokens`.
    "ALTER TABLE calls ADD COLUMN cached_input_tokens INTEGER;
     ALTER TABLE calls ADD COLUMN cache_write_tokens INTEGER;",
];

/// The schema version this build writes.
pub const VERSION: usize = MIGRATIONS.len();

/// Brings the database up to `VERSION`; refuses one written by a newer tasklisp.
pub fn migrate(conn: &mut Connection) -> Result<(), String> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| e.to_string())?;
    let found: usize = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| e.to_string())?;
    if found > VERSION {
        return Err(format!(
            "the log has schema version {found}, newer than this tasklisp's {VERSION}"
        ));
    }
    for (version, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        tx.execute_batch(sql).map_err(|e| e.to_string())?;
        tx.pragma_update(None, "user_version", version + 1)
            .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

/// Opens (creating) the database at `path` in WAL mode, migrated, with the runs whose
/// process is gone marked `interrupted`.
pub fn open(path: &std::path::Path) -> Result<Connection, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut conn = Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| e.to_string())?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| e.to_string())?;
    migrate(&mut conn)?;
    // Best effort: a log this process may read but not write is still read.
    let _ = super::lease::mark_interrupted(&conn);
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_database_is_migrated_and_migrating_again_is_a_no_op() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/log.db");
        drop(open(&path).unwrap());
        let mut conn = open(&path).unwrap();
        migrate(&mut conn).unwrap();
        let version: usize = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
    }

    #[test]
    fn a_database_of_the_first_version_keeps_its_rows_when_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO runs VALUES ('r1', 1, NULL, 'run', 'a.sexp', 'ok')",
            [],
        )
        .unwrap();
        drop(conn);
        let conn = open(&path).unwrap();
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        let batches: i64 = conn
            .query_row("SELECT count(*) FROM batches", [], |r| r.get(0))
            .unwrap();
        assert_eq!((runs, batches), (1, 0));
    }

    #[test]
    fn a_newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", VERSION + 1)
            .unwrap();
        drop(conn);
        assert!(open(&path).unwrap_err().contains("newer"));
    }
}
