//! The operations both servers serve: one function per operation, taking its typed
//! request and returning its typed reply, so `ctxgraph serve` and `ctxgraph mcp` cannot
//! drift. Each server brings its own framing and its own way of keeping the engine's
//! inputs current ([`crate::rpc`]: a watcher or a rescan; [`crate::mcp`]: a rescan), then
//! calls [`Host`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxgraph_engine::answers::memory::{FactSource, MemoryContext, Scope};
use ctxgraph_engine::answers::profile::{Request, Section as ProfileSection};
use ctxgraph_engine::answers::session::{ReadPoint, Session};
use ctxgraph_engine::answers::settings::SettingsReport;
use ctxgraph_engine::{
    Agent, AgentTextKey, AgentTurns, Budget, Engine, EngineError, LimitOverrides, MessageOptions, ModelRef,
    ReadAnswer, Recall, RemoteRefresh, Section, Turns, Workspace, same_text,
};
use ctxgraph_memory::{Store, system_clock};

use crate::protocol::{
    BuildParams, BuildReply, BuiltTurn, ConfigParams, ConfigReply, ExplainParams, ExplainReply, ForgetParams,
    ForgetReply, InstallationParams, InstallationReply, Known, LintParams, LintReply, NearbyParams,
    RecallParams, RecallReply, RememberParams, RememberReply, ScopeName, SectionParam, SessionAppendParams,
    SessionAppendReply, SessionCompactParams, SessionCompactReply, SessionExplainParams, SessionExplainReply,
    SessionMessagesReply, SessionOpenParams, SessionOpenReply, SessionParams, SessionRulesParams,
    SessionRulesReply, WorkspaceExplanation,
};

/// Why an operation has no answer.
#[derive(Debug)]
pub enum OpError {
    /// The request does not fit the operation (a bad value, an unknown session): the
    /// client's to fix. JSON-RPC's −32602.
    Invalid(String),
    /// The request was well-formed but the answer could not be computed (a bad config, a
    /// working directory that does not exist, the store's lock …): the message says why.
    Failed(String),
}

impl OpError {
    /// The message, whichever kind.
    pub fn message(&self) -> &str {
        match self {
            OpError::Invalid(message) | OpError::Failed(message) => message,
        }
    }
}

impl From<EngineError> for OpError {
    fn from(err: EngineError) -> Self {
        match err {
            // A question that does not apply to the agent asked about: the client's to fix.
            EngineError::Unsupported(message) => OpError::Invalid(message),
            err => OpError::Failed(err.to_string()),
        }
    }
}

impl From<ctxgraph_memory::StoreError> for OpError {
    fn from(err: ctxgraph_memory::StoreError) -> Self {
        OpError::Failed(err.to_string())
    }
}

fn invalid(message: impl Into<String>) -> OpError {
    OpError::Invalid(message.into())
}

/// What `explain` answers on every surface, for one agent or (`agents: None`) every agent
/// side by side: the whole explanation of an agent that explains itself in full (opencode,
/// for its agent `opencode_agent`) or one target's, another agent's verdict on every file it
/// looked at, or one file's fate.
/// `target` is as given: a path relative to `base`, or for opencode also an
/// `instructions` entry or a URL.
pub fn explain(
    engine: &Engine,
    ws: Workspace,
    agents: Option<Agent>,
    target: Option<&str>,
    base: &Path,
    opencode_agent: &str,
) -> Result<ExplainReply, EngineError> {
    let in_full = agents.filter(|&agent| ctxgraph_engine::profiles::profile(agent).explains_in_full());
    Ok(match (in_full, target) {
        (Some(_), None) => ExplainReply::Workspace(Box::new(explain_workspace(engine, ws, opencode_agent)?)),
        (Some(_), Some(target)) => ExplainReply::Target(engine.explain_target(ws, target, base)?),
        (_, target) => {
            let path = target.map(|target| ctxgraph_engine::answers::resolve(base, target));
            explain_fates(engine, ws, agents, path)?
        }
    })
}

/// What `config` answers on every surface (`ctxgraph config --format json` too): the
/// agent's settings as JSON, masked where the agent masks unless `show_secrets`, and every
/// place they come from.
pub fn config_reply(report: &SettingsReport, show_secrets: bool) -> ConfigReply {
    ConfigReply {
        agent: report.agent,
        config: if show_secrets { report.tree.render(true) } else { report.masked.clone() },
        layers: report.layers.clone(),
    }
}

