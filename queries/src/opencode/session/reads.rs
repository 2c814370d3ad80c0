//! N2–N7: the nearby rules a read attaches in a session: rules already loaded by completed
//! reads in the step's history are skipped, and reads in the same assistant message claim
//! each rule once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::export::{PartKind, Role, ToolStatus};
use super::history::filter_compacted;
use super::{Message, Session, SessionError};
use crate::db::{Db, Workspace};
use crate::opencode::nearby::{Nearby, NearbyRule, ReadKind, Skip, nearby_rules, reminder};
use crate::path;

/// Where in the session the read happens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReadPoint {
    /// The next step: a new assistant message after the whole history.
    NextStep,
    /// Inside an existing message, after its reads before `before_part` (all of them when
    /// `None`).
    InMessage {
        /// The message's id.
        message: String,
        /// The read part the question stands in for.
        before_part: Option<String>,
    },
}

/// What happened to one directory's rule file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RuleState {
    /// Attached: in `metadata.loaded` and in the reminder of a text file's read (N5).
    Attached,
    /// N6: an image or PDF read lists it in `metadata.loaded` but shows no reminder: the
    /// model never sees the text, and later reads count it as attached.
    LoadedNotShown,
    /// N6: claimed, then the read fails (a binary file): nothing is shown or recorded, and
    /// a later step attaches it again.
    ReadFails,
    /// The file being read.
    IsTarget,
    /// Already in the system prompt.
    InSystemPrompt,
    /// N2: listed in `metadata.loaded` of a completed, unpruned read in the history.
    AlreadyLoaded {
        /// The read that loaded it.
        by_part: String,
    },
    /// N4: claimed by an earlier read in the same message.
    Claimed {
        /// The read that claimed it.
        by_part: String,
    },
    /// Claimed, but read as empty.
    Empty,
}

impl RuleState {
    /// This read claimed the rule (N4), whatever its file type then made of it.
    pub fn claimed_here(&self) -> bool {
        matches!(self, RuleState::Attached | RuleState::LoadedNotShown | RuleState::ReadFails)
    }

    /// N6: what a claim becomes for the file type read: attached only for text; loaded but
    /// not shown for images and PDFs; lost when the read fails.
    fn for_kind(self, kind: ReadKind) -> Self {
        match (self, kind) {
            (RuleState::Attached, ReadKind::Image | ReadKind::Pdf) => RuleState::LoadedNotShown,
            (RuleState::Attached, ReadKind::Binary) => RuleState::ReadFails,
            (state, _) => state,
        }
    }
}

/// A rule file a read's walk found, and its fate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionRule {
    /// The rule file.
    pub path: PathBuf,
    /// Attached, or why not.
    #[serde(flatten)]
    pub state: RuleState,
}

/// What a read attaches in a session (N2–N6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionNearby {
    /// What the read tool makes of the file.
    pub kind: ReadKind,
    /// One per directory with a rule file, nearest first.
    pub rules: Vec<SessionRule>,
    /// `metadata.loaded` of the read (empty when the read fails).
    pub loaded: Vec<PathBuf>,
    /// What the tool output ends with after `\n\n` (text files only).
    pub reminder: Option<String>,
}

impl SessionNearby {
    /// A read in a fresh session: nothing loaded or claimed yet.
    pub fn fresh(nearby: &Nearby) -> Self {
        let states =
            nearby.rules.iter().map(|rule| state(rule, &BTreeMap::new(), &BTreeMap::new())).collect();
        outcome(nearby, states)
    }
}

