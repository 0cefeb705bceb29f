//! The memory system: `get-context` ranks files against a query with BM25 (the `bm25`
//! crate) and answers with an AssociativeMatchResult; `{{files}}` reads files for a
//! prompt. The index of a directory is built once and reused while no file in it has
//! changed (same paths, sizes and modification times).

use crate::capabilities::{Access, Capabilities};
use crate::error::{Error, Reason, Result};
use crate::value::{Entries, Value};
use bm25::{Document, Language, SearchEngine, SearchEngineBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

/// Files larger than this are not indexed (they are rarely what a prompt needs whole).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// A directory tree with more files than this is refused rather than read.
pub const MAX_FILES: usize = 100_000;
/// How much of a file an excerpt shows.
const EXCERPT_CHARS: usize = 240;

/// What the ranking reads of each file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The file's text.
    Content,
    /// Its path and first heading.
    Metadata,
}

impl Strategy {
    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "content" => Some(Strategy::Content),
            "metadata" => Some(Strategy::Metadata),
            _ => None,
        }
    }
}

/// One ranked file.
pub struct Match {
    pub path: String,
    pub relevance: f64,
    pub excerpt: String,
}

/// A question to the memory system.
pub struct Query<'a> {
    pub text: &'a str,
    pub dir: Option<&'a str>,
    pub files: Option<Vec<String>>,
    pub limit: usize,
    pub strategy: Strategy,
}

/// An indexed file: its path as shown, its text and what identifies its version.
struct Entry {
    shown: String,
    text: String,
    stamp: (u64, Option<SystemTime>),
}

struct Index {
    entries: Vec<Entry>,
    engine: SearchEngine<u32>,
}

/// The indexes built so far, by directory and strategy.
#[derive(Default)]
pub struct Indexes {
    by_dir: HashMap<(PathBuf, Strategy), Rc<Index>>,
}

impl Query<'_> {
    /// The files (or the directory) the query reads.
    pub fn paths(&self) -> Vec<PathBuf> {
        let dir = Path::new(self.dir.unwrap_or("."));
        match &self.files {
            Some(files) => files.iter().map(|file| dir.join(file)).collect(),
            None => vec![dir.to_path_buf()],
        }
    }
}

impl Indexes {
    /// Ranks the files the query names (its `files`, or every file below its `dir`).
    pub fn search(&mut self, query: &Query) -> Result<Vec<Match>> {
        if !has_words(query.text) {
            return Err(Error::task_failure(
                Reason::ContextMatchingFailure,
                "get-context: the query has no words to match",
            ));
        }
        let index = match &query.files {
            Some(files) => Rc::new(build(read_listed(query.dir, files)?, query.strategy)),
            None => self.directory_index(query.dir.unwrap_or("."), query.strategy)?,
        };
        Ok(rank(&index, query))
    }

    /// The index of `dir`, reused when its files are the ones it was built from.
    fn directory_index(&mut self, dir: &str, strategy: Strategy) -> Result<Rc<Index>> {
        let listing = list_dir(dir)?;
        let key = (PathBuf::from(dir), strategy);
        if let Some(index) = self.by_dir.get(&key) {
            let same = index.entries.len() == listing.len()
                && index
                    .entries
                    .iter()
                    .zip(&listing)
                    .all(|(entry, (shown, _, stamp))| {
                        entry.shown == *shown && entry.stamp == *stamp
                    });
            if same {
                return Ok(index.clone());
            }
        }
        let mut entries = Vec::with_capacity(listing.len());
        for (shown, path, stamp) in listing {
            if let Some(text) = read_text(&path, &shown, true)? {
                entries.push(Entry { shown, text, stamp });
            }
        }
        let index = Rc::new(build(entries, strategy));
        self.by_dir.insert(key, index.clone());
        Ok(index)
    }
}

fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// Every regular file below `dir`, sorted, with its path as shown (`dir` joined with the
/// path below it) and its size and modification time.
type Listing = Vec<(String, PathBuf, (u64, Option<SystemTime>))>;

