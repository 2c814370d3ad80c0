//! B2, I9, A2: the environment block, the instruction blocks, and the system text from
//! the environment block on.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

use crate::config::ConfigError;
use crate::instructions::{Candidate, Origin, render_block, rule_text, system_paths};
use crate::memory::{UnreadableStore, prompt_memory};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, ReadFailure};
use ctxgraph_db::hash::{ContentHash, content_hash};
use ctxgraph_db::path;
use ctxgraph_db::remote::RemoteState;
use ctxgraph_db::worktree::worktree;

/// `--model PROVIDER/ID`: the provider, and the model's API id (which may contain `/`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// The provider id, before the first `/`.
    pub provider: String,
    /// The model's API id: everything after the first `/`.
    pub id: String,
}

impl std::str::FromStr for ModelRef {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((provider, id)) if !provider.is_empty() && !id.is_empty() => {
                Ok(ModelRef { provider: provider.to_owned(), id: id.to_owned() })
            }
            _ => Err(format!("expected PROVIDER/MODEL, got {s:?}")),
        }
    }
}

/// Where a block's text comes from; hosts and `check` group blocks by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum BlockKind {
    /// B2: the working directory, platform, date and model; always first.
    Environment,
    /// I9: a local rule file.
    Instruction,
    /// I8: a fetched `instructions` URL.
    Remote,
    /// ctxgraph's workspace memory (docs/memory.md §11.5), only with `memory.enabled: true`.
    Memory,
    /// B1: opencode's prompt for the model's family (opencode's text, from the installation).
    ModelPrompt,
    /// A2: the agent's own prompt, which replaces the model prompt.
    AgentPrompt,
    /// B3: the configured project references that have a description.
    References,
    /// B4: the instructions of the connected MCP servers.
    Mcp,
    /// B5: the skills listing for the agent.
    Skills,
    /// A1: the line asking for the `StructuredOutput` tool (opencode's text), with `--json-schema`.
    StructuredOutput,
    /// A2: the user message's `system` text, last.
    UserSystem,
}

/// One string of opencode's system array. The strings are shared (`Arc`): a rule file's
/// id, source and text are the same for every working directory whose prompt has it, and
/// a host serving many directories keeps one copy of each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// What produced the text.
    pub kind: BlockKind,
    /// Stable across builds for as long as the block has the same source (see
    /// [`PlacedBlock::id`]).
    pub id: Arc<str>,
    /// The path or URL after `Instructions from: `.
    pub source: Option<Arc<str>>,
    /// The exact string opencode puts in its system array.
    pub text: Arc<str>,
    /// The spec rule that put the block here.
    pub rule: &'static str,
    /// Why that rule put it here, in one sentence (without the rule id).
    pub reason: Arc<str>,
    /// Index into [`SystemPaths::candidates`](crate::instructions::SystemPaths).
    pub candidate: Option<usize>,
    /// Index into [`SystemPaths::remote`](crate::instructions::SystemPaths).
    pub remote: Option<usize>,
    /// L3: the text is a placeholder for one of opencode's texts that could not be loaded:
    /// why.
    pub unavailable: Option<String>,
    /// The text opencode sends can change between its starts with nothing changed on disk
    /// (a race inside opencode, e.g. B5.7): why. A provider's prompt cache misses then.
    pub unstable: Option<String>,
}

impl Block {
    /// A block with no path or URL of its own: its id is its kind's. Rule file and URL
    /// blocks set theirs (`file:<path>`, `url:<url>`) and their source over this.
    pub fn new(
        kind: BlockKind,
        text: impl Into<Arc<str>>,
        rule: &'static str,
        reason: impl Into<Arc<str>>,
    ) -> Self {
        let id = match kind {
            BlockKind::Environment => "environment",
            BlockKind::Instruction => "file",
            BlockKind::Remote => "url",
            BlockKind::Memory => "memory",
            BlockKind::ModelPrompt => "model-prompt",
            BlockKind::AgentPrompt => "agent-prompt",
            BlockKind::References => "references",
            BlockKind::Mcp => "mcp",
            BlockKind::Skills => "skills",
            BlockKind::StructuredOutput => "structured-output",
            BlockKind::UserSystem => "user-system",
        };
        Block {
            kind,
            id: id.into(),
            source: None,
            text: text.into(),
            rule,
            reason: reason.into(),
            candidate: None,
            remote: None,
            unavailable: None,
            unstable: None,
        }
    }
}

