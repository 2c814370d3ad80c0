//! Every method's request and reply, as typed serde structs with their JSON Schema, and the
//! table of methods ([`METHODS`]) that says which MCP tool each one is, from which
//! docs/protocol.md is generated.
//!
//! A request type holds what both servers read. Over JSON-RPC the methods marked
//! [`Scope::Workspace`] also take `cwd` (and the memory methods `session`) beside those
//! fields; over MCP the workspace is the one `ctxgraph mcp` serves and the session its
//! `--session`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_engine::answers::explain::{
    Explanation, SessionExplanation, SkillsExplanation, TargetExplanation,
};
use ctxgraph_engine::answers::memory::MemoryContext;
use ctxgraph_engine::answers::profile::{AgentFate, Block, BlockView, SessionCosts};
use ctxgraph_engine::answers::session::CompactionPlan;
use ctxgraph_engine::answers::stages::{McpServerFact, References};
use ctxgraph_engine::{AgentTurn, Finding, Turn};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::render;

/// Build the context an agent sends for a working directory: opencode's system prompt (or
/// one of its sections, or the whole first message), or another agent's text with one block
/// per file it carries.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildParams {
    /// The working directory.
    pub cwd: PathBuf,
    /// Which part of what the agent sends: `system` (its rules text, the default; also
    /// `rules`), or a section its profile builds: opencode's `environment`, `instructions`
    /// and `message`, Claude Code's and Codex's `request`.
    #[serde(default)]
    pub section: Option<SectionParam>,
    /// The agent's own settings as `KEY=VALUE`, as `build -c` takes them (Codex's
    /// `project_doc_max_bytes=N`, Aider's `read=FILE`, …); an agent refuses one it does not
    /// model.
    #[serde(default)]
    pub settings: Vec<String>,
    /// The model whose prompt to build, as `provider/model` (default: the config's).
    #[serde(default)]
    pub model: Option<String>,
    /// With `section: "message"`: the opencode agent (default `build`). Not `agent`, which
    /// names the coding agent whose context is built (`--opencode-agent` on the CLI).
    #[serde(default)]
    pub opencode_agent: Option<String>,
    /// With `section: "message"`: the user asked for structured output (A1).
    #[serde(default)]
    pub json_schema: bool,
    /// With `section: "message"`: the user message's `system` text (A2).
    #[serde(default)]
    pub user_system: Option<String>,
    /// The `hash` of the text the client already has: the reply then leaves out what the
    /// client knows.
    #[serde(default)]
    pub known_hash: Option<String>,
    /// Whose context to build, by its `--agent` name (default opencode); `model`,
    /// `opencode_agent`, `json_schema` and `user_system` are opencode's settings (`-c model=`,
    /// `agent=`, `json-schema=`, `user-system=`), refused by every other agent.
    #[serde(default)]
    pub agent: Option<String>,
}

