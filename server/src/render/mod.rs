//! Answers as text, for people and models: `explain` and `lint` as the CLI prints them and
//! the MCP tools return them. No decisions are made here: every fact and sentence comes
//! from the engine's answers.

pub mod explain;
pub mod lint;
pub mod profile;
pub mod stages;
