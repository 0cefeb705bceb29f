//! What the language server answers: diagnostics (what `tasklisp check` reports),
//! completion and hover (the REPL's names and `:describe`), go to definition, document
//! symbols, formatting (`tasklisp fmt`).

use super::document::{path_uri, Document};
use super::Help;
use crate::cst::{self, Node, NodeKind};
use crate::error::Error;
use crate::eval::{Interp, Limits};
use crate::module::names::Reach;
use crate::source::{Origin, SourceId};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

pub fn capabilities() -> Json {
    json!({
        "capabilities": {
            "textDocumentSync": {"openClose": true, "change": 1, "save": true},
            "completionProvider": {},
            "hoverProvider": true,
            "definitionProvider": true,
            "documentSymbolProvider": true,
            "documentFormattingProvider": true,
        },
        "serverInfo": {"name": "tasklisp", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// An interpreter for looking things up and checking, printing nowhere (stdout is the
/// protocol's), with checking's limits: the macros a document defines run with no
/// rights, within fuel, time and memory.
fn interp(limits: &Limits) -> Option<Interp> {
    let limits = crate::module::checking_limits(limits);
    Interp::with_output(limits, Box::new(std::io::sink())).ok()
}

/// Texts larger than this get the reader's diagnostics only, so each edit stays quick.
const MAX_CHECKED: usize = 2 * 1024 * 1024;

/// What `tasklisp check` reports of the document's text (its file on disk, for XML).
pub fn diagnostics(document: &Document, limits: &Limits) -> Vec<Json> {
    let path = document
        .path()
        .unwrap_or_else(|| PathBuf::from(&document.uri));
    let name = path.display().to_string();
    if !document.is_xml() {
        // A syntax error is all there is to say; reading as data registers nothing.
        if let Err(e) = crate::eval::reader::read_data(&name, &document.text) {
            return vec![diagnostic(document, &e, 1, None)];
        }
        if document.text.len() > MAX_CHECKED {
            return Vec::new();
        }
    }
    let Some(interp) = interp(limits) else {
        return Vec::new();
    };
    let checked = crate::module::Checked::default();
    let mut own = None;
    if !document.is_xml() {
        let id = crate::source::register(Origin::Text, name.as_str(), document.text.as_str());
        if let Ok(forms) = crate::eval::reader::read_all(&document.text, id) {
            crate::module::declare_forms(&interp, &checked, &path, forms);
        }
        own = Some(id);
    }
    match crate::module::check_file(&interp, &checked, &path) {
        Err(e) => vec![diagnostic(document, &e, 1, own)],
        Ok(analysed) => crate::module::check_names(&interp, checked, &[analysed])
            .iter()
            .map(|p| {
                let severity = if p.reach == Reach::Certain { 1 } else { 2 };
                diagnostic(document, &p.error, severity, own)
            })
            .collect(),
    }
}

/// An error as a diagnostic, at its place when that is in this document (else at the
/// start, saying where).
fn diagnostic(document: &Document, error: &Error, severity: u8, own: Option<SourceId>) -> Json {
    let path = document.path().map(|p| p.display().to_string());
    let place = error.span().filter(|span| {
        own == Some(span.source)
            || span.source == SourceId::UNREGISTERED
            || crate::source::source(span.source).map(|s| s.name.clone()) == path
    });
    let range = match place {
        Some(span) => document.range(span.start as usize, span.end()),
        None => document.range(0, 0),
    };
    let mut message = format!("{}: {}", error.kind().code(), error.message());
    if let (None, Some(json)) = (place, error.to_json().get("location").cloned()) {
        message.push_str(&format!(" (at {json})"));
    }
    json!({"range": range, "severity": severity, "source": "tasklisp", "message": message})
}

/// The atom (symbol) at a position, with its byte range.
fn word_at(document: &Document, position: Option<&Json>) -> Option<(String, usize, usize)> {
    let offset = document.offset(position);
    let nodes = cst::parse(&document.text);
    let (node, _) = cst::node_at(&nodes, offset)?;
    matches!(node.kind, NodeKind::Atom | NodeKind::Str)
        .then(|| (node.text(&document.text).to_owned(), node.start, node.end))
}

pub fn hover(document: &Document, position: Option<&Json>, limits: &Limits, help: Help) -> Json {
    let Some((word, start, end)) = word_at(document, position) else {
        return Json::Null;
    };
    let own = definitions(&document.text)
        .into_iter()
        .find(|d| d.name == word)
        .map(|d| format!("{} {}", d.what, d.head));
    let text = own.or_else(|| {
        let interp = interp(limits)?;
        let described = (help.describe)(&interp, &word);
        (!described.starts_with("nothing is named")).then_some(described)
    });
    match text {
        Some(text) => json!({
            "contents": {"kind": "markdown", "value": format!("```\n{text}\n```")},
            "range": document.range(start, end),
        }),
        None => Json::Null,
    }
}

/// The REPL's completion names, and the names the document defines.
pub fn completion(document: &Document, limits: &Limits, help: Help) -> Json {
    let mut names = interp(limits).map_or_else(Vec::new, |i| (help.names)(&i));
    names.extend(definitions(&document.text).into_iter().map(|d| d.name));
    names.sort();
    names.dedup();
    let items: Vec<Json> = names.into_iter().map(|n| json!({"label": n})).collect();
    json!({"isIncomplete": false, "items": items})
}

/// Where the name under the cursor is defined: in the document, in an XML file it
/// imports; for the file name of an `import` or `load`, that file.
pub fn definition(document: &Document, position: Option<&Json>) -> Json {
    let Some((word, _, _)) = word_at(document, position) else {
        return Json::Null;
    };
    let here = document.path();
    let dir = here
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    if let Some(file) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
        let path = dir.join(file);
        return match path.is_file() {
            true => location(&path_uri(&path), json!({"start": zero(), "end": zero()})),
            false => Json::Null,
        };
    }
    if let Some(d) = definitions(&document.text)
        .into_iter()
        .find(|d| d.name == word)
    {
        return location(&document.uri, document.range(d.start, d.end));
    }
    let task = word.rsplit('/').next().unwrap_or(&word);
    for import in imports(&document.text) {
        let path = dir.join(&import);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Some(at) = text.find(&format!("name=\"{task}\"")) {
            let line = text.get(..at).map_or(0, |t| t.matches('\n').count());
            let position = json!({"line": line, "character": 0});
            return location(
                &path_uri(&path),
                json!({"start": position, "end": position}),
            );
        }
    }
    Json::Null
}

fn zero() -> Json {
    json!({"line": 0, "character": 0})
}

fn location(uri: &str, range: Json) -> Json {
    json!({"uri": uri, "range": range})
}

/// The document's definitions (or an XML file's tasks) as document symbols.
pub fn symbols(document: &Document) -> Json {
    let found: Vec<Definition> = if document.is_xml() {
        xml_tasks(&document.text)
    } else {
        definitions(&document.text)
    };
    let symbols: Vec<Json> = found
        .iter()
        .map(|d| {
            let kind = match d.what {
                "task" => 6,
                "procedure" | "macro" => 12,
                "test" => 24,
                _ => 13,
            };
            let range = document.range(d.start, d.end);
            json!({"name": d.name, "kind": kind, "range": range, "selectionRange": range})
        })
        .collect();
    Json::from(symbols)
}

/// The whole document in the canonical layout; nothing when it does not read.
pub fn formatting(document: &Document) -> Json {
    if document.is_xml() {
        return Json::Null;
    }
    match crate::fmt::format_source(&document.uri, &document.text) {
        Ok(formatted) if formatted != document.text => json!([{
            "range": document.range(0, document.text.len()),
            "newText": formatted,
        }]),
        Ok(_) => json!([]),
        Err(_) => Json::Null,
    }
}

/// A top-level definition.
struct Definition {
    name: String,
    /// `procedure`, `variable`, `macro`, `task`, `test`.
    what: &'static str,
    /// The definition's first line, for hover.
    head: String,
    start: usize,
    end: usize,
}

/// The top-level `define`, `defmacro`, `deftask` and `deftest` forms of a text.
fn definitions(text: &str) -> Vec<Definition> {
    cst::parse(text)
        .iter()
        .filter_map(|form| {
            let mut elements = form.elements();
            let head = elements.next()?.text(text);
            let named = elements.next()?;
            let (what, name) = match (head, &named.kind) {
                ("define", NodeKind::Seq { .. }) => ("procedure", named.elements().next()?),
                ("define", _) => ("variable", named),
                ("defmacro", _) => ("macro", named),
                ("deftask", _) => ("task", named),
                ("deftest", _) => ("test", named),
                _ => return None,
            };
            let first_line = form.text(text).lines().next().unwrap_or("").to_owned();
            Some(Definition {
                name: name.text(text).trim_matches('"').to_owned(),
                what,
                head: first_line,
                start: form.start,
                end: form.end,
            })
        })
        .collect()
}

/// The files a text's top-level `(import "FILE" …)` forms name.
fn imports(text: &str) -> Vec<String> {
    cst::parse(text)
        .iter()
        .filter_map(|form: &Node| {
            let mut elements = form.elements();
            (elements.next()?.text(text) == "import").then_some(())?;
            let file = elements.next()?;
            (file.kind == NodeKind::Str).then(|| file.text(text).trim_matches('"').to_owned())
        })
        .collect()
}

/// The `<task name="…">` elements of an XML template file.
fn xml_tasks(text: &str) -> Vec<Definition> {
    let Ok(pattern) = regex::Regex::new(r#"<task\b[^>]*?\bname="([^"]+)""#) else {
        return Vec::new();
    };
    pattern
        .captures_iter(text)
        .filter_map(|c| {
            let (all, name) = (c.get(0)?, c.get(1)?);
            Some(Definition {
                name: name.as_str().to_owned(),
                what: "task",
                head: all.as_str().to_owned(),
                start: all.start(),
                end: all.end(),
            })
        })
        .collect()
}