impl BuildParams {
    /// The agent's settings: `settings`, then opencode's named parameters as the settings
    /// they stand for ([`message_settings`]). A setting that is not `KEY=VALUE` is refused.
    pub fn agent_settings(&self) -> Result<Vec<(String, String)>, String> {
        let mut settings = self
            .settings
            .iter()
            .map(|setting| {
                split_setting(setting).ok_or_else(|| format!("settings: {setting:?} is not KEY=VALUE"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        settings.extend(message_settings(
            self.model.as_deref(),
            self.opencode_agent.as_deref(),
            self.json_schema,
            self.user_system.as_deref(),
        ));
        Ok(settings)
    }
}

/// `KEY=VALUE` as the pair a profile's request holds (both sides trimmed), as `build -c`
/// and `build`'s `settings` take it.
pub fn split_setting(setting: &str) -> Option<(String, String)> {
    let (key, value) = setting.split_once('=')?;
    Some((key.trim().to_owned(), value.trim().to_owned()))
}

/// opencode's named options (`--model`, `--opencode-agent`, `--json-schema`,
/// `--user-system`; the same parameters of `build`) as the `-c` settings its profile reads.
/// Another agent refuses them as it refuses any setting it does not model.
pub fn message_settings(
    model: Option<&str>,
    opencode_agent: Option<&str>,
    json_schema: bool,
    user_system: Option<&str>,
) -> Vec<(String, String)> {
    let pairs = [
        ("model", model),
        ("agent", opencode_agent),
        ("json-schema", json_schema.then_some("true")),
        ("user-system", user_system),
    ];
    pairs.into_iter().filter_map(|(key, value)| Some((key.to_owned(), value?.to_owned()))).collect()
}

/// Which part of what the agent sends `build` answers (`build --section`).
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum SectionParam {
    /// The agent's rules text (opencode: its whole system prompt).
    #[serde(alias = "rules")]
    System,
    /// The environment block only.
    Environment,
    /// The instruction blocks only.
    Instructions,
    /// The whole first message (needs the opencode installation's texts).
    Message,
    /// The whole first request, every block in send order (Claude Code, Codex).
    Request,
}

impl SectionParam {
    /// The section a profile builds.
    pub fn section(self) -> ctxgraph_engine::answers::profile::Section {
        use ctxgraph_engine::answers::profile::Section;
        match self {
            SectionParam::System => Section::Rules,
            SectionParam::Environment => Section::Environment,
            SectionParam::Instructions => Section::Instructions,
            SectionParam::Message => Section::Message,
            SectionParam::Request => Section::Request,
        }
    }
}

/// The answer to `build`, the same for every agent: the text (opencode's system text or
/// whole message, Codex's message, Gemini's system-instruction and first-message context…),
/// its blocks in text order, and what changed since this client's previous build of the same
/// text (working directory, agent, section, and the settings or model). With a `known_hash`
/// it carries only what the client lacks: no text and no blocks when that is the current
/// text (`unchanged: true`); the text and only the blocks added or modified when it is the
/// build the server sent last for the same text; everything for any other hash.
#[derive(Serialize, JsonSchema)]
pub struct BuildReply<'a> {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// The text, unless the client has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<&'a str>,
    /// blake3 of the text.
    pub hash: String,
    /// Length of the text in bytes.
    pub bytes: usize,
    /// Each block with its id: what it comes from, where the agent puts it, its bytes' range
    /// and hash, whether it went whole, its rule. Why and where exactly are `build --format
    /// json`'s and `explain`'s. With a `known_hash` of the server's previous build of this
    /// text, only the blocks added or modified since.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<TurnBlock<'static>>>")]
    pub blocks: Option<TurnBlocks<'a>>,
    /// Ids of the blocks added, then modified, since the previous build.
    #[schemars(with = "Vec<String>")]
    pub changed: Vec<Arc<str>>,
    /// Ids of the blocks removed since the previous build.
    #[schemars(with = "Vec<String>")]
    pub removed: &'a [Arc<str>],
    /// How many bytes at the start are the same as in the previous build: what a
    /// provider's prompt cache can reuse.
    pub stable_prefix_bytes: usize,
    /// Queries executed for this build.
    pub executed: u64,
    /// The text is the one the client named in `known_hash`; text and blocks are left out.
    pub unchanged: bool,
    /// Why the text holds placeholders for the agent's own texts (its installation could
    /// not give them), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<&'a str>,
}

/// One block of a [`BuildReply`].
#[derive(Serialize, JsonSchema)]
pub struct TurnBlock<'a> {
    /// Stable for as long as the block has the same source: `file:<path>`, `url:<url>`, or
    /// the name of a text the agent writes itself (`#2` for a source seen again).
    pub id: &'a str,
    /// The block.
    #[serde(flatten)]
    pub block: BlockView<'a>,
}

/// A build as `build` answers it, whichever turns made it.
pub enum BuiltTurn<'a> {
    /// The engine's memoized turns of opencode's text ([`ctxgraph_engine::Turns`]).
    Memoized(&'a Turn),
    /// Any agent's profile layout ([`ctxgraph_engine::AgentTurns`]).
    Agent(&'a AgentTurn),
}

/// A reply's blocks, read from the turn as they are written: a reply copies none of them.
pub struct TurnBlocks<'a> {
    turn: BuiltTurn<'a>,
    /// Only these ids (the blocks changed since the build the client holds), or all.
    only: Option<Vec<Arc<str>>>,
}

impl Serialize for TurnBlocks<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let keep = |id: &str| self.only.as_ref().is_none_or(|only| only.iter().any(|o| &**o == id));
        let block = |(id, block)| TurnBlock { id, block };
        match self.turn {
            BuiltTurn::Memoized(turn) => {
                serializer.collect_seq(turn.blocks().filter(|(id, _)| keep(id)).map(block))
            }
            BuiltTurn::Agent(turn) => {
                serializer.collect_seq(turn.blocks().filter(|(id, _)| keep(id)).map(block))
            }
        }
    }
}