/// The section whose inputs `explain` and `lint` read for `agent` (its profile says).
pub fn explained_section(agent: Agent) -> ProfileSection {
    ctxgraph_engine::profiles::profile(agent).explained_section()
}

/// opencode's whole explanation of `ws` for its agent `agent`.
fn explain_workspace(
    engine: &Engine,
    ws: Workspace,
    agent: &str,
) -> Result<WorkspaceExplanation, EngineError> {
    Ok(WorkspaceExplanation {
        explanation: engine.explain(ws)?,
        references: engine.references(ws)?,
        servers: engine.mcp_facts(ws, agent)?,
        skills: engine.explain_skills(ws, agent)?,
        memory: engine.prompt_memory(ws)?,
        agent: agent.to_owned(),
        message_prompt: None,
    })
}

/// Another agent's verdict on every file it looked at (no `target`), or one file's fate in
/// one agent or `all` (`agents: None`) side by side: what `explain --agent NAME|all [FILE]`
/// answers on every surface. `target` is resolved already.
fn explain_fates(
    engine: &Engine,
    ws: Workspace,
    agents: Option<Agent>,
    target: Option<PathBuf>,
) -> Result<ExplainReply, EngineError> {
    Ok(match (agents, target) {
        (None, None) => {
            return Err(EngineError::Unsupported(
                "agent `all` compares one file across agents: give a file to explain".to_owned(),
            ));
        }
        (None, Some(path)) => {
            let fates = engine.file_fates(ws, &path);
            ExplainReply::File(path, fates)
        }
        (Some(agent), Some(path)) => {
            let fate = engine.file_fate(ws, agent, &path);
            ExplainReply::File(path, vec![fate])
        }
        (Some(agent), None) => {
            // The files an agent looks at do not depend on its wording.
            let files = engine.agent_layout(ws, agent, &Request::default())?.considered();
            ExplainReply::Files(
                files
                    .into_iter()
                    .map(|path| {
                        let fate = engine.file_fate(ws, agent, &path);
                        (path, fate)
                    })
                    .collect(),
            )
        }
    })
}

/// An `agent` parameter: an `--agent` name, opencode when left out.
fn agent_param(name: Option<&str>) -> Result<Agent, OpError> {
    match name.map(str::parse::<Agent>) {
        None => Ok(Agent::default()),
        Some(Ok(agent)) => Ok(agent),
        Some(Err(message)) => Err(invalid(format!("agent: {message}"))),
    }
}

/// An `agent` parameter that may also be `all` (`None`), opencode when left out.
fn agents_param(name: Option<&str>) -> Result<Option<Agent>, OpError> {
    match name {
        Some("all") => Ok(None),
        name => agent_param(name).map(Some),
    }
}

/// What `build` built, kept so that its reply ([`Built::reply`], one shape for every agent)
/// borrows from it: a turn of the engine's memoized [`Turns`] or of [`AgentTurns`], with
/// what the client holds.
pub enum Built {
    /// The text of an agent whose builds the engine's memoized [`Turns`] serve (opencode's
    /// whole message).
    Memoized {
        /// The agent.
        agent: Agent,
        /// The layout and its diff against the previous build.
        turn: ctxgraph_engine::Turn,
        /// What the client holds.
        known: Known,
        /// Queries executed for it.
        executed: u64,
    },
    /// Any other agent's text, from its profile's layout.
    Agent {
        /// The agent.
        agent: Agent,
        /// The layout, its blocks' ids and its diff against the previous build.
        turn: ctxgraph_engine::AgentTurn,
        /// What the client holds.
        known: Known,
        /// Queries executed for it.
        executed: u64,
    },
}

impl Built {
    /// The reply, the same shape for every agent.
    pub fn reply(&self) -> BuildReply<'_> {
        match self {
            Built::Memoized { agent, turn, known, executed } => {
                BuildReply::new(*agent, BuiltTurn::Memoized(turn), *known, *executed)
            }
            Built::Agent { agent, turn, known, executed } => {
                BuildReply::new(*agent, BuiltTurn::Agent(turn), *known, *executed)
            }
        }
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        match self {
            Built::Memoized { turn, .. } => &turn.layout.text,
            Built::Agent { turn, .. } => &turn.layout.text,
        }
    }
}

