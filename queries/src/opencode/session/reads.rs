//! N2–N7: the nearby rules a read attaches in a session: rules already loaded by completed
//! reads in the step's history are skipped, and reads in the same assistant message claim
//! each rule once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::export::{Part, PartKind, Role, ToolStatus};
use super::history::{GrowingHistory, Growth, filter_compacted};
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
    /// Attached: in `metadata.loaded` and, for text files, in the reminder (N5).
    Attached,
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
    // The concurrent reads: (part id, file); the one asked about is at `asked` (the last
    // part with its id).
    let mut group: Vec<(&str, PathBuf)> = Vec::new();
    let mut asked = None;
    if let (Some(current), ReadPoint::InMessage { before_part, .. }) = (current, point) {
        group = group_of(db, ws, current).map(|(part, file)| (part.id.as_str(), file)).collect();
        asked = group.iter().rposition(|(id, _)| before_part.as_deref() == Some(*id));
    }
    let asked = asked.unwrap_or_else(|| {
        group.push(("", path::resolve(ws.cwd(db), target)));
        group.len() - 1
    });
    let walks = walk_all(db, ws, &group)?;
    let mut states = claim(&group, &walks, &already);
    Ok(outcome(walks[asked].walk, states.swap_remove(asked)))
}

/// The reads of a message that got as far as the rules ([`read_target`]), in call order,
/// each with its file resolved against the workspace.
fn group_of(db: &dyn Db, ws: Workspace, message: Message) -> impl Iterator<Item = (&Part, PathBuf)> {
    message.parts(db).iter().filter_map(move |part| {
        let file = read_target(part)?;
        Some((part, path::resolve(ws.cwd(db), Path::new(file))))
    })
}

/// One read's walk, and for each of its rules the round of N4.1 in which the read reaches
/// it (how many directories up from the file it is).
struct Walked<'db> {
    walk: &'db Nearby,
    rounds: Vec<usize>,
}

fn walk_all<'db>(
    db: &'db dyn Db,
    ws: Workspace,
    group: &[(&str, PathBuf)],
) -> Result<Vec<Walked<'db>>, SessionError> {
    let depth = |path: &Path| path.parent().map_or(0, |d| d.components().count());
    group
        .iter()
        .map(|(_, file)| {
            let walk = nearby_rules(db, ws, file.clone()).as_ref().map_err(Clone::clone)?;
            let rounds = walk.rules.iter().map(|r| depth(file).saturating_sub(depth(&r.path))).collect();
            Ok(Walked { walk, rounds })
        })
        .collect()
}

/// N3/N4.1 for a message's concurrent reads: every rule's state, read by read. Each rule
/// is decided once, round by round and in call order within a round.
fn claim(
    group: &[(&str, PathBuf)],
    walks: &[Walked<'_>],
    already: &BTreeMap<PathBuf, String>,
) -> Vec<Vec<RuleState>> {
    let mut order: Vec<(usize, usize, usize)> = walks
        .iter()
        .enumerate()
        .flat_map(|(k, w)| w.rounds.iter().enumerate().map(move |(i, &round)| (round, k, i)))
        .collect();
    order.sort_unstable();
    let mut claims: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut states: Vec<Vec<Option<RuleState>>> =
        walks.iter().map(|w| vec![None; w.walk.rules.len()]).collect();
    for (_, k, i) in order {
        let rule = &walks[k].walk.rules[i];
        let decided = state(rule, already, &claims);
        if matches!(decided, RuleState::Attached | RuleState::Empty) {
            claims.insert(rule.path.clone(), group[k].0.to_owned());
        }
        states[k][i] = Some(decided);
    }
    states.into_iter().map(|s| s.into_iter().map(|s| s.unwrap_or(RuleState::Empty)).collect()).collect()
}

/// A read of a session, as [`nearby_in_session`] answers it at its own part.
pub struct SessionRead<'db> {
    /// Its tool part.
    pub part: &'db Part,
    /// The file read, resolved against the workspace.
    pub file: PathBuf,
    /// What it attaches.
    pub nearby: SessionNearby,
}

