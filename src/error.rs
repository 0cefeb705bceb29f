//! The one error type of tasklisp.
//!
//! Language errors (`SYNTAX_ERROR`, `EVAL_ERROR`) and the seeds' `TaskError` union share
//! one representation, so `try`/`catch` sees every failure as the same kind of map and
//! the CLI renders every failure with miette. The payload is boxed to keep
//! `Result<Value>` small on the evaluator's hot path, and it is `Send + Sync` so errors
//! can cross threads (script runners, HTTP providers).

use crate::source::{self, SourceFile, SourceId, Span};
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};
use serde_json::{json, Map, Value as Json};
use std::fmt;
use std::sync::Arc;

mod bounded;
mod printed;
mod reason;
pub use bounded::MAX_MESSAGE;
pub use reason::Reason;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The type of an error: the seeds' `TaskError` types plus the language's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    Eval,
    TaskFailure,
    ResourceExhaustion,
    InvalidOutput,
    Validation,
    XmlParse,
}

/// How errors are printed on stderr (`--error-format`), by the command line and the REPL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFormat {
    Text,
    Json,
}

/// `--error-format json` prints at most this many bytes of error map.
pub const MAX_JSON_ERROR: usize = 64 * 1024;

/// The most bytes of JSON an error keeps of the value it found invalid (`invalidModel`),
/// as answers shown in errors are shortened.
const MAX_INVALID_MODEL: usize = 4 * 1024;

