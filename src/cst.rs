//! Concrete syntax: a text's brackets, atoms, strings and comments with their byte ranges
//! and the line breaks between them — what the reader drops and `tasklisp fmt` and the
//! language server need. It is tolerant: any text makes a tree (an unclosed bracket runs
//! to the end, a stray closer is a node of its own), so an editor's half-typed file can
//! still be walked. It splits tokens exactly as the reader does; whether a text *reads*
//! is the reader's call.

use crate::eval::reader::{block_comment_end, is_delimiter, MAX_NESTING};

/// One piece of concrete syntax; `start..end` are byte offsets into the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub start: usize,
    pub end: usize,
    /// Line breaks in the whitespace before the node (0: on the line of what precedes).
    pub newlines_before: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A symbol, number, keyword, boolean, nil or path symbol.
    Atom,
    /// A string literal, escapes as written.
    Str,
    /// `; …` up to the end of its line.
    LineComment,
    /// `#| … |#`, nested.
    BlockComment,
    /// `(…)`, `[…]` or `{…}`; `closed` is false when the text ends inside it.
    Seq {
        open: u8,
        children: Vec<Node>,
        closed: bool,
    },
    /// `'`, `` ` ``, `,`, `,@` or `#;` (the prefix is the node's first `len` bytes) and
    /// the datum it applies to, if the text has one.
    Prefix {
        len: usize,
        datum: Option<Box<Node>>,
    },
    /// A closing bracket that closes nothing.
    Stray,
}

impl Node {
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, NodeKind::LineComment | NodeKind::BlockComment)
    }

    /// The elements of a sequence (comments left out); none for other nodes.
    pub fn elements(&self) -> impl Iterator<Item = &Node> {
        let children: &[Node] = match &self.kind {
            NodeKind::Seq { children, .. } => children,
            _ => &[],
        };
        children.iter().filter(|c| !c.is_comment())
    }

    /// The node's text.
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

/// The concrete syntax of `text`: its top-level nodes.
pub fn parse(text: &str) -> Vec<Node> {
    Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    }
    .parse()
}

