//! The Kilo Code profile (`@kilocode/cli` 7.7.7): the rule files it puts in its system
//! message, and the ones its read tool attaches. Rule ids (KI1–KI13) are defined in
//! `docs/profiles/kilo.md`, each with the recorded case that confirms it.
//!
//! Kilo descends from opencode, and this module lives in the opencode crate because it
//! walks with opencode's queries: `findUp` ([`crate::fs::find_up`]), the per-directory walk
//! of the read tool and its `<system-reminder>` ([`crate::nearby`]), the
//! `Instructions from:` block ([`crate::instructions::render_block`]). What is Kilo's own:
//! its global paths (`~/.config/kilo`, KI1), the rule folders and `.kilocoderules` its
//! legacy-config migration turns into instruction entries (KI4, KI8), and how it reads a rule
//! file (a project file must stay inside the project, `{env:…}` and `{file:…}` are
//! substituted: KI7, KI9), and the `instructions` of its config files (`kilo.json` beside
//! `opencode.json`, a file failing its validation skipped whole: KI13).

pub mod config;
pub mod markdown;
pub mod nearby;
pub mod profile;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::fs::{find_up, glob, glob_up};
use crate::instructions::render_block;
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::dir_listing;
use ctxgraph_db::path;
use ctxgraph_db::system::EntryKind;
use ctxgraph_db::worktree::worktree;
use markdown::{Read, Trust, read_rule};

/// KI2: the per-directory names in priority order are opencode's (I1).
pub use crate::instructions::rule_names;

/// KI8: the modes whose rule folders Kilo's migration adds, in its order (all of them,
/// whatever mode the session runs in).
pub const MODES: [&str; 5] = ["code", "architect", "ask", "debug", "orchestrator"];

/// Which stage found a file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Kind {
    /// KI1: the global file.
    Global,
    /// KI2: a copy of the winning name between the working directory and the git root.
    Project {
        /// The winning name.
        name: &'static str,
        /// Directories above the working directory (0: in it).
        level: usize,
    },
    /// KI4: a top-level `.md` of `~/.kilo/rules` or `~/.kilocode/rules`.
    HomeRule,
    /// KI4: a top-level `.md` of the working directory's `.kilo/rules` or `.kilocode/rules`.
    ProjectRule,
    /// KI4: the working directory's `.kilocoderules`.
    Legacy,
    /// KI8: a mode's folder rule (`.kilo/rules-MODE/`, `.kilocode/rules-MODE/`).
    ModeRule {
        /// The mode.
        mode: &'static str,
    },
    /// KI8: `.kilocoderules-MODE`.
    ModeLegacy {
        /// The mode.
        mode: &'static str,
    },
    /// KI13: a match of an `instructions` entry of a config file.
    Config {
        /// The entry as written.
        entry: String,
        /// The config file that names it (the first, when several do).
        from: PathBuf,
    },
}

impl Kind {
    /// The rule id behind the stage.
    pub fn rule(&self) -> &'static str {
        match self {
            Kind::Global => "KI1",
            Kind::Project { .. } => "KI2",
            Kind::HomeRule | Kind::ProjectRule | Kind::Legacy => "KI4",
            Kind::ModeRule { .. } | Kind::ModeLegacy { .. } => "KI8",
            Kind::Config { .. } => "KI13",
        }
    }

    /// Why the stage picked the file, in one sentence.
    pub fn describe(&self) -> String {
        match self {
            Kind::Global => "the global file: the first of Kilo's global paths that exists (KI1)".to_owned(),
            Kind::Project { name, level: 0 } => format!(
                "{name} is the first name found between the working directory and the git root; this copy is in the working directory (KI2)"
            ),
            Kind::Project { name, level } => format!(
                "{name} is the first name found between the working directory and the git root; this copy is {level} level{} up (KI2)",
                if *level == 1 { "" } else { "s" }
            ),
            Kind::HomeRule => "a rule in a home rule folder (KI4)".to_owned(),
            Kind::ProjectRule => "a rule in the working directory's rule folders (KI4)".to_owned(),
            Kind::Legacy => "the working directory's .kilocoderules (KI4)".to_owned(),
            Kind::ModeRule { mode } => {
                format!("a rule of the `{mode}` mode's folder, sent whatever the mode (KI8)")
            }
            Kind::ModeLegacy { mode } => {
                format!("the `{mode}` mode's .kilocoderules-{mode}, sent whatever the mode (KI8)")
            }
            Kind::Config { entry, from } => format!(
                "the `instructions` entry {entry:?} of {} names it, after the rule folders (KI13)",
                path::display(from)
            ),
        }
    }
}

