//! The reader: source text to syntax (data with spans).
//!
//! It is iterative (an explicit stack of open brackets), so no nesting of the input can
//! overflow the Rust stack; nesting past `MAX_NESTING` is a `SYNTAX_ERROR`. Running out of
//! text inside a form is an "incomplete" syntax error, which the REPL uses to ask for
//! another line. Path symbols (`a.b[0].c`) are split into steps here, once.

use crate::error::{Error, Result};
use crate::source::{register, Origin, SourceFile, SourceId, Span};
use crate::symbol::{well_known, Sym};
use crate::value::Value;
use std::rc::Rc;

/// Brackets nested deeper than this are refused.
pub const MAX_NESTING: usize = 10_000;

#[derive(Clone, Debug)]
pub struct Syntax {
    pub kind: SyntaxKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum SyntaxKind {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    Symbol(Sym),
    Keyword(Sym),
    Path(Rc<PathSpec>),
    /// `( … )`: a call, special form or quoted list.
    List(Vec<Syntax>),
    /// `[ … ]`: a list literal whose elements are evaluated.
    Vector(Vec<Syntax>),
    /// `{ … }`: keys and values alternating.
    Map(Vec<Syntax>),
    /// A value spliced into code by a macro expansion (a procedure, a map…).
    Value(Value),
}

/// A path symbol, parsed once: a base name then `.key` and `[index]` steps.
#[derive(Debug)]
pub struct PathSpec {
    pub text: String,
    pub base: Sym,
    pub steps: Vec<PathStep>,
}

#[derive(Debug, Clone)]
pub enum PathStep {
    Key(Rc<str>),
    Index(i64),
}

impl Syntax {
    pub fn new(kind: SyntaxKind, span: Span) -> Syntax {
        Syntax { kind, span }
    }

    pub fn as_symbol(&self) -> Option<Sym> {
        match self.kind {
            SyntaxKind::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_keyword(&self) -> Option<Sym> {
        match self.kind {
            SyntaxKind::Keyword(k) => Some(k),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Syntax]> {
        match &self.kind {
            SyntaxKind::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Registers `text` as a source named `name` and reads every datum in it.
pub fn read_source(name: &str, text: &str) -> Result<Vec<Syntax>> {
    read_source_as(Origin::Text, name, text)
}

/// [`read_source`] for a text of another origin (a file, the prelude), which the
/// registry keeps under that origin's budget.
pub fn read_source_as(origin: Origin, name: &str, text: &str) -> Result<Vec<Syntax>> {
    let id = register(origin, name, text);
    read_all(text, id)
}

/// Whether the text read is code, whose names are interned, or data, whose names are
/// interned only if they are already (see `crate::symbol`).
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    Code,
    Data,
}

/// Reads data (`read`) without registering the text or interning new names: a syntax
/// error keeps the text to show, and a symbol or keyword nothing interned is a data
/// symbol (`SyntaxKind::Value`); both are freed with the error or the data. So a program
/// that reads many texts (model output, in a loop) runs in bounded memory. A path
/// (`a.b[0]`) is checked as in code and read as one symbol.
pub fn read_data(name: &str, text: &str) -> Result<Vec<Syntax>> {
    read_with(text, SourceId::UNREGISTERED, Reading::Data).map_err(|e| match e.span() {
        Some(span) => e.with_span_in(
            span,
            SourceFile {
                name: name.to_owned(),
                text: text.into(),
            },
        ),
        None => e,
    })
}

/// Reads every datum of `text` as code; any syntax error means nothing is returned.
pub fn read_all(text: &str, source: SourceId) -> Result<Vec<Syntax>> {
    read_with(text, source, Reading::Code)
}

fn read_with(text: &str, source: SourceId, reading: Reading) -> Result<Vec<Syntax>> {
    Reader {
        text,
        bytes: text.as_bytes(),
        // A byte order mark some editors write at the start is not part of the code.
        pos: if text.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        },
        source,
        reading,
    }
    .read_all()
}

#[derive(Clone, Copy, PartialEq)]
enum Open {
    Paren,
    Bracket,
    Brace,
}

impl Open {
    fn close(self) -> u8 {
        match self {
            Open::Paren => b')',
            Open::Bracket => b']',
            Open::Brace => b'}',
        }
    }
}

/// What a finished datum goes into: an open bracket, or a pending prefix.
enum Frame {
    Seq {
        open: Open,
        start: usize,
        items: Vec<Syntax>,
    },
    /// `'`, `` ` ``, `,`, `,@`: wraps the next datum as `(quote datum)` and so on.
    Prefix { sym: Sym, start: usize },
    /// `#;`: the next datum is read and dropped.
    Discard,
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    source: SourceId,
    reading: Reading,
}

/// Whether a byte ends an atom.
pub(crate) fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';' | b'\'' | b'`' | b','
        )
}

impl<'a> Reader<'a> {
    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.source, start, end)
    }

