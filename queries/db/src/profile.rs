//! One shape for every agent: what a coding agent sends from a working directory, what it
//! attaches when its model reads a file, and the facts `explain` and `lint` read, as plain
//! data every surface (`build`, `nearby`, `explain`, `lint`, `check`, `serve`, `mcp`) renders
//! the same way. The JSON form of these types is documented in `docs/profiles/README.md`.
//!
//! An agent is one module answering [`Profile`]'s questions, and one line of the engine's
//! registry of profiles. A profile builds its layout from its own facts (its discovery, its
//! fates, its text) and hands them to [`LayoutBuilder`], which places every block in the
//! text: the byte ranges and hashes are computed here, once, for every agent.

use std::any::Any;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::agent::Agent;
use crate::hash::ContentHash;
use crate::lint::{Budget, Finding};
use crate::session_costs::{SessionFileError, SessionOccurrences};
use crate::system::System;
use crate::tokens::TokenCounter;
use crate::{Db, Workspace};

/// Where an agent puts a block of its context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The system message (or system instruction) every request starts with.
    SystemMessage,
    /// The first user message, before the user's prompt.
    FirstUserMessage,
    /// Inside a tool's result, after what the tool itself returns.
    ToolResult,
    /// A message of its own, right after a tool's result.
    AfterToolResult,
    /// A field of the request the agent sends to its own server, which builds the model
    /// prompt there (Auggie): what reaches the model is the server's doing.
    ServerRequest,
}

impl Placement {
    /// The placement in a few words, for text output.
    pub fn describe(self) -> &'static str {
        match self {
            Placement::SystemMessage => "system message",
            Placement::FirstUserMessage => "first user message",
            Placement::ToolResult => "tool result",
            Placement::AfterToolResult => "message after the tool result",
            Placement::ServerRequest => "request to the agent's server",
        }
    }
}

/// What a block's text comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind", content = "source")]
pub enum Source {
    /// A file on disk, by its absolute path.
    File(PathBuf),
    /// A document fetched from a URL.
    Url(String),
    /// Text the agent writes itself (an environment block, a prompt, a listing), by a name.
    Agent(String),
}

/// A [`Source`] borrowed from the layout that holds it, serialized the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind", content = "source")]
pub enum SourceRef<'a> {
    /// A file on disk, by its absolute path.
    File(&'a Path),
    /// A document fetched from a URL.
    Url(&'a str),
    /// Text the agent writes itself, by a name.
    Agent(&'a str),
}

impl SourceRef<'_> {
    /// The owned [`Source`].
    pub fn to_source(self) -> Source {
        match self {
            SourceRef::File(path) => Source::File(path.to_path_buf()),
            SourceRef::Url(url) => Source::Url(url.to_owned()),
            SourceRef::Agent(name) => Source::Agent(name.to_owned()),
        }
    }
}

/// A block as a host's turn reply carries it (serve's `build`): the same fields for every
/// agent, borrowed from whichever layout holds the block, so that a reply copies none of
/// it. What it comes from, where the agent puts it, its bytes' range and hash, whether it
/// went whole, the rule, and what a host must know of its bytes (a placeholder, a text that
/// differs between starts, an order that does). Why and where exactly are the whole answer's (`build --format
/// json`, `explain`): repeated on each of a few hundred blocks, they were most of a turn
/// reply's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BlockView<'a> {
    /// What the text comes from.
    #[serde(flatten)]
    pub source: SourceRef<'a>,
    /// Where the agent puts it.
    pub placement: Placement,
    /// Byte range of the block in the text (`start`, `end` in JSON).
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::ByteRange"))]
    pub range: Range<usize>,
    /// blake3 of the block's bytes.
    pub hash: ContentHash,
    /// Sent whole, cut, or inlined.
    pub status: Status,
    /// The rule that put it there.
    pub rule: &'static str,
    /// The block stands in for a text of the agent's own that could not be loaded: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<&'a str>,
    /// The block's text can differ between the agent's starts: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstable: Option<&'a str>,
    /// The block is one of a set the agent sends in no stable order ([`Block::unordered`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unordered: bool,
}

impl Source {
    /// This source, borrowed.
    pub fn borrowed(&self) -> SourceRef<'_> {
        match self {
            Source::File(path) => SourceRef::File(path),
            Source::Url(url) => SourceRef::Url(url),
            Source::Agent(name) => SourceRef::Agent(name),
        }
    }

    /// The path, for a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::File(path) => Some(path),
            _ => None,
        }
    }

    /// The source by itself: a file's path, a URL, or the name of a text the agent writes.
    pub fn name(&self) -> String {
        match self {
            Source::Agent(name) => name.clone(),
            other => other.display(),
        }
    }

    /// The source as text output names it.
    pub fn display(&self) -> String {
        match self {
            Source::File(path) => crate::path::display(path),
            Source::Url(url) => url.clone(),
            Source::Agent(name) => format!("({name})"),
        }
    }
}

