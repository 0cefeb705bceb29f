//! The TaskDefinition (SPEC §6): what `deftask` and XML import build, and how a task
//! value reads like a map of it.

use super::schema::Schema;
use super::template::Template;
use crate::eval::env::{Env, Frame, Scope, Slots};
use crate::eval::Node;
use crate::provider::ModelOptions;
use crate::symbol::Sym;
use crate::value::{to_json, Entries, Value};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

/// The type of a task. Atomic and script tasks run themselves; the others run a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    Atomic,
    Script,
    Sequential,
    Reduce,
    Composite,
    DirectorEvaluatorLoop,
}

impl TaskKind {
    pub fn name(self) -> &'static str {
        super::table::task_type(self).name
    }

    pub fn parse(name: &str) -> Option<TaskKind> {
        super::table::TASK_TYPES
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.kind)
    }
}

/// A parameter; a default makes it optional.
pub struct Param {
    pub name: Sym,
    pub default: Option<Value>,
}

/// Where a task call's environment looks for names it does not bind itself.
pub enum InheritContext {
    /// The environment of the call expression.
    Full,
    /// The global environment only.
    None,
    /// Copies of these bindings of the caller, over the global environment.
    Subset(Vec<Sym>),
    /// `:fresh-context true`: nothing inherited (the global environment only).
    Fresh,
}

impl InheritContext {
    pub fn name(&self) -> &'static str {
        match self {
            InheritContext::Full => "full",
            InheritContext::None | InheritContext::Fresh => "none",
            InheritContext::Subset(_) => "subset",
        }
    }
}

/// The expressions of a script task, evaluated at each call in the call's environment.
pub struct ScriptCode {
    pub command: Node,
    pub stdin: Option<Node>,
    pub env: Option<Node>,
}

pub struct ScriptParts {
    pub code: Rc<ScriptCode>,
    pub shell: bool,
    pub timeout: Option<Duration>,
}

/// What an atomic task sends, and what it reads first.
pub struct PromptParts {
    pub system: Option<Template>,
    pub prompt: Template,
    /// How long one provider call may take (`:timeout`).
    pub timeout: Option<Duration>,
    pub memory: Memory,
    /// The provider's prompt cache: its key, `None` when off (`:cache-prefix false`).
    pub prompt_cache: Option<String>,
    /// `:attachments`, evaluated at each call: files and URLs sent with the prompt.
    pub attachments: Option<Rc<Node>>,
}

/// What an atomic task reads before it renders its prompt: `:files` (evaluated at each
/// call) as `{{files}}`, and the answer to `:context-query` (rendered at each call) in
/// `:context-dir` as `{{context}}`.
#[derive(Default)]
pub struct Memory {
    pub files: Option<Rc<Node>>,
    pub query: Option<Template>,
    pub dir: Option<String>,
}

/// What a call of the task does.
pub enum Action {
    Prompt(PromptParts),
    Command(ScriptParts),
    /// The body, and its `:timeout`.
    Body(Rc<Node>, Option<Duration>),
}

/// What an atomic task's answer is held to, beyond its schema.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Constraints {
    /// `:tool-choice`: `auto`, `required`, `none`, or the name of one of the `:tools`.
    pub tool_choice: Option<String>,
    /// `:choice`: the answer is exactly one of these strings (empty: any answer).
    pub choice: Vec<String>,
    /// `:grammar`: a GBNF grammar, for servers that take one.
    pub grammar: Option<String>,
}

/// The keys a task reads as (`keys`, `values`), in this order; any other key reads its
/// metadata.
pub const FIELDS: [&str; 9] = [
    "name",
    "type",
    "subtype",
    "description",
    "params",
    "defaults",
    "template",
    "isatomic",
    "metadata",
];

/// A task: registered (`deftask`, XML, MCP) or anonymous (`(task …)`).
pub struct Task {
    pub name: String,
    pub kind: TaskKind,
    /// Set once: at definition, or by the first loop that gives the task a role.
    pub subtype: std::cell::OnceCell<String>,
    pub description: Option<String>,
    pub params: Vec<Param>,
    /// The call frame's names: the parameters, then `issues` if the task has that slot,
    /// then the body's internal definitions.
    pub scope: Rc<Scope>,
    /// The slot of `issues` (the previous round's audit issues), when the frame has one.
    pub issues_slot: Option<usize>,
    pub json_output: bool,
    /// `:strict-json true`: the answer must be JSON as it is, with no repairs.
    pub strict_json: bool,
    pub schema: Option<Schema>,
    pub model: Option<String>,
    /// Model options given on the task: the most specific layer.
    pub options: ModelOptions,
    /// The tasks offered to the model as tools (`:tools`).
    pub tools: Vec<Rc<Task>>,
    /// What the answer is held to: `:tool-choice`, `:choice`, `:grammar`.
    pub constraints: Constraints,
    /// JSON types of parameters, for tool schemas (`:param-types`); others are strings.
    pub param_types: HashMap<String, String>,
    /// The JSON Schema of the parameters when it is given whole rather than made from
    /// them (an MCP server's tool, with the server's own input schema).
    pub input_schema: Option<Rc<Json>>,
    pub context: InheritContext,
    pub max_turns: Option<u64>,
    /// `:cache true`: answers may come from the run log's cache.
    pub cache: bool,
    /// `:approve true`: each call a model makes of it as a tool waits for approval.
    pub approve: bool,
    pub retries: u32,
    pub audits: Vec<Value>,
    /// `:metadata {…}` given by the program.
    pub extra_metadata: Entries,
    /// The file the task was defined in, for duplicate-registration errors.
    pub origin: Option<String>,
    /// Where the `deftask` (or XML `<task>`) is, for failure traces.
    pub span: Option<crate::source::Span>,
    pub action: Action,
    /// The home the task was defined in, whose names its code means wherever it is
    /// called from (see `crate::eval::home`); `None` for a task with no code of its own
    /// (an MCP server's tool), which runs in its caller's.
    pub home: Option<crate::eval::home::HomeId>,
    /// An anonymous task's bindings where it was made (`(task …)` in a function).
    pub lexical: Option<Lexical>,
}