    fn read_all(mut self) -> Result<Vec<Syntax>> {
        let mut top = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            self.skip_atmosphere(&stack)?;
            let Some(&b) = self.bytes.get(self.pos) else {
                return match stack.last() {
                    None => Ok(top),
                    Some(frame) => Err(self.unfinished(frame)),
                };
            };
            let start = self.pos;
            let datum = match b {
                b'(' | b'[' | b'{' => {
                    if stack.len() >= MAX_NESTING {
                        return Err(Error::syntax(
                            format!("nesting deeper than {MAX_NESTING} levels"),
                            self.span(start, start + 1),
                        ));
                    }
                    let open = match b {
                        b'(' => Open::Paren,
                        b'[' => Open::Bracket,
                        _ => Open::Brace,
                    };
                    self.pos += 1;
                    stack.push(Frame::Seq {
                        open,
                        start,
                        items: Vec::new(),
                    });
                    continue;
                }
                b')' | b']' | b'}' => {
                    self.pos += 1;
                    self.close(stack.pop(), b, start)?
                }
                b'\'' | b'`' | b',' => {
                    self.pos += 1;
                    let sym = match b {
                        b'\'' => *well_known::QUOTE,
                        b'`' => *well_known::QUASIQUOTE,
                        _ if self.bytes.get(self.pos) == Some(&b'@') => {
                            self.pos += 1;
                            *well_known::UNQUOTE_SPLICING
                        }
                        _ => *well_known::UNQUOTE,
                    };
                    if stack.len() >= MAX_NESTING {
                        return Err(Error::syntax(
                            format!("nesting deeper than {MAX_NESTING} levels"),
                            self.span(start, self.pos),
                        ));
                    }
                    stack.push(Frame::Prefix { sym, start });
                    continue;
                }
                b'"' => self.read_string()?,
                b'#' if self.bytes.get(self.pos + 1) == Some(&b';') => {
                    self.pos += 2;
                    stack.push(Frame::Discard);
                    continue;
                }
                _ => self.read_atom()?,
            };
            self.hand_over(datum, &mut stack, &mut top);
        }
    }

    /// The sequence a closing bracket `b` (at `start`) ends, from the frame it closes.
    fn close(&self, popped: Option<Frame>, b: u8, start: usize) -> Result<Syntax> {
        match popped {
            Some(Frame::Seq {
                open,
                start: s,
                items,
            }) if open.close() == b => {
                let span = self.span(s, self.pos);
                match open {
                    Open::Paren => Ok(Syntax::new(SyntaxKind::List(items), span)),
                    Open::Bracket => Ok(Syntax::new(SyntaxKind::Vector(items), span)),
                    Open::Brace if items.len() % 2 != 0 => Err(Error::syntax(
                        "a map literal needs an even number of forms (key value …)",
                        span,
                    )),
                    Open::Brace => Ok(Syntax::new(SyntaxKind::Map(items), span)),
                }
            }
            Some(Frame::Seq { open, start: s, .. }) => Err(Error::syntax(
                format!(
                    "`{}` does not close the `{}` opened at byte {s}",
                    b as char,
                    match open {
                        Open::Paren => '(',
                        Open::Bracket => '[',
                        Open::Brace => '{',
                    }
                ),
                self.span(start, self.pos),
            )),
            Some(_) | None => Err(Error::syntax(
                format!("unexpected `{}`", b as char),
                self.span(start, self.pos),
            )),
        }
    }

