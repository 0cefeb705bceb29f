//! `(deftask name (param (param default)…) :option value… body…)`.
//!
//! Analysis splits the form into what runs at definition (option values, defaults),
//! and what runs at each call (the body, `:command`, `:stdin`, `:env`), which is
//! analysed as a task body: its free names are looked up where the task is called.

use super::definition::{
    Action, InheritContext, Lexical, Memory, Param, PromptParts, ScriptCode, ScriptParts, Task,
    TaskKind,
};
use super::library::{Definition, DefinitionId, Registered};
use super::options::{name_of_value, Options};
use super::schema::Schema;
use super::table::{self, When};
use super::template::Template;
use crate::error::{Error, Result};
use crate::eval::ast::Extension;
use crate::eval::env::{Env, Scope};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::eval::{Compiler, Interp, Node};
use crate::source::Span;
use crate::symbol::Sym;
use crate::value::{write_string, Value};
use std::collections::HashMap;
use std::rc::Rc;

/// The most provider turns `:max-turns` may allow a call.
const MAX_TURNS: i64 = 10_000;
/// The most `:retries` a task may make.
const MAX_RETRIES: i64 = 1_000;

/// What a call runs, before the definition-time values are known.
enum Code {
    /// An atomic task's `:files` and `:attachments` expressions.
    Prompt {
        files: Option<Rc<Node>>,
        attachments: Option<Rc<Node>>,
    },
    Command(Rc<ScriptCode>),
    Body(Rc<Node>),
}

impl Code {
    fn runs(&self) -> table::Runs {
        match self {
            Code::Prompt { .. } => table::Runs::Prompt,
            Code::Command(_) => table::Runs::Command,
            Code::Body(_) => table::Runs::Body,
        }
    }
}

/// Whether a task form registers what it makes.
#[derive(Clone, Copy)]
enum Naming {
    /// `deftask`: registered under its name; the id tells this form's earlier tasks
    /// from other definitions of the name.
    Registered(DefinitionId),
    /// `task`: a value only.
    Anonymous,
}

struct DefineTask {
    name: String,
    naming: Naming,
    params: Vec<(Sym, Option<Node>)>,
    options: HashMap<&'static str, (Node, Span)>,
    context_keys: Option<ContextKeys>,
    code: Code,
    /// The type when `:type` is not given.
    kind: TaskKind,
    scope: Rc<Scope>,
    issues_slot: Option<usize>,
    span: Span,
}

enum ContextKeys {
    /// `[a b]`: the names as written.
    Names(Vec<Sym>),
    /// Any other expression, evaluated at definition to a list of names.
    Expr(Node, Span),
}

pub fn deftask(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    const USAGE: &str = "(deftask name (params…) :option value… body…)";
    let name_syntax = items.get(1).ok_or_else(|| usage(USAGE, span))?;
    let name = name_syntax.as_symbol().ok_or_else(|| usage(USAGE, span))?;
    compiler.check_task_name(name, name_syntax.span)?;
    let naming = Naming::Registered(DefinitionId::fresh());
    let rest = items.get(2..).unwrap_or_default();
    let define = analyse(compiler, name.name().to_owned(), naming, rest, span, USAGE)?;
    Ok(compiler.define_node(name, Node::Extension(Box::new(define))))
}

/// `(task (params…) :option value… body…)`: a task value, registered nowhere.
pub fn task(compiler: &mut Compiler, items: &[Syntax], span: Span) -> Result<Node> {
    const USAGE: &str = "(task (params…) :option value… body…)";
    let rest = items.get(1..).unwrap_or_default();
    let define = analyse(
        compiler,
        anonymous_name(span),
        Naming::Anonymous,
        rest,
        span,
        USAGE,
    )?;
    if let Some((_, replace_span)) = define.options.get("replace") {
        return Err(Error::syntax(
            ":replace is an option of deftask: an anonymous task is not registered",
            *replace_span,
        ));
    }
    Ok(Node::Extension(Box::new(define)))
}

fn usage(form: &str, span: Span) -> Error {
    Error::syntax(format!("bad syntax: expected {form}"), span)
}

/// An anonymous task's name: `task_`, its file's name (letters, digits, `_` and `-`
/// only), `_` and its line (`task_labels_3`), so that providers take it as a tool's.
fn anonymous_name(span: Span) -> String {
    let Some(file) = crate::source::source(span.source) else {
        return "task_anonymous".to_owned();
    };
    let (line, _) = crate::source::line_col(&file.text, span.start as usize);
    let stem = std::path::Path::new(&file.name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
            true => c,
            false => '_',
        })
        .take(MAX_STEM)
        .collect();
    match stem.trim_matches('_') {
        "" => format!("task_{line}"),
        stem => format!("task_{stem}_{line}"),
    }
}

