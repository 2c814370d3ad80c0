//! opencode's engine-side folder: what the engine answers of opencode beyond the shape every
//! agent shares (its whole message and its turns, its merged config and agents, remote
//! config and documents, its explanation and lint, the memory it prompts with, live
//! sessions, and where its installation is and what texts it holds). The queries are `ctxgraph-opencode`'s, which does no I/O; what needs the
//! engine's inputs set from outside (a fetched document, a session's messages appended as
//! they arrive) is here. The surfaces reach it through the types [`crate`] re-exports and
//! the [`crate::answers`] groups below, never by asking which agent they serve: an
//! extension is part of an answer (`ReadAnswer::opencode`), or a question only opencode's
//! answers exist for.

mod facade;
pub mod installation;
mod session;
mod turn;

use ctxgraph_db::profile;
use ctxgraph_opencode::message::MessageError;

use crate::EngineError;

pub use ctxgraph_opencode::agents::Agents;
pub use ctxgraph_opencode::config::{ConfigError, MergedConfig};
pub use ctxgraph_opencode::explain::{Explanation, TargetExplanation};
pub use ctxgraph_opencode::instructions::SystemPaths;
pub use ctxgraph_opencode::message::MessageOptions;
pub use ctxgraph_opencode::nearby::{Nearby, NearbyRule, ReadKind, Skip};
pub use ctxgraph_opencode::prompt::{
    Block, BlockKind, BuildError, Layout, ModelRef, PlacedBlock, Prompt, Section,
};
pub use facade::InstallationTexts;
pub(crate) use session::MessageIds;
pub use session::{LimitOverrides, ReadAnswer, SessionFailure};
pub use turn::{Turn, Turns, same_text};

/// The groups of [`crate::answers`] that hold opencode's answers.
pub mod answers {
    /// What [`crate::Engine::explain`], [`crate::Engine::explain_target`] and
    /// [`crate::Engine::explain_session`] answer.
    pub mod explain {
        pub use ctxgraph_opencode::explain::{
            Compacts, EntryExpansion, EntryReport, Explanation, Fate as MessageFate, Item, Loaded, Reason,
            SessionExplanation, Size, Source, Stage, Target, TargetExplanation, Via,
        };
        pub use ctxgraph_opencode::skills::explain::SkillsExplanation;
    }
    /// Sessions: the input, its messages, the compaction plan and reads in its state.
    pub mod session {
        pub use ctxgraph_opencode::session::Session;
        pub use ctxgraph_opencode::session::compaction::{CompactionPlan, DEFAULT_SUMMARY_TEMPLATE};
        pub use ctxgraph_opencode::session::export::{ExportError, Role, ToolStatus};
        pub use ctxgraph_opencode::session::reads::{ReadPoint, SessionNearby, SessionRule};
    }
    /// What explain's references (B3) and MCP (B4) sections are read off.
    pub mod stages {
        pub use ctxgraph_db::lines::LineColumn;
        pub use ctxgraph_db::mcp::{McpState, McpTransport};
        pub use ctxgraph_opencode::mcp::{Connect, McpFate, McpServerFact};
        pub use ctxgraph_opencode::references::{ReferenceFate, References};
    }
}

impl From<profile::ProfileError> for EngineError {
    fn from(err: profile::ProfileError) -> Self {
        match err {
            // opencode's own errors keep their kind: the CLI renders a config diagnostic
            // with its source line, and maps each kind to its exit code.
            profile::ProfileError::Build(source) => {
                if let Some(build) = source.downcast_ref::<BuildError>() {
                    EngineError::Build(build.clone())
                } else if let Some(message) = source.downcast_ref::<MessageError>() {
                    message.clone().into()
                } else {
                    EngineError::Profile(profile::ProfileError::Build(source))
                }
            }
            other => EngineError::Profile(other),
        }
    }
}

impl From<MessageError> for EngineError {
    fn from(err: MessageError) -> Self {
        match err {
            MessageError::Build(build) => EngineError::Build(build),
            MessageError::UnknownAgent { name, available } => EngineError::UnknownAgent { name, available },
        }
    }
}
