//! The code in a model's answer, and the GBNF grammar of tasklisp's reader syntax that
//! makes a llama.cpp server answer with forms that read.

/// tasklisp's reader syntax as a GBNF grammar: one or more top-level lists (so prose,
/// a run of symbols, does not fit) of forms — lists, vectors, maps, quoted forms,
/// strings, numbers, symbols and keywords — with whitespace between the items of a
/// list, so no two atoms run together. Narrower than the reader (no comments, no `\u` escapes, no path
/// indexes), so whatever it admits reads.
pub const READER_GBNF: &str = r#"root ::= ws list (sep list)* ws
form ::= list | vector | map | quoted | string | number | symbol | keyword
list ::= "(" ws (form (sep form)*)? ws ")"
vector ::= "[" ws (form (sep form)*)? ws "]"
map ::= "{" ws (form (sep form)*)? ws "}"
quoted ::= ("'" | "`" | ",@" | ",") form
string ::= "\"" ([^"\\\x00-\x1f] | "\\" ["\\ntr0])* "\""
number ::= "-"? [0-9]{1,15} ("." [0-9]{1,15})?
symbol ::= [a-zA-Z_*/<>=!?&%$^~] symrest | [-+] (symstart symrest)?
symstart ::= [a-zA-Z_*/<>=!?&%$^~+-]
symrest ::= ([a-zA-Z0-9_*/<>=!?&%$^~+-] | "." [a-zA-Z_])*
keyword ::= ":" [a-zA-Z_] symrest
sep ::= [ \t\n]+
ws ::= [ \t\n]*
"#;

/// The code of an answer: the text of its fenced blocks, or the whole answer when it
/// has none.
pub fn code_of(answer: &str) -> String {
    let mut blocks = Vec::new();
    let mut rest = answer;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // The rest of the opening line names the language.
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                blocks.push(body[..end].trim());
                rest = &body[end + 3..];
            }
            None => {
                blocks.push(body.trim());
                break;
            }
        }
    }
    if blocks.is_empty() {
        return answer.trim().to_owned();
    }
    blocks.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_are_the_code_and_bare_forms_are_taken_whole() {
        assert_eq!(code_of("  (+ 1 2)\n"), "(+ 1 2)");
        assert_eq!(
            code_of("First:\n```lisp\n(define x 1)\n```\nthen\n```\n(final-answer x)\n```"),
            "(define x 1)\n(final-answer x)"
        );
        assert_eq!(code_of("```scheme\n(+ 1"), "(+ 1");
    }

    /// Samples of every rule of the grammar read as tasklisp.
    #[test]
    fn what_the_grammar_admits_reads() {
        for text in [
            "(define (f x) (* x 2))",
            "[1 -2 3.5] {\"a\" :b} '(a b) `(a ,b ,@c)",
            "(final-answer (+ 1 2))(print \"a\\n\\\"b\\\"\")",
            "(- 3 1) (+ x y) (set! a.b 1) (<= 1 2) (empty? [])",
        ] {
            assert!(
                crate::eval::reader::read_source("<grammar>", text).is_ok(),
                "{text}"
            );
        }
        assert!(READER_GBNF.lines().all(|line| line.contains("::=")));
    }
}