/// Every message's reads, in session order, each as [`nearby_in_session`] answers it at its
/// own part, in time linear in the session: the history before each message grows along
/// the session ([`GrowingHistory`]) and N2's loaded rules with it, and the concurrent
/// reads of a message are claimed once for all of them.
pub struct SessionReads<'db> {
    history: GrowingHistory<'db>,
    /// [`loaded_by`] of the history.
    loaded: BTreeMap<PathBuf, String>,
    messages: &'db [Message],
    /// The message whose reads come next.
    at: usize,
}

impl<'db> SessionReads<'db> {
    /// Before the first message of `messages`.
    pub fn new(messages: &'db [Message]) -> Self {
        SessionReads { history: GrowingHistory::new(messages), loaded: BTreeMap::new(), messages, at: 0 }
    }

    /// K10's history of the messages before the current one.
    pub fn history(&self) -> &GrowingHistory<'db> {
        &self.history
    }

    /// The current message's reads (none once past the last message).
    pub fn reads(&self, db: &'db dyn Db, ws: Workspace) -> Result<Vec<SessionRead<'db>>, SessionError> {
        let Some(&message) = self.messages.get(self.at) else { return Ok(Vec::new()) };
        let group: Vec<(&Part, PathBuf)> = group_of(db, ws, message).collect();
        if group.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<(&str, PathBuf)> =
            group.iter().map(|(part, file)| (part.id.as_str(), file.clone())).collect();
        let walks = walk_all(db, ws, &ids)?;
        // N4: a user-attached file is read with no history.
        let none = BTreeMap::new();
        let already = if message.info(db).role == Role::User { &none } else { &self.loaded };
        let states = claim(&ids, &walks, already);
        Ok(group
            .into_iter()
            .zip(walks.iter().zip(states))
            .map(|((part, file), (walked, states))| SessionRead {
                part,
                file,
                nearby: outcome(walked.walk, states),
            })
            .collect())
    }

    /// Moves to the next message: the current one joins the history.
    pub fn advance(&mut self, db: &'db dyn Db) {
        match self.history.grow(db) {
            Some(Growth::Appended(message)) => add_loads(db, &mut self.loaded, message),
            Some(Growth::Refiltered) => self.loaded = loaded_by(db, self.history.history()),
            None => {}
        }
        self.at += 1;
    }
}

fn outcome(nearby: &Nearby, states: Vec<RuleState>) -> SessionNearby {
    let attached = |s: &RuleState| *s == RuleState::Attached;
    let blocks =
        nearby.rules.iter().zip(&states).filter(|(_, s)| attached(s)).filter_map(|(r, _)| r.block.as_deref());
    let reminder = reminder(nearby.kind, blocks);
    let loaded = if nearby.kind.records_loaded() {
        nearby.rules.iter().zip(&states).filter(|(_, s)| attached(s)).map(|(r, _)| r.path.clone()).collect()
    } else {
        Vec::new()
    };
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
    for &message in history {
        add_loads(db, &mut loaded, message);
    }
    loaded
}

/// [`loaded_by`] for one more message at the end of the history.
fn add_loads(db: &dyn Db, loaded: &mut BTreeMap<PathBuf, String>, message: Message) {
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

/// The file a `read` tool part asked for, when the call got as far as resolving rules
/// (completed, or failed after the rules were claimed).
fn read_target(part: &Part) -> Option<&str> {
    if part.kind() != PartKind::Tool || part.tool.as_deref() != Some("read") {
        return None;
    }
    let state = part.state.as_ref()?;
    if !matches!(state.status, ToolStatus::Completed | ToolStatus::Error) {
        return None;
    }
    state.input.as_ref()?.get("filePath").and_then(Value::as_str)
}
