//! The one table of task types and task options. `deftask` reads its option names and
//! when each is evaluated from it, the XML layer its element names, value forms and the
//! task types each applies to, the REPL its completions, and `tasklisp check` gets all
//! of that through `deftask`'s analysis. Adding an option or a type starts here.

use super::definition::TaskKind;

/// What a task of a type runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// `:prompt` (XML `<instructions>`).
    Prompt,
    /// `:command` (XML `<command>`).
    Command,
    /// A body (XML `<steps>` or `<reduce>`).
    Body,
}

impl Runs {
    /// What a `deftask` of the type has, as its messages and the docs say it.
    pub fn written_as(self) -> &'static str {
        match self {
            Runs::Prompt => ":prompt",
            Runs::Command => ":command",
            Runs::Body => "a body",
        }
    }
}

/// A task type: its name, what it runs, the element holding its work in XML (none for a
/// type XML does not write), and what it is for the docs. One row per type: `deftask`'s
/// `:type`, the XML `type` attribute, `task-names :type` and the docs' table of types
/// (`docs/TASKS.md`, checked by a test) all read these rows.
pub struct TaskType {
    pub kind: TaskKind,
    pub name: &'static str,
    pub runs: Runs,
    pub xml_element: Option<&'static str>,
    /// The type's row in `docs/TASKS.md`, which only the test keeping that table in step reads.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the docs table test reads it")
    )]
    pub doc: &'static str,
}

const ATOMIC_TYPE: TaskType = TaskType {
    kind: TaskKind::Atomic,
    name: "atomic",
    runs: Runs::Prompt,
    xml_element: Some("instructions"),
    doc: "asks the model: the rendered prompt, the answer parsed as the task says",
};
const SCRIPT_TYPE: TaskType = TaskType {
    kind: TaskKind::Script,
    name: "script",
    runs: Runs::Command,
    xml_element: Some("command"),
    doc: "runs a program: its arguments, standard input and environment",
};
const SEQUENTIAL_TYPE: TaskType = TaskType {
    kind: TaskKind::Sequential,
    name: "sequential",
    runs: Runs::Body,
    xml_element: Some("steps"),
    doc:
        "runs steps in order, each seeing the earlier results: a body that is one `(sequential …)`",
};
const REDUCE_TYPE: TaskType = TaskType {
    kind: TaskKind::Reduce,
    name: "reduce",
    runs: Runs::Body,
    xml_element: Some("reduce"),
    doc: "folds a task over a list: a body calling `reduce-task`",
};
const LOOP_TYPE: TaskType = TaskType {
    kind: TaskKind::DirectorEvaluatorLoop,
    name: "director_evaluator_loop",
    runs: Runs::Body,
    xml_element: Some("loop"),
    doc: "a director and an evaluator in turn: a body calling `director-evaluator-loop`",
};
const COMPOSITE_TYPE: TaskType = TaskType {
    kind: TaskKind::Composite,
    name: "composite",
    runs: Runs::Body,
    xml_element: None,
    doc: "any other body",
};

pub const TASK_TYPES: &[TaskType] = &[
    ATOMIC_TYPE,
    SCRIPT_TYPE,
    SEQUENTIAL_TYPE,
    REDUCE_TYPE,
    LOOP_TYPE,
    COMPOSITE_TYPE,
];

pub fn task_type(kind: TaskKind) -> &'static TaskType {
    match kind {
        TaskKind::Atomic => &ATOMIC_TYPE,
        TaskKind::Script => &SCRIPT_TYPE,
        TaskKind::Sequential => &SEQUENTIAL_TYPE,
        TaskKind::Reduce => &REDUCE_TYPE,
        TaskKind::Composite => &COMPOSITE_TYPE,
        TaskKind::DirectorEvaluatorLoop => &LOOP_TYPE,
    }
}

/// The names of the types, joined for messages ("atomic, script, …").
pub fn type_names(xml_only: bool) -> Vec<&'static str> {
    TASK_TYPES
        .iter()
        .filter(|t| !xml_only || t.xml_element.is_some())
        .map(|t| t.name)
        .collect()
}

/// The type an XML `type` attribute names: one that XML writes.
pub fn xml_type(name: &str) -> Option<TaskKind> {
    TASK_TYPES
        .iter()
        .find(|t| t.name == name && t.xml_element.is_some())
        .map(|t| t.kind)
}

