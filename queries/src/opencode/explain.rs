//! Why every rule file is, or is not, in the system prompt.
//!
//! Built only from the facts discovery returns ([`SystemPaths`], its probes and
//! expansions, [`Nearby`]) and from the same queries discovery calls (`find_up`, `glob`,
//! `rule_text`) for the names and directories discovery did not need to look at. Nothing
//! here decides what opencode loads; it reports what the queries decided.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::db::{Db, Workspace};
use crate::files::ReadFailure;
use crate::opencode::config::{ConfigError, ConfigSource, entry_line, merged_config};
use crate::opencode::flags::{FlagSource, flags};
use crate::opencode::fs::{find_up, glob};
use crate::opencode::instructions::{
    Expansion, GlobMode, Origin, RemoteEntry, SystemPaths, rule_names, rule_text, system_paths,
};
use crate::opencode::nearby::nearby_rules;
use crate::opencode::paths::global_paths;
use crate::opencode::prompt::{Block, BuildError, Section, system_prompt};
use crate::opencode::worktree::worktree;
use crate::path;
use crate::remote::{FetchFailure, RemoteState};
use crate::system::FileKind;
use crate::tokens::TokenCounter;

/// Bytes and estimated tokens of some text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Size {
    pub bytes: usize,
    pub tokens: usize,
}

