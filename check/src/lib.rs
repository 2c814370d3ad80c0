//! Hermetic snapshot checks of the prompt ctxgraph assembles: what `ctxgraph snapshot`,
//! `ctxgraph check` and `ctxgraph init-check` do, without the rendering.
//!
//! A scenarios file ([`SCENARIOS_FILE`]) names working directories to pin. Every scenario
//! is built by its own [`Engine`](ctxgraph_engine::Engine) in a world that holds the
//! repository and nothing else ([`hermetic`]): no real home directory, no real global or
//! managed config, no process environment, a pinned date and platform. Absolute paths in
//! the result are written as `<repo>/…` and `<home>/…` ([`portable`]), so a snapshot made
//! on one machine is compared byte for byte on another.
//!
//! This is its own crate rather than part of the engine: the engine answers "what does the
//! agent see in this world", this crate decides which world (a scenario), pins the answer
//! in a file format of its own and explains differences. It is the only user of `toml`,
//! `similar` and `ignore`, which the engine and its other hosts need not carry.
//!
//! `<repo>` is the git worktree that holds the scenarios file (P5: the first `.git` above
//! it), or the scenarios file's directory outside git. Paths inside the scenarios file are
//! relative to the file's directory; snapshots live next to it in `.ctxgraph/snapshots/`.

#![warn(missing_docs)]

pub mod compare;
pub mod hermetic;
pub mod portable;
mod project;
pub mod propose;
pub mod render;
pub mod scenarios;
pub mod snapshot;

pub use compare::{Change, SourceChange, SourceChangeKind};
pub use project::{
    Accepted, CheckReport, Project, ScenarioReport, SnapshotFailure, Status, Written, locate, worktree_root,
};
pub use render::{BlockEntry, Rendered};
pub use scenarios::{Scenario, ScenariosError};

/// The file `check` looks for, from the working directory up to its worktree root.
pub const SCENARIOS_FILE: &str = "ctxgraph.toml";

/// Where snapshots live, relative to the scenarios file's directory.
pub const SNAPSHOT_DIR: &str = ".ctxgraph/snapshots";

/// The behaviour the snapshots pin: the opencode V1 profile of `ctxgraph-opencode`.
pub const PROFILE: &str = "opencode-1.18.33";

/// The `profile:` header of a snapshot of `agent`'s context: the agent and the version its
/// behaviour was recorded from.
pub fn profile(agent: ctxgraph_db::agent::Agent) -> &'static str {
    ctxgraph_engine::profiles::profile(agent).release()
}

/// The token count written in snapshot headers and used for deltas: `o200k_base` (bundled,
/// offline; the same counter `explain` uses). Other providers' tokenizers count
/// differently; the delta between two counts is what a reviewer compares.
pub fn count_tokens(text: &str) -> usize {
    use ctxgraph_db::tokens::TokenCounter;
    ctxgraph_engine::O200k.count(text)
}
