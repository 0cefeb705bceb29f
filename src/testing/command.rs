//! The `tasklisp test` subcommand's flags.

use super::compare::{parse_models, Column, ModelChoice};
use super::report::Reports;
use super::runner::{run, RunConfig, USAGE};
use crate::eval::Limits;
use crate::provider::ProviderSettings;
use crate::runlog::LogHandle;
use std::path::PathBuf;
use std::sync::Arc;
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
    /// Run every test once per model (MODEL or PROVIDER:MODEL) and print a test × model
    /// table.
    #[arg(long, value_name = "MODEL,…", value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// Also write the results as a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
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

/// The provider settings of a model of `--models`, as the command line and the
/// configuration file make them for its provider.
pub type SettingsFor<'a> = &'a dyn Fn(&ModelChoice) -> crate::error::Result<ProviderSettings>;

/// What `tasklisp test` takes from the rest of the command line.
pub struct Context<'a> {
    pub limits: Limits,
    pub settings: ProviderSettings,
    pub settings_for: SettingsFor<'a>,
    pub imports: Vec<PathBuf>,
    pub log: Option<LogHandle>,
    pub cache: bool,
    /// `--json`: print the results as one JSON document.
    pub json: bool,
}

/// Runs `tasklisp test`; returns the exit status (0 passed, 1 failed, 2 usage).
pub fn run_command(args: &TestArgs, context: Context) -> i32 {
    let timeout = match Duration::try_from_secs_f64(args.timeout) {
        Ok(timeout) if !timeout.is_zero() => timeout,
        _ => {
            eprintln!("tasklisp test: --timeout must be a positive number of seconds");
            return USAGE;
        }
    };
    let columns = match columns(args, &context) {
        Ok(columns) => columns,
        Err(message) => {
            eprintln!("tasklisp test: {message}");
            return USAGE;
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let config = RunConfig {
        paths: args.paths.clone(),
        jobs,
        filter: args.filter.clone(),
        reports: Reports {
            junit: args.junit.clone(),
            html: args.html.clone(),
            json: context.json,
        },
        record: args.record,
        timeout,
        judge_model: args.judge_model.clone(),
        limits: context.limits,
        columns,
        prices: Arc::new(crate::prices::Prices::load(&|name| {
            std::env::var(name).ok().filter(|v| !v.is_empty())
        })),
        imports: context.imports,
        log: context.log,
        cache: context.cache,
    };
    run(&config, &mut std::io::stdout().lock())
}

/// The columns of the run: the configured provider alone, or one per model of
/// `--models`.
fn columns(args: &TestArgs, context: &Context) -> Result<Vec<Arc<Column>>, String> {
    let Some(models) = &args.models else {
        return Ok(vec![Arc::new(Column {
            label: None,
            settings: context.settings.clone(),
        })]);
    };
    parse_models(models)?
        .into_iter()
        .map(|choice| {
            let settings = (context.settings_for)(&choice)
                .map_err(|e| format!("--models `{}`: {e}", choice.label))?;
            Ok(Arc::new(Column {
                label: Some(choice.label),
                settings,
            }))
        })
        .collect()
}
