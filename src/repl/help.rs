//! Texts the REPL shows: `:help` around the commands' table, and the synopsis of each special form (for
//! `:describe` and completion — special forms are not values, so nothing else knows them).

/// `(name, synopsis, example)` of every special form.
pub const SPECIAL_FORMS: &[(&str, &str, &str)] = &[
    (
        "quote",
        "(quote datum) or 'datum: the datum, unevaluated",
        "'(a b) ⇒ (a b)",
    ),
    (
        "quasiquote",
        "`(a ,b ,@cs): a template; , inserts a value, ,@ splices a list",
        "`(1 ,(+ 1 1) ,@(list 3 4)) ⇒ (1 2 3 4)",
    ),
    (
        "unquote",
        ",expr inside a quasiquote: inserts the value of expr",
        "`(a ,(+ 1 2)) ⇒ (a 3)",
    ),
    (
        "unquote-splicing",
        ",@expr inside a quasiquote: splices in the elements of a list",
        "`(a ,@(list 1 2)) ⇒ (a 1 2)",
    ),
    (
        "if",
        "(if test then else?)",
        "(if (> 2 1) \"yes\" \"no\") ⇒ \"yes\"",
    ),
    (
        "cond",
        "(cond (test body…)… (test => f) (else body…))",
        "(cond ((< 5 0) \"neg\") (else \"non-neg\")) ⇒ \"non-neg\"",
    ),
    (
        "case",
        "(case key ((datum…) body…)… (else body…))",
        "(case 2 ((1) \"one\") ((2 3) \"few\") (else \"many\")) ⇒ \"few\"",
    ),
    (
        "when",
        "(when test body…)",
        "(when (> 2 1) \"ran\") ⇒ \"ran\"",
    ),
    (
        "unless",
        "(unless test body…)",
        "(unless (> 2 1) \"ran\") ⇒ nil",
    ),
    (
        "and",
        "(and expr…): the first false value, or the last",
        "(and 1 2 3) ⇒ 3",
    ),
    (
        "or",
        "(or expr…): the first true value, or the last",
        "(or false nil 7) ⇒ 7",
    ),
    (
        "begin",
        "(begin expr…): the value of the last",
        "(begin (println \"hi\") 2) ⇒ 2",
    ),
    (
        "define",
        "(define name expr) or (define (name arg… . rest) body…)",
        "(define (square x) (* x x))",
    ),
    (
        "set!",
        "(set! name expr): assigns an existing binding",
        "(begin (define n 1) (set! n 2) n) ⇒ 2",
    ),
    (
        "lambda",
        "(lambda (arg… . rest) body…): a procedure",
        "((lambda (x) (* x 2)) 21) ⇒ 42",
    ),
    (
        "fn",
        "(fn (arg… . rest) body…) or (fn [arg…] body…): lambda",
        "((fn [x] (+ x 1)) 1) ⇒ 2",
    ),
    (
        "let",
        "(let ((name expr)…) body…), or named: (let loop ((name init)…) body…)",
        "(let ((a 1) (b 2)) (+ a b)) ⇒ 3",
    ),
    (
        "let*",
        "(let* ((name expr)…) body…): each init sees the earlier names",
        "(let* ((a 1) (b (+ a 1))) b) ⇒ 2",
    ),
    (
        "letrec",
        "(letrec ((name expr)…) body…): mutually recursive bindings",
        "(letrec ((ev? (fn (n) (if (= n 0) true (od? (- n 1))))) (od? (fn (n) (if (= n 0) false (ev? (- n 1)))))) (ev? 10)) ⇒ true",
    ),
    (
        "letrec*",
        "(letrec* ((name expr)…) body…): letrec, the inits run in order",
        "(letrec* ((a 1) (b (+ a 1))) b) ⇒ 2",
    ),
    (
        "do",
        "(do ((var init step)…) (test result…) body…)",
        "(do ((i 0 (+ i 1)) (acc '() (cons i acc))) ((= i 3) acc)) ⇒ (2 1 0)",
    ),
    (
        "try",
        "(try expr (catch e body…) (finally body…)): e is the error as a map",
        "(try (car 5) (catch e e.type)) ⇒ \"EVAL_ERROR\"",
    ),
    (
        "defmacro",
        "(defmacro name (arg…) body…): a non-hygienic macro",
        "(defmacro swap (a b) `(list ,b ,a))",
    ),
    (
        "deftask",
        "(deftask name (param (param default)…) :option value… body…)",
        "(deftask greet (who) :prompt \"Say hello to {{who}}\")",
    ),
    (
        "sequential",
        "(sequential step…): steps see step_results",
        "(deftask flow (x) (sequential (step draft) (step polish)))",
    ),
    (
        "step",
        "(step task :inputs-from [i \"name\"] :input builder): inside sequential",
        "(step polish :inputs-from [0 \"text\"])",
    ),
    (
        "cond-output",
        "(cond-output result (test body…)… (else body…)): binds output",
        "(cond-output (classify x) ((= output \"bug\") (fix x)) (else nil))",
    ),
    (
        "with-provider",
        "(with-provider provider :temperature t … body…)",
        "(with-provider :echo :temperature 0 (greet \"Ada\"))",
    ),
    (
        "with-fallback",
        "(with-fallback [provider…] body…): the next provider when one fails",
        "(with-fallback [:openai :echo] (greet \"Ada\"))",
    ),
    (
        "with-budget",
        "(with-budget {\"usd\" u \"tokens\" t \"calls\" n} body…): model calls past a limit fail",
        "(with-budget {\"calls\" 2} (+ 1 2)) ⇒ 3",
    ),
    (
        "with-cache",
        "(with-cache body…): the body's model calls answered from the run log when asked before",
        "(with-cache (+ 1 2)) ⇒ 3",
    ),
    (
        "import",
        "(import \"file.xml\" :as ns :only (name…))",
        "(import \"templates/review.xml\" :as review)",
    ),
    (
        "deftest",
        "(deftest name body…): a test, run by `tasklisp test`",
        "(deftest adds (expect= (+ 1 2) 3))",
    ),
    (
        "expect",
        "(expect expr): checks that expr is true",
        "(expect (> 2 1))",
    ),
    (
        "expect=",
        "(expect= actual expected): checks equality",
        "(expect= (+ 1 2) 3)",
    ),
    (
        "expect-error",
        "(expect-error expr reason): checks expr raises",
        "(expect-error (car 5) :EVAL_ERROR)",
    ),
    (
        "expect-schema",
        "(expect-schema value schema): checks a JSON Schema",
        "(expect-schema {\"a\" 1} {\"type\" \"object\"})",
    ),
    (
        "expect-judge",
        "(expect-judge value \"rubric\"): asks the judge model",
        "(expect-judge answer \"is polite\")",
    ),
    (
        "load",
        "(load \"file.sexp\"): runs a file in the global environment",
        "(load \"helpers.sexp\")",
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

/// A special form's synopsis and example.
pub fn special_form(name: &str) -> Option<(&'static str, &'static str)> {
    SPECIAL_FORMS
        .iter()
        .find(|(form, _, _)| *form == name)
        .map(|(_, synopsis, example)| (*synopsis, *example))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the analysers dispatch as special forms: the string patterns of the
    /// arms of each `fn special_form`.
    fn dispatched() -> Vec<String> {
        let sources = [
            include_str!("../eval/compile.rs"),
            include_str!("../task/forms.rs"),
            include_str!("../module.rs"),
            include_str!("../testing/forms.rs"),
        ];
        let mut names = Vec::new();
        for source in sources {
            let Some((_, body)) = source.split_once("fn special_form(") else {
                panic!("a source without `fn special_form`");
            };
            let body = body.split("\n}\n").next().unwrap_or_default();
            for line in body.lines() {
                let Some((pattern, _)) = line.split_once("=>") else {
                    continue;
                };
                let literals: Vec<&str> = pattern.split('|').map(str::trim).collect();
                if literals
                    .iter()
                    .all(|l| l.len() > 2 && l.starts_with('"') && l.ends_with('"'))
                {
                    names.extend(literals.iter().map(|l| l.trim_matches('"').to_owned()));
                }
            }
        }
        names
    }

    #[test]
    fn every_special_form_has_a_description() {
        let names = dispatched();
        assert!(names.len() >= 39, "found {names:?}");
        for name in &names {
            assert!(special_form(name).is_some(), "`{name}` has no description");
        }
        for (name, _, _) in SPECIAL_FORMS {
            assert!(
                names.iter().any(|n| n == name),
                "`{name}` is no special form"
            );
        }
    }
}
