//! Layers: what each part of the language hands the interpreter.
//!
//! As rhai's `Package` carries its functions and its `custom_syntax` its forms, a
//! [`Layer`] carries its builtin tables and its special forms, each form with the
//! analyser entry that compiles it and the synopsis and example `:describe`, `:apropos`
//! and completion show. The core is one layer; `task`, `module` and `testing` are
//! others. [`standard`] is the one place the core names them: the analyser, the builtin
//! table and the REPL read the [`Registry`] built from that list, so adding a form or a
//! builtin is a row in its layer's table.

use super::{Compiler, Node};
use crate::builtins::Builtin;
use crate::error::Result;
use crate::reader::Syntax;
use crate::source::Span;
use std::collections::HashMap;
use std::sync::LazyLock;

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
}

/// The layers every interpreter gets, the core first. The only place the core names the
/// layers above it.
pub fn standard() -> [&'static Layer; 4] {
    [
        &super::forms::CORE,
        &crate::task::LAYER,
        &crate::module::LAYER,
        &crate::testing::LAYER,
    ]
}

/// The forms and builtins of a list of layers, by name.
pub struct Registry {
    layers: Vec<&'static Layer>,
    forms: HashMap<&'static str, &'static FormDef>,
    builtins: HashMap<&'static str, &'static Builtin>,
}

static STANDARD: LazyLock<Registry> = LazyLock::new(|| Registry::new(&standard()));

impl Registry {
    pub fn new(layers: &[&'static Layer]) -> Registry {
        let forms = layers
            .iter()
            .flat_map(|layer| layer.forms)
            .map(|form| (form.name, form))
            .collect();
        let builtins = layers
            .iter()
            .flat_map(|layer| layer.builtins.iter().flat_map(|(_, table)| *table))
            .map(|b| (b.name, b))
            .collect();
        Registry {
            layers: layers.to_vec(),
            forms,
            builtins,
        }
    }

    /// The registry of the [`standard`] layers, built once.
    pub fn standard() -> &'static Registry {
        &STANDARD
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

    /// Every builtin, layer by layer in table order.
    pub fn builtins(&self) -> impl Iterator<Item = &'static Builtin> + '_ {
        self.layers
            .iter()
            .flat_map(|layer| layer.builtins.iter().flat_map(|(_, table)| *table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_layers_define_one_name() {
        let registry = Registry::standard();
        let mut forms = std::collections::HashSet::new();
        for form in registry.forms() {
            assert!(forms.insert(form.name), "two forms named {}", form.name);
            assert!(!form.synopsis.is_empty(), "{} has no synopsis", form.name);
            assert!(!form.example.is_empty(), "{} has no example", form.name);
        }
        let mut builtins = std::collections::HashSet::new();
        for b in registry.builtins() {
            assert!(builtins.insert(b.name), "two builtins named {}", b.name);
            assert!(registry.form(b.name).is_none(), "{} is both", b.name);
        }
    }
}
