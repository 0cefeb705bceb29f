//! Task builtins: `get-task`, `task-names`, `task?`, `reduce-task`, `task-result`,
//! `set-provider!`, `resource-metrics`, `run-usage`, `get-context`,
//! `director-evaluator-loop`, `call-task`, `task-alias`, `current-environment`,
//! `env-find`.

use super::definition::lossy_json;
use super::memory::{ContextInput, Query, Strategy};
use super::metrics::Metrics;
use super::result::{self, field, from_body, is_task_result, COMPLETE};
use super::session::ProviderChoice;
use super::TaskKind;
use crate::builtins::predicate::for_item;
use crate::builtins::{builtin_table, list_arg, proc_arg, split_options, str_arg, type_error};
use crate::builtins::{fixed_args, leading_args};
use crate::error::{Error, Reason, Result};
use crate::eval::env::Env;
use crate::eval::Interp;
use crate::provider::options::{self as model_options, ModelOptions};
use crate::provider::rate::RateLimit;
use crate::value::{to_json, write_string, Entries, Value};
use std::rc::Rc;

builtin_table! {
    /// `(task-names :type t? :subtype s?)`: the registered task names, sorted (of a type and subtype if given). `(task-names :type "atomic")` ⇒ `("summarize")`
    "task-names", 0, Some(4) => task_names;
    /// `(get-task name)`: the registered task of that name; unknown names are `TASK_FAILURE` / `template_not_found`. `(get (get-task "summarize") "subtype")` ⇒ `"standard"`
    "get-task", 1, Some(1) => get_task;
    /// `(task? v)`: is `v` a task? `(task? summarize)` ⇒ `true`
    "task?", 1, Some(1) => is_task;
    /// `(task-result? v)`: is `v` a TaskResult (what a task call returns, or `task-result` makes), not merely a map with the same keys? `(task-result? (task-result "x"))` ⇒ `true`
    "task-result?", 1, Some(1) => is_task_result_value;
    /// `(reduce-task f init xs)`: calls `(f acc item)` for each item; the accumulator becomes each result's `parsedContent` (JSON tasks) or `content`; returns the last TaskResult. `(reduce-task join2 "" ["a" "b"])`
    "reduce-task", 3, Some(3) => reduce_task;
    /// `(task-result content :status s :parsed v :notes m :criteria c)`: a TaskResult (status COMPLETE, CONTINUATION or FAILED; default COMPLETE). `(task-result "ok" :parsed true)`
    "task-result", 1, Some(9) => make_task_result;
    /// `(set-provider! p options? :max-turns n :max-context tokens :system s :temperature t …)`: atomic tasks now ask `p` — a procedure of the request, or a provider name, any that `--provider` takes (`:openai`, `:ollama`, `"echo"`…), with an options map — in a new session; `:system` is put before each task's system prompt, model options apply below the tasks', `:rate-limit {"requests_per_minute" n "tokens_per_minute" m}` paces every call. `(set-provider! :openai {"model" "gpt-4o-mini"} :temperature 0)`
    "set-provider!", 1, Some(22) => set_provider;
    /// `(resource-metrics)`: turns and context used in the provider session, with limits. `turns.lastTurnAt` is the ISO 8601 time the last turn ended, nil before the first. `(resource-metrics)` ⇒ `{"turns" {"used" 0 "limit" 10000 "lastTurnAt" nil} "context" {"used" 0 "limit" 128000 "peakUsage" 0}}`
    "resource-metrics", 0, Some(0) => resource_metrics;
    /// `(run-usage)`: what the run's model calls have spent so far (cache hits excluded; cost in USD, 0 for unpriced models). `(run-usage)` ⇒ `{"calls" 0 "input_tokens" 0 "output_tokens" 0 "cost" 0.0}`
    "run-usage", 0, Some(0) => run_usage;
    /// `(get-context query :dir d :files [paths] :limit n :strategy s :on-error :raise)`: ranks the UTF-8 files below `:dir` (default `.`) or the `:files` given, by BM25 relevance of their text (`:strategy "content"`, the default) or of their path and first heading (`"metadata"`); returns the AssociativeMatchResult of the best `:limit` (default 5), with `context_summary` and `error`. `query` is a string or a ContextGenerationInput map (`query`, `templateDescription`, `inputs`, `inheritedContext`, `previousOutputs`); `:on-error :result` returns a failure in `error`. `(get-context "login" :dir "docs")` ⇒ `{"context" "--- docs/auth.md ---\n# Login…" "matches" [{"path" "docs/auth.md" "relevance" 0.98 "excerpt" "# Login…"}]}`
    "get-context", 1, Some(11) => get_context;
    /// `(director-evaluator-loop :director d :evaluator e :max-iterations n :input x)`: calls the director with `{"input" x "feedback" f "previous" p "iteration" n}` (feedback and previous nil at first; a task director whose parameters name those fields gets them by name, any other `(d state iteration)`) then `(e result iteration)` until the evaluator's EvaluationResult says `success` (its JSON output or notes `{"success" bool "feedback" s}`); returns the director's last result with `notes.iterations` and `notes.evaluations`, status `CONTINUATION` when the n iterations (default 3) ran out. `(director-evaluator-loop :director write :evaluator judge :max-iterations 3 :input "a haiku")`
    "director-evaluator-loop", 0, Some(8) => super::loops::director_evaluator_loop;
    /// `(call-task name bindings)`: calls the task registered as `name`, when the call runs, with the entries of the map `bindings` that name its parameters (others are ignored; a nil one for a parameter with a default is left out). XML references to tasks not known at import compile to it. `(call-task "summarize" {"text" t "unrelated" 1})`
    "call-task", 2, Some(2) => call_task;
    /// `(current-environment)`: the bindings of the frames where it is called — parameters, `let`s, a task call's inherited names — as a read-only map of name to value, the innermost binding of a name winning; the globals (the outer environment of every environment) are not in it. `(let ((x 1)) (current-environment))` ⇒ `{"x" 1}`
    "current-environment", 0, Some(0) => current_environment;
    /// `(env-find env name)`: seed 004's `Env.find`: the value of `name` in `env` (a map, as `current-environment` returns), else in the global environment (globals, then the TaskLibrary's tasks), else nil. `(env-find (current-environment) "taskLibrary")` ⇒ `#<task-library>`
    "env-find", 2, Some(2) => env_find;
    /// `(task-alias name target)`: registers `name` as another name for the task `target`, looked up at each call (so `target` may be registered later; `get-task` and calls of `name` reach it); returns `name`. XML aliases of tasks not known at import compile to it. `(task-alias "write" "draft")` ⇒ `write`
    "task-alias", 2, Some(2) => task_alias;
}