fn list_dir(dir: &str) -> Result<Listing> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| retrieval(format!("cannot read {dir}: {e}")))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let metadata = entry
            .metadata()
            .map_err(|e| retrieval(format!("cannot read {}: {e}", entry.path().display())))?;
        if out.len() == MAX_FILES {
            return Err(retrieval(format!(
                "{dir} holds more than {MAX_FILES} files; give a smaller :dir"
            )));
        }
        let shown = entry.path().display().to_string();
        out.push((
            shown,
            entry.path().to_path_buf(),
            (metadata.len(), metadata.modified().ok()),
        ));
    }
    Ok(out)
}

/// The files given by name (below `dir` when it is given): each must be readable.
fn read_listed(dir: Option<&str>, files: &[String]) -> Result<Vec<Entry>> {
    let mut entries = Vec::with_capacity(files.len());
    for file in files {
        let path = match dir {
            Some(dir) => Path::new(dir).join(file),
            None => PathBuf::from(file),
        };
        let shown = path.display().to_string();
        let metadata =
            std::fs::metadata(&path).map_err(|e| retrieval(format!("cannot read {shown}: {e}")))?;
        if let Some(text) = read_text(&path, &shown, true)? {
            entries.push(Entry {
                shown,
                text,
                stamp: (metadata.len(), metadata.modified().ok()),
            });
        }
    }
    Ok(entries)
}

/// A file's text; `None` for a file that is not UTF-8 text or is too large, when
/// `skip_non_text` (ranking skips them), an error otherwise.
fn read_text(path: &Path, shown: &str, skip_non_text: bool) -> Result<Option<String>> {
    let fail = |why: String| retrieval(format!("cannot read {shown}: {why}"));
    let metadata = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    // A FIFO or a device would block or never end.
    if !metadata.is_file() {
        return Err(fail("it is not a regular file".to_owned()));
    }
    let size = metadata.len();
    if size > MAX_FILE_BYTES {
        return if skip_non_text {
            Ok(None)
        } else {
            Err(fail(format!("it is larger than {MAX_FILE_BYTES} bytes")))
        };
    }
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => Ok(Some(text)),
        _ if skip_non_text => Ok(None),
        _ => Err(fail("it is not UTF-8 text".to_owned())),
    }
}

fn retrieval(message: String) -> Error {
    Error::task_failure(Reason::ContextRetrievalFailure, message)
}

fn build(entries: Vec<Entry>, strategy: Strategy) -> Index {
    let documents: Vec<Document<u32>> = entries
        .iter()
        .enumerate()
        .map(|(id, entry)| {
            let contents = match strategy {
                Strategy::Content => entry.text.clone(),
                Strategy::Metadata => metadata_text(entry),
            };
            Document::new(u32::try_from(id).unwrap_or(u32::MAX), contents)
        })
        .collect();
    let engine = SearchEngineBuilder::<u32>::with_documents(Language::English, documents).build();
    Index { entries, engine }
}

/// The path, its separators made spaces so each part is a word, and the first heading.
fn metadata_text(entry: &Entry) -> String {
    let path: String = entry
        .shown
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    format!("{path} {}", first_heading(&entry.text))
}

/// The first Markdown heading, or else the first non-empty line.
fn first_heading(text: &str) -> &str {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or("");
    lines
        .find(|l| l.starts_with('#'))
        .map_or(first, |heading| heading.trim_start_matches('#').trim())
}

