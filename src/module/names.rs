//! `tasklisp check`'s look at the analysed code of every checked file together: names
//! bound nowhere, calls with the wrong number of arguments or named arguments that name
//! no parameter, and template tags that name nothing, each reported with its span before
//! anything runs. Definitions are gathered from all the files first, so the
//! result does not depend on the order of the files or of the forms in them.

use crate::builtins::arity_error;
use crate::error::Error;
use crate::eval::ast::{Lambda, Node};
use crate::eval::Interp;
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::call::{input_error, unknown_named_argument};
use crate::value::Value;
use crate::xml::Param;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

/// What `check` learned of one checked file.
#[derive(Default)]
pub struct Analysed {
    /// The analysed top-level forms of a `.sexp` file (none for XML).
    pub forms: Vec<Node>,
    /// The file loads or imports `.sexp` code, whose definitions are not known without
    /// running it: its names are not reported as unbound.
    pub opaque: bool,
    /// Every symbol written anywhere in the file: a template tag naming one of them may
    /// be bound by a caller's environment.
    pub symbols: HashSet<Sym>,
    /// The templates of the tasks the file defines.
    pub templates: Vec<TaskTemplate>,
    /// Macro uses that ran out of checking's limits, each at its place; the rest of the
    /// file was checked.
    pub expansions: Vec<Error>,
}

/// A template of a defined task and the tags it uses.
pub struct TaskTemplate {
    pub task: String,
    pub params: Vec<String>,
    pub tags: Vec<Sym>,
    pub span: Span,
}

/// Names a task's template may use that no code writes: what memory options, sequential
/// steps, accumulation and audit retries bind while the task runs.
const IMPLICIT_TAGS: &[&str] = &[
    "files",
    "context",
    "step_results",
    "accumulated",
    "output",
    "issues",
];

/// What the analysed code does with a global name.
enum Use {
    Name(Sym, Span, Reach),
    Call {
        callee: Sym,
        args: Vec<Arg>,
        span: Span,
        reach: Reach,
    },
    /// `define` of a global (anywhere, not only at the top level), with its arity when
    /// the value is a procedure; `defmacro` too.
    Define(Sym, Option<(usize, Option<usize>)>),
}

/// Whether a run of the file reaches a piece of code for certain — straight-line code
/// at the top level — or only maybe: inside a procedure, a branch, a `try`, a loop.
/// A problem a run must hit is an error; one it may never hit is a warning, so `check`
/// never fails a file that runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reach {
    Certain,
    Maybe,
}

/// A problem `check` found in the analysed code: its file, the error a run would raise,
/// and whether a run must reach it.
pub struct Problem {
    pub file: usize,
    pub error: Error,
    pub reach: Reach,
}

impl Use {
    fn call(callee: Sym, args: &[Node], span: Span, reach: Reach) -> Use {
        Use::Call {
            callee,
            args: args.iter().map(Arg::of).collect(),
            span,
            reach,
        }
    }
}

/// An argument of a call as `check` sees it: a constant keyword names a parameter.
#[derive(Clone, Copy)]
enum Arg {
    Keyword(Sym),
    Other,
}

impl Arg {
    fn of(node: &Node) -> Arg {
        match node {
            Node::Const(Value::Keyword(name)) => Arg::Keyword(*name),
            _ => Arg::Other,
        }
    }
}

/// The most "did you mean"s one check looks for.
const MAX_HINTS: usize = 100;

/// Globals a program may use without defining them: `run` binds `*args*`.
const PREDEFINED: &[&str] = &["*args*"];

