//! The run log on the command line: opening it for a run, closing it, and
//! `tasklisp log`.

use super::Options;
use crate::error::{Error, Result};
use crate::eval::{Interp, Limits};
use crate::runlog::{self, query, view, RunLog, RunRow};
use crate::task::observe::BudgetLimits;
use std::io::Write;
use std::rc::Rc;

/// An environment variable, where set to something (empty counts as unset).
pub(super) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Sets up the cache, the budget flags and (unless turned off) the log of this run. The
/// database is only created when the first call is recorded.
pub fn install(interp: &Interp, options: &Options) {
    let observer = &interp.tasks.observer;
    observer.set_cache_everything(cache_on(options));
    if options.budget_usd.is_some() || options.budget_calls.is_some() {
        interp
            .state
            .task
            .observe
            .borrow_mut()
            .add_budget(BudgetLimits {
                usd: options.budget_usd,
                tokens: None,
                calls: options.budget_calls,
            });
    }
    if options.no_log {
        return;
    }
    let (command, script) = match &options.command {
        Some(super::Command::Run { file, .. }) => ("run", file.display().to_string()),
        Some(super::Command::Eval { exprs }) => ("eval", exprs.join(" ")),
        Some(super::Command::Prompt { text, .. }) => ("prompt", text.join(" ")),
        Some(super::Command::Mcp { files, .. }) => {
            let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            ("mcp", files.join(" "))
        }
        Some(
            super::Command::Check { .. }
            | super::Command::Log { .. }
            | super::Command::Test(_)
            | super::Command::Cache(_)
            | super::Command::Fmt(_)
            | super::Command::Config
            | super::Command::Completions { .. }
            | super::Command::Lsp
            | super::Command::Resume { .. },
        ) => return,
        None => ("repl", String::new()),
    };
    if let Some(path) = runlog::location(&env_var) {
        let mut run = RunRow::start(command, &script);
        if command == "run" {
            run.argv = Some(options.argv.clone());
            run.cwd = std::env::current_dir()
                .ok()
                .map(|dir| dir.display().to_string());
        }
        let log = RunLog::new(path, run);
        observer.set_log(Some(Rc::new(log)));
    }
}

/// `tasklisp resume`: the journal of the run taken up answers the steps it made, and
/// this run takes it over — claimed in the log before anything runs, so of two resumes
/// of one run only one goes on. A journal that does not read, a run claimed by another
/// resume, or a resume without a log (which could claim nothing) is an error before
/// anything runs.
pub fn take_up(interp: &Interp, options: &Options) -> Result<()> {
    let Some(plan) = &options.resume else {
        return Ok(());
    };
    interp
        .tasks
        .journal
        .load(&plan.from, plan.steps.clone())
        .map_err(Error::validation)?;
    interp.tasks.journal.set_answers(plan.answers.clone());
    let Some(log) = interp.tasks.observer.log() else {
        return Err(Error::validation(format!(
            "tasklisp resume claims run {} in the run log: it cannot run with --no-log",
            plan.from
        )));
    };
    log.resumes(&plan.from).map_err(Error::validation)?;
    // Resumable from here on: the first live step need not wait for the log to take in
    // every replayed step before it.
    log.make_resumable();
    Ok(())
}

/// `--cache` or `TASKLISP_CACHE=on`.
fn cache_on(options: &Options) -> bool {
    options.cache
        || env_var("TASKLISP_CACHE").is_some_and(|v| matches!(v.as_str(), "on" | "1" | "true"))
}

/// `tasklisp test` as one run of the log (each test a row over its calls); the run
/// ends `ok` when every test passed, `failed` when one failed, `error` on bad usage.
pub fn run_tests(options: &Options, args: &crate::testing::TestArgs, limits: Limits) -> i32 {
    // A bad `-o` was refused as bad usage before anything ran.
    let Ok(settings) = options.provider_settings() else {
        return super::USAGE;
    };
    let log = (!options.no_log)
        .then(|| runlog::location(&env_var))
        .flatten()
        .map(|path| {
            let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
            RunLog::new(path, RunRow::start("test", &paths.join(" ")))
        });
    let settings_for = |choice: &crate::testing::ModelChoice| {
        let provider = choice.provider.clone().or_else(|| options.provider.clone());
        options.provider_settings_for(provider, Some(choice.model.clone()))
    };
    let context = crate::testing::Context {
        limits,
        settings,
        settings_for: &settings_for,
        imports: options.imports.clone(),
        log: log.as_ref().map(RunLog::handle),
        cache: cache_on(options),
        json: options.json,
    };
    let status = crate::testing::run_command(args, context);
    if let Some(log) = log {
        log.finish(match status {
            crate::testing::PASSED => "ok",
            crate::testing::FAILED => "failed",
            _ => "error",
        });
    }
    status
}

