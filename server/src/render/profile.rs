//! Every agent's answers in the one shape they share (`docs/profiles/README.md`): what
//! `build`, `nearby` and `explain --agent NAME|all` print as JSON, and `explain`'s fates as
//! text. The CLI prints these; `serve` and `mcp` reply with them, so a host gets the CLI's
//! `--format json` answer byte for byte.

use std::fmt::Write as _;
use std::path::Path;

use ctxgraph_engine::ReadAnswer;
use ctxgraph_engine::answers::profile::{
    AgentFate, Block, Layout, LeftOut, RemoteDocument, Setting, WordingSource,
};
use ctxgraph_engine::answers::session::SessionNearby;
use schemars::JsonSchema;
use serde::Serialize;

/// A block with its bytes: what the JSON answers list.
#[derive(Serialize, JsonSchema)]
pub struct BlockView<'a> {
    /// The block: source, placement, position, byte range, hash, status, rule and reason.
    #[serde(flatten)]
    pub block: &'a Block,
    /// Its length in bytes.
    pub bytes: usize,
    /// Its text.
    pub text: &'a str,
}

fn blocks<'a>(text: &'a str, blocks: &'a [Block]) -> Vec<BlockView<'a>> {
    blocks
        .iter()
        .map(|block| BlockView { block, bytes: block.range.len(), text: &text[block.range.clone()] })
        .collect()
}

/// `build --agent NAME --format json`: what the agent sends from a working directory.
#[derive(Serialize)]
pub struct LayoutView<'a> {
    agent: &'static str,
    release: &'static str,
    cwd: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<&'a Path>,
    /// Bytes of the whole text (0: the agent sends none).
    bytes: usize,
    hash: Option<String>,
    wording: &'a WordingSource,
    settings: &'a [Setting],
    blocks: Vec<BlockView<'a>>,
    left_out: &'a [LeftOut],
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    /// Every remote document the agent's settings name, and what became of it.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    remote: &'a [RemoteDocument],
}

impl<'a> LayoutView<'a> {
    /// The view of `layout`.
    pub fn new(layout: &'a Layout) -> Self {
        LayoutView {
            agent: layout.agent,
            release: layout.release,
            cwd: &layout.cwd,
            root: layout.root.as_deref(),
            bytes: layout.text.len(),
            hash: layout.hash.map(|h| h.to_string()),
            wording: &layout.wording,
            settings: &layout.settings,
            blocks: blocks(&layout.text, &layout.blocks),
            left_out: &layout.left_out,
            note: layout.note.as_deref(),
            remote: &layout.remote,
        }
    }
}

/// `nearby FILE --agent NAME --format json`, `serve`'s `nearby` and MCP's `context_nearby`:
/// what a read attaches, the same fields for every agent (an agent that attaches nothing
/// answers with no blocks and a `note`), with opencode's read-tool facts under `opencode`.
#[derive(Serialize, JsonSchema)]
pub struct ReadView<'a> {
    agent: &'static str,
    file: &'a Path,
    /// Exactly what the agent adds for the read ("" when nothing).
    text: &'a str,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    wording: &'a WordingSource,
    blocks: Vec<BlockView<'a>>,
    left_out: &'a [LeftOut],
    /// opencode's read tool: the file's kind, every rule file's state (N2–N6), and
    /// `metadata.loaded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    opencode: Option<OpencodeRead<'a>>,
}

/// opencode's extension of a read's answer.
#[derive(Serialize, JsonSchema)]
struct OpencodeRead<'a> {
    kind: ctxgraph_engine::ReadKind,
    rules: &'a [ctxgraph_engine::answers::session::SessionRule],
    loaded: &'a [std::path::PathBuf],
}

impl<'a> ReadView<'a> {
    /// The view of `answer`.
    pub fn new(answer: &'a ReadAnswer) -> Self {
        let read = &answer.layout;
        ReadView {
            agent: read.agent,
            file: &read.file,
            text: &read.text,
            bytes: read.text.len(),
            note: read.note.as_deref(),
            wording: &read.wording,
            blocks: blocks(&read.text, &read.blocks),
            left_out: &read.left_out,
            opencode: answer.opencode.as_ref().map(|session: &SessionNearby| OpencodeRead {
                kind: session.kind,
                rules: &session.rules,
                loaded: &session.loaded,
            }),
        }
    }
}

/// One file's fate in one or more agents: `explain --agent NAME|all FILE --format json`.
#[derive(Serialize, JsonSchema)]
pub struct FileFates<'a> {
    /// The file.
    pub file: &'a Path,
    /// Each agent's verdict, in the registry's order.
    pub agents: &'a [AgentFate],
}

/// The file, then one block per agent: its name, status and placement, and the reason.
pub fn fates_text(path: &Path, fates: &[AgentFate]) -> String {
    let mut out = format!("{}\n", path.display());
    let width = fates.iter().map(|f| f.agent.len()).max().unwrap_or(0);
    for fate in fates {
        let _ = write!(out, "  {:width$}  {}", fate.agent, fate.status.label());
        if let Some(placement) = fate.placement {
            let _ = write!(out, " ({placement})");
        }
        let _ = writeln!(out, "\n  {:width$}  {}", "", fate.reason);
    }
    out
}

/// Every file one agent looked at, each with its fate, as `explain --agent NAME` prints them.
pub fn files_text(files: &[(std::path::PathBuf, AgentFate)]) -> String {
    files
        .iter()
        .map(|(file, fate)| fates_text(file, std::slice::from_ref(fate)))
        .collect::<Vec<_>>()
        .join("\n")
}
