//! The log's tables and their migrations. `PRAGMA user_version` is the schema version:
//! each entry of `MIGRATIONS` takes the database from version `i` to `i + 1`, so a new
//! version is one more entry, and an old database is brought up to date when opened.

use rusqlite::Connection;

/// One step of the schema: the columns it adds to existing tables (each only when
/// missing), then SQL that must be idempotent itself (`IF NOT EXISTS`). A log may have
/// been migrated by another build that added a column under the same version, so no step
/// fails with "duplicate column name".
struct Migration {
    columns: &'static [(&'static str, &'static str, &'static str)],
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    // 1: runs and their calls (task calls and the model calls inside them).
    Migration {
        columns: &[],
        sql: "CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        started_ms INTEGER NOT NULL,
        ended_ms INTEGER,
        command TEXT NOT NULL,
        script TEXT NOT NULL,
        status TEXT NOT NULL
     );
     CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_ms);
     CREATE TABLE IF NOT EXISTS calls (
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
     CREATE INDEX IF NOT EXISTS calls_by_cache_key ON calls (cache_key)
        WHERE cache_key IS NOT NULL;",
    },
    // 2: provider batch jobs, so a stopped run waits for its job instead of submitting
    // it again. `key` is a digest of the provider, its base URL and the requests; a row
    // per run that submitted or resumed the job; `state` is the job's (`running`,
    // `answered`, `partial`, `failed`, `lost`).
    Migration {
        columns: &[],
        sql: "CREATE TABLE IF NOT EXISTS batches (
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
     CREATE INDEX IF NOT EXISTS batches_by_key ON batches (key);",
    },
    // 3: the process that owns a run (see `lease`), so a run killed without a chance to
    // end is marked `interrupted` by the next tasklisp; and each message of a request
    // stored once, as a chain (`previous` is the hash of the messages before it), so a
    // conversation's calls share their history instead of repeating it. `last_message`
    // names a call's chain; `messages` stays for the rows written before.
    Migration {
        columns: &[
            ("runs", "host", "TEXT"),
            ("runs", "boot", "TEXT"),
            ("runs", "pid", "INTEGER"),
            ("runs", "pid_start", "INTEGER"),
            ("calls", "last_message", "TEXT"),
        ],
        sql: "CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
     CREATE TABLE IF NOT EXISTS messages (
        hash TEXT PRIMARY KEY,
        previous TEXT,
        body TEXT NOT NULL
     );",
    },
    // 4: why the model stopped (`stop`, `length`, `end_turn`, `max_tokens`…), so an
    // answer cut off by the token limit is still marked when the cache gives it again.
    Migration {
        columns: &[("calls", "finish_reason", "TEXT")],
        sql: "",
    },
    // 5: the model's reasoning, when the provider returns it apart from the answer.
    Migration {
        columns: &[("calls", "reasoning", "TEXT")],
        sql: "",
    },
    // 6: the input tokens the provider's prompt cache served (`cached_input_tokens`) and
    // kept (`cache_write_tokens`), of the call's `input_tokens`.
    Migration {
        columns: &[
            ("calls", "cached_input_tokens", "INTEGER"),
            ("calls", "cache_write_tokens", "INTEGER"),
        ],
        sql: "",
    },
    // 7: the journal a run is resumed from (`tasklisp resume`): each step (model call,
    // script run, MCP call, human answer) by its item (`pmap` items' path) and its number
    // within it, with the request and the answer as JSON. A run keeps the command line
    // it ran with (`argv`, JSON) and its directory; `journal` is the journal's format
    // (NULL: recorded before journals); `resumed_by` the run that resumed it.
    Migration {
        columns: &[
            ("runs", "argv", "TEXT"),
            ("runs", "cwd", "TEXT"),
            ("runs", "journal", "INTEGER"),
            ("runs", "resumed_by", "TEXT"),
        ],
        sql: "CREATE TABLE IF NOT EXISTS journal (
        run_id TEXT NOT NULL REFERENCES runs (id),
        item TEXT NOT NULL,
        step INTEGER NOT NULL,
        kind TEXT NOT NULL,
        request TEXT NOT NULL,
        answer TEXT NOT NULL,
        PRIMARY KEY (run_id, item, step)
     );",
    },
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
    for (version, migration) in MIGRATIONS.iter().enumerate().skip(found) {
        apply(&tx, migration).map_err(|e| e.to_string())?;
        tx.pragma_update(None, "user_version", version + 1)
            .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

/// Adds the columns the migration's tables lack, then runs its SQL.
fn apply(tx: &rusqlite::Transaction, migration: &Migration) -> rusqlite::Result<()> {
    for (table, column, kind) in migration.columns {
        let present: bool = tx.query_row(
            "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
            [table, column],
            |row| row.get(0),
        )?;
        if !present {
            tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    tx.execute_batch(migration.sql)
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
        let tx = conn.unchecked_transaction().unwrap();
        apply(&tx, &MIGRATIONS[0]).unwrap();
        tx.commit().unwrap();
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
    fn a_database_that_another_build_gave_a_column_of_a_later_version_migrates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.db");
        drop(open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        // As a build that added the journal's columns before this one's version 6.
        conn.pragma_update(None, "user_version", 5).unwrap();
        drop(conn);
        let conn = open(&path).unwrap();
        let version: usize = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
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
