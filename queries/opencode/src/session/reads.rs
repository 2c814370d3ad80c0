//! N2–N7: the nearby rules a read attaches in a session: rules already loaded by completed
//! reads in the step's history are skipped, and reads in the same assistant message claim
//! each rule once.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::export::{Part, PartKind, Role, ToolStatus};
use super::history::{GrowingHistory, Growth, filter_compacted};
use super::race::{self, Racer, Verdict};
use super::{Message, Session, SessionError};
use crate::nearby::{Nearby, NearbyRule, ReadKind, Skip, nearby_rules, reminder};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::path;

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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionRule {
    /// The rule file.
    pub path: PathBuf,
    /// Attached, or why not: for a read the export records as completed, what it recorded.
    #[serde(flatten)]
    pub state: RuleState,
    /// N4.1: the reads of the step that may end up holding the rule, when that is opencode's
    /// own race (more than one): `state` is the likelier outcome.
    // One list per rule and step, shared by every read of the step whose walk finds the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<Arc<[Holder]>>,
    /// How many more reads may hold it than `race` lists (it lists 16 at most).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race_unlisted: Option<usize>,
    /// For a completed read: what ctxgraph's model computes, when it differs from the
    /// record (`state`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed: Option<RuleState>,
}

/// A read of the step that may hold a rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Holder {
    /// Its tool part, `None` for the read asked about when the export does not hold it.
    pub part: Option<String>,
    /// The file it reads.
    pub file: PathBuf,
}

/// What a read attaches in a session (N2–N6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
                race_unlisted: None,
                computed: None,
            })
            .collect();
        outcome(nearby, rules)
    }
}

/// N2–N6 for a read of `target` at `point`.
///
/// The reads of one assistant message run concurrently and claim each rule once (N4);
/// which of them gets a rule is `race`'s model (N4.1). What the export
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
    let step = Step::new(db, ws, group, &already)?;
    let in_past = before_part.is_some() && step.group[asked].recorded.is_some();
    Ok(step.answer(asked, in_past))
}

/// How the read tool's errors after the nearby rules were claimed begin (N6).
const FAILS_AFTER_RULES: [&str; 2] = ["Cannot read binary file", "Offset "];

/// One read of the step the question is about.
struct StepRead<'db> {
    /// Its tool part (`None`: the read asked about, not in the export).
    part: Option<&'db Part>,
    file: PathBuf,
    /// Still running or pending.
    in_flight: bool,
    /// Completed: its recorded `metadata.loaded`, what happened.
    recorded: Option<Vec<PathBuf>>,
}

impl StepRead<'_> {
    fn holder(&self) -> Holder {
        Holder { part: self.part.map(|p| p.id.clone()), file: self.file.clone() }
    }

    fn label(&self) -> String {
        self.part.map(|p| p.id.clone()).unwrap_or_default()
    }
}

/// The reads of `message` that got as far as the rules (completed, failed after claiming,
/// or still in flight), in call order.
fn message_reads(db: &dyn Db, ws: Workspace, message: Message) -> Vec<StepRead<'_>> {
    let mut group = Vec::new();
    for part in message.parts(db) {
        let Some((file, status)) = read_call(part) else { continue };
        // A failed read walked only if it failed after the rules (N1, N6): a missing file
        // fails before.
        let error = part.state.as_ref().and_then(|s| s.error.as_deref()).unwrap_or_default();
        if status == ToolStatus::Error && !FAILS_AFTER_RULES.iter().any(|p| error.starts_with(p)) {
            continue;
        }
        group.push(StepRead {
            part: Some(part),
            file: path::resolve(ws.cwd(db), Path::new(&*file)),
            in_flight: matches!(status, ToolStatus::Running | ToolStatus::Pending),
            recorded: part.completed_tool().map(|s| s.loaded().map(PathBuf::from).collect()),
        });
    }
    group
}

/// The reads of `current` ([`message_reads`]) and which of them the question is about: the
/// part `before_part`, else (the mid-step question) the first read of `target` in flight;
/// a read not in the message joins it last.
fn step_reads<'db>(
    db: &'db dyn Db,
    ws: Workspace,
    current: Option<Message>,
    before_part: Option<&str>,
    target: &Path,
) -> (Vec<StepRead<'db>>, usize) {
    let mut group = current.map(|message| message_reads(db, ws, message)).unwrap_or_default();
    let asked = match before_part {
        Some(id) => group.iter().rposition(|read| read.part.is_some_and(|p| p.id == id)),
        None => group.iter().position(|read| read.in_flight && read.file == target),
    };
    let asked = asked.unwrap_or_else(|| {
        group.push(StepRead { part: None, file: target.to_path_buf(), in_flight: false, recorded: None });
        group.len() - 1
    });
    (group, asked)
}

