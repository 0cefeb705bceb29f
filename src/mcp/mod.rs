//! The Model Context Protocol, both ways: MCP servers' tools, resources and prompts
//! reached from a program (the client), and the TaskLibrary served to MCP clients
//! (`tasklisp mcp`). See `docs/MCP.md`.

pub mod builtins;
pub mod client;
mod http;
pub mod protocol;
mod serve_http;
pub mod server;
mod stdio;
mod tools;
pub mod transport;

pub use builtins::close_all;

/// The MCP layer: the client's builtins (the server is a command, not a form).
pub static LAYER: crate::eval::layer::Layer = crate::eval::layer::Layer {
    name: "mcp",
    builtins: &[("MCP", builtins::BUILTINS)],
    forms: &[],
    keeps_mark: None,
};