impl Size {
    fn of(text: &str, counter: &dyn TokenCounter) -> Size {
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

impl Via {
    /// One sentence, for people.
    pub fn describe(&self) -> String {
        match self {
            Via::Global { tried } => match tried.as_slice() {
                [_] => "global rule (I3)".to_owned(),
                _ => format!(
                    "global rule (I3): the first of {} that exists",
                    tried.iter().map(|p| path::display(p)).collect::<Vec<_>>().join(", ")
                ),
            },
            Via::Project { name, names, level, dir } => {
                let place = match level {
                    0 => "in the working directory".to_owned(),
                    1 => "1 level above the working directory".to_owned(),
                    n => format!("{n} levels above the working directory"),
                };
                format!(
                    "project rule (I4): {name} is the first of {} found between the working directory and the worktree root; this one is {place} ({})",
                    names.join(", "),
                    path::display(dir)
                )
            }
            Via::Instruction { entry, config, line, dir, .. } => format!(
                "instructions entry {entry:?} (I5) from {}, matched in {}",
                at_line(config, *line),
                path::display(dir)
            ),
            Via::Remote { config, line, .. } => {
                format!("instructions URL (I8) from {}", at_line(config, *line))
            }
        }
    }
}

fn at_line(file: &str, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    }
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

impl Reason {
    /// A few words, for a graph node or a column.
    pub fn summary(&self) -> String {
        match self {
            Reason::Missing => "missing".to_owned(),
            Reason::Directory => "a directory".to_owned(),
            Reason::ShadowedGlobal { winner } => format!("shadowed by {}", path::display(winner)),
            Reason::ShadowedByCategory { winner, .. } => format!("shadowed: {winner} won"),
            Reason::DisabledByFlag { flag, value } | Reason::ProjectConfigDisabled { flag, value } => {
                format!("{flag}={value}")
            }
            Reason::OutsideWorktree { .. } => "above the worktree".to_owned(),
            Reason::OutsideWorkingDirectory { .. } => "outside the working directory".to_owned(),
            Reason::Empty => "empty".to_owned(),
            Reason::Unreadable { error } => format!("unreadable: {error}"),
            Reason::Duplicate { .. } => "duplicate".to_owned(),
            Reason::NoPatternMatched { .. } => "no pattern matches".to_owned(),
            Reason::NearbyOnly { .. } => "attached on read only".to_owned(),
            Reason::NearbyShadowed { winner } => format!("read tool takes {}", path::display(winner)),
            Reason::WalkFailed { path } => format!("walk failed at {}", path::display(path)),
            Reason::Remote { status: RemoteStatus::NotFetched } => "not fetched".to_owned(),
            Reason::Remote { status: RemoteStatus::Failed { reason } } => format!("fetch failed: {reason}"),
            Reason::Remote { status: RemoteStatus::Offline } => "offline, not cached".to_owned(),
            Reason::Remote { status: RemoteStatus::PinMismatch { reason } } => {
                format!("pin mismatch: {reason}")
            }
            Reason::Remote { status: RemoteStatus::Empty } => "empty document".to_owned(),
            Reason::Remote { status: RemoteStatus::Loaded } => "loaded".to_owned(),
        }
    }

    /// What happened, in plain words.
    pub fn describe(&self) -> String {
        match self {
            Reason::Missing => "there is no file at this path".to_owned(),
            Reason::Directory => "it is a directory; opencode reads it as empty".to_owned(),
            Reason::ShadowedGlobal { winner } => format!(
                "opencode loads only the first global rule that exists, and {} exists (I3)",
                path::display(winner)
            ),
            Reason::ShadowedByCategory { name, winner, winning_files } => format!(
                "opencode uses only one rule file name: the first of AGENTS.md, CLAUDE.md, CONTEXT.md that exists anywhere between the working directory and the worktree root. {winner} exists ({}), so every {name} on that walk is ignored, this one included (I4)",
                winning_files.iter().map(|p| path::display(p)).collect::<Vec<_>>().join(", ")
            ),
            Reason::DisabledByFlag { flag, value } => {
                format!("{flag}={value} is set, which turns CLAUDE.md files off (P7)")
            }
            Reason::ProjectConfigDisabled { flag, value } => {
                format!("{flag}={value} is set, so project rule files are not looked for (P7)")
            }
            Reason::OutsideWorktree { worktree } => format!(
                "it is above the worktree root {}, where opencode stops looking (P5)",
                path::display(worktree)
            ),
            Reason::OutsideWorkingDirectory { cwd } => format!(
                "opencode looks for rule files only in {} and the directories above it, and (when a file is read) below it; this one is elsewhere",
                path::display(cwd)
            ),
            Reason::Empty => "the file is empty, so it adds no block (I9)".to_owned(),
            Reason::Unreadable { error } => {
                format!("it cannot be read ({error}); opencode reads it as empty (I7)")
            }
            Reason::Duplicate { first } => format!(
                "this match adds nothing: the same path is already in the prompt as {} (I6)",
                first.describe()
            ),
            Reason::NoPatternMatched { nearest: None } => {
                "it is not a rule file name, and no `instructions` entry is configured to match it".to_owned()
            }
            Reason::NoPatternMatched { nearest: Some(near) } => format!(
                "it is not a rule file name, and no `instructions` entry matches it; the nearest is {:?} from {}, which does not match {:?} in {}",
                near.entry,
                at_line(&near.config, near.line),
                near.relative,
                path::display(&near.dir)
            ),
            Reason::NearbyOnly { dir } => format!(
                "it is below the working directory, so it is not in the system prompt: opencode's read tool attaches it once, when the model reads a file under {} (N3)",
                path::display(dir)
            ),
            Reason::NearbyShadowed { winner } => format!(
                "the read tool attaches one rule file per directory and {} comes first (N3)",
                path::display(winner)
            ),
            Reason::WalkFailed { path } => format!(
                "looking for this name failed at {} (not accessible), which opencode treats as not found (F2)",
                path::display(path)
            ),
            Reason::Remote { status: RemoteStatus::NotFetched } => {
                "URL, not fetched in this run, so opencode's copy is unknown".to_owned()
            }
            Reason::Remote { status: RemoteStatus::Failed { reason } } => {
                format!("fetching it failed ({reason}); opencode sends nothing for it either (I8)")
            }
            Reason::Remote { status: RemoteStatus::Offline } => {
                "not fetched: this run was offline and no cached copy exists; opencode fetches it on every step (I8)"
                    .to_owned()
            }
            Reason::Remote { status: RemoteStatus::PinMismatch { reason } } => format!(
                "its body does not match the URL's integrity pin ({reason}); opencode does not check pins and would include it"
            ),
            Reason::Remote { status: RemoteStatus::Empty } => {
                "the fetched document is empty, so it adds no block (I9)".to_owned()
            }
            Reason::Remote { status: RemoteStatus::Loaded } => "it is loaded".to_owned(),
        }
    }

    /// What to do about it, when there is something to do.
    ///
    /// Hints that say "list it in `instructions`" pair with [`Item::load_with`].
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Reason::ShadowedByCategory { winner, .. } => {
                format!("rename it to {winner} or merge it into one, or list it in `instructions`")
            }
            Reason::ShadowedGlobal { winner } => {
                format!("merge it into {}, which opencode loads instead", path::display(winner))
            }
            Reason::DisabledByFlag { flag, .. } | Reason::ProjectConfigDisabled { flag, .. } => {
                format!("unset {flag}, or rename the file to AGENTS.md")
            }
            Reason::OutsideWorktree { .. } | Reason::OutsideWorkingDirectory { .. } => {
                "move it into the repository, or list it in `instructions`".to_owned()
            }
            Reason::Empty => "add content, or delete the file".to_owned(),
            Reason::Unreadable { .. } => "fix its permissions".to_owned(),
            Reason::NoPatternMatched { nearest: Some(near) } => {
                format!("fix the pattern {:?} so it matches {:?}", near.entry, near.relative)
            }
            Reason::NoPatternMatched { nearest: None } => "list it in `instructions` to load it".to_owned(),
            Reason::NearbyOnly { .. } => "to have it in every prompt, list it in `instructions`".to_owned(),
            Reason::NearbyShadowed { winner } => {
                format!("merge it into {}", path::display(winner))
            }
            Reason::WalkFailed { .. } => "fix the permissions or the symlink loop".to_owned(),
            Reason::Missing | Reason::Directory | Reason::Duplicate { .. } | Reason::Remote { .. } => {
                return None;
            }
        })
    }
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