/// One block of an agent's context, placed in the layout's text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Block {
    /// What the text comes from.
    #[serde(flatten)]
    pub source: Source,
    /// Where the agent puts it.
    pub placement: Placement,
    /// Where exactly, in the agent's terms (the message part, the wrapper).
    pub position: &'static str,
    /// Byte range of the block in [`Layout::text`] (`start`, `end` in JSON).
    #[serde(flatten)]
    #[cfg_attr(feature = "schema", schemars(with = "crate::schema::ByteRange"))]
    pub range: Range<usize>,
    /// blake3 of the block's bytes.
    pub hash: ContentHash,
    /// Sent whole, cut, or inlined.
    pub status: Status,
    /// The rule that put it there.
    pub rule: &'static str,
    /// Why, in one sentence, with the rule behind it.
    pub reason: String,
    /// Files whose text this block carries inside its own (imports an agent inlines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlines: Vec<PathBuf>,
    /// The block's text can differ between the agent's starts with nothing changed on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstable: Option<String>,
    /// The block stands in for a text of the agent's own that could not be loaded from its
    /// installation: why (the text holds a marked placeholder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// The block is one of a set the agent sends in no stable order (Aider's read-only
    /// files, a Python set): the set's blocks are contiguous, and only their order can
    /// change between starts. `check` compares such a set without its order.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unordered: bool,
    /// The block's place among the blocks beside it with the same `listed.dir` comes from
    /// that directory's listing (`readdir` order): the same on this disk, another on a
    /// teammate's or in CI. `check` compares such a run without its order, `explain` and
    /// `lint` (CG022) say so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listed: Option<Listed>,
}

impl Block {
    /// The block as a turn reply carries it.
    pub fn view(&self) -> BlockView<'_> {
        BlockView {
            source: self.source.borrowed(),
            placement: self.placement,
            range: self.range.clone(),
            hash: self.hash,
            status: self.status,
            rule: self.rule,
            placeholder: self.placeholder.as_deref(),
            unstable: self.unstable.as_deref(),
            unordered: self.unordered,
        }
    }
}

/// `text` with each run of consecutive parts that share a set (`Some`, equal) put in the
/// order of their sort keys; the text between a run's parts stays where it was, so a run
/// keeps its length and everything after it its place. Each part is its byte range in
/// `text`, its set and its sort key. Returns the text and the parts' indexes in their new
/// order. What `check` pins where an agent's order is not the same on every disk or start.
pub fn sets_in_one_order<S: PartialEq, K: Ord>(
    text: &str,
    parts: &[(Range<usize>, Option<S>, K)],
) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut order = Vec::with_capacity(parts.len());
    let mut at = 0;
    let mut i = 0;
    while i < parts.len() {
        let (range, set, _) = &parts[i];
        out.push_str(&text[at..range.start]);
        let len = match set {
            Some(set) => parts[i..].iter().take_while(|(_, s, _)| s.as_ref() == Some(set)).count(),
            None => 1,
        };
        let run: Vec<usize> = (i..i + len).collect();
        let mut sorted = run.clone();
        sorted.sort_by(|&a, &b| parts[a].2.cmp(&parts[b].2));
        for (k, &part) in sorted.iter().enumerate() {
            if k > 0 {
                out.push_str(&text[parts[run[k - 1]].0.end..parts[run[k]].0.start]);
            }
            out.push_str(&text[parts[part].0.clone()]);
            order.push(part);
        }
        at = parts[i + len - 1].0.end;
        i += len;
    }
    out.push_str(&text[at..]);
    (out, order)
}

/// Where a block's position comes from a directory's listing, and how the agent uses it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Listed {
    /// The directory whose listing orders the run (a rules folder, a glob's level).
    pub dir: PathBuf,
    /// What the agent does with the listing.
    pub order: ListedOrder,
}

/// What an agent does with a directory's listing order, where the disk decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ListedOrder {
    /// The files come as listed (depth first where the agent descends).
    AsListed,
    /// The files come in reverse listing order.
    Reversed,
    /// Several directories are read concurrently: the order changes from run to run.
    Race,
}

impl Listed {
    /// One sentence for `explain`: where the block's position comes from.
    pub fn describe(&self, agent: &str) -> String {
        let dir = crate::path::display(&self.dir);
        match self.order {
            ListedOrder::AsListed => format!(
                "its place among the files of {dir} is the order the file system lists them in, which {agent} keeps: another disk lists them in another order"
            ),
            ListedOrder::Reversed => format!(
                "its place among the files of {dir} is the reverse of the order the file system lists them in, which {agent} keeps: another disk lists them in another order"
            ),
            ListedOrder::Race => format!(
                "its place among the matches below {dir} is a race: {agent} reads sibling folders concurrently and keeps what arrives first"
            ),
        }
    }
}

