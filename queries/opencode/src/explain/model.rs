//! What `explain` reports: the data, serialised as is by `--format json`.

use std::ops::Range;
use std::path::PathBuf;

use serde::Serialize;

use crate::flags::FlagSource;
use ctxgraph_db::path;
use ctxgraph_db::tokens::TokenCounter;

/// Bytes and estimated tokens of some text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Size {
    /// UTF-8 bytes, what opencode's block ranges count.
    pub bytes: usize,
    /// Tokens by the engine's counter (`o200k_base`), what a budget is about.
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
    /// `D`: the canonical working directory discovery started from.
    pub cwd: PathBuf,
    /// `W`: the git toplevel, or `/` outside git.
    pub worktree: PathBuf,
    /// Whether `D` is inside a git repository (P5), which bounds the upward walk.
    pub git: bool,
    /// The name of the counter behind every [`Size::tokens`].
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Source {
    /// A rule file, by absolute path.
    File(PathBuf),
    /// A remote `instructions` URL, as written in the config.
    Url(String),
}

impl Source {
    /// The path or URL as text, for prose and line-per-item output.
    pub fn label(&self) -> String {
        match self {
            Source::File(path) => path::display(path),
            Source::Url(url) => url.clone(),
        }
    }
}

/// The discovery stage an item belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The file or URL.
    pub source: Source,
    /// The stage that considered it ([`Stage::None`] for a file no stage reaches).
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Loaded {
    /// 1-based position among the blocks (the environment block is 1).
    pub position: usize,
    /// Byte range in the system text.
    #[cfg_attr(feature = "schema", schemars(with = "ctxgraph_db::schema::ByteRange"))]
    pub range: Range<usize>,
    /// The block's bytes and tokens.
    pub size: Size,
    /// The block's hash, as the prompt's [`Layout`](crate::prompt::Layout) has it.
    pub hash: ctxgraph_db::hash::ContentHash,
}

/// The chain that made something a candidate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Via {
    /// I3: the first existing global rule path.
    Global {
        /// Every global rule path the probe tried, in I3 order.
        tried: Vec<PathBuf>,
    },
    /// I4: `name` was the first rule name with a hit between `D` and `W`; this hit is
    /// `level` directories above `D`.
    Project {
        /// The winning rule name.
        name: &'static str,
        /// Every rule name in I4's order, so the text can say which were passed over.
        names: Vec<&'static str>,
        /// Directories above `D` (0: `D` itself).
        level: usize,
        /// The directory the file is in.
        dir: PathBuf,
    },
    /// I5: matched by `instructions` entry `entry` (from `config`, at `line`) when
    /// globbed in `dir`, the `level`-th directory tried (0-based).
    Instruction {
        /// The entry's position in the merged `instructions` list (0-based).
        index: usize,
        /// The entry as it may be printed (as written where substitution produced it).
        entry: String,
        /// The config source that wrote the entry.
        config: String,
        /// Its 1-based line there, when the source has positions.
        line: Option<usize>,
        /// The directory the glob ran in.
        dir: PathBuf,
        /// Which directory of the upward walk that was (0-based).
        level: usize,
    },
    /// I8: a URL entry.
    Remote {
        /// The entry's position in the merged `instructions` list (0-based).
        index: usize,
        /// The config source that wrote the URL.
        config: String,
        /// Its 1-based line there, when the source has positions.
        line: Option<usize>,
    },
}

/// What became of a remote `instructions` URL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RemoteStatus {
    /// Not fetched in this run (the document input is still pending).
    NotFetched,
    /// Not fetched because ctxgraph ran offline, and no cached copy exists.
    Offline,
    /// Fetching failed (no response, a bad status, a broken body …), nothing cached.
    Failed {
        /// The fetch failure in words.
        reason: String,
    },
    /// Fetched, but the body does not match the URL's integrity pin.
    PinMismatch {
        /// Both digests, in words.
        reason: String,
    },
    /// Fetched, with an empty body: no block (I9).
    Empty,
    /// Fetched (or taken from the cache) with content: it has a block.
    Loaded,
}

