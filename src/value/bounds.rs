//! The size bounds every builtin and traversal keeps to, so that no program (and no
//! data a model sends) can make the interpreter run out of memory: the longest string,
//! the longest list, the most nodes one walk over data may visit.
//!
//! Lists and maps may share structure, so forty small lists can describe a tree of 2⁴⁰
//! leaves: anything that walks data as a tree (JSON, `flatten`, code rebuilt from data)
//! counts the nodes it visits and stops at a limit.

use crate::error::{Error, Result};
use crate::value::Value;
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Strings longer than this (in bytes, 256 MiB) are refused, so that doubling a string
/// in a loop ends in an error rather than in the process running out of memory.
pub const MAX_STRING_BYTES: usize = 1 << 28;

/// Lists longer than this (16 Mi elements, 256 MiB of values) are refused by the
/// builtins that build lists.
pub const MAX_LIST_LEN: usize = 1 << 24;

/// Refuses to build a string of `len` bytes when that is over the limit.
pub fn check_string_length(who: &str, len: usize) -> Result<()> {
    if len > MAX_STRING_BYTES {
        return Err(Error::resource(
            "memory",
            len as u64,
            MAX_STRING_BYTES as u64,
            format!("{who}: the result would be longer than {MAX_STRING_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Appends `piece` to `out` unless the result would pass the string limit: checked
/// before the push, so a refused result never grows the buffer (doubling a 256 MiB
/// string would otherwise reserve 512 MiB first).
pub fn push_within(who: &str, out: &mut String, piece: &str) -> Result<()> {
    check_string_length(who, out.len().saturating_add(piece.len()))?;
    out.push_str(piece);
    Ok(())
}

/// Refuses to build a list of `len` elements when that is over the limit.
pub fn check_list_length(who: &str, len: u128) -> Result<()> {
    if len > MAX_LIST_LEN as u128 {
        return Err(Error::resource(
            "memory",
            u64::try_from(len).unwrap_or(u64::MAX),
            MAX_LIST_LEN as u64,
            format!("{who}: a list of more than {MAX_LIST_LEN} elements"),
        ));
    }
    Ok(())
}

/// The heap one element of a list of fresh strings takes besides its text: the value,
/// the shared string's header, and the allocator's own.
const STRING_ELEMENT_BYTES: u128 = 16 + 40 + 16;

/// Refuses to split `text_bytes` of text into a list of `pieces` strings when the
/// result would take more than the string limit (256 MiB).
pub fn check_string_list(who: &str, pieces: usize, text_bytes: usize) -> Result<()> {
    check_list_length(who, pieces as u128)?;
    let bytes = pieces as u128 * STRING_ELEMENT_BYTES + text_bytes as u128;
    if bytes > MAX_STRING_BYTES as u128 {
        return Err(Error::resource(
            "memory",
            u64::try_from(bytes).unwrap_or(u64::MAX),
            MAX_STRING_BYTES as u64,
            format!("{who}: {pieces} strings would take more than {MAX_STRING_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Files the interpreter reads (`run`, `import`, `load`, `read-file`) larger than this
/// (64 MiB) are refused unless `--max-file-size` raises it.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads a whole file of at most `limit` bytes. Only regular files are read: a FIFO
/// or a device (`/dev/zero`) could block forever or never end. The file is opened
/// without blocking, so a FIFO with no writer is refused rather than waited on.
pub fn read_file_bytes(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let cannot =
        |why: &dyn std::fmt::Display| Error::eval(format!("cannot read {}: {why}", path.display()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| cannot(&e))?;
    let meta = file.metadata().map_err(|e| cannot(&e))?;
    if !meta.is_file() {
        return Err(cannot(&"not a regular file"));
    }
    let too_big = |size: u64| {
        Error::resource(
            "file",
            size,
            limit,
            format!(
                "cannot read {}: larger than {limit} bytes (--max-file-size raises the limit)",
                path.display()
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: never read past the limit.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(&e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_file_bytes`] as UTF-8 text.
pub fn read_file_text(path: &Path, limit: u64) -> Result<String> {
    String::from_utf8(read_file_bytes(path, limit)?).map_err(|e| {
        Error::eval(format!(
            "cannot read {}: not valid UTF-8 (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Steps (items, nodes) a loop inside a builtin takes between two checks of the
/// interpreter's limits (`Interp::poll`: Ctrl-C, the deadline, fuel, memory): often
/// enough that a call on the largest data stops within milliseconds of a limit, rarely
/// enough that the checks cost nothing measurable.
pub const POLL_EVERY: u64 = 4096;

/// A check of the interpreter's limits (`|| interp.poll()`) handed to a walk over data
/// that does not know the interpreter; the walk calls it every [`POLL_EVERY`] nodes.
pub type Poll<'a> = &'a dyn Fn() -> Result<()>;

/// The check for walks no limit may stop (printing a message, a test's report).
pub fn never_stop() -> Result<()> {
    Ok(())
}

/// Nodes one traversal may visit: as many as the largest list a builtin may build.
pub const MAX_NODES: u64 = 1 << 24;

/// After this many nodes a traversal measures the whole tree it walks (in time
/// proportional to the distinct nodes), so a walk that could never finish ends at once
/// instead of at its limit.
const MEASURE_AT: u64 = 1 << 18;

/// Counts the nodes a traversal visits, failing with `RESOURCE_EXHAUSTION` past its limit.
pub struct Budget {
    who: &'static str,
    visited: u64,
    limit: u64,
    /// The value walked, measured once the walk is long.
    root: Option<Value>,
}

impl Budget {
    /// A budget of [`MAX_NODES`] for walking `root`.
    pub fn new(who: &'static str, root: &Value) -> Budget {
        Budget::for_value(who, MAX_NODES, root)
    }

    /// A budget of `limit` nodes for walking `root`.
    pub fn for_value(who: &'static str, limit: u64, root: &Value) -> Budget {
        Budget {
            root: Some(root.clone()),
            ..Budget::with_limit(who, limit)
        }
    }

    /// A budget of `limit` nodes for walks over values not known in advance.
    pub fn with_limit(who: &'static str, limit: u64) -> Budget {
        Budget {
            who,
            visited: 0,
            limit,
            root: None,
        }
    }

    /// Counts one node.
    #[inline]
    pub fn visit(&mut self) -> Result<()> {
        self.visited += 1;
        if self.visited > self.limit {
            return Err(self.exhausted(self.visited));
        }
        if self.visited == MEASURE_AT {
            if let Some(root) = self.root.take() {
                if let Some(size) = tree_size_over(&root, self.limit) {
                    return Err(self.exhausted(size));
                }
            }
        }
        Ok(())
    }

    fn exhausted(&self, used: u64) -> Error {
        Error::resource(
            "size",
            used,
            self.limit,
            format!(
                "{}: the data has more than {} nodes (shared structure counts each time it is reached)",
                self.who, self.limit
            ),
        )
    }

    /// The nodes visited so far.
    pub fn visited(&self) -> u64 {
        self.visited
    }
}

/// The number of nodes of `value` seen as a tree (shared parts counted each time they
/// are reached) when that is over `limit`; `None` when it is within. Each distinct list
/// or map that may be shared is measured once, iteratively, so a deep nest costs heap,
/// not stack.
pub fn tree_size_over(value: &Value, limit: u64) -> Option<u64> {
    /// A container being measured: its children still to count and its total so far.
    struct Frame {
        key: Option<(usize, u32)>,
        children: Children,
        total: u64,
    }
    enum Children {
        List(crate::value::list::Iter),
        Map(std::vec::IntoIter<Value>),
    }
    impl Iterator for Children {
        type Item = Value;
        fn next(&mut self) -> Option<Value> {
            match self {
                Children::List(items) => items.next(),
                Children::Map(values) => values.next(),
            }
        }
    }
    let frame = |v: &Value, key| {
        let children = match v {
            Value::Map(m) => {
                Children::Map(m.entries.values().cloned().collect::<Vec<_>>().into_iter())
            }
            _ => Children::List(v.as_list().unwrap_or_default().iter()),
        };
        Frame {
            key,
            children,
            total: 1,
        }
    };
    value.container_identity()?;
    let mut sizes: HashMap<(usize, u32), u64> = HashMap::new();
    let mut stack = vec![frame(value, None)];
    while let Some(top) = stack.last_mut() {
        if let Some(child) = top.children.next() {
            match child.container_identity() {
                None => top.total = top.total.saturating_add(1),
                Some(key) => match sizes.get(&key) {
                    Some(size) => top.total = top.total.saturating_add(*size),
                    // Only a container referred to from more than one place can be
                    // reached again; the others need no entry.
                    None => {
                        let key = child.is_shared().then_some(key);
                        stack.push(frame(&child, key));
                    }
                },
            }
            continue;
        }
        let done = stack.pop()?;
        if done.total > limit {
            return Some(done.total);
        }
        if let Some(key) = done.key {
            sizes.insert(key, done.total);
        }
        match stack.last_mut() {
            Some(parent) => parent.total = parent.total.saturating_add(done.total),
            None => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_over_the_limit_are_refused() {
        assert!(check_string_length("str", MAX_STRING_BYTES).is_ok());
        let e = check_string_length("str", MAX_STRING_BYTES + 1).expect_err("too long");
        assert_eq!(e.kind(), crate::error::ErrorKind::ResourceExhaustion);
    }

    #[test]
    fn lists_over_the_limit_are_refused() {
        assert!(check_list_length("append", MAX_LIST_LEN as u128).is_ok());
        let e = check_list_length("append", MAX_LIST_LEN as u128 + 1).expect_err("too long");
        assert_eq!(e.details()["resource"], "memory");
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("small.txt");
        std::fs::write(&file, "hello").expect("write");
        assert_eq!(read_file_text(&file, 5).expect("fits"), "hello");
        let e = read_file_text(&file, 4).expect_err("too big");
        assert_eq!(e.details()["resource"], "file");
        let e = read_file_bytes(Path::new("/dev/zero"), 1 << 20).expect_err("a device");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_file_bytes(dir.path(), 1 << 20).expect_err("a directory");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let e = read_file_bytes(&fifo, 1 << 20).expect_err("a FIFO");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn shared_trees_are_measured_without_walking_them() {
        let mut tree = Value::Int(1);
        for _ in 0..40 {
            tree = Value::list(vec![tree.clone(), tree]);
        }
        assert_eq!(tree_size_over(&tree, MAX_NODES), Some(33_554_431));
        let small = Value::list(vec![Value::Int(1), Value::list(vec![Value::Int(2)])]);
        assert_eq!(tree_size_over(&small, 4), None);
        assert_eq!(tree_size_over(&small, 3), Some(4));
        // Measured once the walk is long: a shared tree ends there, not at the limit.
        let mut budget = Budget::new("walk", &tree);
        let e = (0..MEASURE_AT)
            .try_for_each(|_| budget.visit())
            .expect_err("measured");
        assert_eq!(e.details()["resource"], "size");
        assert_eq!(budget.visited(), MEASURE_AT);
    }

    #[test]
    fn the_budget_fails_past_its_limit() {
        let mut budget = Budget::with_limit("walk", 2);
        assert!(budget.visit().is_ok());
        assert!(budget.visit().is_ok());
        let e = budget.visit().expect_err("over");
        assert_eq!(e.kind(), crate::error::ErrorKind::ResourceExhaustion);
        assert_eq!(e.details()["resource"], "size");
        assert_eq!(budget.visited(), 3);
    }
}