/// What is being built: an open bracket or a prefix waiting for its datum.
enum Frame {
    Seq {
        open: u8,
        start: usize,
        newlines_before: usize,
        children: Vec<Node>,
    },
    Prefix {
        len: usize,
        start: usize,
        newlines_before: usize,
    },
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

impl Parser<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn parse(mut self) -> Vec<Node> {
        let mut top = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let newlines_before = self.skip_whitespace();
            let start = self.pos;
            let Some(b) = self.peek(0) else { break };
            let node = match b {
                b'(' | b'[' | b'{' if stack.len() < MAX_NESTING => {
                    self.pos += 1;
                    stack.push(Frame::Seq {
                        open: b,
                        start,
                        newlines_before,
                        children: Vec::new(),
                    });
                    continue;
                }
                b')' | b']' | b'}' => {
                    self.pos += 1;
                    // Quotes waiting for a datum get none.
                    while let Some(Frame::Prefix { .. }) = stack.last() {
                        if let Some(frame) = stack.pop() {
                            let node = unfinished(frame, start);
                            deliver(&mut stack, &mut top, node);
                        }
                    }
                    match close_frame(&mut stack, b, self.pos) {
                        Some(node) => node,
                        None => self.node(NodeKind::Stray, start, newlines_before),
                    }
                }
                b'\'' | b'`' | b',' | b'#'
                    if stack.len() < MAX_NESTING && self.prefix_len().is_some() =>
                {
                    let len = self.prefix_len().unwrap_or(1);
                    self.pos += len;
                    stack.push(Frame::Prefix {
                        len,
                        start,
                        newlines_before,
                    });
                    continue;
                }
                b';' => self.line_comment(newlines_before),
                b'#' if self.peek(1) == Some(b'|') => self.block_comment(newlines_before),
                b'"' => self.string(newlines_before),
                _ => self.atom(newlines_before),
            };
            deliver(&mut stack, &mut top, node);
        }
        // The text ended: whatever is open ends with it.
        while let Some(frame) = stack.pop() {
            let node = unfinished(frame, self.pos);
            deliver(&mut stack, &mut top, node);
        }
        top
    }

    fn node(&self, kind: NodeKind, start: usize, newlines_before: usize) -> Node {
        Node {
            kind,
            start,
            end: self.pos,
            newlines_before,
        }
    }

    /// The length of a quote prefix or `#;` at the position.
    fn prefix_len(&self) -> Option<usize> {
        match (self.peek(0)?, self.peek(1)) {
            (b',', Some(b'@')) | (b'#', Some(b';')) => Some(2),
            (b'\'' | b'`' | b',', _) => Some(1),
            _ => None,
        }
    }

    /// Skips whitespace; returns how many line breaks it held.
    fn skip_whitespace(&mut self) -> usize {
        let mut newlines = 0;
        while let Some(b) = self.peek(0).filter(u8::is_ascii_whitespace) {
            newlines += usize::from(b == b'\n');
            self.pos += 1;
        }
        newlines
    }

    fn line_comment(&mut self, newlines_before: usize) -> Node {
        let start = self.pos;
        while self.peek(0).is_some_and(|b| b != b'\n') {
            self.pos += 1;
        }
        self.node(NodeKind::LineComment, start, newlines_before)
    }

    fn block_comment(&mut self, newlines_before: usize) -> Node {
        let start = self.pos;
        self.pos = block_comment_end(self.bytes, start).unwrap_or(self.bytes.len());
        self.node(NodeKind::BlockComment, start, newlines_before)
    }

    fn string(&mut self, newlines_before: usize) -> Node {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek(0) {
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' if self.peek(0).is_some() => self.pos += 1,
                _ => {}
            }
        }
        self.pos = self.boundary(self.pos);
        self.node(NodeKind::Str, start, newlines_before)
    }

    fn atom(&mut self, newlines_before: usize) -> Node {
        let start = self.pos;
        while let Some(b) = self.peek(0) {
            if b == b'[' && self.pos > start {
                // `xs[0]`: a bracket glued to a symbol is part of a path, as the reader has it.
                let rest = self.bytes.get(self.pos..).unwrap_or_default();
                self.pos += rest
                    .iter()
                    .position(|&c| c == b']')
                    .map_or(rest.len(), |off| off + 1);
                continue;
            }
            if is_delimiter(b) && self.pos > start {
                break;
            }
            self.pos += 1;
        }
        self.node(NodeKind::Atom, start, newlines_before)
    }

    /// The first char boundary at or after `pos` (an escape may sit before a multibyte
    /// character).
    fn boundary(&self, mut pos: usize) -> usize {
        while pos < self.bytes.len() && !self.text.is_char_boundary(pos) {
            pos += 1;
        }
        pos.min(self.bytes.len())
    }
}

/// A finished node goes into the open sequence, or completes the prefixes waiting for it.
/// A comment met after a prefix goes before the prefix (it means nothing either way).
fn deliver(stack: &mut Vec<Frame>, top: &mut Vec<Node>, node: Node) {
    let mut node = node;
    loop {
        match stack.last_mut() {
            Some(Frame::Prefix { .. }) if node.is_comment() => {
                let at = stack
                    .iter()
                    .rposition(|f| matches!(f, Frame::Seq { .. }))
                    .and_then(|i| match stack.get_mut(i) {
                        Some(Frame::Seq { children, .. }) => Some(children),
                        _ => None,
                    });
                match at {
                    Some(children) => children.push(node),
                    None => top.push(node),
                }
                return;
            }
            Some(Frame::Prefix { .. }) => {
                if let Some(Frame::Prefix {
                    len,
                    start,
                    newlines_before,
                }) = stack.pop()
                {
                    node = Node {
                        end: node.end,
                        kind: NodeKind::Prefix {
                            len,
                            datum: Some(Box::new(Node {
                                newlines_before: 0,
                                ..node
                            })),
                        },
                        start,
                        newlines_before,
                    };
                }
            }
            Some(Frame::Seq { children, .. }) => return children.push(node),
            None => return top.push(node),
        }
    }
}