/// The problems of the checked files, in the order they appear in each file.
pub fn problems(
    interp: &Interp,
    files: &[Analysed],
    tasks: &HashMap<String, Option<Vec<Param>>>,
) -> Vec<Problem> {
    let uses: Vec<Vec<Use>> = files
        .iter()
        .map(|file| {
            let mut uses = Vec::new();
            walk_all(&file.forms, Reach::Certain, &mut uses);
            uses
        })
        .collect();
    let scope = Scope::new(interp, files, tasks, &uses);
    let mut found = Vec::new();
    for (index, (file, uses)) in files.iter().zip(uses).enumerate() {
        let mut mine = Vec::new();
        // Analysing the form expands its macros, so a run meets these for certain.
        for error in &file.expansions {
            mine.push((error.clone(), Reach::Certain));
        }
        for each in uses {
            mine.extend(scope.problem(file, each));
        }
        for template in &file.templates {
            // A template is rendered only when its task is called.
            for error in scope.template_problems(template) {
                mine.push((error, Reach::Maybe));
            }
        }
        found.extend(reported(index, mine));
    }
    found
}

/// The most problems reported of one file: each report shows its place, which costs
/// a look through the text, and no one reads further.
const MAX_PROBLEMS: usize = 1_000;

/// A file's problems as reported: the first [`MAX_PROBLEMS`], then one counting the
/// others (an error if any of them is).
fn reported(file: usize, mut problems: Vec<(Error, Reach)>) -> impl Iterator<Item = Problem> {
    let others = problems.split_off(problems.len().min(MAX_PROBLEMS));
    let counted = (!others.is_empty()).then(|| {
        let certain = others.iter().any(|(_, reach)| *reach == Reach::Certain);
        let message = format!(
            "{} more problems in this file are not shown (only the first {MAX_PROBLEMS} are)",
            others.len()
        );
        let reach = if certain {
            Reach::Certain
        } else {
            Reach::Maybe
        };
        (Error::eval(message), reach)
    });
    problems
        .into_iter()
        .chain(counted)
        .map(move |(error, reach)| Problem { file, error, reach })
}

/// What the checked files define, and what else a name may refer to.
struct Scope<'a> {
    interp: &'a Interp,
    tasks: &'a HashMap<String, Option<Vec<Param>>>,
    defined: HashSet<Sym>,
    definitions: HashMap<Sym, usize>,
    arities: HashMap<Sym, (usize, Option<usize>)>,
    /// Every name in scope, for "did you mean".
    in_scope: Vec<String>,
    /// How many more "did you mean"s may be looked for: each compares the name with
    /// every name in scope, so a file of many unbound names gets a few.
    hints_left: Cell<usize>,
    /// Every symbol written in any of the files.
    written: HashSet<Sym>,
}

