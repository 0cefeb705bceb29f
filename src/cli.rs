//! The command line: `run`, `eval`, `check`, and the REPL when no command is given.

use crate::error::{Error, Result};
use crate::eval::{run_on_large_stack, Interp, Limits};
use crate::provider::options::parse_flag_value;
use crate::provider::ModelOptions;
use crate::task::ProviderSettings;
use crate::value::{to_json, write_string, Value};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug, Clone)]
#[command(
    name = "tasklisp",
    version,
    about = "A Lisp in which tasks are functions"
)]
pub struct Options {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Import an XML template file or .sexp module before running (repeatable).
    #[arg(long = "import", value_name = "FILE", global = true)]
    pub imports: Vec<PathBuf>,
    /// The model provider: echo, openai, anthropic, command, replay, record.
    #[arg(long, global = true, env = "TASKLISP_PROVIDER")]
    pub provider: Option<String>,
    /// The model name sent to the provider.
    #[arg(long, short = 'm', global = true, env = "TASKLISP_MODEL")]
    pub model: Option<String>,
    /// A model option, e.g. `-o temperature 0` (repeatable): temperature, max_tokens,
    /// top_p, stop, seed. Tasks, `with-provider` and `set-provider!` override it.
    #[arg(short = 'o', long = "option", num_args = 2, value_names = ["NAME", "VALUE"], global = true)]
    pub options: Vec<String>,
    /// A provider to try when the provider fails with no answer, a timeout, a 5xx or a
    /// 429 (repeatable, in order).
    #[arg(long = "fallback", value_name = "PROVIDER", global = true)]
    pub fallbacks: Vec<String>,
    /// Requests per minute to send at most (a token bucket shared by `pmap` items).
    #[arg(long = "rate-limit", value_name = "RPM", global = true)]
    pub rate_limit: Option<u32>,
    /// The provider's base URL (for OpenAI-compatible servers, ending in /v1).
    #[arg(long = "base-url", global = true)]
    pub base_url: Option<String>,
    /// Nested non-tail calls allowed before RESOURCE_EXHAUSTION.
    #[arg(long = "max-depth", default_value_t = 10_000, global = true)]
    pub max_depth: usize,
    /// Nested task calls allowed before RESOURCE_EXHAUSTION.
    #[arg(long = "max-task-depth", default_value_t = 100, global = true)]
    pub max_task_depth: usize,
    /// Print `eval` results as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// How errors are printed on stderr.
    #[arg(long = "error-format", value_enum, default_value_t = ErrorFormat::Text, global = true)]
    pub error_format: ErrorFormat,
    /// Every `pmap` sends its items' model calls as one batch job (OpenAI Batch API,
    /// Anthropic Message Batches), as `:batch true` does.
    #[arg(long, global = true)]
    pub batch: bool,
    /// No start-up banner in the REPL.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Run a script; ARGS are bound to *args* as strings.
    Run {
        file: PathBuf,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Evaluate expressions and print the value of the last one.
    Eval {
        #[arg(required = true, allow_negative_numbers = true)]
        exprs: Vec<String>,
    },
    /// Read and check .sexp and .xml files without running them.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run the `deftest` tests of .sexp files (see docs/TESTING.md).
    Test(crate::testing::TestArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFormat {
    Text,
    Json,
}

impl Options {
    pub fn limits(&self) -> Limits {
        Limits {
            max_depth: self.max_depth.max(1),
            max_task_depth: self.max_task_depth.max(1),
            ..Limits::default()
        }
    }

    pub fn provider_settings(&self) -> Result<ProviderSettings> {
        let mut options = ModelOptions::default();
        for pair in self.options.chunks(2) {
            if let [name, value] = pair {
                options
                    .set(name, parse_flag_value(value))
                    .map_err(|e| Error::validation(format!("-o: {e}")))?;
            }
        }
        Ok(ProviderSettings {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            options,
            fallbacks: self.fallbacks.clone(),
            requests_per_minute: self.rate_limit,
        })
    }
}

/// Parses the arguments and runs; returns the process exit status.
pub fn main() -> i32 {
    let options = match Options::try_parse() {
        Ok(o) => o,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { USAGE } else { 0 };
        }
    };
    // A bad `-o` is bad usage, found before anything runs.
    if let Err(e) = options.provider_settings() {
        eprintln!("tasklisp: {}", e.message());
        return USAGE;
    }
    let limits = options.limits();
    let outcome = run_on_large_stack(&limits, move |limits| run(&options, limits));
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tasklisp: {e}");
            1
        }
    }
}

