//! B5.1–B5.2: where opencode 1.18.33 looks for SKILL.md files, in its order, and the walk
//! below each root, as queries over `File` inputs and directory listings.

use std::path::{Path, PathBuf};

use crate::config::{config_directories, merged_config};
use crate::flags::{FlagError, FlagSource, runtime_boolean};
use crate::fs::up;
use crate::paths::global_paths;
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::dir_listing;
use ctxgraph_db::path;
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::worktree::worktree;

/// Which step of B5.1 a root comes from, in opencode's order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SkillSource {
    /// `H/.claude/skills/**/SKILL.md` (dot directories included).
    HomeClaude,
    /// `H/.agents/skills/**/SKILL.md`.
    HomeAgents,
    /// `<dir>/skills/**/SKILL.md` for a `.claude`/`.agents` found walking from `D` to `W`.
    Project,
    /// `{skill,skills}/**/SKILL.md` in a config directory (C5).
    ConfigDirectory,
    /// `**/SKILL.md` under a `skills.paths` entry.
    Path {
        /// The entry as written in the config.
        entry: String,
    },
    /// `**/SKILL.md` in the cache directory a `skills.urls` entry's skill is downloaded to
    /// (B5.10).
    Url {
        /// The entry as written in the config.
        url: String,
    },
}

/// One directory scanned for `**/SKILL.md`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Root {
    /// The directory the `**` walk starts in.
    pub dir: PathBuf,
    /// Whether the walk enters dot directories (the `.claude`/`.agents` roots do).
    pub dot: bool,
    /// The B5.1 step.
    pub source: SkillSource,
}

/// A `skills.paths` entry opencode skips (it logs "skill path not found").
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MissingPath {
    /// The entry as written.
    pub entry: String,
    /// Where it resolved to.
    pub resolved: PathBuf,
}

/// The flags that switch skill roots off (B5.1), with the variable that set each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SkillFlags {
    /// `OPENCODE_DISABLE_EXTERNAL_SKILLS`: no `.claude`/`.agents` roots at all.
    pub disable_external: Option<FlagSource>,
    /// `OPENCODE_DISABLE_CLAUDE_CODE` or `OPENCODE_DISABLE_CLAUDE_CODE_SKILLS`: no `.claude`.
    pub disable_claude: Option<FlagSource>,
}

/// Every root, in opencode's order, and the `skills.paths` entries it skips.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Roots {
    /// The roots, in B5.1 order.
    pub roots: Vec<Root>,
    /// `skills.paths` entries that are not directories.
    pub missing_paths: Vec<MissingPath>,
    /// The flags in force.
    pub flags: SkillFlags,
}

fn skill_flags(db: &dyn Db, ws: Workspace) -> Result<SkillFlags, FlagError> {
    let host = ws.host(db);
    let flag = |name: &'static str| -> Result<Option<FlagSource>, FlagError> {
        match env_var(db, host, name.to_owned()) {
            None => Ok(None),
            Some(value) => match runtime_boolean(&value) {
                Some(true) => Ok(Some(FlagSource { name, value })),
                Some(false) => Ok(None),
                None => Err(FlagError { name, value }),
            },
        }
    };
    Ok(SkillFlags {
        disable_external: flag("OPENCODE_DISABLE_EXTERNAL_SKILLS")?,
        disable_claude: flag("OPENCODE_DISABLE_CLAUDE_CODE")?
            .or(flag("OPENCODE_DISABLE_CLAUDE_CODE_SKILLS")?),
    })
}

