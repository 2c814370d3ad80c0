//! N2–N7: the nearby rules a read attaches in a session: rules already loaded by completed
//! reads in the step's history are skipped, and reads in the same assistant message claim
//! each rule once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::export::{PartKind, Role, ToolStatus};
use super::history::filter_compacted;
use super::race::{self, Racer, Verdict};
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
    /// Attached, or why not: for a read the export records as completed, what it recorded.
    #[serde(flatten)]
    pub state: RuleState,
    /// N4.1: the reads of the step that may end up holding the rule, when that is opencode's
    /// own race (more than one): `state` is the likelier outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<Vec<Holder>>,
    /// For a completed read: what ctxgraph's model computes, when it differs from the
    /// record (`state`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed: Option<RuleState>,
}

/// A read of the step that may hold a rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// Its tool part, `None` for the read asked about when the export does not hold it.
    pub part: Option<String>,
    /// The file it reads.
    pub file: PathBuf,
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
        let rules = nearby
            .rules
            .iter()
            .map(|rule| SessionRule {
                path: rule.path.clone(),
                state: state(rule, &BTreeMap::new(), &BTreeMap::new()),
                race: None,
                computed: None,
            })
            .collect();
        outcome(nearby, rules)
    }
}

/// How the read tool's errors after the nearby rules were claimed begin (N6).
const FAILS_AFTER_RULES: [&str; 2] = ["Cannot read binary file", "Offset "];

/// One read of the step the question is about.
struct StepRead {
    /// Its tool part (`None`: the read asked about, not in the export).
    part: Option<String>,
    file: PathBuf,
    /// Completed: its recorded `metadata.loaded`, what happened.
    recorded: Option<Vec<PathBuf>>,
}

impl StepRead {
    fn holder(&self) -> Holder {
        Holder { part: self.part.clone(), file: self.file.clone() }
    }

    fn label(&self) -> String {
        self.part.clone().unwrap_or_default()
    }
}

/// N2–N6 for a read of `target` at `point`.
///
/// The reads of one assistant message run concurrently and claim each rule once (N4);
/// which of them gets a rule is [`race`](super::race)'s model (N4.1). What the export
/// records wins for the past: a completed read's rules are its recorded `metadata.loaded`
/// (with `computed` where the model says otherwise), and for a read added to a message
/// (`before_part: None`, the mid-step question) the completed reads' records are claims
/// already made, while the message's in-flight reads (`running`, `pending`) race it. A read
/// at the next step has no rivals.
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
    let target = path::resolve(ws.cwd(db), target);
    let before_part = match point {
        ReadPoint::InMessage { before_part, .. } => before_part.as_deref(),
        ReadPoint::NextStep => None,
    };
    let (group, asked) = step_reads(db, ws, current, before_part, &target);
    let walks: Vec<&Nearby> = group
        .iter()
        .map(|read| nearby_rules(db, ws, read.file.clone()).as_ref().map_err(Clone::clone))
        .collect::<Result<_, _>>()?;
    let skipped = |rule: &NearbyRule| {
        !matches!(state(rule, &already, &BTreeMap::new()), RuleState::Attached | RuleState::Empty)
    };
    let rules = if let (Some(recorded), Some(_)) = (&group[asked].recorded, before_part) {
        // The past: the record, and the model run over the whole step from its start.
        let model = modelled(&group, &walks, asked, &(0..group.len()).collect::<Vec<_>>(), &already, skipped);
        recorded_rules(&group, walks[asked], asked, recorded, model)
    } else {
        // Mid-step: the completed reads' claims are made; the others race from here.
        let racing: Vec<usize> =
            (0..group.len()).filter(|&k| k == asked || group[k].recorded.is_none()).collect();
        let made = |rule: &NearbyRule| {
            group
                .iter()
                .enumerate()
                .any(|(k, r)| k != asked && r.recorded.as_ref().is_some_and(|l| l.contains(&rule.path)))
        };
        let mut rules = modelled(&group, &walks, asked, &racing, &already, |r| skipped(r) || made(r));
        for rule in &mut rules {
            let by = group.iter().find(|r| r.recorded.as_ref().is_some_and(|l| l.contains(&rule.path)));
            if let (RuleState::Attached | RuleState::Empty, Some(by)) = (&rule.state, by) {
                rule.state = RuleState::Claimed { by_part: by.label() };
            }
        }
        rules
    };
    Ok(outcome(walks[asked], rules))
}