impl<'a> Scope<'a> {
    fn new(
        interp: &'a Interp,
        files: &[Analysed],
        tasks: &'a HashMap<String, Option<Vec<Param>>>,
        uses: &[Vec<Use>],
    ) -> Scope<'a> {
        let mut defined: HashSet<Sym> = HashSet::new();
        let mut definitions: HashMap<Sym, usize> = HashMap::new();
        let mut arities: HashMap<Sym, (usize, Option<usize>)> = HashMap::new();
        for each in uses.iter().flatten() {
            if let Use::Define(name, arity) = each {
                *definitions.entry(*name).or_default() += 1;
                let first = defined.insert(*name);
                // A name defined twice may change its arity: leave its calls unchecked.
                match arity {
                    Some(arity) if first => arities.insert(*name, *arity),
                    _ => arities.remove(name),
                };
            }
        }
        let in_scope = interp
            .global_names()
            .into_iter()
            .chain(defined.iter().copied())
            .map(|s| s.name().to_owned())
            .chain(tasks.keys().cloned())
            .collect();
        let written = files
            .iter()
            .flat_map(|f| f.symbols.iter().copied())
            .collect();
        Scope {
            interp,
            tasks,
            defined,
            definitions,
            arities,
            in_scope,
            hints_left: Cell::new(MAX_HINTS),
            written,
        }
    }

    fn known(&self, name: Sym) -> bool {
        self.defined.contains(&name)
            || PREDEFINED.contains(&name.name())
            || self.interp.global(name).is_some()
            || self.interp.macro_named(name).is_some()
            || self.tasks.contains_key(name.name())
    }

    /// The problem of one use of a global name, if it has one.
    fn problem(&self, file: &Analysed, each: Use) -> Option<(Error, Reach)> {
        match each {
            Use::Name(name, span, reach) if !file.opaque && !self.known(name) => {
                let error = Error::eval(format!("unbound symbol: {name}"))
                    .with_span(span)
                    .with_hint(self.hint(name));
                Some((error, reach))
            }
            Use::Call {
                callee,
                args,
                span,
                reach,
            } => self
                .call_problem(callee, &args)
                .map(|error| (error.with_span(span), reach)),
            Use::Name(..) | Use::Define(..) => None,
        }
    }

    /// "Did you mean" for an unbound name, while hints are left.
    fn hint(&self, name: Sym) -> Option<String> {
        let left = self.hints_left.get().checked_sub(1)?;
        self.hints_left.set(left);
        crate::suggest::hint(name.name(), self.in_scope.iter().map(String::as_str))
    }

    /// Why a call's arguments do not fit the task or procedure it calls.
    fn call_problem(&self, callee: Sym, args: &[Arg]) -> Option<Error> {
        if is_task_call(self.tasks, &self.definitions, callee) {
            let params = self.tasks.get(callee.name())?.as_ref()?;
            return task_call_problem(callee.name(), params, args);
        }
        let arity = self.arities.get(&callee).copied().or_else(|| {
            global_arity(self.interp, callee).filter(|_| !self.defined.contains(&callee))
        });
        let (min, max) = arity?;
        let count = args.len();
        (count < min || max.is_some_and(|max| count > max))
            .then(|| arity_error(callee.name(), min, max, count))
    }

    /// The template tags of a task that name nothing.
    fn template_problems<'t>(
        &'t self,
        template: &'t TaskTemplate,
    ) -> impl Iterator<Item = Error> + 't {
        let bound = move |tag: &Sym| {
            template.params.iter().any(|p| p == tag.name())
                || IMPLICIT_TAGS.contains(&tag.name())
                || self.written.contains(tag)
                || self.known(*tag)
        };
        template
            .tags
            .iter()
            .filter(move |tag| !bound(tag))
            .map(move |tag| {
                let params = template.params.iter().map(String::as_str);
                Error::validation(format!(
                    "task `{}`: template tag {{{{{tag}}}}} names no parameter or binding",
                    template.task
                ))
                .with_span(template.span)
                .with_hint(crate::suggest::hint(tag.name(), params))
            })
    }
}

/// A call of a task by name: defined once at most in the checked files (by its
/// `deftask`; XML tasks not at all), so no `define` rebinds the name.
fn is_task_call(
    tasks: &HashMap<String, Option<Vec<Param>>>,
    definitions: &HashMap<Sym, usize>,
    callee: Sym,
) -> bool {
    tasks.contains_key(callee.name()) && definitions.get(&callee).copied().unwrap_or(0) <= 1
}

/// Why a call's arguments cannot fit a task's parameters, as the call itself would say:
/// a named argument that names no parameter, too many arguments, or a required one
/// missing. Arguments that are not constant keywords count as positional.
fn task_call_problem(task: &str, params: &[Param], args: &[Arg]) -> Option<Error> {
    let mut named = vec![false; params.len()];
    let mut positional = 0;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg {
            Arg::Keyword(name) => {
                let Some(index) = params.iter().position(|p| p.name == name.name()) else {
                    let names = params.iter().map(|p| p.name.as_str());
                    return Some(unknown_named_argument(task, name.name(), names));
                };
                if let Some(slot) = named.get_mut(index) {
                    *slot = true;
                }
                rest.next();
            }
            Arg::Other => positional += 1,
        }
    }
    let free: Vec<&Param> = params
        .iter()
        .zip(&named)
        .filter(|(_, named)| !**named)
        .map(|(param, _)| param)
        .collect();
    if positional > free.len() {
        let message = format!(
            "too many arguments: it takes {} and argument {} is extra",
            params.len(),
            free.len() + 1
        );
        return Some(input_error(task, message));
    }
    let missing = free.iter().skip(positional).find(|p| !p.optional)?;
    Some(input_error(
        task,
        format!("missing required argument `{}`", missing.name),
    ))
}

