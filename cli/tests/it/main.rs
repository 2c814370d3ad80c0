//! The `ctxgraph` binary end to end: one integration-test binary for the crate, one module
//! per area. Each `tests/*.rs` file would be its own binary, linked against the whole
//! dependency tree; one binary links once. Add a module here rather than a file beside
//! `it/`.
//!
//! Fixtures (`tests/fixtures/`, `tests/data/`) stay beside `it/`; insta snapshots live in
//! `it/snapshots/`, named `it__<module>__<name>.snap`.

mod action;
mod agents;
mod aider;
mod check;
mod claude_code;
mod cli;
mod cline;
mod continue_cli;
mod copilot;
mod explain_lint;
mod gemini;
mod hook;
mod kilo;
mod lines_fuzz;
mod lsp;
mod lsp_fuzz;
mod lsp_hostile;
mod mcp;
mod memory;
mod neovim;
mod planted;
mod precommit;
mod qwen_code;
mod report;
mod secrets;
mod serve;
mod session;
mod support;
mod views;
