//! The profiles of the agents other than opencode, each a module of salsa queries over
//! `ctxgraph_db`'s inputs (rule ids defined in `docs/profiles/`), and what reads several of
//! them at once (`fates`: the cross-agent lint).
//! Nothing here depends on the opencode profile, so this crate and `ctxgraph-opencode`
//! compile side by side.

#![warn(missing_docs)]

pub mod aider;
pub mod auggie;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod continue_cli;
pub mod copilot;
pub mod fates;
pub mod gemini;
pub mod installation;
pub mod pi;
pub mod qwen_code;