    /// Hands a datum to whatever is waiting for it, unwinding prefixes.
    fn hand_over(&self, datum: Syntax, stack: &mut Vec<Frame>, top: &mut Vec<Syntax>) {
        let mut datum = Some(datum);
        while let Some(d) = datum.take() {
            match stack.last_mut() {
                None => top.push(d),
                Some(Frame::Seq { items, .. }) => items.push(d),
                Some(Frame::Prefix { sym, start }) => {
                    let (sym, s) = (*sym, *start);
                    stack.pop();
                    let span = self.span(s, d.span.end());
                    let head = Syntax::new(SyntaxKind::Symbol(sym), self.span(s, s + 1));
                    datum = Some(Syntax::new(SyntaxKind::List(vec![head, d]), span));
                }
                Some(Frame::Discard) => {
                    stack.pop();
                }
            }
        }
    }

    fn unfinished(&self, frame: &Frame) -> Error {
        let end = self.bytes.len();
        match frame {
            Frame::Seq { open, start, .. } => {
                let c = match open {
                    Open::Paren => '(',
                    Open::Bracket => '[',
                    Open::Brace => '{',
                };
                Error::incomplete(format!("unclosed `{c}`"), self.span(*start, start + 1))
            }
            Frame::Prefix { start, .. } => Error::incomplete(
                "a quote with nothing after it",
                self.span(*start, start + 1),
            ),
            Frame::Discard => Error::incomplete("`#;` with nothing after it", self.span(end, end)),
        }
    }

    /// Skips whitespace and comments.
    fn skip_atmosphere(&mut self, stack: &[Frame]) -> Result<()> {
        loop {
            match self.bytes.get(self.pos) {
                Some(b) if b.is_ascii_whitespace() => self.pos += 1,
                Some(b';') => {
                    while let Some(&b) = self.bytes.get(self.pos) {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(b'#') if self.bytes.get(self.pos + 1) == Some(&b'|') => {
                    let start = self.pos;
                    let _ = stack;
                    self.pos = block_comment_end(self.bytes, start).ok_or_else(|| {
                        Error::incomplete(
                            "unclosed block comment `#|`",
                            self.span(start, start + 2),
                        )
                    })?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn read_string(&mut self) -> Result<Syntax> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(Error::incomplete(
                    "unclosed string",
                    self.span(start, start + 1),
                ));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => break,
                '\\' => {
                    let esc_start = self.pos - 1;
                    let Some(e) = self.text[self.pos..].chars().next() else {
                        return Err(Error::incomplete(
                            "unclosed string",
                            self.span(start, start + 1),
                        ));
                    };
                    self.pos += e.len_utf8();
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '0' => out.push('\0'),
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        'u' => out.push(self.read_unicode_escape(esc_start)?),
                        other => {
                            return Err(Error::syntax(
                                format!("unknown escape `\\{other}` in string"),
                                self.span(esc_start, self.pos),
                            ))
                        }
                    }
                }
                c => out.push(c),
            }
        }
        Ok(Syntax::new(
            SyntaxKind::Str(Rc::new(out)),
            self.span(start, self.pos),
        ))
    }

    /// `\u{e9}` (after the `u`).
    fn read_unicode_escape(&mut self, esc_start: usize) -> Result<char> {
        let bad =
            |r: &Self| Error::syntax("a unicode escape is `\\u{hex}`", r.span(esc_start, r.pos));
        if self.bytes.get(self.pos) != Some(&b'{') {
            return Err(bad(self));
        }
        let digits_start = self.pos + 1;
        let Some(close) = self.text[digits_start..].find('}') else {
            return Err(bad(self));
        };
        let digits = &self.text[digits_start..digits_start + close];
        self.pos = digits_start + close + 1;
        if digits.is_empty() || digits.len() > 6 {
            return Err(bad(self));
        }
        u32::from_str_radix(digits, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| {
                Error::syntax(
                    format!("`\\u{{{digits}}}` is not a Unicode scalar value"),
                    self.span(esc_start, self.pos),
                )
            })
    }

    fn read_atom(&mut self) -> Result<Syntax> {
        let start = self.pos;
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b'[' && self.pos > start {
                // `xs[0]`: a bracket glued to a symbol is part of a path.
                let rest = self.bytes.get(self.pos..).unwrap_or_default();
                match rest.iter().position(|&c| c == b']') {
                    Some(off) => self.pos += off + 1,
                    // The text ends inside the index: the REPL asks for more.
                    None => {
                        return Err(Error::incomplete(
                            "unclosed `[` in path",
                            self.span(self.pos, self.pos + 1),
                        ))
                    }
                }
                continue;
            }
            if is_delimiter(b) {
                break;
            }
            self.pos += 1;
        }
        // Never split a UTF-8 sequence: delimiters are ASCII, so `pos` is a boundary.
        let token = &self.text[start..self.pos];
        let span = self.span(start, self.pos);
        if let Some(c) = token.chars().find(|c| c.is_control()) {
            return Err(Error::syntax(format!("unexpected character {:?}", c), span));
        }
        atom(token, span, self.reading).map(|kind| Syntax::new(kind, span))
    }
}

/// The end of the (nested) block comment `#| … |#` that starts at `start`, or `None`
/// when the text ends inside it.
pub(crate) fn block_comment_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut pos = start + 2;
    let mut depth = 1usize;
    while depth > 0 {
        match (bytes.get(pos)?, bytes.get(pos + 1)) {
            (b'|', Some(b'#')) => {
                depth -= 1;
                pos += 2;
            }
            (b'#', Some(b'|')) => {
                depth += 1;
                pos += 2;
            }
            _ => pos += 1,
        }
    }
    Some(pos)
}