/// The local bindings in scope where an anonymous task was made, with the values they
/// had then. A call looks names up in them after its parameters and before the
/// environment its `:inherit-context` gives, so its templates see a factory's parameters.
pub struct Lexical {
    scope: Rc<Scope>,
    values: Slots,
}

impl Lexical {
    /// The local bindings of `env`; `None` at the top level, where there are none.
    pub fn capture(env: &Env) -> Option<Lexical> {
        let (names, values): (Vec<Sym>, Slots) = local_bindings(env).into_iter().unzip();
        (!names.is_empty()).then(|| Lexical {
            scope: Scope::new(names),
            values,
        })
    }

    /// A frame of these bindings inside `outer`, for one call.
    fn over(&self, outer: Env) -> Env {
        Some(Frame::new(self.scope.clone(), self.values.clone(), outer))
    }
}

/// The names bound in the frames of `env` (not the globals), each with the value of its
/// innermost binding: innermost frame first, each frame's in slot order. Slots not yet defined and the hidden names
/// the language makes for itself (they hold a space) are left out.
pub fn local_bindings(env: &Env) -> Vec<(Sym, Value)> {
    let mut seen = std::collections::HashSet::new();
    let mut bindings = Vec::new();
    let mut frame = env.as_ref();
    while let Some(f) = frame {
        for (slot, (name, value)) in f.scope.names().into_iter().zip(f.values()).enumerate() {
            // A name declared twice in a scope is bound by its latest slot.
            let latest = f.scope.slot_of(name) == Some(slot);
            let hidden = name.name().contains(' ') || matches!(value, Value::Undefined);
            if latest && !hidden && seen.insert(name) {
                bindings.push((name, value));
            }
        }
        frame = f.parent.as_ref();
    }
    bindings
}

impl Task {
    pub fn subtype(&self) -> Option<&str> {
        self.subtype.get().map(String::as_str)
    }

    /// Gives the task a subtype unless it has one (`director-evaluator-loop` roles).
    pub fn set_subtype_if_none(&self, subtype: &str) {
        self.subtype.get_or_init(|| subtype.to_owned());
    }

    /// The environment a call's frame sits in: the anonymous task's bindings where it
    /// was made, inside `context` (what `:inherit-context` gives).
    pub fn call_outer(&self, context: Env) -> Env {
        match &self.lexical {
            Some(lexical) => lexical.over(context),
            None => context,
        }
    }

    /// The task as the read-only map `get`, `keys`, `values` and paths read.
    pub fn entries(&self) -> Entries {
        FIELDS
            .iter()
            .map(|key| (Rc::from(*key), self.field(key)))
            .collect()
    }

    /// A task reads like a map of its definition (`FIELDS`); other keys read its
    /// metadata.
    pub fn field(&self, key: &str) -> Value {
        match key {
            "isatomic" => Value::Bool(self.kind == TaskKind::Atomic),
            "defaults" => Value::map(self.defaults()),
            "template" => match &self.action {
                Action::Prompt(parts) => Value::from(parts.prompt.source()),
                _ => Value::Nil,
            },
            "name" => Value::from(self.name.as_str()),
            "type" => Value::from(self.kind.name()),
            "subtype" => optional_str(self.subtype()),
            "description" => optional_str(self.description.as_deref()),
            "params" => Value::list(
                self.params
                    .iter()
                    .map(|p| Value::from(p.name.name()))
                    .collect(),
            ),
            "metadata" => Value::map(self.metadata()),
            other => self.metadata().get(other).cloned().unwrap_or(Value::Nil),
        }
    }

