//! The values of `deftask` options, checked when the task is defined: each check names
//! the option and points at its value.

use super::audit::audit_list;
use super::definition::Constraints;
use crate::error::{Error, Result};
use crate::provider::ModelOptions;
use crate::source::Span;
use crate::symbol::Sym;
use crate::task::{Param, Task};
use crate::value::{write_string, Entries, Value};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

/// The longest `:timeout` (about 31 years): any deadline it sets is representable.
pub const MAX_TIMEOUT_SECONDS: f64 = 1e9;

pub fn name_of_value(value: &Value) -> Option<Sym> {
    match value {
        Value::Symbol(s) | Value::Keyword(s) => Some(*s),
        // A name given as data becomes a name of code here.
        other => other.name_text().map(Sym::new),
    }
}

/// The definition-time option values, with checks that name the option.
pub struct Options<'a> {
    pub values: HashMap<&'a str, (Value, Span)>,
}

impl Options<'_> {
    pub fn get(&self, name: &str) -> Option<(&Value, Span)> {
        self.values.get(name).map(|(v, span)| (v, *span))
    }

    pub fn invalid(&self, name: &str, expected: &str) -> Error {
        let (shown, span) = match self.get(name) {
            Some((value, span)) => (write_string(value), Some(span)),
            None => ("nothing".to_owned(), None),
        };
        let error = Error::validation(format!(":{name} must be {expected} (got {shown})"));
        match span {
            Some(span) => error.with_span(span),
            None => error,
        }
    }

    /// The prompt cache asked of the provider: `:prompt-cache-key`, else the task's name;
    /// `None` under `:cache-prefix false`.
    pub fn prompt_cache(&self, task: &str) -> Result<Option<String>> {
        if self
            .get("cache-prefix")
            .is_some_and(|(v, _)| !v.is_truthy())
        {
            return Ok(None);
        }
        let key = self.text("prompt-cache-key")?;
        Ok(Some(key.unwrap_or_else(|| task.to_owned())))
    }

    /// A true-or-false option; nil or absent is false.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            None | Some((Value::Nil | Value::Bool(false), _)) => Ok(false),
            Some((Value::Bool(true), _)) => Ok(true),
            Some(_) => Err(self.invalid(name, "true or false")),
        }
    }

    /// A string option (symbols and keywords give their names); nil is absent.
    pub fn text(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None | Some((Value::Nil, _)) => Ok(None),
            Some((other, _)) => match other.name_text() {
                Some(text) => Ok(Some(text.to_owned())),
                None => Err(self.invalid(name, "a string")),
            },
        }
    }

    /// The model options (`:temperature`, `:max-tokens` or `:max_tokens`, …,
    /// `:extra-body`).
    pub fn model_options(&self) -> Result<ModelOptions> {
        let mut options = ModelOptions::default();
        for name in crate::provider::options::NAMES {
            let Some((value, span)) = self.get(&name.replace('_', "-")) else {
                continue;
            };
            options
                .set(name, crate::value::to_json(value)?)
                .map_err(|e| Error::validation(e).with_span(span))?;
        }
        Ok(options)
    }

    /// `:tools [t…]`: tasks, offered to the model by an atomic task.
    pub fn tools(&self, atomic: bool) -> Result<Vec<Rc<Task>>> {
        let Some((value, _)) = self.get("tools") else {
            return Ok(Vec::new());
        };
        if !atomic {
            return Err(self.invalid("tools", "given only on atomic tasks (with :prompt)"));
        }
        let items = value
            .as_list()
            .ok_or_else(|| self.invalid("tools", "a list of tasks"))?;
        let mut tools: Vec<Rc<Task>> = Vec::new();
        for item in items.iter() {
            match item {
                Value::Task(task) if !tools.iter().any(|t| t.name == task.name) => tools.push(task),
                Value::Task(_) => return Err(self.invalid("tools", "a list of different tasks")),
                _ => return Err(self.invalid("tools", "a list of tasks")),
            }
        }
        Ok(tools)
    }

    /// `:tool-choice`, `:choice` and `:grammar`, checked against the task's `tools`
    /// (`None` when they are not known: `tasklisp check` leaves an expression out) and
    /// whether it answers in JSON.
    pub fn constraints(
        &self,
        tools: Option<&[Rc<Task>]>,
        json_output: bool,
    ) -> Result<Constraints> {
        let tool_choice = self.text("tool-choice")?;
        if let (Some(choice), Some(tools)) = (&tool_choice, tools) {
            let known = match choice.as_str() {
                "auto" | "none" => true,
                "required" => !tools.is_empty(),
                name => tools.iter().any(|t| t.name == name),
            };
            if !known {
                return Err(self.invalid(
                    "tool-choice",
                    "\"auto\", \"none\", or with :tools \"required\" or the name of one of them",
                ));
            }
        }
        let choice = self.choices()?;
        let grammar = self.text("grammar")?;
        if grammar.as_ref().is_some_and(|g| g.trim().is_empty()) {
            return Err(self.invalid("grammar", "a GBNF grammar (root ::= …)"));
        }
        if !choice.is_empty() && (json_output || grammar.is_some()) {
            return Err(self.invalid(
                "choice",
                "alone: the answer is one of its strings, so not with :schema, :output \"json\" or :grammar",
            ));
        }
        Ok(Constraints {
            tool_choice,
            choice,
            grammar,
        })
    }

    /// `:choice ["a" "b" …]`: at least one string, each once.
    fn choices(&self) -> Result<Vec<String>> {
        let Some((value, _)) = self.get("choice").filter(|(v, _)| !matches!(v, Value::Nil)) else {
            return Ok(Vec::new());
        };
        let expected = "a list of different strings, at least one";
        let items = value
            .as_list()
            .ok_or_else(|| self.invalid("choice", expected))?;
        let mut choices: Vec<String> = Vec::new();
        for item in items.iter() {
            match item.as_str() {
                Some(text) if !choices.iter().any(|c| c == text) => choices.push(text.to_owned()),
                _ => return Err(self.invalid("choice", expected)),
            }
        }
        if choices.is_empty() {
            return Err(self.invalid("choice", expected));
        }
        Ok(choices)
    }

    /// `:param-types {"n" "integer" …}`: each key a parameter, each value a JSON type.
    pub fn param_types(&self, params: &[Param]) -> Result<HashMap<String, String>> {
        let Some((value, _)) = self.get("param-types") else {
            return Ok(HashMap::new());
        };
        let expected = format!(
            "a map from parameter names to {}",
            crate::task::tools::PARAM_TYPES.join(", ")
        );
        let map = value
            .as_map()
            .ok_or_else(|| self.invalid("param-types", &expected))?;
        let mut types = HashMap::new();
        for (name, kind) in map.entries.iter() {
            let known_param = params.iter().any(|p| p.name.name() == name.as_ref());
            match kind.as_str() {
                Some(kind) if known_param && crate::task::tools::PARAM_TYPES.contains(&kind) => {
                    types.insert(name.to_string(), kind.to_owned());
                }
                _ => return Err(self.invalid("param-types", &expected)),
            }
        }
        Ok(types)
    }

    /// An integer option between `min` and `max`; nil is absent.
    pub fn count(&self, name: &str, min: i64, max: i64) -> Result<Option<u64>> {
        match self.get(name) {
            None | Some((Value::Nil, _)) => Ok(None),
            Some((Value::Int(n), _)) if (min..=max).contains(n) => Ok(u64::try_from(*n).ok()),
            Some(_) => Err(self.invalid(name, &format!("an integer from {min} to {max}"))),
        }
    }

    /// Seconds, more than zero and at most [`MAX_TIMEOUT_SECONDS`]; nil is absent.
    pub fn timeout(&self) -> Result<Option<Duration>> {
        let seconds = match self.get("timeout") {
            None | Some((Value::Nil, _)) => return Ok(None),
            Some((Value::Int(n), _)) => *n as f64,
            Some((Value::Float(f), _)) => *f,
            Some(_) => return Err(self.invalid("timeout", "a number of seconds")),
        };
        Some(seconds)
            .filter(|s| *s > 0.0 && *s <= MAX_TIMEOUT_SECONDS)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero())
            .map(Some)
            .ok_or_else(|| {
                self.invalid(
                    "timeout",
                    &format!("a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS:e}"),
                )
            })
    }

    pub fn audits(&self) -> Result<Vec<Value>> {
        match self.get("audits") {
            None => Ok(Vec::new()),
            Some((value, _)) => audit_list(value)
                .ok_or_else(|| self.invalid("audits", "a procedure or a list of procedures")),
        }
    }

    pub fn metadata(&self) -> Result<Entries> {
        match self.get("metadata") {
            None | Some((Value::Nil, _)) => Ok(Entries::new()),
            Some((Value::Map(map), _)) => Ok(map.entries.clone()),
            Some(_) => Err(self.invalid("metadata", "a map")),
        }
    }
}