impl Layout {
    /// The layout's text with each set of blocks the agent sends in no stable order put in one
    /// order of ctxgraph's (by source, then text), so a snapshot compares such a set without its
    /// order: naming the files in another order, as the agent's own order may be any, changes
    /// nothing. A set is a run of contiguous blocks that are all
    /// [`unordered`](Block::unordered) (Aider's read-only files), or all
    /// [`listed`](Block::listed) from one directory (a rules folder the agent takes in the
    /// disk's listing order, which another machine lists otherwise). Every block with its
    /// text, in the new order.
    pub fn sets_in_one_order(&self) -> (String, Vec<(&Block, &str)>) {
        #[derive(PartialEq)]
        enum Set<'a> {
            Unordered(usize),
            Listed(&'a Path),
        }
        // Unordered blocks form one set while each starts where the one before ended.
        let mut unordered_run = 0;
        let mut sets = Vec::with_capacity(self.blocks.len());
        for (i, block) in self.blocks.iter().enumerate() {
            let set = if block.unordered {
                if i == 0
                    || !self.blocks[i - 1].unordered
                    || self.blocks[i - 1].range.end != block.range.start
                {
                    unordered_run += 1;
                }
                Some(Set::Unordered(unordered_run))
            } else {
                block.listed.as_ref().map(|l| Set::Listed(&l.dir))
            };
            sets.push((block.range.clone(), set, (block.source.display(), self.text_of(block))));
        }
        let (text, order) = sets_in_one_order(&self.text, &sets);
        (text, order.into_iter().map(|i| (&self.blocks[i], self.text_of(&self.blocks[i]))).collect())
    }

    /// Marks each block whose file `listed` names, where two or more blocks share one
    /// directory: a lone file has no order to depend on.
    pub fn mark_listed(&mut self, listed: impl Fn(&Path) -> Option<Listed>) {
        let found: Vec<Option<Listed>> =
            self.blocks.iter().map(|b| b.source.path().and_then(&listed)).collect();
        let mut per_dir: std::collections::HashMap<&Path, usize> = std::collections::HashMap::new();
        for mark in found.iter().flatten() {
            *per_dir.entry(mark.dir.as_path()).or_default() += 1;
        }
        for (block, mark) in self.blocks.iter_mut().zip(&found) {
            if mark.as_ref().is_some_and(|m| per_dir.get(m.dir.as_path()).is_some_and(|&n| n > 1)) {
                block.listed.clone_from(mark);
            }
        }
    }
}

/// A file the agent looked at and did not send.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LeftOut {
    /// The file.
    pub source: PathBuf,
    /// What became of it, as one snake-case word (`shadowed`, `empty`, `over_budget`, …).
    pub fate: &'static str,
    /// The rule behind that.
    pub rule: &'static str,
    /// Why, in one sentence.
    pub reason: String,
}

pub use crate::settings::Setting;

/// Where the agent's own sentences in the text (preambles, labels) came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum WordingSource {
    /// The text carries no sentence of the agent's own: only the files and format markers.
    None,
    /// Read from this installation and accepted by their hashes for this release.
    Installation {
        /// The file the sentences were found in.
        path: PathBuf,
        /// The release whose hashes they match.
        version: String,
    },
    /// `<prose:blake3=…>` tokens in their place: what recorded fixtures keep.
    Fingerprints,
    /// Not available: the text holds marked placeholders.
    Unavailable {
        /// Why, in words.
        reason: String,
    },
}

impl WordingSource {
    /// Whether the text holds placeholders instead of the agent's words.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, WordingSource::Unavailable { .. })
    }
}

/// What an agent sends from one working directory: the exact text `build` prints, every
/// block in it, and every file it looked at and left out.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Layout {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// The release the profile reproduces (`codex-0.171.0`).
    pub release: &'static str,
    /// The working directory.
    pub cwd: PathBuf,
    /// The root the agent's discovery stops at (git root, project root), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<PathBuf>,
    /// Exactly what `build` prints: the contiguous text that carries the rule files, the
    /// agent's wrappers included. Empty when the agent sends none.
    pub text: String,
    /// blake3 of `text`; `None` when it is empty.
    pub hash: Option<ContentHash>,
    /// The blocks, in text order.
    pub blocks: Vec<Block>,
    /// Files looked at and not sent.
    pub left_out: Vec<LeftOut>,
    /// The settings that shaped the layout.
    pub settings: Vec<Setting>,
    /// Where the agent's own sentences came from.
    pub wording: WordingSource,
    /// Why the agent would send none of `text` after all, when that is so (Copilot refuses
    /// a run whose static context is over its model's budget, CP13).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Every remote document the agent's settings name, in their order, and what became of
    /// it (opencode's `instructions` URLs, I8).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remote: Vec<RemoteDocument>,
}

/// A remote document an agent's settings name, and what became of it: the block its body
/// became, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteDocument {
    /// The URL as written in the settings (`?token={env:T}`, never the substituted secret).
    pub url: String,
    /// The settings layer that names it.
    pub config: String,
    /// `loaded`, `failed` or `pending`.
    pub state: &'static str,
    /// For a loaded document: `network`, `revalidated` or `cache`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<&'static str>,
    /// Why it failed, or why a cached copy was used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failure's stable code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
}

