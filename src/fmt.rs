//! The canonical layout of `.sexp` text (`tasklisp fmt`, the language server's
//! formatting). Line breaks are the author's; everything else is the formatter's:
//!
//! - each line is indented by the rules below, trailing whitespace goes, one space
//!   separates things on a line, and at most one blank line separates lines;
//! - nothing follows an opening bracket or precedes a closing one (closing brackets hang
//!   at the end of the last line; after a line comment they go on a line of their own);
//! - a quote (`'` `` ` `` `,` `,@`) and `#;` touch their datum;
//! - comments, strings and atoms are kept as written (less trailing whitespace);
//! - the text ends with one line break.
//!
//! Indentation of a line that starts inside `( … )` whose head is a symbol: 2 past the
//! bracket for forms with a body (`define`, `fn`, `let`, `deftask`, `with-…`, see
//! [`has_body`]) and when the head ends its line; otherwise under the first argument.
//! Inside `[ … ]`, `{ … }` and lists whose head is not a symbol: under the first element.

use crate::cst::{Node, NodeKind};
use crate::error::Result;

/// `text` formatted, or the syntax error that keeps it from being read (the text then
/// stays as it is). `name` names the text in the error.
pub fn format_source(name: &str, text: &str) -> Result<String> {
    crate::eval::reader::read_data(name, text)?;
    Ok(format_text(text))
}

/// `text` laid out canonically. Text that does not read is laid out as far as its
/// brackets allow; callers that must not change such text check it first
/// ([`format_source`]).
pub fn format_text(text: &str) -> String {
    // A byte order mark an editor wrote at the start stays, and is not part of the code.
    if let Some(code) = text.strip_prefix('\u{feff}') {
        return format!("\u{feff}{}", format_text(code));
    }
    let nodes = crate::cst::parse(text);
    let mut printer = Printer {
        text,
        out: String::with_capacity(text.len() + text.len() / 8),
        column: 0,
    };
    printer.lines(&nodes, None, |_| 0);
    let mut out = printer.out;
    out.truncate(out.trim_end().len());
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Heads whose forms have a body, indented 2 however the head line looks.
pub fn has_body(head: &str) -> bool {
    const BODY: &[&str] = &[
        "define",
        "defmacro",
        "deftask",
        "task",
        "deftest",
        "lambda",
        "fn",
        "let",
        "let*",
        "letrec",
        "letrec*",
        "when",
        "unless",
        "do",
        "begin",
        "catch",
        "conversation",
        "cond-output",
        "case",
        "dotimes",
        "while",
    ];
    BODY.contains(&head) || head.starts_with("with-") || head.starts_with("def")
}

struct Printer<'t> {
    text: &'t str,
    out: String,
    /// The column the output's last line ends at, in characters.
    column: usize,
}

impl Printer<'_> {
    /// Prints `nodes` one after another: on the line so far, or on a line of their own
    /// where the text breaks the line, indented as `indent` says given the column of the
    /// `argument`th node once printed. Returns whether the last is a line comment (which
    /// nothing may follow on its line).
    fn lines(
        &mut self,
        nodes: &[Node],
        argument: Option<usize>,
        indent: impl Fn(Option<usize>) -> usize,
    ) -> bool {
        let mut argument_column = None;
        let mut after_line_comment = false;
        for (i, node) in nodes.iter().enumerate() {
            if i > 0 && (node.newlines_before > 0 || after_line_comment) {
                self.newline(node.newlines_before >= 2, indent(argument_column));
            } else if i > 0 {
                self.push(" ");
            }
            if Some(i) == argument {
                argument_column = Some(self.column);
            }
            self.node(node);
            after_line_comment = node.kind == NodeKind::LineComment;
        }
        if after_line_comment {
            self.newline(false, indent(argument_column));
        }
        after_line_comment
    }

    fn newline(&mut self, blank: bool, indent: usize) {
        self.out.push_str(if blank { "\n\n" } else { "\n" });
        self.out.extend(std::iter::repeat_n(' ', indent));
        self.column = indent;
    }

    fn push(&mut self, text: &str) {
        match text.rfind('\n') {
            Some(at) => self.column = text.get(at + 1..).map_or(0, |t| t.chars().count()),
            None => self.column += text.chars().count(),
        }
        self.out.push_str(text);
    }

    fn node(&mut self, node: &Node) {
        match &node.kind {
            NodeKind::Seq {
                open,
                children,
                closed,
            } => self.seq(*open, children, *closed),
            NodeKind::Prefix { len, datum } => {
                let prefix = self.text.get(node.start..node.start + len).unwrap_or("");
                self.push(prefix);
                if let Some(datum) = datum {
                    self.node(datum);
                }
            }
            NodeKind::LineComment | NodeKind::BlockComment => {
                let text = node.text(self.text);
                let kept: Vec<&str> = text.split('\n').map(str::trim_end).collect();
                self.push(&kept.join("\n"));
            }
            NodeKind::Atom | NodeKind::Str | NodeKind::Stray => self.push(node.text(self.text)),
        }
    }

    fn seq(&mut self, open: u8, children: &[Node], closed: bool) {
        let open_column = self.column;
        let (opening, closing) = match open {
            b'(' => ("(", ")"),
            b'[' => ("[", "]"),
            _ => ("{", "}"),
        };
        self.push(opening);
        let head = children
            .iter()
            .find(|c| !c.is_comment())
            .filter(|h| h.kind == NodeKind::Atom)
            .map(|h| h.text(self.text));
        let symbol_head = open == b'(' && head.is_some_and(is_symbol);
        let body = symbol_head && head.is_some_and(has_body);
        let argument = first_argument_on_head_line(children);
        self.lines(
            children,
            argument,
            |argument_column| match argument_column {
                _ if !symbol_head => open_column + 1,
                Some(column) if !body => column,
                _ => open_column + 2,
            },
        );
        if closed {
            self.push(closing);
        }
    }
}