fn rank(index: &Index, query: &Query) -> Vec<Match> {
    let mut found: Vec<(f32, &Entry)> = index
        .engine
        .search(query.text, None)
        .into_iter()
        .filter_map(|result| {
            let entry = index
                .entries
                .get(usize::try_from(result.document.id).ok()?)?;
            Some((result.score, entry))
        })
        .collect();
    // Best first; equal scores by path, so the order never depends on hashing.
    found.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.shown.cmp(&b.1.shown)));
    // Relevance is the score over the best score: 1.0 for the best match, as the
    // AssociativeMatchResult's 0.0–1.0 relevance expects.
    let best = found.first().map_or(0.0, |(score, _)| f64::from(*score));
    found
        .into_iter()
        .take(query.limit)
        .map(|(score, entry)| Match {
            path: entry.shown.clone(),
            relevance: if best > 0.0 {
                (f64::from(score) / best * 1000.0).round() / 1000.0
            } else {
                0.0
            },
            excerpt: excerpt(entry, query),
        })
        .collect()
}

/// What a match shows: for content, the lines that hold a query word (else the start of
/// the file); for metadata, the first heading.
fn excerpt(entry: &Entry, query: &Query) -> String {
    let text = match query.strategy {
        Strategy::Metadata => first_heading(&entry.text).to_owned(),
        Strategy::Content => {
            let words: Vec<String> = query
                .text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() > 2)
                .map(str::to_lowercase)
                .collect();
            let lines: Vec<&str> = entry
                .text
                .lines()
                .filter(|line| {
                    let line = line.to_lowercase();
                    words.iter().any(|w| line.contains(w.as_str()))
                })
                .take(3)
                .collect();
            if lines.is_empty() {
                entry.text.trim().to_owned()
            } else {
                lines.join("\n")
            }
        }
    };
    truncate(&text, EXCERPT_CHARS)
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The AssociativeMatchResult `{"context" text "matches" [{"path" "relevance" "excerpt"}]}`.
pub fn match_result(matches: &[Match]) -> Value {
    let list = matches
        .iter()
        .map(|m| {
            let mut entry = Entries::new();
            entry.insert(Rc::from("path"), Value::str(m.path.clone()));
            entry.insert(Rc::from("relevance"), Value::Float(m.relevance));
            entry.insert(Rc::from("excerpt"), Value::str(m.excerpt.clone()));
            Value::map(entry)
        })
        .collect();
    let mut result = Entries::new();
    result.insert(Rc::from("context"), Value::str(context_text(matches)));
    result.insert(Rc::from("matches"), Value::list(list));
    Value::map(result)
}

/// A request to the memory system in seed 002's ContextGenerationInput shape, or a plain
/// query string: every field present feeds the search with its text, and inherited
/// context and previous outputs also head the answer's `context`.
#[derive(Default)]
pub struct ContextInput {
    query: String,
    template_description: String,
    inputs: String,
    inherited_context: String,
    previous_outputs: String,
    pub strategy: Option<Strategy>,
}

/// The fields of a ContextGenerationInput: the searched text ones, the informational
/// type and subtype, and the matching strategy.
const CONTEXT_INPUT_FIELDS: [&str; 8] = [
    "query",
    "templateDescription",
    "inputs",
    "inheritedContext",
    "previousOutputs",
    "templateType",
    "templateSubtype",
    "matching_strategy",
];

impl ContextInput {
    /// A query string, or a ContextGenerationInput map; a field of the wrong type, or an
    /// unknown one, is `context_parsing_failure` naming it.
    pub fn read(request: &Value) -> Result<ContextInput> {
        let map = match request {
            Value::Str(query) => {
                return Ok(ContextInput {
                    query: query.to_string(),
                    ..ContextInput::default()
                })
            }
            Value::Map(map) => map,
            other => {
                return Err(bad_input(
                    "",
                    other,
                    "a query string or a ContextGenerationInput map",
                ))
            }
        };
        let mut input = ContextInput::default();
        for (key, value) in &map.entries {
            let text = || match value {
                Value::Str(text) => Ok(text.to_string()),
                Value::Nil => Ok(String::new()),
                other => Err(bad_input(key, other, "a string")),
            };
            match &**key {
                "query" => input.query = text()?,
                "templateDescription" => input.template_description = text()?,
                "inheritedContext" => input.inherited_context = text()?,
                "previousOutputs" => input.previous_outputs = text()?,
                "templateType" | "templateSubtype" => {
                    text()?;
                }
                "inputs" => input.inputs = inputs_text(key, value)?,
                "matching_strategy" => {
                    let name = text()?;
                    input.strategy = Some(
                        Strategy::parse(&name)
                            .ok_or_else(|| bad_input(key, value, "\"content\" or \"metadata\""))?,
                    );
                }
                _ => {
                    return Err(bad_input(
                        key,
                        value,
                        &format!("one of the fields {}", CONTEXT_INPUT_FIELDS.join(", ")),
                    ))
                }
            }
        }
        Ok(input)
    }

