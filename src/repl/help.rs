//! Texts the REPL shows: `:help`, and the synopsis of each special form (for
//! `:describe` and completion — special forms are not values, so nothing else knows them).

/// `(name, synopsis)` of every special form (SPEC §4).
pub const SPECIAL_FORMS: &[(&str, &str)] = &[
    ("quote", "(quote datum) or 'datum: the datum, unevaluated"),
    (
        "quasiquote",
        "`(a ,b ,@cs): a template; , inserts a value, ,@ splices a list",
    ),
    ("if", "(if test then else?)"),
    ("cond", "(cond (test body…)… (test => f) (else body…))"),
    ("case", "(case key ((datum…) body…)… (else body…))"),
    ("when", "(when test body…)"),
    ("unless", "(unless test body…)"),
    ("and", "(and expr…): the first false value, or the last"),
    ("or", "(or expr…): the first true value, or the last"),
    ("begin", "(begin expr…): the value of the last"),
    (
        "define",
        "(define name expr) or (define (name arg… . rest) body…)",
    ),
    ("set!", "(set! name expr): assigns an existing binding"),
    ("lambda", "(lambda (arg… . rest) body…): a procedure"),
    ("fn", "(fn (arg… . rest) body…): lambda"),
    (
        "let",
        "(let ((name expr)…) body…), or named: (let loop ((name init)…) body…)",
    ),
    (
        "let*",
        "(let* ((name expr)…) body…): each init sees the earlier names",
    ),
    (
        "letrec",
        "(letrec ((name expr)…) body…): mutually recursive bindings",
    ),
    ("do", "(do ((var init step)…) (test result…) body…)"),
    ("try", "(try expr (catch e body…)): e is the error as a map"),
    (
        "defmacro",
        "(defmacro name (arg…) body…): a non-hygienic macro",
    ),
    (
        "deftask",
        "(deftask name (param (param default)…) :option value… body…)",
    ),
    ("sequential", "(sequential step…): steps see step_results"),
    (
        "step",
        "(step task :inputs-from [i \"name\"] :input builder): inside sequential",
    ),
    (
        "cond-output",
        "(cond-output result (test body…)… (else body…)): binds output",
    ),
    (
        "with-provider",
        "(with-provider provider :temperature t … body…)",
    ),
    ("with-fallback", "(with-fallback [provider…] body…)"),
    (
        "deftest",
        "(deftest name body…): a test, run by `tasklisp test`",
    ),
    ("expect", "(expect expr): checks that expr is true"),
    ("expect=", "(expect= actual expected): checks equality"),
    (
        "expect-error",
        "(expect-error expr reason): checks expr raises",
    ),
    (
        "expect-schema",
        "(expect-schema value schema): checks a JSON Schema",
    ),
    (
        "expect-judge",
        "(expect-judge value \"rubric\"): asks the judge model",
    ),
    ("import", "(import \"file.xml\" :as ns :only (name…))"),
    (
        "load",
        "(load \"file.sexp\"): runs a file in the global environment",
    ),
];

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

pub fn special_form(name: &str) -> Option<&'static str> {
    SPECIAL_FORMS
        .iter()
        .find(|(form, _)| *form == name)
        .map(|(_, synopsis)| *synopsis)
}

pub const HELP: &str = "\
Type an expression to evaluate it; a form continues on the next line until it is
complete. The last value is bound to _.

Commands:
  :help             this text
  :tasks            the registered tasks: names, types, descriptions
  :describe NAME    what NAME is: a task's definition, a builtin's signature, a
                    procedure's arity, a special form's syntax
  :load FILE        run a .sexp file
  :import FILE      import an XML template file or .sexp module
  :env              your definitions (not the builtins)
  :time EXPR        evaluate EXPR and show how long it took
  :show             print the last value in full (results are abbreviated)
  :chat [MODEL]     chat with the model: each line a message, :end leaves
  :quit             leave (Ctrl-D too)

Keys: Tab completes names, Ctrl-R searches the history, → accepts a hint,
Ctrl-C clears the line or interrupts an evaluation.";
