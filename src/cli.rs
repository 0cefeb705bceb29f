//! The command line: `run`, `eval`, `check`, and the REPL when no command is given.

use crate::capabilities::Capabilities;
use crate::error::{Error, ErrorFormat, Result};
use crate::eval::{run_on_large_stack, Interp, Limits};
use crate::provider::options::parse_flag_value;
use crate::provider::ModelOptions;
use crate::provider::ProviderSettings;
use crate::task::sink::StreamTo;
use crate::value::bounds::read_file_bytes;
use crate::value::{to_json, write_string, Value};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

mod args;
mod cache;
mod check;
mod completions;
mod config;
mod fmt;
mod log;
mod prompt;
mod resume;

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
    #[arg(long, global = true, env = "TASKLISP_PROVIDER", help = provider_help())]
    pub provider: Option<String>,
    /// The model name sent to the provider.
    #[arg(long, short = 'm', global = true, env = "TASKLISP_MODEL")]
    pub model: Option<String>,
    /// A model option, e.g. `-o temperature 0` (repeatable): temperature, max_tokens,
    /// top_p, stop, seed, frequency_penalty, presence_penalty, reasoning_effort,
    /// service_tier, extra_body. Tasks, `with-provider` and `set-provider!` override it.
    #[arg(short = 'o', long = "option", num_args = 2, value_names = ["NAME", "VALUE"], global = true)]
    pub options: Vec<String>,
    /// A JSON map merged into every model request's body as is, for fields tasklisp
    /// does not model (the `extra_body` model option).
    #[arg(long = "extra-body", value_name = "JSON", global = true)]
    pub extra_body: Option<String>,
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
    /// Nested non-tail calls allowed before RESOURCE_EXHAUSTION (at most 100000).
    #[arg(long = "max-depth", default_value_t = 10_000, global = true,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=crate::eval::MAX_DEPTH_LIMIT as u64))]
    pub max_depth: usize,
    /// Nested task calls allowed before RESOURCE_EXHAUSTION.
    #[arg(long = "max-task-depth", default_value_t = 100, global = true)]
    pub max_task_depth: usize,
    /// Heap the program may use before RESOURCE_EXHAUSTION: bytes, or a number with K, M
    /// or G [default: half the memory].
    #[arg(long = "max-memory", value_name = "SIZE", global = true,
          value_parser = crate::memory::parse_size)]
    pub max_memory: Option<u64>,
    /// The largest file run, imported, loaded or read: bytes, or a number with K, M or G.
    #[arg(long = "max-file-size", value_name = "SIZE", default_value = "64M", global = true,
          value_parser = crate::memory::parse_size)]
    pub max_file_size: u64,
    /// Print results as JSON (`eval`'s value, `log`'s runs and calls, `test`'s results).
    #[arg(long, global = true)]
    pub json: bool,
    /// How errors are printed on stderr.
    #[arg(long = "error-format", value_enum, default_value_t = ErrorFormat::Text, global = true)]
    pub error_format: ErrorFormat,
    /// Every `pmap` sends its items' model calls as one batch job (OpenAI Batch API,
    /// Anthropic Message Batches), as `:batch true` does.
    #[arg(long, global = true)]
    pub batch: bool,
    /// Show the answers of atomic tasks called at the top level as they arrive (on
    /// stdout when it is a terminal, else on stderr).
    #[arg(long, global = true)]
    pub stream: bool,
    /// No start-up banner in the REPL.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Run code you did not write: no programs, files outside allowed directories,
    /// environment variables or providers chosen by the code, unless an --allow flag
    /// allows them.
    #[arg(long, global = true)]
    pub sandbox: bool,
    /// With --sandbox: the programs code may run (every program when none are named).
    #[arg(long = "allow-exec", value_name = "PROG,…", num_args = 0.., require_equals = true,
          value_delimiter = ',', requires = "sandbox", global = true)]
    pub allow_exec: Option<Vec<String>>,
    /// With --sandbox: a directory whose files code may read (repeatable).
    #[arg(
        long = "allow-read",
        value_name = "DIR",
        value_delimiter = ',',
        requires = "sandbox",
        global = true
    )]
    pub allow_read: Vec<PathBuf>,
    /// With --sandbox: a directory whose files code may write (repeatable).
    #[arg(
        long = "allow-write",
        value_name = "DIR",
        value_delimiter = ',',
        requires = "sandbox",
        global = true
    )]
    pub allow_write: Vec<PathBuf>,
    /// With --sandbox: environment variables `getenv` may read.
    #[arg(
        long = "allow-env",
        value_name = "NAME,…",
        value_delimiter = ',',
        requires = "sandbox",
        global = true
    )]
    pub allow_env: Vec<String>,
    /// With --sandbox: providers code may choose by name (set-provider!, with-provider).
    #[arg(
        long = "allow-provider",
        value_name = "NAME,…",
        value_delimiter = ',',
        requires = "sandbox",
        global = true
    )]
    pub allow_provider: Vec<String>,
    /// With --sandbox: hosts (HOST or HOST:PORT) code may send requests to when it
    /// chooses the address itself (a provider's base_url given in code).
    #[arg(
        long = "allow-net",
        value_name = "HOST,…",
        value_delimiter = ',',
        requires = "sandbox",
        global = true
    )]
    pub allow_net: Vec<String>,
    /// With --sandbox: a program that the kernel cannot confine (no Landlock, or an
    /// --allow-net entry where TCP cannot be filtered) fails instead of running
    /// unconfined.
    #[arg(long = "require-confinement", requires = "sandbox", global = true)]
    pub require_confinement: bool,
    /// Record nothing in the run log (also TASKLISP_LOG=off).
    #[arg(long = "no-log", global = true)]
    pub no_log: bool,
    /// Answer requests identical to earlier successful ones from the run log (also
    /// TASKLISP_CACHE=on).
    #[arg(long, global = true)]
    pub cache: bool,
    /// Stop model calls once this many US dollars have been spent.
    #[arg(long = "budget-usd", value_name = "USD", global = true)]
    pub budget_usd: Option<f64>,
    /// Stop model calls after this many.
    #[arg(long = "budget-calls", value_name = "N", global = true)]
    pub budget_calls: Option<u64>,
    /// A question (`ask-human`, a tool call to approve) stops the run with exit status 3
    /// even at a terminal; `tasklisp resume RUN --answer TEXT` goes on.
    #[arg(long = "no-input", global = true)]
    pub no_input: bool,
    /// Every tool call a model asks for waits for a person's approval (`y` runs it).
    #[arg(long = "approve-tools", global = true)]
    pub approve_tools: bool,
    /// Export the run as OpenTelemetry traces (OTLP/HTTP JSON) to this base URL
    /// (`/v1/traces` is added); a run also reads OTEL_EXPORTER_OTLP_ENDPOINT. With
    /// `log RUN`: export that past run.
    #[arg(long = "otlp", value_name = "URL", global = true)]
    pub otlp: Option<String>,
    /// With --otlp: include message contents (prompts, answers, tool arguments).
    #[arg(long = "otlp-content", global = true)]
    pub otlp_content: bool,
    /// The configuration file's settings, under the flags and the environment.
    #[arg(skip)]
    pub config: crate::config::Config,
    /// The command line's words after the program's name (for the run log).
    #[arg(skip)]
    pub argv: Vec<String>,
    /// `tasklisp resume`: the run taken up and its journal.
    #[arg(skip)]
    pub resume: Option<resume::Plan>,
}