    /// The words searched for: the text of every field present.
    pub fn terms(&self) -> String {
        [
            &self.query,
            &self.template_description,
            &self.inputs,
            &self.inherited_context,
            &self.previous_outputs,
        ]
        .iter()
        .filter(|text| !text.is_empty())
        .map(|text| text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// The AssociativeMatchResult: `context` (inherited context and previous outputs
    /// first, then the excerpts), `context_summary`, `matches` and `error` (nil).
    pub fn answer(&self, matches: &[Match]) -> Value {
        let Value::Map(found) = match_result(matches) else {
            return Value::Nil;
        };
        let mut entries = found.entries.clone();
        let heads = [&self.inherited_context, &self.previous_outputs];
        let context: Vec<String> = heads
            .iter()
            .filter(|text| !text.is_empty())
            .map(|text| text.to_string())
            .chain(std::iter::once(context_text(matches)).filter(|text| !text.is_empty()))
            .collect();
        entries.insert(Rc::from("context"), Value::str(context.join("\n\n")));
        entries.insert(Rc::from("context_summary"), Value::str(summary(matches)));
        entries.insert(Rc::from("error"), Value::Nil);
        Value::map(entries)
    }
}

/// The values of a ContextGenerationInput's `inputs` map as searched text.
fn inputs_text(key: &str, value: &Value) -> Result<String> {
    match value {
        Value::Nil => Ok(String::new()),
        Value::Map(map) => Ok(map
            .entries
            .values()
            .map(|v| match v {
                Value::Str(text) => text.to_string(),
                other => crate::value::write_string(other),
            })
            .collect::<Vec<_>>()
            .join(" ")),
        other => Err(bad_input(key, other, "a map of inputs")),
    }
}

fn bad_input(path: &str, value: &Value, expected: &str) -> Error {
    let message = if path.is_empty() {
        format!(
            "get-context: expected {expected}, got {}",
            crate::value::write_prefix(value, 60)
        )
    } else {
        format!(
            "get-context: the ContextGenerationInput field `{path}` must be {expected}, got {}",
            crate::value::write_prefix(value, 60)
        )
    };
    Error::task_failure(Reason::ContextParsingFailure, message).with_details(serde_json::json!({
        "path": path,
        "invalidModel": crate::value::write_prefix(value, 200),
    }))
}

/// What matched, in one paragraph, without a model call.
fn summary(matches: &[Match]) -> String {
    match matches {
        [] => "No file matched.".to_owned(),
        _ => {
            let files: Vec<String> = matches
                .iter()
                .map(|m| {
                    let relevance = crate::value::write_string(&Value::Float(m.relevance));
                    format!("{} ({relevance})", m.path)
                })
                .collect();
            format!(
                "{} matched, best first: {}.",
                crate::value::counted(matches.len() as u64, "file"),
                files.join(", ")
            )
        }
    }
}

/// The excerpts, each after its path as `--- path ---`, separated by blank lines.
pub fn context_text(matches: &[Match]) -> String {
    let parts: Vec<String> = matches
        .iter()
        .map(|m| format!("--- {} ---\n{}", m.path, m.excerpt))
        .collect();
    parts.join("\n\n")
}

/// The text of the files a task names in `:files`, each as `--- path ---` then its text,
/// if `capabilities` allow reading them.
pub fn files_text(paths: &[String], capabilities: &Capabilities) -> Result<String> {
    let mut parts = Vec::with_capacity(paths.len());
    for path in paths {
        capabilities.check_path(Path::new(path), Access::Read)?;
        let text = read_text(Path::new(path), path, false)?.unwrap_or_default();
        parts.push(format!("--- {path} ---\n{text}"));
    }
    Ok(parts.join("\n"))
}

/// The subtype whose answer (a list of paths) becomes an AssociativeMatchResult.
pub const ASSOCIATIVE_MATCHING: &str = "associative_matching";

/// A task of subtype `associative_matching` answers with paths: a JSON list of strings
/// (its `parsedContent`, or its content read as JSON), or one path a line. The result
/// keeps the answer's order, relevance falling from 1.0 by rank, each with the start of
/// the file as its excerpt; `parsedContent` is the AssociativeMatchResult and `content`
/// its context.
pub fn associative_result(result: &Value) -> Result<Value> {
    let paths = answered_paths(result).ok_or_else(|| {
        Error::task_failure(
            Reason::ContextMatchingFailure,
            "an associative_matching task must answer with a list of paths",
        )
    })?;
    let count = paths.len() as f64;
    let mut matches = Vec::with_capacity(paths.len());
    for (rank, path) in paths.into_iter().enumerate() {
        let text = read_text(Path::new(&path), &path, false)?.unwrap_or_default();
        matches.push(Match {
            excerpt: truncate(text.trim(), EXCERPT_CHARS),
            relevance: ((count - rank as f64) / count * 1000.0).round() / 1000.0,
            path,
        });
    }
    let answer = match_result(&matches);
    let mut entries = result
        .as_map()
        .map(|m| m.entries.clone())
        .unwrap_or_default();
    entries.insert(Rc::from("content"), Value::str(context_text(&matches)));
    entries.insert(Rc::from("parsedContent"), answer);
    Ok(Value::Map(Rc::new(crate::value::Map {
        entries,
        task_result: true,
    })))
}

fn answered_paths(result: &Value) -> Option<Vec<String>> {
    let field = |key: &str| result.as_map().and_then(|m| m.get(key)).cloned();
    let listed = match field("parsedContent") {
        Some(list @ Value::List(..)) => Some(list),
        _ => match field("content") {
            Some(Value::Str(text)) => match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(json @ serde_json::Value::Array(_)) => Some(crate::value::from_json(&json)),
                // JSON that is not a list is not an answer of paths.
                Ok(_) => None,
                Err(_) => {
                    let lines: Vec<String> = text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect();
                    return (!lines.is_empty()).then_some(lines);
                }
            },
            _ => None,
        },
    }?;
    let paths: Option<Vec<String>> = listed
        .as_list()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect();
    paths.filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_and_truncation() {
        assert_eq!(first_heading("\n# Title\ntext"), "Title");
        assert_eq!(first_heading("intro\n## Later\n"), "Later");
        assert_eq!(first_heading("just text\nmore"), "just text");
        assert_eq!(first_heading(""), "");
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hi", 2), "hi");
    }

    #[test]
    fn an_index_is_reused_until_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        std::fs::write(dir.path().join("a.md"), "# Apples\nred apples").unwrap();
        std::fs::write(dir.path().join("b.md"), "# Pears\ngreen pears").unwrap();
        let mut indexes = Indexes::default();
        let query = Query {
            text: "apples",
            dir: Some(&root),
            files: None,
            limit: 5,
            strategy: Strategy::Content,
        };
        let first = indexes.search(&query).unwrap();
        assert_eq!(first.len(), 1);
        let built = indexes.by_dir.values().next().unwrap().clone();
        indexes.search(&query).unwrap();
        assert!(Rc::ptr_eq(&built, indexes.by_dir.values().next().unwrap()));
        std::fs::write(dir.path().join("c.md"), "more apples").unwrap();
        let after = indexes.search(&query).unwrap();
        assert_eq!(after.len(), 2);
        assert!(!Rc::ptr_eq(&built, indexes.by_dir.values().next().unwrap()));
    }
}