/// What the client already has, as far as `build` can tell.
#[derive(Clone, Copy)]
pub enum Known {
    /// No `known_hash`, or one from some other build: send everything.
    Nothing,
    /// The client holds the server's previous build of this text.
    PreviousBuild,
    /// The client holds exactly this text.
    Current,
}

impl<'a> BuildReply<'a> {
    /// The reply for `agent`'s `turn`, leaving out what the client has.
    pub fn new(agent: ctxgraph_engine::Agent, turn: BuiltTurn<'a>, known: Known, executed: u64) -> Self {
        let (text, hash, diff, unavailable) = match turn {
            BuiltTurn::Memoized(turn) => {
                (turn.layout.text.as_str(), turn.layout.hash.clone(), &turn.diff, turn.unavailable())
            }
            BuiltTurn::Agent(turn) => {
                (turn.layout.text.as_str(), turn.hash(), &turn.diff, turn.unavailable())
            }
        };
        let changed = diff.changed();
        let (unchanged, sent, blocks) = match known {
            Known::Nothing => (false, Some(text), Some(TurnBlocks { turn, only: None })),
            Known::Current => (true, None, None),
            Known::PreviousBuild => {
                (false, Some(text), Some(TurnBlocks { turn, only: Some(changed.clone()) }))
            }
        };
        BuildReply {
            agent: agent.name(),
            text: sent,
            hash,
            bytes: text.len(),
            blocks,
            changed,
            removed: &diff.removed,
            stable_prefix_bytes: diff.stable_prefix_bytes,
            executed,
            unchanged,
            unavailable,
        }
    }
}

/// What a read of `file` attaches in an agent's context, as `ctxgraph nearby --format json`
/// prints it: opencode's `<system-reminder>` (N1–N6), Claude Code's, Gemini CLI's … and, for
/// an agent that attaches nothing on reads, no blocks and a note. With `session`, opencode's
/// read happens in that session's state (N2–N7).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NearbyParams {
    /// The file read, relative to `cwd` or absolute.
    pub file: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// Whose read, by its `--agent` name (default opencode).
    #[serde(default)]
    pub agent: Option<String>,
    /// A session opened with `session/open` (opencode's): the read happens in its state
    /// (N2–N7).
    #[serde(default)]
    pub session: Option<String>,
    /// The assistant message the read belongs to; default: the session's next step.
    #[serde(default)]
    pub message: Option<String>,
    /// Another agent's own session record (Claude Code's transcript, …), relative to `cwd`
    /// or absolute: the read happens at its next step, as `nearby --session RECORD` reads it.
    #[serde(default)]
    pub record: Option<PathBuf>,
}

/// The answer to `nearby`: [`render::profile::ReadView`], the same for every agent.
pub struct NearbyReply(pub ctxgraph_engine::ReadAnswer);

impl Serialize for NearbyReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        render::profile::ReadView::new(&self.0).serialize(serializer)
    }
}

impl JsonSchema for NearbyReply {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NearbyReply".into()
    }

    /// The view [`Serialize`] writes.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        render::profile::ReadView::json_schema(generator)
    }
}

/// opencode's own texts, by asset name (docs/opencode/installation.md), so that a client
/// placed inside opencode's own text (the opencode plugin) can find where opencode's blocks
/// begin without carrying their words.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallationParams {
    /// The asset names wanted.
    pub texts: Vec<String>,
}

/// The answer to `installation`: the executable and release the server loaded its texts
/// from (`null` without one), each text asked for that was found and verified (L2), and
/// why each other one is not (L3).
#[derive(Serialize, JsonSchema)]
pub struct InstallationReply {
    /// opencode's executable.
    pub binary: Option<PathBuf>,
    /// Its release.
    pub version: Option<String>,
    /// Each text found, by name.
    pub texts: BTreeMap<String, String>,
    /// Why each other text is not there, by name.
    pub unavailable: BTreeMap<String, String>,
}

