//! The open documents: their text as the editor has it, and positions (line, UTF-16
//! column) turned into byte offsets and back.

use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::PathBuf;

pub struct Document {
    pub uri: String,
    pub text: String,
    /// The byte offset where each line starts.
    lines: Vec<usize>,
}

#[derive(Default)]
pub struct Documents {
    open: HashMap<String, Document>,
}

impl Documents {
    pub fn open(&mut self, uri: &str, text: &str) {
        let lines = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        self.open.insert(
            uri.to_owned(),
            Document {
                uri: uri.to_owned(),
                text: text.to_owned(),
                lines,
            },
        );
    }

    pub fn close(&mut self, uri: &str) {
        self.open.remove(uri);
    }

    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.open.get(uri)
    }
}

impl Document {
    /// The file the document is, for a `file:` URI.
    pub fn path(&self) -> Option<PathBuf> {
        uri_path(&self.uri)
    }

    pub fn is_xml(&self) -> bool {
        self.uri.to_ascii_lowercase().ends_with(".xml")
    }

    /// The LSP position of a byte offset.
    pub fn position(&self, offset: usize) -> Json {
        let offset = offset.min(self.text.len());
        let line = self.lines.partition_point(|&start| start <= offset).max(1) - 1;
        let start = self.lines.get(line).copied().unwrap_or(0);
        let character: usize = self
            .text
            .get(start..offset)
            .map_or(0, |t| t.chars().map(char::len_utf16).sum());
        json!({"line": line, "character": character})
    }

    pub fn range(&self, start: usize, end: usize) -> Json {
        json!({"start": self.position(start), "end": self.position(end)})
    }

    /// The byte offset of an LSP position (clamped to the text).
    pub fn offset(&self, position: Option<&Json>) -> usize {
        let field = |name: &str| {
            position
                .and_then(|p| p.get(name))
                .and_then(Json::as_u64)
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        let Some(&start) = self.lines.get(field("line")) else {
            return self.text.len();
        };
        let line = self.text.get(start..).unwrap_or("");
        let line = line.split('\n').next().unwrap_or("");
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= field("character") {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + line.len()
    }
}

/// The path of a `file://` URI (percent-escapes decoded).
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = rest
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().map(PathBuf::from)
}

/// The `file://` URI of a path.
pub fn path_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.display().to_string().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let mut docs = Documents::default();
        docs.open("file:///a%20b.sexp", "(a\n(é 𝄞 x))");
        let doc = docs.get("file:///a%20b.sexp").expect("open");
        let x = doc.text.find('x').expect("x");
        assert_eq!(doc.position(x), json!({"line": 1, "character": 6}));
        assert_eq!(doc.offset(Some(&json!({"line": 1, "character": 6}))), x);
        assert_eq!(
            doc.offset(Some(&json!({"line": 9, "character": 0}))),
            doc.text.len()
        );
        assert_eq!(doc.path(), Some(PathBuf::from("/a b.sexp")));
        assert_eq!(
            path_uri(std::path::Path::new("/a b.sexp")),
            "file:///a%20b.sexp"
        );
    }
}