/// One file Kilo reads at start-up, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Doc {
    /// Absolute, as Kilo prints it (symlinks not resolved).
    pub source: PathBuf,
    /// The stage that found it.
    pub kind: Kind,
    /// How it was read.
    pub read: Read,
    /// KI12: its folder gives more than one block, which Kilo takes in the file system's
    /// listing order (the disk decides).
    pub listed_with_others: bool,
}

impl Doc {
    /// Whether it has a block.
    pub fn is_sent(&self) -> bool {
        !self.read.text.is_empty()
    }

    /// KI5: its block.
    pub fn block(&self) -> String {
        render_block(&path::display(&self.source), &self.read.text)
    }
}

/// A file Kilo looked at and does not read at all.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Skipped {
    /// The file.
    pub source: PathBuf,
    /// One word.
    pub fate: &'static str,
    /// The rule behind it.
    pub rule: &'static str,
    /// Why.
    pub reason: String,
}

/// What Kilo reads at start-up from one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KiloContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// The git root, when there is one.
    pub git_root: Option<PathBuf>,
    /// KI7: the project's scope (the git root, else the working directory).
    pub scope: PathBuf,
    /// Where the global file was looked for, in order.
    pub global_tried: Vec<PathBuf>,
    /// KI2: the names in priority order, and the winner.
    pub names: Vec<&'static str>,
    /// The winning name.
    pub winner: Option<&'static str>,
    /// Every file read, in Kilo's order (sent or not).
    pub docs: Vec<Doc>,
    /// Files looked at and not read.
    pub skipped: Vec<Skipped>,
    /// KI13: the config files read, in merge order.
    pub configs: Vec<config::ConfigFile>,
    /// KI13: Kilo's global config folder (`$XDG_CONFIG_HOME/kilo`).
    pub config_dir: PathBuf,
}

impl KiloContext {
    /// KI5: the blocks, joined as the system message joins its parts.
    pub fn text(&self) -> String {
        self.docs.iter().filter(|d| d.is_sent()).map(Doc::block).collect::<Vec<_>>().join("\n")
    }

    /// Whether the system message already names `path` (sent or read as empty): the read
    /// tool does not attach it again (KI10).
    pub fn names_path(&self, path: &Path) -> bool {
        self.docs.iter().any(|d| d.source == path)
    }
}

/// Whether Kilo leaves `~/.claude/CLAUDE.md` and the `CLAUDE.md` name out
/// (`KILO_DISABLE_CLAUDE_CODE` or `KILO_DISABLE_CLAUDE_CODE_PROMPT`, each truthy).
fn claude_disabled(db: &dyn Db, ws: Workspace) -> bool {
    let host = ws.host(db);
    ["KILO_DISABLE_CLAUDE_CODE", "KILO_DISABLE_CLAUDE_CODE_PROMPT"]
        .iter()
        .any(|var| env_var(db, host, (*var).to_owned()).is_some_and(|v| crate::flags::is_truthy(&v)))
}

