//! Interned symbols: a `Sym` is a small index, so environments and the global table
//! never hash a name at run time.
//!
//! Only code interns: the program's text, and data at the moment it becomes code
//! (`eval`, a macro's expansion). Symbols and keywords made from data at run time
//! (`read`, `string->symbol`, a model's tool-call argument names) use the interned `Sym`
//! when their name already has one ([`Sym::lookup`]) and otherwise hold their name
//! themselves (`Value::DataSymbol`, `Value::DataKeyword`), so it is freed with the data.

use std::collections::HashMap;
use std::fmt;
use std::sync::{LazyLock, RwLock};

/// An interned name. Equal names give equal `Sym`s for the life of the process.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

struct Interner {
    ids: HashMap<&'static str, Sym>,
    names: Vec<&'static str>,
}

// Names are leaked on purpose: they live as long as the process and are shared by every
// interpreter. Programs intern a bounded set of names (their source text); names that
// arrive as data are interned only when that data is evaluated as code.
static INTERNER: LazyLock<RwLock<Interner>> = LazyLock::new(|| {
    RwLock::new(Interner {
        ids: HashMap::new(),
        names: Vec::new(),
    })
});

impl Sym {
    /// Interns `name`, returning the same `Sym` for the same text.
    pub fn new(name: &str) -> Sym {
        if let Some(sym) = INTERNER
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .get(name)
        {
            return *sym;
        }
        let mut table = INTERNER.write().unwrap_or_else(|e| e.into_inner());
        if let Some(sym) = table.ids.get(name) {
            return *sym;
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let sym = Sym(table.names.len() as u32);
        table.names.push(leaked);
        table.ids.insert(leaked, sym);
        sym
    }

    /// The `Sym` of `name` if it is interned already; never adds to the table.
    pub fn lookup(name: &str) -> Option<Sym> {
        INTERNER
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .get(name)
            .copied()
    }

    /// The interned text. Only `new` makes a `Sym`, after pushing its name, so the
    /// name is always there; the empty fallback is never taken.
    pub fn name(self) -> &'static str {
        let table = INTERNER.read().unwrap_or_else(|e| e.into_inner());
        table.names.get(self.index()).copied().unwrap_or_default()
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// How many symbols exist; the global table sizes itself from this.
    pub fn count() -> usize {
        INTERNER
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .names
            .len()
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Symbols the evaluator needs by identity, interned once.
pub mod well_known {
    use super::Sym;
    use std::sync::LazyLock;

    macro_rules! syms {
        ($($id:ident = $text:expr;)*) => {
            $(pub static $id: LazyLock<Sym> = LazyLock::new(|| Sym::new($text));)*
        };
    }

    syms! {
        QUOTE = "quote";
        QUASIQUOTE = "quasiquote";
        UNQUOTE = "unquote";
        UNQUOTE_SPLICING = "unquote-splicing";
        ELSE = "else";
        ARROW = "=>";
        DOT = ".";
        STEP_RESULTS = "step_results";
        OUTPUT = "output";
    }
}

/// The name of the symbol with index `index`, if there is one.
pub fn name_at(index: usize) -> Option<&'static str> {
    INTERNER
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .names
        .get(index)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let a = Sym::new("alpha-test");
        let b = Sym::new("alpha-test");
        assert_eq!(a, b);
        assert_eq!(a.name(), "alpha-test");
        assert_ne!(a, Sym::new("beta-test"));
    }

    #[test]
    fn lookup_never_interns() {
        assert_eq!(Sym::lookup("lookup-test-absent"), None);
        assert_eq!(Sym::lookup("lookup-test-absent"), None);
        let present = Sym::new("lookup-test-present");
        assert_eq!(Sym::lookup("lookup-test-present"), Some(present));
    }
}