/// Why a URL produced no block, from its `RemoteDoc` input (set by the engine's fetcher).
fn remote_status(db: &dyn Db, entry: &RemoteEntry) -> RemoteStatus {
    match db.remotes().get(db, &entry.url).state(db) {
        RemoteState::Pending => RemoteStatus::NotFetched,
        RemoteState::Failed(FetchFailure::Offline) => RemoteStatus::Offline,
        RemoteState::Failed(failure @ FetchFailure::PinMismatch { .. }) => {
            RemoteStatus::PinMismatch { reason: failure.to_string() }
        }
        RemoteState::Failed(failure) => RemoteStatus::Failed { reason: failure.to_string() },
        RemoteState::Loaded { text, .. } if text.is_empty() => RemoteStatus::Empty,
        RemoteState::Loaded { .. } => RemoteStatus::Loaded,
    }
}

/// Explains every candidate discovery considered from `ws`.
pub fn explain(db: &dyn Db, ws: Workspace, counter: &dyn TokenCounter) -> Result<Explanation, BuildError> {
    Explainer::new(db, ws, counter)?.explanation()
}

/// Explains one file, `instructions` entry or URL. A relative path is taken relative to
/// `base` (the caller's current directory).
pub fn explain_target(
    db: &dyn Db,
    ws: Workspace,
    counter: &dyn TokenCounter,
    target: &str,
    base: &Path,
) -> Result<TargetExplanation, BuildError> {
    let explainer = Explainer::new(db, ws, counter)?;
    let all = explainer.explanation()?;
    let entries: Vec<EntryReport> = all.entries.iter().filter(|e| e.entry == target).cloned().collect();
    if !entries.is_empty() || target.starts_with("https://") || target.starts_with("http://") {
        let items = all
            .items
            .iter()
            .filter(|item| match &item.via {
                Some(Via::Instruction { entry, .. }) => entry == target,
                Some(Via::Remote { .. }) => item.source == Source::Url(target.to_owned()),
                _ => false,
            })
            .cloned()
            .collect();
        return Ok(TargetExplanation { target: Target::Entry(target.to_owned()), items, entries });
    }
    let path = explainer.resolve_target(Path::new(target), base);
    let mut items: Vec<Item> =
        all.items.iter().filter(|item| item.source == Source::File(path.clone())).cloned().collect();
    if items.is_empty() {
        items.push(explainer.stray(&path)?);
    }
    Ok(TargetExplanation { target: Target::File(path), items, entries: Vec::new() })
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

struct Explainer<'a> {
    db: &'a dyn Db,
    ws: Workspace,
    counter: &'a dyn TokenCounter,
    paths: &'a SystemPaths,
    cwd: PathBuf,
    root: PathBuf,
    claude_flag: Option<FlagSource>,
}

