//! tasklisp: a Lisp in which tasks are functions. See `src/README.md` for the map.
//!
//! ```
//! use tasklisp::{Interp, Limits};
//! let value = tasklisp::run_on_large_stack(&Limits::default(), |limits| {
//!     let interp = Interp::new(limits).expect("prelude loads");
//!     interp.run_source("<doc>", "(+ 1 2)").map(|v| tasklisp::write_string(&v))
//! });
//! assert_eq!(value.unwrap().unwrap(), "3");
//! ```

// Input can reach almost any path: no unwrap, expect, panic (nor `unreachable!`, `todo!`,
// `unimplemented!`) or unchecked indexing outside tests; code uses `get`, iterators and
// slice patterns. What still indexes (each `allow` says why the index holds) is listed in
// docs/SECURITY.md; new modules are checked.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::indexing_slicing
    )
)]

/// Every `eprintln!` in the crate: std's panics when stderr is closed
/// (`tasklisp run x 2>&1 | head -1`), turning a failure's status 1 into a panic's 101.
/// A diagnostic nobody can read is dropped instead; the exit status stays the program's.
/// Declared before the modules so that it is the `eprintln!` they see.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

// Every module is crate-private: what an embedder uses is re-exported below, and what only
// this crate's own tests, benchmarks and fuzz targets reach is listed in `internals`.
mod atomic_file;
mod builtins;
mod capabilities;
mod cli;
mod config;
mod cst;
mod digest;
mod error;
mod eval;
mod fmt;
mod interrupt;
mod layers;
mod lsp;
mod mcp;
mod memory;
mod module;
mod notice;
mod prices;
mod process;
mod progress;
mod provider;
mod repl;
mod runlog;
mod sandbox;
mod secrets;
mod source;
mod suggest;
mod symbol;
mod task;
mod terminal;
mod testing;
mod value;
mod xml;

// The embedding surface (docs/EMBEDDING.md).
pub use capabilities::Capabilities;
pub use cli::main as cli_main;
pub use error::{Error, ErrorKind, Result};
pub use eval::{run_on_large_stack, Interp, Limits};
pub use memory::CountingAllocator;
pub use provider::{Cancel, Message, Provider, Request, Response, ToolCall, ToolSpec, Usage};
pub use secrets::Secrets;
pub use value::{display_string, from_json, to_json, write_string, Value};

/// What this crate's own integration tests, benchmarks and fuzz targets reach past the
/// embedding surface, at the paths the crate uses inside. Not a stable API: hidden from
/// the documentation, and free to change with any release (docs/ARCHITECTURE.md).
#[doc(hidden)]
pub mod internals {
    pub mod builtins {
        pub use crate::builtins::Builtin;
    }
    pub mod eval {
        pub use crate::eval::{env, fiber, quote, reader};
    }
    pub mod fmt {
        pub use crate::fmt::format_text;
    }
    pub mod lsp {
        pub use crate::lsp::{serve_on, Help};
    }
    pub mod module {
        pub use crate::module::{check_file, load, Checked};
    }
    pub mod mcp {
        pub use crate::mcp::client::Client;
        pub use crate::mcp::transport::{forward_lines, Inbox, Transport, Until};
    }
    pub mod process {
        pub use crate::process::ProcessSpec;
    }
    pub mod provider {
        pub use crate::provider::{
            batch, build, from_language, from_settings, http, openai, sse, ProviderSettings, KNOWN,
        };
    }
    pub mod runlog {
        pub use crate::runlog::view;
    }
    pub mod source {
        pub use crate::source::add_source;
    }
    pub mod symbol {
        pub use crate::symbol::Sym;
    }
    pub mod task {
        pub use crate::task::{lenient, memory, script, tools, Registered, Task};
        pub use crate::task::{TaskKind, Template};
    }
    pub mod value {
        pub use crate::value::bounds;
    }
    pub mod xml {
        pub use crate::xml::{definitions, infix, read_str, text, Unknown};
    }
}

/// docs/EMBEDDING.md's example, run as a doctest so the document stays true.
#[cfg(doctest)]
#[doc = include_str!("../docs/EMBEDDING.md")]
pub struct EmbeddingGuide;
