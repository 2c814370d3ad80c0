//! What `explain` reports: the data, serialised as is by `--format json`.

use std::ops::Range;
use std::path::PathBuf;

use serde::Serialize;

use crate::opencode::flags::FlagSource;
use crate::path;
use crate::tokens::TokenCounter;

/// Bytes and estimated tokens of some text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Size {
    pub bytes: usize,
    pub tokens: usize,
}

impl Size {
    pub(super) fn of(text: &str, counter: &dyn TokenCounter) -> Size {
        Size { bytes: text.len(), tokens: counter.count(text) }
    }
}

/// Everything discovery considered from one working directory.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub cwd: PathBuf,
    /// `W`: the git toplevel, or `/` outside git.
    pub worktree: PathBuf,
    pub git: bool,
    pub tokenizer: &'static str,
    /// The system text `ctxgraph build` prints (no model line).
    pub total: Size,
    /// The environment block (B2), always first.
    pub environment: Size,
    /// Every rule file and URL considered, in discovery order (so loaded ones are in
    /// prompt order), then the rule files below the working directory that only a read
    /// attaches.
    pub items: Vec<Item>,
    /// Every config `instructions` entry, as expanded.
    pub entries: Vec<EntryReport>,
}

/// What an [`Item`] is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Source {
    File(PathBuf),
    Url(String),
}

impl Source {
    pub fn label(&self) -> String {
        match self {
            Source::File(path) => path::display(path),
            Source::Url(url) => url.clone(),
        }
    }
}

/// The discovery stage an item belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// I3.
    Global,
    /// I4.
    Project,
    /// I5.
    Instructions,
    /// I8.
    Remote,
    /// N1–N5: attached by the read tool, never part of the system prompt.
    Nearby,
    /// Not reached by any stage.
    None,
}

/// One rule file or URL and its fate.
#[derive(Clone, Debug, Serialize)]
pub struct Item {
    pub source: Source,
    pub stage: Stage,
    /// How discovery picked it, when it did.
    pub via: Option<Via>,
    /// Where it sits in the prompt, when it is there.
    pub loaded: Option<Loaded>,
    /// Why it is not in the prompt; empty exactly when `loaded` is set.
    pub reasons: Vec<Reason>,
    /// For a file that exists and is not loaded: the `instructions` entry that would load
    /// it (relative to the worktree root, where every relative entry is also globbed).
    pub load_with: Option<String>,
}

/// A block's place in the system text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loaded {
    /// 1-based position among the blocks (the environment block is 1).
    pub position: usize,
    /// Byte range in the system text.
    pub range: Range<usize>,
    pub size: Size,
    pub hash: String,
}

/// The chain that made something a candidate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Via {
    /// I3: the first existing global rule path.
    Global { tried: Vec<PathBuf> },
    /// I4: `name` was the first rule name with a hit between `D` and `W`; this hit is
    /// `level` directories above `D`.
    Project { name: &'static str, names: Vec<&'static str>, level: usize, dir: PathBuf },
    /// I5: matched by `instructions` entry `entry` (from `config`, at `line`) when
    /// globbed in `dir`, the `level`-th directory tried (0-based).
    Instruction {
        index: usize,
        entry: String,
        config: String,
        line: Option<usize>,
        dir: PathBuf,
        level: usize,
    },
    /// I8: a URL entry.
    Remote { index: usize, config: String, line: Option<usize> },
}

/// What became of a remote `instructions` URL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RemoteStatus {
    /// Not fetched in this run (the document input is still pending).
    NotFetched,
    /// Not fetched because ctxgraph ran offline, and no cached copy exists.
    Offline,
    Failed {
        reason: String,
    },
    /// Fetched, but the body does not match the URL's integrity pin.
    PinMismatch {
        reason: String,
    },
    Empty,
    /// Fetched (or taken from the cache) with content: it has a block.
    Loaded,
}

/// One reason an item is not in the system prompt. Each names what is responsible.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// Nothing exists at the path.
    Missing,
    /// A directory, not a file.
    Directory,
    /// A later global path; `winner` was found first (I3).
    ShadowedGlobal { winner: PathBuf },
    /// Another rule name won I4, so this name was never used.
    ShadowedByCategory { name: &'static str, winner: &'static str, winning_files: Vec<PathBuf> },
    /// An environment flag turned this kind of file off (P7).
    DisabledByFlag { flag: &'static str, value: String },
    /// `OPENCODE_DISABLE_PROJECT_CONFIG` is set, so I4 did not run.
    ProjectConfigDisabled { flag: &'static str, value: String },
    /// Above the worktree root, where the upward walk stops (P5).
    OutsideWorktree { worktree: PathBuf },
    /// Neither in the working directory, above it up to the worktree, nor below it: no
    /// stage of discovery looks there.
    OutsideWorkingDirectory { cwd: PathBuf },
    /// The file is empty, so it produces no block (I9).
    Empty,
    /// Reading failed; opencode reads it as empty (I7).
    Unreadable { error: String },
    /// The same path was already a candidate (I6).
    Duplicate { first: Via },
    /// No `instructions` entry matched it.
    NoPatternMatched { nearest: Option<NearMiss> },
    /// Only the read tool attaches it, once, when the model reads a file under `dir` (N3).
    NearbyOnly { dir: PathBuf },
    /// The read tool takes one rule file per directory; `winner` comes first there (N3).
    NearbyShadowed { winner: PathBuf },
    /// Finding this name failed on `path` (`EACCES`, `ELOOP`), which opencode treats as no
    /// hit for the whole walk (F2).
    WalkFailed { path: PathBuf },
    /// A URL that produced no block.
    Remote { status: RemoteStatus },
}

/// The `instructions` pattern that came closest to matching a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NearMiss {
    pub entry: String,
    pub config: String,
    pub line: Option<usize>,
    /// The directory it was globbed in and the path relative to it that it failed on.
    pub dir: PathBuf,
    pub relative: String,
    /// Edit distance between the pattern and `relative`.
    pub distance: usize,
}

/// One config `instructions` entry, expanded.
#[derive(Clone, Debug, Serialize)]
pub struct EntryReport {
    pub index: usize,
    pub entry: String,
    pub config: String,
    pub line: Option<usize>,
    pub expansion: EntryExpansion,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryExpansion {
    /// I5: globbed level by level.
    Glob {
        mode: &'static str,
        /// Set when project config is disabled and only `G` is globbed.
        flag: Option<FlagSource>,
        pattern: String,
        levels: Vec<LevelReport>,
    },
    /// I8.
    Remote { status: RemoteStatus },
}

#[derive(Clone, Debug, Serialize)]
pub struct LevelReport {
    pub dir: PathBuf,
    pub matches: Vec<PathBuf>,
}

/// What `explain TARGET` answers.
#[derive(Clone, Debug, Serialize)]
pub struct TargetExplanation {
    pub target: Target,
    /// Every way the target was considered (a path can be a candidate more than once).
    pub items: Vec<Item>,
    /// For an `instructions` entry: its expansion.
    pub entries: Vec<EntryReport>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Target {
    File(PathBuf),
    Entry(String),
}
