//! "Did you mean …?": the nearest name in scope to one that is not, for unbound symbols,
//! unknown named arguments, unknown task references and unknown REPL commands.

/// Names other Lisps use for what tasklisp spells differently; edit distance would not
/// find these (`string-append` is far from `str`).
const OTHER_LISPS: &[(&str, &str)] = &[
    ("string-append", "str"),
    ("concat", "str"),
    ("list-ref", "nth"),
    ("vector-ref", "nth"),
    ("list-tail", "drop"),
    ("displayln", "println"),
    ("print-line", "println"),
    ("puts", "println"),
    ("printf", "format"),
    ("len", "length"),
    ("hash-ref", "get"),
    ("hash-set", "assoc"),
    ("fold", "reduce"),
    ("foldl", "reduce"),
    ("fold-left", "reduce"),
    ("string=?", "equal?"),
    ("eqv?", "eq?"),
    ("defun", "define"),
    ("defn", "define"),
    ("def", "define"),
    ("progn", "begin"),
    ("do-list", "for-each"),
    ("dolist", "for-each"),
];

/// The name in `candidates` that `name` most likely meant, if one is close enough: a
/// known spelling from another Lisp first, then the same name in other case, then the nearest by edit distance (at most a
/// third of the name's length, and at least one edit allowed).
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if let Some((_, ours)) = OTHER_LISPS.iter().find(|(theirs, _)| *theirs == name) {
        if candidates.contains(ours) || is_special_form(ours) {
            return Some((*ours).to_owned());
        }
    }
    // `OpenAI`, `Car`: the same name in other case is what was meant, however short.
    if let Some(same) = candidates
        .iter()
        .find(|c| **c != name && c.eq_ignore_ascii_case(name))
    {
        return Some((*same).to_owned());
    }
    let length = name.chars().count();
    let allowed = (length / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        // The distance is at least the difference in length: most names are skipped
        // without computing it (an unbound symbol under `try` in a loop stays cheap).
        .filter(|c| c.chars().count().abs_diff(length) <= allowed)
        // Transpositions count as one edit (`lenght`); the restricted form (optimal
        // string alignment) needs no table of the alphabet, unlike the full one, so a
        // name compared with every global costs a few microseconds.
        .map(|c| (strsim::osa_distance(name, c), c))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_owned())
}

fn is_special_form(name: &str) -> bool {
    matches!(name, "define" | "begin")
}

/// `did you mean `x`?` for an error's help line, or `None`.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    nearest(name, candidates).map(|n| format!("did you mean `{n}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_nearest_name() {
        let names = ["length", "list", "lambda", "reverse"];
        assert_eq!(nearest("lenght", names).as_deref(), Some("length"));
        assert_eq!(nearest("revrse", names).as_deref(), Some("reverse"));
        assert_eq!(nearest("xyzzy", names), None);
    }

    #[test]
    fn names_from_other_lisps_map_to_ours() {
        let names = ["str", "nth", "println"];
        assert_eq!(nearest("string-append", names).as_deref(), Some("str"));
        assert_eq!(nearest("list-ref", names).as_deref(), Some("nth"));
        assert_eq!(nearest("displayln", names).as_deref(), Some("println"));
        assert_eq!(nearest("defun", names).as_deref(), Some("define"));
    }

    #[test]
    fn short_names_allow_one_edit() {
        assert_eq!(nearest("cr", ["car", "cdr"]).as_deref(), Some("car"));
        assert_eq!(nearest("ab", ["xyz"]), None);
    }

    #[test]
    fn a_name_in_other_case_is_what_was_meant() {
        let names = ["echo", "openai", "ollama"];
        assert_eq!(nearest("OpenAI", names).as_deref(), Some("openai"));
        assert_eq!(nearest("ECHO", names).as_deref(), Some("echo"));
    }
}