/// Marks the run ended and waits until every call is written; then exports it as
/// traces under `--otlp` (or OTEL_EXPORTER_OTLP_ENDPOINT). An export that fails is one
/// warning: it never fails the run.
pub fn finish(interp: &Interp, options: &Options, result: &Result<i32>) {
    let Some(log) = interp.tasks.observer.log() else {
        return;
    };
    let status = match result {
        Ok(0) => "ok",
        Err(e) if e.reason() == Some("execution_halted") => "interrupted",
        Err(e) if e.reason() == Some(crate::task::human::WAITING_REASON) => "waiting",
        Err(e) if e.exit_code() == Some(0) => "ok",
        _ => "error",
    };
    log.finish(status);
    let Some(export) = otlp_export(
        options
            .otlp
            .clone()
            .or_else(|| env_var("OTEL_EXPORTER_OTLP_ENDPOINT")),
        options,
    ) else {
        return;
    };
    let sent = query::open(log.path())
        .and_then(|conn| conn.ok_or_else(|| "nothing was recorded".to_owned()))
        .and_then(|conn| runlog::otlp::export(&conn, log.run_id(), &export));
    if let Err(e) = sent {
        crate::notice::emit(&format!(
            "tasklisp: the run's traces were not exported: {e}"
        ));
    }
}

fn otlp_export(endpoint: Option<String>, options: &Options) -> Option<runlog::otlp::Export> {
    Some(runlog::otlp::Export {
        endpoint: endpoint?,
        content: options.otlp_content,
    })
}

/// `tasklisp log [RUN] [-n N] [--json]`.
pub fn show(options: &Options, run: Option<&str>, limit: usize) -> i32 {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = listing(options, run, limit, &mut out)
        .and_then(|()| out.flush().map_err(|e| Error::stdout_write(&e)));
    match written {
        Ok(()) => 0,
        // A reader that went away (`tasklisp log RUN | head`) is exit 0, quietly.
        Err(e) => e.exit_code().unwrap_or_else(|| super::report(options, &e)),
    }
}

/// Writes the listing to `out` as it is read, never as one string: a run of 300,000
/// calls prints in space linear in the calls.
fn listing(
    options: &Options,
    run: Option<&str>,
    limit: usize,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let failure = |e: String| Error::eval(format!("run log: {e}"));
    let path = runlog::location(&env_var)
        .ok_or_else(|| failure("off (TASKLISP_LOG=off, or no home directory)".into()))?;
    let Some(conn) = query::open(&path).map_err(failure)? else {
        if let Some(id) = run {
            return Err(failure(format!("no run `{id}` in the log")));
        }
        let written = if options.json {
            writeln!(out, "[]")
        } else {
            writeln!(out, "no runs yet in {}", path.display())
        };
        return written.map_err(|e| Error::stdout_write(&e));
    };
    let sql = |e: rusqlite::Error| failure(e.to_string());
    let written = match run {
        None => {
            let runs = query::runs(&conn, limit).map_err(sql)?;
            if options.json {
                json_line(out, &serde_json::Value::Array(runs))
            } else {
                out.write_all(view::runs_table(&runs).as_bytes())
            }
        }
        Some(id) => {
            let id = query::find_run(&conn, id).map_err(failure)?;
            if let Some(export) = otlp_export(options.otlp.clone(), options) {
                let spans = runlog::otlp::export(&conn, &id, &export).map_err(failure)?;
                let url = export.shown_url();
                return writeln!(out, "exported {spans} spans of run {id} to {url}")
                    .map_err(|e| Error::stdout_write(&e));
            }
            let calls = query::calls(&conn, &id).map_err(sql)?;
            let batches = query::batches(&conn, &id).map_err(sql)?;
            if options.json {
                let run = serde_json::json!({"run": id, "calls": calls, "batches": batches});
                json_line(out, &run)
            } else {
                writeln!(out, "run {id}")
                    .and_then(|()| view::write_call_tree(&calls, out))
                    .and_then(|()| out.write_all(view::batch_lines(&batches).as_bytes()))
            }
        }
    };
    written.map_err(|e| Error::stdout_write(&e))
}

fn json_line(out: &mut dyn std::io::Write, value: &serde_json::Value) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}