/// The arity of the builtin or prelude procedure a global names.
fn global_arity(interp: &Interp, name: Sym) -> Option<(usize, Option<usize>)> {
    match interp.global(name)? {
        crate::value::Value::Builtin(b) => Some((b.min_args, b.max_args)),
        crate::value::Value::Closure(c) => Some(lambda_arity(&c.lambda)),
        _ => None,
    }
}

fn lambda_arity(lambda: &Lambda) -> (usize, Option<usize>) {
    let required = lambda.required as usize;
    (required, (!lambda.rest).then_some(required))
}

/// Every global name used and every call of a global by name, in order, with whether a
/// run reaches it for certain (`reach`, the reach of the code around it).
fn walk(node: &Node, reach: Reach, out: &mut Vec<Use>) {
    let maybe = Reach::Maybe;
    match node {
        Node::Global { name, span } => out.push(Use::Name(*name, *span, reach)),
        Node::SetGlobal { name, value, span } => {
            out.push(Use::Name(*name, *span, reach));
            walk(value, reach, out);
        }
        Node::Path { base, .. } => walk(base, reach, out),
        Node::DefineGlobal { name, value } => {
            let arity = match &**value {
                Node::Lambda(lambda) => Some(lambda_arity(lambda)),
                _ => None,
            };
            out.push(Use::Define(*name, arity));
            walk(value, reach, out);
        }
        Node::DefMacro { name, lambda } => {
            out.push(Use::Define(*name, None));
            walk(&lambda.body, maybe, out);
        }
        Node::SetLocal { value, .. }
        | Node::SetDynamic { value, .. }
        | Node::DefineLocal { value, .. } => walk(value, reach, out),
        Node::If(parts) => {
            walk(&parts.0, reach, out);
            walk(&parts.1, maybe, out);
            walk(&parts.2, maybe, out);
        }
        // Only the first of `and`/`or` runs for certain.
        Node::And(nodes) | Node::Or(nodes) => {
            for (i, node) in nodes.iter().enumerate() {
                walk(node, if i == 0 { reach } else { maybe }, out);
            }
        }
        Node::Begin(nodes) => walk_all(nodes, reach, out),
        Node::Lambda(lambda) => walk(&lambda.body, maybe, out),
        Node::Let(let_) => {
            for (_, init) in &let_.inits {
                walk(init, reach, out);
            }
            walk(&let_.body, reach, out);
        }
        Node::Loop(loop_) => {
            walk_all(&loop_.inits, reach, out);
            walk(&loop_.lambda.body, maybe, out);
        }
        Node::Call(call) => {
            if let Node::Global { name, .. } = &call.callee {
                out.push(Use::call(*name, &call.args, call.span, reach));
            }
            walk(&call.callee, reach, out);
            walk_all(&call.args, reach, out);
        }
        Node::Prim(prim) => {
            out.push(Use::call(prim.name, &prim.args, prim.span, reach));
            walk_all(&prim.args, reach, out);
        }
        Node::Case(case) => {
            walk(&case.key, reach, out);
            for (_, body) in &case.clauses {
                walk(body, maybe, out);
            }
            walk(&case.default, maybe, out);
        }
        // What `try` runs may fail and be caught.
        Node::Try(try_) => {
            walk(&try_.body, maybe, out);
            if let Some((_, handler)) = &try_.handler {
                walk(handler, maybe, out);
            }
            if let Some(finally) = &try_.finally {
                walk(finally, maybe, out);
            }
        }
        // Constants, locals, a task body's free variables (bound by its caller), and the
        // task and module forms, which check their own parts.
        Node::Const(_) | Node::Local { .. } | Node::Dynamic { .. } | Node::Extension(_) => {}
    }
}

fn walk_all(nodes: &[Node], reach: Reach, out: &mut Vec<Use>) {
    for node in nodes {
        walk(node, reach, out);
    }
}