impl<'a> Explainer<'a> {
    fn new(db: &'a dyn Db, ws: Workspace, counter: &'a dyn TokenCounter) -> Result<Self, BuildError> {
        let paths = system_paths(db, ws).as_ref().map_err(|e| BuildError::Config(e.clone()))?;
        let flags =
            flags(db, ws.host(db)).as_ref().map_err(|e| BuildError::Config(ConfigError::Flag(e.clone())))?;
        Ok(Explainer {
            db,
            ws,
            counter,
            paths,
            cwd: ws.cwd(db).clone(),
            root: worktree(db, ws).root.clone(),
            claude_flag: flags.disable_claude_code_prompt.clone(),
        })
    }

    fn explanation(&self) -> Result<Explanation, BuildError> {
        let prompt = system_prompt(self.db, self.ws, None).as_ref().map_err(Clone::clone)?;
        let layout = prompt.layout(Section::System);
        let block_where = |wanted: &dyn Fn(&Block) -> bool| -> Option<Loaded> {
            layout.spans.iter().enumerate().find_map(|(position, (block, range))| {
                let block = &prompt.blocks[*block];
                wanted(block).then(|| Loaded {
                    position: position + 1,
                    range: range.clone(),
                    size: Size::of(&block.text, self.counter),
                    hash: blake3::hash(block.text.as_bytes()).to_hex().to_string(),
                })
            })
        };
        let environment = prompt.blocks.first().map_or("", |b| b.text.as_str());

        let mut items = Vec::new();
        let loaded_at = |candidate: usize| block_where(&|b| b.candidate == Some(candidate));
        self.global_items(&mut items, &loaded_at);
        self.project_items(&mut items, &loaded_at);
        self.instruction_items(&mut items, &loaded_at);
        self.remote_items(&mut items, &|remote| block_where(&|b| b.remote == Some(remote)));
        self.nearby_items(&mut items)?;

        Ok(Explanation {
            cwd: self.cwd.clone(),
            worktree: self.root.clone(),
            git: worktree(self.db, self.ws).is_git(),
            tokenizer: self.counter.name(),
            total: Size::of(&layout.text, self.counter),
            environment: Size::of(environment, self.counter),
            items,
            entries: self.entries(),
        })
    }

    /// A discovered candidate: loaded, or why its content produced no block.
    fn candidate_item(
        &self,
        index: usize,
        stage: Stage,
        loaded_at: &dyn Fn(usize) -> Option<Loaded>,
    ) -> Item {
        let candidate = &self.paths.candidates[index];
        let via = self.via(index);
        let mut reasons = Vec::new();
        let loaded = match candidate.duplicate_of {
            Some(first) => {
                reasons.push(Reason::Duplicate { first: self.via(first) });
                None
            }
            None => {
                let loaded = loaded_at(index);
                if loaded.is_none() {
                    reasons.push(self.content_reason(&candidate.path));
                }
                loaded
            }
        };
        let load_with = None;
        Item {
            source: Source::File(candidate.path.clone()),
            stage,
            via: Some(via),
            loaded,
            reasons,
            load_with,
        }
    }

    /// Why a candidate's content produced no block.
    fn content_reason(&self, path: &Path) -> Reason {
        match rule_text(self.db, path).failure {
            None => Reason::Empty,
            Some(ReadFailure::NotFound) => Reason::Missing,
            Some(ReadFailure::IsADirectory) => Reason::Directory,
            Some(failure) => Reason::Unreadable { error: failure.to_string() },
        }
    }

    fn via(&self, index: usize) -> Via {
        let candidate = &self.paths.candidates[index];
        match &candidate.origin {
            Origin::Global => Via::Global { tried: self.paths.global.tried.clone() },
            Origin::Project { name, level } => Via::Project {
                name,
                names: self.paths.project.names.clone(),
                level: *level,
                dir: candidate.path.parent().unwrap_or(Path::new("/")).to_path_buf(),
            },
            Origin::Instruction { index, entry, source, dir } => {
                let level = self
                    .paths
                    .expansions
                    .iter()
                    .find(|e| e.index == *index)
                    .and_then(|e| e.levels.iter().position(|l| &l.dir == dir))
                    .unwrap_or(0);
                Via::Instruction {
                    index: *index,
                    entry: entry.clone(),
                    config: source.name(),
                    line: self.line_of(*index, source),
                    dir: dir.clone(),
                    level,
                }
            }
        }
    }