fn atom(token: &str, span: Span, reading: Reading) -> Result<SyntaxKind> {
    match token {
        "nil" | "null" => return Ok(SyntaxKind::Nil),
        "true" | "#t" => return Ok(SyntaxKind::Bool(true)),
        "false" | "#f" => return Ok(SyntaxKind::Bool(false)),
        _ => {}
    }
    if let Some(number) = number(token, span)? {
        return Ok(number);
    }
    if let Some(name) = token.strip_prefix(':') {
        if name.is_empty() {
            return Err(Error::syntax("a keyword needs a name after `:`", span));
        }
        return Ok(match reading {
            Reading::Code => SyntaxKind::Keyword(Sym::new(name)),
            Reading::Data => SyntaxKind::Value(Value::data_keyword(name)),
        });
    }
    if token.starts_with('#') {
        return Err(Error::syntax(format!("unknown syntax `{token}`"), span));
    }
    match reading {
        Reading::Code if is_path(token) => {
            parse_path(token, span).map(|p| SyntaxKind::Path(Rc::new(p)))
        }
        Reading::Code => Ok(SyntaxKind::Symbol(Sym::new(token))),
        Reading::Data => {
            if is_path(token) {
                parse_steps(token, split_base(token).1, span)?;
            }
            Ok(SyntaxKind::Value(Value::data_symbol(token)))
        }
    }
}

fn number(token: &str, span: Span) -> Result<Option<SyntaxKind>> {
    let unsigned = token.strip_prefix(['-', '+']).unwrap_or(token);
    let starts_numeric = unsigned.starts_with(|c: char| c.is_ascii_digit())
        || (unsigned.starts_with('.') && unsigned[1..].starts_with(|c: char| c.is_ascii_digit()));
    if !starts_numeric {
        return Ok(None);
    }
    if unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return match token.parse::<i64>() {
            Ok(i) => Ok(Some(SyntaxKind::Int(i))),
            Err(_) => Err(Error::syntax(
                format!("integer literal {token} is outside the 64-bit range"),
                span,
            )),
        };
    }
    let float_chars = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    match token.parse::<f64>() {
        Ok(f) if float_chars => Ok(Some(SyntaxKind::Float(f))),
        _ if unsigned.contains(['.', '[']) && !float_chars => Ok(None),
        _ => Err(Error::syntax(format!("invalid number `{token}`"), span)),
    }
}

/// What a symbol's text means in code: a path symbol or a plain one (for macro output).
pub fn symbol_kind(text: &str, span: Span) -> Option<SyntaxKind> {
    if is_path(text) {
        parse_path(text, span)
            .ok()
            .map(|p| SyntaxKind::Path(Rc::new(p)))
    } else {
        None
    }
}

/// A path has a base name then at least one `.` or `[` (the first character, which may
/// be multibyte, is never a step).
fn is_path(token: &str) -> bool {
    let mut chars = token.chars();
    chars.next().is_some_and(|first| first != '.') && chars.as_str().contains(['.', '['])
}