    /// The settings that are not top-level keys: output format, model, context, limits…
    pub fn metadata(&self) -> Entries {
        let mut entries = Entries::new();
        let mut put = |key: &str, value: Value| {
            entries.insert(Rc::from(key), value);
        };
        put(
            "output",
            Value::from(if self.json_output { "json" } else { "text" }),
        );
        if let Some(schema) = &self.schema {
            put("schema", schema.as_value());
        }
        if let Some(model) = &self.model {
            put("model", Value::from(model.as_str()));
        }
        if !self.options.is_empty() {
            put("options", crate::value::from_json(&self.options.to_json()));
        }
        if !self.tools.is_empty() {
            let names = self.tools.iter().map(|t| Value::from(t.name.as_str()));
            put("tools", Value::list(names.collect()));
        }
        if !self.param_types.is_empty() {
            let mut types: Vec<(&String, &String)> = self.param_types.iter().collect();
            types.sort();
            let types = types
                .into_iter()
                .map(|(name, kind)| (Rc::from(name.as_str()), Value::from(kind.as_str())));
            put("param_types", Value::map(types.collect()));
        }
        self.context_metadata(&mut put);
        if let Some(turns) = self.max_turns {
            put(
                "max_turns",
                Value::Int(i64::try_from(turns).unwrap_or(i64::MAX)),
            );
        }
        if self.cache {
            put("cache", Value::Bool(true));
        }
        if self.retries > 0 {
            put("retries", Value::Int(i64::from(self.retries)));
        }
        put("defaults", Value::map(self.defaults()));
        self.action_metadata(&mut put);
        if let Some(origin) = &self.origin {
            put("origin", Value::from(origin.as_str()));
        }
        for (key, value) in &self.extra_metadata {
            entries.entry(key.clone()).or_insert_with(|| value.clone());
        }
        entries
    }

    /// `{param default}` of the parameters that have a default.
    fn defaults(&self) -> Entries {
        self.params
            .iter()
            .filter_map(|p| Some((Rc::from(p.name.name()), p.default.clone()?)))
            .collect()
    }

    /// `inherit_context`, and `fresh_context` or `context_keys` when they apply.
    fn context_metadata(&self, put: &mut impl FnMut(&str, Value)) {
        put("inherit_context", Value::from(self.context.name()));
        if matches!(self.context, InheritContext::Fresh) {
            put("fresh_context", Value::Bool(true));
        }
        if let InheritContext::Subset(keys) = &self.context {
            put(
                "context_keys",
                Value::list(keys.iter().map(|k| Value::from(k.name())).collect()),
            );
        }
    }

    /// The settings of what a call runs: the prompt's templates, the shell, the timeout.
    fn action_metadata(&self, put: &mut impl FnMut(&str, Value)) {
        match &self.action {
            Action::Prompt(parts) => {
                put("prompt", Value::from(parts.prompt.source()));
                if let Some(system) = &parts.system {
                    put("system", Value::from(system.source()));
                }
                if let Some(timeout) = parts.timeout {
                    put("timeout", Value::Float(timeout.as_secs_f64()));
                }
                if let Some(query) = &parts.memory.query {
                    put("context_query", Value::from(query.source()));
                }
                if let Some(dir) = &parts.memory.dir {
                    put("context_dir", Value::from(dir.as_str()));
                }
            }
            Action::Command(parts) => {
                put("shell", Value::Bool(parts.shell));
                if let Some(timeout) = parts.timeout {
                    put("timeout", Value::Float(timeout.as_secs_f64()));
                }
            }
            Action::Body(_, timeout) => {
                if let Some(timeout) = timeout {
                    put("timeout", Value::Float(timeout.as_secs_f64()));
                }
            }
        }
    }

    /// The definition as JSON (`json-stringify` of a task, `:describe`).
    pub fn describe_json(&self) -> Json {
        let params: Vec<Json> = self
            .params
            .iter()
            .map(|p| Json::from(p.name.name()))
            .collect();
        serde_json::json!({
            "name": self.name,
            "type": self.kind.name(),
            "subtype": self.subtype.get(),
            "description": self.description,
            "params": params,
            "metadata": lossy_json(&Value::map(self.metadata())),
        })
    }
}

fn optional_str(text: Option<&str>) -> Value {
    text.map_or(Value::Nil, Value::from)
}

/// Data nested deeper than this is shown as a placeholder by [`lossy_json`].
const MAX_LOSSY_DEPTH: usize = 1_000;

/// Data as JSON; values JSON cannot hold (procedures, NaN) become their printed form.
pub fn lossy_json(value: &Value) -> Json {
    lossy_at(value, 0)
}

fn lossy_at(value: &Value, depth: usize) -> Json {
    if depth > MAX_LOSSY_DEPTH {
        return Json::String("…".to_owned());
    }
    match value {
        Value::List(..) => Json::Array(
            value
                .as_list()
                .unwrap_or_default()
                .iter()
                .map(|v| lossy_at(&v, depth + 1))
                .collect(),
        ),
        Value::Map(map) => Json::Object(
            map.entries
                .iter()
                .map(|(k, v)| (k.to_string(), lossy_at(v, depth + 1)))
                .collect(),
        ),
        other => to_json(other).unwrap_or_else(|_| Json::String(crate::value::write_string(other))),
    }
}