/// The most characters of a file's name an anonymous task's name takes.
const MAX_STEM: usize = 40;

/// The parameters, options and body of a task form (`rest`: what follows its name).
fn analyse(
    compiler: &mut Compiler,
    name: String,
    naming: Naming,
    rest: &[Syntax],
    span: Span,
    form: &str,
) -> Result<DefineTask> {
    let params = parse_params(compiler, rest.first().ok_or_else(|| usage(form, span))?)?;
    let Parsed {
        options,
        call_code,
        context_keys,
        body,
    } = parse_options(compiler, rest.get(1..).unwrap_or_default())?;

    let kind = default_kind(
        options.contains_key("prompt"),
        call_code.contains_key("command"),
        body,
        span,
    )?;
    check_call_options(&call_code, kind, span)?;

    let scope = Scope::new(params.iter().map(|(name, _)| *name).collect());
    let wants_issues =
        !body.is_empty() && (options.contains_key("audits") || options.contains_key("retries"));
    // A parameter named `issues` keeps its name: the program chose it.
    let issues = Sym::new("issues");
    let issues_slot = (scope.slot_of(issues).is_none() && (body.is_empty() || wants_issues))
        .then(|| scope.declare(issues));
    let mut task_compiler = Compiler::for_task_body(compiler.interp, scope.clone());
    let code_for = |option: &str, c: &mut Compiler| -> Result<Option<Node>> {
        call_code
            .get(option)
            .map(|syntax| c.compile(syntax))
            .transpose()
    };
    let code = match kind {
        TaskKind::Atomic => Code::Prompt {
            files: code_for("files", &mut task_compiler)?.map(Rc::new),
            attachments: code_for("attachments", &mut task_compiler)?.map(Rc::new),
        },
        TaskKind::Script => {
            let command =
                code_for("command", &mut task_compiler)?.ok_or_else(|| usage(form, span))?;
            Code::Command(Rc::new(ScriptCode {
                command,
                stdin: code_for("stdin", &mut task_compiler)?,
                env: code_for("env", &mut task_compiler)?,
            }))
        }
        _ => Code::Body(Rc::new(task_compiler.body(body, span)?)),
    };
    Ok(DefineTask {
        name,
        naming,
        params,
        options,
        context_keys,
        code,
        kind,
        scope,
        issues_slot,
        span,
    })
}

/// The type of a task that has a prompt, a command or `body` (exactly one), when `:type`
/// does not say.
fn default_kind(
    has_prompt: bool,
    has_command: bool,
    body: &[Syntax],
    span: Span,
) -> Result<TaskKind> {
    match (has_prompt, has_command, !body.is_empty()) {
        (true, false, false) => Ok(TaskKind::Atomic),
        (false, true, false) => Ok(TaskKind::Script),
        (false, false, true) if is_sequential_body(body) => Ok(TaskKind::Sequential),
        (false, false, true) => Ok(TaskKind::Composite),
        (false, false, false) => Err(Error::syntax(
            "a task needs :prompt, :command or a body",
            span,
        )),
        _ => Err(Error::syntax(
            "a task has only one of :prompt, :command or a body",
            span,
        )),
    }
}

/// The options evaluated at each call (`:files`, `:command`, …) belong to the type.
fn check_call_options(
    call_code: &HashMap<&'static str, &Syntax>,
    kind: TaskKind,
    span: Span,
) -> Result<()> {
    let misplaced = call_code
        .keys()
        .filter_map(|name| table::option(name))
        .find(|option| !option.applies_to(kind));
    let Some(option) = misplaced else {
        return Ok(());
    };
    let owners: Vec<&str> = option.types.iter().map(|k| k.name()).collect();
    Err(Error::syntax(
        format!(
            ":{} is an option of {} tasks",
            option.name,
            owners.join(" and ")
        ),
        span,
    ))
}

/// Whether answers are JSON: `:output` "json", or a `:schema` with no `:output` "text".
fn json_output(options: &Options, has_schema: bool) -> Result<bool> {
    match options.text("output")? {
        None => Ok(has_schema),
        Some(format) if format == "json" => Ok(true),
        Some(format) if format == "text" && !has_schema => Ok(false),
        Some(_) => Err(options.invalid("output", "\"json\" or \"text\" (\"json\" with :schema)")),
    }
}

