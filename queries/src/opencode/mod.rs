//! The opencode V1 profile (`opencode-ai` 1.18.33): every stage of its context assembly
//! as queries. Rule ids (P, F, C, V, J, I, B, N) are defined in `docs/opencode/`.

#[allow(missing_docs)] // TODO(#15): document this module's public items.
pub mod config;
#[allow(missing_docs)] // TODO(#15): document this module's public items.
pub mod explain;
pub mod flags;
pub mod fs;
#[allow(missing_docs)] // TODO(#15): document this module's public items.
pub mod instructions;
pub mod jsonc;
#[allow(missing_docs)] // TODO(#15): document this module's public items.
pub mod lint;
pub mod nearby;
pub mod paths;
#[allow(missing_docs)] // TODO(#15): document this module's public items.
pub mod prompt;
pub mod session;
pub mod substitute;
pub mod worktree;