fn current_environment(_: &Interp, _: &[Value], env: &Env) -> Result<Value> {
    let bindings = super::definition::local_bindings(env);
    Ok(Value::map(
        bindings
            .into_iter()
            .map(|(name, value)| (Rc::from(name.name()), value))
            .collect(),
    ))
}

fn env_find(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [env, name] = fixed_args("env-find", args)?;
    let name = name_arg("env-find", name)?;
    let local = match env {
        Value::Map(map) => map.get(name.as_str()).cloned(),
        Value::Nil => None,
        other => return Err(type_error("env-find", "an environment map", other)),
    };
    // A name never interned is bound by no global; tasks are registered by their text.
    let global = || crate::symbol::Sym::lookup(&name).and_then(|sym| interp.global(sym));
    Ok(local
        .or_else(global)
        .or_else(|| interp.tasks.task_value(&name))
        .unwrap_or(Value::Nil))
}

fn task_alias(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [name, target] = fixed_args("task-alias", args)?;
    let name = name_arg("task-alias", name)?;
    let target = name_arg("task-alias", target)?;
    if let Some(refused) = crate::eval::compile::task_name_refused(interp, &name) {
        return Err(refused);
    }
    interp.tasks.register_alias(&name, &target)?;
    Ok(Value::data_symbol(&name))
}