/// The node a closing bracket `b` (ending at `end`) makes of the innermost open sequence,
/// or `None` when the innermost frame is not a sequence `b` closes.
fn close_frame(stack: &mut Vec<Frame>, b: u8, end: usize) -> Option<Node> {
    match stack.last() {
        Some(Frame::Seq { open, .. }) if closer(*open) == b => {}
        _ => return None,
    }
    match stack.pop() {
        Some(Frame::Seq {
            open,
            start,
            newlines_before,
            children,
        }) => Some(Node {
            kind: NodeKind::Seq {
                open,
                children,
                closed: true,
            },
            start,
            end,
            newlines_before,
        }),
        _ => None,
    }
}

/// A frame the text ended inside.
fn unfinished(frame: Frame, end: usize) -> Node {
    match frame {
        Frame::Seq {
            open,
            start,
            newlines_before,
            children,
        } => Node {
            kind: NodeKind::Seq {
                open,
                children,
                closed: false,
            },
            start,
            end,
            newlines_before,
        },
        Frame::Prefix {
            len,
            start,
            newlines_before,
        } => Node {
            kind: NodeKind::Prefix { len, datum: None },
            start,
            end,
            newlines_before,
        },
    }
}

/// The innermost node whose range holds `offset` (an atom, string or comment the cursor is
/// in or just after), with the sequences around it, outermost first.
pub fn node_at(nodes: &[Node], offset: usize) -> Option<(&Node, Vec<&Node>)> {
    let mut around = Vec::new();
    let mut level = nodes;
    loop {
        let found = level
            .iter()
            .find(|n| n.start <= offset && offset <= n.end)?;
        match &found.kind {
            NodeKind::Seq { children, .. } if found.start < offset && offset < found.end => {
                around.push(found);
                match children
                    .iter()
                    .find(|n| n.start <= offset && offset <= n.end)
                {
                    Some(_) => level = children,
                    None => return Some((found, around)),
                }
            }
            NodeKind::Prefix {
                datum: Some(datum), ..
            } => {
                level = std::slice::from_ref(&**datum);
            }
            _ => return Some((found, around)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str, nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(|n| match &n.kind {
                NodeKind::Seq {
                    open,
                    children,
                    closed,
                } => format!(
                    "{}{}{}",
                    *open as char,
                    shape(text, children),
                    if *closed { ")" } else { "…" }
                ),
                NodeKind::Prefix { len, datum } => format!(
                    "{}{}",
                    &text[n.start..n.start + len],
                    datum
                        .as_deref()
                        .map_or(String::new(), |d| shape(text, std::slice::from_ref(d)))
                ),
                _ => format!("<{}>", n.text(text)),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn parsed(text: &str) -> String {
        shape(text, &parse(text))
    }

    #[test]
    fn tokens_split_as_the_reader_splits_them() {
        assert_eq!(
            parsed("(f xs[0].a \"s)\" ; c)\n 'x #;y ,@z)"),
            "(<f> <xs[0].a> <\"s)\"> <; c)> '<x> #;<y> ,@<z>)"
        );
        assert_eq!(
            parsed("#| a #| b |# |# [1 {2 3}]"),
            "<#| a #| b |# |#> [<1> {<2> <3>))"
        );
    }

    #[test]
    fn any_text_makes_a_tree() {
        assert_eq!(parsed("(a (b"), "(<a> (<b>……");
        assert_eq!(parsed(") a ]"), "<)> <a> <]>");
        assert_eq!(parsed("(a ]"), "(<a> <]>…");
        assert_eq!(parsed("\"abc"), "<\"abc>");
        assert_eq!(parsed("'"), "'");
        assert_eq!(parsed("\"\\é\""), "<\"\\é\">");
        assert_eq!(parsed("' ; c\n x"), "<; c> '<x>");
    }

    #[test]
    fn line_breaks_before_nodes_are_counted() {
        let nodes = parse("a\n\n b c");
        let counts: Vec<usize> = nodes.iter().map(|n| n.newlines_before).collect();
        assert_eq!(counts, [0, 2, 0]);
    }

    #[test]
    fn deep_nesting_stops_at_the_readers_limit() {
        let text = "(".repeat(MAX_NESTING + 5);
        let nodes = parse(&text);
        assert_eq!(nodes.len(), 1);
    }

    #[test]
    fn the_node_at_an_offset() {
        let text = "(define (f x) (g x))";
        let nodes = parse(text);
        let (node, around) = node_at(&nodes, 16).expect("found");
        assert_eq!(node.text(text), "g");
        assert_eq!(around.len(), 2);
    }
}