/// N2–N6 for a read of `target` at `point`.
///
/// N4.1: the reads of one assistant message run concurrently, and each walks its directories
/// nearest first, claiming as it goes. They advance in step (one directory each, in call
/// order), which is how opencode's scheduler interleaves them: of two parallel reads in
/// `sub/deep/` and `sub/`, the one in `sub/` claims `sub/AGENTS.md` (its first directory)
/// before the other reaches `sub/` (its second). A read at the next step, or one added to
/// a message with `before_part: None`, joins as the last call.
pub fn nearby_in_session(
    db: &dyn Db,
    ws: Workspace,
    session: Session,
    target: &Path,
    point: &ReadPoint,
) -> Result<SessionNearby, SessionError> {
    let messages = session.messages(db);
    let (history, current): (Vec<Message>, Option<Message>) = match point {
        ReadPoint::NextStep => (filter_compacted(db, messages), None),
        ReadPoint::InMessage { message, .. } => {
            let Some(at) = messages.iter().position(|m| m.id(db) == message) else {
                return Err(SessionError::NoMessage(message.clone()));
            };
            // N4: a user-attached file is read with no history.
            let history = match messages[at].info(db).role {
                Role::User => Vec::new(),
                Role::Assistant => filter_compacted(db, &messages[..at]),
            };
            (history, Some(messages[at]))
        }
    };
    let already = loaded_by(db, &history);
    // The concurrent reads: (part id, file); the one asked about is at `asked`.
    let mut group: Vec<(String, PathBuf)> = Vec::new();
    let mut asked = None;
    if let (Some(current), ReadPoint::InMessage { before_part, .. }) = (current, point) {
        for part in current.parts(db) {
            let Some(file) = read_target(part) else { continue };
            if before_part.as_deref() == Some(part.id.as_str()) {
                asked = Some(group.len());
            }
            group.push((part.id.clone(), path::resolve(ws.cwd(db), Path::new(file))));
        }
    }
    let asked = if let Some(at) = asked {
        at
    } else {
        group.push((String::new(), path::resolve(ws.cwd(db), target)));
        group.len() - 1
    };
    let walks: Vec<&Nearby> = group
        .iter()
        .map(|(_, file)| nearby_rules(db, ws, file.clone()).as_ref().map_err(Clone::clone))
        .collect::<Result<_, _>>()?;
    let mut claims: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut states: Vec<Vec<Option<RuleState>>> = walks.iter().map(|w| vec![None; w.rules.len()]).collect();
    let depth = |file: &Path, rule: &Path| {
        let from = file.parent().map_or(0, |d| d.components().count());
        from.saturating_sub(rule.parent().map_or(0, |d| d.components().count()))
    };
    let rounds = group
        .iter()
        .zip(&walks)
        .flat_map(|((_, file), walk)| walk.rules.iter().map(|r| depth(file, &r.path)))
        .max()
        .map_or(0, |d| d + 1);
    for round in 0..rounds {
        for (k, ((id, file), walk)) in group.iter().zip(&walks).enumerate() {
            for (i, rule) in walk.rules.iter().enumerate().filter(|(_, r)| depth(file, &r.path) == round) {
                let decided = state(rule, &already, &claims);
                if matches!(decided, RuleState::Attached | RuleState::Empty) {
                    claims.insert(rule.path.clone(), id.clone());
                }
                states[k][i] = Some(decided);
            }
        }
    }
    let states = states.swap_remove(asked).into_iter().map(|s| s.unwrap_or(RuleState::Empty)).collect();
    Ok(outcome(walks[asked], states))
}

fn outcome(nearby: &Nearby, states: Vec<RuleState>) -> SessionNearby {
    let states: Vec<RuleState> = states.into_iter().map(|s| s.for_kind(nearby.kind)).collect();
    let with = |keep: fn(&RuleState) -> bool| nearby.rules.iter().zip(&states).filter(move |(_, s)| keep(s));
    let shown = with(|s| *s == RuleState::Attached).filter_map(|(r, _)| r.block.as_deref());
    let reminder = reminder(nearby.kind, shown);
    let loaded = with(|s| matches!(s, RuleState::Attached | RuleState::LoadedNotShown))
        .map(|(r, _)| r.path.clone())
        .collect();
    SessionNearby {
        kind: nearby.kind,
        reminder,
        rules: nearby
            .rules
            .iter()
            .zip(states)
            .map(|(r, state)| SessionRule { path: r.path.clone(), state })
            .collect(),
        loaded,
    }
}

/// N3 with the state: one rule's fate given what is loaded and claimed.
fn state(
    rule: &NearbyRule,
    already: &BTreeMap<PathBuf, String>,
    claims: &BTreeMap<PathBuf, String>,
) -> RuleState {
    match &rule.skipped {
        Some(Skip::IsTarget) => RuleState::IsTarget,
        Some(Skip::InSystemPrompt) => RuleState::InSystemPrompt,
        _ => {
            if let Some(by) = already.get(&rule.path) {
                RuleState::AlreadyLoaded { by_part: by.clone() }
            } else if let Some(by) = claims.get(&rule.path) {
                RuleState::Claimed { by_part: by.clone() }
            } else if rule.block.is_none() {
                RuleState::Empty
            } else {
                RuleState::Attached
            }
        }
    }
}

/// N2: every path in `metadata.loaded` of a completed, unpruned `read` part, with the
/// first part that loaded it.
fn loaded_by(db: &dyn Db, history: &[Message]) -> BTreeMap<PathBuf, String> {
    let mut loaded = BTreeMap::new();
    for message in history {
        for part in message.parts(db) {
            let Some(state) = part.completed_tool() else { continue };
            if part.tool.as_deref() != Some("read") || state.is_compacted() {
                continue;
            }
            for path in state.loaded() {
                loaded.entry(PathBuf::from(path)).or_insert_with(|| part.id.clone());
            }
        }
    }
    loaded
}

/// The file a `read` tool part asked for, when the call got as far as resolving rules
/// (completed, or failed after the rules were claimed).
fn read_target(part: &super::export::Part) -> Option<&str> {
    if part.kind() != PartKind::Tool || part.tool.as_deref() != Some("read") {
        return None;
    }
    let state = part.state.as_ref()?;
    if !matches!(state.status, ToolStatus::Completed | ToolStatus::Error) {
        return None;
    }
    state.input.as_ref()?.get("filePath").and_then(Value::as_str)
}