/// KI4: the top-level regular `.md` files of `dir`, by name, and what else it holds.
fn folder_rules(db: &dyn Db, dir: &Path, skipped: &mut Vec<Skipped>, rule: &'static str) -> Vec<PathBuf> {
    let listing = dir_listing(db, db.files().get(db, dir));
    let mut rules = Vec::new();
    for entry in listing.iter() {
        let file = dir.join(entry.name.as_str());
        let markdown = entry.name.ends_with(".md");
        match entry.kind {
            EntryKind::File if markdown => rules.push(file),
            EntryKind::Symlink if markdown => skipped.push(Skipped {
                source: file,
                fate: "symlink",
                rule,
                reason: "a symlink in a rule folder: Kilo takes only regular files (KI4)".to_owned(),
            }),
            EntryKind::Directory => skipped.push(Skipped {
                source: file,
                fate: "not_walked",
                rule,
                reason: "a folder inside a rule folder: Kilo reads only the top level (KI4)".to_owned(),
            }),
            _ => skipped.push(Skipped {
                source: file,
                fate: "not_markdown",
                rule,
                reason: "not a regular `.md` file: Kilo's rule folders hold only those (KI4)".to_owned(),
            }),
        }
    }
    rules
}

/// KI4, KI8: one side's folders (home or project), a name taken once across them.
fn folders(db: &dyn Db, dirs: &[PathBuf], kind: &Kind, skipped: &mut Vec<Skipped>) -> Vec<(PathBuf, Kind)> {
    let mut taken: Vec<(String, PathBuf)> = Vec::new();
    let mut found = Vec::new();
    for dir in dirs {
        for rule in folder_rules(db, dir, skipped, kind.rule()) {
            let name = rule.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some((_, first)) = taken.iter().find(|(taken, _)| *taken == name) {
                skipped.push(Skipped {
                    reason: format!(
                        "{} has the same name and comes first: Kilo takes a name once ({})",
                        path::display(first),
                        kind.rule()
                    ),
                    source: rule,
                    fate: "shadowed",
                    rule: kind.rule(),
                });
                continue;
            }
            taken.push((name, rule.clone()));
            found.push((rule, kind.clone()));
        }
    }
    found
}