/// A warm engine and what the operations keep between requests: the previous builds, the
/// open sessions, each agent's wording.
pub struct Host {
    pub(crate) engine: Engine,
    turns: Turns,
    remote: Option<RemoteRefresh>,
    /// The hash of the last build sent per text, so a `known_hash` can be trusted.
    sent: HashMap<(Workspace, Section, MessageOptions), String>,
    /// Every other agent's builds, turn after turn.
    agent_turns: AgentTurns,
    /// The hash of the last build sent per agent text (working directory, agent, section,
    /// settings).
    agent_sent: HashMap<AgentTextKey, String>,
    /// Whether the opencode installation was looked for (once, at the first request that
    /// needs its texts: a message build or `installation`).
    installation_loaded: bool,
    /// Each agent's own wording (Claude Code's CC10, …), loaded from its installation on
    /// the first build for that agent.
    wordings: HashMap<Agent, Option<Arc<dyn std::any::Any + Send + Sync>>>,
    /// Sessions opened with `session/open`, by session id.
    sessions: HashMap<String, Session>,
}

impl Host {
    /// Operations over `engine`; remote documents stay unfetched until
    /// [`Host::set_remote`].
    pub fn new(engine: Engine) -> Self {
        Host {
            engine,
            turns: Turns::default(),
            remote: None,
            sent: HashMap::new(),
            agent_turns: AgentTurns::default(),
            agent_sent: HashMap::new(),
            installation_loaded: false,
            wordings: HashMap::new(),
            sessions: HashMap::new(),
        }
    }

    /// Fetch remote documents (org config, `instructions` URLs) for the workspaces served.
    pub fn set_remote(&mut self, remote: RemoteRefresh) {
        self.remote = Some(remote);
    }

    /// The workspace for `cwd`, with its remote documents loaded when due.
    pub fn workspace(&mut self, cwd: &Path) -> Result<Workspace, OpError> {
        let ws = self.engine.open(cwd)?;
        if let Some(remote) = &mut self.remote {
            remote.refresh(&mut self.engine, ws)?;
        }
        Ok(ws)
    }

    /// The MCP servers `agent`'s `section` waits on, connected once per server config
    /// ([`RemoteRefresh::connect_agent_mcp`]); no agent's servers start for another's answer.
    fn connect_mcp(&mut self, ws: Workspace, agent: Agent, section: ProfileSection) -> Result<(), OpError> {
        if let Some(remote) = &mut self.remote {
            remote.connect_agent_mcp(&mut self.engine, ws, agent, section)?;
        }
        Ok(())
    }

    /// `build` / `context_build`.
    pub fn build(&mut self, params: BuildParams) -> Result<Built, OpError> {
        let agent = agent_param(params.agent.as_deref())?;
        if !Turns::serves(agent) {
            return self.agent_build(agent, params);
        }
        let model = match params.model.as_deref().map(str::parse::<ModelRef>) {
            Some(Err(message)) => return Err(invalid(format!("model: {message}"))),
            Some(Ok(model)) => Some(model),
            None => None,
        };
        if !params.settings.is_empty() {
            return Err(invalid(
                "settings: opencode's are the parameters model, opencode_agent, json_schema and user_system",
            ));
        }
        let asked = params.section.unwrap_or(SectionParam::System);
        let section = match asked {
            SectionParam::System => Section::System,
            SectionParam::Environment => Section::Environment,
            SectionParam::Instructions => Section::Instructions,
            SectionParam::Message => Section::Message,
            SectionParam::Request => {
                let refused = ctxgraph_engine::answers::profile::ProfileError::section_not_built(
                    ctxgraph_engine::profiles::profile(agent),
                    SectionParam::Request.section(),
                );
                return Err(invalid(format!("section: {refused}")));
            }
        };
        if section == Section::Message {
            self.load_installation();
        }
        let options = MessageOptions {
            model,
            agent: params.opencode_agent.unwrap_or_else(|| "build".to_owned()),
            json_schema: params.json_schema,
            user_system: params.user_system,
        };
        // Counted from here: loading remote documents for a new workspace runs queries too.
        let before = self.engine.executions().total();
        let ws = self.workspace(&params.cwd)?;
        self.connect_mcp(ws, agent, asked.section())?;
        let turn = self.turns.build_message(&self.engine, ws, section, options.clone())?;
        let executed = self.engine.executions().total() - before;
        let key = (ws, section, same_text(options));
        let sent = self.sent.get(&key);
        let known = match (&params.known_hash, sent) {
            (Some(known), _) if *known == turn.layout.hash => Known::Current,
            (Some(known), Some(sent)) if known == sent => Known::PreviousBuild,
            _ => Known::Nothing,
        };
        // Most turns send the hash they sent last: nothing to store.
        if sent != Some(&turn.layout.hash) {
            self.sent.insert(key, turn.layout.hash.clone());
        }
        Ok(Built::Memoized { agent, turn, known, executed })
    }

