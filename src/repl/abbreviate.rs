//! The REPL prints results in canonical form, but a 10,000-element list or a deep
//! TaskResult would bury the prompt: long lists and maps, deep nesting and very long
//! strings are elided with `…`, and `:show` prints the whole value.

use crate::value::{write_string, Value};

/// Elements shown per list or map.
const MAX_ITEMS: usize = 20;
/// Containers nested deeper than this print as `(…)` or `{…}`.
const MAX_DEPTH: usize = 6;
/// Elements shown in all, however they are nested.
const MAX_TOTAL: usize = 400;
/// Characters shown of one string.
const MAX_STRING: usize = 2_000;

/// The canonical form of `value`, abbreviated; the flag says whether anything was elided.
pub fn abbreviate(value: &Value) -> (String, bool) {
    let mut printer = Printer {
        out: String::new(),
        budget: MAX_TOTAL,
        elided: false,
    };
    printer.value(value, 0);
    (printer.out, printer.elided)
}

struct Printer {
    out: String,
    budget: usize,
    elided: bool,
}

impl Printer {
    fn value(&mut self, value: &Value, depth: usize) {
        self.budget = self.budget.saturating_sub(1);
        match value {
            Value::List(..) => {
                let items = value.as_list().unwrap_or_default();
                self.container(
                    depth,
                    ('(', ')'),
                    items.len(),
                    items.iter(),
                    |p, item, d| p.value(&item, d),
                );
            }
            Value::Map(map) => {
                let entries = map.entries.iter();
                self.container(
                    depth,
                    ('{', '}'),
                    map.entries.len(),
                    entries,
                    |p, (k, v), d| {
                        p.out.push_str(&write_string(&Value::str(&**k)));
                        p.out.push(' ');
                        p.value(v, d);
                    },
                );
            }
            Value::Str(s) if s.chars().count() > MAX_STRING => {
                let kept: String = s.chars().take(MAX_STRING).collect();
                self.out.push_str(&write_string(&Value::str(kept)));
                self.out.pop();
                self.out.push_str("…\"");
                self.elided = true;
            }
            atom => self.out.push_str(&write_string(atom)),
        }
    }

    /// Prints the items between `open` and `close`, eliding past the limits.
    fn container<T>(
        &mut self,
        depth: usize,
        (open, close): (char, char),
        len: usize,
        items: impl Iterator<Item = T>,
        mut print_item: impl FnMut(&mut Printer, T, usize),
    ) {
        self.out.push(open);
        if len > 0 && depth >= MAX_DEPTH {
            self.out.push('…');
            self.elided = true;
        } else {
            for (i, item) in items.enumerate() {
                if i > 0 {
                    self.out.push(' ');
                }
                if i >= MAX_ITEMS || self.budget == 0 {
                    self.out.push('…');
                    self.elided = true;
                    break;
                }
                print_item(self, item, depth + 1);
            }
        }
        self.out.push(close);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Entries;
    use std::rc::Rc;

    fn ints(n: i64) -> Value {
        Value::list((0..n).map(Value::Int).collect())
    }

    #[test]
    fn small_values_print_in_canonical_form() {
        let value = Value::list(vec![Value::Int(1), Value::str("a\"b"), Value::Nil]);
        assert_eq!(abbreviate(&value), (write_string(&value), false));
    }

    #[test]
    fn long_lists_are_elided_after_the_limit() {
        let (text, elided) = abbreviate(&ints(1000));
        assert!(elided);
        assert!(text.starts_with("(0 1 2 "), "{text}");
        assert!(text.ends_with(" 19 …)"), "{text}");
    }

    #[test]
    fn deep_nesting_is_elided() {
        let mut value = Value::Int(7);
        for _ in 0..10 {
            let mut entries = Entries::new();
            entries.insert(Rc::from("k"), value);
            value = Value::map(entries);
        }
        let (text, elided) = abbreviate(&value);
        assert!(elided);
        assert_eq!(text, r#"{"k" {"k" {"k" {"k" {"k" {"k" {…}}}}}}}"#);
    }

    #[test]
    fn the_total_budget_bounds_wide_nested_values() {
        let value = Value::list((0..50).map(|_| ints(50)).collect());
        let (text, elided) = abbreviate(&value);
        assert!(elided);
        assert!(text.len() < 4 * MAX_TOTAL, "{} characters", text.len());
    }

    #[test]
    fn long_strings_keep_their_quotes() {
        let (text, elided) = abbreviate(&Value::str("x".repeat(5000)));
        assert!(elided);
        assert!(text.ends_with("x…\""), "{}", &text[text.len() - 5..]);
    }

    #[test]
    fn empty_containers_at_any_depth_print_plainly() {
        let mut value = Value::empty_list();
        for _ in 0..10 {
            value = Value::list(vec![value]);
        }
        let (text, _) = abbreviate(&value);
        assert!(text.contains('…'));
        assert_eq!(abbreviate(&Value::empty_list()), ("()".to_owned(), false));
    }
}