/// `a, b or c`.
fn either(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Which types fit what a `deftask` has: "atomic with :prompt, script with :command, or
/// sequential, … with a body", for the error of a `:type` that does not fit.
pub fn fitting_types() -> String {
    let groups: Vec<String> = [Runs::Prompt, Runs::Command, Runs::Body]
        .into_iter()
        .map(|runs| {
            let names: Vec<&str> = TASK_TYPES
                .iter()
                .filter(|t| t.runs == runs)
                .map(|t| t.name)
                .collect();
            format!("{} with {}", either(&names), runs.written_as())
        })
        .collect();
    match groups.as_slice() {
        [init @ .., last] => format!("{}, or {last}", init.join(", ")),
        [] => String::new(),
    }
}

#[cfg(test)]
/// The docs' table of task types (`docs/TASKS.md`), one line per row.
pub fn types_table() -> String {
    let mut lines = vec![
        "| type | has | in XML | what it does |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    for t in TASK_TYPES {
        let runs = match t.runs {
            Runs::Body => t.runs.written_as().to_owned(),
            other => format!("`{}`", other.written_as()),
        };
        let xml = t.xml_element.map_or("—".to_owned(), |e| format!("`<{e}>`"));
        lines.push(format!("| `{}` | {runs} | {xml} | {} |", t.name, t.doc));
    }
    lines.join("\n")
}

/// When a `deftask` option's value is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Once, when the task is defined.
    Definition,
    /// Once, when the task is defined, as a template whose `{{tags}}` each call fills
    /// (`tasklisp check` checks the tags name something).
    Template,
    /// At each call, in the call's environment (it can use the parameters).
    Call,
    /// Read from the form itself, not evaluated (`:context-keys [a b]`).
    Form,
}

