//! I1–I9: which instruction files opencode V1 puts in the system prompt, in what order,
//! and why. Every candidate the pipeline considered is returned with the decision taken
//! about it, so `explain` reads these facts instead of re-deriving them.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{ConfigError, ConfigSource, merged_config};
use crate::flags::{FlagSource, flags};
use crate::fs::{MAX_BRACE_EXPANSIONS, TooManyExpansions, expand_braces, find_up, glob, glob_up};
use crate::paths::global_paths;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{DecodedText, ReadFailure, file_text};
use ctxgraph_db::path;
use ctxgraph_db::worktree::worktree;

/// I1: the per-directory rule names, in priority order.
pub fn rule_names(claude_disabled: bool) -> Vec<&'static str> {
    let mut names = vec!["AGENTS.md"];
    if !claude_disabled {
        names.push("CLAUDE.md");
    }
    names.push("CONTEXT.md");
    names
}

/// How a path entered the candidate list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// I3: the first existing global rule.
    Global,
    /// I4: a hit of the winning project filename, `level` directories above `D`.
    Project {
        /// The winning rule name (I1).
        name: &'static str,
        /// Directories above `D` (0: `D` itself).
        level: usize,
    },
    /// I5: a match of a config `instructions` entry, globbed in `dir`.
    Instruction {
        /// The entry, shared by all its matches (a `**` entry has hundreds per level, in
        /// every working directory's candidates).
        entry: Arc<LocalEntry>,
        /// The directory the glob matched in.
        dir: Arc<Path>,
    },
}

/// A config `instructions` entry that is not a URL, as its matches' [`Origin`] names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LocalEntry {
    /// The entry's position in the merged `instructions` list.
    pub index: usize,
    /// The entry as it may be printed (as written where substitution produced it).
    pub text: String,
    /// The config layer that wrote the entry.
    pub source: ConfigSource,
}

impl Origin {
    /// The spec rule that put a path here.
    pub fn rule(&self) -> &'static str {
        match self {
            Origin::Global => "I3",
            Origin::Project { .. } => "I4",
            Origin::Instruction { .. } => "I5",
        }
    }
}

/// A path the discovery produced (before dedupe).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Candidate {
    /// Absolute, as opencode resolves it (symlinks not followed); a glob match is its
    /// input's own path, shared.
    pub path: Arc<Path>,
    /// The stage and step that produced it.
    pub origin: Origin,
    /// I6: `Some(i)` when an earlier candidate `i` (in [`SystemPaths::candidates`]) already
    /// had this path, so this one adds nothing.
    pub duplicate_of: Option<usize>,
}

/// A config `instructions` entry that is a URL (I8): fetched by the engine, never here.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemoteEntry {
    /// The URL fetched: substituted, so possibly carrying a secret.
    pub url: String,
    /// The URL as written in the config (`?token={env:T}`): what every output prints.
    pub shown: String,
    /// The entry's position in the merged `instructions` list; blocks keep this order.
    pub index: usize,
    /// The config layer that wrote it.
    pub source: ConfigSource,
}

/// The global rule probe (I3): every path tried, and which won.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlobalProbe {
    /// The global rule paths in I3 order (the Claude Code one left out when disabled).
    pub tried: Vec<PathBuf>,
    /// The first of them that exists, of any kind (a directory wins too, and reads empty).
    pub winner: Option<PathBuf>,
    /// Set when `~/.claude/CLAUDE.md` was left out of the probe (P7).
    pub claude_disabled_by: Option<FlagSource>,
}

/// The project probe (I4): the names tried in order, and the first with a hit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProjectProbe {
    /// `None` when project discovery did not run (P7), with the flag.
    pub disabled_by: Option<FlagSource>,
    /// The rule names in I1's priority order.
    pub names: Vec<&'static str>,
    /// The first name with any hit on the walk; only its files load.
    pub winner: Option<&'static str>,
    /// The walk from `D` to `W`.
    pub levels: Vec<PathBuf>,
    /// Names whose walk failed (an entry could not be stat'ed): opencode treats them as
    /// having no hit.
    pub failed: Vec<(&'static str, PathBuf)>,
}

/// I2–I6: `systemPaths()`, with the facts behind it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SystemPaths {
    /// What I3 tried and found.
    pub global: GlobalProbe,
    /// What I4 tried and found.
    pub project: ProjectProbe,
    /// In discovery order, duplicates included (marked).
    pub candidates: Vec<Candidate>,
    /// The URL entries, in config order; the engine fetches them (I8).
    pub remote: Vec<RemoteEntry>,
    /// I5: every local `instructions` entry, as globbed level by level.
    pub expansions: Vec<Expansion>,
}

/// How one local `instructions` entry was globbed (I5): the directories it was tried in,
/// in order, and what each matched.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expansion {
    /// Index into the merged `instructions`.
    pub index: usize,
    /// The entry as it may be printed.
    pub entry: String,
    /// The config layer that wrote it.
    pub source: ConfigSource,
    /// Which I5 branch globbed it.
    pub mode: GlobMode,
    /// The pattern as globbed: `~/` expanded; for [`GlobMode::Absolute`], the basename.
    pub pattern: String,
    /// Each directory globbed, in walk order.
    pub levels: Vec<GlobLevel>,
}

