//! The `<case test="…">` language, compiled to an S-expression.
//!
//! A test that starts with `(` is read as an S-expression, unless it is plainly infix in
//! parentheses (`(a || b) && c`, see `is_s_expression`). Anything else is infix:
//!
//! ```text
//! test       := or
//! or         := and ( "||" and )*                     → (or a b …)
//! and        := equality ( "&&" equality )*           → (and a b …)
//! equality   := comparison [ ("==" | "!=") comparison ] → (= a b) / (not (= a b))
//! comparison := unary [ ("<" | "<=" | ">" | ">=") unary ] → (< a b) …
//! unary      := "!" unary | primary                     → (not x)
//! primary    := "(" test ")" | number | string | true | false | null | path
//! ```
//!
//! So `!` binds tightest, then comparisons, then `==`/`!=`, then `&&`, then `||` (as in C
//! and JavaScript). Comparisons and equalities do not chain: `a < b < c` is an error
//! rather than a comparison of a boolean. `==` is the language's `=`: numbers compare
//! numerically, everything else structurally (`equal?`). Strings are `"…"` or `'…'`.

use super::expr::read_one;
use super::text::Text;
use crate::error::{Error, Result};
use crate::eval::reader::{Syntax, SyntaxKind};
use crate::symbol::Sym;
use std::rc::Rc;

/// Parentheses nested deeper than this are refused.
const MAX_DEPTH: usize = 64;

/// Compiles a `test` attribute to the expression a `cond` clause tests.
pub fn compile_test(text: &Text) -> Result<Syntax> {
    let text = text.trim();
    let tokens = match tokenize(&text) {
        Ok(tokens) if !is_s_expression(&text, &tokens) => tokens,
        Ok(_) => return read_one(&text, "the test"),
        Err(_) if text.as_str().starts_with('(') => return read_one(&text, "the test"),
        Err(e) => return Err(e),
    };
    let mut parser = Parser {
        text: &text,
        tokens,
        pos: 0,
        depth: 0,
    };
    let syntax = parser.or()?;
    match parser.tokens.get(parser.pos) {
        None => Ok(syntax),
        Some(token) => Err(parser.error(
            format!("unexpected `{}` after a complete test", token.lexeme(&text)),
            token,
        )),
    }
}

/// A test that starts with `(` is an S-expression, unless it is infix in parentheses:
/// `(a || b) && c`, `(x)`, `((…`, `(!x…`, `("s" == x)`.
fn is_s_expression(text: &Text, tokens: &[Token]) -> bool {
    if !text.as_str().starts_with('(') {
        return false;
    }
    let kind = |i: usize| tokens.get(i).map(|t| t.kind);
    let infix_start = matches!(kind(1), Some(Kind::Open | Kind::Str | Kind::Op("!")));
    let infix_next =
        matches!(kind(2), Some(Kind::Close)) || matches!(kind(2), Some(Kind::Op(op)) if op != "!");
    !(infix_start || infix_next)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Operand,
    Str,
    Op(&'static str),
    Open,
    Close,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

impl Token {
    fn lexeme<'t>(&self, text: &'t Text) -> &'t str {
        text.as_str().get(self.start..self.end).unwrap_or("")
    }
}

const OPERATORS: [&str; 9] = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!"];

fn is_operand_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '+' | '.' | '[' | ']' | '?' | '/' | '*')
}

fn tokenize(text: &Text) -> Result<Vec<Token>> {
    let s = text.as_str();
    let mut tokens = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let rest = &s[start..];
        let token = |kind, len: usize| Token {
            kind,
            start,
            end: start + len,
        };
        let found = if c == '(' {
            token(Kind::Open, 1)
        } else if c == ')' {
            token(Kind::Close, 1)
        } else if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
            token(Kind::Op(op), op.len())
        } else if c == '"' || c == '\'' {
            token(
                Kind::Str,
                string_length(rest, c).ok_or_else(|| {
                    Error::validation("unclosed string in the test")
                        .with_span(text.span_of(start, s.len()))
                })?,
            )
        } else if is_operand_char(c) {
            let len = rest
                .find(|c: char| !is_operand_char(c))
                .unwrap_or(rest.len());
            token(Kind::Operand, len)
        } else {
            return Err(Error::validation(format!("unexpected `{c}` in the test"))
                .with_span(text.span_of(start, start + c.len_utf8())));
        };
        while chars.peek().is_some_and(|&(i, _)| i < found.end) {
            chars.next();
        }
        tokens.push(found);
    }
    Ok(tokens)
}

/// The length of the string literal at the start of `rest` (quote `q`), with `\` escapes.
fn string_length(rest: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            _ if c == q => return Some(i + 1),
            _ => {}
        }
    }
    None
}