/// One step's reads with their walks, ready to answer for any of them: each race is run
/// once per step and the records are indexed by rule, so answering for every read of a
/// message of thousands of parallel reads stays linear in them.
struct Step<'a, 'db> {
    group: Vec<StepRead<'db>>,
    walks: Vec<&'db Nearby>,
    /// N2's loads of the history.
    already: &'a BTreeMap<PathBuf, String>,
    /// For each rule a completed read recorded, those reads, in call order.
    recorded_by: HashMap<PathBuf, Vec<usize>>,
    /// The past: the race over every read of the step from its start.
    whole: OnceCell<StepRace>,
    /// Mid-step: the race among the reads not completed, the completed ones' claims made.
    open: OnceCell<StepRace>,
}

/// A race run over some of a step's reads.
struct StepRace {
    /// The racing reads (indices into the step's group), in call order.
    racing: Vec<usize>,
    /// What the race made of each racing read's rules.
    race: race::Race,
    /// Each of `race`'s holder lists as the answer gives it: `None` when it is not contested.
    holders: Vec<Option<Arc<[Holder]>>>,
}

impl<'a, 'db> Step<'a, 'db> {
    fn new(
        db: &'db dyn Db,
        ws: Workspace,
        group: Vec<StepRead<'db>>,
        already: &'a BTreeMap<PathBuf, String>,
    ) -> Result<Self, SessionError> {
        let walks: Vec<&'db Nearby> = group
            .iter()
            .map(|read| nearby_rules(db, ws, read.file.clone()).as_ref().map_err(Clone::clone))
            .collect::<Result<_, _>>()?;
        let mut recorded_by: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        for (k, read) in group.iter().enumerate() {
            for path in read.recorded.iter().flatten() {
                let readers = recorded_by.entry(path.clone()).or_default();
                // A record lists a rule once; a hand-edited one may not.
                if readers.last() != Some(&k) {
                    readers.push(k);
                }
            }
        }
        Ok(Step { group, walks, already, recorded_by, whole: OnceCell::new(), open: OnceCell::new() })
    }

    /// What read `asked` attaches: for a completed read in the past (`in_past`), the record
    /// with the model's answer beside it; otherwise the model, completed reads' claims made.
    fn answer(&self, asked: usize, in_past: bool) -> SessionNearby {
        let rules = if in_past {
            let race = self.whole.get_or_init(|| self.race((0..self.group.len()).collect(), |_| false));
            let model = self.modelled(race, asked);
            self.recorded_rules(asked, model)
        } else {
            // `asked` is never a completed read here, so it races.
            let race = self.open.get_or_init(|| {
                let racing = (0..self.group.len()).filter(|&k| self.group[k].recorded.is_none()).collect();
                self.race(racing, |rule| self.recorded_by.contains_key(rule.path.as_path()))
            });
            let mut rules = self.modelled(race, asked);
            for rule in &mut rules {
                let by = self.recorded_by.get(rule.path.as_path()).and_then(|readers| readers.first());
                if let (RuleState::Attached | RuleState::Empty, Some(&by)) = (&rule.state, by) {
                    rule.state = RuleState::Claimed { by_part: self.group[by].label() };
                }
            }
            rules
        };
        outcome(self.walks[asked], rules)
    }

    /// Runs the race among `racing`; rules skipped for every read (N2, N3) and those
    /// `made_already` are not contested.
    fn race(&self, racing: Vec<usize>, made_already: impl Fn(&NearbyRule) -> bool) -> StepRace {
        let skipped = |rule: &NearbyRule| {
            !matches!(state(rule, self.already, &BTreeMap::new()), RuleState::Attached | RuleState::Empty)
        };
        let racers: Vec<Racer<'_>> = racing.iter().map(|&k| Racer { rules: &self.walks[k].rules }).collect();
        let race = race::run(&racers, |rule| skipped(rule) || made_already(rule));
        let holders = race
            .holders
            .iter()
            .map(|h| {
                h.contested().then(|| h.listed.iter().map(|&k| self.group[racing[k]].holder()).collect())
            })
            .collect();
        StepRace { racing, race, holders }
    }