/// `--provider`'s help, listing the providers from their table.
fn provider_help() -> String {
    format!("The model provider: {}", crate::provider::kinds::listing())
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Run a script; ARGS are bound to *args* as strings.
    Run {
        /// The .sexp script to run, or - to read it from standard input.
        file: PathBuf,
        /// Arguments for the script, bound to *args*: everything after FILE, flags included.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Evaluate expressions and print the value of the last one.
    Eval {
        /// Expressions, read as one program; the last one's value is printed.
        #[arg(required = true, allow_negative_numbers = true)]
        exprs: Vec<String>,
    },
    /// Read and check .sexp and .xml files without running them.
    Check {
        /// The .sexp and .xml files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Fail on warnings too (problems in code a run may never reach).
        #[arg(long)]
        strict: bool,
    },
    /// Show the run log: recent runs, or the call tree of RUN (an id or its start).
    Log {
        /// A run's id, or its first characters: show that run's call tree.
        run: Option<String>,
        /// How many runs to list.
        #[arg(short = 'n', default_value_t = 20)]
        limit: usize,
    },
    /// Send one prompt (TEXT, then stdin when it is not a terminal) and print the answer.
    Prompt {
        text: Vec<String>,
        /// The system prompt.
        #[arg(short = 's', long)]
        system: Option<String>,
        /// A JSON Schema (or type name) the answer must be JSON of.
        #[arg(long)]
        schema: Option<String>,
        /// A file or URL sent with the prompt (an image, a PDF, audio); repeatable.
        #[arg(short = 'a', long = "attachment", value_name = "FILE")]
        attachments: Vec<String>,
    },
    /// Run the `deftest` tests of .sexp files (see docs/TESTING.md).
    Test(crate::testing::TestArgs),
    /// The answer cache: `cache clear [--task NAME] [--older-than DURATION]`.
    Cache(cache::CacheArgs),
    /// Serve the tasks of FILES as MCP tools, over stdio or (--http) streamable HTTP.
    Mcp {
        /// The .sexp and .xml files whose tasks are served.
        files: Vec<PathBuf>,
        /// Serve at http://127.0.0.1:PORT/mcp instead of stdio (0: a free port).
        #[arg(long, value_name = "PORT")]
        http: Option<u16>,
    },
    /// Format .sexp files in the canonical layout (see docs/FORMAT.md).
    Fmt(fmt::FmtArgs),
    /// Show the settings in effect and where each came from (flag, environment,
    /// configuration file, default).
    Config,
    /// Print a completion script for the shell: `tasklisp completions bash >
    /// ~/.local/share/bash-completion/completions/tasklisp`.
    Completions {
        #[arg(value_enum)]
        shell: completions::Shell,
    },
    /// Serve the Language Server Protocol on stdin and stdout, for editors (see
    /// docs/EDITORS.md).
    Lsp,
    /// Resume a stopped run: run its script again with its flags and arguments, the
    /// steps its journal holds answered from it, the rest live. Flags before RUN
    /// replace the run's own; ARGS, when given, its arguments.
    Resume {
        /// A run's id, or its first characters.
        run: String,
        /// The answer to the question the run stopped at (repeatable, in order).
        #[arg(long, value_name = "TEXT")]
        answer: Vec<String>,
        /// Arguments for the script, instead of the run's.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// `--error-format`'s values, as clap reads them.
impl ValueEnum for ErrorFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[ErrorFormat::Text, ErrorFormat::Json]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(match self {
            ErrorFormat::Text => "text",
            ErrorFormat::Json => "json",
        }))
    }
}

