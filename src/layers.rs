//! The layers every interpreter gets: the one place that names them all. It sits above
//! the core (`eval`, `builtins`, `value`), which takes its layers as a [`Registry`] and
//! names none of the layers above it.

use crate::error::Result;
use crate::eval::layer::{Layer, Registry};
use crate::eval::{Interp, Limits};
use std::io::Write;
use std::sync::LazyLock;

/// The standard layers, the core first.
pub fn standard() -> [&'static Layer; 6] {
    [
        &crate::eval::CORE,
        &crate::task::LAYER,
        &crate::module::LAYER,
        &crate::testing::LAYER,
        &crate::mcp::LAYER,
        &crate::sandbox::LAYER,
    ]
}

static STANDARD: LazyLock<Registry> = LazyLock::new(|| Registry::new(&standard()));

/// The registry of the [`standard`] layers, built once.
pub fn registry() -> &'static Registry {
    &STANDARD
}

impl Interp {
    /// An interpreter with the standard layers and the prelude, printing to stdout.
    pub fn new(limits: Limits) -> Result<Interp> {
        let stdout = crate::progress::BesideProgress(std::io::stdout());
        Interp::with_output(limits, Box::new(std::io::BufWriter::new(stdout)))
    }

    /// An interpreter with the standard layers and the prelude, printing to `out`.
    pub fn with_output(limits: Limits, out: Box<dyn Write>) -> Result<Interp> {
        Interp::with_layers(limits, out, registry())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_layers_define_one_name() {
        let registry = registry();
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