struct Parser<'t> {
    text: &'t Text,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: String, token: &Token) -> Error {
        Error::validation(format!("invalid test: {message}"))
            .with_span(self.text.span_of(token.start, token.end))
    }

    fn at_end_error(&self, what: &str) -> Error {
        let end = self.text.as_str().len();
        Error::validation(format!("invalid test: expected {what} at the end"))
            .with_span(self.text.span_of(end, end))
    }

    fn peek_op(&self, ops: &[&str]) -> Option<(&'static str, Token)> {
        match self.tokens.get(self.pos) {
            Some(
                t @ Token {
                    kind: Kind::Op(op), ..
                },
            ) if ops.contains(op) => Some((op, *t)),
            _ => None,
        }
    }

    /// `a || b || c` and `a && b && c` flatten to one `or` / `and`.
    fn chain(
        &mut self,
        op: &str,
        head: &str,
        next: fn(&mut Self) -> Result<Syntax>,
    ) -> Result<Syntax> {
        let first = next(self)?;
        let mut operands = vec![first];
        while let Some((_, token)) = self.peek_op(&[op]) {
            self.pos += 1;
            operands.push(next(self).map_err(|e| self.missing_operand(e, &token))?);
        }
        if operands.len() == 1 {
            return Ok(operands.remove(0));
        }
        Ok(self.call(head, operands))
    }

    fn or(&mut self) -> Result<Syntax> {
        self.chain("||", "or", Self::and)
    }

    fn and(&mut self) -> Result<Syntax> {
        self.chain("&&", "and", Self::equality)
    }

    fn equality(&mut self) -> Result<Syntax> {
        self.binary(&["==", "!="], Self::comparison)
    }

    fn comparison(&mut self) -> Result<Syntax> {
        self.binary(&["<", "<=", ">", ">="], Self::unary)
    }

    /// One non-associative binary operator from `ops` between two `next`s.
    fn binary(&mut self, ops: &[&str], next: fn(&mut Self) -> Result<Syntax>) -> Result<Syntax> {
        let left = next(self)?;
        let Some((op, token)) = self.peek_op(ops) else {
            return Ok(left);
        };
        self.pos += 1;
        let right = next(self).map_err(|e| self.missing_operand(e, &token))?;
        if let Some((_, again)) = self.peek_op(ops) {
            return Err(self.error(
                format!("`{op}` does not chain; join comparisons with `&&`"),
                &again,
            ));
        }
        Ok(match op {
            "==" => self.call("=", vec![left, right]),
            "!=" => {
                let equal = self.call("=", vec![left, right]);
                self.call("not", vec![equal])
            }
            _ => self.call(op, vec![left, right]),
        })
    }

    fn unary(&mut self) -> Result<Syntax> {
        if let Some((_, token)) = self.peek_op(&["!"]) {
            self.pos += 1;
            let operand = self.unary().map_err(|e| self.missing_operand(e, &token))?;
            return Ok(self.call("not", vec![operand]));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Syntax> {
        let Some(token) = self.tokens.get(self.pos).copied() else {
            return Err(self.at_end_error("a value"));
        };
        self.pos += 1;
        match token.kind {
            Kind::Open => {
                if self.depth >= MAX_DEPTH {
                    return Err(self.error(
                        format!("parentheses nested deeper than {MAX_DEPTH} levels"),
                        &token,
                    ));
                }
                self.depth += 1;
                let inner = self.or()?;
                self.depth -= 1;
                match self.tokens.get(self.pos) {
                    Some(Token {
                        kind: Kind::Close, ..
                    }) => {
                        self.pos += 1;
                        Ok(inner)
                    }
                    Some(other) => Err(self.error(
                        format!("expected `)`, found `{}`", other.lexeme(self.text)),
                        other,
                    )),
                    None => Err(self.error("this `(` is never closed".into(), &token)),
                }
            }
            Kind::Str => Ok(self.string(&token)),
            Kind::Operand => self.operand(&token),
            Kind::Close | Kind::Op(_) => Err(self.error(
                format!("expected a value, found `{}`", token.lexeme(self.text)),
                &token,
            )),
        }
    }

    /// A path, symbol, number or `true`/`false`/`null`: what the reader makes of it.
    fn operand(&self, token: &Token) -> Result<Syntax> {
        let text = self.text.slice(token.start, token.end);
        let syntax = read_one(&text, "the test")?;
        match syntax.kind {
            SyntaxKind::Symbol(_)
            | SyntaxKind::Path(_)
            | SyntaxKind::Int(_)
            | SyntaxKind::Float(_)
            | SyntaxKind::Bool(_)
            | SyntaxKind::Nil => Ok(syntax),
            _ => Err(self.error(
                format!("`{}` is not a value", token.lexeme(self.text)),
                token,
            )),
        }
    }

    fn string(&self, token: &Token) -> Syntax {
        let lexeme = token.lexeme(self.text);
        let inner = lexeme.get(1..lexeme.len().saturating_sub(1)).unwrap_or("");
        let mut value = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                value.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some(other) => value.push(other),
                None => {}
            }
        }
        Syntax::new(
            SyntaxKind::Str(Rc::new(value)),
            self.text.span_of(token.start, token.end),
        )
    }

    fn missing_operand(&self, error: Error, operator: &Token) -> Error {
        if self.pos >= self.tokens.len() && error.message().contains("at the end") {
            return self.error(
                format!("`{}` needs a value after it", operator.lexeme(self.text)),
                operator,
            );
        }
        error
    }

    fn call(&self, head: &str, operands: Vec<Syntax>) -> Syntax {
        let span = match (operands.first(), operands.last()) {
            (Some(first), Some(last)) => first.span.to(last.span),
            _ => self.text.span(),
        };
        let mut items = Vec::with_capacity(operands.len() + 1);
        items.push(Syntax::new(SyntaxKind::Symbol(Sym::new(head)), span));
        items.extend(operands);
        Syntax::new(SyntaxKind::List(items), span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::eval::quote::syntax_to_value;
    use crate::source::add_source;
    use crate::value::write_string;

    fn text(test: &str) -> Text {
        let mut text = Text::empty(add_source("<infix-test>", test), 0);
        text.push_verbatim(test, 0);
        text
    }

    fn compiled(test: &str) -> String {
        write_string(&syntax_to_value(&compile_test(&text(test)).unwrap()))
    }

    fn error(test: &str) -> Error {
        compile_test(&text(test)).unwrap_err()
    }

    #[test]
    fn operators_and_literals() {
        assert_eq!(compiled("output.urgent == true"), "(= output.urgent true)");
        assert_eq!(compiled("output.score != 3"), "(not (= output.score 3))");
        assert_eq!(
            compiled("a < 1 || b <= 2.5 || c > -3 || d >= 1e3"),
            "(or (< a 1) (<= b 2.5) (> c -3) (>= d 1000.0))"
        );
        assert_eq!(
            compiled(r#"x == 'it\'s' && y == "q""#),
            r#"(and (= x "it's") (= y "q"))"#
        );
    }

    #[test]
    fn precedence_is_not_then_comparison_then_equality_then_and_then_or() {
        assert_eq!(compiled("a || b && c"), "(or a (and b c))");
        assert_eq!(compiled("!a == b"), "(= (not a) b)");
        assert_eq!(compiled("a < b == c > d"), "(= (< a b) (> c d))");
        assert_eq!(compiled("(a || b) && !(c)"), "(and (or a b) (not c))");
        assert_eq!(compiled("!!x"), "(not (not x))");
        assert_eq!(
            compiled("x == null || y == false"),
            "(or (= x nil) (= y false))"
        );
        assert_eq!(
            compiled("step_results[0].parsedContent.items[1].ok"),
            "step_results[0].parsedContent.items[1].ok"
        );
    }

    #[test]
    fn s_expression_tests_are_read_as_they_are() {
        assert_eq!(compiled("  (> output.score 3)"), "(> output.score 3)");
        assert_eq!(compiled("(and (= x 1) (not y))"), "(and (= x 1) (not y))");
        assert_eq!(compiled("(x) && (y == 2)"), "(and x (= y 2))");
        assert_eq!(compiled("(!x)"), "(not x)");
        assert_eq!(compiled("(\"a\" == x)"), "(= \"a\" x)");
        assert!(error("(> x").message().contains("unclosed"));
    }

    #[test]
    fn errors_point_at_the_offending_token() {
        let cases = [
            ("a == ", "needs a value", 2),
            ("a < b < c", "does not chain", 6),
            ("a # b", "unexpected `#`", 2),
            ("(a || b", "never closed", 0),
            ("a b", "after a complete test", 2),
            ("'abc", "unclosed string", 0),
            ("a && && b", "expected a value", 5),
            ("", "expected a value", 0),
        ];
        for (test, words, column) in cases {
            let e = error(test);
            assert_eq!(e.kind(), ErrorKind::Validation, "{test}");
            assert!(e.message().contains(words), "{test}: {}", e.message());
            assert_eq!(e.span().unwrap().start as usize, column, "{test}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let test = format!("x && {}a{}", "(".repeat(200), ")".repeat(200));
        assert!(error(&test).message().contains("deeper"));
    }
}