impl Options {
    pub fn limits(&self) -> Limits {
        Limits {
            max_depth: self.max_depth.max(1),
            max_task_depth: self.max_task_depth.max(1),
            capabilities: self.capabilities(),
            max_memory: self.max_memory.or(Limits::default().max_memory),
            max_file_bytes: self.max_file_size,
            ..Limits::default()
        }
    }

    /// Everything without `--sandbox`; with it, what the `--allow-…` flags name.
    pub fn capabilities(&self) -> Capabilities {
        if !self.sandbox {
            return Capabilities::all();
        }
        Capabilities {
            exec: match &self.allow_exec {
                None => Some(Vec::new()),
                // `--allow-exec` alone allows every program.
                Some(programs) if programs.is_empty() => None,
                Some(programs) => Some(programs.clone()),
            },
            read: Some(self.allow_read.clone()),
            write: Some(self.allow_write.clone()),
            env: Some(self.allow_env.clone()),
            providers: Some(self.allow_provider.clone()),
            net: Some(self.allow_net.clone()),
        }
    }

    pub fn provider_settings(&self) -> Result<ProviderSettings> {
        self.provider_settings_for(self.provider.clone(), self.model.clone())
    }

    /// The settings for `model` of `provider` (`tasklisp test --models`): the flags'
    /// options, and `--base-url` when it is the flags' provider.
    pub fn provider_settings_for(
        &self,
        provider: Option<String>,
        model: Option<String>,
    ) -> Result<ProviderSettings> {
        let mut options = ModelOptions::default();
        for (name, value) in &self.config.options {
            options
                .set(name, value.clone())
                .map_err(Error::validation)?;
        }
        for pair in self.options.chunks(2) {
            if let [name, value] = pair {
                options
                    .set(name, parse_flag_value(value))
                    .map_err(|e| Error::validation(format!("-o: {e}")))?;
            }
        }
        if let Some(text) = &self.extra_body {
            let body = serde_json::from_str(text)
                .map_err(|e| Error::validation(format!("--extra-body must be a JSON map: {e}")))?;
            options
                .set("extra_body", body)
                .map_err(|e| Error::validation(format!("--extra-body: {e}")))?;
        }
        let base_url = self.base_url.clone().filter(|_| provider == self.provider);
        let mut settings = ProviderSettings {
            provider,
            model,
            base_url,
            api_key_env: None,
            options,
            fallbacks: self.fallbacks.clone(),
            requests_per_minute: self.rate_limit,
        };
        self.config.apply(&mut settings, &log::env_var);
        Ok(settings)
    }
}

