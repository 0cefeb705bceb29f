//! `tasklisp cache clear`: removing answers from the cache (the run log keeps the calls,
//! which the cache no longer offers).

use super::Options;
use crate::error::{Error, Result};
use crate::runlog::{self, query};
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum CacheAction {
    /// Remove cached answers (every one, or those matching the options) and print how
    /// many were removed.
    Clear {
        /// Only the answers to this task's requests.
        #[arg(long, value_name = "NAME")]
        task: Option<String>,
        /// Only answers older than this, e.g. `7d`, `12h`, `30min`.
        #[arg(long = "older-than", value_name = "DURATION", value_parser = humantime::parse_duration)]
        older_than: Option<Duration>,
    },
}

/// Runs `tasklisp cache …`; returns the exit status.
pub fn run(options: &Options, args: &CacheArgs) -> i32 {
    match &args.action {
        CacheAction::Clear { task, older_than } => match clear(task.as_deref(), *older_than) {
            Ok(removed) => {
                let noun = if removed == 1 { "answer" } else { "answers" };
                println!("removed {removed} cached {noun}");
                0
            }
            Err(e) => super::report(options, &e),
        },
    }
}

/// Removes the matching answers from the cache of the log; returns how many.
fn clear(task: Option<&str>, older_than: Option<Duration>) -> Result<usize> {
    let failure = |e: String| Error::eval(format!("cache: {e}"));
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let path = runlog::location(&env).ok_or_else(|| {
        failure("the run log is off (TASKLISP_LOG=off, or no home directory)".into())
    })?;
    let Some(conn) = query::open(&path).map_err(failure)? else {
        return Ok(0);
    };
    let before_ms = older_than.map(|age| {
        let age = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
        runlog::now_ms().saturating_sub(age)
    });
    query::clear_cache(&conn, task, before_ms).map_err(|e| failure(e.to_string()))
}