    fn line_of(&self, index: usize, source: &ConfigSource) -> Option<usize> {
        let config = merged_config(self.db, self.ws).as_ref().ok()?;
        let entry = config.instructions.get(index).filter(|e| &e.source == source)?;
        entry_line(self.db, self.ws, entry)
    }

    fn exists(&self, path: &Path) -> bool {
        self.db.files().get(self.db, path).kind(self.db).exists()
    }

    /// I3: the winner, later global paths that exist, and `~/.claude/CLAUDE.md` when a
    /// flag took it out of the probe.
    fn global_items(&self, items: &mut Vec<Item>, loaded_at: &dyn Fn(usize) -> Option<Loaded>) {
        let probe = &self.paths.global;
        for tried in &probe.tried {
            if probe.winner.as_ref() == Some(tried) {
                if let Some(index) = self.candidate_index(tried, |o| *o == Origin::Global) {
                    items.push(self.candidate_item(index, Stage::Global, loaded_at));
                }
            } else if let Some(winner) = probe.winner.clone().filter(|_| self.exists(tried)) {
                items.push(self.not_loaded(tried, Stage::Global, vec![Reason::ShadowedGlobal { winner }]));
            }
        }
        if let (Some(flag), Ok(paths)) = (&probe.claude_disabled_by, global_paths(self.db, self.ws)) {
            let claude = path::resolve(&self.cwd, paths.home.join(".claude").join("CLAUDE.md"));
            if self.exists(&claude) {
                let reason = Reason::DisabledByFlag { flag: flag.name, value: flag.value.clone() };
                items.push(self.not_loaded(&claude, Stage::Global, vec![reason]));
            }
        }
    }

    fn candidate_index(&self, path: &Path, origin: impl Fn(&Origin) -> bool) -> Option<usize> {
        self.paths.candidates.iter().position(|c| c.path == path && origin(&c.origin))
    }

    /// I4: the winning name's hits, then every other rule file on the walk and why its
    /// name was not used.
    fn project_items(&self, items: &mut Vec<Item>, loaded_at: &dyn Fn(usize) -> Option<Loaded>) {
        let probe = &self.paths.project;
        for (index, candidate) in self.paths.candidates.iter().enumerate() {
            if matches!(candidate.origin, Origin::Project { .. }) {
                items.push(self.candidate_item(index, Stage::Project, loaded_at));
            }
        }
        let winning_files: Vec<PathBuf> = self
            .paths
            .candidates
            .iter()
            .filter(|c| matches!(c.origin, Origin::Project { .. }))
            .map(|c| c.path.clone())
            .collect();
        let mut others = Vec::new();
        for name in rule_names(false) {
            if probe.winner == Some(name) {
                continue;
            }
            let hits = match find_up(self.db, name.to_owned(), self.cwd.clone(), self.root.clone()) {
                Ok(hits) => hits,
                Err(failed) => {
                    let rank = rule_names(false).iter().position(|n| *n == name).unwrap_or(0);
                    let rank_of = |n: &str| rule_names(false).iter().position(|m| *m == n);
                    // Names after the winner were never probed by opencode: they are shadowed
                    // whatever their walk would have found.
                    let reason = match probe.winner {
                        Some(winner) if rank_of(winner) < Some(rank) => {
                            Reason::ShadowedByCategory { name, winner, winning_files: winning_files.clone() }
                        }
                        _ => Reason::WalkFailed { path: failed.0.clone() },
                    };
                    let level = self.cwd.ancestors().position(|a| Some(a) == failed.0.parent()).unwrap_or(0);
                    others.push((level, rank, self.not_loaded(&failed.0, Stage::Project, vec![reason])));
                    continue;
                }
            };
            for hit in hits {
                let reason = match (&probe.disabled_by, &self.claude_flag, probe.winner) {
                    (Some(flag), _, _) => {
                        Reason::ProjectConfigDisabled { flag: flag.name, value: flag.value.clone() }
                    }
                    (None, Some(flag), _) if !probe.names.contains(&name) => {
                        Reason::DisabledByFlag { flag: flag.name, value: flag.value.clone() }
                    }
                    (None, _, Some(winner)) => {
                        Reason::ShadowedByCategory { name, winner, winning_files: winning_files.clone() }
                    }
                    // Unreachable: a name with hits and no winner means its walk failed,
                    // which the `Err` arm above reports.
                    (None, _, None) => continue,
                };
                let level = self.cwd.ancestors().position(|a| Some(a) == hit.parent()).unwrap_or(0);
                let rank = rule_names(false).iter().position(|n| *n == name).unwrap_or(0);
                others.push((level, rank, self.not_loaded(hit, Stage::Project, vec![reason])));
            }
        }
        others.sort_by_key(|(level, rank, _)| (*level, *rank));
        items.extend(others.into_iter().map(|(_, _, item)| item));
    }