/// One reason an item is not in the system prompt. Each names what is responsible.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// Nothing exists at the path.
    Missing,
    /// A directory, not a file.
    Directory,
    /// A later global path; `winner` was found first (I3).
    ShadowedGlobal {
        /// The global rule file that is loaded instead.
        winner: PathBuf,
    },
    /// Another rule name won I4, so this name was never used.
    ShadowedByCategory {
        /// This file's rule name.
        name: &'static str,
        /// The rule name that won.
        winner: &'static str,
        /// The files of the winning name, which are what loads.
        winning_files: Vec<PathBuf>,
    },
    /// An environment flag turned this kind of file off (P7).
    DisabledByFlag {
        /// The variable's name.
        flag: &'static str,
        /// Its value, as set.
        value: String,
    },
    /// `OPENCODE_DISABLE_PROJECT_CONFIG` is set, so I4 did not run.
    ProjectConfigDisabled {
        /// The variable's name.
        flag: &'static str,
        /// Its value, as set.
        value: String,
    },
    /// Above the worktree root, where the upward walk stops (P5).
    OutsideWorktree {
        /// `W`, the root the walk stopped at.
        worktree: PathBuf,
    },
    /// Neither in the working directory, above it up to the worktree, nor below it: no
    /// stage of discovery looks there.
    OutsideWorkingDirectory {
        /// `D`, the directory discovery started from.
        cwd: PathBuf,
    },
    /// The file is empty, so it produces no block (I9).
    Empty,
    /// Reading failed; opencode reads it as empty (I7).
    Unreadable {
        /// The OS error, as text.
        error: String,
    },
    /// The same path was already a candidate (I6).
    Duplicate {
        /// How the first candidacy came about: that one holds the block.
        first: Via,
    },
    /// No `instructions` entry matched it.
    NoPatternMatched {
        /// The entry that came closest, as a hint for a typo.
        nearest: Option<NearMiss>,
    },
    /// Only the read tool attaches it, once, when the model reads a file under `dir` (N3).
    NearbyOnly {
        /// The directory whose files trigger it.
        dir: PathBuf,
    },
    /// The read tool takes one rule file per directory; `winner` comes first there (N3).
    NearbyShadowed {
        /// The rule file the read tool attaches instead.
        winner: PathBuf,
    },
    /// Finding this name failed on `path` (`EACCES`, `ELOOP`), which opencode treats as no
    /// hit for the whole walk (F2).
    WalkFailed {
        /// The path the walk failed on.
        path: PathBuf,
    },
    /// A URL that produced no block.
    Remote {
        /// What became of the fetch.
        status: RemoteStatus,
    },
}

/// The `instructions` pattern that came closest to matching a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NearMiss {
    /// The entry as it may be printed.
    pub entry: String,
    /// The config source that wrote it.
    pub config: String,
    /// Its 1-based line there, when the source has positions.
    pub line: Option<usize>,
    /// The directory it was globbed in.
    pub dir: PathBuf,
    /// The file's path relative to `dir`, which the pattern failed to match.
    pub relative: String,
    /// Edit distance between the pattern and `relative`.
    pub distance: usize,
}

/// One config `instructions` entry, expanded.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EntryReport {
    /// Its position in the merged `instructions` list (0-based).
    pub index: usize,
    /// The entry as it may be printed.
    pub entry: String,
    /// The config source that wrote it.
    pub config: String,
    /// Its 1-based line there, when the source has positions.
    pub line: Option<usize>,
    /// What it matched, directory by directory, or what became of the URL.
    pub expansion: EntryExpansion,
}

/// How an `instructions` entry was resolved: a glob (I5) or a URL (I8).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryExpansion {
    /// I5: globbed level by level.
    Glob {
        /// `absolute`, `up` (relative: from `D` up to `W`) or `global_dir_only`.
        mode: &'static str,
        /// Set when project config is disabled and only `G` is globbed.
        flag: Option<FlagSource>,
        /// The pattern globbed in each directory.
        pattern: String,
        /// Each directory globbed, in walk order, with what matched there.
        levels: Vec<LevelReport>,
    },
    /// I8.
    Remote {
        /// What became of the fetch.
        status: RemoteStatus,
    },
}

/// One directory an `instructions` glob ran in.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LevelReport {
    /// The directory.
    pub dir: PathBuf,
    /// The files matched there, in the order they load.
    pub matches: Vec<PathBuf>,
}

/// What `explain TARGET` answers.
#[derive(Clone, Debug, Serialize)]
pub struct TargetExplanation {
    /// What was asked about, resolved.
    pub target: Target,
    /// Every way the target was considered (a path can be a candidate more than once).
    pub items: Vec<Item>,
    /// For an `instructions` entry: its expansion.
    pub entries: Vec<EntryReport>,
}

/// What `explain TARGET` was asked about: an `instructions` entry or URL when one is
/// written that way, otherwise a path.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Target {
    /// A path, made absolute against the working directory.
    File(PathBuf),
    /// An `instructions` entry or URL, as written.
    Entry(String),
}