/// How much work the server has done: query executions, inputs, watches. Takes no
/// parameters (`params` may be left out).
#[derive(Deserialize, JsonSchema)]
pub struct StatsParams {}

/// Stop: the server answers `null`, then reads no more. Takes no parameters.
#[derive(Deserialize, JsonSchema)]
pub struct ShutdownParams {}

/// The answer to `stats`: how much work the server has done.
#[derive(Serialize, JsonSchema)]
pub struct StatsReply {
    /// Executions per query.
    pub executions: BTreeMap<String, u64>,
    /// Executions of every query.
    pub total_executions: u64,
    /// File inputs in the graph.
    pub inputs: usize,
    /// A watcher keeps the inputs current (else every request rescans).
    pub watching: bool,
    /// Directories watched.
    pub watched_dirs: usize,
}

/// `shutdown`'s answer: `null`, after which the server stops reading.
#[derive(Serialize, JsonSchema)]
pub struct NullReply;

/// Why each rule file, `instructions` entry or URL is (or is not) in an agent's context:
/// opencode's whole explanation (with the memory recalled and cut), or another agent's
/// verdict on every file it looked at, or one file's fate in every agent side by side.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainParams {
    /// A rule file, `instructions` entry or URL to explain (paths relative to the
    /// workspace); default: everything.
    #[serde(default)]
    pub target: Option<String>,
    /// Whose reasons, by `--agent` name, or `all` (with `target`: every agent side by side);
    /// default opencode.
    #[serde(default)]
    pub agent: Option<String>,
}

/// The answer to `explain`, as `ctxgraph explain --format json` prints it: opencode's whole
/// workspace (with `memory` when `memory.enabled` is set) or one target, or other agents'
/// verdicts on files.
pub enum ExplainReply {
    /// Everything, with the memory recalled into the prompt.
    Workspace(Box<WorkspaceExplanation>),
    /// One target.
    Target(TargetExplanation),
    /// One file's fate in one agent or all of them, side by side.
    File(PathBuf, Vec<AgentFate>),
    /// Every file one agent looked at, each with its fate.
    Files(Vec<(PathBuf, AgentFate)>),
}

/// opencode's whole explanation for a workspace, as `ctxgraph explain` gives it: every
/// item's fate, the references (B3) and MCP servers (B4) of the `build` agent, its skills
/// (B5), and the memory recalled into the prompt.
pub struct WorkspaceExplanation {
    /// Every item's fate.
    pub explanation: Explanation,
    /// B3: the configured references.
    pub references: References,
    /// B4: the MCP servers configured for the opencode agent.
    pub servers: Vec<McpServerFact>,
    /// B5: the skills the agent lists.
    pub skills: SkillsExplanation,
    /// The prompt's memory, when `memory.enabled` is set.
    pub memory: Option<MemoryContext>,
    /// The opencode agent (`build` unless asked otherwise).
    pub agent: String,
    /// The whole message's first block for a chosen opencode agent or model (B1/A2), when
    /// asked for (`explain --opencode-agent`, `--model`).
    pub message_prompt: Option<Block>,
}

impl WorkspaceExplanation {
    /// The JSON view `explain --format json` prints.
    pub fn view(&self) -> render::explain::ExplanationView<'_> {
        render::explain::ExplanationView::new(&self.explanation)
            .with_memory(self.memory.as_ref())
            .with_stages(render::stages::StagesView::new(&self.references, &self.agent, &self.servers))
            .with_skills(&self.skills)
            .with_message_prompt(self.message_prompt.clone())
    }

    /// The text `explain` prints.
    pub fn text(&self) -> String {
        let mut text = render::explain::text(&self.explanation);
        text.push_str(&render::stages::text(&self.references, &self.agent, &self.servers));
        if !self.skills.only_builtin() {
            text.push('\n');
            text.push_str(&self.skills.prose());
        }
        if let Some(memory) = &self.memory {
            text.push_str(&render::explain::memory_text(memory));
        }
        if let Some(block) = &self.message_prompt {
            text.push_str(&render::explain::message_prompt_text(block));
        }
        text
    }
}