impl ErrorKind {
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "SYNTAX_ERROR",
            ErrorKind::Eval => "EVAL_ERROR",
            ErrorKind::TaskFailure => "TASK_FAILURE",
            ErrorKind::ResourceExhaustion => "RESOURCE_EXHAUSTION",
            ErrorKind::InvalidOutput => "INVALID_OUTPUT",
            ErrorKind::Validation => "VALIDATION_ERROR",
            ErrorKind::XmlParse => "XML_PARSE_ERROR",
        }
    }

    pub fn from_code(code: &str) -> Option<ErrorKind> {
        Some(match code {
            "SYNTAX_ERROR" => ErrorKind::Syntax,
            "EVAL_ERROR" => ErrorKind::Eval,
            "TASK_FAILURE" => ErrorKind::TaskFailure,
            "RESOURCE_EXHAUSTION" => ErrorKind::ResourceExhaustion,
            "INVALID_OUTPUT" => ErrorKind::InvalidOutput,
            "VALIDATION_ERROR" => ErrorKind::Validation,
            "XML_PARSE_ERROR" => ErrorKind::XmlParse,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
struct ErrorData {
    kind: ErrorKind,
    message: String,
    reason: Option<Reason>,
    details: Map<String, Json>,
    span: Option<Span>,
    /// The reader ran out of text inside an unfinished form (the REPL asks for more).
    incomplete: bool,
    /// `(exit n)`: not a failure but a request to end the program; never caught.
    exit_code: Option<i32>,
    /// A suggestion shown under the report ("did you mean `str`?"); not part of the map.
    hint: Option<String>,
    /// For an error inside the prelude: where the user's code called into it.
    call_site: Option<Span>,
    /// The text an unregistered span points into (data given to `read`): kept by the
    /// error, so it is freed with the error rather than registered for good.
    text: Option<Arc<SourceFile>>,
}

#[derive(Clone, Debug)]
pub struct Error(Box<ErrorData>);

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(ErrorData {
            kind,
            message: bounded::cap_message(message.into()),
            reason: None,
            details: Map::new(),
            span: None,
            incomplete: false,
            exit_code: None,
            hint: None,
            call_site: None,
            text: None,
        }))
    }

    /// The request `(exit code)` makes: unwinds to the program's top and ends it.
    pub fn exit(code: i32) -> Error {
        let mut e = Error::eval(format!("exit {code}"));
        e.0.exit_code = Some(code);
        e
    }

    /// A write to standard output that failed. A closed pipe (`tasklisp run x | head`)
    /// means the reader wants no more: the program ends quietly with status 0, as
    /// `(exit 0)` would end it.
    pub fn stdout_write(e: &std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Error::exit(0);
        }
        Error::eval(format!("cannot write output: {e}"))
    }

    /// Adds a suggestion to the rendered report, if there is one.
    pub fn with_hint(mut self, hint: Option<String>) -> Error {
        self.0.hint = hint;
        self
    }

    /// Records `call` as the user's call site when the error points into the prelude and
    /// `call` does not: a report inside `find` or `assoc-in` then also says whose call
    /// it was.
    pub fn seen_from(mut self, call: Span) -> Error {
        let in_prelude = |span: Span| {
            source::source(span.source).is_some_and(|f| f.name == source::PRELUDE_NAME)
        };
        if self.0.call_site.is_none() && self.0.span.is_some_and(in_prelude) && !in_prelude(call) {
            self.0.call_site = Some(call);
        }
        self
    }

    pub fn hint(&self) -> Option<&str> {
        self.0.hint.as_deref()
    }

    pub fn exit_code(&self) -> Option<i32> {
        self.0.exit_code
    }

    pub fn eval(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Eval, message)
    }

    pub fn syntax(message: impl Into<String>, span: Span) -> Error {
        Error::new(ErrorKind::Syntax, message).with_span(span)
    }

    /// A syntax error caused by the text ending inside a form.
    pub fn incomplete(message: impl Into<String>, span: Span) -> Error {
        let mut e = Error::syntax(message, span);
        e.0.incomplete = true;
        e
    }

    /// A `TASK_FAILURE` with a reason such as `tool_execution_error`.
    pub fn task_failure(reason: Reason, message: impl Into<String>) -> Error {
        let mut e = Error::new(ErrorKind::TaskFailure, message);
        e.0.reason = Some(reason);
        e
    }

    /// A `RESOURCE_EXHAUSTION` naming the resource and how much was used.
    pub fn resource(resource: &str, used: u64, limit: u64, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::ResourceExhaustion, message).with_details(json!({
            "resource": resource, "used": used, "limit": limit
        }))
    }

    pub fn validation(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Validation, message)
    }

    pub fn with_span(mut self, span: Span) -> Error {
        self.0.span = Some(span);
        self
    }

    /// The error pointing nowhere: for errors in code the user did not write.
    pub fn without_span(mut self) -> Error {
        self.0.span = None;
        self.0.text = None;
        self
    }

    /// Points the error at `span` of `file`, a text that is not registered: the error
    /// keeps the text to render against, and frees it when it is dropped.
    pub fn with_span_in(mut self, span: Span, file: SourceFile) -> Error {
        self.0.span = Some(Span {
            source: SourceId::UNREGISTERED,
            ..span
        });
        self.0.text = Some(Arc::new(file));
        self
    }

    /// The text `span` points into: the error's own, or a registered one.
    fn file_of(&self, span: Span) -> Option<Arc<SourceFile>> {
        match &self.0.text {
            Some(file) if span.source == SourceId::UNREGISTERED => Some(file.clone()),
            _ => source::source(span.source),
        }
    }

    /// Attaches `span` unless the error already points somewhere more precise.
    pub fn or_span(mut self, span: Span) -> Error {
        if self.0.span.is_none() {
            self.0.span = Some(span);
        }
        self
    }

    /// Merges the entries of a JSON object into the details.
    pub fn with_details(mut self, details: Json) -> Error {
        if let Json::Object(map) = details {
            self.0.details.extend(map);
        }
        self
    }

    pub fn with_detail(mut self, key: &str, value: Json) -> Error {
        self.0.details.insert(key.to_owned(), value);
        self
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Error {
        self.0.message = bounded::cap_message(message.into());
        self
    }

    pub fn with_reason(mut self, reason: Reason) -> Error {
        self.0.reason = Some(reason);
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The reason as its string (what the map form shows).
    pub fn reason(&self) -> Option<&str> {
        self.0.reason.as_ref().map(Reason::as_str)
    }
    /// Whether this is a failure for `reason`: how code asks, so the name is checked.
    pub fn has_reason(&self, reason: &Reason) -> bool {
        self.0.reason.as_ref() == Some(reason)
    }
    pub fn details(&self) -> &Map<String, Json> {
        &self.0.details
    }
    pub fn span(&self) -> Option<Span> {
        self.0.span
    }
    pub fn is_incomplete(&self) -> bool {
        self.0.incomplete
    }

    /// The error as the map `try`/`catch` binds and `--error-format json` prints:
    /// `{"type" "reason" "message" "details"}` (plus `"resource"` for exhaustion).
    pub fn to_json(&self) -> Json {
        Json::Object(self.to_json_map())
    }

    /// The map of `to_json`, for callers that add a key.
    pub fn to_json_map(&self) -> Map<String, Json> {
        let mut map = Map::new();
        map.insert("type".into(), Json::from(self.0.kind.code()));
        if let Some(reason) = &self.0.reason {
            map.insert("reason".into(), Json::from(reason.as_str()));
        }
        map.insert("message".into(), Json::from(self.0.message.as_str()));
        self.insert_kind_fields(&mut map);
        map.insert("details".into(), Json::Object(self.0.details.clone()));
        if let Some(span) = self.0.span {
            if let Some(file) = self.file_of(span) {
                let (line, column) = source::line_col(&file.text, span.start as usize);
                map.insert(
                    "location".into(),
                    json!({"file": file.name, "line": line, "column": column}),
                );
            }
        }
        map
    }

    /// The top-level fields seed 002's TaskError has for this kind, read from the
    /// details: TASK_FAILURE's `content` (the answer or program output, `""` when none)
    /// and `notes`; VALIDATION_ERROR's `path` and `invalidModel`; RESOURCE_EXHAUSTION's
    /// `resource` and `metrics`.
    fn insert_kind_fields(&self, map: &mut Map<String, Json>) {
        let details = &self.0.details;
        let detail = |key: &str| details.get(key).cloned();
        match self.0.kind {
            ErrorKind::TaskFailure => {
                let content = detail("content")
                    .filter(Json::is_string)
                    .or_else(|| detail("script_stdout"))
                    .unwrap_or_else(|| Json::from(""));
                map.insert("content".into(), content);
                let notes = detail("notes").unwrap_or_else(|| json!({}));
                map.insert("notes".into(), notes);
            }
            ErrorKind::Validation => {
                map.insert(
                    "path".into(),
                    detail("path").unwrap_or_else(|| Json::from("")),
                );
                map.insert(
                    "invalidModel".into(),
                    detail("invalidModel").unwrap_or(Json::Null),
                );
            }
            ErrorKind::ResourceExhaustion => {
                if let Some(resource) = detail("resource") {
                    map.insert("resource".into(), resource);
                }
                if let (Some(used), Some(limit)) = (detail("used"), detail("limit")) {
                    map.insert("metrics".into(), json!({"used": used, "limit": limit}));
                }
            }
            _ => {}
        }
    }

    /// A VALIDATION_ERROR about `value` found at `path` (a dotted path or JSON pointer,
    /// `""` at the root): `path` and `invalidModel` (the value, shortened) in its map.
    pub fn invalid_model(message: impl Into<String>, path: &str, value: &Json) -> Error {
        Error::validation(message).with_details(json!({
            "path": path,
            "invalidModel": bounded::bounded(value, MAX_INVALID_MODEL),
        }))
    }

    /// The map form, shortened to at most `max` bytes of JSON text (long strings and
    /// lists cut with a marker): what `--error-format json` prints.
    pub fn to_bounded_json(&self, max: usize) -> Json {
        bounded::bounded(&self.to_json(), max)
    }

    /// Rebuilds an error from its map form (what `catch` saw), so a handler can re-raise it.
    pub fn from_json(value: &Json) -> Option<Error> {
        let kind = ErrorKind::from_code(value.get("type")?.as_str()?)?;
        let message = value.get("message").and_then(Json::as_str).unwrap_or("");
        let mut e = Error::new(kind, message);
        if let Some(reason) = value.get("reason").and_then(Json::as_str) {
            e.0.reason = Some(Reason::parse(reason));
        }
        if let Some(Json::Object(details)) = value.get("details") {
            e.0.details = bounded::cap_details(details);
        }
        Some(e)
    }

    /// The error as `format` prints it on stderr: the map form within
    /// [`MAX_JSON_ERROR`] bytes, or the report (in colour when stderr is a terminal).
    pub fn formatted(&self, format: ErrorFormat) -> String {
        match format {
            ErrorFormat::Json => self.to_bounded_json(MAX_JSON_ERROR).to_string(),
            ErrorFormat::Text => self
                .render(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .trim_end()
                .to_owned(),
        }
    }

    /// The report as a person reads it: miette's rendering against the source text.
    pub fn render(&self, color: bool) -> String {
        self.render_as(color, miette::Severity::Error)
    }

    /// The report as [`render`](Error::render) shows it, marked as an error or as a
    /// warning (`check`'s problems in code a run may never reach).
    pub fn render_as(&self, color: bool, severity: miette::Severity) -> String {
        // A message may quote a model's answer or a program's output: its control
        // characters are shown, never sent to the terminal.
        let mut shown = self.clone();
        shown.0.message = crate::terminal::terminal_safe(&self.0.message, true);
        shown.0.hint = self
            .0
            .hint
            .as_deref()
            .map(|hint| crate::terminal::terminal_safe(hint, true));
        let handler = if color {
            miette::GraphicalReportHandler::new()
        } else {
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
                .with_width(usize::MAX / 4)
        };
        let with_source = WithSource {
            severity,
            ..WithSource::new(&shown)
        };
        let mut out = String::new();
        if handler.render_report(&mut out, &with_source).is_err() {
            out = format!("{}: {}", self.0.kind.code(), shown);
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.reason {
            Some(reason) => write!(f, "{reason}: {}", self.0.message),
            None => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for Error {}

impl Diagnostic for Error {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.0.kind.code()))
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.0.span?;
        let label = if self.0.incomplete {
            "this is never closed"
        } else {
            "here"
        };
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some(label.to_owned()),
            span.start as usize,
            span.len as usize,
        ))))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let details = (self.0.kind != ErrorKind::Syntax)
            .then(|| printed::lines(&self.0.details).join("\n"))
            .filter(|lines| !lines.is_empty());
        let call_site = self.0.call_site.and_then(|span| {
            let file = source::source(span.source)?;
            let (line, column) = source::line_col(&file.text, span.start as usize);
            Some(format!("called from {}:{line}:{column}", file.name))
        });
        let parts: Vec<String> = [call_site, self.0.hint.clone(), details]
            .into_iter()
            .flatten()
            .collect();
        (!parts.is_empty()).then(|| Box::new(parts.join("; ")) as Box<dyn fmt::Display + 'a>)
    }
}