/// Parses the arguments and runs; returns the process exit status.
pub fn main() -> i32 {
    // The command line's notices (a task redefined, a run log that is off) are lines on
    // stderr; an embedder installs its own hook.
    crate::notice::set_hook(crate::notice::stderr());
    let (argv, plan) = match resume::rewrite(std::env::args_os().collect()) {
        Ok(rewritten) => rewritten,
        Err(message) => {
            eprintln!("tasklisp: {message}");
            return 1;
        }
    };
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let (argv, script_args) = args::split_script_args(argv);
    let help = subcommand_help(&argv);
    let mut command = args::built_command();
    let parsed = command
        .try_get_matches_from_mut(argv)
        .and_then(|mut matches| {
            Options::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
        })
        .map(|mut options| {
            if let Some(Command::Run { args, .. }) = &mut options.command {
                *args = script_args;
            }
            options.argv = words;
            options.resume = plan;
            options
        });
    let mut options = match parsed {
        Ok(o) => o,
        Err(e) => {
            match help {
                Some(help) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
                    // A closed pipe ends the help quietly, as it ends any output.
                    let _ = std::io::stdout().write_all(help.as_bytes());
                }
                _ => {
                    let _ = e.print();
                }
            }
            return if e.use_stderr() { USAGE } else { 0 };
        }
    };
    match crate::config::load(&log::env_var) {
        Ok(config) => options.config = config,
        Err(e) => {
            eprintln!("tasklisp: {}", e.message());
            return USAGE;
        }
    }
    if let Some(message) = usage_problem(&options) {
        eprintln!("tasklisp: {message}");
        return USAGE;
    }
    let limits = options.limits();
    crate::process::set_process_sandbox(limits.capabilities.clone(), options.require_confinement);
    let outcome = run_on_large_stack(&limits, move |limits| run(&options, limits));
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tasklisp: {e}");
            1
        }
    }
}

/// The global flags a subcommand's `--help` lists; it accepts the others too (they may
/// come before or after it) but they do nothing for it. Subcommands not listed show all.
const HELP_FLAGS: &[(&str, &[&str])] = &[
    (
        "check",
        &["imports", "max_memory", "max_file_size", "error_format"],
    ),
    ("log", &["json", "error_format", "otlp", "otlp_content"]),
    ("fmt", &["max_file_size", "error_format"]),
    (
        "config",
        &["provider", "model", "options", "base_url", "json"],
    ),
    ("completions", &[]),
    ("lsp", &["max_memory", "max_file_size"]),
    ("cache", &[]),
    (
        "test",
        &[
            "imports",
            "provider",
            "model",
            "options",
            "fallbacks",
            "rate_limit",
            "base_url",
            "max_depth",
            "max_task_depth",
            "max_memory",
            "max_file_size",
            "sandbox",
            "allow_exec",
            "allow_read",
            "allow_write",
            "allow_env",
            "allow_provider",
            "allow_net",
            "require_confinement",
            "no_log",
            "cache",
            "json",
        ],
    ),
];

/// The help of a subcommand that lists only some global flags (see [`HELP_FLAGS`]), for
/// a command line asking for it; other help is clap's own. Parsing is left to clap's
/// parser as derived: this command only prints.
fn subcommand_help(argv: &[OsString]) -> Option<String> {
    let word = argv.get(args::command_position(argv)?)?.to_str()?;
    let (name, shown) = HELP_FLAGS.iter().find(|(name, _)| *name == word)?;
    let mut command = Options::command();
    let unshown: Vec<clap::Id> = command
        .get_arguments()
        .filter(|a| a.is_global_set() && !shown.contains(&a.get_id().as_str()))
        .map(|a| a.get_id().clone())
        .collect();
    for id in unshown {
        command = command.mut_arg(id, |a| a.global(false));
    }
    command.build();
    let sub = command.find_subcommand_mut(name)?;
    Some(sub.render_help().to_string())
}

