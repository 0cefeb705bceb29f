//! The command line's words before clap reads them: where the command stands, and the
//! words after `run FILE` that belong to the script. Which flags take values, and how
//! many, comes from clap's own definition of the flags, so the two cannot disagree.

use super::Options;
use clap::CommandFactory;
use std::collections::HashMap;
use std::ffi::OsString;

thread_local! {
    /// The command the flags were read from, built, kept for the parse that follows.
    static BUILT: std::cell::RefCell<Option<clap::Command>> = const { std::cell::RefCell::new(None) };
}

/// `Options`' clap command, built: the one the flags were read from, when this thread
/// read them and nobody took it yet (building it is a third of start-up).
pub fn built_command() -> clap::Command {
    BUILT
        .with(|built| built.borrow_mut().take())
        .unwrap_or_else(|| {
            let mut command = Options::command();
            command.build();
            command
        })
}

/// How many words after each global flag are its values.
struct Flags {
    long: HashMap<String, usize>,
    short: HashMap<char, usize>,
}

impl Flags {
    /// The flags of `Options`, read from clap once per process: building clap's command
    /// is most of tasklisp's start-up, and the command line is looked at more than once.
    fn of_options() -> &'static Flags {
        static FLAGS: std::sync::OnceLock<Flags> = std::sync::OnceLock::new();
        FLAGS.get_or_init(Flags::read)
    }

    fn read() -> Flags {
        let mut command = Options::command();
        command.build();
        let mut flags = Flags {
            long: HashMap::new(),
            short: HashMap::new(),
        };
        for arg in command.get_arguments() {
            let values = values_per_use(arg);
            for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
                flags.long.insert(long.to_owned(), values);
            }
            for short in arg.get_short_and_visible_aliases().into_iter().flatten() {
                flags.short.insert(short, values);
            }
        }
        BUILT.with(|built| *built.borrow_mut() = Some(command));
        flags
    }

    /// How many words after `word` (a flag) are its values. As clap reads them, a
    /// value written in the word itself (`--model=x`, `-mx`, `-qmx`) is the flag's
    /// only one: none follow.
    fn values_after(&self, word: &str) -> usize {
        if let Some(long) = word.strip_prefix("--") {
            let attached = long.contains('=');
            return if attached {
                0
            } else {
                self.long.get(long).copied().unwrap_or(0)
            };
        }
        // A cluster of short flags: the first that takes values takes the rest of the
        // word, or the words after it.
        let shorts = word.trim_start_matches('-');
        for (at, short) in shorts.char_indices() {
            let values = self.short.get(&short).copied().unwrap_or(0);
            if values > 0 {
                let attached = at + short.len_utf8() < shorts.len();
                return if attached { 0 } else { values };
            }
        }
        0
    }
}

/// Words a flag takes after it each time it is given: none for switches and for
/// flags whose values must be written `--flag=…`.
fn values_per_use(arg: &clap::Arg) -> usize {
    if !arg.get_action().takes_values() || arg.is_require_equals_set() {
        return 0;
    }
    arg.get_num_args()
        .map_or(1, |range| range.min_values().max(1))
}

fn is_flag(word: &str) -> bool {
    word.starts_with('-') && word != "-"
}

/// The first word at or after `from` that is neither a flag nor a flag's value, with
/// whether a `--` came before it.
fn next_positional(flags: &Flags, argv: &[OsString], from: usize) -> Option<(usize, bool)> {
    let mut i = from;
    while let Some(word) = argv.get(i) {
        let word = word.to_string_lossy();
        if word == "--" {
            return (i + 1 < argv.len()).then_some((i + 1, true));
        }
        if !is_flag(&word) {
            return Some((i, false));
        }
        i += 1 + flags.values_after(&word);
    }
    None
}

/// The first word at or after `from` that is neither a flag nor a flag's value.
pub fn positional_after(argv: &[OsString], from: usize) -> Option<usize> {
    next_positional(Flags::of_options(), argv, from).map(|(at, _)| at)
}

/// Where the command (`run`, `eval`, …) stands in `argv`, after any global flags.
pub fn command_position(argv: &[OsString]) -> Option<usize> {
    match next_positional(Flags::of_options(), argv, 1)? {
        (_, true) => None,
        (at, false) => Some(at),
    }
}

/// Splits `tasklisp … run … FILE ARGS…` after FILE, so that every one of ARGS reaches
/// the script as it is (`--json`, `-q`, `--` included) rather than being read as
/// tasklisp's own flags, wherever tasklisp's flags stood. Other command lines are left
/// whole.
pub fn split_script_args(mut argv: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let flags = Flags::of_options();
    let file = match next_positional(flags, &argv, 1) {
        Some((at, false)) if argv.get(at).is_some_and(|w| w == "run") => {
            next_positional(flags, &argv, at + 1)
        }
        _ => None,
    };
    let Some((file, _)) = file else {
        return (argv, Vec::new());
    };
    let script_args = argv
        .split_off(file + 1)
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    (argv, script_args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(words: &[&str]) -> (Vec<String>, Vec<String>) {
        let argv = words.iter().map(OsString::from).collect();
        let (argv, args) = split_script_args(argv);
        let argv = argv
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        (argv, args)
    }

    #[test]
    fn flags_of_every_shape_before_run_leave_the_script_its_arguments() {
        for flags in [
            &["-m", "gpt"][..],
            &["--model", "gpt"],
            &["--model=gpt"],
            &["-mgpt"],
            &["-o", "temperature", "0"],
            &["--option", "temperature", "0"],
            &["-q"],
            &["-qm", "gpt"],
            &["--sandbox", "--allow-exec", "--allow-read", "."],
            &["--json", "--max-depth", "50"],
        ] {
            let mut words = vec!["tasklisp"];
            words.extend(flags);
            words.extend(["run", "a.sexp", "x", "-y"]);
            let (argv, args) = split(&words);
            assert_eq!(args, ["x", "-y"], "{flags:?}");
            assert_eq!(argv.last().map(String::as_str), Some("a.sexp"), "{flags:?}");
        }
    }

    #[test]
    fn flags_between_run_and_the_script_are_tasklisp_s() {
        let (argv, args) = split(&["tasklisp", "run", "-o", "seed", "1", "a.sexp", "-q"]);
        assert_eq!(argv, ["tasklisp", "run", "-o", "seed", "1", "a.sexp"]);
        assert_eq!(args, ["-q"]);
        let (_, args) = split(&["tasklisp", "run", "--", "a.sexp", "--", "z"]);
        assert_eq!(args, ["--", "z"]);
        // clap reads `--option=seed` as the flag's one value, so `run` follows it.
        let (_, args) = split(&["tasklisp", "--option=seed", "run", "a.sexp", "-q"]);
        assert_eq!(args, ["-q"]);
    }

    #[test]
    fn a_flag_value_named_like_a_command_is_a_value() {
        let (_, args) = split(&["tasklisp", "-m", "run", "run", "a.sexp", "x"]);
        assert_eq!(args, ["x"]);
        let (argv, args) = split(&["tasklisp", "-m", "run", "eval", "1"]);
        assert_eq!(argv.len(), 5);
        assert!(args.is_empty());
        let at = command_position(&["tasklisp", "-o", "a", "check", "log"].map(OsString::from));
        assert_eq!(at, Some(4));
    }
}