impl RemoteDocument {
    /// The document `url` (as written) from `config`, in `state`.
    pub fn new(url: String, config: String, state: &crate::remote::RemoteState) -> Self {
        use crate::remote::{LoadedFrom, RemoteState};
        let (state, from, failure) = match state {
            RemoteState::Pending => ("pending", None, None),
            RemoteState::Failed(failure) => ("failed", None, Some(failure)),
            RemoteState::Loaded { from, .. } => match from {
                LoadedFrom::Network => ("loaded", Some("network"), None),
                LoadedFrom::Revalidated => ("loaded", Some("revalidated"), None),
                LoadedFrom::Cache { because } => ("loaded", Some("cache"), because.as_ref()),
            },
        };
        RemoteDocument {
            url,
            config,
            state,
            from,
            code: failure.map(crate::remote::FetchFailure::code),
            reason: failure.map(ToString::to_string),
        }
    }
}

impl Layout {
    /// The block's bytes.
    pub fn text_of(&self, block: &Block) -> &str {
        &self.text[block.range.clone()]
    }

    /// Every file the agent looked at: the files it sends, in text order, each followed by
    /// the files it inlines, then the files it left out; each once.
    pub fn considered(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for block in &self.blocks {
            files.extend(block.source.path().map(Path::to_path_buf));
            files.extend(block.inlines.iter().cloned());
        }
        files.extend(self.left_out.iter().map(|left| left.source.clone()));
        let mut seen = std::collections::HashSet::new();
        files.retain(|file| seen.insert(file.clone()));
        files
    }

    /// The files the agent sends, each once, in text order, with the ones inlined into them.
    pub fn sent_files(&self) -> impl Iterator<Item = &Path> {
        self.blocks.iter().filter_map(|b| b.source.path())
    }
}

/// What an agent attaches when its model reads one file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ReadLayout {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// The file read.
    pub file: PathBuf,
    /// Exactly what the agent adds for the read (empty: nothing).
    pub text: String,
    /// The blocks of `text`, in order.
    pub blocks: Vec<Block>,
    /// Rule files near the file that are not attached, with why.
    pub left_out: Vec<LeftOut>,
    /// Why nothing can be attached at all, when that is so (the file is outside the
    /// agent's workspace, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the agent's own sentences came from.
    pub wording: WordingSource,
}

impl ReadLayout {
    /// The answer of an agent that attaches nothing when its model reads a file
    /// ([`Profile::attaches_on_read`] is false): no text, no blocks, and a note that says so.
    pub fn nothing_on_reads(profile: &dyn Profile, file: &Path) -> Self {
        ReadLayout {
            agent: profile.agent().name(),
            file: file.to_path_buf(),
            text: String::new(),
            blocks: Vec::new(),
            left_out: Vec::new(),
            note: Some(format!("{} attaches nothing to a file its model reads", profile.title())),
            wording: WordingSource::None,
        }
    }
}

/// What one agent does with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Sent whole at start-up.
    Sent,
    /// Sent in part (Codex's byte budget cut it).
    Cut,
    /// Inlined into another file's text (Gemini's `@imports`).
    Inlined,
    /// Not at start-up; attached when the model reads a file near it.
    OnRead,
    /// Never sent from this working directory.
    NotSent,
}

impl Status {
    /// A short word for a column.
    pub fn label(self) -> &'static str {
        match self {
            Status::Sent => "sent",
            Status::Cut => "cut",
            Status::Inlined => "inlined",
            Status::OnRead => "on read",
            Status::NotSent => "not sent",
        }
    }
}

/// One agent's verdict on one file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentFate {
    /// The agent's `--agent` name.
    pub agent: &'static str,
    /// What it does with the file.
    pub status: Status,
    /// Where the text goes, when it goes anywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<&'static str>,
    /// The id of the rule that decides the fate, as the agent's doc page names it (`CX2`,
    /// `GM6`, `N3`, `CC11`): data, so a reader need not parse it out of `reason`.
    pub rule: &'static str,
    /// Why, in words, citing the rule.
    pub reason: String,
}

/// Why a profile cannot answer: the agent itself would not start, or the question does not
/// apply to it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ProfileError {
    /// The agent would refuse to start here: an input it reads is broken (a settings file
    /// that does not parse, …).
    #[error("{agent} would not start here: {}", fault.message)]
    WouldNotStart {
        /// The agent.
        agent: &'static str,
        /// What is wrong, and where.
        fault: Box<crate::fault::InputFault>,
    },
    /// The agent would refuse to build here, with its profile's own error type (opencode's
    /// keeps the file, line and column of its diagnostics), which a host that knows the
    /// profile downcasts to.
    #[error(transparent)]
    Build(Arc<dyn std::error::Error + Send + Sync>),
    /// The file a read question is about cannot be read.
    #[error("{}: {reason}", path.display())]
    ReadTarget {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A setting passed on the command line that the profile does not model.
    #[error("{0}")]
    Setting(String),
    /// The session record a question is asked in is malformed (file and line).
    #[error("not a session record: {0}")]
    Session(SessionFileError),
}