impl ExplainReply {
    /// The text `explain` prints, whichever answer.
    pub fn text(&self) -> String {
        match self {
            ExplainReply::Workspace(workspace) => workspace.text(),
            ExplainReply::Target(answer) => render::explain::target_text(answer),
            ExplainReply::File(file, fates) => render::profile::fates_text(file, fates),
            ExplainReply::Files(files) => render::profile::files_text(files),
        }
    }
}

impl Serialize for ExplainReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ExplainReply::Workspace(workspace) => workspace.view().serialize(serializer),
            ExplainReply::Target(target) => render::explain::TargetView::new(target).serialize(serializer),
            ExplainReply::File(file, agents) => {
                render::profile::FileFates { file, agents }.serialize(serializer)
            }
            ExplainReply::Files(files) => {
                serializer.collect_seq(files.iter().map(|(file, fate)| render::profile::FileFates {
                    file,
                    agents: std::slice::from_ref(fate),
                }))
            }
        }
    }
}

impl JsonSchema for ExplainReply {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ExplainReply".into()
    }

    /// One of the two views [`Serialize`] writes.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let workspace = generator.subschema_for::<render::explain::ExplanationView<'static>>();
        let target = generator.subschema_for::<render::explain::TargetView<'static>>();
        let file = generator.subschema_for::<render::profile::FileFates<'static>>();
        let files = generator.subschema_for::<Vec<render::profile::FileFates<'static>>>();
        json_schema!({
            "description": "The answer to `explain`, as `ctxgraph explain --format json` prints it: for \
                opencode the whole workspace (without `target`) or the one target (with `target`); for \
                another agent every file it looked at (without `target`), or one file's fate in that \
                agent or in `all` of them.",
            "anyOf": [workspace, target, file, files],
        })
    }
}

/// The lint findings for the workspace (CG001–CG022), as `ctxgraph lint --format json`
/// reports them.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintParams {
    /// Whose rules to check, by `--agent` name, or `all` (every agent's findings and the
    /// cross-agent checks CG012–CG015); default opencode.
    #[serde(default)]
    pub agent: Option<String>,
    /// The token budget of the whole system text (default 8192).
    #[serde(default)]
    pub max_total_tokens: Option<usize>,
    /// The token budget of one rule file's block (default 4096).
    #[serde(default)]
    pub max_rule_tokens: Option<usize>,
}

/// The answer to `lint`: every finding with its code's name.
pub struct LintReply(pub Vec<Finding>);

impl Serialize for LintReply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        render::lint::JsonReport::new(&self.0).serialize(serializer)
    }
}

impl JsonSchema for LintReply {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LintReply".into()
    }

    /// The report [`Serialize`] writes.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        render::lint::JsonReport::json_schema(generator)
    }
}

/// An agent's settings, every place it reads them from and where each value came from,
/// secrets masked (`ctxgraph config --agent NAME --format json`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigParams {
    /// Whose settings, by its `--agent` name (default opencode).
    #[serde(default)]
    #[schemars(schema_with = "agent_name")]
    pub agent: Option<String>,
}

/// The answer to `config`, and `ctxgraph config --format json`'s.
#[derive(Serialize, JsonSchema)]
pub struct ConfigReply {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// The settings in effect, secrets masked: opencode's whole merged config as `opencode
    /// debug config` prints it (any key its config files hold, so its schema is any
    /// object); another agent's, the settings that shape its context.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub config: Value,
    /// Every place the agent reads settings from, in the order a later one wins, with what
    /// it did.
    pub layers: Vec<ctxgraph_engine::answers::settings::SettingsLayer>,
}

/// Load an `opencode export` as a session the `session/*` methods (and `nearby` with
/// `session`) answer about; it stays open until the server ends.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionOpenParams {
    /// An export file to read…
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// …or the export itself: free-form here, as `opencode export` writes it (its schema is
    /// opencode's, which the server checks when it reads it).
    #[serde(default)]
    pub export: Option<Value>,
}

/// The answer to `session/open`.
#[derive(Serialize, JsonSchema)]
pub struct SessionOpenReply {
    /// The session's id, by which the other methods name it.
    pub session: String,
    /// How many messages it holds.
    pub messages: usize,
}