/// The index of a list's first argument when it starts on the line of the head (with no
/// comment between them).
fn first_argument_on_head_line(children: &[Node]) -> Option<usize> {
    let head = children.iter().position(|c| !c.is_comment())?;
    let argument = children.get(head + 1)?;
    (argument.newlines_before == 0 && !argument.is_comment()).then_some(head + 1)
}

/// Whether an atom's text is a symbol (not a number, keyword, boolean or nil).
fn is_symbol(atom: &str) -> bool {
    let unsigned = atom.strip_prefix(['-', '+']).unwrap_or(atom);
    !(atom.is_empty()
        || atom.starts_with([':', '"', '#'])
        || unsigned.starts_with(|c: char| c.is_ascii_digit())
        || matches!(atom, "nil" | "null" | "true" | "false"))
}

#[cfg(test)]
mod tests {
    use super::format_text;

    fn check(input: &str, want: &str) {
        assert_eq!(format_text(input), want, "formatting {input:?}");
        assert_eq!(format_text(want), want, "formatting {want:?} again");
    }

    #[test]
    fn a_byte_order_mark_stays_and_the_code_after_it_is_formatted() {
        check("\u{feff}(define   x 1)\n", "\u{feff}(define x 1)\n");
    }

    #[test]
    fn bodies_are_indented_two_calls_align_under_their_first_argument() {
        check(
            "(define (f x)\n(let ((a 1)\n(b 2))\n(if a\nb\nc)))",
            "(define (f x)\n  (let ((a 1)\n        (b 2))\n    (if a\n        b\n        c)))\n",
        );
        check("(str\n\"a\"\n\"b\")", "(str\n  \"a\"\n  \"b\")\n");
        check(
            "[1\n2 {\"a\" 1\n\"b\" 2}]\n('x\n'y)",
            "[1\n 2 {\"a\" 1\n    \"b\" 2}]\n('x\n 'y)\n",
        );
        check("(with-provider p\n(run))", "(with-provider p\n  (run))\n");
        check(
            "(task (text)\n:prompt \"{{text}}\")",
            "(task (text)\n  :prompt \"{{text}}\")\n",
        );
    }

    #[test]
    fn spaces_go_line_breaks_stay_blank_lines_shrink_to_one() {
        check(
            "\n\n(  a   b\n\n\n c  )  \n\n\n\n( d )\n\n",
            "(a b\n\n   c)\n\n(d)\n",
        );
        check("(a\n)", "(a)\n");
        check("' x `( ,@ y , z) #; w", "'x `(,@y ,z) #;w\n");
        check("", "");
    }

    #[test]
    fn comments_are_kept_and_nothing_follows_a_line_comment() {
        check(
            ";; head   \n(a ; why\n b) ; after\n#| block\n  kept |#\n",
            ";; head\n(a ; why\n  b) ; after\n#| block\n  kept |#\n",
        );
        check("(a\n b ; last\n )", "(a\n  b ; last\n  )\n");
        check("(f x\n   ; between\n   y)", "(f x\n   ; between\n   y)\n");
    }

    #[test]
    fn strings_are_kept_as_written() {
        check(
            "(prn \"two\n   lines\"   x\n y)",
            "(prn \"two\n   lines\" x\n     y)\n",
        );
    }
}