/// Mistakes in the command line that clap cannot see: an unknown provider, an XML
/// file given to `run`.
fn usage_problem(options: &Options) -> Option<String> {
    if let Err(e) = options.provider_settings() {
        return Some(e.message().to_owned());
    }
    if let Some(kind) = options.provider.as_deref() {
        if !crate::provider::is_known(kind) {
            let error = crate::provider::kinds::unknown_provider(kind);
            return Some(error.message().to_owned());
        }
    }
    if let Some(Command::Run { file, .. }) = &options.command {
        if file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        {
            let f = file.display();
            return Some(format!(
                "{f} is an XML template file, which defines tasks but does not run: import it \
                 (`tasklisp --import {f} run script.sexp`, or `(import \"{f}\")` in a script)"
            ));
        }
    }
    None
}

/// A script's bytes: the file's, or standard input's for `-`.
/// The script's bytes: the file's (within `limit`), or standard input's for `-`.
fn read_script(file: &Path, limit: u64) -> Result<Vec<u8>> {
    if file == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), limit),
            &mut bytes,
        )
        .map_err(|e| Error::eval(format!("cannot read the script from stdin: {e}")))?;
        return Ok(bytes);
    }
    read_file_bytes(file, limit)
}

/// The commands that make no interpreter of their own (or one per test), run; `None`
/// for the others.
fn run_without_interpreter(options: &Options, limits: &Limits) -> Option<i32> {
    let code = match options.command.as_ref()? {
        Command::Log { run, limit } => log::show(options, run.as_deref(), *limit),
        Command::Cache(args) => cache::run(options, args),
        Command::Fmt(args) => fmt::run(options, args),
        Command::Config => config::run(options),
        Command::Completions { shell } => completions::run(options, *shell),
        Command::Lsp => {
            let help = crate::lsp::Help {
                describe: crate::repl::describe,
                names: crate::repl::completion_names,
            };
            crate::lsp::serve(limits.clone(), help)
        }
        // Tests run in interpreters of their own, one per test.
        Command::Test(args) => log::run_tests(options, args, limits.clone()),
        _ => return None,
    };
    Some(code)
}

fn run(options: &Options, limits: Limits) -> i32 {
    if let Some(code) = run_without_interpreter(options, &limits) {
        return code;
    }
    // The REPL's and `eval`'s output remembers whether a line is open, so the value
    // printed after `(display "hi")` starts on its own line.
    let made = match options.command {
        None | Some(Command::Eval { .. }) => Interp::with_output(limits, crate::repl::output()),
        // Stdout carries the protocol: what the tasks print goes to stderr.
        Some(Command::Mcp { .. }) => Interp::with_output(limits, Box::new(std::io::stderr())),
        // Checking runs only the files' macros, and those with no rights.
        Some(Command::Check { .. }) => Interp::new(crate::module::checking_limits(&limits)),
        Some(_) => Interp::new(limits),
    };
    let interp = match made {
        Ok(i) => i,
        Err(e) => return report(options, &e),
    };
    let result = setup(&interp, options).and_then(|()| match &options.command {
        Some(Command::Run { file, args }) => match read_script(file, options.max_file_size) {
            // A script that cannot be read is bad usage, not an error in a program.
            Err(error) => Ok(report_with_status(options, &error, USAGE)),
            Ok(bytes) => {
                let sigint = crate::interrupt::SigintHandler::install_for_script();
                let _routing = sigint.route_to(interp.interrupt_flag());
                decode(file, bytes)
                    .and_then(|text| run_file(&interp, file, &text, args))
                    .map(|_| 0)
            }
        },
        Some(Command::Eval { exprs }) => eval_exprs(&interp, options, exprs).map(|()| 0),
        Some(Command::Check { files, strict }) => {
            Ok(check::check_files(&interp, options, files, *strict))
        }
        Some(Command::Prompt {
            text,
            system,
            schema,
            attachments,
        }) => {
            let parts = prompt::Parts {
                system: system.as_deref(),
                schema: schema.as_deref(),
                attachments,
            };
            prompt::run(&interp, options, text, &parts)
        }
        Some(Command::Mcp { files, http }) => crate::mcp::server::serve(&interp, files, *http),
        Some(
            Command::Log { .. }
            | Command::Cache(_)
            | Command::Fmt(_)
            | Command::Config
            | Command::Completions { .. }
            | Command::Lsp,
        ) => Ok(0),
        // Made a `run` before parsing (see `resume::rewrite`).
        Some(Command::Resume { .. }) => Ok(USAGE),
        // Handled before an interpreter is made.
        Some(Command::Test(_)) => Ok(USAGE),
        None => Ok(crate::repl::main(&interp, &repl_settings(options))),
    });
    let result = flushed(&interp, result);
    crate::mcp::close_all(&interp);
    log::finish(&interp, options, &result);
    match result {
        Ok(code) => code,
        Err(e) => match e.exit_code() {
            Some(code) => code,
            None => report(options, &e),
        },
    }
}

