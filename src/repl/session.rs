//! The interactive session: read a complete input, run it, print the result or the
//! error, and go on.

use super::abbreviate::abbreviate;
use super::editor::{command_argument, history_path, ReplHelper};
use super::help::KEYWORDS;
use super::Settings;
use crate::error::{Error, Result};
use crate::eval::reader;
use crate::eval::Interp;
use crate::interrupt::SigintHandler;
use crate::symbol::Sym;
use crate::value::Value;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Config, Editor};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const PROMPT: &str = "tl> ";
/// The prompt in the `:chat` sub-mode.
const CHAT_PROMPT: &str = "chat> ";

/// What the loop does after an input.
pub enum Next {
    Continue,
    /// `:quit` or `(exit n)`: end the session with this status.
    Exit(i32),
}

pub struct Session<'a> {
    pub interp: &'a Interp,
    settings: &'a Settings,
    /// Inputs run so far: each is registered as the source `<repl:N>`.
    inputs: Cell<usize>,
    /// The last value printed, for `:show`.
    pub last: RefCell<Value>,
    /// The global bindings before the session began, so `:env` shows only the user's.
    baseline: HashMap<Sym, Value>,
    sigint: SigintHandler,
    /// Ctrl-C was pressed during the last evaluation: the terminal echoed `^C`.
    interrupted: Cell<bool>,
    /// In the `:chat` sub-mode: the conversation so far.
    pub chat: Option<Value>,
}

impl<'a> Session<'a> {
    pub fn new(interp: &'a Interp, settings: &'a Settings) -> Session<'a> {
        let baseline = interp
            .global_names()
            .into_iter()
            .filter_map(|name| Some((name, interp.global(name)?)))
            .collect();
        Session {
            interp,
            settings,
            inputs: Cell::new(0),
            last: RefCell::new(Value::Nil),
            baseline,
            sigint: SigintHandler::install(),
            interrupted: Cell::new(false),
            chat: None,
        }
    }

    /// The global names the session added or rebound, sorted.
    pub fn user_definitions(&self) -> Vec<(Sym, Value)> {
        let underscore = Sym::new("_");
        let mut defined: Vec<(Sym, Value)> = self
            .interp
            .global_names()
            .into_iter()
            .filter(|&name| name != underscore)
            .filter_map(|name| Some((name, self.interp.global(name)?)))
            .filter(|(name, value)| {
                !self
                    .baseline
                    .get(name)
                    .is_some_and(|old| old.identical(value))
            })
            .collect();
        defined.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        defined
    }

    /// Runs one input (code or a command) and prints what it gives.
    pub fn handle(&mut self, input: &str) -> Next {
        if self.chat.is_some() {
            return self.chat_line(input);
        }
        if let Some((name, argument)) = command_argument(input) {
            return self.command(name, argument);
        }
        match self.evaluate(input, |value| self.print_value(value)) {
            Ok(()) => Next::Continue,
            Err(e) => self.report(&e),
        }
    }

    /// Reads and runs `text` as the next `<repl:N>` source, with Ctrl-C routed to the
    /// interpreter, handing each form's value to `each` as soon as it has one (so it is
    /// printed before the next form's output). `_` is bound to each value in turn.
    pub fn evaluate(&self, text: &str, mut each: impl FnMut(Value)) -> Result<()> {
        let number = self.inputs.get() + 1;
        self.inputs.set(number);
        let forms = reader::read_source(&format!("<repl:{number}>"), text)?;
        self.interruptibly(|interp| {
            for form in &forms {
                let value = interp.eval_syntax(form)?;
                interp.define_global(Sym::new("_"), value.clone());
                each(value);
            }
            Ok(())
        })
    }

    /// Runs `work` with Ctrl-C setting the interrupt flag, then clears the flag.
    pub fn interruptibly<T>(&self, work: impl FnOnce(&Interp) -> Result<T>) -> Result<T> {
        self.interp.clear_interrupt();
        let routing = self.sigint.route_to(self.interp.interrupt_flag());
        let result = work(self.interp);
        drop(routing);
        self.interrupted.set(self.interp.interrupted());
        self.interp.clear_interrupt();
        self.interp.flush();
        result
    }

    /// Prints a result abbreviated, with a note when something was elided.
    pub fn print_value(&self, value: Value) {
        let (text, elided) = abbreviate(&value);
        self.finish_line();
        self.say(&text);
        if elided {
            self.say("; abbreviated — :show prints it in full");
        }
        warn_if_cut_off(&value);
        self.last.replace(value);
    }

    /// Writes a line to standard output, after anything the program printed.
    pub fn say(&self, line: &str) {
        let mut out = self.interp.out();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    /// Ends a line the program (or the terminal's `^C`) left unfinished, so what the
    /// REPL prints starts afresh.
    fn finish_line(&self) {
        if !super::output::at_line_start() || self.interrupted.take() {
            self.say("");
        }
    }

    /// Reports an error on stderr; `(exit n)` ends the session instead.
    pub fn report(&self, error: &Error) -> Next {
        self.interp.flush();
        self.finish_line();
        if let Some(code) = error.exit_code() {
            return Next::Exit(code);
        }
        eprintln!("{}", error.formatted(self.settings.error_format));
        Next::Continue
    }

    fn completion_names(&self) -> Vec<String> {
        completion_names(self.interp)
    }
}

