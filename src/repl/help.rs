//! Texts the REPL shows: `:help`, and the keywords Tab completes. (The special forms'
//! synopses are rows of their layers, `crate::eval::layer`.)

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

pub const HELP: &str = "\
Type an expression to evaluate it; a form continues on the next line until it is
complete. The last value is bound to _.

Commands:
  :help             this text
  :tasks            the registered tasks: names, types, descriptions
  :describe NAME    what NAME is: a task's definition, a builtin's signature, a
                    procedure's parameters, a special form's syntax and example
  :apropos WORD     the names whose name or documentation mentions WORD
  :load FILE        run a .sexp file
  :import FILE      import an XML template file or .sexp module
  :reload           import again every imported file that changed, replacing its tasks
  :env              your definitions (not the builtins)
  :time EXPR        evaluate EXPR and show how long it took
  :show             print the last value in full (results are abbreviated)
  :chat [MODEL]     chat with the model: each line a message, :end leaves
  :quit             leave (Ctrl-D too)

Keys: Tab completes names, Ctrl-R searches the history, → accepts a hint,
Ctrl-C clears the line or interrupts an evaluation.";