/// An error paired with the text its span points into, for rendering.
struct WithSource<'a> {
    error: &'a Error,
    severity: miette::Severity,
    source: Option<NamedSource<String>>,
    /// `file:line:column`, named instead of quoting a line too long to show.
    place: Option<String>,
}

/// A source line longer than this (in bytes) is not quoted in a report: a line of
/// 100,000 brackets would bury the message.
const MAX_QUOTED_LINE: usize = 1_000;

impl<'a> WithSource<'a> {
    fn new(error: &'a Error) -> Self {
        let found = error
            .span()
            .and_then(|span| error.file_of(span).map(|file| (span, file)));
        let Some((span, file)) = found else {
            let forgotten = error
                .span()
                .is_some_and(|span| source::forgotten(span.source));
            return WithSource {
                error,
                severity: miette::Severity::Error,
                source: None,
                place: forgotten.then(|| source::FORGOTTEN.to_owned()),
            };
        };
        let bytes = file.text.as_bytes();
        let start = (span.start as usize).min(bytes.len());
        let line_start = bytes
            .get(..start)
            .unwrap_or_default()
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line_end = bytes
            .get(start..)
            .unwrap_or_default()
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        if line_end - line_start > MAX_QUOTED_LINE {
            let (line, column) = source::line_col(&file.text, start);
            let place = format!("{}:{line}:{column}", file.name);
            return WithSource {
                error,
                severity: miette::Severity::Error,
                source: None,
                place: Some(place),
            };
        }
        let source = NamedSource::new(file.name.clone(), file.text.to_string());
        WithSource {
            error,
            severity: miette::Severity::Error,
            source: Some(source),
            place: None,
        }
    }
}