    fn instruction_items(&self, items: &mut Vec<Item>, loaded_at: &dyn Fn(usize) -> Option<Loaded>) {
        for (index, candidate) in self.paths.candidates.iter().enumerate() {
            if matches!(candidate.origin, Origin::Instruction { .. }) {
                items.push(self.candidate_item(index, Stage::Instructions, loaded_at));
            }
        }
    }

    fn remote_items(&self, items: &mut Vec<Item>, loaded_remote: &dyn Fn(usize) -> Option<Loaded>) {
        for (position, remote) in self.paths.remote.iter().enumerate() {
            let via = Via::Remote {
                index: remote.index,
                config: remote.source.name(),
                line: self.line_of(remote.index, &remote.source),
            };
            let loaded = loaded_remote(position);
            let reasons = match loaded {
                Some(_) => Vec::new(),
                None => vec![Reason::Remote { status: remote_status(self.db, remote) }],
            };
            items.push(Item {
                source: Source::Url(remote.shown.clone()),
                stage: Stage::Remote,
                via: Some(via),
                loaded,
                reasons,
                load_with: None,
            });
        }
    }

    /// Rule files below `D` (not in dot directories) that are no candidate: the read tool
    /// attaches them, or would if another name did not come first in their directory.
    fn nearby_items(&self, items: &mut Vec<Item>) -> Result<(), BuildError> {
        let pattern = "**/{AGENTS,CLAUDE,CONTEXT}.md".to_owned();
        let found = glob(self.db, self.cwd.clone(), pattern, false).clone();
        for file in found {
            if file.parent() == Some(self.cwd.as_path()) || self.paths.contains(&file) {
                continue;
            }
            items.push(self.nearby_item(&file)?);
        }
        Ok(())
    }

    /// N3, asked the way the read tool asks: a read of `file` itself walks its directory
    /// first, and reports which rule file it found there.
    fn nearby_item(&self, file: &Path) -> Result<Item, BuildError> {
        let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let nearby = nearby_rules(self.db, self.ws, file.to_path_buf()).as_ref().map_err(Clone::clone)?;
        let here = nearby.rules.first().filter(|r| r.path.parent() == Some(dir.as_path()));
        let mut reasons = Vec::new();
        match here {
            Some(rule) if rule.path == file => {
                reasons.push(Reason::NearbyOnly { dir });
                if rule_text(self.db, file).text().is_empty() {
                    reasons.push(self.content_reason(file));
                }
            }
            Some(rule) => reasons.push(Reason::NearbyShadowed { winner: rule.path.clone() }),
            None => match &self.claude_flag {
                Some(flag) if file.file_name().is_some_and(|n| n == "CLAUDE.md") => {
                    reasons.push(Reason::DisabledByFlag { flag: flag.name, value: flag.value.clone() });
                }
                _ => reasons.push(Reason::OutsideWorkingDirectory { cwd: self.cwd.clone() }),
            },
        }
        Ok(self.not_loaded(file, Stage::Nearby, reasons))
    }