impl Expansion {
    /// The entry matched no file at any level.
    pub fn matched_nothing(&self) -> bool {
        self.levels.iter().all(|level| level.matches.is_empty())
    }
}

/// Which I5 branch globbed an entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GlobMode {
    /// An absolute path: only the basename is a pattern, in its literal directory, dot off.
    Absolute,
    /// `globUp` from `D` to `W`, dot on.
    Up,
    /// Project config disabled: only `G`, with this flag.
    GlobalDirOnly(FlagSource),
}

/// One directory an `instructions` glob ran in, and what it matched there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlobLevel {
    /// The directory.
    pub dir: PathBuf,
    /// Its matches in node-glob's order (F4: one directory's reversed listing, or a race
    /// across sibling folders, [`crate::fs::glob_order`]): the `glob` memo's own list,
    /// shared by every working directory whose walk passes here.
    pub matches: Arc<[Arc<Path>]>,
}

impl SystemPaths {
    /// F4: where the position of each block's file comes from a directory's listing: for
    /// every file, the first glob call (one entry at one level) that matched it along with
    /// other files. One pass over the expansions, each level's order judged once (a layout
    /// asks for every block: per block, it was a scan and a judgement per block).
    pub fn listings(&self) -> std::collections::HashMap<&Path, ctxgraph_db::profile::Listed> {
        use crate::fs::{GlobOrder, glob_order};
        use ctxgraph_db::profile::{Listed, ListedOrder};
        let mut listings = std::collections::HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for level in self.expansions.iter().flat_map(|e| &e.levels) {
            let order = glob_order(&level.matches);
            for path in level.matches.iter() {
                // The first level that matched a file decides, listed or not.
                if !seen.insert(&**path) {
                    continue;
                }
                let listed = match order {
                    GlobOrder::Single => None,
                    GlobOrder::ReverseListing => path
                        .parent()
                        .map(|dir| Listed { dir: dir.to_path_buf(), order: ListedOrder::Reversed }),
                    GlobOrder::Race => Some(Listed { dir: level.dir.clone(), order: ListedOrder::Race }),
                };
                if let Some(listed) = listed {
                    listings.insert(&**path, listed);
                }
            }
        }
        listings
    }

    /// Whether discovery produced `path` at all (duplicates count).
    pub fn contains(&self, path: &Path) -> bool {
        self.candidates.iter().any(|c| *c.path == *path)
    }
}

/// One directory of a glob's walk and its matches (the `glob` memo's list).
type Level = (PathBuf, Arc<[Arc<Path>]>);