/// The reads of `current` that got as far as the rules (completed, failed after claiming,
/// or still in flight), and which of them the question is about; a read not in the
/// message joins it last.
fn step_reads(
    db: &dyn Db,
    ws: Workspace,
    current: Option<Message>,
    before_part: Option<&str>,
    target: &Path,
) -> (Vec<StepRead>, usize) {
    let mut group = Vec::new();
    let mut asked = None;
    for part in current.map(|m| m.parts(db).as_slice()).unwrap_or_default() {
        let Some((file, status)) = read_call(part) else { continue };
        // A failed read walked only if it failed after the rules (N1, N6): a missing file
        // fails before.
        let error = part.state.as_ref().and_then(|s| s.error.as_deref()).unwrap_or_default();
        if status == ToolStatus::Error && !FAILS_AFTER_RULES.iter().any(|p| error.starts_with(p)) {
            continue;
        }
        let file = path::resolve(ws.cwd(db), Path::new(file));
        let in_flight = matches!(status, ToolStatus::Running | ToolStatus::Pending);
        let is_asked = match before_part {
            Some(id) => id == part.id,
            // The mid-step question: the read of FILE may already be in flight.
            None => in_flight && asked.is_none() && file == target,
        };
        if is_asked {
            asked = Some(group.len());
        }
        let recorded = part.completed_tool().map(|s| s.loaded().map(PathBuf::from).collect());
        group.push(StepRead { part: Some(part.id.clone()), file, recorded });
    }
    let asked = asked.unwrap_or_else(|| {
        group.push(StepRead { part: None, file: target.to_path_buf(), recorded: None });
        group.len() - 1
    });
    (group, asked)
}

/// The asked read's rules as the model has them: `racing` (indices into `group`, which
/// includes `asked`) race; `settled` rules are not contested.
fn modelled(
    group: &[StepRead],
    walks: &[&Nearby],
    asked: usize,
    racing: &[usize],
    already: &BTreeMap<PathBuf, String>,
    settled: impl Fn(&NearbyRule) -> bool,
) -> Vec<SessionRule> {
    let racers: Vec<Racer<'_>> = racing.iter().map(|&k| Racer { rules: &walks[k].rules }).collect();
    let outcomes = race::run(&racers, settled);
    let at = racing.iter().position(|&k| k == asked).unwrap_or_default();
    walks[asked]
        .rules
        .iter()
        .zip(&outcomes[at])
        .map(|(rule, outcome)| {
            let state = match outcome.verdict {
                Verdict::Settled | Verdict::Claims => state(rule, already, &BTreeMap::new()),
                Verdict::Lost(by) => RuleState::Claimed { by_part: group[racing[by]].label() },
            };
            let race = (outcome.holders.len() > 1)
                .then(|| outcome.holders.iter().map(|&h| group[racing[h]].holder()).collect());
            SessionRule { path: rule.path.clone(), state, race, computed: None }
        })
        .collect()
}

/// A completed read's rules as the export records them, with the model's answer where it
/// differs: a rule in its `metadata.loaded` was attached; one another read of the message
/// recorded was claimed by it; the rest keep the model's reason.
fn recorded_rules(
    group: &[StepRead],
    walk: &Nearby,
    asked: usize,
    recorded: &[PathBuf],
    model: Vec<SessionRule>,
) -> Vec<SessionRule> {
    walk.rules
        .iter()
        .zip(model)
        .map(|(rule, mut modelled)| {
            let by_other = group
                .iter()
                .enumerate()
                .find(|(k, r)| *k != asked && r.recorded.as_ref().is_some_and(|l| l.contains(&rule.path)));
            let truth = if recorded.contains(&rule.path) {
                RuleState::Attached
            } else if let Some((_, other)) = by_other {
                RuleState::Claimed { by_part: other.label() }
            } else if modelled.state == RuleState::Attached {
                // Not loaded, not recorded by another completed read: a read of the step
                // that failed or is still running took it.
                RuleState::Claimed { by_part: String::new() }
            } else {
                modelled.state.clone()
            };
            if truth != modelled.state {
                modelled.computed = Some(std::mem::replace(&mut modelled.state, truth));
            }
            modelled
        })
        .collect()
}

fn outcome(nearby: &Nearby, rules: Vec<SessionRule>) -> SessionNearby {
    let rules: Vec<SessionRule> = rules
        .into_iter()
        .map(|rule| SessionRule {
            state: rule.state.for_kind(nearby.kind),
            computed: rule.computed.map(|c| c.for_kind(nearby.kind)),
            ..rule
        })
        .collect();
    let with = |keep: fn(&RuleState) -> bool| {
        nearby.rules.iter().zip(&rules).filter(move |(_, s)| keep(&s.state)).map(|(r, _)| r)
    };
    let shown = with(|s| *s == RuleState::Attached).filter_map(|r| r.block.as_deref());
    let reminder = reminder(nearby.kind, shown);
    let loaded = with(|s| matches!(s, RuleState::Attached | RuleState::LoadedNotShown))
        .map(|r| r.path.clone())
        .collect();
    SessionNearby { kind: nearby.kind, reminder, rules, loaded }
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

/// The file a `read` tool part asked for and its status, when the call got as far as
/// resolving rules (completed, failed after the rules were claimed) or may be doing so (in
/// flight: `running`, `pending`).
fn read_call(part: &super::export::Part) -> Option<(&str, ToolStatus)> {
    if part.kind() != PartKind::Tool || part.tool.as_deref() != Some("read") {
        return None;
    }
    let state = part.state.as_ref()?;
    Some((state.input.as_ref()?.get("filePath").and_then(Value::as_str)?, state.status))
}