/// The result of a command once its output is flushed: output that could not be
/// written (a full disk), printed or streamed, fails the command; a closed pipe does not.
fn flushed(interp: &Interp, result: Result<i32>) -> Result<i32> {
    let failure = interp
        .out()
        .flush()
        .err()
        .or_else(crate::task::sink::take_stdout_failure);
    match (result, failure) {
        (Ok(_), Some(e)) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::stdout_write(&e))
        }
        (result, _) => result,
    }
}

/// Where answers of top-level atomic tasks are shown as they arrive: the REPL's terminal,
/// or with `--stream` stdout (stderr when stdout is not a terminal).
fn stream_to(options: &Options) -> Option<StreamTo> {
    let terminal = std::io::stdout().is_terminal();
    if options.command.is_none() && terminal && std::io::stdin().is_terminal() {
        return Some(StreamTo::Repl);
    }
    options.stream.then_some(if terminal {
        StreamTo::Stdout
    } else {
        StreamTo::Stderr
    })
}

/// What the REPL takes from the command line.
fn repl_settings(options: &Options) -> crate::repl::Settings {
    crate::repl::Settings {
        error_format: options.error_format,
        quiet: options.quiet,
    }
}

/// Applies the flags that configure an interpreter: provider settings and `--import`s.
pub fn setup(interp: &Interp, options: &Options) -> Result<()> {
    interp.configure_provider(options.provider_settings()?)?;
    log::install(interp, options);
    log::take_up(interp, options)?;
    interp.tasks.journal.set_no_input(options.no_input);
    interp
        .tasks
        .journal
        .set_approve_tools(options.approve_tools);
    interp.tasks.set_batch_default(options.batch);
    interp.tasks.set_streaming(stream_to(options));
    for file in &options.imports {
        crate::module::import_file(interp, file, None)?;
    }
    Ok(())
}

/// Prints `text` on stdout; returns the exit status: 0, also when the pipe was closed.
pub fn print_stdout(options: &Options, text: &str) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => 0,
        Err(e) => {
            let error = Error::stdout_write(&e);
            error.exit_code().unwrap_or_else(|| report(options, &error))
        }
    }
}

/// The exit status of bad usage: unknown flags, a script that cannot be read.
pub const USAGE: i32 = 2;

/// Prints an error on stderr as the options ask; returns exit status 1.
pub fn report(options: &Options, error: &Error) -> i32 {
    report_with_status(options, error, 1)
}

fn report_with_status(options: &Options, error: &Error, status: i32) -> i32 {
    eprintln!("{}", error.formatted(options.error_format));
    status
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
    interp.run_file(file, text)
}

fn eval_exprs(interp: &Interp, options: &Options, exprs: &[String]) -> Result<()> {
    let value = interp.run_source("<eval>", &exprs.join("\n"))?;
    let text = if options.json {
        to_json(&value)?.to_string()
    } else {
        write_string(&value)
    };
    let mut out = interp.out();
    let newline = if crate::repl::at_line_start() {
        ""
    } else {
        "\n"
    };
    writeln!(out, "{newline}{text}").map_err(|e| Error::stdout_write(&e))?;
    Ok(())
}

use std::io::Write;
