//! ctxgraph's query layer.
//!
//! Everything a coding agent loads into its context, computed as salsa queries over
//! inputs, so that between turns only what changed recomputes. This crate does no I/O of
//! its own: file access goes through [`System`](system::System), the environment is the
//! [`Host`] input, and remote documents are set as inputs by the engine.

#![warn(missing_docs)]

pub mod agent;
pub mod claude_code;
pub mod codex;
pub mod collate;
pub mod copilot;
pub mod gemini;
// Every item here is documented, but salsa's input macro generates public functions
// (constructors, builders) that carry no docs and cannot be given any.
#[allow(missing_docs)]
pub mod db;
pub mod fates;
pub mod files;
pub mod lines;
pub mod mcp;
pub mod memory;
pub mod opencode;
pub mod path;
pub mod profile;
pub mod qwen_code;
pub mod remote;
pub mod secrets;
pub mod system;
#[cfg(test)]
mod testing;
pub mod tokens;

pub use db::{Db, Host, Workspace};