fn name_arg(who: &str, value: &Value) -> Result<String> {
    match value.name_text() {
        Some(name) => Ok(name.to_owned()),
        None => Err(type_error(who, "a name", value)),
    }
}

fn task_names(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (rest, options) = split_options("task-names", args, &["type", "subtype"])?;
    if let Some(extra) = rest.first() {
        return Err(type_error(
            "task-names",
            "options :type and :subtype",
            extra,
        ));
    }
    let mut kind = None;
    let mut subtype = None;
    for (option, value) in &options {
        let name = name_arg("task-names", value)?;
        if *option == "type" {
            kind =
                Some(TaskKind::parse(&name).ok_or_else(|| {
                    Error::eval(format!("task-names: unknown task type {name:?}"))
                })?);
        } else {
            subtype = Some(name);
        }
    }
    let names: Vec<Value> = if options.is_empty() {
        interp.tasks.names().into_iter().map(Value::from).collect()
    } else {
        let mut names: Vec<String> = interp
            .tasks
            .by_type(kind, subtype.as_deref())
            .iter()
            .map(|t| t.name.clone())
            .collect();
        names.sort();
        names.into_iter().map(Value::from).collect()
    };
    Ok(Value::list(names))
}

fn get_task(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [name] = fixed_args("get-task", args)?;
    let name = name_arg("get-task", name)?;
    interp
        .tasks
        .task_value(&name)
        .ok_or_else(|| task_not_found(interp, &name))
}

/// `template_not_found`, with the nearest registered name as a hint.
pub(crate) fn task_not_found(interp: &Interp, name: &str) -> Error {
    let names = interp.tasks.names();
    Error::task_failure(
        Reason::TemplateNotFound,
        format!("no task named `{name}` is registered"),
    )
    .with_hint(crate::suggest::hint(name, names.iter().map(String::as_str)))
}

fn is_task(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [value] = fixed_args("task?", args)?;
    Ok(Value::Bool(matches!(value, Value::Task(_))))
}

fn is_task_result_value(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let [value] = fixed_args("task-result?", args)?;
    Ok(Value::Bool(super::result::is_task_result(value)))
}

fn reduce_task(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let [f, init, items] = fixed_args("reduce-task", args)?;
    let f = proc_arg("reduce-task", f)?;
    let items = list_arg("reduce-task", items)?;
    let json_output = matches!(f, Value::Task(t) if t.json_output);
    let mut acc = init.clone();
    let mut last = None;
    for (index, item) in items.iter().enumerate() {
        let result = interp
            .apply(f, &[acc, item], env)
            .map_err(|e| for_item(e, index))?;
        acc = if !is_task_result(&result) {
            result.clone()
        } else if json_output {
            unparsed_step(&result).map_err(|e| for_item(e, index))?;
            field(&result, "parsedContent")
        } else {
            field(&result, "content")
        };
        last = Some(result);
    }
    Ok(match last {
        Some(result) if is_task_result(&result) => result,
        Some(plain) => from_body("reduce-task", plain),
        None => from_body("reduce-task", acc),
    })
}

/// A JSON step of a reduction whose answer did not parse fails the reduction rather
/// than resetting the accumulator to nil.
fn unparsed_step(result: &Value) -> Result<()> {
    let parse_error = field(&field(result, "notes"), "parseError");
    let Some(message) = parse_error.as_str() else {
        return Ok(());
    };
    Err(Error::task_failure(
        Reason::OutputFormatFailure,
        format!("reduce-task: the step's JSON output does not parse ({message})"),
    )
    .with_detail("content", lossy_json(&field(result, "content"))))
}