/// B2. The model line comes first and only when a model is given.
#[salsa::tracked(returns(ref))]
pub fn environment_block(db: &dyn Db, ws: Workspace, model: Option<ModelRef>) -> String {
    let host = ws.host(db);
    let worktree = worktree(db, ws);
    let mut lines = Vec::with_capacity(9);
    if let Some(model) = model {
        lines.push(format!(
            "You are powered by the model named {id}. The exact model ID is {provider}/{id}",
            id = model.id,
            provider = model.provider
        ));
    }
    lines.push("Here is some useful information about the environment you are running in:".to_owned());
    lines.push("<env>".to_owned());
    lines.push(format!("  Working directory: {}", path::display(ws.cwd(db))));
    lines.push(format!("  Workspace root folder: {}", path::display(&worktree.root)));
    lines.push(format!("  Is directory a git repo: {}", if worktree.is_git() { "yes" } else { "no" }));
    lines.push(format!("  Platform: {}", host.platform(db)));
    lines.push(format!("  Today's date: {}", host.date(db)));
    lines.push("</env>".to_owned());
    lines.join("\n")
}

/// What a rule file's block is wherever it appears: its id, source and text (I9), made
/// once per file and shared by every working directory whose prompt has it.
#[derive(Debug, PartialEq, Eq)]
struct RuleBlock {
    id: Arc<str>,
    source: Arc<str>,
    text: Arc<str>,
}

#[salsa::tracked(returns(ref))]
fn rule_block(db: &dyn Db, file: File) -> RuleBlock {
    let path = file.path(db);
    let source = path::display(path);
    RuleBlock {
        id: format!("file:{source}").into(),
        text: render_block(&source, rule_text(db, path).text()).into(),
        source: source.into(),
    }
}

/// I7/I9: a block per discovered path with non-empty content, in discovery order, then a
/// block per loaded remote document.
#[salsa::tracked(returns(ref))]
pub fn instruction_blocks(db: &dyn Db, ws: Workspace) -> Result<Vec<Block>, BuildError> {
    collect_instruction_blocks(db, ws)
}

/// [`instruction_blocks`], unmemoized: for [`system_prompt_layout`], whose own memo is all
/// a host keeps per working directory.
fn collect_instruction_blocks(db: &dyn Db, ws: Workspace) -> Result<Vec<Block>, BuildError> {
    let paths = system_paths(db, ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
    let mut blocks = Vec::new();
    // One sentence per origin: every match of an `instructions` glob in one directory has
    // the same reason.
    let mut reasons: HashMap<&Origin, Arc<str>> = HashMap::new();
    for (index, Candidate { path, origin, duplicate_of }) in paths.candidates.iter().enumerate() {
        if duplicate_of.is_some() {
            continue;
        }
        let content = rule_text(db, path);
        if let Some(ReadFailure::TooLarge(reason)) = &content.failure {
            return Err(BuildError::TooLarge { path: path::display(path), reason: reason.clone() });
        }
        let text = content.text();
        if text.is_empty() {
            continue;
        }
        let shared = rule_block(db, db.files().get(db, path));
        blocks.push(Block {
            kind: BlockKind::Instruction,
            id: Arc::clone(&shared.id),
            source: Some(Arc::clone(&shared.source)),
            text: Arc::clone(&shared.text),
            rule: origin.rule(),
            reason: Arc::clone(reasons.entry(origin).or_insert_with(|| origin.describe().into())),
            candidate: Some(index),
            remote: None,
            unavailable: None,
            unstable: None,
        });
    }
    // I9: URL blocks follow the file blocks, in config order, duplicates kept.
    for (index, entry) in paths.remote.iter().enumerate() {
        let doc = db.remotes().get(db, &entry.url);
        if let RemoteState::Loaded { text, .. } = doc.state(db)
            && !text.is_empty()
        {
            blocks.push(Block {
                id: format!("url:{}", entry.url).into(),
                source: Some(entry.url.as_str().into()),
                remote: Some(index),
                ..Block::new(
                    BlockKind::Remote,
                    render_block(&entry.url, text),
                    "I9",
                    format!("remote instructions entry from {}", entry.source.name()),
                )
            });
        }
    }
    blocks.shrink_to_fit();
    Ok(blocks)
}

/// Why no prompt can be built.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum BuildError {
    /// The config (or a flag) is invalid: opencode would not start.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A rule file over the engine's size limit.
    #[error("{path}: {reason}")]
    TooLarge {
        /// The rule file.
        path: String,
        /// The limit it broke, in words.
        reason: String,
    },
    /// A workspace memory file that exists but cannot be read (memory enabled).
    #[error("{path}: {reason} (a file of the workspace memory store)")]
    MemoryStore {
        /// The store file.
        path: String,
        /// Why it cannot be read.
        reason: String,
    },
}

