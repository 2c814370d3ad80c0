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
pub mod mcp;
mod opencode;
mod os;
pub mod prepare;
pub mod profiles;
mod refresh;
pub mod remote;
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
use salsa::Setter;

pub use changes::{Applied, ChangeEvent};
pub use database::{Database, ExecutionLog};
pub use host::{Clock, HostEnv, SystemClock};
pub use os::{MAX_FILE_BYTES, OsSystem, read_regular_file};
pub use prepare::{Policy, Prepared, Warning};
pub use refresh::RemoteRefresh;
pub use snapshot::{Cancel, Interrupted, Snapshot};
pub use tokens::O200k;
pub use turn::{AgentTextKey, AgentTurn, AgentTurns, BlockIds, TurnDiff, block_ids};

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
// opencode's extensions (its whole message, sessions, config, memory): its engine-side folder.
pub use opencode::installation;
pub use opencode::{
    Agents, Block, BlockKind, BuildError, ConfigError, Explanation, InstallationTexts, Layout,
    LimitOverrides, MergedConfig, MessageOptions, ModelRef, Nearby, NearbyRule, PlacedBlock, Prompt,
    ReadAnswer, ReadKind, Section, SessionFailure, Skip, SystemPaths, TargetExplanation, Turn, Turns,
    same_text,
};

/// Every agent ctxgraph reproduces, one line each, in the order `--agent all` and every
/// table of agents report them ([`profiles`] asks them). With `mod opencode` above (the
/// engine-side folder of the one agent that has one), this is the engine's whole registry
/// of agents: it lives in the engine, the first crate above both `ctxgraph-opencode` and
/// `ctxgraph-agents`, so those two compile side by side.
pub static PROFILES: &[&dyn profile::Profile] = &[
    &ctxgraph_opencode::profile::Opencode,
    &ctxgraph_agents::codex::profile::Codex,
    &ctxgraph_agents::claude_code::profile::ClaudeCode,
    &ctxgraph_agents::gemini::profile::Gemini,
    &ctxgraph_agents::copilot::profile::Copilot,
    &ctxgraph_agents::qwen_code::profile::QwenCode,
    &ctxgraph_opencode::kilo::profile::Kilo,
    &ctxgraph_agents::cline::profile::Cline,
    &ctxgraph_agents::continue_cli::profile::ContinueCli,
    &ctxgraph_agents::aider::profile::Aider,
    &ctxgraph_agents::pi::profile::Pi,
    &ctxgraph_agents::auggie::profile::Auggie,
];

/// The types nested in the engine's answers, grouped by answer, for code that renders them
/// (the servers, the CLI) without naming the query layer's modules.
pub mod answers {
    pub use crate::opencode::answers::{explain, session, stages};
    /// The workspace memory: recall's blocks, and the records the store writes.
    pub mod memory {
        pub use ctxgraph_memory::record::{FactSource, Scope};
        pub use ctxgraph_memory::render::{
            Block, BlockId, Cut, CutReason, DEFAULT_MAX_CHARS, MemoryContext, Recalled,
        };
    }
    /// A mistake in an agent's input, as [`crate::EngineError::fault`] gives it.
    pub mod fault {
        pub use ctxgraph_db::fault::{FaultAt, FaultIssue, InputFault};
        pub use ctxgraph_db::lines::Column;
    }
    /// The shape every agent's profile answers ([`crate::Engine::agent_layout`]).
    pub mod profile {
        pub use ctxgraph_db::profile::{
            AgentFate, Block, BlockView, Layout, LeftOut, ProfileError, ReadLayout, RemoteDocument, Request,
            Section, Setting, SourceRef, Status, WordingSource,
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
    /// Paths as opencode prints them.
    pub use ctxgraph_db::path::display;
    /// A path with `.` and `..` resolved lexically, as the engine keys its inputs.
    pub use ctxgraph_db::path::normalize;
    /// A path resolved against a base directory lexically, as the engine resolves a
    /// question's relative paths against the working directory.
    pub use ctxgraph_db::path::resolve;
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
    message_ids: opencode::MessageIds,
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
            message_ids: opencode::MessageIds::default(),
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
            message_ids: opencode::MessageIds::default(),
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

    /// Sets remote config documents, touching only those that changed.
    pub fn set_config_docs(&mut self, docs: impl IntoIterator<Item = (ConfigRequest, ConfigDocState)>) {
        for (request, state) in docs {
            let doc = ctxgraph_db::Db::remotes(&self.db).config(&self.db, &request);
            if *doc.state(&self.db) != state {
                doc.set_state(&mut self.db).to(state);
            }
        }
    }

    /// P5: the worktree that bounds every upward walk from `ws`.
    pub fn worktree(&self, ws: Workspace) -> Worktree {
        worktree(&self.db, ws).clone()
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
        // An agent whose own lint is whole (its places in the file kept) answers with it.
        if let Some(own) = agent.and_then(|agent| self.whole_lint(ws, agent, budget)) {
            return own;
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
            for profile in PROFILES {
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
            all.extend(cross_agent_findings(&self.db, ws, PROFILES, &layouts));
            all
        };
        findings.sort_by(|a, b| {
            let key = |f: &Finding| f.location.as_ref().map(|l| (l.uri.clone(), l.line, l.column));
            key(a).cmp(&key(b)).then(a.code.cmp(&b.code))
        });
        Ok(findings)
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
}

pub(crate) fn current_thread_runtime() -> Result<tokio::runtime::Runtime, EngineError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    Ok(runtime.map_err(|err| remote::FetcherError::from_io(&err))?)
}