/// Append a message to an open session, or replace the message with the same id (a message
/// is updated while it streams).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionAppendParams {
    /// The session's id.
    pub session: String,
    /// The message, as one entry of an export's `messages`: free-form here, as opencode
    /// writes it (checked when read).
    pub message: Value,
}

/// The answer to `session/append`.
#[derive(Serialize, JsonSchema)]
pub struct SessionAppendReply {
    /// How many messages the session holds now.
    pub messages: usize,
}

/// What opencode does about compaction at the session's next step (docs/opencode/compaction.md): the usable
/// window, whether the last step overflowed, the tail kept, and the summarizer's request.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionCompactParams {
    /// The session's id.
    pub session: String,
    /// The model's context window in tokens (default: the config's limit).
    #[serde(default)]
    pub context: Option<u64>,
    /// The model's input limit, if it has one apart from the window.
    #[serde(default)]
    pub input: Option<u64>,
    /// The model's output limit.
    #[serde(default)]
    pub output: Option<u64>,
}

/// The answer to `session/compact`: the plan (as `ctxgraph session compact --format json`
/// prints it) and the summarizer's request written from ctxgraph's template.
#[derive(Serialize, JsonSchema)]
pub struct SessionCompactReply {
    /// The compaction plan.
    #[serde(flatten)]
    pub plan: CompactionPlan,
    /// The summarizer's request.
    pub request: String,
}

/// The `messages` of the session's next normal call after the system message, in the
/// chat-completions shape (K10).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    /// The session's id.
    pub session: String,
}

/// The answer to `session/messages`.
#[derive(Serialize, JsonSchema)]
pub struct SessionMessagesReply {
    /// Each message, `{role, content}` and tool calls as the provider receives them:
    /// free-form, in the provider's chat-completions shape, so each is any object.
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    pub messages: Vec<Value>,
}

/// Every read's rules (N2–N7) and every message's fate at the next compaction (K4–K11),
/// as `ctxgraph explain --session --format json` prints them.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExplainParams {
    /// The session's id.
    pub session: String,
    /// The session as it stood when this message was written: the messages up to it, and
    /// its reads only.
    #[serde(default)]
    pub message: Option<String>,
    /// Also a read of this file at that point's next step.
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// The model's context window in tokens (default: the config's limit).
    #[serde(default)]
    pub context: Option<u64>,
    /// The model's input limit, if it has one apart from the window.
    #[serde(default)]
    pub input: Option<u64>,
    /// The model's output limit.
    #[serde(default)]
    pub output: Option<u64>,
}

/// The answer to `session/explain`.
#[derive(Serialize, JsonSchema)]
pub struct SessionExplainReply(pub SessionExplanation);

/// What each rule-like file cost in every request of a recorded session, from the agent's
/// own record of it, as `ctxgraph session rules --format json` prints it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRulesParams {
    /// Whose record, by its `--agent` name (default opencode): a Claude Code transcript, a
    /// Codex rollout, an `opencode export`.
    #[serde(default)]
    #[schemars(schema_with = "agent_name")]
    pub agent: Option<String>,
    /// The record's file, relative to `cwd` or absolute.
    pub record: PathBuf,
}

/// The answer to `session/rules`.
#[derive(Serialize, JsonSchema)]
pub struct SessionRulesReply(pub SessionCosts);

/// Recall what this workspace's memory holds about a topic: remembered facts, the task
/// handoff, observations from earlier tool runs, tool lessons and related past sessions,
/// ranked by keyword relevance and clamped to a character budget.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// What to look for, in free text (1 to 2000 characters).
    pub query: String,
    /// At most this many items per block (1 to 20; default 8).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Characters the whole answer may take (default: `memory.maxTotalChars`, else 9000).
    #[serde(default)]
    pub budget: Option<usize>,
}

/// The answer to `memory/recall`.
#[derive(Serialize, JsonSchema)]
pub struct RecallReply {
    /// The `<memory>` text, or a line saying nothing matched; secrets redacted.
    pub text: String,
}