/// A deftask form's options, sorted by when they run, and its body.
struct Parsed<'s> {
    options: HashMap<&'static str, (Node, Span)>,
    call_code: HashMap<&'static str, &'s Syntax>,
    context_keys: Option<ContextKeys>,
    body: &'s [Syntax],
}

/// Reads `:option value` pairs up to the first form that is not a keyword: the body.
fn parse_options<'s>(compiler: &mut Compiler, forms: &'s [Syntax]) -> Result<Parsed<'s>> {
    let mut options: HashMap<&'static str, (Node, Span)> = HashMap::new();
    let mut call_code: HashMap<&'static str, &Syntax> = HashMap::new();
    let mut context_keys = None;
    let mut rest = forms;
    while let [first, more @ ..] = rest {
        let SyntaxKind::Keyword(keyword) = first.kind else {
            break;
        };
        let value = more
            .first()
            .ok_or_else(|| Error::syntax(format!("option :{keyword} needs a value"), first.span))?;
        let option = option_name(keyword, first.span)?;
        let duplicate = options.contains_key(option)
            || call_code.contains_key(option)
            || (option == "context-keys" && context_keys.is_some());
        if duplicate {
            return Err(Error::syntax(
                format!("option :{option} is given twice"),
                first.span,
            ));
        }
        if option == "context-keys" {
            context_keys = Some(parse_context_keys(compiler, value)?);
        } else if table::option(option).is_some_and(|o| o.when == When::Call) {
            call_code.insert(option, value);
        } else {
            options.insert(option, (compiler.compile(value)?, value.span));
        }
        rest = more.get(1..).unwrap_or_default();
    }

    Ok(Parsed {
        options,
        call_code,
        context_keys,
        body: rest,
    })
}

/// `:inherit_context` and `:inherit-context` are the same option (XML spells it with `_`).
fn option_name(keyword: Sym, span: Span) -> Result<&'static str> {
    table::option_spelled(keyword.name())
        .map(|o| o.name)
        .ok_or_else(|| {
            let known: Vec<&str> = table::TASK_OPTIONS.iter().map(|o| o.name).collect();
            Error::syntax(
                format!(
                    "unknown deftask option :{keyword} (known: :{})",
                    known.join(", :")
                ),
                span,
            )
        })
}

fn parse_params(compiler: &mut Compiler, syntax: &Syntax) -> Result<Vec<(Sym, Option<Node>)>> {
    let items = match &syntax.kind {
        SyntaxKind::List(items) | SyntaxKind::Vector(items) => items.as_slice(),
        SyntaxKind::Nil => &[],
        _ => {
            return Err(Error::syntax(
                "task parameters are a list: (name (name default)…)",
                syntax.span,
            ))
        }
    };
    let mut params: Vec<(Sym, Option<Node>)> = Vec::with_capacity(items.len());
    for item in items {
        let (name, default) = match &item.kind {
            SyntaxKind::Symbol(name) => (*name, None),
            SyntaxKind::List(pair) | SyntaxKind::Vector(pair) => match pair.as_slice() {
                [name, default] => {
                    let name = name.as_symbol().ok_or_else(|| {
                        Error::syntax("a parameter name must be a symbol", name.span)
                    })?;
                    (name, Some(compiler.compile(default)?))
                }
                _ => {
                    return Err(Error::syntax(
                        "a parameter with a default is (name default)",
                        item.span,
                    ))
                }
            },
            _ => {
                return Err(Error::syntax(
                    "a parameter is a name or (name default)",
                    item.span,
                ))
            }
        };
        if params.iter().any(|(p, _)| *p == name) {
            return Err(Error::syntax(
                format!("duplicate parameter `{name}`"),
                item.span,
            ));
        }
        params.push((name, default));
    }
    Ok(params)
}

fn parse_context_keys(compiler: &mut Compiler, syntax: &Syntax) -> Result<ContextKeys> {
    if let SyntaxKind::Vector(items) = &syntax.kind {
        let names: Option<Vec<Sym>> = items.iter().map(name_of_syntax).collect();
        if let Some(names) = names {
            return Ok(ContextKeys::Names(names));
        }
    }
    Ok(ContextKeys::Expr(compiler.compile(syntax)?, syntax.span))
}

fn name_of_syntax(syntax: &Syntax) -> Option<Sym> {
    match &syntax.kind {
        SyntaxKind::Symbol(s) | SyntaxKind::Keyword(s) => Some(*s),
        SyntaxKind::Str(s) => Some(Sym::new(s)),
        _ => None,
    }
}

