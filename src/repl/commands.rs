//! The REPL's colon commands: one table, [`COMMANDS`], drives their dispatch, `:help`,
//! Tab completion and the "did you mean" hint. A new command is one row plus its code.

use super::session::{format_duration, timed, warn_if_cut_off, Next, Session};
use crate::bounds::read_file_text;
use crate::eval::Interp;
use crate::symbol::Sym;
use crate::task::conversation;
use crate::task::result::field;
use crate::task::sink::StreamTo;
use crate::value::{to_json, write_string, Value};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// A REPL command.
pub struct ReplCommand {
    /// The name, with its colon.
    pub name: &'static str,
    /// Other names it answers to (not completed, not listed by `:help`).
    pub aliases: &'static [&'static str],
    pub argument: Argument,
    /// What `:help` says of it; a line break continues under the first line.
    pub help: &'static str,
    /// Runs it on its argument (trimmed; empty when none was given).
    pub run: fn(&mut Session<'_>, &str) -> Next,
}

/// What follows a command's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    None,
    /// A required word, shown in `:help` as this placeholder.
    Required(&'static str),
    /// An optional word, shown as `[PLACEHOLDER]`.
    Optional(&'static str),
    /// A required file name (`FILE`): Tab completes paths.
    File,
    /// A required expression (`EXPR`): the input continues until it is complete.
    Code,
}

impl Argument {
    /// How `:help` writes it after the name, with its leading space.
    fn usage(self) -> String {
        match self {
            Argument::None => String::new(),
            Argument::Required(word) => format!(" {word}"),
            Argument::Optional(word) => format!(" [{word}]"),
            Argument::File => " FILE".to_owned(),
            Argument::Code => " EXPR".to_owned(),
        }
    }

    fn is_required(self) -> bool {
        !matches!(self, Argument::None | Argument::Optional(_))
    }
}

/// Every command, in the order `:help` lists them.
pub const COMMANDS: &[ReplCommand] = &[
    ReplCommand {
        name: ":help",
        aliases: &[":h", ":?"],
        argument: Argument::None,
        help: "this text",
        run: |session, _| shown(session, &super::help::help_text()),
    },
    ReplCommand {
        name: ":tasks",
        aliases: &[],
        argument: Argument::None,
        help: "the registered tasks: names, types, descriptions",
        run: |session, _| shown(session, &tasks_table(session.interp)),
    },
    ReplCommand {
        name: ":describe",
        aliases: &[],
        argument: Argument::Required("NAME"),
        help: "what NAME is: a task's definition, a builtin's signature, a\n\
               procedure's parameters, a special form's syntax and example",
        run: |session, name| shown(session, &describe(session.interp, name)),
    },
    ReplCommand {
        name: ":apropos",
        aliases: &[],
        argument: Argument::Required("WORD"),
        help: "the names whose name or documentation mentions WORD",
        run: |session, word| shown(session, &apropos(session.interp, word)),
    },
    ReplCommand {
        name: ":load",
        aliases: &[],
        argument: Argument::File,
        help: "run a .sexp file",
        run: |session, file| {
            if is_xml(file) {
                eprintln!("{}", xml_load_hint(file));
                return Next::Continue;
            }
            session.load(&command_path(file))
        },
    },
    ReplCommand {
        name: ":import",
        aliases: &[],
        argument: Argument::File,
        help: "import an XML template file or .sexp module",
        run: |session, file| session.import(&command_path(file)),
    },
    ReplCommand {
        name: ":reload",
        aliases: &[],
        argument: Argument::None,
        help: "import again every imported file that changed, replacing its tasks",
        run: |session, _| session.reload(),
    },
    ReplCommand {
        name: ":env",
        aliases: &[],
        argument: Argument::None,
        help: "your definitions (not the builtins)",
        run: |session, _| session.show_env(),
    },
    ReplCommand {
        name: ":time",
        aliases: &[],
        argument: Argument::Code,
        help: "evaluate EXPR and show how long it took",
        run: |session, expr| session.time(expr),
    },
    ReplCommand {
        name: ":show",
        aliases: &[],
        argument: Argument::None,
        help: "print the last value in full (results are abbreviated)",
        run: |session, _| shown(session, &write_string(&session.last.borrow())),
    },
    ReplCommand {
        name: ":chat",
        aliases: &[],
        argument: Argument::Optional("MODEL"),
        help: "chat with the model: each line a message, :end leaves",
        run: |session, model| session.start_chat(model),
    },
    ReplCommand {
        name: ":quit",
        aliases: &[":q", ":exit"],
        argument: Argument::None,
        help: "leave (Ctrl-D too)",
        run: |_, _| Next::Exit(0),
    },
];

/// The command a name or alias (with its colon) names.
pub fn command_named(name: &str) -> Option<&'static ReplCommand> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// The commands' part of `:help`: a line per command, its usage in a column.
pub fn command_help() -> String {
    const USAGE_WIDTH: usize = 18;
    let mut lines = Vec::new();
    for command in COMMANDS {
        let usage = format!("{}{}", command.name, command.argument.usage());
        let mut help = command.help.lines();
        let first = help.next().unwrap_or_default();
        lines.push(format!("  {usage:USAGE_WIDTH$}{first}"));
        for more in help {
            lines.push(format!("  {:USAGE_WIDTH$}{more}", ""));
        }
    }
    lines.join("\n")
}

/// Shows `text` and goes on.
fn shown(session: &Session<'_>, text: &str) -> Next {
    session.say(text);
    Next::Continue
}

impl Session<'_> {
    /// Runs the command `name` (with its leading colon) on `argument`.
    pub fn command(&mut self, name: &str, argument: &str) -> Next {
        let Some(command) = command_named(name) else {
            eprintln!("{}", unknown_command(name));
            return Next::Continue;
        };
        if command.argument.is_required() && argument.is_empty() {
            eprintln!("{name} needs an argument (:help shows how to use it)");
            return Next::Continue;
        }
        (command.run)(self, argument)
    }

    /// `:chat [MODEL]`: each line from now on is a message in one conversation.
    fn start_chat(&mut self, model: &str) -> Next {
        let model = (!model.is_empty()).then(|| model.to_owned());
        self.chat = Some(conversation::start(model));
        shown(
            self,
            "; chat: each line is a message to the model, :end leaves",
        )
    }

    /// A line in the chat sub-mode: `:end` (or `:quit`) leaves it, anything else is
    /// sent as the user's message and the answer printed.
    pub fn chat_line(&mut self, line: &str) -> Next {
        match line.trim() {
            ":end" => {
                self.chat = None;
                self.say("; chat ended");
                return Next::Continue;
            }
            ":quit" | ":q" => return Next::Exit(0),
            _ => {}
        }
        let Some(current) = self.chat.clone() else {
            return Next::Continue;
        };
        // The answer is shown as it arrives (whole, from a provider that cannot stream).
        let streaming = self.interp.tasks.streaming();
        self.interp.tasks.set_streaming(Some(StreamTo::Stdout));
        let outcome = self.interruptibly(|interp| {
            let current = conversation::Conversation::from_value("chat", &current)?;
            conversation::exchange(interp, current, line, &None)
        });
        self.interp.tasks.set_streaming(streaming);
        match outcome {
            Ok(result) => {
                warn_if_cut_off(&result);
                self.chat = Some(field(&result, "conversation"));
                Next::Continue
            }
            Err(e) => self.report(&e),
        }
    }

    fn show_env(&mut self) -> Next {
        let defined = self.user_definitions();
        if defined.is_empty() {
            self.say("no definitions yet");
        }
        for (name, value) in defined {
            let (text, _) = super::abbreviate::abbreviate(&value);
            self.say(&format!("{name} = {text}"));
        }
        Next::Continue
    }

    fn time(&mut self, expr: &str) -> Next {
        let (result, elapsed) = timed(|| self.evaluate(expr, |value| self.print_value(value)));
        match result {
            Ok(()) => {
                self.say(&format!("; {}", format_duration(elapsed)));
                Next::Continue
            }
            Err(e) => self.report(&e),
        }
    }

    /// `:load` and `:import` read what `--allow-read` allows, as `load` and `import` in
    /// code do: under `--sandbox` the person at the prompt gets what the flags give.
    fn check_readable(&self, path: &Path) -> crate::error::Result<()> {
        self.interp
            .limits
            .capabilities
            .check_path(path, crate::capabilities::Access::Read)
    }

    fn load(&mut self, path: &Path) -> Next {
        let outcome = self
            .check_readable(path)
            .and_then(|()| read_file_text(path, self.interp.limits.max_file_bytes));
        let outcome =
            outcome.and_then(|text| self.interruptibly(|interp| interp.run_file(path, &text)));
        match outcome {
            Ok(value) => {
                self.say(&format!("; loaded {}", path.display()));
                self.print_value(value);
                Next::Continue
            }
            Err(e) => self.report(&e),
        }
    }

    fn import(&mut self, path: &Path) -> Next {
        let before = self.interp.tasks.names();
        let outcome = self.check_readable(path).and_then(|()| {
            self.interruptibly(|interp| crate::module::import_file(interp, path, None))
        });
        match outcome {
            Ok(()) => {
                let added: Vec<String> = self
                    .interp
                    .tasks
                    .names()
                    .into_iter()
                    .filter(|name| !before.contains(name))
                    .collect();
                self.say(&format!(
                    "; imported {}: {}",
                    path.display(),
                    task_count(&added)
                ));
                Next::Continue
            }
            Err(e) => self.report(&e),
        }
    }
}