impl ProfileError {
    /// `section` is not one `profile` builds ([`Profile::sections`]).
    pub fn section_not_built(profile: &(impl Profile + ?Sized), section: Section) -> Self {
        let built: Vec<&str> = std::iter::once(Section::Rules)
            .chain(profile.sections().iter().copied())
            .map(Section::name)
            .collect();
        ProfileError::Setting(format!(
            "--section {}: {} builds only {}",
            section.name(),
            profile.title(),
            built.join(", ")
        ))
    }
}

/// Which part of what an agent sends a layout covers. Every profile builds
/// [`Section::Rules`]; [`Profile::sections`] names the others it builds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// The contiguous text that carries the rule files, with the agent's own wrappers
    /// around it (opencode: its system prompt from the environment block to the last
    /// instruction block; Codex: its AGENTS.md message; Claude Code: its CLAUDE.md reminder).
    #[default]
    Rules,
    /// opencode's environment block alone.
    Environment,
    /// opencode's instruction blocks alone.
    Instructions,
    /// opencode's whole system message: the model's or the agent's prompt to `user.system`.
    Message,
    /// The whole first request, every block the agent sends before the user's prompt in
    /// send order, each with its placement.
    Request,
}

impl Section {
    /// Its `--section` name.
    pub fn name(self) -> &'static str {
        match self {
            Section::Rules => "rules",
            Section::Environment => "environment",
            Section::Instructions => "instructions",
            Section::Message => "message",
            Section::Request => "request",
        }
    }
}

/// What a caller passes with a question: the agent's command-line settings and its own
/// wording, loaded from the installation by the engine (I/O stays out of queries).
#[derive(Clone, Default)]
pub struct Request {
    /// Which part of the request to lay out.
    pub section: Section,
    /// `-c KEY=VALUE` settings, as the agent's own command line takes them.
    pub settings: Vec<(String, String)>,
    /// The agent's sentences, of the type its profile defines; `None`: not loaded, the
    /// profile uses placeholders.
    pub wording: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("section", &self.section)
            .field("settings", &self.settings)
            .field("wording", &self.wording.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Request {
    /// The wording as the profile's type, when the caller loaded one of that type.
    pub fn wording<T: Any>(&self) -> Option<&T> {
        self.wording.as_deref().and_then(|w| (w as &dyn Any).downcast_ref::<T>())
    }
}

/// What a layout waits on outside the file system ([`Profile::waits_on`]): inputs the engine
/// loads (fetches, connects) before it asks, since queries do no I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waits {
    /// The remote settings the agent reads before its own (opencode's org config, R1–R4).
    pub remote_config: bool,
    /// The remote documents its settings name ([`Layout::remote`]).
    pub remote_documents: bool,
    /// The answers of the MCP servers it starts.
    pub mcp: bool,
}

impl Waits {
    /// Whether the layout waits on anything.
    pub fn any(self) -> bool {
        self.remote_config || self.remote_documents || self.mcp
    }

    /// Whether the layout reads what a config names remotely (its org config, its URLs):
    /// what the engine's config loader fetches, and only for a profile that reads it.
    pub fn reads_config(self) -> bool {
        self.remote_config || self.remote_documents
    }
}

/// Which agent a profile reproduces, and where its rules are written down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct About {
    /// The agent.
    pub agent: Agent,
    /// Its name in prose ("Claude Code").
    pub title: &'static str,
    /// The release reproduced, as `name-version` (`check` snapshots name it).
    pub release: &'static str,
    /// The doc page that defines the profile's rule ids.
    pub doc: &'static str,
    /// The files in a repository the agent reads (rule files, its settings), as globs
    /// relative to any folder of it (`crate::project_files`): what `ctxgraph hook` and the
    /// pre-commit hooks watch. Files an agent reads only because a setting names them
    /// (opencode's `instructions`, Aider's `read:`) are not here; the hook asks the
    /// profile's fate for those.
    pub files: &'static [&'static str],
}

/// An agent's own sentences, as its profile reads them from [`Request::wording`]: each
/// profile knows its own type.
pub type Wording = Arc<dyn Any + Send + Sync>;

/// Where to look for an agent's installation ([`Profile::wording`]).
#[derive(Clone, Copy, Debug)]
pub struct InstallationSearch<'a> {
    /// The file system to read it through.
    pub fs: &'a dyn System,
    /// The installation the user named (`--agent-path`), first.
    pub explicit: Option<&'a Path>,
    /// The environment (the agent's `CTXGRAPH_…` variable, `PATH`).
    pub vars: &'a BTreeMap<String, String>,
}

/// A folder's rules file that only one agent reads ([`Profile::own_rules_file`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnRulesFile {
    /// Its file name (`GEMINI.md`).
    pub name: &'static str,
    /// How to give it the same rules as the `AGENTS.md` beside it, in the agent's terms.
    pub hint: &'static str,
}

