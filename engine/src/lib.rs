//! The host side of ctxgraph.
//!
//! [`Engine`] owns the salsa database, decides what the world looks like (the real file
//! system and process environment, or an in-memory one), and is the only place that
//! mutates inputs. Callers ask it for prompts; the queries do the work.
//!
//! An agent host keeps one engine alive and, before every model step, opens the working
//! directory and builds ([`Engine::open`], [`Turns::build`] or [`Engine::prompt`]); between
//! steps it applies what changed on disk ([`watch::Watcher`] or [`Engine::apply_changes`]).
//! A warm step with nothing changed executes no query. Remote documents are loaded with
//! the async [`Engine::load_config`] and [`Engine::load_remote`]. `examples/host.rs` is a
//! runnable host; the JSON-RPC and MCP servers behind `ctxgraph serve` and `ctxgraph mcp`
//! are the `ctxgraph-server` crate, built on this API alone.

#![warn(missing_docs)]

pub mod atomic;
mod changes;
mod database;
mod host;
mod index;
pub mod installation;
pub mod mcp;
mod os;
pub mod prepare;
pub mod profiles;
mod refresh;
pub mod remote;
mod session;
mod snapshot;
mod tokens;
mod turn;
pub mod watch;
pub mod wording;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_db::Db;
use ctxgraph_db::fault::InputFault;
use ctxgraph_db::installation::InstallationState;
use ctxgraph_db::profile;
use ctxgraph_db::profile::AgentFate;
use ctxgraph_db::worktree::worktree;
use ctxgraph_memory::recall::{memory_context, skipped_lines, unreadable_store_file};
use ctxgraph_opencode::agents::{Agents, agents};
use ctxgraph_opencode::config::merged_config;
use ctxgraph_opencode::config::wellknown::pending_requests;
use ctxgraph_opencode::explain::{explain, explain_target};
use ctxgraph_opencode::instructions::system_paths;
use ctxgraph_opencode::lint::lint;
use ctxgraph_opencode::memory::prompt_memory;
use ctxgraph_opencode::message::{MessageError, system_message, system_message_layout};
use ctxgraph_opencode::nearby::nearby_rules;
use ctxgraph_opencode::prompt::{system_prompt, system_prompt_layout};
use ctxgraph_opencode::session::{Message, Session};
use salsa::Setter;

pub use changes::{Applied, ChangeEvent};
pub use database::{Database, ExecutionLog};
pub use host::{Clock, HostEnv, SystemClock};
pub use os::{MAX_FILE_BYTES, OsSystem, read_regular_file};
pub use prepare::{Policy, Prepared, Warning};
pub use refresh::RemoteRefresh;
pub use session::{LimitOverrides, ReadAnswer, SessionFailure};
pub use snapshot::{Cancel, Interrupted, Snapshot};
pub use tokens::O200k;
pub use turn::{AgentTextKey, AgentTurn, AgentTurns, BlockIds, Turn, TurnDiff, Turns, block_ids, same_text};

// What the engine's methods take and return, so a host needs no direct dependency on the
// query crates for the common answers; the types nested deeper in them are in those crates.
pub use ctxgraph_db::agent::Agent;
pub use ctxgraph_db::hash::ContentHash;
pub use ctxgraph_db::lint::{Budget, Code, Finding, Location, Severity};
pub use ctxgraph_db::remote::{ConfigDocState, ConfigRequest, RemoteState};
/// The one secrets table and redaction every output goes through (serve, MCP, the
/// language server reach it here).
pub use ctxgraph_db::secrets;
pub use ctxgraph_db::system::{FileKind, MemorySystem, System};
pub use ctxgraph_db::worktree::Worktree;
pub use ctxgraph_db::{Host, Workspace};
pub use ctxgraph_memory::recall::MemorySettings;
pub use ctxgraph_memory::recall::Recall;
pub use ctxgraph_memory::record::Skipped;
pub use ctxgraph_memory::render::MemoryContext;
pub use ctxgraph_opencode::config::{ConfigError, MergedConfig};
pub use ctxgraph_opencode::explain::{Explanation, TargetExplanation};
pub use ctxgraph_opencode::instructions::SystemPaths;
pub use ctxgraph_opencode::message::MessageOptions;
pub use ctxgraph_opencode::nearby::{Nearby, NearbyRule, ReadKind, Skip};
pub use ctxgraph_opencode::prompt::{
    Block, BlockKind, BuildError, Layout, ModelRef, PlacedBlock, Prompt, Section,
};

