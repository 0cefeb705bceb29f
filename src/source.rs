//! Source texts and the spans that point into them.
//!
//! Every text the interpreter reads (a file, an `eval` string, a REPL input, an XML
//! template) is registered and named by a small id, so a `Span` is `Copy` and errors
//! can be rendered against the original text long after it was read. The registry is
//! bounded per [`Origin`]: past its budget the oldest texts are forgotten, and an error
//! pointing into one says so ([`FORGOTTEN`]) instead of quoting it.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, RwLock};

/// The prelude's source name, in reports.
pub const PRELUDE_NAME: &str = "<prelude>";

/// Identifies a registered source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceId(u32);

impl SourceId {
    /// The source of text read but not registered (data read by `read`): an error with
    /// a span into it holds the text itself (`Error::with_span_in`).
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

/// Where a text came from, which decides how long the registry keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the binary (the prelude): kept for the life of the process.
    Builtin,
    /// A file: a program, a module, an XML template file.
    File,
    /// Text that arrives while programs run: REPL inputs, `-e`, strings given to the
    /// library.
    Text,
}

/// How much of each origin the registry keeps: past either bound the oldest texts
/// are forgotten (a long-lived process that evaluates model output, or a fuzzer,
/// stays in bounded memory). A flood of texts never pushes out the program's files.
#[derive(Clone, Copy)]
struct Budget {
    bytes: usize,
    count: usize,
}

const FILE_BUDGET: Budget = Budget {
    bytes: 128 << 20,
    count: 4_096,
};

const TEXT_BUDGET: Budget = Budget {
    bytes: 16 << 20,
    count: 4_096,
};

/// Said in place of a quoted line when the text an error points into was forgotten.
pub const FORGOTTEN: &str =
    "a text no longer kept (only the most recent texts are kept for error reports)";

struct Entry {
    file: Arc<SourceFile>,
    origin: Origin,
    content: u64,
}

/// The texts kept; equal texts under the same name share one id, so a file loaded
/// again (or the same input evaluated again) adds nothing.
struct Registry {
    next: u32,
    entries: HashMap<u32, Entry>,
    by_content: HashMap<u64, u32>,
    files: Kept,
    texts: Kept,
}

/// The evictable ids of one origin with their sizes, oldest first, within a budget.
struct Kept {
    budget: Budget,
    ids: VecDeque<(u32, usize)>,
    bytes: usize,
}

impl Kept {
    fn new(budget: Budget) -> Kept {
        Kept {
            budget,
            ids: VecDeque::new(),
            bytes: 0,
        }
    }

    fn push(&mut self, id: u32, bytes: usize) {
        self.ids.push_back((id, bytes));
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// Moves `id` to the newest end: a text registered again is in use again.
    fn refresh(&mut self, id: u32) {
        if let Some(at) = self.ids.iter().rposition(|&(i, _)| i == id) {
            if let Some(kept) = self.ids.remove(at) {
                self.ids.push_back(kept);
            }
        }
    }

    /// Takes out the oldest id while the budget is exceeded, never the newest one.
    fn pop_over_budget(&mut self) -> Option<u32> {
        let within = self.bytes <= self.budget.bytes && self.ids.len() <= self.budget.count;
        if within || self.ids.len() <= 1 {
            return None;
        }
        let (id, bytes) = self.ids.pop_front()?;
        self.bytes = self.bytes.saturating_sub(bytes);
        Some(id)
    }
}

impl Registry {
    fn new(files: Budget, texts: Budget) -> Registry {
        Registry {
            next: 0,
            entries: HashMap::new(),
            by_content: HashMap::new(),
            files: Kept::new(files),
            texts: Kept::new(texts),
        }
    }

    fn get(&self, id: SourceId) -> Option<Arc<SourceFile>> {
        self.entries.get(&id.0).map(|entry| entry.file.clone())
    }

    fn forgotten(&self, id: SourceId) -> bool {
        id.0 < self.next && !self.entries.contains_key(&id.0)
    }

    fn add(&mut self, origin: Origin, name: String, text: Arc<str>) -> SourceId {
        let content = content_hash(&name, &text);
        if let Some(id) = self.same(origin, content, &name, &text) {
            if let Some(kept) = self.kept(origin) {
                kept.refresh(id);
            }
            return SourceId(id);
        }
        let id = self.next;
        self.next = self.next.saturating_add(1);
        let bytes = text.len();
        let file = Arc::new(SourceFile { name, text });
        self.entries.insert(
            id,
            Entry {
                file,
                origin,
                content,
            },
        );
        self.by_content.insert(content, id);
        if let Some(kept) = self.kept(origin) {
            kept.push(id, bytes);
        }
        while let Some(oldest) = self.kept(origin).and_then(Kept::pop_over_budget) {
            if let Some(entry) = self.entries.remove(&oldest) {
                if self.by_content.get(&entry.content) == Some(&oldest) {
                    self.by_content.remove(&entry.content);
                }
            }
        }
        SourceId(id)
    }

