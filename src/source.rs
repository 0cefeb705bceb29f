//! Source texts and the spans that point into them.
//!
//! Every text the interpreter reads (a file, an `eval` string, a REPL input, an XML
//! template) is registered once and named by a small id, so a `Span` is `Copy` and
//! errors can be rendered against the original text long after it was read.

use std::sync::{Arc, LazyLock, RwLock};

/// Identifies a registered source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceId(u32);

impl SourceId {
    /// The source of text read but not registered (data read by `read`): spans into it
    /// are re-pointed at a registered copy if they are ever shown.
    pub const UNREGISTERED: SourceId = SourceId(u32::MAX - 1);
}

/// A byte range in a registered source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub source: SourceId,
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn new(source: SourceId, start: usize, end: usize) -> Span {
        Span {
            source,
            start: start as u32,
            len: end.saturating_sub(start) as u32,
        }
    }

    /// A span for code that has no source text (macro output, `eval` of data).
    pub fn generated() -> Span {
        Span {
            source: SourceId(u32::MAX),
            start: 0,
            len: 0,
        }
    }

    pub fn end(self) -> usize {
        self.start as usize + self.len as usize
    }

    /// The smallest span covering both, when they are in the same source.
    pub fn to(self, other: Span) -> Span {
        if self.source != other.source {
            return self;
        }
        let start = self.start.min(other.start) as usize;
        Span::new(self.source, start, self.end().max(other.end()))
    }
}

/// A registered source: its display name (a path or `<eval>`) and its text.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
}

static SOURCES: LazyLock<RwLock<Vec<Arc<SourceFile>>>> = LazyLock::new(|| RwLock::new(Vec::new()));

/// Registers a text under `name` and returns its id.
pub fn add_source(name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceId {
    let mut sources = SOURCES.write().unwrap_or_else(|e| e.into_inner());
    sources.push(Arc::new(SourceFile {
        name: name.into(),
        text: text.into(),
    }));
    SourceId((sources.len() - 1) as u32)
}

pub fn source(id: SourceId) -> Option<Arc<SourceFile>> {
    SOURCES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id.0 as usize)
        .cloned()
}

/// 1-based line and column of a byte offset, for messages that name a place.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 4), (2, 2));
        assert_eq!(line_col(t, 8), (3, 1));
    }

    #[test]
    fn registered_sources_round_trip() {
        let id = add_source("x.sexp", "(+ 1 2)");
        let file = source(id).expect("registered");
        assert_eq!(file.name, "x.sexp");
        assert_eq!(&*file.text, "(+ 1 2)");
    }
}
