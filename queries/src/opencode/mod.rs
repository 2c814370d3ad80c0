//! The opencode V1 profile (`opencode-ai` 1.18.33): every stage of its context assembly
//! as queries. Rule ids (P, F, C, V, J, I, B, N) are defined in `docs/opencode/`.

pub mod agents;
pub mod config;
pub mod explain;
pub mod flags;
pub mod fs;
pub mod installation;
pub mod instructions;
pub mod jsonc;
pub mod lint;
pub mod mcp;
pub mod message;
pub mod nearby;
pub mod paths;
pub mod profile;
pub mod prompt;
pub mod references;
pub mod session;
pub mod skills;
pub mod substitute;
pub mod worktree;
