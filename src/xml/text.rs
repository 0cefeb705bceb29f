//! Decoded XML character data that still knows where each character came from.
//!
//! Entity references (`&lt;`) and line-end normalisation make decoded text shorter than
//! its source, so a plain offset would point at the wrong column. `Text` keeps marks that
//! map decoded offsets back to source offsets, which lets an error inside an attribute or
//! an `<arg>` underline the exact characters in the XML file.

use crate::error::{Error, ErrorKind, Result};
use crate::source::{SourceId, Span};

#[derive(Clone, Debug)]
pub struct Text {
    pub value: String,
    source: SourceId,
    /// `(decoded offset, source offset)` at the start of each run copied one-to-one.
    marks: Vec<(usize, usize)>,
    /// The source offset just past the text (for empty text and end-of-text positions).
    end: usize,
}

impl Text {
    /// Empty text positioned at `offset`.
    pub fn empty(source: SourceId, offset: usize) -> Text {
        Text {
            value: String::new(),
            source,
            marks: Vec::new(),
            end: offset,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Appends the decoding of `raw`, which starts at `offset` in the source.
    /// In attribute values, tabs and line ends become spaces (XML attribute normalisation).
    pub fn push_raw(&mut self, raw: &str, offset: usize, attribute: bool) -> Result<()> {
        let bytes = raw.as_bytes();
        let mut run_start = 0;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let special = b == b'&' || b == b'\r' || (attribute && (b == b'\n' || b == b'\t'));
            if !special {
                i += 1;
                continue;
            }
            self.push_run(&raw[run_start..i], offset + run_start);
            let (decoded, consumed) = match b {
                b'&' => self.entity(raw, i, offset)?,
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    (if attribute { ' ' } else { '\n' }, 2)
                }
                b'\r' | b'\n' | b'\t' if attribute => (' ', 1),
                _ => ('\n', 1),
            };
            self.marks.push((self.value.len(), offset + i));
            self.value.push(decoded);
            i += consumed;
            run_start = i;
        }
        self.push_run(&raw[run_start..], offset + run_start);
        self.end = offset + raw.len();
        Ok(())
    }

    /// Appends text that needs no decoding (CDATA).
    pub fn push_verbatim(&mut self, raw: &str, offset: usize) {
        self.push_run(raw, offset);
        self.end = offset + raw.len();
    }

    fn push_run(&mut self, run: &str, offset: usize) {
        if !run.is_empty() {
            self.marks.push((self.value.len(), offset));
            self.value.push_str(run);
        }
    }

    /// Decodes the reference starting at `raw[at]` (`&`); returns the character and the
    /// bytes it took.
    fn entity(&self, raw: &str, at: usize, offset: usize) -> Result<(char, usize)> {
        let rest = raw.get(at + 1..).unwrap_or("");
        let bad = |message: String, len: usize| {
            Error::new(ErrorKind::XmlParse, message).with_span(Span::new(
                self.source,
                offset + at,
                offset + at + len,
            ))
        };
        let Some(semicolon) = rest.find(';').filter(|&n| n <= 32) else {
            return Err(bad(
                "`&` must start an entity reference such as `&amp;`".into(),
                1,
            ));
        };
        let name = &rest[..semicolon];
        let len = semicolon + 2;
        let decoded = match name {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "apos" => Some('\''),
            "quot" => Some('"'),
            _ => char_reference(name),
        };
        match decoded {
            Some(c) => Ok((c, len)),
            None if name.starts_with('#') => Err(bad(format!("`&{name};` is not a valid character reference"), len)),
            None => Err(bad(
                format!("unknown entity `&{name};` (only &lt; &gt; &amp; &apos; &quot; and character references are defined)"),
                len,
            )),
        }
    }