/// Remember one fact about the user or the project for later sessions in this workspace.
/// Secrets are redacted; an identical active fact is not stored twice; a near-identical one
/// is replaced.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// One atomic fact, at most 300 characters ("Use pnpm, not npm, in this repo").
    pub text: String,
    /// Whom it is about: `user` (preferences, style) or `project` (the code base; default).
    #[serde(default)]
    pub scope: Option<ScopeName>,
    /// `preference`, `convention`, `tooling`, `environment`, `architecture` or `other`
    /// (default).
    #[serde(default)]
    pub category: Option<String>,
}

/// Whom a fact is about.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeName {
    /// The user: preferences, style.
    User,
    /// The code base.
    Project,
}

/// The answer to `memory/remember`: what the store did (`added`, `duplicate` or
/// `superseded`), the fact's id, the facts the cap of 200 active facts retired for it
/// (`evicted`), and a `warning` when the fact is stored but the log's compaction failed.
#[derive(Serialize, JsonSchema)]
pub struct RememberReply(pub ctxgraph_memory::Remembered);

/// Forget a remembered fact, by id or by a description of it. The fact is marked inactive
/// (never recalled again), not deleted.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// A fact id (`fct_…`), or text naming the fact ("that we use npm").
    pub target: String,
}

/// The answer to `memory/forget`.
#[derive(Serialize, JsonSchema)]
pub struct ForgetReply {
    /// The ids of the facts marked inactive.
    pub forgotten: Vec<String>,
}

/// What a JSON-RPC method needs besides its own parameters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// Nothing: its parameters say everything (or it is about the server).
    None,
    /// `cwd`, the working directory, beside the parameters (required).
    Workspace,
    /// `cwd`, and `session`: the asking opencode session (optional; docs/memory.md §3.1's session id).
    WorkspaceAndSession,
}

/// One method of the protocol, for the page generated from these types.
pub struct Method {
    /// The JSON-RPC method.
    pub name: &'static str,
    /// The MCP tool that is the same operation, if there is one.
    pub tool: Option<&'static str>,
    /// What a JSON-RPC request takes beside the parameters.
    pub scope: Scope,
    /// The parameters' schema.
    pub params: fn(&mut SchemaGenerator) -> Schema,
    /// The reply's schema.
    pub reply: fn(&mut SchemaGenerator) -> Schema,
}

/// How every reply's schema is generated (docs/protocol.md and the MCP tools): JSON Schema
/// 2020-12, describing what serde writes (a field written only when set is optional), with
/// every object closed ([`ClosedObjects`]).
pub fn reply_settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().for_serialize().with_transform(ClosedObjects)
}

/// Closes every object schema that names its properties (`unevaluatedProperties: false`), so
/// a reply holding a field its type's schema does not describe fails validation: the types
/// are serialised, never read, so nothing else would say which fields they write.
///
/// An object is closed where it stands as a value (the root, a property, an array's items,
/// a definition). A `oneOf`/`anyOf`/`allOf` branch of an object that has properties of its
/// own (a flattened enum beside the struct's fields) stays open: `unevaluatedProperties` at
/// the object sees the properties the matching branch evaluated, while a closed branch
/// would refuse its siblings' fields. Objects without named properties (a free-form map,
/// the merged config) stay open.
#[derive(Clone, Copy)]
pub struct ClosedObjects;

impl schemars::transform::Transform for ClosedObjects {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(members) = schema.as_object_mut() {
            close_members(members, true);
        }
    }
}

/// [`ClosedObjects`] on one node: `standalone` when it stands as a value, not as a branch
/// beside properties.
fn close(node: &mut Value, standalone: bool) {
    if let Value::Object(members) = node {
        close_members(members, standalone);
    }
}

