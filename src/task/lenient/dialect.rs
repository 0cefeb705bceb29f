//! The dialect repairs: one pass that rewrites the JSON-like text models write into JSON,
//! noting which rewrites it made. Strings (both quote kinds) and comments are recognised,
//! so nothing inside a string is ever rewritten.

/// The dialect repairs, in the order they are reported.
const NAMES: [&str; 5] = [
    "trailing comma",
    "comments",
    "single quotes",
    "unquoted keys",
    "python literals",
];
const TRAILING_COMMA: usize = 0;
const COMMENTS: usize = 1;
const SINGLE_QUOTES: usize = 2;
const UNQUOTED_KEYS: usize = 3;
const PYTHON_LITERALS: usize = 4;

/// `text` rewritten as JSON, and the names of the repairs that changed something.
pub fn normalize(text: &str) -> (String, Vec<&'static str>) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut used = [false; NAMES.len()];
    // Text from `copied` to `i` is copied as it is when something is rewritten.
    let mut copied = 0;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => i = string_end(bytes, i).unwrap_or(bytes.len()),
            b'\'' => {
                out.push_str(&text[copied..i]);
                i = single_quoted(text, i, &mut out);
                copied = i;
                used[SINGLE_QUOTES] = true;
            }
            b'/' if starts_comment(bytes, i) => {
                out.push_str(&text[copied..i]);
                i = comment_end(bytes, i).unwrap_or(bytes.len());
                copied = i;
                used[COMMENTS] = true;
            }
            b',' if closes_next(bytes, i + 1) => {
                out.push_str(&text[copied..i]);
                i += 1;
                copied = i;
                used[TRAILING_COMMA] = true;
            }
            c if is_identifier_start(c) => {
                let end = identifier_end(bytes, i);
                let word = &text[i..end];
                let rewrite = if is_key(bytes, end) && !is_json_literal(word) {
                    used[UNQUOTED_KEYS] = true;
                    Some(format!("\"{word}\""))
                } else {
                    python_literal(word).map(|literal| {
                        used[PYTHON_LITERALS] = true;
                        literal.to_owned()
                    })
                };
                if let Some(rewrite) = rewrite {
                    out.push_str(&text[copied..i]);
                    out.push_str(&rewrite);
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    let names = NAMES
        .iter()
        .zip(used)
        .filter_map(|(name, used)| used.then_some(*name))
        .collect();
    (out, names)
}

/// The length of the object or array `text` starts with, up to its closing bracket;
/// `None` when the text ends first.
pub fn balanced_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' | b'\'' => {
                i = string_end(bytes, i)?;
                continue;
            }
            b'/' if starts_comment(bytes, i) => {
                i = comment_end(bytes, i)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index after the string that starts at `start` (its quote), or `None` if the text
/// ends inside it.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = *bytes.get(start)?;
    let mut i = start + 1;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'\\' => i += 2,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Writes the single-quoted string at `start` as a double-quoted one; returns the index
/// after it (the end of the text if it is never closed, leaving it unclosed).
fn single_quoted(text: &str, start: usize, out: &mut String) -> usize {
    out.push('"');
    let mut chars = text[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\'' => {
                out.push('"');
                return start + 1 + offset + 1;
            }
            '"' => out.push_str("\\\""),
            '\\' => match chars.next() {
                Some((_, '\'')) => out.push('\''),
                Some((_, escaped)) => {
                    out.push('\\');
                    out.push(escaped);
                }
                None => out.push('\\'),
            },
            other => out.push(other),
        }
    }
    text.len()
}

fn starts_comment(bytes: &[u8], i: usize) -> bool {
    matches!(bytes.get(i + 1), Some(b'/' | b'*'))
}

/// The index after the comment at `start`: a line comment ends at the newline (or the
/// text's end), a block comment at `*/` (`None` if never closed).
fn comment_end(bytes: &[u8], start: usize) -> Option<usize> {
    let rest = bytes.get(start + 2..).unwrap_or_default();
    if bytes.get(start + 1) == Some(&b'/') {
        let newline = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        return Some(start + 2 + newline);
    }
    rest.windows(2)
        .position(|w| w == b"*/")
        .map(|end| start + 2 + end + 2)
}

/// The index of the next byte that is neither whitespace nor inside a comment.
fn next_significant(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'/' if starts_comment(bytes, i) => i = comment_end(bytes, i).unwrap_or(bytes.len()),
            _ => break,
        }
    }
    i
}

/// After a comma: does a closing bracket come next (a trailing comma)?
fn closes_next(bytes: &[u8], after: usize) -> bool {
    matches!(bytes.get(next_significant(bytes, after)), Some(b'}' | b']'))
}

/// After a word: does a colon come next (the word is a key)?
fn is_key(bytes: &[u8], after: usize) -> bool {
    bytes.get(next_significant(bytes, after)) == Some(&b':')
}

fn is_identifier_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$'
}

fn identifier_end(bytes: &[u8], start: usize) -> usize {
    bytes
        .get(start..)
        .unwrap_or_default()
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$'))
        .map_or(bytes.len(), |n| start + n)
}

fn is_json_literal(word: &str) -> bool {
    matches!(word, "true" | "false" | "null")
}

fn python_literal(word: &str) -> Option<&'static str> {
    match word {
        "True" => Some("true"),
        "False" => Some("false"),
        "None" => Some("null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_inside_strings_is_rewritten() {
        let text = r#"{"url": "http://x/*y*/", "s": "True, 'a',]"}"#;
        assert_eq!(normalize(text), (text.to_owned(), vec![]));
    }

    #[test]
    fn digits_and_exponents_are_not_words_to_rewrite() {
        assert_eq!(normalize("[1e5, 2E-3]").0, "[1e5, 2E-3]");
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        assert_eq!(balanced_len(r#"{"a": "}"} tail"#), Some(10));
        assert_eq!(balanced_len("[1, /* ] */ 2] x"), Some(14));
        assert_eq!(balanced_len("{'a': '}'"), None);
        assert_eq!(balanced_len("{\"a\": [1"), None);
    }

    #[test]
    fn an_unclosed_single_quoted_string_stays_unclosed() {
        assert_eq!(normalize("['ab").0, "[\"ab");
    }
}
