//! CC8: whether the project lets rule files import files outside the working directory.
//! Claude Code keeps the answer per project in `~/.claude.json`, state ctxgraph cannot
//! derive from the repository: it reads it, and says what it found.

use std::path::PathBuf;

use serde::Serialize;

use ctxgraph_db::db::{Db, Host};
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::system::FileKind;

/// The key Claude Code reads.
pub const APPROVAL_KEY: &str = "hasClaudeMdExternalIncludesApproved";

/// What `~/.claude.json` says for one project.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Approval {
    /// `~/.claude.json`.
    pub config: PathBuf,
    /// The project key: the git root, or the working directory outside git.
    pub project: PathBuf,
    /// What was found.
    #[serde(flatten)]
    pub state: ApprovalState,
}

/// The approval as found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ApprovalState {
    /// `projects[<project>].hasClaudeMdExternalIncludesApproved` holds this value.
    Set {
        /// The value.
        approved: bool,
    },
    /// The file has no entry (or no key) for the project: not approved.
    NotSet,
    /// No `~/.claude.json`: not approved.
    NoConfig,
    /// The file is unreadable or not JSON: taken as not approved.
    Invalid {
        /// Why.
        reason: String,
    },
}

impl Approval {
    /// Whether external imports are followed.
    pub fn approved(&self) -> bool {
        matches!(self.state, ApprovalState::Set { approved: true })
    }

    /// The state in words, for reasons.
    pub fn describe(&self) -> String {
        let at =
            format!("{}: projects[\"{}\"].{APPROVAL_KEY}", self.config.display(), self.project.display());
        match &self.state {
            ApprovalState::Set { approved } => format!("{at} is {approved}"),
            ApprovalState::NotSet => format!("{at} is not set"),
            ApprovalState::NoConfig => {
                format!("{} does not exist, so {APPROVAL_KEY} is not set", self.config.display())
            }
            ApprovalState::Invalid { reason } => {
                format!("{} cannot be used ({reason})", self.config.display())
            }
        }
    }
}

/// CC8: reads `~/.claude.json` for `project`.
#[salsa::tracked(returns(ref))]
pub fn approval(db: &dyn Db, host: Host, project: PathBuf) -> Approval {
    let config = host.home(db).join(".claude.json");
    let file = db.files().get(db, &config);
    let state = if file.kind(db) == FileKind::Missing {
        ApprovalState::NoConfig
    } else {
        match file_bytes(db, file) {
            Err(err) => ApprovalState::Invalid { reason: err.to_string() },
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(bytes) {
                Err(err) => ApprovalState::Invalid { reason: err.to_string() },
                Ok(json) => match json
                    .get("projects")
                    .and_then(|p| p.get(project.to_string_lossy().as_ref()))
                    .and_then(|p| p.get(APPROVAL_KEY))
                {
                    Some(serde_json::Value::Bool(approved)) => ApprovalState::Set { approved: *approved },
                    _ => ApprovalState::NotSet,
                },
            },
        }
    };
    Approval { config, project, state }
}