fn is_sequential_body(body: &[Syntax]) -> bool {
    match body {
        [only] => only
            .as_list()
            .and_then(|items| items.first())
            .and_then(Syntax::as_symbol)
            .is_some_and(|head| head.name() == "sequential"),
        _ => false,
    }
}

/// Which of a definition's values `build` evaluates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Values {
    All,
    /// Only the constants (`tasklisp check`, which runs no code): an option written as
    /// an expression is left out, as if not given.
    Constants,
}

impl Extension for DefineTask {
    fn eval(&self, interp: &Interp, env: &Env) -> Result<Value> {
        let (mut task, replace) = self
            .build(interp, env, Values::All)
            .map_err(|e| e.or_span(self.span))?;
        let Naming::Registered(id) = self.naming else {
            task.lexical = Lexical::capture(env);
            return Ok(Value::Task(Rc::new(task)));
        };
        let task = Rc::new(task);
        let definition = Definition {
            id: Some(id),
            replace,
        };
        let registered = interp
            .tasks
            .define(task.clone(), definition)
            .map_err(|e| e.with_span(self.span))?;
        if registered == Registered::Replaced {
            interp.notice(&format!("note: task `{}` redefined", task.name));
        }
        Ok(Value::Task(task))
    }

    /// The options written as constants are checked as the definition checks them.
    fn check(&self, interp: &Interp) -> Result<()> {
        self.build(interp, &None, Values::Constants)
            .map(drop)
            .map_err(|e| e.or_span(self.span))
    }
}

impl DefineTask {
    /// The task, and whether it replaces a task of its name (`:replace true`).
    fn build(&self, interp: &Interp, env: &Env, values: Values) -> Result<(Task, bool)> {
        // A value left out (not a constant, when only constants are evaluated) is nil.
        let eval = |node: &Node| match (values, node) {
            (Values::Constants, Node::Const(value)) => Ok(Some(value.clone())),
            (Values::Constants, _) => Ok(None),
            (Values::All, _) => interp.eval(node, env).map(Some),
        };
        let mut options = Options {
            values: HashMap::new(),
        };
        for (name, (node, span)) in &self.options {
            if let Some(value) = eval(node)? {
                options.values.insert(*name, (value, *span));
            }
        }
        let mut params = Vec::with_capacity(self.params.len());
        for (name, default) in &self.params {
            let default = match default {
                Some(node) => Some(eval(node)?.unwrap_or_default()),
                None => None,
            };
            params.push(Param {
                name: *name,
                default,
            });
        }
        let schema = options
            .get("schema")
            .map(|(v, span)| Schema::from_value(v).map_err(|e| e.with_span(span)))
            .transpose()?;
        let json_output = json_output(&options, schema.is_some())?;
        let has_prompt = matches!(self.code, Code::Prompt { .. });
        let param_types = options.param_types(&params)?;
        let tools = options.tools(has_prompt)?;
        let action = self.action(&options)?;
        let replace = options.flag("replace")?;
        let task = Task {
            name: self.name.clone(),
            kind: self.kind(&options)?,
            subtype: options.text("subtype")?.map(From::from).unwrap_or_default(),
            description: options.text("description")?,
            params,
            scope: self.scope.clone(),
            issues_slot: self.issues_slot,
            json_output,
            strict_json: options
                .get("strict-json")
                .is_some_and(|(v, _)| v.is_truthy()),
            schema,
            model: options.text("model")?,
            options: options.model_options()?,
            constraints: options.constraints(
                (options.get("tools").is_some() || !self.options.contains_key("tools"))
                    .then_some(tools.as_slice()),
                json_output,
            )?,
            tools,
            param_types,
            input_schema: None,
            context: self.context(&eval, &options)?,
            max_turns: options.count("max-turns", 1, MAX_TURNS)?,
            cache: options.get("cache").is_some_and(|(v, _)| v.is_truthy()),
            approve: options.get("approve").is_some_and(|(v, _)| v.is_truthy()),
            retries: options
                .count("retries", 0, MAX_RETRIES)?
                .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            audits: options.audits()?,
            extra_metadata: options.metadata()?,
            origin: interp.current_file().map(|f| f.display().to_string()),
            span: Some(self.span),
            action,
            home: Some(interp.home()),
            lexical: None,
        };
        Ok((task, replace))
    }

