//! The `tasklisp test` subcommand's flags.

use super::runner::{run, RunConfig};
use crate::eval::Limits;
use crate::provider::ProviderSettings;
use crate::runlog::LogHandle;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct TestArgs {
    /// Test files or directories (default: tests/**/*.sexp and **/*.test.sexp).
    pub paths: Vec<PathBuf>,
    /// Tests run at once (default: the number of cores).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Run only the tests whose `file::name` contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Also write the results as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Call the configured provider and rewrite each file's cassette.
    #[arg(long)]
    pub record: bool,
    /// Seconds a test may run, its file's top-level forms included.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub timeout: f64,
    /// The model `expect-judge` asks (default: the provider's own).
    #[arg(
        long = "judge-model",
        value_name = "MODEL",
        env = "TASKLISP_JUDGE_MODEL"
    )]
    pub judge_model: Option<String>,
}

/// What `tasklisp test` takes from the rest of the command line.
pub struct Context {
    pub limits: Limits,
    pub settings: ProviderSettings,
    pub imports: Vec<PathBuf>,
    pub log: Option<LogHandle>,
    pub cache: bool,
}

/// Runs `tasklisp test`; returns the exit status (0 passed, 1 failed, 2 usage).
pub fn run_command(args: &TestArgs, context: Context) -> i32 {
    let timeout = match Duration::try_from_secs_f64(args.timeout) {
        Ok(timeout) if !timeout.is_zero() => timeout,
        _ => {
            eprintln!("tasklisp test: --timeout must be a positive number of seconds");
            return super::runner::USAGE;
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let config = RunConfig {
        paths: args.paths.clone(),
        jobs,
        filter: args.filter.clone(),
        junit: args.junit.clone(),
        record: args.record,
        timeout,
        judge_model: args.judge_model.clone(),
        limits: context.limits,
        settings: context.settings,
        imports: context.imports,
        log: context.log,
        cache: context.cache,
    };
    run(&config, &mut std::io::stdout().lock())
}