fn run(options: &Options, limits: Limits) -> i32 {
    // Tests run in interpreters of their own, one per test.
    if let Some(Command::Test(args)) = &options.command {
        let settings = match options.provider_settings() {
            Ok(settings) => settings,
            Err(e) => return report(options, &e),
        };
        return crate::testing::run_command(args, limits, settings, options.imports.clone());
    }
    // The REPL's output remembers whether a line is open, so results start on their own.
    let made = match options.command {
        None => Interp::with_output(limits, crate::repl::output()),
        Some(_) => Interp::new(limits),
    };
    let interp = match made {
        Ok(i) => i,
        Err(e) => return report(options, &e),
    };
    let result = setup(&interp, options).and_then(|()| match &options.command {
        Some(Command::Run { file, args }) => match std::fs::read(file) {
            // A script that cannot be read is bad usage, not an error in a program.
            Err(e) => {
                let error = Error::eval(format!("cannot read {}: {e}", file.display()));
                Ok(report_with_status(options, &error, USAGE))
            }
            Ok(bytes) => {
                let sigint = crate::interrupt::SigintHandler::install_for_script();
                let _routing = sigint.route_to(interp.interrupt_flag());
                decode(file, bytes)
                    .and_then(|text| run_file(&interp, file, &text, args))
                    .map(|_| 0)
            }
        },
        Some(Command::Eval { exprs }) => eval_exprs(&interp, options, exprs).map(|()| 0),
        Some(Command::Check { files }) => Ok(check_files(&interp, options, files)),
        // Handled before an interpreter is made.
        Some(Command::Test(_)) => Ok(USAGE),
        None => Ok(crate::repl::main(&interp, options)),
    });
    interp.flush();
    match result {
        Ok(code) => code,
        Err(e) => match e.exit_code() {
            Some(code) => code,
            None => report(options, &e),
        },
    }
}

/// Applies the flags that configure an interpreter: provider settings and `--import`s.
pub fn setup(interp: &Interp, options: &Options) -> Result<()> {
    interp.configure_provider(options.provider_settings()?)?;
    interp.tasks.set_batch_default(options.batch);
    for file in &options.imports {
        crate::module::import_file(interp, file, None)?;
    }
    Ok(())
}

/// The exit status of bad usage: unknown flags, a script that cannot be read.
pub const USAGE: i32 = 2;

/// Prints an error on stderr as the options ask; returns exit status 1.
pub fn report(options: &Options, error: &Error) -> i32 {
    report_with_status(options, error, 1)
}

fn report_with_status(options: &Options, error: &Error, status: i32) -> i32 {
    eprintln!("{}", format_error(options.error_format, error));
    status
}

/// `--error-format json` prints at most this many bytes of error map.
const MAX_JSON_ERROR: usize = 64 * 1024;

pub fn format_error(format: ErrorFormat, error: &Error) -> String {
    match format {
        ErrorFormat::Json => error.to_bounded_json(MAX_JSON_ERROR).to_string(),
        ErrorFormat::Text => error
            .render(std::io::stderr().is_terminal())
            .trim_end()
            .to_owned(),
    }
}

/// A script's bytes as text; bytes that are not UTF-8 are a `SYNTAX_ERROR`.
fn decode(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        Error::new(
            crate::error::ErrorKind::Syntax,
            format!(
                "{} is not valid UTF-8 (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn run_file(interp: &Interp, file: &Path, text: &str, args: &[String]) -> Result<Value> {
    let argv = Value::list(args.iter().map(|a| Value::from(a.as_str())).collect());
    interp.define_global(crate::symbol::Sym::new("*args*"), argv);
    interp.loading().borrow_mut().push(file.to_path_buf());
    let result = interp.run_source(&file.display().to_string(), text);
    interp.loading().borrow_mut().pop();
    result
}

fn eval_exprs(interp: &Interp, options: &Options, exprs: &[String]) -> Result<()> {
    let value = interp.run_source("<eval>", &exprs.join("\n"))?;
    let text = if options.json {
        to_json(&value)?.to_string()
    } else {
        write_string(&value)
    };
    let mut out = interp.out();
    writeln!(out, "{text}").map_err(|e| Error::eval(format!("cannot write output: {e}")))?;
    Ok(())
}

use std::io::Write;

fn check_files(interp: &Interp, options: &Options, files: &[PathBuf]) -> i32 {
    crate::module::declare_xml_tasks(interp, files);
    let mut status = 0;
    for file in files {
        match crate::module::check_file(interp, file) {
            Ok(()) => {
                let _ = writeln!(interp.out(), "{}: ok", file.display());
            }
            Err(e) => {
                interp.flush();
                status = report(options, &e);
            }
        }
    }
    status
}