/// One agent's after-tool hook, as its own documentation describes it (docs/hooks.md):
/// where `ctxgraph hook --install` puts the entry and how `ctxgraph hook run` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookFormat {
    /// The project settings file the entry goes in, relative to the project.
    pub settings: &'static str,
    /// The event that runs after a tool call.
    pub event: &'static str,
    /// The tools whose calls write a file, as the agent's matcher (a regular expression
    /// over the tool name) names them.
    pub matcher: &'static str,
    /// How the findings go back to the model.
    pub answer: HookAnswer,
}

/// An agent's way for an after-tool hook to hand the model text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookAnswer {
    /// `{"decision": "block", "reason": …}`: the reason reaches the model after the tool's
    /// result (the write stays done).
    Block,
    /// `{"hookSpecificOutput": {["hookEventName": …,] "additionalContext": …}}`: appended to
    /// the tool's result (the agent's `decision: deny` would replace the result instead,
    /// hiding that the write happened).
    AdditionalContext {
        /// The `hookEventName` the agent wants echoed, if any.
        event_name: Option<&'static str>,
    },
}

/// One agent's answers. Every method is a read of salsa queries: a warm engine re-executes
/// none of them when nothing changed.
pub trait Profile: Sync {
    /// Which agent and release the profile reproduces.
    fn about(&self) -> &'static About;

    /// The agent.
    fn agent(&self) -> Agent {
        self.about().agent
    }