/// B5.1: the local roots opencode scans, in its order (`skills.urls` follow: B5.10).
#[salsa::tracked(returns(ref))]
pub fn skill_roots(db: &dyn Db, ws: Workspace) -> Result<Roots, FlagError> {
    let flags = skill_flags(db, ws)?;
    let paths = global_paths(db, ws).as_ref().map_err(Clone::clone)?;
    let cwd = ws.cwd(db);
    let mut roots = Vec::new();
    let mut missing_paths = Vec::new();
    let is_dir = |dir: &Path| db.files().get(db, dir).kind(db) == FileKind::Directory;
    if flags.disable_external.is_none() {
        let mut names = Vec::new();
        if flags.disable_claude.is_none() {
            names.push(".claude");
        }
        names.push(".agents");
        for name in &names {
            let dir = paths.home.join(name);
            if is_dir(&dir) {
                let source =
                    if *name == ".claude" { SkillSource::HomeClaude } else { SkillSource::HomeAgents };
                roots.push(Root { dir: dir.join("skills"), dot: true, source });
            }
        }
        let targets = names.iter().map(|n| (*n).to_owned()).collect();
        // A walk that cannot stat a level is treated as finding nothing (opencode catches it).
        let found = up(db, targets, cwd.clone(), worktree(db, ws).root.clone()).clone().unwrap_or_default();
        roots.extend(found.into_iter().map(|dir| Root {
            dir: dir.join("skills"),
            dot: true,
            source: SkillSource::Project,
        }));
    }
    for dir in config_directories(db, ws).as_ref().map_err(Clone::clone)? {
        let dir = path::resolve(cwd, dir);
        for sub in ["skill", "skills"] {
            roots.push(Root { dir: dir.join(sub), dot: false, source: SkillSource::ConfigDirectory });
        }
    }
    let config = merged_config(db, ws).as_ref().ok().map(crate::config::MergedConfig::value);
    let paths_entries: Vec<String> = config
        .as_ref()
        .and_then(|c| c.pointer("/skills/paths"))
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    for entry in paths_entries {
        let expanded = match entry.strip_prefix("~/") {
            Some(rest) => paths.home.join(rest),
            None => PathBuf::from(&entry),
        };
        let resolved = path::resolve(cwd, &expanded);
        if is_dir(&resolved) {
            roots.push(Root { dir: resolved, dot: false, source: SkillSource::Path { entry } });
        } else {
            missing_paths.push(MissingPath { entry, resolved });
        }
    }
    Ok(Roots { roots, missing_paths, flags })
}

/// What the `**/SKILL.md` walk found at one directory: its own SKILL.md, and the child
/// directories (followed symlinks included) whose walk found something.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Below {
    /// `dir/SKILL.md` when it is a file (or a symlink to one).
    pub here: Option<PathBuf>,
    /// Child directories to descend into: real ones by name, then followed symlinks by name
    /// (`true`: reached through a symlink).
    pub children: Vec<(PathBuf, bool)>,
}

/// B5.2: `**/SKILL.md` below `dir`, one query per directory, so that a SKILL.md added deep in
/// a tree re-runs only the walks on its path. opencode globs with `follow: true`: symlinked
/// directories are entered. `linked` says whether the walk is already inside a followed
/// symlink; a second one is not followed (B5.2: a loop such as `loop -> .` would otherwise be
/// walked until the kernel's 40-link limit, as opencode does).
#[salsa::tracked(returns(ref))]
pub fn skills_below(db: &dyn Db, dir: PathBuf, dot: bool, linked: bool) -> Below {
    let file = db.files().get(db, &dir);
    if file.kind(db) != FileKind::Directory {
        return Below::default();
    }
    let mut entries: Vec<_> = dir_listing(db, file).iter().cloned().collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let mut below = Below::default();
    let mut links = Vec::new();
    for entry in entries {
        let child = dir.join(&entry.name);
        if entry.name == "SKILL.md" {
            let kind = db.files().get_listed(db, &child, entry.kind).kind(db);
            if matches!(kind, FileKind::File | FileKind::Other) {
                below.here = Some(child.clone());
            }
            continue;
        }
        if entry.name.starts_with('.') && !dot {
            continue;
        }
        match entry.kind {
            EntryKind::Directory => {
                db.files().get_listed(db, &child, EntryKind::Directory);
                below.children.push((child, linked));
            }
            EntryKind::Symlink if !linked && db.files().get(db, &child).kind(db) == FileKind::Directory => {
                links.push((child, true));
            }
            _ => {}
        }
    }
    // Real directories first: a skill reachable directly and through a link is found
    // directly first, and the first found keeps its name (B5.7).
    below.children.extend(links);
    below
}

/// Every SKILL.md below `root`, in walk order (a directory's own file, then its real
/// children by name, then its symlinked ones).
pub fn scan(db: &dyn Db, root: &Root) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.dir.clone(), false)];
    while let Some((dir, linked)) = stack.pop() {
        let below = skills_below(db, dir, root.dot, linked);
        out.extend(below.here.iter().cloned());
        stack.extend(below.children.iter().rev().cloned());
    }
    out
}
