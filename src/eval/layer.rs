//! Layers: what each part of the language hands the interpreter.
//!
//! As rhai's `Package` carries its functions and its `custom_syntax` its forms, a
//! [`Layer`] carries its builtin tables and its special forms, each form with the
//! analyser entry that compiles it and the synopsis and example `:describe`, `:apropos`
//! and completion show. The core is one layer; `task`, `module` and `testing` are
//! others. An interpreter is given a [`Registry`] of its layers (`crate::layers` names
//! the standard ones, above the core): the analyser, the builtin table and the REPL read
//! it, so adding a form or a builtin is a row in its layer's table.

use super::{Compiler, Node};
use crate::builtins::Builtin;
use crate::error::Result;
use crate::reader::Syntax;
use crate::source::Span;
use crate::value::{Entries, Map, Value};
use std::collections::HashMap;
use std::rc::Rc;

/// How a special form is analysed: the compiler, the form's items (its head first) and
/// its span, to a node.
pub type Analyser = fn(&mut Compiler, &[Syntax], Span) -> Result<Node>;

/// A special form: its name, its analyser, and its documentation.
pub struct FormDef {
    pub name: &'static str,
    pub analyse: Analyser,
    /// How a use of it reads, e.g. `(if test then else?)`.
    pub synopsis: &'static str,
    /// What it does, in a phrase (empty when the synopsis says it all).
    pub description: &'static str,
    /// A use of it; `code ⇒ value` when it promises a value (a test checks it does).
    pub example: &'static str,
}

impl FormDef {
    /// The synopsis and the description on one line, as `:describe` shows them.
    pub fn summary(&self) -> String {
        if self.description.is_empty() {
            self.synopsis.to_owned()
        } else {
            format!("{}: {}", self.synopsis, self.description)
        }
    }
}

/// One layer of the language: its builtin tables and its special forms.
pub struct Layer {
    pub name: &'static str,
    /// The builtin tables, each with its title (a heading of the language reference).
    pub builtins: &'static [(&'static str, &'static [Builtin])],
    pub forms: &'static [FormDef],
    /// Whether the entries of an edited copy (`assoc`, `dissoc`, `merge`) of a map this
    /// layer marks (`Map::task_result`: a TaskResult) still make one; `None` for a layer
    /// that marks no maps.
    pub keeps_mark: Option<fn(&Entries) -> bool>,
}

/// The forms and builtins of a list of layers, by name.
pub struct Registry {
    layers: Vec<&'static Layer>,
    forms: HashMap<&'static str, &'static FormDef>,
    builtins: HashMap<&'static str, &'static Builtin>,
    /// `apply`, which the evaluator runs as a tail call and knows by this address (a
    /// table's entries may be copied into each unit of code that names them, so the
    /// address is the one this registry hands out).
    apply: Option<&'static Builtin>,
}

impl Registry {
    pub fn new(layers: &[&'static Layer]) -> Registry {
        let forms = layers
            .iter()
            .flat_map(|layer| layer.forms)
            .map(|form| (form.name, form))
            .collect();
        let builtins: HashMap<&str, &Builtin> = layers
            .iter()
            .flat_map(|layer| layer.builtins.iter().flat_map(|(_, table)| *table))
            .map(|b| (b.name, b))
            .collect();
        let apply = builtins.get("apply").copied();
        Registry {
            layers: layers.to_vec(),
            forms,
            builtins,
            apply,
        }
    }

    /// Whether `b` is `apply` as this registry holds it.
    #[inline]
    pub fn is_apply(&self, b: &Builtin) -> bool {
        self.apply.is_some_and(|apply| std::ptr::eq(apply, b))
    }

    /// The special form called `name`.
    pub fn form(&self, name: &str) -> Option<&'static FormDef> {
        self.forms.get(name).copied()
    }

    /// Every special form, layer by layer in table order.
    pub fn forms(&self) -> impl Iterator<Item = &'static FormDef> + '_ {
        self.layers.iter().flat_map(|layer| layer.forms)
    }

    /// The builtin called `name`.
    pub fn builtin(&self, name: &str) -> Option<&'static Builtin> {
        self.builtins.get(name).copied()
    }

    /// The map an edit of `original` made of `entries`: marked as `original` was while a
    /// layer's `keeps_mark` holds for the entries, plain data otherwise.
    pub fn edited(&self, original: &Value, entries: Entries) -> Value {
        let was_marked = matches!(original, Value::Map(m) if m.task_result);
        let keeps = |layer: &&Layer| layer.keeps_mark.is_some_and(|keeps| keeps(&entries));
        if was_marked && self.layers.iter().any(keeps) {
            return Value::Map(Rc::new(Map {
                entries,
                task_result: true,
            }));
        }
        Value::map(entries)
    }

    /// Every builtin, layer by layer in table order.
    pub fn builtins(&self) -> impl Iterator<Item = &'static Builtin> + '_ {
        self.layers
            .iter()
            .flat_map(|layer| layer.builtins.iter().flat_map(|(_, table)| *table))
    }
}