    /// `build` through [`AgentTurns`]: the agent's profile layout.
    fn agent_build(&mut self, agent: Agent, params: BuildParams) -> Result<Built, OpError> {
        let mut request = self.request(agent);
        request.section = params.section.map_or_else(Default::default, SectionParam::section);
        request.settings = params.agent_settings().map_err(invalid)?;
        ctxgraph_engine::profiles::profile(agent)
            .check_settings(&request)
            .map_err(|err| invalid(err.to_string()))?;
        let before = self.engine.executions().total();
        let ws = self.workspace(&params.cwd)?;
        self.connect_mcp(ws, agent, request.section)?;
        let turn = self.agent_turns.build(&self.engine, ws, agent, &request)?;
        let executed = self.engine.executions().total() - before;
        let hash = turn.hash();
        // What the client holds, as for opencode's turns: this text, the previous build the
        // server sent for the same text, or nothing it can tell.
        let key = (ws, agent, request.section, request.settings.clone());
        let sent = self.agent_sent.get(&key);
        let known = match (&params.known_hash, sent) {
            (Some(known), _) if *known == hash => Known::Current,
            (Some(known), Some(sent)) if known == sent => Known::PreviousBuild,
            _ => Known::Nothing,
        };
        if sent != Some(&hash) {
            self.agent_sent.insert(key, hash.clone());
        }
        Ok(Built::Agent { agent, turn, known, executed })
    }

    /// The request for `agent`: its own wording, looked for once per server (an
    /// installation does not change under a running host).
    fn request(&mut self, agent: Agent) -> Request {
        let wording = self
            .wordings
            .entry(agent)
            .or_insert_with(|| {
                ctxgraph_engine::wording::load(agent, None, &ctxgraph_engine::HostEnv::from_process().vars)
            })
            .clone();
        Request { settings: Vec::new(), wording, ..Request::default() }
    }

    /// `nearby` / `context_nearby`: what a read attaches in any agent's context, in a
    /// session's state when one is named (opencode's).
    pub fn nearby(&mut self, params: NearbyParams) -> Result<ReadAnswer, OpError> {
        let agent = agent_param(params.agent.as_deref())?;
        let ws = self.workspace(&params.cwd)?;
        let request = self.request(agent);
        if let Some(record) = &params.record {
            if params.session.is_some() || params.message.is_some() {
                return Err(invalid("record: give a record, or a session (and its message), not both"));
            }
            let layout = self.engine.agent_read_in_session(ws, agent, &params.file, &request, record)?;
            return Ok(ReadAnswer { layout, opencode: None });
        }
        let session = match &params.session {
            Some(id) => Some(self.session(id)?),
            None => None,
        };
        let point = match params.message {
            Some(message) => ReadPoint::InMessage { message, before_part: None },
            None => ReadPoint::NextStep,
        };
        Ok(self.engine.read(ws, agent, &params.file, &request, session.map(|s| (s, &point)))?)
    }

    /// L1, once per server: opencode's texts come from the installation found at the first
    /// request that needs them.
    fn load_installation(&mut self) {
        if !self.installation_loaded {
            self.engine.load_installation(&ctxgraph_engine::installation::Locate::from_process());
            self.installation_loaded = true;
        }
    }