/// Everything Tab can complete: special forms, keywords, globals, macros and tasks (also
/// the language server's completion).
pub fn completion_names(interp: &Interp) -> Vec<String> {
    let forms = (interp.layers.forms())
        .map(|form| form.name)
        .chain(KEYWORDS.iter().copied())
        .map(str::to_owned)
        .chain(crate::task::table::keywords());
    let bound = interp
        .global_names()
        .into_iter()
        .chain(interp.macro_names())
        .map(|name| name.name().to_owned());
    forms.chain(bound).chain(interp.tasks.names()).collect()
}

pub fn run(interp: &Interp, settings: &Settings) -> i32 {
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .auto_add_history(false)
        .max_history_size(10_000)
        .and_then(|c| c.history_ignore_dups(true))
        .map(|c| c.build());
    let editor = config.and_then(Editor::<ReplHelper, DefaultHistory>::with_config);
    let mut editor = match editor {
        Ok(editor) => editor,
        Err(e) => {
            eprintln!("tasklisp: cannot start the line editor: {e}");
            return 1;
        }
    };
    editor.set_helper(Some(ReplHelper::default()));
    let mut history = history_path();
    if let Some(path) = &history {
        // A missing file is a first session; anything else is worth a word.
        if path.exists() {
            if let Err(e) = editor.load_history(path) {
                eprintln!("tasklisp: cannot read the history {}: {e}", path.display());
            }
        }
    }
    if !settings.quiet {
        println!(
            "tasklisp {} — :help for help, Ctrl-D to leave",
            env!("CARGO_PKG_VERSION")
        );
    }
    interp.tasks.set_replace_on_redefine(true);
    let mut session = Session::new(interp, settings);
    let status = repl_loop(&mut session, &mut editor, &mut history);
    interp.flush();
    status
}

fn repl_loop(
    session: &mut Session,
    editor: &mut Editor<ReplHelper, DefaultHistory>,
    history: &mut Option<PathBuf>,
) -> i32 {
    loop {
        if let Some(helper) = editor.helper_mut() {
            helper.set_names(session.completion_names());
        }
        let prompt = if session.chat.is_some() {
            CHAT_PROMPT
        } else {
            PROMPT
        };
        let input = match editor.readline(prompt) {
            Ok(input) => input,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("tasklisp: cannot read input: {e}");
                return 1;
            }
        };
        if input.trim().is_empty() {
            continue;
        }
        remember(editor, history, &input);
        if let Next::Exit(code) = session.handle(&input) {
            return code;
        }
    }
}

/// Adds the input to the history and appends it to the file at once, so a session
/// that is killed keeps what was typed. A file that cannot be written is reported once,
/// and the session goes on without it.
fn remember(
    editor: &mut Editor<ReplHelper, DefaultHistory>,
    history: &mut Option<PathBuf>,
    input: &str,
) {
    if !matches!(editor.add_history_entry(input), Ok(true)) {
        return;
    }
    let Some(path) = history.as_ref() else {
        return;
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = editor.append_history(path) {
        eprintln!(
            "tasklisp: cannot save the history in {} ({e}); it is kept for this session only",
            path.display()
        );
        *history = None;
    }
}

/// `1.234 s`, `12.3 ms` or `45 µs`.
pub fn format_duration(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.1} ms", seconds * 1e3)
    } else {
        format!("{:.0} µs", seconds * 1e6)
    }
}

/// Runs `work` and measures it.
pub fn timed<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = work();
    (value, start.elapsed())
}

/// Tells on stderr when a result's answer was cut off by the token limit.
pub fn warn_if_cut_off(value: &Value) {
    if let Some(warning) = crate::task::result::cut_off_warning(value) {
        eprintln!("; {warning}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.500 s");
        assert_eq!(format_duration(Duration::from_micros(12_340)), "12.3 ms");
        assert_eq!(format_duration(Duration::from_micros(45)), "45 µs");
    }
}