/// How an option is written in an XML `<task>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Xml {
    /// `<element>text</element>`, the text taken as a string.
    Text(&'static str),
    /// `<element>3</element>`, a number.
    Number(&'static str),
    /// `<element>true</element>` or `false`.
    Bool(&'static str),
    /// `<element>expression</element>`, one S-expression, evaluated as the option's value.
    Expr(&'static str),
    /// `<element>{"a": 1}</element>`, a JSON text, read as the value it spells.
    Json(&'static str),
    /// An element the XML layer reads itself (its shape is not one text).
    Element(&'static str),
    /// An attribute of `<task>`.
    Attribute(&'static str),
}

impl Xml {
    /// The element name, for the forms written as an element.
    pub fn element(self) -> Option<&'static str> {
        match self {
            Xml::Text(e)
            | Xml::Number(e)
            | Xml::Bool(e)
            | Xml::Expr(e)
            | Xml::Json(e)
            | Xml::Element(e) => Some(e),
            Xml::Attribute(_) => None,
        }
    }
}

/// A `deftask` option.
pub struct TaskOption {
    /// The keyword, without the colon.
    pub name: &'static str,
    pub when: When,
    /// The types it applies to; empty means every type.
    pub types: &'static [TaskKind],
    pub xml: Xml,
    /// The element of `<task>` that holds its element (`model_options`), when it is not
    /// written directly in `<task>`.
    pub container: Option<&'static str>,
}

impl TaskOption {
    pub fn applies_to(&self, kind: TaskKind) -> bool {
        self.types.is_empty() || self.types.contains(&kind)
    }
}

const EVERY: &[TaskKind] = &[];
const ATOMIC: &[TaskKind] = &[TaskKind::Atomic];
const SCRIPT: &[TaskKind] = &[TaskKind::Script];
const RUNS_ITSELF: &[TaskKind] = &[TaskKind::Atomic, TaskKind::Script];

/// The element holding the model options in XML.
pub const MODEL_OPTIONS: &str = "model_options";

macro_rules! container {
    () => {
        None
    };
    ($container:literal) => {
        Some($container)
    };
}

macro_rules! options {
    ($( $name:literal $when:ident $types:ident $xml:ident($element:literal $(in $container:literal)?) $doc:literal; )*) => {
        pub const TASK_OPTIONS: &[TaskOption] = &[
            $( TaskOption {
                name: $name,
                when: When::$when,
                types: $types,
                xml: Xml::$xml($element),
                container: container!($($container)?),
            }, )*
        ];
    };
}

// The last column says what the option is, for whoever reads or adds a row.
options! {
    "description" Definition EVERY Text("description") "what the task does";
    "type" Definition EVERY Attribute("type") "the task's type: a name from `TASK_TYPES`";
    "subtype" Definition EVERY Attribute("subtype") "a refinement: standard, director, evaluator, associative_matching, …";
    "system" Template ATOMIC Text("system") "the system prompt, a template";
    "prompt" Template ATOMIC Text("instructions") "the prompt, a template";
    "output" Definition RUNS_ITSELF Element("output_format") "\"json\" or \"text\"";
    "schema" Definition RUNS_ITSELF Element("output_format") "a type name or a JSON Schema map";
    "strict-json" Definition RUNS_ITSELF Element("output_format") "true: only exact JSON is accepted (no repair)";
    "model" Definition ATOMIC Text("model") "the model to ask";
    "max-turns" Definition ATOMIC Number("max_turns") "provider turns allowed in the session";
    "cache" Definition ATOMIC Bool("cache") "true: answers may come from the run log's cache";
    "timeout" Definition EVERY Number("timeout") "seconds one call may take";
    "retries" Definition EVERY Number("retries") "extra rounds when an audit finds a critical issue";
    "audits" Definition EVERY Expr("audits") "functions from a result to a list of issues";
    "inherit-context" Definition EVERY Element("inherit_context") "\"full\", \"none\" or \"subset\"";
    "fresh-context" Definition EVERY Bool("fresh_context") "true: run with nothing inherited (not with :inherit-context \"full\" or \"subset\")";
    "context-keys" Form EVERY Element("context_keys") "the caller's names a subset context copies";
    "files" Call ATOMIC Element("file_paths") "paths whose contents the prompt reaches as {{files}}";
    "attachments" Call ATOMIC Element("attachments") "files or URLs sent with the prompt: paths, URLs or (attachment …) values";
    "context-query" Template ATOMIC Text("context_query") "a template; get-context's answer is {{context}}";
    "context-dir" Definition ATOMIC Text("context_dir") "the directory :context-query searches";
    "command" Call SCRIPT Element("command") "the program and its arguments";
    "stdin" Call SCRIPT Expr("stdin") "text for the program's standard input";
    "env" Call SCRIPT Expr("env") "a map of environment variables";
    "shell" Definition SCRIPT Bool("shell") "true: run the command through sh -c";
    "metadata" Definition EVERY Expr("metadata") "a map of extra metadata";
    "temperature" Definition ATOMIC Number("temperature" in "model_options") "model option: sampling temperature, 0 to 2";
    "max-tokens" Definition ATOMIC Number("max_tokens" in "model_options") "model option: the answer's length cap";
    "top-p" Definition ATOMIC Number("top_p" in "model_options") "model option: nucleus sampling, 0 to 1";
    "stop" Definition ATOMIC Text("stop" in "model_options") "model option: a stop string or list of them";
    "seed" Definition ATOMIC Number("seed" in "model_options") "model option: the sampling seed";
    "frequency-penalty" Definition ATOMIC Number("frequency_penalty" in "model_options") "model option: penalty for repeated tokens, -2 to 2";
    "presence-penalty" Definition ATOMIC Number("presence_penalty" in "model_options") "model option: penalty for tokens already present, -2 to 2";
    "reasoning-effort" Definition ATOMIC Text("reasoning_effort" in "model_options") "model option: minimal, low, medium or high";
    "service-tier" Definition ATOMIC Text("service_tier" in "model_options") "model option: the provider's service tier (auto, flex, …)";
    "extra-body" Definition ATOMIC Json("extra_body" in "model_options") "model option: a map merged into the request body as is";
    "tools" Definition ATOMIC Element("tools") "tasks offered to the model as tools";
    "tool-choice" Definition ATOMIC Text("tool_choice") "auto, required, none or the name of one of the tools";
    "choice" Definition ATOMIC Expr("choice") "the strings the answer must be exactly one of";
    "grammar" Definition ATOMIC Text("grammar") "a GBNF grammar the answer must follow (llama.cpp)";
    "cache-prefix" Definition ATOMIC Bool("cache_prefix") "false: ask no prompt caching of the provider (on by default)";
    "prompt-cache-key" Definition ATOMIC Text("prompt_cache_key") "the key OpenAI groups cached prompts by (default: the task's name)";
    "param-types" Definition EVERY Element("inputs") "JSON types of the parameters, for tool schemas";
    "replace" Definition EVERY Bool("replace") "true: replaces a task of the same name defined elsewhere (deftask only)";
    "approve" Definition EVERY Bool("approve") "true: each call a model makes of it as a tool waits for a person's approval";
}

pub fn option(name: &str) -> Option<&'static TaskOption> {
    TASK_OPTIONS.iter().find(|o| o.name == name)
}

/// The option a keyword names, spelled with `-` or with `_` as XML does
/// (`:inherit_context` is `:inherit-context`).
pub fn option_spelled(keyword: &str) -> Option<&'static TaskOption> {
    option(&keyword.replace('_', "-"))
}

/// The option an XML element written in `container` (`None`: directly in `<task>`)
/// writes, if any.
pub fn option_for_element(element: &str, container: Option<&str>) -> Option<&'static TaskOption> {
    TASK_OPTIONS
        .iter()
        .find(|o| o.xml.element() == Some(element) && o.container == container)
}

/// The options whose elements `container` holds.
pub fn contained(container: &str) -> impl Iterator<Item = &'static TaskOption> + '_ {
    TASK_OPTIONS
        .iter()
        .filter(move |o| o.container == Some(container))
}

/// The element a `<task>` holds for this option: its own, or its container.
pub fn task_child(option: &TaskOption) -> Option<&'static str> {
    option.container.or(option.xml.element())
}

/// `:name` for every option, for completion.
pub fn keywords() -> impl Iterator<Item = String> {
    TASK_OPTIONS.iter().map(|o| format!(":{}", o.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_has_one_entry_and_options_are_unique() {
        for kind in [
            TaskKind::Atomic,
            TaskKind::Script,
            TaskKind::Sequential,
            TaskKind::Reduce,
            TaskKind::Composite,
            TaskKind::DirectorEvaluatorLoop,
        ] {
            assert_eq!(TASK_TYPES.iter().filter(|t| t.kind == kind).count(), 1);
            assert_eq!(task_type(kind).kind, kind);
        }
        for (i, o) in TASK_OPTIONS.iter().enumerate() {
            assert!(
                TASK_OPTIONS[..i].iter().all(|p| p.name != o.name),
                "{} twice",
                o.name
            );
        }
    }

    /// The docs list the types as the rows say, and each row says what `deftask` of the
    /// type has.
    #[test]
    fn the_docs_list_the_types_of_the_table() {
        let tasks = include_str!("../../docs/TASKS.md");
        assert!(
            tasks.contains(&types_table()),
            "docs/TASKS.md:\n{}",
            types_table()
        );
        let xml = include_str!("../../docs/XML.md");
        let row = xml
            .lines()
            .find(|l| l.starts_with("| `type` |"))
            .unwrap_or_default();
        let values = row.split('|').nth(2).unwrap_or_default();
        let mut written: Vec<&str> = values.split('`').skip(1).step_by(2).collect();
        let mut names = type_names(true);
        written.sort_unstable();
        names.sort_unstable();
        assert_eq!(written, names, "docs/XML.md's `type` attribute");
        assert_eq!(
            fitting_types(),
            "atomic with :prompt, script with :command, or sequential, reduce, \
             director_evaluator_loop or composite with a body"
        );
    }

    #[test]
    fn elements_map_back_to_their_options() {
        assert_eq!(
            option_for_element("instructions", None).unwrap().name,
            "prompt"
        );
        assert_eq!(
            option_for_element("max_turns", None).unwrap().name,
            "max-turns"
        );
        assert!(option_for_element("steps", None).is_none());
        assert!(option_for_element("temperature", None).is_none());
        let temperature = option_for_element("temperature", Some(MODEL_OPTIONS)).unwrap();
        assert_eq!(task_child(temperature), Some(MODEL_OPTIONS));
        assert_eq!(
            contained(MODEL_OPTIONS).count(),
            crate::provider::options::NAMES.len()
        );
        assert!(option("stdin").unwrap().applies_to(TaskKind::Script));
        assert!(!option("stdin").unwrap().applies_to(TaskKind::Atomic));
    }
}