    /// The agent's name in prose ("Claude Code").
    fn title(&self) -> &'static str {
        self.about().title
    }

    /// The release reproduced, as `name-version` (`check` snapshots name it).
    fn release(&self) -> &'static str {
        self.about().release
    }

    /// The doc page that defines the profile's rule ids.
    fn doc(&self) -> &'static str {
        self.about().doc
    }

    /// Whether the agent attaches rule files when its model reads a file ([`Profile::read`]
    /// answers `Some`).
    fn attaches_on_read(&self) -> bool {
        true
    }

    /// The stand-in for the agent's own wording that recorded fixtures and `check` snapshots
    /// keep (`<prose:blake3=…>` tokens), when the agent has words of its own.
    fn fingerprints(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }

    /// The agent's own wording for [`Request::wording`], found in its installation and
    /// accepted by hash; placeholders inside when there is none. `None` for an agent whose
    /// text has no sentence of its own.
    fn wording(&self, search: &InstallationSearch<'_>) -> Option<Wording> {
        let _ = search;
        None
    }

    /// When the agent builds no model prompt on the machine but sends its rules to its own
    /// server, which builds it: what to tell the reader of its text, which is then that
    /// request's fields rather than a prompt.
    fn prompt_built_by_server(&self) -> Option<&'static str> {
        None
    }

    /// The file name only this agent reads as a folder's rules, where the others read
    /// `AGENTS.md` or `CLAUDE.md` (CG013 compares them).
    fn own_rules_file(&self) -> Option<&'static OwnRulesFile> {
        None
    }

    /// How the agent runs a command after its model edits a file, when it has hooks
    /// (`ctxgraph hook`).
    fn hook(&self) -> Option<&'static HookFormat> {
        None
    }

    /// The `-c KEY` settings the profile models (none by default).
    fn settings(&self) -> &'static [&'static str] {
        &[]
    }

    /// The section whose inputs `explain` and `lint` read: the rule files' by default; an
    /// agent whose explanation and lint report cover its whole first message (its MCP
    /// servers, skills and remote documents) names that section.
    fn explained_section(&self) -> Section {
        Section::Rules
    }

    /// Whether `explain` answers with the agent's own explanation, stage by stage (config
    /// layers, `instructions` entries and URLs, references, MCP servers, skills, memory),
    /// rather than with each file's fate; `explain TARGET` then also takes an
    /// `instructions` entry or a URL. Only an agent whose crate explains itself says so.
    fn explains_in_full(&self) -> bool {
        false
    }

    /// Whether the agent's sessions are modelled live from its own export: messages
    /// appended as they arrive, the next compaction planned, a read answered at any
    /// message. Any other agent's session is read as the record of the requests it sent
    /// ([`Profile::session_costs`]).
    fn sessions_live(&self) -> bool {
        false
    }

    /// The settings files the agent reads, in the order a later one wins (`ctxgraph
    /// config`); none by default.
    fn settings_files(&self, db: &dyn Db, ws: Workspace) -> Vec<crate::settings::SettingsFile> {
        let _ = (db, ws);
        Vec::new()
    }

    /// The agent's settings files ([`Profile::settings_files`]) as layers with what the
    /// disk holds, and no value yet: what an agent's own [`Profile::settings_report`] fills.
    fn settings_layers(&self, db: &dyn Db, ws: Workspace) -> crate::settings::SettingsReport {
        crate::settings::SettingsReport::from_files(db, self.agent().name(), self.settings_files(db, ws), &[])
    }

    /// The agent's settings, place by place, and the values in effect (`ctxgraph config`).
    /// By default: a layer per [`Profile::settings_files`] entry and the settings its
    /// rule-file layout reports as read from a file (a file the agent refuses is its error,
    /// as for `build`).
    fn settings_report(
        &self,
        db: &dyn Db,
        ws: Workspace,
    ) -> Result<crate::settings::SettingsReport, ProfileError> {
        let layout = self.layout(db, ws, &Request::default())?;
        let files = self.settings_files(db, ws);
        Ok(crate::settings::SettingsReport::from_files(db, self.agent().name(), files, &layout.settings))
    }

    /// The sections [`Profile::layout`] builds besides [`Section::Rules`] (none by default).
    fn sections(&self) -> &'static [Section] {
        &[]
    }

    /// What the agent sends from `ws`, the request's settings already checked against
    /// [`Profile::settings`] and its section against [`Profile::sections`].
    fn layout(&self, db: &dyn Db, ws: Workspace, request: &Request) -> Result<Layout, ProfileError>;

    /// What the agent attaches when its model reads `file` (absolute) right after start-up;
    /// `None` (the default) when the agent attaches nothing on reads, which
    /// [`Profile::attaches_on_read`] then says.
    fn read(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        request: &Request,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let _ = (db, ws, file, request);
        None
    }

    /// What the agent attaches when its model reads `file` (absolute) at the next step of the
    /// session recorded in `session` (the agent's own record, as for
    /// [`Profile::session_costs`]): what the session already holds is not attached again.
    /// `None` (the default): this agent's sessions are not modelled.
    fn read_in_session(
        &self,
        db: &dyn Db,
        ws: Workspace,
        file: &Path,
        request: &Request,
        session: crate::files::File,
    ) -> Option<Result<ReadLayout, ProfileError>> {
        let _ = (db, ws, file, request, session);
        None
    }

    /// The MCP servers the agent connects to at start, by name, whose answers its layout
    /// reads ([`crate::mcp::McpServer`] inputs the engine sets); none by default.
    fn mcp_servers(&self, db: &dyn Db, ws: Workspace) -> Vec<(String, crate::mcp::McpRequest)> {
        let _ = (db, ws);
        Vec::new()
    }

    /// What each rule-like file cost over the session recorded in `session` (the agent's own
    /// record of it, read through [`System`] as a [`File`](crate::files::File) input), per
    /// main-loop request (`session rules`). `None` (the default): this agent's sessions are
    /// not modelled.
    fn session_costs(
        &self,
        db: &dyn Db,
        ws: Workspace,
        session: crate::files::File,
    ) -> Option<Result<SessionOccurrences, SessionFileError>> {
        let _ = (db, ws, session);
        None
    }

    /// `file`'s fate in this agent (`explain --agent NAME FILE`, `explain --agent all`).
    fn fate(&self, db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter, file: &Path) -> AgentFate;

    /// This agent's own lint findings (`lint --agent NAME`); `budget` in `counter`'s tokens.
    /// None by default: `lint --agent all` still includes the agent in CG005, CG007, CG012,
    /// CG013 and CG022.
    fn lint(
        &self,
        db: &dyn Db,
        ws: Workspace,
        counter: &dyn TokenCounter,
        budget: Budget,
    ) -> Result<Vec<Finding>, ProfileError> {
        let _ = (db, ws, counter, budget);
        Ok(Vec::new())
    }

    /// What to do about each file the agent leaves out, in the agent's terms ("list it in
    /// `instructions`"), where its rules say; none by default.
    fn fixes(&self, db: &dyn Db, ws: Workspace) -> Vec<(PathBuf, String)> {
        let _ = (db, ws);
        Vec::new()
    }

    /// What laying out `section` waits on outside the file system, which the engine loads
    /// before it asks (nothing by default).
    fn waits_on(&self, section: Section) -> Waits {
        let _ = section;
        Waits::default()
    }

    /// Whether laying out `section` reads the agent's own texts from the database's
    /// installation input ([`crate::installation`]), which the engine loads before it asks,
    /// rather than from [`Request::wording`] (opencode's whole message).
    fn texts_from_installation(&self, section: Section) -> bool {
        let _ = section;
        false
    }

    /// Checks `-c` settings against [`Profile::settings`], and the section against
    /// [`Profile::sections`] ([`check_known_settings`]); a profile that reads its settings'
    /// values checks those too.
    fn check_settings(&self, request: &Request) -> Result<(), ProfileError> {
        check_known_settings(self, request)
    }
}

/// The section is one `profile` builds, and each `-c` setting one it models.
pub fn check_known_settings(
    profile: &(impl Profile + ?Sized),
    request: &Request,
) -> Result<(), ProfileError> {
    if request.section != Section::Rules && !profile.sections().contains(&request.section) {
        return Err(ProfileError::section_not_built(profile, request.section));
    }
    let known = profile.settings();
    for (key, _) in &request.settings {
        if !known.contains(&key.as_str()) {
            let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
            return Err(ProfileError::Setting(format!(
                "-c {key}: ctxgraph does not model {}'s `{key}` (known: {known})",
                profile.agent()
            )));
        }
    }
    Ok(())
}