fn parse_path(token: &str, span: Span) -> Result<PathSpec> {
    let (base, steps) = split_base(token);
    Ok(PathSpec {
        text: token.to_owned(),
        base: Sym::new(base),
        steps: parse_steps(token, steps, span)?,
    })
}

/// A path's base name and the text of its steps.
fn split_base(token: &str) -> (&str, &str) {
    token.split_at(token.find(['.', '[']).unwrap_or(token.len()))
}

/// The `.key` and `[index]` steps of `rest`, the part of `token` after its base name.
fn parse_steps(token: &str, mut rest: &str, span: Span) -> Result<Vec<PathStep>> {
    let bad = |why: &str| Error::syntax(format!("invalid path `{token}`: {why}"), span);
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return Err(bad("empty property name"));
            }
            steps.push(PathStep::Key(Rc::from(&after[..end])));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(|| bad("unclosed `[`"))?;
            let index = after[..end]
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("an index is a whole number, as in `xs[0]`"))?;
            steps.push(PathStep::Index(index));
            rest = &after[end + 1..];
        } else {
            return Err(bad("expected `.name` or `[index]`"));
        }
    }
    Ok(steps)
}

/// Parses the text of a path with no base name, for `(path v "a.b[0]")`: `a.b[0]`,
/// `.a` and `[0].a` are all steps.
pub fn parse_path_text(text: &str, span: Span) -> Result<Vec<PathStep>> {
    if text.starts_with(['.', '[']) || text.is_empty() {
        parse_steps(text, text, span)
    } else {
        parse_steps(text, &format!(".{text}"), span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Syntax>> {
        read_source("<test>", text)
    }

    fn kinds(text: &str) -> Vec<SyntaxKind> {
        read(text)
            .expect("reads")
            .into_iter()
            .map(|s| s.kind)
            .collect()
    }

    #[test]
    fn a_leading_byte_order_mark_is_skipped() {
        let forms = read("\u{feff}(prn 1)").expect("reads");
        let head = forms[0].as_list().and_then(|items| items[0].as_symbol());
        assert_eq!(head.map(|s| s.name()), Some("prn"));
        assert_eq!(forms[0].span.start, 3, "spans stay offsets in the text");
        assert!(matches!(kinds("\u{feff}x")[0], SyntaxKind::Symbol(s) if s.name() == "x"));
        // Only at the start: elsewhere it is a character of a name like any other.
        assert!(
            matches!(kinds("x \u{feff}y")[1], SyntaxKind::Symbol(s) if s.name() == "\u{feff}y")
        );
    }

    #[test]
    fn atoms() {
        let k =
            kinds("42 -7 3.5 -0.25 1e3 \"a\\n\" true #f nil null :kw foo set! + a/b list->string");
        assert!(matches!(k[0], SyntaxKind::Int(42)));
        assert!(matches!(k[1], SyntaxKind::Int(-7)));
        assert!(matches!(k[2], SyntaxKind::Float(f) if f == 3.5));
        assert!(matches!(k[3], SyntaxKind::Float(f) if f == -0.25));
        assert!(matches!(k[4], SyntaxKind::Float(f) if f == 1000.0));
        assert!(matches!(&k[5], SyntaxKind::Str(s) if s.as_str() == "a\n"));
        assert!(matches!(k[6], SyntaxKind::Bool(true)));
        assert!(matches!(k[7], SyntaxKind::Bool(false)));
        assert!(matches!(k[8], SyntaxKind::Nil));
        assert!(matches!(k[9], SyntaxKind::Nil));
        assert!(matches!(k[10], SyntaxKind::Keyword(s) if s.name() == "kw"));
        for (i, name) in [
            (11, "foo"),
            (12, "set!"),
            (13, "+"),
            (14, "a/b"),
            (15, "list->string"),
        ] {
            assert!(
                matches!(k[i], SyntaxKind::Symbol(s) if s.name() == name),
                "{name}"
            );
        }
    }

    #[test]
    fn paths_are_split_once() {
        let k = kinds("step_results[0].parsedContent.items[2].name xs[0]");
        let SyntaxKind::Path(p) = &k[0] else {
            panic!("not a path")
        };
        assert_eq!(p.base.name(), "step_results");
        assert_eq!(p.steps.len(), 5);
        assert!(matches!(p.steps[0], PathStep::Index(0)));
        assert!(matches!(&p.steps[1], PathStep::Key(k) if &**k == "parsedContent"));
        assert!(matches!(k[1], SyntaxKind::Path(_)));
    }

    #[test]
    fn brackets_after_space_open_a_list() {
        let k = kinds("(f [1 2])");
        let SyntaxKind::List(items) = &k[0] else {
            panic!()
        };
        assert!(matches!(items[1].kind, SyntaxKind::Vector(_)));
    }

    #[test]
    fn comments_and_quotes() {
        let k = kinds("; line\n#| block #| nested |# |# #;(ignored) 'x `(a ,b ,@c)");
        assert_eq!(k.len(), 2);
        let SyntaxKind::List(q) = &k[0] else { panic!() };
        assert_eq!(q[0].as_symbol().map(|s| s.name()), Some("quote"));
    }

    #[test]
    fn strings_with_unicode_escapes() {
        let k = kinds(r#""\u{e9}\t\"q\"""#);
        assert!(matches!(&k[0], SyntaxKind::Str(s) if s.as_str() == "é\t\"q\""));
    }

    #[test]
    fn incomplete_versus_wrong() {
        for text in ["(+ 1", "\"abc", "#| x", "'", "(a [b {c", "(prn xs[0"] {
            let e = read(text).expect_err("incomplete");
            assert!(e.is_incomplete(), "{text}");
        }
        for text in [
            ")",
            "(a]",
            "99999999999999999999",
            "{1}",
            "\"\\q\"",
            "#x",
            "1abc",
        ] {
            let e = read(text).expect_err("bad");
            assert!(!e.is_incomplete(), "{text}");
            assert_eq!(e.kind(), crate::error::ErrorKind::Syntax);
        }
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        assert!(read("(f \")\" ; )\n )").is_ok());
    }

    #[test]
    fn deep_nesting_is_a_clean_error() {
        let text = "(".repeat(100_000) + &")".repeat(100_000);
        let e = read(&text).expect_err("too deep");
        assert!(e.message().contains("nesting"));
    }

    #[test]
    fn multibyte_symbols_and_paths() {
        let k = kinds("é.x ☃ λ[0] 日本");
        assert!(matches!(&k[0], SyntaxKind::Path(p) if p.base.name() == "é"));
        assert!(matches!(k[1], SyntaxKind::Symbol(s) if s.name() == "☃"));
        assert!(matches!(&k[2], SyntaxKind::Path(p) if p.base.name() == "λ"));
        assert!(matches!(k[3], SyntaxKind::Symbol(s) if s.name() == "日本"));
        assert!(read("\u{fffd}\\").is_ok());
    }

    #[test]
    fn control_characters_are_refused() {
        assert!(read("a\0b").is_err());
        assert!(read("\"a\0b\"").is_ok());
    }

    #[test]
    fn data_interns_no_new_names() {
        let forms = read_data(
            "<t>",
            "(reader-test-new :reader-test-kw reader-test.path[0])",
        )
        .expect("reads");
        let value = crate::eval::quote::syntax_to_value(&forms[0]);
        assert_eq!(
            crate::value::write_string(&value),
            "(reader-test-new :reader-test-kw reader-test.path[0])"
        );
        for name in [
            "reader-test-new",
            "reader-test-kw",
            "reader-test",
            "reader-test.path[0]",
        ] {
            assert_eq!(Sym::lookup(name), None, "{name} was interned");
        }
        // A name interned already is the interned symbol.
        let known = Sym::new("reader-test-known");
        let forms = read_data("<t>", "reader-test-known").expect("reads");
        assert!(matches!(forms[0].kind, SyntaxKind::Value(Value::Symbol(s)) if s == known));
        // Paths are checked as in code.
        assert!(read_data("<t>", "a.").is_err());
    }

    #[test]
    fn data_errors_keep_their_text_without_registering_it() {
        let e = read_data("<read>", "(a\n  (b").expect_err("unclosed");
        assert_eq!(e.span().map(|s| s.source), Some(SourceId::UNREGISTERED));
        assert_eq!(
            e.to_json()["location"],
            serde_json::json!({"file": "<read>", "line": 2, "column": 3})
        );
        assert!(e.render(false).contains("(b"), "{}", e.render(false));
    }
}