impl From<UnreadableStore> for BuildError {
    fn from(UnreadableStore { path, reason }: UnreadableStore) -> Self {
        BuildError::MemoryStore { path, reason }
    }
}

/// The system text from the environment block to the last instruction block (docs/opencode/prompt.md, items
/// 2 and 4), as blocks; join them with "\n" for the bytes opencode sends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prompt {
    /// In the order opencode sends them (A2 joins the non-empty ones).
    pub blocks: Vec<Block>,
}

impl Prompt {
    /// A2: the non-empty strings joined by a single LF.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.blocks.iter().map(|b| &*b.text).filter(|t| !t.is_empty()).collect();
        texts.join("\n")
    }
}

/// The system prompt opencode builds in `ws` (with the model line when `model` is given):
/// the query every command and the server read the prompt from.
#[salsa::tracked(returns(ref))]
pub fn system_prompt(db: &dyn Db, ws: Workspace, model: Option<ModelRef>) -> Result<Prompt, BuildError> {
    let instructions = instruction_blocks(db, ws).as_ref().map_err(Clone::clone)?;
    assemble(db, ws, model, instructions.clone())
}

/// [`system_prompt`]'s blocks around the instruction blocks, for the queries that memoize
/// the prompt or only its layout.
fn assemble(
    db: &dyn Db,
    ws: Workspace,
    model: Option<ModelRef>,
    instructions: Vec<Block>,
) -> Result<Prompt, BuildError> {
    let environment = Block::new(
        BlockKind::Environment,
        environment_block(db, ws, model).as_str(),
        "B2",
        "the environment block (working directory, worktree, platform, date, model), which opencode recomputes on every step",
    );
    let mut blocks = Vec::with_capacity(instructions.len() + 2);
    blocks.push(environment);
    blocks.extend(instructions);
    // docs/memory.md §11.5: recalled memory is one more system part, after the instructions.
    if let Some(memory) = prompt_memory(db, ws).as_ref().map_err(|e| BuildError::from(e.clone()))? {
        blocks.push(Block::new(
            BlockKind::Memory,
            memory.text.as_str(),
            "docs/memory.md §11.5",
            format!(
                "workspace memory: {} recalled item(s) from .opencode/memory/ (memory.enabled is true)",
                memory.item_count()
            ),
        ));
    }
    Ok(Prompt { blocks })
}

/// A section of [`system_prompt`] laid out, memoized: a host that keeps it between turns
/// shares this copy, and an unchanged section is the very same `Arc`. The blocks are
/// assembled here rather than read from [`system_prompt`] or [`instruction_blocks`], whose
/// memos would be two more copies of every block per working directory that only the
/// layout reads; an unchanged layout still stops the change here (its memo is compared).
#[salsa::tracked(returns(ref))]
pub fn system_prompt_layout(
    db: &dyn Db,
    ws: Workspace,
    section: Section,
    model: Option<ModelRef>,
) -> Result<Arc<Layout>, BuildError> {
    let instructions = collect_instruction_blocks(db, ws)?;
    Ok(Arc::new(assemble(db, ws, model, instructions)?.layout(section)))
}

/// The parts of the system text `build` can print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// The environment block, then the instruction blocks.
    System,
    /// The environment block alone: what changes with the date and the model.
    Environment,
    /// Every block after the environment block: the rules themselves.
    Instructions,
    /// The whole system message (docs/opencode/prompt.md), from the model or agent prompt to `user.system`.
    Message,
}

