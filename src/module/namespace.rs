//! `(import "m.sexp" :as m)`: the module's top-level names become `m/name`.
//!
//! The module's code is rewritten before it runs: every reference to one of its
//! top-level definitions (`define`, `deftask`, `defmacro`) is renamed, so its functions
//! and tasks keep finding each other, and nothing but `m/…` names reaches the global
//! environment. Quoted data is left alone. Names inside strings (`{{name}}` in a prompt)
//! and keyword arguments are not code and are not renamed.

use crate::eval::reader::{PathSpec, Syntax, SyntaxKind};
use crate::symbol::Sym;
use std::collections::HashSet;
use std::rc::Rc;

const DEFINING_FORMS: [&str; 3] = ["define", "deftask", "defmacro"];

/// The names the top-level forms of a module define, in order.
pub fn top_level_names(forms: &[Syntax]) -> Vec<String> {
    let mut names = Vec::new();
    for form in forms {
        let Some(items) = form.as_list() else {
            continue;
        };
        let is_definition = items
            .first()
            .and_then(Syntax::as_symbol)
            .is_some_and(|head| DEFINING_FORMS.contains(&head.name()));
        if !is_definition {
            continue;
        }
        let name = match items.get(1).map(|s| &s.kind) {
            Some(SyntaxKind::Symbol(name)) => Some(*name),
            Some(SyntaxKind::List(signature)) => signature.first().and_then(Syntax::as_symbol),
            _ => None,
        };
        if let Some(name) = name {
            if !names.iter().any(|n| n == name.name()) {
                names.push(name.name().to_owned());
            }
        }
    }
    names
}

/// The forms with every reference to `names` renamed to `alias/name`.
pub fn qualify(forms: Vec<Syntax>, names: &[String], alias: &str) -> Vec<Syntax> {
    let names: HashSet<&str> = names.iter().map(String::as_str).collect();
    forms
        .into_iter()
        .map(|form| rename(form, &names, alias))
        .collect()
}

fn rename(syntax: Syntax, names: &HashSet<&str>, alias: &str) -> Syntax {
    let qualified = |sym: Sym| Sym::new(&format!("{alias}/{}", sym.name()));
    let kind = match syntax.kind {
        SyntaxKind::Symbol(sym) if names.contains(sym.name()) => SyntaxKind::Symbol(qualified(sym)),
        SyntaxKind::Path(path) if names.contains(path.base.name()) => {
            SyntaxKind::Path(Rc::new(PathSpec {
                text: format!("{alias}/{}", path.text),
                base: qualified(path.base),
                steps: path.steps.clone(),
            }))
        }
        SyntaxKind::List(items) if is_quote(&items) => SyntaxKind::List(items),
        SyntaxKind::List(items) => SyntaxKind::List(rename_all(items, names, alias)),
        SyntaxKind::Vector(items) => SyntaxKind::Vector(rename_all(items, names, alias)),
        SyntaxKind::Map(items) => SyntaxKind::Map(rename_all(items, names, alias)),
        other => other,
    };
    Syntax::new(kind, syntax.span)
}

fn rename_all(items: Vec<Syntax>, names: &HashSet<&str>, alias: &str) -> Vec<Syntax> {
    items
        .into_iter()
        .map(|item| rename(item, names, alias))
        .collect()
}

fn is_quote(items: &[Syntax]) -> bool {
    items
        .first()
        .and_then(Syntax::as_symbol)
        .is_some_and(|s| s.name() == "quote")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::quote::syntax_to_value;
    use crate::eval::reader::read_source;
    use crate::value::write_string;

    #[test]
    fn renames_definitions_and_their_uses_but_not_quoted_data() {
        let forms = read_source(
            "<namespace-test>",
            "(define (helper x) (* x 2)) (deftask t (x) :prompt \"{{x}}\") (define y (helper cfg.a)) '(helper) (define cfg {})",
        )
        .unwrap();
        let names = top_level_names(&forms);
        assert_eq!(names, ["helper", "t", "y", "cfg"]);
        let printed: Vec<String> = qualify(forms, &names, "m")
            .iter()
            .map(|f| write_string(&syntax_to_value(f)))
            .collect();
        assert_eq!(printed[0], "(define (m/helper x) (* x 2))");
        assert_eq!(printed[1], "(deftask m/t (x) :prompt \"{{x}}\")");
        assert_eq!(printed[2], "(define m/y (m/helper m/cfg.a))");
        assert_eq!(printed[3], "(quote (helper))");
    }
}