    /// What a call runs, with the definition-time values in place.
    fn action(&self, options: &Options) -> Result<Action> {
        Ok(match &self.code {
            Code::Prompt { files, attachments } => Action::Prompt(PromptParts {
                system: options.text("system")?.map(|s| Template::parse(&s)),
                prompt: Template::parse(&options.text("prompt")?.unwrap_or_default()),
                timeout: options.timeout()?,
                memory: Memory {
                    files: files.clone(),
                    query: options.text("context-query")?.map(|s| Template::parse(&s)),
                    dir: options.text("context-dir")?,
                },
                prompt_cache: options.prompt_cache(&self.name)?,
                attachments: attachments.clone(),
            }),
            Code::Command(code) => Action::Command(ScriptParts {
                code: code.clone(),
                shell: options.get("shell").is_some_and(|(v, _)| v.is_truthy()),
                timeout: options.timeout()?,
            }),
            Code::Body(body) => Action::Body(body.clone(), options.timeout()?),
        })
    }

    /// `:type` when given, checked against what the task runs.
    fn kind(&self, options: &Options) -> Result<TaskKind> {
        let Some(name) = options.text("type")? else {
            return Ok(self.kind);
        };
        let kind = TaskKind::parse(&name)
            .ok_or_else(|| options.invalid("type", &table::type_names(false).join(", ")))?;
        if table::task_type(kind).runs != self.code.runs() {
            return Err(options.invalid("type", &table::fitting_types()));
        }
        Ok(kind)
    }

    fn context(
        &self,
        eval: &dyn Fn(&Node) -> Result<Option<Value>>,
        options: &Options,
    ) -> Result<InheritContext> {
        let keys = match &self.context_keys {
            None => None,
            Some(ContextKeys::Names(names)) => Some(names.clone()),
            Some(ContextKeys::Expr(node, span)) => eval(node)?
                .map(|value| {
                    let names: Option<Vec<Sym>> = value
                        .as_list()
                        .map(|l| l.iter().map(|v| name_of_value(&v)).collect())
                        .unwrap_or(None);
                    names.ok_or_else(|| {
                        Error::validation(format!(
                            ":context-keys must be a list of names, not {}",
                            write_string(&value)
                        ))
                        .with_span(*span)
                    })
                })
                .transpose()?,
        };
        // An empty key list says nothing: generated code may always write one.
        let keys = keys.filter(|k| !k.is_empty());
        if options.flag("fresh-context")? {
            return match (options.text("inherit-context")?.as_deref(), keys) {
                (None | Some("none"), None) => Ok(InheritContext::Fresh),
                _ => Err(Error::validation(
                    ":fresh-context true runs the task with nothing inherited, so it cannot go with :inherit-context \"full\" or \"subset\"",
                )
                .with_span(options.get("fresh-context").map_or(self.span, |(_, s)| s))),
            };
        }
        match (options.text("inherit-context")?.as_deref(), keys) {
            (None | Some("full"), None) => Ok(InheritContext::Full),
            (Some("none"), None) => Ok(InheritContext::None),
            (None | Some("subset"), keys) => Ok(InheritContext::Subset(keys.unwrap_or_default())),
            (Some("full" | "none"), Some(_)) => Err(Error::validation(
                ":context-keys goes with :inherit-context \"subset\"",
            )
            .with_span(self.span)),
            (Some(_), _) => {
                Err(options.invalid("inherit-context", "\"full\", \"none\" or \"subset\""))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::reader::read_source;

    fn forms(text: &str) -> Vec<Syntax> {
        read_source("<deftask test>", text).unwrap()
    }

    #[test]
    fn options_may_be_spelled_as_xml_spells_them() {
        let span = Span::generated();
        assert_eq!(
            option_name(Sym::new("inherit_context"), span).unwrap(),
            "inherit-context"
        );
        assert_eq!(
            option_name(Sym::new("context-keys"), span).unwrap(),
            "context-keys"
        );
        assert!(option_name(Sym::new("promt"), span).is_err());
    }

    #[test]
    fn anonymous_names_are_tool_names_from_the_file_and_line() {
        let id = crate::source::add_source("dir/my labels.v2.sexp", "\n\n(task (x) 1)");
        let span = Span::new(id, 2, 13);
        let name = anonymous_name(span);
        assert_eq!(name, "task_my_labels_v2_3");
        assert!(crate::provider::message::is_wire_tool_name(&name));
        let unnamed = crate::source::add_source("<eval>", "(task (x) 1)");
        assert_eq!(anonymous_name(Span::new(unnamed, 0, 12)), "task_eval_1");
        assert_eq!(anonymous_name(Span::generated()), "task_anonymous");
    }

    #[test]
    fn one_sequential_form_makes_a_sequential_body() {
        assert!(is_sequential_body(&forms("(sequential (a) (b))")));
        assert!(!is_sequential_body(&forms("(sequential (a)) (b)")));
        assert!(!is_sequential_body(&forms("(begin (a))")));
    }
}