    fn entries(&self) -> Vec<EntryReport> {
        let Ok(config) = merged_config(self.db, self.ws) else { return Vec::new() };
        config
            .instructions
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| {
                let expansion = if let Some(remote) = self.paths.remote.iter().find(|r| r.index == index) {
                    EntryExpansion::Remote { status: remote_status(self.db, remote) }
                } else {
                    let Expansion { mode, pattern, levels, .. } =
                        self.paths.expansions.iter().find(|e| e.index == index)?;
                    let (mode, flag) = match mode {
                        GlobMode::Absolute => ("absolute", None),
                        GlobMode::Up => ("up", None),
                        GlobMode::GlobalDirOnly(flag) => ("global_dir_only", Some(flag.clone())),
                    };
                    EntryExpansion::Glob {
                        mode,
                        flag,
                        pattern: pattern.clone(),
                        levels: levels
                            .iter()
                            .map(|l| LevelReport { dir: l.dir.clone(), matches: l.matches.clone() })
                            .collect(),
                    }
                };
                Some(EntryReport {
                    index,
                    entry: entry.shown().to_owned(),
                    config: entry.source.name(),
                    line: entry_line(self.db, self.ws, entry),
                    expansion,
                })
            })
            .collect()
    }

    /// A relative target names a path from the caller's directory; failing that, from
    /// `D` or any directory above it up to `W` (where rule files live), first that exists.
    fn resolve_target(&self, target: &Path, base: &Path) -> PathBuf {
        let from_base = path::resolve(base, target);
        if target.is_absolute() || self.exists(&from_base) {
            return from_base;
        }
        crate::opencode::fs::walk_up(&self.cwd, &self.root)
            .iter()
            .map(|dir| path::resolve(dir, target))
            .find(|p| self.exists(p))
            .unwrap_or(from_base)
    }

    /// A path that is no candidate and no rule file below `D`.
    fn stray(&self, target: &Path) -> Result<Item, BuildError> {
        let kind = self.db.files().get(self.db, target).kind(self.db);
        let is_rule_name =
            target.file_name().and_then(|n| n.to_str()).is_some_and(|n| rule_names(false).contains(&n));
        let dir = target.parent().unwrap_or(Path::new("/"));
        let reasons = match kind {
            FileKind::Missing | FileKind::Inaccessible => vec![Reason::Missing],
            FileKind::Directory => vec![Reason::Directory],
            _ if is_rule_name && self.root.starts_with(dir) && self.root != dir => {
                vec![Reason::OutsideWorktree { worktree: self.root.clone() }]
            }
            // Below `D`, or a sibling the read tool's string-prefix walk still visits (N3).
            _ if is_rule_name => return self.nearby_item(target),
            _ => vec![Reason::NoPatternMatched { nearest: self.nearest_pattern(target) }],
        };
        Ok(self.not_loaded(target, Stage::None, reasons))
    }

    /// An item discovery did not pick.
    fn not_loaded(&self, path: &Path, stage: Stage, reasons: Vec<Reason>) -> Item {
        // Not offered where a project `instructions` entry would not help: the project
        // config is off, or another file of the same place is the one to edit.
        let loadable = self.db.files().get(self.db, path).kind(self.db) == FileKind::File
            && !reasons.iter().any(|r| {
                matches!(
                    r,
                    Reason::ShadowedGlobal { .. }
                        | Reason::NearbyShadowed { .. }
                        | Reason::ProjectConfigDisabled { .. }
                )
            });
        let load_with = loadable.then(|| match path.strip_prefix(&self.root) {
            Ok(relative) => path::display(relative),
            Err(_) => path::display(path),
        });
        Item { source: Source::File(path.to_path_buf()), stage, via: None, loaded: None, reasons, load_with }
    }

    /// The local `instructions` pattern closest (by edit distance) to `target`'s path
    /// relative to a directory it was globbed in.
    fn nearest_pattern(&self, target: &Path) -> Option<NearMiss> {
        let config = merged_config(self.db, self.ws).as_ref().ok()?;
        let mut best: Option<NearMiss> = None;
        for expansion in &self.paths.expansions {
            for level in &expansion.levels {
                let Ok(relative) = target.strip_prefix(&level.dir) else { continue };
                let relative = path::display(relative);
                let distance = strsim::levenshtein(&expansion.pattern, &relative);
                // "Almost matched": at most a third of the longer string differs.
                let almost = distance * 3 <= expansion.pattern.len().max(relative.len());
                if almost && best.as_ref().is_none_or(|b| distance < b.distance) {
                    let line = config
                        .instructions
                        .get(expansion.index)
                        .and_then(|e| entry_line(self.db, self.ws, e));
                    best = Some(NearMiss {
                        entry: expansion.entry.clone(),
                        config: expansion.source.name(),
                        line,
                        dir: level.dir.clone(),
                        relative,
                        distance,
                    });
                }
            }
        }
        best
    }
}