/// `(task-result content :status s :parsed v :notes m :criteria c)`.
fn make_task_result(_: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let (rest, options) = split_options(
        "task-result",
        args,
        &["status", "parsed", "notes", "criteria"],
    )?;
    let [Value::Str(content)] = rest else {
        return Err(Error::eval(
            "task-result: expected the content string, then :status :parsed :notes :criteria",
        ));
    };
    let mut entries = Entries::new();
    entries.insert(Rc::from("content"), Value::Str(content.clone()));
    entries.insert(Rc::from("status"), Value::from(COMPLETE));
    entries.insert(Rc::from("parsedContent"), Value::Nil);
    entries.insert(Rc::from("notes"), Value::map(Entries::new()));
    for (option, value) in options.into_iter().rev() {
        let key = match option {
            "parsed" => "parsedContent",
            other => other,
        };
        entries.insert(Rc::from(key), value);
    }
    result::marked_if_valid(entries).ok_or_else(|| {
        Error::eval(format!(
            "task-result: :status is one of {}, and :notes a map",
            result::STATUSES.join(", ")
        ))
    })
}

fn set_provider(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let ([spec], _) = leading_args("set-provider!", args)?;
    // The provider is a procedure or a name, optionally followed by its options map.
    let named_with_options = matches!(
        (spec, args.get(1)),
        (
            Value::Keyword(_) | Value::DataKeyword(_) | Value::Str(_),
            Some(Value::Map(_))
        )
    );
    let spec_len = if named_with_options { 2 } else { 1 };
    let known: Vec<&str> = ["max-turns", "max-context", "system", "rate-limit"]
        .iter()
        .chain(&model_options::SPELLINGS)
        .copied()
        .collect();
    let (rest, options) = split_options(
        "set-provider!",
        args.get(spec_len..).unwrap_or_default(),
        &known,
    )?;
    if !rest.is_empty() {
        return Err(Error::eval(
            "set-provider!: expected a provider (a procedure, or a name and an options map) and options :max-turns, :max-context, :system or model options",
        ));
    }
    let provider = ProviderChoice::from_spec(
        spec,
        args.get(1).filter(|_| named_with_options),
        &interp.limits.capabilities,
    )?;
    let mut metrics = Metrics::default();
    let mut model_options = ModelOptions::default();
    let mut system = None;
    let mut rate = None;
    for (option, value) in &options {
        if *option == "system" {
            system = Some(str_arg("set-provider!", value)?.to_owned());
            continue;
        }
        if *option == "rate-limit" {
            let limit = RateLimit::from_json(&to_json(value)?)
                .map_err(|e| Error::eval(format!("set-provider!: :rate-limit must be {e}")))?;
            rate = Some(limit);
            continue;
        }
        if model_options::canonical(option).is_some() {
            model_options
                .set(option, to_json(value)?)
                .map_err(|e| Error::eval(format!("set-provider!: {e}")))?;
            continue;
        }
        let limit = match value {
            Value::Int(n) if *n > 0 => u64::try_from(*n).unwrap_or(u64::MAX),
            other => {
                return Err(Error::eval(format!(
                    "set-provider!: :{option} must be a positive integer, not {}",
                    write_string(other)
                )))
            }
        };
        if *option == "max-turns" {
            metrics.turns_limit = limit;
        } else {
            metrics.context_limit = limit;
        }
    }
    interp.set_provider(provider, metrics);
    interp.set_provider_defaults(model_options, system, rate);
    Ok(Value::Nil)
}

fn resource_metrics(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    Ok(interp.metrics().to_value())
}

fn run_usage(interp: &Interp, _: &[Value], _: &Env) -> Result<Value> {
    Ok(crate::value::from_json(
        &interp.tasks.observer.spent().to_json(),
    ))
}

