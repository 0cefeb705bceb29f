//! The line editor's helper: when Enter submits the input, Tab completion, history
//! hints and bracket highlighting.

use super::commands::{command_named, Argument, COMMANDS};
use crate::reader;
use crate::source::Span;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::{CmdKind, Highlighter, MatchingBracketHighlighter};
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Context, Helper};
use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Default)]
pub struct ReplHelper {
    /// Every name worth completing, sorted; refreshed before each prompt.
    names: Vec<String>,
    files: FilenameCompleter,
    hints: HistoryHinter,
    brackets: MatchingBracketHighlighter,
}

impl ReplHelper {
    pub fn set_names(&mut self, mut names: Vec<String>) {
        names.sort();
        names.dedup();
        self.names = names;
    }

    fn matching_names(&self, prefix: &str) -> Vec<Pair> {
        self.names
            .iter()
            .filter(|name| name.starts_with(prefix))
            .map(|name| Pair {
                display: name.clone(),
                replacement: name.clone(),
            })
            .collect()
    }
}

/// Whether the input is ready to run: commands at once, code when the reader finds its
/// forms complete. Any other syntax error is submitted too, to be reported.
pub fn input_is_complete(input: &str) -> bool {
    let code = match command_argument(input) {
        Some((name, expr)) if takes(name, Argument::Code) => expr,
        Some(_) => return true,
        None => input,
    };
    match reader::read_all(code, Span::generated().source) {
        Err(e) => !e.is_incomplete(),
        Ok(_) => true,
    }
}

/// Whether the command `name` takes this kind of argument.
fn takes(name: &str, argument: Argument) -> bool {
    command_named(name).is_some_and(|c| c.argument == argument)
}

/// Splits a command line (`:name rest`) into the command and its argument.
pub fn command_argument(input: &str) -> Option<(&str, &str)> {
    let line = input.trim_start();
    let rest = line.strip_prefix(':')?;
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let end = line.find(char::is_whitespace).unwrap_or(line.len());
    let (name, argument) = line.split_at(end);
    Some((name, argument.trim()))
}

/// Where the symbol being typed at `pos` starts.
fn word_start(line: &str, pos: usize) -> usize {
    line.get(..pos)
        .unwrap_or(line)
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || "()[]{}'`,\";".contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = word_start(line, pos);
        let word = line.get(start..pos).unwrap_or("");
        match command_argument(line) {
            Some((name, _)) if start > 0 && takes(name, Argument::File) => {
                self.files.complete(line, pos, ctx)
            }
            Some(_) if start == 0 || line.get(..start).is_some_and(|s| s.trim().is_empty()) => {
                Ok((start, commands_starting(word)))
            }
            _ => Ok((start, self.matching_names(word))),
        }
    }
}

/// The commands whose name starts with `word`, in alphabetical order.
fn commands_starting(word: &str) -> Vec<Pair> {
    let mut names: Vec<&str> = COMMANDS
        .iter()
        .map(|c| c.name)
        .filter(|name| name.starts_with(word))
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .map(|name| Pair {
            display: name.to_owned(),
            replacement: format!("{name} "),
        })
        .collect()
}

impl Hinter for ReplHelper {
    type Hint = String;

    fn hint(&self, line: &str, pos: usize, ctx: &Context<'_>) -> Option<String> {
        self.hints.hint(line, pos, ctx)
    }
}

impl Highlighter for ReplHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        self.brackets.highlight(line, pos)
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        self.brackets.highlight_char(line, pos, kind)
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if input_is_complete(ctx.input()) {
            ValidationResult::Valid(None)
        } else {
            ValidationResult::Incomplete
        })
    }
}

impl Helper for ReplHelper {}

/// The history file: `$TASKLISP_HISTORY`, else `tasklisp/history` in the XDG state
/// directory (`$XDG_STATE_HOME`, or `~/.local/state`).
pub fn history_path() -> Option<PathBuf> {
    history_path_from(|name| std::env::var_os(name), dirs::home_dir())
}

fn history_path_from(
    var: impl Fn(&str) -> Option<OsString>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    if let Some(path) = var("TASKLISP_HISTORY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let state = var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|home| home.join(".local").join("state")))?;
    Some(state.join("tasklisp").join("history"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;

    #[test]
    fn unfinished_forms_wait_for_more_input() {
        assert!(!input_is_complete("(define (f x)"));
        assert!(!input_is_complete("(display \"a"));
        assert!(!input_is_complete("[1 2"));
        assert!(!input_is_complete(":time (+ 1"));
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        assert!(input_is_complete("(display \")\")"));
        assert!(input_is_complete("(list 1 2) ; (unclosed"));
        assert!(!input_is_complete("(list 1 ; )\n 2"));
        assert!(input_is_complete("\"(\""));
    }

    #[test]
    fn other_syntax_errors_are_submitted_to_be_reported() {
        assert!(input_is_complete("(+ 1 2))"));
        assert!(input_is_complete(":tasks"));
        assert!(input_is_complete(":load (unbalanced"));
    }

    #[test]
    fn commands_split_into_name_and_argument() {
        assert_eq!(
            command_argument("  :describe  map "),
            Some((":describe", "map"))
        );
        assert_eq!(command_argument(":env"), Some((":env", "")));
        assert_eq!(command_argument(":kw"), Some((":kw", "")));
        assert_eq!(command_argument("(:kw)"), None);
        assert_eq!(command_argument(": x"), None);
    }

    #[test]
    fn completion_offers_known_names_for_the_word_at_the_cursor() {
        let mut helper = ReplHelper::default();
        helper.set_names(vec!["square".into(), "string-length".into(), "sum".into()]);
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let (start, found) = helper.complete("(map squ", 8, &ctx).unwrap();
        assert_eq!(start, 5);
        let names: Vec<_> = found.iter().map(|p| p.replacement.as_str()).collect();
        assert_eq!(names, ["square"]);
        let (_, found) = helper.complete("(s", 2, &ctx).unwrap();
        assert_eq!(found.len(), 3);
    }

    #[test]
    fn completion_offers_commands_at_the_start() {
        let helper = ReplHelper::default();
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let (start, found) = helper.complete(":de", 3, &ctx).unwrap();
        assert_eq!(start, 0);
        assert_eq!(
            found.first().map(|p| p.replacement.as_str()),
            Some(":describe ")
        );
    }

    #[test]
    fn completion_offers_every_command_by_its_name() {
        let offered: Vec<String> = commands_starting(":")
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        let mut names: Vec<String> = COMMANDS.iter().map(|c| format!("{} ", c.name)).collect();
        names.sort();
        assert_eq!(offered, names);
        assert!(takes(":time", Argument::Code) && takes(":import", Argument::File));
    }

    #[test]
    fn history_lives_where_the_environment_says() {
        let home = || Some(PathBuf::from("/home/u"));
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        };
        let both = env(&[("TASKLISP_HISTORY", "/tmp/h"), ("XDG_STATE_HOME", "/state")]);
        assert_eq!(
            history_path_from(both, home()),
            Some(PathBuf::from("/tmp/h"))
        );
        let xdg = env(&[("TASKLISP_HISTORY", ""), ("XDG_STATE_HOME", "/state")]);
        let expected = PathBuf::from("/state/tasklisp/history");
        assert_eq!(history_path_from(xdg, home()), Some(expected));
        let relative_xdg = env(&[("XDG_STATE_HOME", "state")]);
        let expected = PathBuf::from("/home/u/.local/state/tasklisp/history");
        assert_eq!(history_path_from(relative_xdg, home()), Some(expected));
        assert_eq!(history_path_from(env(&[]), None), None);
    }
}