    /// `installation`: opencode's texts by asset name.
    pub fn installation(&mut self, params: InstallationParams) -> Result<InstallationReply, OpError> {
        let refuse = |message: String| invalid(format!("texts: {message}"));
        // Asked once before the installation is looked for, so an unknown name is refused
        // without reading opencode's executable.
        self.engine.installation_texts(&params.texts).map_err(refuse)?;
        self.load_installation();
        let texts = self.engine.installation_texts(&params.texts).map_err(refuse)?;
        Ok(InstallationReply {
            binary: texts.binary,
            version: texts.version,
            texts: texts.texts,
            unavailable: texts.unavailable,
        })
    }

    /// `explain` / `context_explain`: opencode's explanation, another agent's verdict on
    /// every file it looked at, or one file's fate in one agent or all.
    pub fn explain(&mut self, ws: Workspace, params: ExplainParams) -> Result<ExplainReply, OpError> {
        let base = self.engine.cwd(ws).to_path_buf();
        let agents = agents_param(params.agent.as_deref())?;
        if let Some(agent) = agents {
            self.connect_mcp(ws, agent, explained_section(agent))?;
        }
        Ok(explain(&self.engine, ws, agents, params.target.as_deref(), &base, "build")?)
    }

    /// `lint` / `context_lint`: one agent's findings, or every agent's with the cross-agent
    /// checks.
    pub fn lint(&mut self, ws: Workspace, params: LintParams) -> Result<LintReply, OpError> {
        let defaults = Budget::default();
        let budget = Budget {
            total: params.max_total_tokens.unwrap_or(defaults.total),
            rule: params.max_rule_tokens.unwrap_or(defaults.rule),
        };
        let agents = agents_param(params.agent.as_deref())?;
        for agent in agents.map_or(Agent::ALL.to_vec(), |agent| vec![agent]) {
            self.connect_mcp(ws, agent, explained_section(agent))?;
        }
        Ok(LintReply(self.engine.agents_lint(ws, agents, budget)?))
    }

    /// `config` / `context_config`: an agent's settings, secrets masked.
    pub fn config(&mut self, ws: Workspace, params: ConfigParams) -> Result<ConfigReply, OpError> {
        let agent = agent_param(params.agent.as_deref())?;
        Ok(config_reply(&self.engine.settings_report(ws, agent)?, false))
    }

    fn session(&self, id: &str) -> Result<Session, OpError> {
        self.sessions.get(id).copied().ok_or_else(|| invalid(format!("no open session {id:?}")))
    }

    /// `session/open` / `session_open`.
    pub fn session_open(&mut self, params: SessionOpenParams) -> Result<SessionOpenReply, OpError> {
        let (name, bytes) = match (params.path, params.export) {
            (Some(path), None) => {
                let bytes = ctxgraph_engine::read_regular_file(&path)
                    .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
                (path.display().to_string(), bytes)
            }
            (None, Some(export)) => ("export".to_owned(), export.to_string().into_bytes()),
            _ => return Err(invalid("give one of path, export")),
        };
        let session = self.engine.load_session(&name, &bytes).map_err(|e| invalid(e.to_string()))?;
        let id = self.engine.session_id(session).to_owned();
        let messages = self.engine.message_count(session);
        self.sessions.insert(id.clone(), session);
        Ok(SessionOpenReply { session: id, messages })
    }

    /// `session/append` / `session_append`.
    pub fn session_append(&mut self, params: SessionAppendParams) -> Result<SessionAppendReply, OpError> {
        let session = self.session(&params.session)?;
        let bytes = params.message.to_string();
        self.engine
            .append_message_json(session, bytes.as_bytes())
            .map_err(|e| invalid(format!("message: {e}")))?;
        Ok(SessionAppendReply { messages: self.engine.message_count(session) })
    }

    /// `session/compact` / `session_compact`.
    pub fn session_compact(
        &mut self,
        ws: Workspace,
        params: SessionCompactParams,
    ) -> Result<SessionCompactReply, OpError> {
        let session = self.session(&params.session)?;
        let overrides =
            LimitOverrides { context: params.context, input: params.input, output: params.output };
        let plan_params = self.engine.plan_params(ws, session, overrides)?;
        let plan = self.engine.compaction_plan(session, plan_params);
        let request = self.engine.summary_request(plan, None);
        Ok(SessionCompactReply { plan: plan.clone(), request })
    }

    /// `session/messages` / `session_messages`.
    pub fn session_messages(&mut self, params: SessionParams) -> Result<SessionMessagesReply, OpError> {
        let session = self.session(&params.session)?;
        Ok(SessionMessagesReply { messages: self.engine.next_messages(session)? })
    }