fn get_context(interp: &Interp, args: &[Value], _: &Env) -> Result<Value> {
    let who = "get-context";
    let (rest, options) = split_options(
        who,
        args,
        &["dir", "files", "limit", "strategy", "on-error"],
    )?;
    let [request] = rest else {
        return Err(Error::eval(format!(
            "{who}: expected (get-context query-or-input :dir d :files [paths] :limit n :strategy s :on-error :raise)"
        )));
    };
    let mut dir = None;
    let mut files = None;
    let mut limit = 5;
    let mut strategy = None;
    let mut errors_as_result = false;
    for (option, value) in &options {
        match *option {
            "dir" => dir = Some(crate::builtins::str_arg(who, value)?.to_owned()),
            "files" => files = Some(string_list(who, value)?),
            "limit" => {
                limit = crate::builtins::index_arg(who, value)?;
                if limit == 0 {
                    return Err(type_error(who, "a :limit of at least 1", value));
                }
            }
            "on-error" => errors_as_result = error_mode(who, value)?,
            _ => strategy = Some(strategy_arg(who, value)?),
        }
    }
    let input = match ContextInput::read(request) {
        Ok(input) => input,
        Err(error) if errors_as_result => return Ok(context_error(&error)),
        Err(error) => return Err(error),
    };
    let strategy = strategy.or(input.strategy).unwrap_or(Strategy::Content);
    let found = interp.tasks.get_context(
        &Query {
            text: &input.terms(),
            dir: dir.as_deref(),
            files,
            limit,
            strategy,
        },
        &interp.limits.capabilities,
    );
    match found {
        Ok(matches) => Ok(input.answer(&matches)),
        Err(error) if errors_as_result && error.exit_code().is_none() => Ok(context_error(&error)),
        Err(error) => Err(error),
    }
}

fn strategy_arg(who: &str, value: &Value) -> Result<Strategy> {
    let name = name_arg(who, value)?;
    Strategy::parse(&name)
        .ok_or_else(|| type_error(who, "a :strategy of \"content\" or \"metadata\"", value))
}

/// `:on-error :result` (errors come back in the answer's `error`) or `:raise`.
fn error_mode(who: &str, value: &Value) -> Result<bool> {
    match value.name_text() {
        Some("result") => Ok(true),
        Some("raise") => Ok(false),
        _ => Err(type_error(who, "an :on-error of :result or :raise", value)),
    }
}

/// The answer of a `get-context` that failed under `:on-error :result`.
fn context_error(error: &Error) -> Value {
    let mut answer = crate::value::Entries::new();
    answer.insert(Rc::from("context"), Value::str(String::new()));
    answer.insert(Rc::from("context_summary"), Value::str(String::new()));
    answer.insert(Rc::from("matches"), Value::empty_list());
    answer.insert(Rc::from("error"), Value::str(error.to_string()));
    Value::map(answer)
}

/// A list of strings (file paths).
pub fn string_list(who: &str, value: &Value) -> Result<Vec<String>> {
    list_arg(who, value)?
        .iter()
        .map(|v| crate::builtins::str_arg(who, &v).map(str::to_owned))
        .collect()
}

fn call_task(interp: &Interp, args: &[Value], env: &Env) -> Result<Value> {
    let who = "call-task";
    let [name, bindings] = fixed_args(who, args)?;
    let name = name_arg(who, name)?;
    let bindings = bindings
        .as_map()
        .ok_or_else(|| type_error(who, "a map of arguments", bindings))?;
    let task = interp
        .tasks
        .get(&name)
        .ok_or_else(|| task_not_found(interp, &name))?;
    let mut call_args = Vec::with_capacity(task.params.len() * 2);
    for param in &task.params {
        let value = bindings.get(param.name.name()).cloned();
        match value {
            None => {}
            Some(Value::Nil) if param.default.is_some() => {}
            Some(value) => {
                call_args.push(Value::Keyword(param.name));
                call_args.push(value);
            }
        }
    }
    super::call(interp, &task, &call_args, env)
}