    /// The asked read's rules as `race` has them.
    fn modelled(&self, race: &StepRace, asked: usize) -> Vec<SessionRule> {
        let at = race.racing.binary_search(&asked).unwrap_or_default();
        self.walks[asked]
            .rules
            .iter()
            .zip(&race.race.outcomes[at])
            .map(|(rule, outcome)| {
                let state = match outcome.verdict {
                    Verdict::Settled | Verdict::Claims => state(rule, self.already, &BTreeMap::new()),
                    Verdict::Lost(by) => RuleState::Claimed { by_part: self.group[race.racing[by]].label() },
                };
                let (holders, unlisted) = outcome
                    .holders
                    .map_or((None, 0), |h| (race.holders[h].clone(), race.race.holders[h].unlisted));
                let race_unlisted = (holders.is_some() && unlisted > 0).then_some(unlisted);
                SessionRule { path: rule.path.clone(), state, race: holders, race_unlisted, computed: None }
            })
            .collect()
    }

    /// A completed read's rules as the export records them, with the model's answer where
    /// it differs: a rule in its `metadata.loaded` was attached; one another read of the
    /// message recorded was claimed by it; the rest keep the model's reason.
    fn recorded_rules(&self, asked: usize, model: Vec<SessionRule>) -> Vec<SessionRule> {
        let recorded = self.group[asked].recorded.as_deref().unwrap_or_default();
        self.walks[asked]
            .rules
            .iter()
            .zip(model)
            .map(|(rule, mut modelled)| {
                let by_other = self
                    .recorded_by
                    .get(rule.path.as_path())
                    .and_then(|readers| readers.iter().find(|&&k| k != asked));
                let truth = if recorded.contains(&rule.path) {
                    RuleState::Attached
                } else if let Some(&other) = by_other {
                    RuleState::Claimed { by_part: self.group[other].label() }
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
/// the session ([`GrowingHistory`]) and N2's loaded rules with it, and each race of a
/// message is run once for all of its reads.
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

    /// The current message's `read` calls, in part order (none once past the last message).
    pub fn reads(&self, db: &'db dyn Db, ws: Workspace) -> Result<Vec<SessionRead<'db>>, SessionError> {
        let Some(&message) = self.messages.get(self.at) else { return Ok(Vec::new()) };
        let calls: Vec<(&'db Part, PathBuf)> = message
            .parts(db)
            .iter()
            .filter_map(|part| {
                read_call(part).map(|(file, _)| (part, path::resolve(ws.cwd(db), Path::new(&*file))))
            })
            .collect();
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        // N4: a user-attached file is read with no history.
        let none = BTreeMap::new();
        let already = if message.info(db).role == Role::User { &none } else { &self.loaded };
        let step = Step::new(db, ws, message_reads(db, ws, message), already)?;
        // The last read of each part id, as `before_part` finds it.
        let index: HashMap<&str, usize> = step
            .group
            .iter()
            .enumerate()
            .filter_map(|(k, read)| read.part.map(|p| (p.id.as_str(), k)))
            .collect();
        calls
            .into_iter()
            .map(|(part, file)| {
                let nearby = if let Some(&k) = index.get(part.id.as_str()) {
                    step.answer(k, step.group[k].recorded.is_some())
                } else {
                    // A read that failed before its rules: asked about as a read joining
                    // the step, as `nearby_in_session` does.
                    let (group, asked) = step_reads(db, ws, Some(message), Some(&part.id), &file);
                    Step::new(db, ws, group, already)?.answer(asked, false)
                };
                Ok(SessionRead { part, file, nearby })
            })
            .collect()
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

/// The file a `read` tool part asked for and its status, when the call got as far as
/// resolving rules (completed, failed after the rules were claimed) or may be doing so (in
/// flight: `running`, `pending`).
pub(super) fn read_call(part: &Part) -> Option<(Cow<'_, str>, ToolStatus)> {
    /// What a read is called with: its one argument the stages read.
    #[derive(Deserialize)]
    struct ReadInput<'a> {
        #[serde(rename = "filePath", borrow)]
        file_path: Cow<'a, str>,
    }
    if part.kind() != PartKind::Tool || part.tool.as_deref() != Some("read") {
        return None;
    }
    let state = part.state.as_ref()?;
    let input: ReadInput<'_> = state.input.as_ref()?.fields()?;
    Some((input.file_path, state.status))
}
