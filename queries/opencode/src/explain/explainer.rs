//! Reads the answers off discovery's facts: one [`Explainer`] per build of an explanation.

use std::path::{Path, PathBuf};

use crate::config::{ConfigError, ConfigSource, entry_line, merged_config};
use crate::flags::{FlagSource, flags};
use crate::fs::{find_up, glob};
use crate::instructions::{
    Expansion, GlobMode, Origin, RemoteEntry, SystemPaths, rule_names, rule_text, system_paths,
};
use crate::nearby::nearby_rules;
use crate::paths::global_paths;
use crate::prompt::{Block, BuildError, Section, system_prompt};
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::ReadFailure;
use ctxgraph_db::path;
use ctxgraph_db::remote::{FetchFailure, RemoteState};
use ctxgraph_db::system::FileKind;
use ctxgraph_db::tokens::TokenCounter;
use ctxgraph_db::worktree::worktree;

use super::model::{
    EntryExpansion, EntryReport, Explanation, Item, LevelReport, Loaded, NearMiss, Reason, RemoteStatus,
    Size, Source, Stage, Via,
};

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

pub(super) struct Explainer<'a> {
    db: &'a dyn Db,
    ws: Workspace,
    counter: &'a dyn TokenCounter,
    paths: &'a SystemPaths,
    cwd: PathBuf,
    root: PathBuf,
    claude_flag: Option<FlagSource>,
}

impl<'a> Explainer<'a> {
    pub(super) fn new(
        db: &'a dyn Db,
        ws: Workspace,
        counter: &'a dyn TokenCounter,
    ) -> Result<Self, BuildError> {
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

    pub(super) fn explanation(&self) -> Result<Explanation, BuildError> {
        self.explanation_of(true)
    }

    /// What discovery considers at start-up (every stage), and with `on_read` the rule files
    /// below the working directory the read tool would attach, which takes a walk of that
    /// whole tree.
    pub(super) fn explanation_of(&self, on_read: bool) -> Result<Explanation, BuildError> {
        let prompt = system_prompt(self.db, self.ws, None).as_ref().map_err(Clone::clone)?;
        let layout = prompt.layout(Section::System);
        let block_where = |wanted: &dyn Fn(&Block) -> bool| -> Option<Loaded> {
            layout.blocks.iter().enumerate().find_map(|(position, placed)| {
                let block = &prompt.blocks[placed.index];
                wanted(block).then(|| Loaded {
                    position: position + 1,
                    range: placed.range.clone(),
                    size: Size::of(&block.text, self.counter),
                    hash: placed.hash,
                })
            })
        };
        let environment = prompt.blocks.first().map_or("", |b| &*b.text);

        let mut items = Vec::new();
        let loaded_at = |candidate: usize| block_where(&|b| b.candidate == Some(candidate));
        self.global_items(&mut items, &loaded_at);
        self.project_items(&mut items, &loaded_at);
        self.instruction_items(&mut items, &loaded_at);
        self.remote_items(&mut items, &|remote| block_where(&|b| b.remote == Some(remote)));
        if on_read {
            self.nearby_items(&mut items)?;
        }

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
        let loaded = if let Some(first) = candidate.duplicate_of {
            reasons.push(Reason::Duplicate { first: self.via(first) });
            None
        } else {
            let loaded = loaded_at(index);
            if loaded.is_none() {
                reasons.push(self.content_reason(&candidate.path));
            }
            loaded
        };
        let load_with = None;
        Item {
            source: Source::File(candidate.path.to_path_buf()),
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
            Origin::Instruction { entry, dir } => {
                let level = self
                    .paths
                    .expansions
                    .iter()
                    .find(|e| e.index == entry.index)
                    .and_then(|e| e.levels.iter().position(|l| l.dir.as_path() == &**dir))
                    .unwrap_or(0);
                Via::Instruction {
                    index: entry.index,
                    entry: entry.text.clone(),
                    config: entry.source.name(),
                    line: self.line_of(entry.index, &entry.source),
                    dir: dir.to_path_buf(),
                    level,
                }
            }
        }
    }

    fn line_of(&self, index: usize, source: &ConfigSource) -> Option<usize> {
        let config = merged_config(self.db, self.ws).as_ref().ok()?;
        let entry = config.instructions.get(index).filter(|e| &e.source == source)?;
        entry_line(entry)
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
        self.paths.candidates.iter().position(|c| *c.path == *path && origin(&c.origin))
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
            .map(|c| c.path.to_path_buf())
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
        for file in found.iter() {
            if file.parent() == Some(self.cwd.as_path()) || self.paths.contains(file) {
                continue;
            }
            items.push(self.nearby_item(file)?);
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
                            .map(|l| LevelReport {
                                dir: l.dir.clone(),
                                matches: l.matches.iter().map(|m| m.to_path_buf()).collect(),
                            })
                            .collect(),
                    }
                };
                Some(EntryReport {
                    index,
                    entry: entry.shown().to_owned(),
                    config: entry.source.name(),
                    line: entry_line(entry),
                    expansion,
                })
            })
            .collect()
    }

    /// A relative target names a path from the caller's directory; failing that, from
    /// `D` or any directory above it up to `W` (where rule files live), first that exists.
    pub(super) fn resolve_target(&self, target: &Path, base: &Path) -> PathBuf {
        let from_base = path::resolve(base, target);
        if target.is_absolute() || self.exists(&from_base) {
            return from_base;
        }
        crate::fs::walk_up(&self.cwd, &self.root)
            .iter()
            .map(|dir| path::resolve(dir, target))
            .find(|p| self.exists(p))
            .unwrap_or(from_base)
    }

    /// A path that is no candidate and no rule file below `D`.
    pub(super) fn stray(&self, target: &Path) -> Result<Item, BuildError> {
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
                    let line = config.instructions.get(expansion.index).and_then(entry_line);
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