/// A block as a profile describes it: its own text, which [`LayoutBuilder`] places.
#[derive(Clone, Debug)]
pub struct Part<'a> {
    /// What the text comes from.
    pub source: Source,
    /// Where the agent puts it.
    pub placement: Placement,
    /// Where exactly, in the agent's terms.
    pub position: &'static str,
    /// Exactly the bytes the agent inserts for it.
    pub text: &'a str,
    /// Sent whole, cut or inlined.
    pub status: Status,
    /// The rule that put it there.
    pub rule: &'static str,
    /// Why.
    pub reason: String,
    /// Files whose text this block carries inside its own.
    pub inlines: Vec<PathBuf>,
}

/// Places a profile's blocks in its text. A profile assembles its text as the agent does
/// (that code is what the recorded cases pin), then names each block's text in order: the
/// builder finds each one after the end of the one before, so the ranges are the agent's
/// own bytes and never recomputed by a second assembly that could drift from the first.
pub struct LayoutBuilder {
    text: String,
    searched_from: usize,
    blocks: Vec<Block>,
}

impl LayoutBuilder {
    /// A builder over the agent's whole text.
    pub fn new(text: String) -> Self {
        LayoutBuilder { text, searched_from: 0, blocks: Vec::new() }
    }

    /// Places the next block.
    ///
    /// # Panics
    ///
    /// When the block's text is not in the rest of the text: the profile's text and its
    /// parts disagree, a bug the recorded cases catch (`tests/agents.rs` checks every
    /// block of every case).
    pub fn block(&mut self, part: Part<'_>) -> &mut Self {
        let Some(found) = self.text[self.searched_from..].find(part.text) else {
            panic!("{}: a block's text is not in the layout's text", part.source.display())
        };
        let start = self.searched_from + found;
        let range = start..start + part.text.len();
        self.searched_from = range.end;
        self.blocks.push(Block {
            source: part.source,
            placement: part.placement,
            position: part.position,
            hash: ContentHash::of(part.text),
            range,
            status: part.status,
            rule: part.rule,
            reason: part.reason,
            inlines: part.inlines,
            unstable: None,
            placeholder: None,
            unordered: false,
            listed: None,
        });
        self
    }

    /// Places the next block at `start`, where the profile knows it begins (a text that
    /// also occurs earlier, such as a lone newline, would be found too soon).
    ///
    /// # Panics
    ///
    /// When the block's text does not begin at `start`, or `start` is before the end of the
    /// block before it.
    pub fn block_at(&mut self, start: usize, part: Part<'_>) -> &mut Self {
        assert!(
            start >= self.searched_from
                && self.text.get(start..).is_some_and(|rest| rest.starts_with(part.text)),
            "{}: a block's text is not where the profile placed it",
            part.source.display()
        );
        self.searched_from = start;
        self.block(part)
    }

    /// The blocks placed so far.
    pub fn finish(self) -> (String, Vec<Block>) {
        (self.text, self.blocks)
    }

    /// A [`ReadLayout`] of the placed blocks.
    pub fn read(
        self,
        agent: Agent,
        file: &Path,
        left_out: Vec<LeftOut>,
        wording: WordingSource,
    ) -> ReadLayout {
        let (text, blocks) = self.finish();
        ReadLayout {
            agent: agent.name(),
            file: file.to_path_buf(),
            text,
            blocks,
            left_out,
            note: None,
            wording,
        }
    }
}

/// What a layout needs besides its blocks.
pub struct Frame {
    /// The working directory.
    pub cwd: PathBuf,
    /// Where discovery stops.
    pub root: Option<PathBuf>,
    /// Files left out.
    pub left_out: Vec<LeftOut>,
    /// Settings in force.
    pub settings: Vec<Setting>,
    /// Where the agent's own words came from.
    pub wording: WordingSource,
}

impl Frame {
    /// The layout of `profile` with the builder's blocks.
    pub fn layout(self, profile: &dyn Profile, builder: LayoutBuilder) -> Layout {
        let (text, blocks) = builder.finish();
        Layout {
            agent: profile.agent().name(),
            release: profile.release(),
            cwd: self.cwd,
            root: self.root,
            hash: (!text.is_empty()).then(|| ContentHash::of(&text)),
            text,
            blocks,
            left_out: self.left_out,
            settings: self.settings,
            wording: self.wording,
            note: None,
            remote: Vec::new(),
        }
    }
}

/// A file discovery looked at: sent (to `placement`) or not, with the rule and reason.
pub fn looked_at(
    agent: Agent,
    sent: bool,
    placement: &'static str,
    rule: &'static str,
    reason: String,
) -> AgentFate {
    let status = if sent { Status::Sent } else { Status::NotSent };
    AgentFate { agent: agent.name(), status, placement: sent.then_some(placement), rule, reason }
}

/// What a file is when no stage of an agent's discovery sends it.
pub fn not_sent(agent: Agent, rule: &'static str, reason: String) -> AgentFate {
    AgentFate { agent: agent.name(), status: Status::NotSent, placement: None, rule, reason }
}