/// KI1–KI9: every file Kilo reads at start-up from `ws`, in its order.
#[salsa::tracked(returns(ref))]
pub fn kilo_context(db: &dyn Db, ws: Workspace) -> KiloContext {
    let host = ws.host(db);
    let cwd = ws.cwd(db).clone();
    let tree = worktree(db, ws);
    let git_root = tree.is_git().then(|| tree.root.clone());
    let scope = git_root.clone().unwrap_or_else(|| cwd.clone());
    let home = path::resolve(&cwd, host.home(db));
    let config = match env_var(db, host, "XDG_CONFIG_HOME".to_owned()) {
        Some(value) if !value.is_empty() => path::resolve(&cwd, value),
        _ => home.join(".config"),
    }
    .join("kilo");
    let disabled = claude_disabled(db, ws);
    let project = Trust::Project { root: scope.clone() };
    let mut docs: Vec<Doc> = Vec::new();
    let mut skipped = Vec::new();
    let add = |docs: &mut Vec<Doc>, source: PathBuf, kind: Kind, trust: &Trust| {
        // Kilo keeps each path once, where it first came.
        if docs.iter().any(|d| d.source == source) {
            return;
        }
        let read = read_rule(db, ws, &source, trust);
        docs.push(Doc { source, kind, read, listed_with_others: false });
    };

    // KI1: the first global path that exists, of any kind.
    let mut global_tried = Vec::new();
    if let Some(dir) = env_var(db, host, "KILO_CONFIG_DIR".to_owned()).filter(|d| !d.is_empty()) {
        global_tried.push(path::resolve(&cwd, dir).join("AGENTS.md"));
    }
    global_tried.push(config.join("AGENTS.md"));
    if !disabled {
        global_tried.push(home.join(".claude").join("CLAUDE.md"));
    }
    let mut winner_seen = false;
    for tried in &global_tried {
        if !db.files().get(db, tried).kind(db).exists() {
            continue;
        }
        if winner_seen {
            skipped.push(Skipped {
                source: tried.clone(),
                fate: "shadowed",
                rule: "KI1",
                reason: "an earlier global path exists: Kilo reads only the first (KI1)".to_owned(),
            });
        } else {
            winner_seen = true;
            add(&mut docs, tried.clone(), Kind::Global, &Trust::Trusted);
        }
    }

    // KI2, KI3: the first name with a copy between the working directory and the git root.
    let names = rule_names(disabled);
    let stop = tree.root.clone();
    let mut winner = None;
    for name in &names {
        let Ok(hits) = find_up(db, (*name).to_owned(), cwd.clone(), stop.clone()) else { continue };
        if hits.is_empty() {
            continue;
        }
        match winner {
            None => {
                winner = Some(*name);
                for hit in hits {
                    let level = cwd.ancestors().position(|a| Some(a) == hit.parent()).unwrap_or(0);
                    add(&mut docs, path::resolve(&cwd, hit), Kind::Project { name, level }, &project);
                }
            }
            Some(won) => skipped.extend(hits.iter().map(|hit| Skipped {
                source: hit.clone(),
                fate: "shadowed",
                rule: "KI2",
                reason: format!("{won} is found first between the working directory and the git root: Kilo sends only that name (KI2)"),
            })),
        }
    }

    // KI4: the home folders, then the working directory's, then .kilocoderules; KI8 the modes.
    let home_dirs = [home.join(".kilo").join("rules"), home.join(".kilocode").join("rules")];
    for (rule, kind) in folders(db, &home_dirs, &Kind::HomeRule, &mut skipped) {
        add(&mut docs, rule, kind, &Trust::Trusted);
    }
    let project_dirs = [cwd.join(".kilo").join("rules"), cwd.join(".kilocode").join("rules")];
    for (rule, kind) in folders(db, &project_dirs, &Kind::ProjectRule, &mut skipped) {
        add(&mut docs, rule, kind, &project);
    }
    let legacy = |name: String| {
        let file = cwd.join(name);
        // Kilo asks whether it exists as a file; a folder of that name is not read.
        (db.files().get(db, &file).kind(db) == ctxgraph_db::system::FileKind::File).then_some(file)
    };
    if let Some(file) = legacy(".kilocoderules".to_owned()) {
        add(&mut docs, file, Kind::Legacy, &project);
    } else if db.files().get(db, &cwd.join(".kilocoderules")).kind(db).exists() {
        skipped.push(Skipped {
            source: cwd.join(".kilocoderules"),
            fate: "not_a_file",
            rule: "KI4",
            reason: "not a file: Kilo reads .kilocoderules only as one (KI4)".to_owned(),
        });
    }
    for mode in MODES {
        let dirs = [
            cwd.join(".kilo").join(format!("rules-{mode}")),
            cwd.join(".kilocode").join(format!("rules-{mode}")),
        ];
        for (rule, kind) in folders(db, &dirs, &Kind::ModeRule { mode }, &mut skipped) {
            add(&mut docs, rule, kind, &project);
        }
        if let Some(file) = legacy(format!(".kilocoderules-{mode}")) {
            add(&mut docs, file, Kind::ModeLegacy { mode }, &project);
        }
    }
    let configs = config::config_files(db, &config, &cwd, &stop);
    config_instructions(db, &configs, (&home, &cwd, &stop), &project, &mut docs, &mut skipped, &add);
    // KI12: only where a folder gives more than one block does its listing order show.
    let folder_of = |doc: &Doc| match doc.kind {
        Kind::HomeRule | Kind::ProjectRule | Kind::ModeRule { .. } => {
            doc.source.parent().map(Path::to_path_buf)
        }
        _ => None,
    };
    let sent_folders: Vec<PathBuf> = docs.iter().filter(|d| d.is_sent()).filter_map(folder_of).collect();
    for doc in &mut docs {
        let folder = folder_of(doc);
        doc.listed_with_others =
            doc.is_sent() && folder.is_some_and(|f| sent_folders.iter().filter(|s| **s == f).count() > 1);
    }
    KiloContext {
        cwd,
        git_root,
        scope,
        global_tried,
        names,
        winner,
        docs,
        skipped,
        configs,
        config_dir: config,
    }
}

