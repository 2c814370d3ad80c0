//! The engine against real and in-memory file systems: one integration-test binary for the
//! crate, one module per area (each `tests/*.rs` file would be its own binary, linked against
//! the whole dependency tree). Add a module here rather than a file beside `it/`; insta
//! snapshots live in `it/snapshots/`, named `it__<module>__<name>.snap`.

mod agent_world;
mod churn;
mod claude_code;
mod codex;
mod gemini;
mod incremental;
mod installation;
mod mcp;
mod memory;
mod memory_evaluation;
mod overlay;
mod remote;
mod remote_config;
mod skills;
mod special_files;
mod watcher;
