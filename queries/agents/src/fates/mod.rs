//! What reads more than one agent's facts: the findings of `lint --agent all`. One agent's
//! verdicts and findings are in its own folder (`codex/fate.rs`, `claude_code/fate.rs`,
//! `codex/lint.rs`, `gemini/lint.rs`).

pub mod budget;
pub mod lint;
pub mod listing;