/// The types nested in the engine's answers, grouped by answer, for code that renders them
/// (the servers, the CLI) without naming the query layer's modules.
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
    /// The workspace memory: recall's blocks, and the records the store writes.
    pub mod memory {
        pub use ctxgraph_memory::record::{FactSource, Scope};
        pub use ctxgraph_memory::render::{
            Block, BlockId, Cut, CutReason, DEFAULT_MAX_CHARS, MemoryContext, Recalled,
        };
    }
    /// Sessions: the input, its messages, the compaction plan and reads in its state.
    pub mod session {
        pub use ctxgraph_opencode::session::Session;
        pub use ctxgraph_opencode::session::compaction::{CompactionPlan, DEFAULT_SUMMARY_TEMPLATE};
        pub use ctxgraph_opencode::session::export::{ExportError, Role, ToolStatus};
        pub use ctxgraph_opencode::session::reads::{ReadPoint, SessionNearby, SessionRule};
    }
    /// A mistake in an agent's input, as [`crate::EngineError::fault`] gives it.
    pub mod fault {
        pub use ctxgraph_db::fault::{FaultAt, FaultIssue, InputFault};
        pub use ctxgraph_db::lines::Column;
    }
    /// The shape every agent's profile answers ([`crate::Engine::agent_layout`]).
    pub mod profile {
        pub use ctxgraph_db::profile::{
            AgentFate, Block, Layout, LeftOut, ProfileError, ReadLayout, RemoteDocument, Request, Section,
            Setting, Status, WordingSource,
        };
        pub use ctxgraph_db::session_costs::{FileCost, Saving, SessionCosts, StepCost, StepWhy};
    }
    /// An agent's settings, place by place ([`crate::Engine::settings_report`]).
    pub mod settings {
        pub use ctxgraph_db::settings::{
            LayerStatus, Replaced, SettingKind, SettingNode, SettingOrigin, SettingsLayer, SettingsReport,
            SettingsSource,
        };
    }
    /// What explain's references (B3) and MCP (B4) sections are read off.
    pub mod stages {
        pub use ctxgraph_db::lines::LineColumn;
        pub use ctxgraph_db::mcp::{McpState, McpTransport};
        pub use ctxgraph_opencode::mcp::{Connect, McpFate, McpServerFact};
        pub use ctxgraph_opencode::references::{ReferenceFate, References};
    }
    /// Paths as opencode prints them.
    pub use ctxgraph_db::path::display;
    /// A path with `.` and `..` resolved lexically, as the engine keys its inputs.
    pub use ctxgraph_db::path::normalize;
    /// A path resolved against a base directory lexically, as the engine resolves a
    /// question's relative paths against the working directory.
    pub use ctxgraph_db::path::resolve;
}

/// opencode's texts by name ([`Engine::installation_texts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstallationTexts {
    /// The executable the texts were read from; `None` without an installation.
    pub binary: Option<PathBuf>,
    /// Its release.
    pub version: Option<String>,
    /// Each text asked for that was found and verified.
    pub texts: std::collections::BTreeMap<String, String>,
    /// Why each other one is not.
    pub unavailable: std::collections::BTreeMap<String, String>,
}