impl Section {
    fn includes(self, kind: BlockKind) -> bool {
        match self {
            Section::System | Section::Message => true,
            Section::Environment => kind == BlockKind::Environment,
            Section::Instructions => {
                matches!(kind, BlockKind::Instruction | BlockKind::Remote | BlockKind::Memory)
            }
        }
    }

    /// The name `build --section` and `check` use.
    pub fn name(self) -> &'static str {
        match self {
            Section::System => "system",
            Section::Environment => "environment",
            Section::Instructions => "instructions",
            Section::Message => "message",
        }
    }
}

/// A section's exact bytes and where each block sits in them: the one description of a
/// prompt's layout that `build --format json`, `serve`, `check` and `explain` report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// The section's bytes, exactly as sent.
    pub text: String,
    /// [`content_hash`] of `text`.
    pub hash: String,
    /// The non-empty blocks in `text`, in order.
    pub blocks: Vec<PlacedBlock>,
}

/// One block of a [`Layout`]. A host keeps one layout per working directory it serves:
/// the strings are the blocks' own (`Arc`), the hash is inline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlacedBlock {
    /// Stable across builds for as long as the block has the same source, so a host can
    /// tell which blocks changed: `environment`, `file:<path>`, `url:<url>` (`url:<url>#2`
    /// for a URL listed twice, which I8 keeps as two blocks).
    pub id: Arc<str>,
    /// What produced the block.
    pub kind: BlockKind,
    /// The path or URL it came from, as its `Instructions from:` line names it.
    pub source: Option<Arc<str>>,
    /// Byte range of the block in the text (`start`, `end` in JSON).
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(with = "ctxgraph_db::schema::ByteRange"))]
    pub range: Range<usize>,
    /// The hash of the block's bytes.
    pub hash: ContentHash,
    /// The rule id that put the block here (see [`Block::rule`]).
    pub rule: &'static str,
    /// Why, in one sentence.
    pub reason: Arc<str>,
    /// L3: set when the block is a placeholder for a text of opencode's that could not be
    /// loaded (`unavailable: true` in JSON, with the reason in `unavailable_reason`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unavailable: bool,
    /// Why it is unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// The block's text can differ between opencode starts (`unstable: true` in JSON, with
    /// the reason in `unstable_reason`): a prompt cache keyed on it misses.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unstable: bool,
    /// Why it is unstable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstable_reason: Option<String>,
    /// Index into [`Prompt::blocks`], for callers that need the block itself.
    #[serde(skip)]
    pub index: usize,
}

impl Prompt {
    /// A2: the section's non-empty blocks joined by a single LF, each placed.
    pub fn layout(&self, section: Section) -> Layout {
        let placed =
            || self.blocks.iter().enumerate().filter(|(_, b)| section.includes(b.kind) && !b.text.is_empty());
        // Sized exactly: a host keeps a layout per working directory for as long as it runs.
        let (count, bytes) =
            placed().fold((0usize, 0), |(count, bytes), (_, b)| (count + 1, bytes + b.text.len()));
        let mut text = String::with_capacity(bytes + count.saturating_sub(1));
        let mut blocks: Vec<PlacedBlock> = Vec::with_capacity(count);
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (index, block) in placed() {
            if !text.is_empty() {
                text.push('\n');
            }
            let start = text.len();
            text.push_str(&block.text);
            let occurrence = seen.entry(&block.id).and_modify(|n| *n += 1).or_insert(1);
            blocks.push(PlacedBlock {
                id: if *occurrence == 1 {
                    Arc::clone(&block.id)
                } else {
                    format!("{}#{occurrence}", block.id).into()
                },
                kind: block.kind,
                source: block.source.clone(),
                range: start..text.len(),
                hash: ContentHash::of(&block.text),
                rule: block.rule,
                reason: Arc::clone(&block.reason),
                unavailable: block.unavailable.is_some(),
                unavailable_reason: block.unavailable.clone(),
                unstable: block.unstable.is_some(),
                unstable_reason: block.unstable.clone(),
                index,
            });
        }
        Layout { hash: content_hash(&text), text, blocks }
    }
}