/// Adds a file to the docs once, where it first comes (`kilo_context`'s `add`).
type AddDoc<'a> = &'a dyn Fn(&mut Vec<Doc>, PathBuf, Kind, &Trust);

/// KI13: the `instructions` of Kilo's config files, in merge order (each entry once, where
/// first named), after everything else; a file that fails validation is skipped whole.
#[allow(clippy::too_many_arguments, reason = "the walk's own state, passed down once")]
fn config_instructions(
    db: &dyn Db,
    configs: &[config::ConfigFile],
    (home, cwd, root): (&Path, &Path, &Path),
    project: &Trust,
    docs: &mut Vec<Doc>,
    skipped: &mut Vec<Skipped>,
    add: AddDoc<'_>,
) {
    // Each entry once, where first named; a skipped file's entries apart, to say why their
    // files are not sent.
    // (entry, the file naming it, whether that file is global)
    let mut entries: Vec<(String, PathBuf, bool)> = Vec::new();
    // (entry, the skipped file naming it, why Kilo skips that file)
    let mut lost: Vec<(String, PathBuf, String)> = Vec::new();
    for file in configs {
        if let Some(why) = &file.invalid {
            skipped.push(Skipped {
                source: file.path.clone(),
                fate: "invalid_config",
                rule: "KI13",
                reason: format!(
                    "Kilo skips this config file whole, its `instructions` with it, and says so only in its log: {why} (KI13)"
                ),
            });
            lost.extend(
                file.instructions.iter().map(|entry| (entry.clone(), file.path.clone(), why.clone())),
            );
            continue;
        }
        for entry in &file.instructions {
            if !entries.iter().any(|(seen, ..)| seen == entry) {
                entries.push((entry.clone(), file.path.clone(), file.global));
            }
        }
    }
    for (entry, from, global) in entries {
        let Some((hits, absolute)) = resolve_entry(db, &entry, home, cwd, root) else { continue };
        // The global folder's absolute entries are trusted; the rest stay inside the project.
        let trust = if global && absolute { Trust::Trusted } else { project.clone() };
        for hit in hits {
            add(docs, hit, Kind::Config { entry: entry.clone(), from: from.clone() }, &trust);
        }
    }
    for (entry, from, why) in lost {
        let Some((hits, _)) = resolve_entry(db, &entry, home, cwd, root) else { continue };
        for hit in hits.into_iter().filter(|hit| !docs.iter().any(|d| d.source == *hit)) {
            skipped.push(Skipped {
                reason: format!(
                    "named by the `instructions` entry {entry:?} of {}, a config file Kilo skips whole ({why}) (KI13)",
                    path::display(&from)
                ),
                source: hit,
                fate: "config_skipped",
                rule: "KI13",
            });
        }
    }
}

/// I5 as Kilo resolves an `instructions` entry: the files it names and whether it is
/// absolute; `None` for a URL (fetched, not read from the disk: not modelled).
fn resolve_entry(
    db: &dyn Db,
    entry: &str,
    home: &Path,
    cwd: &Path,
    root: &Path,
) -> Option<(Vec<PathBuf>, bool)> {
    if entry.starts_with("https://") || entry.starts_with("http://") {
        return None;
    }
    let expanded = match entry.strip_prefix("~/") {
        Some(rest) => path::display(&home.join(rest)),
        None => entry.to_owned(),
    };
    let absolute = Path::new(&expanded).is_absolute();
    let hits = if absolute {
        // Only the basename is a pattern; the directory is taken literally (I5).
        let full = path::normalize(Path::new(&expanded));
        let dir = full.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        let base = full.file_name().map(|b| b.to_string_lossy().into_owned()).unwrap_or_default();
        glob(db, dir, base, false).iter().map(|hit| hit.to_path_buf()).collect()
    } else {
        glob_up(db, &expanded, cwd, root)
            .into_iter()
            .flat_map(|(_, hits)| hits.iter().map(|hit| hit.to_path_buf()).collect::<Vec<_>>())
            .collect()
    };
    Some((hits, absolute))
}