/// opencode's `systemPaths()` for one working directory: the global rule (I3), the
/// project rules (I4) and the `instructions` entries (I5, I8), with every probe behind
/// them. Fails only where opencode fails to start (config or flag errors).
#[salsa::tracked(returns(ref))]
pub fn system_paths(db: &dyn Db, ws: Workspace) -> Result<SystemPaths, ConfigError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let config = merged_config(db, ws).as_ref().map_err(Clone::clone)?;
    let cwd = ws.cwd(db);
    let root = &worktree(db, ws).root;
    let claude_disabled_by = flags.disable_claude_code_prompt.clone();

    let mut candidates: Vec<Candidate> = Vec::new();
    // Each path's first candidate. A `**` entry lists every match once per level of the walk
    // above it (hundreds of paths, a dozen levels): a scan of the list per path was quadratic.
    let mut first: HashMap<Arc<Path>, usize> = HashMap::new();
    let mut add = |path: Arc<Path>, origin: Origin| {
        let duplicate_of = match first.entry(path.clone()) {
            Entry::Occupied(seen) => Some(*seen.get()),
            Entry::Vacant(slot) => {
                slot.insert(candidates.len());
                None
            }
        };
        candidates.push(Candidate { path, origin, duplicate_of });
    };

    // I3: the first global rule that exists, of any kind.
    let mut tried = vec![path::resolve(cwd, paths.instruction_dir.join("AGENTS.md"))];
    if claude_disabled_by.is_none() {
        tried.push(path::resolve(cwd, paths.home.join(".claude").join("CLAUDE.md")));
    }
    let winner = tried.iter().find(|p| db.files().get(db, p).kind(db).exists()).cloned();
    if let Some(winner) = &winner {
        add(Arc::from(winner.as_path()), Origin::Global);
    }
    let global = GlobalProbe { tried, winner, claude_disabled_by: claude_disabled_by.clone() };

    // I4: the first name with any hit between D and W; all of its hits, nearest first.
    let names = rule_names(claude_disabled_by.is_some());
    let mut project = ProjectProbe {
        disabled_by: flags.disable_project_config.clone(),
        names: names.clone(),
        winner: None,
        levels: crate::fs::walk_up(cwd, root),
        failed: Vec::new(),
    };
    if project.disabled_by.is_none() {
        for name in &names {
            match find_up(db, (*name).to_owned(), cwd.clone(), root.clone()) {
                Err(err) => project.failed.push((name, err.0.clone())),
                Ok(hits) if hits.is_empty() => {}
                Ok(hits) => {
                    project.winner = Some(name);
                    for hit in hits {
                        let level = cwd.ancestors().position(|a| Some(a) == hit.parent()).unwrap_or(0);
                        add(Arc::from(path::resolve(cwd, hit)), Origin::Project { name, level });
                    }
                    break;
                }
            }
        }
    }

    // I5: config entries in merged order.
    let mut remote = Vec::new();
    let mut expansions = Vec::new();
    for (index, entry) in config.instructions.iter().enumerate() {
        let raw = entry.value.as_str();
        if raw.starts_with("https://") || raw.starts_with("http://") {
            remote.push(RemoteEntry {
                url: raw.to_owned(),
                shown: entry.shown().to_owned(),
                index,
                source: entry.source.clone(),
            });
            continue;
        }
        let local = Arc::new(LocalEntry { index, text: raw.to_owned(), source: entry.source.clone() });
        let origin =
            |dir: &Arc<Path>| Origin::Instruction { entry: Arc::clone(&local), dir: Arc::clone(dir) };
        let expanded = match raw.strip_prefix("~/") {
            Some(rest) => path::display(&paths.home.join(rest)),
            None => raw.to_owned(),
        };
        let bounded = |pattern: &str| match expand_braces(pattern) {
            Ok(_) => Ok(()),
            Err(TooManyExpansions) => Err(ConfigError::TooManyPatterns {
                source_name: entry.source.name(),
                at: entry.at,
                entry: entry.shown().to_owned(),
                limit: MAX_BRACE_EXPANSIONS,
            }),
        };
        let (mode, pattern, levels): (GlobMode, String, Vec<Level>) = if Path::new(&expanded).is_absolute() {
            // Only the basename is a pattern; the directory is taken literally, dot off.
            let full = path::normalize(Path::new(&expanded));
            let dir = full.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
            let base = full.file_name().map(|b| b.to_string_lossy().into_owned()).unwrap_or_default();
            bounded(&base)?;
            let hits = glob(db, dir.clone(), base.clone(), false).clone();
            (GlobMode::Absolute, base, vec![(dir, hits)])
        } else if let Some(flag) = &project.disabled_by {
            bounded(&expanded)?;
            let levels = glob_up(db, &expanded, &paths.instruction_dir, &paths.instruction_dir);
            (GlobMode::GlobalDirOnly(flag.clone()), expanded, levels)
        } else {
            bounded(&expanded)?;
            (GlobMode::Up, expanded.clone(), glob_up(db, &expanded, cwd, root))
        };
        for (dir, hits) in &levels {
            let dir: Arc<Path> = Arc::from(dir.as_path());
            for hit in hits.iter() {
                add(hit.clone(), origin(&dir));
            }
        }
        expansions.push(Expansion {
            index,
            entry: raw.to_owned(),
            source: entry.source.clone(),
            mode,
            pattern,
            levels: levels.into_iter().map(|(dir, matches)| GlobLevel { dir, matches }).collect(),
        });
    }
    // Kept per working directory for as long as a host serves it: no spare capacity.
    candidates.shrink_to_fit();
    Ok(SystemPaths { global, project, candidates, remote, expansions })
}

/// I7: one rule file's content as opencode reads it (errors read as empty).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuleText {
    /// The decoded text, when the read succeeded.
    pub decoded: Option<DecodedText>,
    /// Why the read failed: the block is then empty, and `explain` says why.
    pub failure: Option<ReadFailure>,
}

impl RuleText {
    /// The text the block carries: empty when the read failed, as in opencode.
    pub fn text(&self) -> &str {
        self.decoded.as_ref().map_or("", |d| &d.text)
    }
}

/// Reads a rule file the way I7 does, keeping the failure instead of only the empty text.
pub fn rule_text(db: &dyn Db, path: &Path) -> RuleText {
    match file_text(db, db.files().get(db, path)) {
        Ok(decoded) => RuleText { decoded: Some(decoded.clone()), failure: None },
        Err(failure) => RuleText { decoded: None, failure: Some(failure.clone()) },
    }
}

/// I9: `Instructions from: <path>\n<content>`.
pub fn render_block(label: &str, content: &str) -> String {
    format!("Instructions from: {label}\n{content}")
}

impl Origin {
    /// One line saying why the path was picked, for people.
    pub fn describe(&self) -> String {
        match self {
            Origin::Global => "global rule: the first of the global rule paths that exists".to_owned(),
            Origin::Project { name, level: 0 } => {
                format!(
                    "project rule: {name} is the first rule name found between the working directory and the worktree root; found in the working directory"
                )
            }
            Origin::Project { name, level } => format!(
                "project rule: {name} is the first rule name found between the working directory and the worktree root; found {level} level{} up",
                if *level == 1 { "" } else { "s" }
            ),
            Origin::Instruction { entry, dir } => format!(
                "config instructions entry {:?} from {}, matched in {}",
                entry.text,
                entry.source.name(),
                dir.display()
            ),
        }
    }
}
