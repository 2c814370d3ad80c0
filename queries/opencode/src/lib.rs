//! The opencode V1 profile (`opencode-ai` 1.18.33): every stage of its context assembly
//! as salsa queries over `ctxgraph_db`'s inputs. Rule ids (P, F, C, V, J, I, B, N) are
//! defined in `docs/opencode/`.

#![warn(missing_docs)]

pub mod agents;
pub mod config;
pub mod explain;
pub mod flags;
pub mod fs;
pub mod instructions;
pub mod kilo;
pub mod lint;
pub mod mcp;
pub mod memory;
pub mod message;
pub mod nearby;
pub mod paths;
pub mod profile;
pub mod prompt;
pub mod references;
pub mod session;
pub mod skills;
pub mod substitute;