impl fmt::Debug for WithSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.error, f)
    }
}
impl fmt::Display for WithSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.error, f)
    }
}
impl std::error::Error for WithSource<'_> {}

impl Diagnostic for WithSource<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.error.code()
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.source.as_ref()?;
        self.error.labels()
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        match (&self.place, self.error.help()) {
            (Some(place), Some(help)) => Some(Box::new(format!("at {place}; {help}"))),
            (Some(place), None) => Some(Box::new(format!("at {place}"))),
            (None, help) => help,
        }
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_stays_small() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn a_report_shows_control_characters_instead_of_sending_them() {
        let e = Error::eval("the model said \u{1b}]52;c;cGF5bG9hZA==\u{7}\u{1b}[2J done")
            .with_hint(Some("try \u{1b}[31mred".to_owned()));
        let report = e.render(false);
        assert!(!report.contains('\u{1b}'), "{report:?}");
        assert!(
            report.contains("\\u{1b}]52;c;cGF5bG9hZA==\\u{7}"),
            "{report}"
        );
        assert!(report.contains("try \\u{1b}[31mred"), "{report}");
    }

    #[test]
    fn map_form_round_trips() {
        let e = Error::task_failure(Reason::ToolExecutionError, "exit 3")
            .with_detail("script_exit_code", json!(3));
        let m = e.to_json();
        assert_eq!(m["type"], "TASK_FAILURE");
        assert_eq!(m["reason"], "tool_execution_error");
        assert_eq!(m["details"]["script_exit_code"], 3);
        let back = Error::from_json(&m).expect("a valid error map");
        assert_eq!(back.kind(), ErrorKind::TaskFailure);
        assert_eq!(back.reason(), Some("tool_execution_error"));
    }

    #[test]
    fn a_very_long_line_is_named_not_quoted() {
        let text = format!("(prn {})", "(".repeat(20_000));
        let id = source::add_source("wide.sexp", text.as_str());
        let e = Error::syntax(
            "nesting deeper than 10000 levels",
            Span::new(id, 10_005, 10_006),
        );
        let report = e.render(false);
        assert!(report.contains("at wide.sexp:1:10006"), "{report}");
        assert!(report.len() < 1_000, "{report}");
    }

    #[test]
    fn render_names_the_code_and_points_at_source() {
        let id = source::add_source("t.sexp", "(+ 1 foo)");
        let e = Error::eval("unbound symbol: foo").with_span(Span::new(id, 5, 8));
        let text = e.render(false);
        assert!(text.contains("EVAL_ERROR"), "{text}");
        assert!(text.contains("unbound symbol: foo"), "{text}");
        assert!(text.contains("t.sexp"), "{text}");
    }
}