/// Why the engine could not answer.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The working directory does not exist, cannot be resolved or is not a directory.
    #[error("working directory {}: {reason}", path.display())]
    WorkingDirectory {
        /// The directory as given.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The file a `nearby` question is about cannot be read.
    #[error("{}: {reason}", path.display())]
    ReadTarget {
        /// The file, resolved against the working directory.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// opencode would refuse to build here too (a broken config, an unreadable rule file…).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The HTTP client for remote documents could not be set up.
    #[error(transparent)]
    Fetcher(#[from] remote::FetcherError),
    /// A session export could not be loaded or answered.
    #[error(transparent)]
    Session(#[from] SessionFailure),
    /// An agent's session record is malformed (`session rules`): the file and line.
    #[error("not a session record: {0}")]
    SessionFile(#[from] ctxgraph_db::session_costs::SessionFileError),
    /// `--strict`: remote instructions that could not be loaded ([`Engine::prepare_agent`]).
    #[error("--strict: {} remote instruction(s) could not be loaded: {}", urls.len(), urls.join(", "))]
    RemoteStrict {
        /// Each URL as written in the config.
        urls: Vec<String>,
    },
    /// An agent would not start here, or a setting for it is not modelled.
    #[error(transparent)]
    Profile(profile::ProfileError),
    /// The output must hold opencode's own texts, and the installation cannot provide them.
    #[error("the whole message holds opencode's own texts, which need its installation: {reason}")]
    NoInstallation {
        /// What is missing, and why.
        reason: String,
    },
    /// The question does not apply to the agent asked about (a session of an agent whose
    /// sessions are not modelled).
    #[error("{0}")]
    Unsupported(String),
    /// `--opencode-agent` names an agent opencode does not have (or config disabled).
    #[error("opencode has no agent {name:?} (agents: {})", available.join(", "))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents there are, in opencode's order.
        available: Vec<String>,
    },
}

/// A state of the engine's inputs ([`Engine::revision`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputsRevision(salsa::Revision);

impl EngineError {
    /// The mistake in an agent's input behind this error, as data every surface shows with
    /// its line ([`InputFault`]): a broken config of any agent. `None` for every other
    /// error.
    pub fn fault(&self) -> Option<InputFault> {
        match self {
            EngineError::Build(BuildError::Config(config)) => Some(config.fault()),
            EngineError::Profile(profile::ProfileError::WouldNotStart { agent, fault }) => {
                let mut fault = (**fault).clone();
                if let Some(at) = &mut fault.at {
                    at.headline = format!("{agent} would not start here: {}", at.headline);
                }
                Some(fault)
            }
            _ => None,
        }
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

/// The warm state of an agent host: one salsa database over one file system and process
/// environment, with a [`Workspace`] per working directory. See the crate documentation.
pub struct Engine {
    db: Database,
    host: Host,
    workspaces: HashMap<PathBuf, Workspace>,
    /// `open` arguments (made absolute) already resolved, with the input of the directory
    /// they resolved to, so a warm turn makes no system call.
    opened: HashMap<PathBuf, (Workspace, ctxgraph_db::files::File)>,
    /// Read on every [`Engine::open`]; `None` keeps the date the engine was made with.
    clock: Option<Arc<dyn Clock>>,
    /// The `File` inputs sorted by path, for the subtree re-stats events cause.
    index: index::PathIndex,
    /// Each session's messages by id, so an append finds the message it updates (or that
    /// there is none) without reading every message's input.
    message_ids: HashMap<Session, HashMap<String, Message>>,
}

impl Engine {
    /// An engine over `system` with the process facts in `env`; its date stays `env.date`
    /// unless a clock is given ([`Engine::with_clock`]).
    pub fn new(system: Arc<dyn System>, env: HostEnv) -> Self {
        let db = Database::new(system);
        let host = Host::new(&db, env.vars, env.home, env.platform, env.date);
        let (workspaces, opened) = (HashMap::new(), HashMap::new());
        Self {
            db,
            host,
            workspaces,
            opened,
            clock: None,
            index: index::PathIndex::default(),
            message_ids: HashMap::new(),
        }
    }

    /// An engine over the real file system and this process's environment, whose date
    /// follows the local clock.
    pub fn from_process() -> Self {
        Self::new(Arc::new(OsSystem), HostEnv::from_process()).with_clock(Arc::new(SystemClock::default()))
    }

    /// Reads today's date from `clock` on every [`Engine::open`], as opencode does on every
    /// model step. Without a clock the date stays the one in [`HostEnv`] (hermetic runs).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self.sync_date();
        self
    }

    /// Sets the [`Host`] input's date from the clock when the day has changed; only the
    /// environment block and what contains it re-run then. Returns whether it changed.
    pub fn sync_date(&mut self) -> bool {
        let Some(clock) = &self.clock else { return false };
        let today = clock.today();
        if *self.host.date(&self.db) == today {
            return false;
        }
        self.host.set_date(&mut self.db).to(today);
        true
    }

    /// The database, for tests and benches that run queries the engine has no method for
    /// (the `testing` feature). A host asks the engine's typed methods instead.
    #[cfg(feature = "testing")]
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The database, for the engine's own modules (one name whether or not `testing` also
    /// hands it out).
    #[cfg(not(feature = "testing"))]
    pub(crate) fn db(&self) -> &Database {
        &self.db
    }

    /// The working directory `ws` was opened in (P4: canonicalised).
    pub fn cwd(&self, ws: Workspace) -> &Path {
        ws.cwd(&self.db)
    }

    /// Which state of the inputs the engine holds: equal across two calls exactly when no
    /// input was set in between (the engine compares before it sets, so an unchanged file
    /// leaves it equal). An answer computed at one revision is the answer at that revision,
    /// whatever it is asked again.
    pub fn revision(&self) -> InputsRevision {
        // salsa's own counter: `plumbing` is its macros' API, stable within the pinned 0.28.
        InputsRevision(salsa::plumbing::current_revision(&self.db))
    }

    /// How many times each query has executed since the engine was made: what a host
    /// reports as the work a step did.
    pub fn executions(&self) -> &ExecutionLog {
        self.db.executions()
    }

    /// `text`'s length in `o200k_base` tokens, the unit every answer's token counts are in.
    pub fn count_tokens(&self, text: &str) -> usize {
        use ctxgraph_db::tokens::TokenCounter;
        O200k.count(text)
    }

    /// How many file inputs the graph holds (existing or not).
    pub fn input_count(&self) -> usize {
        self.db.files().len()
    }

    /// The environment variables the engine was made with (`{env:}`, the memory store's
    /// redaction of their values).
    pub fn env_vars(&self) -> &std::collections::BTreeMap<String, String> {
        self.host.vars(&self.db)
    }

    /// Applies file-system events to the inputs (see [`ChangeEvent`]); the next build
    /// recomputes only what they invalidated.
    pub fn apply_changes(&mut self, changes: &[ChangeEvent]) -> Applied {
        let applied = changes::apply(&mut self.db, &mut self.index, changes);
        if applied.rescanned || applied.kinds_changed > 0 {
            // A symlink on the way to a working directory may point elsewhere now.
            self.opened.clear();
        }
        // A path on the way to an opened directory came, went or was replaced (a symlink
        // re-pointed with `ln -sfn` keeps its kind): resolve that directory again.
        for change in changes {
            let (first, second) = match change {
                ChangeEvent::Modified(_) | ChangeEvent::Rescan => continue,
                ChangeEvent::Created(path) | ChangeEvent::Removed(path) => (path, None),
                ChangeEvent::Renamed { from, to } => (from, Some(to)),
            };
            for path in std::iter::once(first).chain(second) {
                self.opened.retain(|cwd, _| !cwd.starts_with(path));
            }
        }
        applied
    }

    /// Makes `text` the content of `path` (absolute) for every query, in place of what the
    /// disk holds: an editor's unsaved buffer. A running [`Snapshot`] is interrupted (its
    /// work is stale) before the input changes. Returns whether anything changed.
    pub fn set_overlay(&mut self, path: &Path, text: &str) -> bool {
        changes::set_overlay(&mut self.db, path, Some(text))
    }

    /// Drops the editor's text for `path`: queries read the disk again (the editor closed
    /// the buffer). Returns whether anything changed.
    pub fn clear_overlay(&mut self, path: &Path) -> bool {
        changes::set_overlay(&mut self.db, path, None)
    }

    /// A read-only copy of the engine for another thread, over the same memoized results.
    /// Its answers come from the revision it was taken at; the next change to an input
    /// (an overlay, a file event) interrupts its running query and waits for it to drop.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(Engine {
            db: self.db.clone(),
            host: self.host,
            workspaces: HashMap::new(),
            opened: HashMap::new(),
            clock: None,
            index: index::PathIndex::default(),
            message_ids: HashMap::new(),
        })
    }

    /// The workspace for a working directory (P4: canonicalised; it must be a directory).
    /// Asking again for the same `cwd` costs no system call while its directory exists.
    /// Each call is a new step: the date is read from the clock (see [`Engine::with_clock`]).
    pub fn open(&mut self, cwd: &Path) -> Result<Workspace, EngineError> {
        self.sync_date();
        // Keys are absolute and normalised, so a path equal to one needs neither step (a
        // host asks with the same absolute path on every turn).
        let lexical;
        let (key, known) = if let Some(&known) = self.opened.get(cwd) {
            (cwd, Some(known))
        } else {
            lexical = std::path::absolute(cwd).map(|p| ctxgraph_db::path::normalize(&p));
            let key = lexical.as_deref().unwrap_or(cwd);
            (key, self.opened.get(key).copied())
        };
        if let Some((ws, dir)) = known
            && dir.kind(&self.db) == FileKind::Directory
        {
            return Ok(ws);
        }
        let ws = self.resolve(cwd)?;
        if ws.cwd(&self.db) != key {
            // Reached through a symlink: an input for the path as given lets a watcher see
            // that symlink re-pointed (it watches the links on the way to every input).
            self.db.files().get(&self.db, key);
        }
        let dir = self.db.files().get(&self.db, ws.cwd(&self.db));
        self.opened.insert(key.to_path_buf(), (ws, dir));
        Ok(ws)
    }

    fn resolve(&mut self, cwd: &Path) -> Result<Workspace, EngineError> {
        let system = ctxgraph_db::Db::system(&self.db);
        let error = |reason: String| EngineError::WorkingDirectory { path: cwd.to_path_buf(), reason };
        let real = system.canonicalize(cwd).map_err(|err| error(err.to_string()))?;
        // Through the input, so the walks that start here do not stat the directory a
        // second time; an input that says otherwise may predate the directory.
        let input = self.db.files().get(&self.db, &real).kind(&self.db);
        if input != FileKind::Directory && system.kind(&real) != FileKind::Directory {
            return Err(error("not a directory".to_owned()));
        }
        let (db, host) = (&self.db, self.host);
        Ok(*self.workspaces.entry(real.clone()).or_insert_with(|| Workspace::new(db, host, real)))
    }

    /// The system text from the environment block to the last instruction block.
    pub fn system_prompt(&self, ws: Workspace, model: Option<ModelRef>) -> Result<Prompt, EngineError> {
        Ok(system_prompt(&self.db, ws, model).clone()?)
    }

    /// The whole system message (docs/opencode/prompt.md) opencode sends for `options` (A1–A2, B1–B5): the
    /// installation's texts come from [`Engine::load_installation`].
    pub fn system_message(&self, ws: Workspace, options: MessageOptions) -> Result<Prompt, EngineError> {
        Ok(system_message(&self.db, ws, options).clone()?)
    }

    /// `path`'s fate in every agent's context, side by side (`explain --agent all FILE`).
    pub fn file_fates(&self, ws: Workspace, path: &Path) -> Vec<AgentFate> {
        let path = ctxgraph_db::path::resolve(ws.cwd(&self.db), path);
        profiles::every_fate(&self.db, ws, &O200k, &path)
    }

    /// One agent's verdict on `path` (`explain --agent NAME FILE`).
    pub fn file_fate(&self, ws: Workspace, agent: Agent, path: &Path) -> AgentFate {
        let path = ctxgraph_db::path::resolve(ws.cwd(&self.db), path);
        let profile = profiles::profile(agent);
        let mut fate = profile.fate(&self.db, ws, &O200k, &path);
        // Where the block's place comes from a directory's listing, explain says so.
        let listed = profile.layout(&self.db, ws, &profile::Request::default()).ok().and_then(|layout| {
            layout.blocks.iter().find(|b| b.source.path() == Some(path.as_path()))?.listed.clone()
        });
        if let Some(listed) = listed {
            fate.reason = format!("{}; {}", fate.reason, listed.describe(agent.name()));
        }
        fate
    }

    /// What to do about each file `agent` leaves out from `ws`, by file, in the agent's terms
    /// (none for an agent whose rules say nothing of it).
    pub fn agent_fixes(&self, ws: Workspace, agent: Agent) -> std::collections::BTreeMap<PathBuf, String> {
        profiles::profile(agent).fixes(&self.db, ws).into_iter().collect()
    }

    /// Whether `agent` reads settings from the file `path` in `ws` (one of its settings files,
    /// found or not): cheap, where [`Engine::settings_report`] builds every value.
    pub fn reads_settings_from(&self, ws: Workspace, agent: Agent, path: &Path) -> bool {
        profiles::profile(agent).settings_files(&self.db, ws).iter().any(|file| file.path == path)
    }

    /// `agent`'s settings in `ws`: every place it reads them from, in the order a later one
    /// wins, and every value in effect with where it came from (`ctxgraph config`).
    pub fn settings_report(
        &self,
        ws: Workspace,
        agent: Agent,
    ) -> Result<ctxgraph_db::settings::SettingsReport, EngineError> {
        Ok(profiles::profile(agent).settings_report(&self.db, ws)?)
    }

    /// What `agent` sends from `ws` ([`profile::Layout`]: its exact text, every block placed,
    /// every file left out): what `build --agent NAME` prints, for every agent alike.
    pub fn agent_layout(
        &self,
        ws: Workspace,
        agent: Agent,
        request: &profile::Request,
    ) -> Result<profile::Layout, EngineError> {
        let profile = profiles::profile(agent);
        profile.check_settings(request)?;
        Ok(profile.layout(&self.db, ws, request)?)
    }

    /// What `agent` attaches when its model reads `file` right after start-up: every agent
    /// answers, one that attaches nothing on reads with no blocks and a note saying so (that
    /// is an answer, not an error). The file must exist, as for [`Engine::nearby`].
    pub fn agent_read(
        &self,
        ws: Workspace,
        agent: Agent,
        file: &Path,
        request: &profile::Request,
    ) -> Result<profile::ReadLayout, EngineError> {
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        if !self.db.files().get(&self.db, &target).kind(&self.db).exists() {
            return Err(EngineError::ReadTarget { path: target, reason: "no such file".to_owned() });
        }
        let profile = profiles::profile(agent);
        match profile.read(&self.db, ws, &target, request) {
            Some(read) => Ok(read?),
            None => Ok(profile::ReadLayout::nothing_on_reads(profile, &target)),
        }
    }

    /// What each rule-like file cost over the session `agent` recorded in `file` (its own
    /// record: a transcript, an export), per main-loop request (`session rules`). The file is
    /// read through the engine's [`System`] as an input, so a changed record re-executes only
    /// what reads it. An agent whose sessions are not modelled is refused.
    pub fn session_costs(
        &self,
        ws: Workspace,
        agent: Agent,
        file: &Path,
    ) -> Result<ctxgraph_db::session_costs::SessionCosts, EngineError> {
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        let input = self.db.files().get(&self.db, &target);
        if !input.kind(&self.db).exists() {
            return Err(EngineError::ReadTarget { path: target, reason: "no such file".to_owned() });
        }
        let profile = profiles::profile(agent);
        match profile.session_costs(&self.db, ws, input) {
            Some(occurrences) => Ok(occurrences?.costs(&O200k)),
            None => Err(EngineError::Unsupported(format!(
                "ctxgraph does not model {}'s sessions (session rules)",
                profile.title()
            ))),
        }
    }

    /// What `agent` attaches when its model reads `file` at the next step of the session it
    /// recorded in `record` (its own record, as for [`Engine::session_costs`]): `nearby
    /// --session` for the agents whose sessions are modelled from a record file. Both files
    /// must exist; an agent whose sessions are not modelled is refused.
    pub fn agent_read_in_session(
        &self,
        ws: Workspace,
        agent: Agent,
        file: &Path,
        request: &profile::Request,
        record: &Path,
    ) -> Result<profile::ReadLayout, EngineError> {
        let cwd = ws.cwd(&self.db);
        let (target, record) =
            (ctxgraph_db::path::resolve(cwd, file), ctxgraph_db::path::resolve(cwd, record));
        let record = self.db.files().get(&self.db, &record);
        for input in [self.db.files().get(&self.db, &target), record] {
            if !input.kind(&self.db).exists() {
                let path = input.path(&self.db).to_path_buf();
                return Err(EngineError::ReadTarget { path, reason: "no such file".to_owned() });
            }
        }
        let profile = profiles::profile(agent);
        match profile.read_in_session(&self.db, ws, &target, request, record) {
            Some(read) => Ok(read?),
            None => Err(EngineError::Unsupported(format!(
                "ctxgraph does not model {}'s sessions (nearby --session)",
                profile.title()
            ))),
        }
    }

    /// opencode's own texts by asset name (docs/opencode/installation.md), from the
    /// installation loaded with [`Engine::load_installation`]: each one found and verified
    /// (L2), and why each other one is not (L3). A name no release's table has is refused,
    /// with the names there are.
    pub fn installation_texts(&self, names: &[String]) -> Result<InstallationTexts, String> {
        use ctxgraph_db::installation::{asset, known_assets, known_versions};
        let known: std::collections::BTreeSet<&str> = known_versions()
            .filter_map(known_assets)
            .flat_map(|table| table.keys().map(String::as_str))
            .collect();
        if let Some(unknown) = names.iter().find(|name| !known.contains(name.as_str())) {
            let known = known.into_iter().collect::<Vec<_>>().join(", ");
            return Err(format!("opencode has no text named {unknown:?} (names: {known})"));
        }
        let installation = self.db.installation();
        let (binary, version) = match installation.state(&self.db) {
            InstallationState::Found(found) => (Some(found.binary.clone()), Some(found.version.clone())),
            InstallationState::Missing { .. } => (None, None),
        };
        let mut texts = InstallationTexts { binary, version, ..InstallationTexts::default() };
        for name in names {
            match asset(&self.db, installation, name) {
                Ok(text) => texts.texts.insert(name.clone(), text.to_string()),
                Err(missing) => texts.unavailable.insert(name.clone(), missing.reason),
            };
        }
        Ok(texts)
    }

    /// The merged config with the provenance of every value (C1–C7).
    pub fn merged_config(&self, ws: Workspace) -> Result<MergedConfig, EngineError> {
        merged_config(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// L1–L2: locates the opencode installation, loads and verifies its texts, and sets
    /// the installation input (only when it changed). Returns what was found.
    pub fn load_installation(&mut self, locate: &installation::Locate) -> &InstallationState {
        let state = installation::load(locate);
        self.set_installation(state);
        self.db.installation().state(&self.db)
    }

    /// What [`Engine::agent_layout`] needs of `agent`'s installation to lay out `section`:
    /// its own sentences for the request ([`wording::load`]), or, for a profile that reads
    /// them from the installation input ([`Profile::texts_from_installation`]), that input
    /// loaded here (L1) and `None`. `explicit` is the installation named on the command line;
    /// otherwise `vars` name where to look.
    ///
    /// [`Profile::texts_from_installation`]: ctxgraph_db::profile::Profile::texts_from_installation
    pub fn load_agent_installation(
        &mut self,
        agent: Agent,
        section: profile::Section,
        explicit: Option<&Path>,
        vars: &std::collections::BTreeMap<String, String>,
    ) -> Option<profile::Wording> {
        if !profiles::profile(agent).texts_from_installation(section) {
            return wording::load(agent, explicit, vars);
        }
        let locate = match explicit {
            Some(path) => installation::Locate::Flag(path.to_path_buf()),
            None => installation::Locate::from_vars(vars),
        };
        self.load_installation(&locate);
        None
    }

    /// Sets the installation input, comparing first (a host that reads the installation
    /// itself, or a test).
    pub fn set_installation(&mut self, state: InstallationState) {
        let input = self.db.installation();
        if *input.state(&self.db) != state {
            input.set_state(&mut self.db).to(state);
        }
    }

    /// G1–G2: opencode's agents with their permission rulesets.
    pub fn agents(&self, ws: Workspace) -> Result<Agents, EngineError> {
        agents(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// B5: why each skill is in or out of `agent`'s skills block (for `explain`).
    pub fn explain_skills(
        &self,
        ws: Workspace,
        agent: &str,
    ) -> Result<ctxgraph_opencode::skills::explain::SkillsExplanation, EngineError> {
        use ctxgraph_opencode::skills::ListingError;
        ctxgraph_opencode::skills::explain::explain_skills(&self.db, ws, agent).map_err(|e| match e {
            ListingError::Config(e) => EngineError::Build(BuildError::Config(e)),
            ListingError::UnknownAgent(name) => EngineError::UnknownAgent {
                name,
                available: agents(&self.db, ws)
                    .as_ref()
                    .map(|all| all.list.iter().map(|a| a.key.clone()).collect())
                    .unwrap_or_default(),
            },
        })
    }

    /// R1–R4: the remote config requests the workspace still needs.
    pub fn config_requests(&self, ws: Workspace) -> Vec<ConfigRequest> {
        pending_requests(&self.db, ws)
    }

    /// Sets remote config documents, touching only those that changed.
    pub fn set_config_docs(&mut self, docs: impl IntoIterator<Item = (ConfigRequest, ConfigDocState)>) {
        for (request, state) in docs {
            let doc = ctxgraph_db::Db::remotes(&self.db).config(&self.db, &request);
            if *doc.state(&self.db) != state {
                doc.set_state(&mut self.db).to(state);
            }
        }
    }

    /// Fetches the workspace's remote config (the well-known documents, then the
    /// `remote_config` URLs they name) and sets the inputs. A failure is not returned here:
    /// the config query turns it into opencode's error.
    pub async fn load_config(&mut self, ws: Workspace, fetcher: &remote::Fetcher) {
        // Each round can only reveal requests named by the previous one (R4: two levels).
        for _ in 0..3 {
            let requests = self.config_requests(ws);
            if requests.is_empty() {
                break;
            }
            let mut states = Vec::with_capacity(requests.len());
            for request in &requests {
                states.push(fetcher.load_config(request).await);
            }
            self.set_config_docs(requests.into_iter().zip(states));
        }
    }

    /// [`Engine::load_config`] on a runtime of its own, for callers without one. Inside a
    /// tokio runtime, await [`Engine::load_config`] instead (a runtime cannot block on
    /// another one).
    pub fn fetch_config(&mut self, ws: Workspace, fetcher: &remote::Fetcher) -> Result<(), EngineError> {
        if !self.config_requests(ws).is_empty() {
            current_thread_runtime()?.block_on(self.load_config(ws, fetcher));
        }
        Ok(())
    }

    /// The memoized prompt's blocks, without copying them, for a host that reads them each
    /// step ([`Turns`] read [`Engine::layout`] instead: the text laid out, memoized too).
    pub fn prompt(&self, ws: Workspace, model: Option<ModelRef>) -> Result<&Prompt, EngineError> {
        system_prompt(&self.db, ws, model).as_ref().map_err(|err| EngineError::Build(err.clone()))
    }

    /// [`Engine::system_message`] without a copy: the memoized message.
    pub fn message(&self, ws: Workspace, options: MessageOptions) -> Result<&Prompt, EngineError> {
        system_message(&self.db, ws, options).as_ref().map_err(|err| EngineError::from(err.clone()))
    }

    /// `section` of the system prompt (or, for [`Section::Message`], of the whole message)
    /// laid out, memoized: the same `Arc` for as long as the text is unchanged.
    pub fn layout(
        &self,
        ws: Workspace,
        section: Section,
        options: MessageOptions,
    ) -> Result<&Arc<Layout>, EngineError> {
        if section == Section::Message {
            system_message_layout(&self.db, ws, options)
                .as_ref()
                .map_err(|err| EngineError::from(err.clone()))
        } else {
            system_prompt_layout(&self.db, ws, section, options.model)
                .as_ref()
                .map_err(|err| EngineError::Build(err.clone()))
        }
    }

    /// What discovery found, with the facts behind each decision.
    pub fn system_paths(&self, ws: Workspace) -> Result<SystemPaths, EngineError> {
        system_paths(&self.db, ws).clone().map_err(|e| EngineError::Build(BuildError::Config(e)))
    }

    /// P5: the worktree that bounds every upward walk from `ws`.
    pub fn worktree(&self, ws: Workspace) -> Worktree {
        worktree(&self.db, ws).clone()
    }

    /// N1–N5: the rule files a read of `file` would attach in a fresh session. The file
    /// must exist (the read tool fails before attaching anything otherwise); reading a
    /// directory attaches nothing.
    pub fn nearby(&self, ws: Workspace, file: &Path) -> Result<Nearby, EngineError> {
        let target = ctxgraph_db::path::resolve(ws.cwd(&self.db), file);
        // Through the input, which the engine keeps current: no system call when warm.
        let kind = self.db.files().get(&self.db, &target).kind(&self.db);
        match kind {
            FileKind::Missing | FileKind::Inaccessible => {
                Err(EngineError::ReadTarget { path: target, reason: "no such file".to_owned() })
            }
            FileKind::Directory => Ok(Nearby::directory()),
            FileKind::File | FileKind::Other => Ok(nearby_rules(&self.db, ws, target).clone()?),
        }
    }

    /// Why every rule file and URL discovery considered is, or is not, in the prompt,
    /// with `o200k_base` token counts.
    pub fn explain(&self, ws: Workspace) -> Result<Explanation, EngineError> {
        Ok(explain(&self.db, ws, &O200k)?)
    }

    /// B3's facts: every configured reference and whether it is listed.
    pub fn references(&self, ws: Workspace) -> Result<answers::stages::References, EngineError> {
        let references = ctxgraph_opencode::references::references(&self.db, ws);
        Ok(references.as_ref().map_err(|e| BuildError::Config(e.clone()))?.clone())
    }

    /// B4's facts for the opencode agent `agent`: every configured server and its fate.
    pub fn mcp_facts(
        &self,
        ws: Workspace,
        agent: &str,
    ) -> Result<Vec<answers::stages::McpServerFact>, EngineError> {
        let facts = ctxgraph_opencode::mcp::mcp_facts(&self.db, ws, agent.to_owned());
        Ok(facts.as_ref().map_err(|e| BuildError::Config(e.clone()))?.clone())
    }

    /// [`Engine::explain`] for one file, `instructions` entry or URL; relative paths are
    /// taken from `base`.
    pub fn explain_target(
        &self,
        ws: Workspace,
        target: &str,
        base: &Path,
    ) -> Result<TargetExplanation, EngineError> {
        Ok(explain_target(&self.db, ws, &O200k, target, base)?)
    }

    /// Lint findings for the rules loaded from `ws`, token budgets in `o200k_base` tokens.
    pub fn lint(&self, ws: Workspace, budget: Budget) -> Result<Vec<Finding>, EngineError> {
        Ok(lint(&self.db, ws, &O200k, budget)?)
    }

    /// `lint --agent`: one agent's findings (codex: CG014, gemini: CG015), or with `None`
    /// opencode's lint and every agent's, with the cross-agent checks (CG012, CG013).
    /// opencode's alone is [`Engine::lint`], whose errors keep their place in the file.
    pub fn agents_lint(
        &self,
        ws: Workspace,
        agent: Option<Agent>,
        budget: Budget,
    ) -> Result<Vec<Finding>, EngineError> {
        use ctxgraph_agents::fates::budget::rule_budget_findings;
        use ctxgraph_agents::fates::lint::{cross_agent_findings, secret_findings};
        use ctxgraph_agents::fates::listing::listing_findings;
        if agent == Some(Agent::Opencode) {
            let mut own = self.lint(ws, budget)?;
            let layout =
                profiles::profile(Agent::Opencode).layout(&self.db, ws, &profile::Request::default())?;
            own.extend(listing_findings(&layout));
            return Ok(own);
        }
        let mut findings = if let Some(agent) = agent {
            let profile = profiles::profile(agent);
            let mut own = profile.lint(&self.db, ws, &O200k, budget)?;
            // CG005 and CG007 over what this agent sends, CG022 where the disk orders it.
            let layout = profile.layout(&self.db, ws, &profile::Request::default())?;
            own.extend(secret_findings(&self.db, std::slice::from_ref(&layout)));
            own.extend(rule_budget_findings(&layout, &O200k, budget));
            own.extend(listing_findings(&layout));
            own
        } else {
            let mut all = Vec::new();
            let mut layouts = Vec::new();
            for profile in profiles::PROFILES {
                all.extend(profile.lint(&self.db, ws, &O200k, budget)?);
                // The wording does not change which files are sent.
                let layout = profile.layout(&self.db, ws, &profile::Request::default())?;
                // CG007 once per file, whichever agent sends it over the budget first.
                for over in rule_budget_findings(&layout, &O200k, budget) {
                    if !all.iter().any(|f: &Finding| f.code == over.code && f.location == over.location) {
                        all.push(over);
                    }
                }
                all.extend(listing_findings(&layout));
                layouts.push(layout);
            }
            // CG005 once per secret, naming every agent that sends it; opencode's own
            // finding stays only for what no layout sends (a file its read tool attaches).
            let secrets = secret_findings(&self.db, &layouts);
            all.retain(|f| f.code != Code::LikelySecret || !secrets.iter().any(|s| s.location == f.location));
            all.extend(secrets);
            all.extend(cross_agent_findings(&self.db, ws, profiles::PROFILES, &layouts));
            all
        };
        findings.sort_by(|a, b| {
            let key = |f: &Finding| f.location.as_ref().map(|l| (l.uri.clone(), l.line, l.column));
            key(a).cmp(&key(b)).then(a.code.cmp(&b.code))
        });
        Ok(findings)
    }

    /// ctxgraph's memory settings from the merged config (`memory.enabled`, the models).
    pub fn memory_settings(&self, ws: Workspace) -> Result<MemorySettings, EngineError> {
        Ok(self.merged_config(ws)?.memory())
    }

    /// docs/memory.md §11.1: the recalled blocks for `recall`, clamped, with every candidate's
    /// score or the reason it was cut. A store file that exists but cannot be read is an
    /// error naming it, not an empty recall.
    pub fn memory_recall(&self, ws: Workspace, recall: Recall) -> Result<MemoryContext, EngineError> {
        if let Some((path, reason)) = unreadable_store_file(&self.db, ws) {
            let path = ctxgraph_db::path::display(&path);
            return Err(EngineError::Build(BuildError::MemoryStore { path, reason }));
        }
        Ok(memory_context(&self.db, ws, recall).clone())
    }

    /// The `<memory>` part `build` appends (only with `memory.enabled: true`).
    pub fn prompt_memory(&self, ws: Workspace) -> Result<Option<MemoryContext>, EngineError> {
        prompt_memory(&self.db, ws).clone().map_err(|e| EngineError::Build(e.into()))
    }

    /// Lines of the memory files that recall skipped, by file.
    pub fn memory_skipped(&self, ws: Workspace) -> std::collections::BTreeMap<&'static str, Vec<Skipped>> {
        skipped_lines(&self.db, ws)
    }

    /// I8: the distinct `http(s)://` entries of the merged `instructions`, in config order,
    /// then what `skills.urls` needs now (B5.10: each index, then the SKILL.md files a
    /// loaded index names that the cache lacks).
    pub fn remote_urls(&self, ws: Workspace) -> Result<Vec<String>, EngineError> {
        let mut urls: Vec<String> = Vec::new();
        let skills = ctxgraph_opencode::skills::remote::skill_urls(&self.db, ws);
        let paths = system_paths(&self.db, ws)
            .as_ref()
            .map_err(|e| EngineError::Build(BuildError::Config(e.clone())))?;
        for url in paths.remote.iter().map(|entry| &entry.url).chain(&skills) {
            if !urls.contains(url) {
                urls.push(url.clone());
            }
        }
        Ok(urls)
    }

    /// The current state of a remote document.
    pub fn remote_state(&self, url: &str) -> RemoteState {
        ctxgraph_db::Db::remotes(&self.db).get(&self.db, url).state(&self.db).clone()
    }

    /// Sets remote documents' states, touching only those that changed (a setter always
    /// invalidates its dependents, even with an equal value).
    pub fn set_remote_states(&mut self, states: impl IntoIterator<Item = (String, RemoteState)>) {
        for (url, state) in states {
            let doc = ctxgraph_db::Db::remotes(&self.db).get(&self.db, &url);
            if *doc.state(&self.db) != state {
                doc.set_state(&mut self.db).to(state);
            }
        }
    }

    /// Fetches every remote document (I8) the workspace needs and sets the inputs; returns
    /// each URL's state. The queries never wait on the network: until this has run, a URL
    /// adds no block.
    pub async fn load_remote(
        &mut self,
        ws: Workspace,
        fetcher: &remote::Fetcher,
    ) -> Result<Vec<(String, RemoteState)>, EngineError> {
        // A loaded `skills.urls` index names more documents (B5.10): a second round fetches
        // them. Nothing else adds URLs, so two rounds reach the fixed point.
        let mut results: Vec<(String, RemoteState)> = Vec::new();
        for _round in 0..2 {
            let urls: Vec<String> = self
                .remote_urls(ws)?
                .into_iter()
                .filter(|u| !results.iter().any(|(done, _)| done == u))
                .collect();
            if urls.is_empty() {
                break;
            }
            let states = fetcher.load_all(&urls).await;
            let round: Vec<(String, RemoteState)> = urls.into_iter().zip(states).collect();
            self.set_remote_states(round.clone());
            results.extend(round);
        }
        Ok(results)
    }

    /// [`Engine::load_remote`] on a runtime of its own, for callers without one (none is
    /// started when the workspace names no URL). Inside a tokio runtime, await
    /// [`Engine::load_remote`] instead.
    pub fn fetch_remote(
        &mut self,
        ws: Workspace,
        fetcher: &remote::Fetcher,
    ) -> Result<Vec<(String, RemoteState)>, EngineError> {
        if self.remote_urls(ws)?.is_empty() {
            return Ok(Vec::new());
        }
        current_thread_runtime()?.block_on(self.load_remote(ws, fetcher))
    }
}

fn current_thread_runtime() -> Result<tokio::runtime::Runtime, EngineError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    Ok(runtime.map_err(|err| remote::FetcherError::from_io(&err))?)
}