impl Session<'_> {
    /// `:reload`: imports again every imported file that changed since, replacing its
    /// tasks (each replaced task gets a note) and definitions.
    fn reload(&mut self) -> Next {
        let changed = crate::module::changed_imports(self.interp);
        if changed.is_empty() {
            self.say("; nothing to reload: no imported file has changed");
        }
        for (path, alias) in changed {
            let how = crate::module::Import {
                alias: alias.as_deref(),
                reload: true,
                ..crate::module::Import::default()
            };
            match self.interruptibly(|interp| crate::module::import(interp, &path, &how)) {
                Ok(names) => self.say(&format!(
                    "; reloaded {}: {}",
                    path.display(),
                    names_text(&names)
                )),
                Err(e) => {
                    self.report(&e);
                }
            }
        }
        Next::Continue
    }
}

/// `a, b` for a list of names, `nothing new` for none.
fn names_text(names: &Value) -> String {
    let names: Vec<String> = names
        .as_list()
        .map(|l| {
            l.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return "nothing new".to_owned();
    }
    names.join(", ")
}

fn task_count(names: &[String]) -> String {
    match names {
        [] => "no new tasks".to_owned(),
        [one] => format!("1 new task ({one})"),
        many => format!("{} new tasks ({})", many.len(), many.join(", ")),
    }
}

/// `name  type  description` for each registered task.
pub fn tasks_table(interp: &Interp) -> String {
    let rows: Vec<[String; 3]> = interp
        .tasks
        .names()
        .into_iter()
        .filter_map(|name| match interp.tasks.task_value(&name)? {
            Value::Task(task) => Some([
                name,
                field_text(&task.field("type")),
                field_text(&task.field("description")),
            ]),
            _ => None,
        })
        .collect();
    if rows.is_empty() {
        return "no tasks yet: deftask defines one, :import loads a file of them".to_owned();
    }
    let name_width = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
    let type_width = rows.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
    rows.iter()
        .map(|[name, kind, description]| {
            format!("{name:name_width$}  {kind:type_width$}  {description}")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A task field as text: strings raw, nil as nothing.
fn field_text(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        Value::Str(s) => s.to_string(),
        other => write_string(other),
    }
}

/// What `name` is, for `:describe`.
pub fn describe(interp: &Interp, name: &str) -> String {
    let sym = Sym::new(name);
    if let Some(form) = interp.layers.form(name) {
        let (summary, example) = (form.summary(), form.example);
        return format!("special form {name}\n  {summary}\n  example: {example}");
    }
    if interp.macro_named(sym).is_some() {
        return format!("macro {name}");
    }
    match interp.lookup(&None, sym) {
        Some(value) => describe_value(name, &value),
        None => format!("nothing is named {name}"),
    }
}

fn describe_value(name: &str, value: &Value) -> String {
    match value {
        Value::Task(_) => describe_task(name, value),
        Value::Builtin(builtin) => {
            let doc: Vec<&str> = builtin
                .doc
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            format!(
                "builtin {} ({})\n  {}",
                builtin.name,
                arity_text(builtin.min_args, builtin.max_args),
                doc.join("\n  ")
            )
        }
        Value::Closure(closure) => {
            let lambda = &closure.lambda;
            let required = lambda.required as usize;
            let arity = arity_text(required, (!lambda.rest).then_some(required));
            let title = match closure.name() {
                Some(own) if own.name() != name => format!("procedure {own}, bound to {name}"),
                _ => format!("procedure {name}"),
            };
            let call = format!(
                "  ({}{})",
                closure.name().unwrap_or(Sym::new(name)),
                parameter_text(lambda)
            );
            match defined_at(lambda.span) {
                Some(place) => format!("{title} ({arity})\n{call}\n  defined at {place}"),
                None => format!("{title} ({arity})\n{call}"),
            }
        }
        other => {
            let (text, _) = super::abbreviate::abbreviate(other);
            let kind = other.type_name();
            let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{name} is {article} {kind}: {text}")
        }
    }
}

/// ` a b . rest`: a procedure's parameters as its definition wrote them.
fn parameter_text(lambda: &crate::eval::Lambda) -> String {
    let names = lambda.scope.names();
    let total = lambda.required as usize + usize::from(lambda.rest);
    let mut text = String::new();
    for (i, name) in names.iter().take(total).enumerate() {
        if lambda.rest && i + 1 == total {
            text.push_str(" .");
        }
        text.push(' ');
        text.push_str(name.name());
    }
    text
}

/// Names whose name or documentation contains `word` (case-insensitive), one a line
/// with the first line of what `:describe` says.
pub fn apropos(interp: &Interp, word: &str) -> String {
    let word = word.to_lowercase();
    let mut names: Vec<String> = (interp.layers.forms())
        .map(|form| form.name.to_owned())
        .chain(interp.global_names().iter().map(|s| s.name().to_owned()))
        .chain(interp.macro_names().iter().map(|s| s.name().to_owned()))
        .chain(interp.tasks.names())
        .collect();
    names.sort();
    names.dedup();
    let found: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let description = describe(interp, name);
            let matches =
                name.to_lowercase().contains(&word) || description.to_lowercase().contains(&word);
            matches.then(|| summary_line(name, &description))
        })
        .collect();
    if found.is_empty() {
        return format!("nothing matches {word}");
    }
    found.join("\n")
}

/// `name — what it is`, from the most telling line of a description.
fn summary_line(name: &str, description: &str) -> String {
    let lines: Vec<&str> = description.lines().map(str::trim).collect();
    let telling = lines
        .get(1)
        .copied()
        .unwrap_or(lines.first().copied().unwrap_or(""));
    format!("{name} — {telling}")
}

fn xml_load_hint(argument: &str) -> String {
    format!(":load runs .sexp code; an XML template file is imported: :import {argument}")
}

fn unknown_command(name: &str) -> String {
    let hint = crate::suggest::hint(name, COMMANDS.iter().map(|c| c.name))
        .map_or(String::new(), |h| format!(" ({h})"));
    format!("unknown command {name}{hint} — :help lists the commands")
}

fn is_xml(argument: &str) -> bool {
    command_path(argument)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
}

/// A task's definition, one field per line; the fields of its `metadata` map are
/// listed with the others, and empty ones are left out.
fn describe_task(name: &str, task: &Value) -> String {
    let mut lines = vec![format!("task {name}")];
    match to_json(task) {
        Ok(Json::Object(fields)) => {
            for (key, value) in fields {
                match value {
                    Json::Object(metadata) if key == "metadata" => {
                        for (key, value) in metadata {
                            push_field(&mut lines, &key, value);
                        }
                    }
                    _ if key == "name" => {}
                    value => push_field(&mut lines, &key, value),
                }
            }
        }
        Ok(other) => lines.push(format!("  {other}")),
        Err(e) => lines.push(format!("  ({e})")),
    }
    lines.join("\n")
}

/// `  key: value`, with strings raw and a list of names as `a, b`.
fn push_field(lines: &mut Vec<String>, key: &str, value: Json) {
    let text = match value {
        Json::Null => return,
        Json::Object(map) if map.is_empty() => return,
        Json::Array(items) if items.is_empty() => return,
        Json::String(s) => s,
        Json::Array(items) if items.iter().all(Json::is_string) => items
            .iter()
            .filter_map(Json::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    };
    lines.push(format!("  {key}: {}", text.replace('\n', "\n    ")));
}

fn arity_text(min: usize, max: Option<usize>) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    match max {
        Some(max) if max == min => format!("{min} argument{}", plural(min)),
        Some(max) => format!("{min} to {max} arguments"),
        None => format!("{min} or more arguments"),
    }
}

/// `<repl:3>:1:1` for a span with a source.
fn defined_at(span: crate::source::Span) -> Option<String> {
    let file = crate::source::source(span.source)?;
    let (line, column) = crate::source::line_col(&file.text, span.start as usize);
    Some(format!("{}:{line}:{column}", file.name))
}

/// The path a command names, as typed (relative to the working directory); quotes
/// around it are allowed.
fn command_path(argument: &str) -> PathBuf {
    PathBuf::from(argument.trim_matches('"'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorFormat;
    use crate::eval::{run_on_large_stack, Limits};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Output the test can read after the session wrote it.
    #[derive(Clone, Default)]
    struct Captured(Rc<RefCell<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn take(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.0.borrow_mut())).unwrap()
        }
    }

    /// Runs `test` with a fresh interpreter and session, on a large stack.
    fn with_session(test: impl FnOnce(&mut Session, &Captured) + Send + 'static) {
        run_on_large_stack(&Limits::default(), |limits| {
            let captured = Captured::default();
            let interp = Interp::with_output(limits, Box::new(captured.clone())).unwrap();
            let settings = super::super::Settings {
                error_format: ErrorFormat::Text,
                quiet: false,
            };
            let mut session = Session::new(&interp, &settings);
            test(&mut session, &captured);
        })
        .unwrap();
    }

    /// Each command is one row: its name and aliases are unique and dispatch to it,
    /// `:help` shows its usage and help, and the guide's table of commands lists it.
    #[test]
    fn every_command_row_is_dispatched_helped_and_documented() {
        let help = super::super::help::help_text();
        let guide = include_str!("../../docs/REPL.md");
        let mut seen: Vec<&str> = Vec::new();
        for command in COMMANDS {
            for name in std::iter::once(&command.name).chain(command.aliases) {
                assert!(!seen.contains(name), "{name} names two commands");
                seen.push(name);
                let found = command_named(name).map(|c| c.name);
                assert_eq!(found, Some(command.name), "{name} dispatches");
            }
            let usage = format!("{}{}", command.name, command.argument.usage());
            let first = command.help.lines().next().unwrap_or_default();
            assert!(help.contains(&format!("  {usage:18}{first}\n")), "{usage}");
            let row = format!("\n| `{usage}` | ");
            assert!(guide.contains(&row), "docs/REPL.md lists {usage}");
        }
        let guide_rows = guide.matches("\n| `:").count();
        assert_eq!(guide_rows, COMMANDS.len(), "docs/REPL.md's commands table");
    }

    #[test]
    fn describe_says_what_a_name_is() {
        with_session(|session, _| {
            let definitions = "(define (add a b) (+ a b)) (define (va . xs) xs) (define n 5)";
            session.evaluate(definitions, drop).unwrap();
            session.evaluate("(defmacro twice (x) x)", drop).unwrap();
            let interp = session.interp;
            assert_eq!(
                describe(interp, "add"),
                "procedure add (2 arguments)\n  (add a b)\n  defined at <repl:1>:1:1"
            );
            assert!(describe(interp, "va")
                .starts_with("procedure va (0 or more arguments)\n  (va . xs)"));
            assert_eq!(describe(interp, "n"), "n is an integer: 5");
            assert_eq!(describe(interp, "twice"), "macro twice");
            assert!(describe(interp, "if").starts_with("special form if\n  (if test"));
            assert!(describe(interp, "if").contains("\n  example: (if (> 2 1)"));
            for scope in ["with-budget", "with-cache"] {
                let text = describe(interp, scope);
                assert!(
                    text.starts_with(&format!("special form {scope}\n  ({scope} ")),
                    "{text}"
                );
            }
            let builtin = describe(interp, "string-length");
            assert!(
                builtin.starts_with("builtin string-length (1 argument)\n  `(string-length"),
                "{builtin}"
            );
            assert_eq!(
                describe(interp, "no-such-name"),
                "nothing is named no-such-name"
            );
        });
    }

    /// Every special form's example that promises a value (`⇒`) gives it.
    #[test]
    fn special_form_examples_are_true() {
        with_session(|session, _| {
            for form in session.interp.layers.forms() {
                let (name, example) = (form.name, form.example);
                let Some((code, promised)) = example.split_once(" ⇒ ") else {
                    continue;
                };
                let mut values = Vec::new();
                session
                    .evaluate(code, |v| values.push(v))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let got = values.last().map(write_string).unwrap_or_default();
                assert_eq!(got, promised, "the example of {name}");
            }
        });
    }

    #[test]
    fn apropos_finds_names_and_documentation() {
        with_session(|session, _| {
            session
                .evaluate("(define (my-splitter s) s)", drop)
                .unwrap();
            let found = apropos(session.interp, "split");
            assert!(found.contains("string-split — `(string-split"), "{found}");
            assert!(found.contains("my-splitter — (my-splitter s)"), "{found}");
            let by_doc = apropos(session.interp, "dividend");
            assert!(by_doc.contains("remainder — "), "{by_doc}");
            assert_eq!(apropos(session.interp, "zzzqqq"), "nothing matches zzzqqq");
        });
    }

    #[test]
    fn load_of_xml_and_unknown_commands_point_the_way() {
        assert!(is_xml("\"t.XML\"") && !is_xml("t.sexp"));
        assert_eq!(
            xml_load_hint("t.xml"),
            ":load runs .sexp code; an XML template file is imported: :import t.xml"
        );
        assert_eq!(
            unknown_command(":descibe"),
            "unknown command :descibe (did you mean `:describe`?) — :help lists the commands"
        );
        with_session(|session, captured| {
            assert!(matches!(session.command(":load", "t.xml"), Next::Continue));
            assert_eq!(captured.take(), "", "nothing was loaded");
        });
    }

    #[test]
    fn reload_imports_again_the_files_that_changed() {
        with_session(|session, captured| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.xml");
            let write = |text: &str| {
                let xml = format!(
                    "<tasks><task name=\"say\" type=\"atomic\"><inputs><input name=\"w\"/>\
                     </inputs><instructions>{text}: {{{{w}}}}</instructions></task></tasks>"
                );
                std::fs::write(&path, xml).unwrap();
            };
            write("Old");
            let shown = path.display().to_string();
            session.command(":import", &shown);
            session.command(":reload", "");
            assert!(captured
                .take()
                .ends_with("; nothing to reload: no imported file has changed\n"));
            write("New");
            // A later modification time, whatever the file system's clock resolution.
            let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(later).unwrap();
            session.command(":reload", "");
            assert_eq!(captured.take(), format!("; reloaded {shown}: say\n"));
            let mut values = Vec::new();
            session
                .evaluate("(get (say \"x\") \"content\")", |v| values.push(v))
                .unwrap();
            assert_eq!(write_string(&values[0]), "\"New: x\"");
        });
    }

    #[test]
    fn env_lists_only_the_sessions_definitions() {
        with_session(|session, captured| {
            session.command(":env", "");
            assert_eq!(captured.take(), "no definitions yet\n");
            let definitions = "(define zeta 1) (define alpha [1 2]) (define map map)";
            session.evaluate(definitions, drop).unwrap();
            session.command(":env", "");
            assert_eq!(captured.take(), "alpha = (1 2)\nzeta = 1\n");
        });
    }

    #[test]
    fn the_last_value_is_bound_to_underscore_and_shown_in_full() {
        with_session(|session, captured| {
            let mut values = Vec::new();
            session
                .evaluate("(range 3) (length _)", |v| values.push(v))
                .unwrap();
            assert_eq!(write_string(&values[1]), "3");
            session.handle("(range 200)");
            let abbreviated = captured.take();
            assert!(
                abbreviated.contains("19 …)\n; abbreviated"),
                "{abbreviated}"
            );
            session.command(":show", "");
            assert!(captured.take().ends_with("198 199)\n"));
        });
    }

    #[test]
    fn each_value_is_printed_before_the_next_form_runs_and_kept_if_a_later_one_fails() {
        with_session(|session, captured| {
            session.handle("(+ 1 2) (println \"out\") (car 5)");
            assert_eq!(captured.take(), "3\nout\nnil\n");
        });
    }

    #[test]
    fn commands_that_need_an_argument_say_so_and_quit_ends() {
        with_session(|session, captured| {
            assert!(matches!(session.command(":describe", ""), Next::Continue));
            assert!(matches!(session.command(":quit", ""), Next::Exit(0)));
            assert!(matches!(session.handle("(exit 4)"), Next::Exit(4)));
            assert_eq!(captured.take(), "");
        });
    }

    #[test]
    fn task_fields_are_listed_one_per_line() {
        let mut lines = Vec::new();
        push_field(&mut lines, "params", serde_json::json!(["text", "style"]));
        push_field(&mut lines, "defaults", serde_json::json!({}));
        push_field(&mut lines, "subtype", Json::Null);
        push_field(&mut lines, "prompt", serde_json::json!("Hi\nthere"));
        push_field(
            &mut lines,
            "defaults",
            serde_json::json!({"style": "brief"}),
        );
        assert_eq!(
            lines,
            [
                "  params: text, style",
                "  prompt: Hi\n    there",
                "  defaults: {\"style\":\"brief\"}"
            ]
        );
    }

    #[test]
    fn tasks_are_listed_or_their_absence_explained() {
        with_session(|session, _| {
            assert!(tasks_table(session.interp).starts_with("no tasks yet"));
        });
        assert_eq!(task_count(&[]), "no new tasks");
        assert_eq!(task_count(&["a".into(), "b".into()]), "2 new tasks (a, b)");
    }
}