/// [`close`] on an object schema's members.
fn close_members(members: &mut serde_json::Map<String, Value>, standalone: bool) {
    let has_properties = members.contains_key("properties");
    if standalone
        && has_properties
        && !members.contains_key("additionalProperties")
        && !members.contains_key("unevaluatedProperties")
    {
        members.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
    }
    for (key, child) in members.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" => {
                if let Value::Object(children) = child {
                    children.values_mut().for_each(|child| close(child, true));
                }
            }
            "items" | "additionalProperties" => close(child, true),
            "prefixItems" => {
                if let Value::Array(children) = child {
                    for child in children {
                        close(child, true);
                    }
                }
            }
            "oneOf" | "anyOf" | "allOf" => {
                if let Value::Array(branches) = child {
                    for branch in branches {
                        close(branch, standalone && !has_properties);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `T`'s schema, whole: its title, its doc comment as the description, its definitions.
fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.root_schema_for::<T>()
}

/// Every method, in the order the page lists them.
pub const METHODS: &[Method] = &[
    Method {
        name: "build",
        tool: Some("context_build"),
        scope: Scope::None,
        params: schema::<BuildParams>,
        reply: schema::<BuildReply<'static>>,
    },
    Method {
        name: "nearby",
        tool: Some("context_nearby"),
        scope: Scope::None,
        params: schema::<NearbyParams>,
        reply: schema::<NearbyReply>,
    },
    Method {
        name: "explain",
        tool: Some("context_explain"),
        scope: Scope::Workspace,
        params: schema::<ExplainParams>,
        reply: schema::<ExplainReply>,
    },
    Method {
        name: "lint",
        tool: Some("context_lint"),
        scope: Scope::Workspace,
        params: schema::<LintParams>,
        reply: schema::<LintReply>,
    },
    Method {
        name: "config",
        tool: Some("context_config"),
        scope: Scope::Workspace,
        params: schema::<ConfigParams>,
        reply: schema::<ConfigReply>,
    },
    Method {
        name: "session/open",
        tool: Some("session_open"),
        scope: Scope::None,
        params: schema::<SessionOpenParams>,
        reply: schema::<SessionOpenReply>,
    },
    Method {
        name: "session/append",
        tool: Some("session_append"),
        scope: Scope::None,
        params: schema::<SessionAppendParams>,
        reply: schema::<SessionAppendReply>,
    },
    Method {
        name: "session/compact",
        tool: Some("session_compact"),
        scope: Scope::Workspace,
        params: schema::<SessionCompactParams>,
        reply: schema::<SessionCompactReply>,
    },
    Method {
        name: "session/messages",
        tool: Some("session_messages"),
        scope: Scope::None,
        params: schema::<SessionParams>,
        reply: schema::<SessionMessagesReply>,
    },
    Method {
        name: "session/explain",
        tool: Some("session_explain"),
        scope: Scope::Workspace,
        params: schema::<SessionExplainParams>,
        reply: schema::<SessionExplainReply>,
    },
    Method {
        name: "session/rules",
        tool: Some("session_rules"),
        scope: Scope::Workspace,
        params: schema::<SessionRulesParams>,
        reply: schema::<SessionRulesReply>,
    },
    Method {
        name: "memory/recall",
        tool: Some("memory_recall"),
        scope: Scope::WorkspaceAndSession,
        params: schema::<RecallParams>,
        reply: schema::<RecallReply>,
    },
    Method {
        name: "memory/remember",
        tool: Some("memory_remember"),
        scope: Scope::WorkspaceAndSession,
        params: schema::<RememberParams>,
        reply: schema::<RememberReply>,
    },
    Method {
        name: "memory/forget",
        tool: Some("memory_forget"),
        scope: Scope::WorkspaceAndSession,
        params: schema::<ForgetParams>,
        reply: schema::<ForgetReply>,
    },
    Method {
        name: "installation",
        tool: None,
        scope: Scope::None,
        params: schema::<InstallationParams>,
        reply: schema::<InstallationReply>,
    },
    Method {
        name: "stats",
        tool: None,
        scope: Scope::None,
        params: schema::<StatsParams>,
        reply: schema::<StatsReply>,
    },
    Method {
        name: "shutdown",
        tool: None,
        scope: Scope::None,
        params: schema::<ShutdownParams>,
        reply: schema::<NullReply>,
    },
];

/// An `agent` parameter's schema: one of the names `--agent` takes, from the registry.
pub fn agent_name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": agent_names().collect::<Vec<_>>() })
}

/// An `agent` parameter that also takes `all`.
pub fn agent_name_or_all(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": agent_names().chain(["all"]).collect::<Vec<_>>() })
}

fn agent_names() -> impl Iterator<Item = &'static str> {
    ctxgraph_engine::Agent::ALL.iter().map(|a| a.name())
}