    /// `session/explain` / `session_explain`.
    pub fn session_explain(
        &mut self,
        ws: Workspace,
        params: SessionExplainParams,
    ) -> Result<SessionExplainReply, OpError> {
        let session = self.session(&params.session)?;
        let overrides =
            LimitOverrides { context: params.context, input: params.input, output: params.output };
        let answer = self.engine.explain_session(
            ws,
            session,
            overrides,
            params.message.as_deref(),
            params.file.as_deref(),
        )?;
        Ok(SessionExplainReply(answer))
    }

    /// `session/rules` / `session_rules`.
    pub fn session_rules(
        &mut self,
        ws: Workspace,
        params: SessionRulesParams,
    ) -> Result<SessionRulesReply, OpError> {
        let agent = agent_param(params.agent.as_deref())?;
        // A relative record is the workspace's, as `cwd` says.
        Ok(SessionRulesReply(self.engine.session_costs(ws, agent, &params.record)?))
    }

    /// The workspace's memory store, its redactor reading the host's environment.
    fn store(&self, ws: Workspace) -> Store {
        Store::new(self.engine.cwd(ws), self.engine.env_vars())
    }

    /// `memory/recall` / `memory_recall` (docs/memory.md §12): the blocks for the query, every
    /// observation with its detail, within the budget; redacted like what is stored.
    pub fn recall(
        &mut self,
        ws: Workspace,
        session: Option<&str>,
        params: RecallParams,
    ) -> Result<RecallReply, OpError> {
        let chars = params.query.chars().count();
        if !(1..=2000).contains(&chars) {
            return Err(invalid(format!("query: 1 to 2000 characters, got {chars}")));
        }
        if let Some(limit) = params.limit
            && !(1..=20).contains(&limit)
        {
            return Err(invalid(format!("limit: 1 to 20, got {limit}")));
        }
        let context = recall(
            &self.engine,
            ws,
            &params.query,
            params.budget,
            Some(params.limit.unwrap_or(8)),
            session.map(str::to_owned),
        )?;
        let store = self.store(ws);
        Ok(RecallReply { text: recall_text(store.redactor(), &params.query, &context) })
    }

    /// `memory/remember` / `memory_remember`: an explicit fact (§4.2).
    pub fn remember(
        &mut self,
        ws: Workspace,
        session: Option<&str>,
        params: RememberParams,
    ) -> Result<RememberReply, OpError> {
        let scope = match params.scope.unwrap_or(ScopeName::Project) {
            ScopeName::User => Scope::User,
            ScopeName::Project => Scope::Project,
        };
        let category = params.category.as_deref().unwrap_or("other");
        let store = self.store(ws);
        Ok(RememberReply(store.remember(&params.text, scope, category, FactSource::Explicit, session)?))
    }

    /// `memory/forget` / `memory_forget`.
    pub fn forget(
        &mut self,
        ws: Workspace,
        session: Option<&str>,
        params: ForgetParams,
    ) -> Result<ForgetReply, OpError> {
        let store = self.store(ws);
        Ok(ForgetReply { forgotten: store.forget(&params.target, session)? })
    }
}

/// A recall (docs/memory.md §12) as `ctxgraph memory recall` and `memory/recall` do it:
/// `budget` characters (default `memory.maxTotalChars`, else 9000), `limit` items per
/// block, `session` the asking session (its own card left out, its handoff eligible).
pub fn recall(
    engine: &Engine,
    ws: Workspace,
    query: &str,
    budget: Option<usize>,
    limit: Option<usize>,
    session: Option<String>,
) -> Result<MemoryContext, EngineError> {
    let settings = engine.memory_settings(ws)?;
    engine.memory_recall(ws, Recall::on_request(query, system_clock(), &settings, budget, limit, session))
}

/// A recall as text: the `<memory>` part, or a line saying nothing matched (the query
/// redacted: what is printed is redacted like what is stored).
pub fn recall_text(
    redactor: &ctxgraph_memory::redact::Redactor,
    query: &str,
    context: &MemoryContext,
) -> String {
    let text = if context.text.is_empty() {
        format!("No stored memory matched {query:?}.\n")
    } else {
        format!("{}\n", context.text)
    };
    redactor.redact(&text).text
}