    /// The source offset of the decoded offset `at`.
    fn source_offset(&self, at: usize) -> usize {
        let index = self.marks.partition_point(|&(decoded, _)| decoded <= at);
        match index.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some(&(decoded, source)) => source + (at - decoded),
            None => self.end,
        }
    }

    /// The source span of the decoded range `start..end`.
    pub fn span_of(&self, start: usize, end: usize) -> Span {
        let from = if start >= self.value.len() {
            self.end
        } else {
            self.source_offset(start)
        };
        let to = if end >= self.value.len() {
            self.end
        } else {
            self.source_offset(end)
        };
        Span::new(self.source, from, to.max(from))
    }

    /// The span of the whole text.
    pub fn span(&self) -> Span {
        self.span_of(0, self.value.len())
    }

    pub fn source(&self) -> SourceId {
        self.source
    }

    /// The first line of the text's non-blank content: where to point at stray text
    /// without underlining a whole file.
    pub fn first_line_span(&self) -> Span {
        let trimmed = self.trim();
        let line_end = trimmed.value.find('\n').unwrap_or(trimmed.value.len());
        trimmed.span_of(0, trimmed.value[..line_end].trim_end().len())
    }

    /// The text without leading and trailing whitespace, still mapped to its source.
    pub fn trim(&self) -> Text {
        let start = self.value.len() - self.value.trim_start().len();
        let end = self.value.trim_end().len().max(start);
        self.slice(start, end)
    }

    /// The decoded range `start..end` as text of its own.
    pub fn slice(&self, start: usize, end: usize) -> Text {
        let value = self.value.get(start..end).unwrap_or("").to_owned();
        let mut marks = vec![(0, self.source_offset(start))];
        marks.extend(
            self.marks
                .iter()
                .filter(|&&(decoded, _)| decoded > start && decoded < end)
                .map(|&(decoded, source)| (decoded - start, source)),
        );
        let end_offset = if end >= self.value.len() {
            self.end
        } else {
            self.source_offset(end)
        };
        Text {
            value,
            source: self.source,
            marks,
            end: end_offset,
        }
    }
}

/// `#65` or `#x41` to the character, if it is one XML allows.
fn char_reference(name: &str) -> Option<char> {
    let digits = name.strip_prefix('#')?;
    let code = match digits.strip_prefix('x') {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<u32>().ok()?,
    };
    char::from_u32(code).filter(|&c| c != '\0')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::add_source;

    fn decode(raw: &str, attribute: bool) -> Result<Text> {
        let id = add_source("<text-test>", raw);
        let mut text = Text::empty(id, 0);
        text.push_raw(raw, 0, attribute)?;
        Ok(text)
    }

    #[test]
    fn predefined_entities_and_character_references() {
        let t = decode("a &lt; b &amp;&amp; &#65;&#x42; &quot;&apos;&gt;", false).unwrap();
        assert_eq!(t.as_str(), "a < b && AB \"'>");
    }

    #[test]
    fn unknown_entities_and_bad_references_are_parse_errors() {
        for raw in ["&foo;", "&#0;", "&#xZZ;", "a & b", "&#1114112;"] {
            let e = decode(raw, false).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::XmlParse, "{raw}");
        }
    }

    #[test]
    fn offsets_map_back_through_entities() {
        let t = decode("x &amp;&amp; y", false).unwrap();
        assert_eq!(t.as_str(), "x && y");
        let y = t.as_str().find('y').unwrap();
        let span = t.span_of(y, y + 1);
        assert_eq!(span.start, 13);
        assert_eq!(span.len, 1);
    }

    #[test]
    fn line_ends_are_normalised() {
        assert_eq!(decode("a\r\nb\rc", false).unwrap().as_str(), "a\nb\nc");
        assert_eq!(decode("a\r\nb\tc\nd", true).unwrap().as_str(), "a b c d");
    }

    #[test]
    fn stray_text_is_pointed_at_by_its_first_line() {
        let t = decode("\n  3<a/>\n  7</b>\n", false).unwrap();
        let span = t.first_line_span();
        assert_eq!((span.start, span.len), (3, 5));
    }

    #[test]
    fn trimming_keeps_the_mapping() {
        let t = decode("  (> x 3)  ", false).unwrap().trim();
        assert_eq!(t.as_str(), "(> x 3)");
        assert_eq!(t.span_of(3, 4).start, 5);
        assert_eq!(t.span().start, 2);
        assert_eq!(t.span().end(), 9);
    }
}