    /// The id of a kept text equal to this one, from the same origin.
    fn same(&self, origin: Origin, content: u64, name: &str, text: &str) -> Option<u32> {
        let id = *self.by_content.get(&content)?;
        let entry = self.entries.get(&id)?;
        (entry.origin == origin && entry.file.name == name && &*entry.file.text == text)
            .then_some(id)
    }

    fn kept(&mut self, origin: Origin) -> Option<&mut Kept> {
        match origin {
            Origin::Builtin => None,
            Origin::File => Some(&mut self.files),
            Origin::Text => Some(&mut self.texts),
        }
    }
}

fn content_hash(name: &str, text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    (name, text).hash(&mut hasher);
    hasher.finish()
}

static SOURCES: LazyLock<RwLock<Registry>> =
    LazyLock::new(|| RwLock::new(Registry::new(FILE_BUDGET, TEXT_BUDGET)));

/// Registers a text that arrives while programs run (see [`Origin::Text`]).
pub fn add_source(name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceId {
    register(Origin::Text, name, text)
}

/// Registers a text under `name` and returns its id.
pub fn register(origin: Origin, name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceId {
    let mut sources = SOURCES.write().unwrap_or_else(|e| e.into_inner());
    sources.add(origin, name.into(), text.into())
}

/// The registered source `id`, or `None` when it was never registered or is forgotten.
pub fn source(id: SourceId) -> Option<Arc<SourceFile>> {
    SOURCES.read().unwrap_or_else(|e| e.into_inner()).get(id)
}

/// Whether `id` was registered and its text has since been forgotten.
pub fn forgotten(id: SourceId) -> bool {
    SOURCES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .forgotten(id)
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

    const SMALL: Budget = Budget {
        bytes: 100,
        count: 3,
    };

    fn add(registry: &mut Registry, origin: Origin, name: &str, text: &str) -> SourceId {
        registry.add(origin, name.to_owned(), Arc::from(text))
    }

    #[test]
    fn the_oldest_texts_are_forgotten_past_the_count() {
        let mut registry = Registry::new(SMALL, SMALL);
        let ids: Vec<SourceId> = (0..5)
            .map(|i| add(&mut registry, Origin::Text, "<eval>", &format!("(+ {i} 1)")))
            .collect();
        assert_eq!(registry.entries.len(), 3);
        assert!(registry.forgotten(ids[0]) && registry.forgotten(ids[1]));
        let kept = registry.get(ids[4]).expect("the newest is kept");
        assert_eq!(&*kept.text, "(+ 4 1)");
        assert!(!registry.forgotten(ids[4]));
        assert!(
            !registry.forgotten(SourceId(99)),
            "never registered is not forgotten"
        );
    }

    #[test]
    fn the_oldest_texts_are_forgotten_past_the_bytes_but_never_the_newest() {
        let mut registry = Registry::new(SMALL, SMALL);
        let first = add(&mut registry, Origin::Text, "a", &"x".repeat(60));
        let second = add(&mut registry, Origin::Text, "b", &"y".repeat(60));
        assert!(registry.forgotten(first));
        assert_eq!(registry.texts.bytes, 60);
        let huge = add(&mut registry, Origin::Text, "c", &"z".repeat(500));
        assert!(registry.forgotten(second));
        assert!(
            registry.get(huge).is_some(),
            "a text over the budget alone is kept"
        );
    }

    #[test]
    fn files_and_the_prelude_outlive_a_flood_of_texts() {
        let mut registry = Registry::new(SMALL, SMALL);
        let prelude = add(&mut registry, Origin::Builtin, "<prelude>", "(define x 1)");
        let file = add(&mut registry, Origin::File, "main.sexp", "(run)");
        for i in 0..1_000 {
            add(&mut registry, Origin::Text, "<read>", &format!("({i}"));
        }
        assert!(registry.get(prelude).is_some());
        assert!(registry.get(file).is_some());
        assert_eq!(registry.entries.len(), 5);
        assert_eq!(registry.by_content.len(), 5);
    }

    #[test]
    fn the_same_text_under_the_same_name_shares_its_id_and_is_kept_longer() {
        let mut registry = Registry::new(SMALL, SMALL);
        let main = add(&mut registry, Origin::File, "main.sexp", "(run)");
        add(&mut registry, Origin::File, "a.sexp", "(a)");
        assert_eq!(add(&mut registry, Origin::File, "main.sexp", "(run)"), main);
        add(&mut registry, Origin::File, "b.sexp", "(b)");
        add(&mut registry, Origin::File, "c.sexp", "(c)");
        assert!(
            registry.get(main).is_some(),
            "loaded again, so newer than a.sexp"
        );
        assert_ne!(
            add(&mut registry, Origin::File, "other.sexp", "(run)"),
            main
        );
        assert_ne!(add(&mut registry, Origin::Text, "main.sexp", "(run)"), main);
    }
}
