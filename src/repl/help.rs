//! Texts the REPL shows: `:help` around the commands' table, and the keywords Tab
//! completes. (The special forms' synopses are rows of their layers, `crate::eval::layer`.)

/// The keywords of the language's forms and builtins other than `deftask`'s options,
/// for completion (the options come from `crate::task::table`).
pub const KEYWORDS: &[&str] = &[
    ":accumulate",
    ":as",
    ":concurrency",
    ":dir",
    ":director",
    ":evaluator",
    ":input",
    ":inputs-from",
    ":limit",
    ":max-iterations",
    ":only",
    ":pretty",
    ":strategy",
];

/// `:help`: how input works, the commands (from their table), the keys.
pub fn help_text() -> String {
    format!(
        "\
Type an expression to evaluate it; a form continues on the next line until it is
complete. The last value is bound to _.

Commands:
{}

Keys: Tab completes names, Ctrl-R searches the history, → accepts a hint,
Ctrl-C clears the line or interrupts an evaluation.",
        super::commands::command_help()
    )
}
