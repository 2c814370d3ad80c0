//! The Claude Code profile (`@anthropic-ai/claude-code` 2.1.332): the rule-file
//! `<system-reminder>` block of the first user message, the whole first request
//! (`--section request`: [`listing`], `request`, [`request_prose`]), and what a Read attaches.
//! Rule ids (CC1–CC21) are defined in `docs/profiles/claude-code.md`, each with the recorded case
//! that confirms it.
//!
//! Claude Code loads the user's files from `~/.claude` (CC1), then walks every directory
//! from the filesystem root down to the working directory (CC3), follows `@imports` (CC4,
//! CC5) and leaves out rules with `paths:` (CC6) until a Read of a file they match (CC11).
//! Discovery keeps every file it looked at with its [`Fate`], so `build --format json` and
//! `explain` can say why a file is in or out.

pub mod approval;
pub mod excludes;
pub mod fate;
pub mod installation;
pub mod lint;
pub mod listing;
pub mod markdown;
pub mod mcp;
mod nearby;
pub mod profile;
pub mod prose;
mod request;
pub mod request_prose;
pub mod session;
pub mod settings;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{ReadFailure, dir_listing, file_bytes, real_path};
use ctxgraph_db::path;
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::worktree::worktree;

pub use approval::{Approval, ApprovalState};
pub use nearby::{ReadAttachment, read_attachment, reads_in_session, reminder as nearby_reminder};
pub use prose::Prose;

/// The Claude Code version the recorded cases come from, whose texts the prose tables hold.
pub const RECORDED_VERSION: &str = "2.1.332";

/// CC5: an import at this level or deeper is not loaded (the file itself is level 0, its
/// imports level 1): four levels of imports are followed.
pub const MAX_IMPORT_DEPTH: usize = 5;
/// Files over this size are skipped (Claude Code's 4 MiB read limit).
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// CC4: the extensions an import may have (or none); anything else is skipped as binary.
const TEXT_EXTENSIONS: &[&str] = &[
    "md",
    "txt",
    "text",
    "json",
    "yaml",
    "yml",
    "toml",
    "xml",
    "csv",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "js",
    "ts",
    "tsx",
    "jsx",
    "mjs",
    "cjs",
    "mts",
    "cts",
    "py",
    "pyi",
    "pyw",
    "rb",
    "erb",
    "rake",
    "go",
    "rs",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "cpp",
    "cc",
    "cxx",
    "h",
    "hpp",
    "hxx",
    "cs",
    "swift",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "env",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "sql",
    "graphql",
    "gql",
    "proto",
    "vue",
    "svelte",
    "astro",
    "ejs",
    "hbs",
    "pug",
    "jade",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "clj",
    "cljs",
    "cljc",
    "edn",
    "hs",
    "lhs",
    "elm",
    "ml",
    "mli",
    "f",
    "f90",
    "f95",
    "for",
    "cmake",
    "make",
    "makefile",
    "gradle",
    "sbt",
    "rst",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "latex",
    "lock",
    "log",
    "diff",
    "patch",
];

/// Whose file it is: decides its label (CC2) and whether imports may leave the working
/// directory (CC8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `~/.claude/CLAUDE.md`, `~/.claude/rules/**/*.md` and their imports (CC1).
    User,
    /// `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/**/*.md` and their imports (CC3).
    Project,
    /// `CLAUDE.local.md` and its imports (CC3).
    Local,
    /// CC15: the auto memory's `MEMORY.md`, last.
    AutoMemory,
}

/// What became of one file Claude Code looked at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the block.
    Sent,
    /// CC9: empty or whitespace only (after frontmatter and comments); its imports are not
    /// followed either.
    Empty,
    /// CC11: a rule whose `paths:` match the file read: attached to the Read.
    Matched {
        /// The globs, relative to the directory holding `.claude`.
        globs: Vec<String>,
    },
    /// CC6: a rule with `paths:`; attached only when a Read touches a matching file (CC11).
    Conditional {
        /// The globs, relative to the directory holding `.claude`.
        globs: Vec<String>,
    },
    /// CC8: an import outside the working directory, and the project has not approved
    /// external imports.
    ExternalNotApproved,
    /// CC13: a project rule linked to a file or folder outside the working directory, and
    /// the project has not approved external imports.
    LinkOutside,
    /// CC5: an import [`MAX_IMPORT_DEPTH`] or more levels below the file the walk found.
    TooDeep,
    /// CC4: an import whose extension is not a text one.
    NotText,
    /// CC4/CC5: already in the block (or being loaded: a cycle); not repeated.
    AlreadyLoaded,
    /// CC4: an import that names nothing, or a directory.
    Missing,
    /// CC14: a `claudeMdExcludes` pattern matches it.
    Excluded {
        /// The pattern.
        pattern: String,
        /// The settings file that holds it.
        settings: PathBuf,
    },
    /// Could not be read, or over 4 MiB (Claude Code skips it).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One file Claude Code looked at, in the order it looked.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MemoryFile {
    /// Absolute path, lexically normalised.
    pub source: PathBuf,
    /// Whose file it is.
    pub kind: Kind,
    /// The file whose `@import` named it (CC4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<PathBuf>,
    /// Import depth: 0 for a file found by the walk.
    pub depth: usize,
    /// CC13: the symlink in a rules folder that named the file (`source` is its target's
    /// real path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<PathBuf>,
    /// The text as sent: frontmatter and comment blocks cut; trimmed in the first
    /// message, untrimmed in a Read's attachment (CC11); empty when not sent.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    /// Whether and why it is in the block.
    #[serde(flatten)]
    pub fate: Fate,
    /// CC6: the rules directory whose listing order placed it (found by that walk, or
    /// imported by a file it found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listed_in: Option<PathBuf>,
}

impl MemoryFile {
    /// Whether the block carries this file.
    pub fn is_sent(&self) -> bool {
        matches!(self.fate, Fate::Sent | Fate::Matched { .. })
    }

    /// The rule [`MemoryFile::reason`] gives for the fate: the fate's own, else the one that
    /// found the file.
    pub fn rule(&self) -> &'static str {
        let found = match (&self.parent, self.kind) {
            (Some(_), _) => "CC4",
            (None, _) if self.link.is_some() => "CC13",
            (None, Kind::User) => "CC1",
            (None, Kind::Project | Kind::Local) => "CC3",
            (None, Kind::AutoMemory) => "CC15",
        };
        match &self.fate {
            Fate::Sent | Fate::Unreadable { .. } => found,
            Fate::Matched { .. } | Fate::Conditional { .. } => "CC11",
            Fate::Empty => "CC9",
            Fate::ExternalNotApproved => "CC8",
            Fate::LinkOutside => "CC13",
            Fate::AlreadyLoaded if self.link.is_some() => "CC13",
            Fate::TooDeep | Fate::AlreadyLoaded => "CC5",
            Fate::NotText | Fate::Missing => "CC4",
            Fate::Excluded { .. } => "CC14",
        }
    }

    /// Why the file is in the block, or why not, in words, with the rule behind it.
    pub fn reason(&self, cwd: &Path, approval: &Approval) -> String {
        let why_here = match (&self.parent, self.kind, &self.link) {
            (Some(parent), _, _) => format!("imported by {} (CC4)", parent.display()),
            (None, _, Some(link)) => format!(
                "the rules folder's link {} points here: Claude Code names a linked rule by its target's real path, at the link's place (CC13)",
                link.display()
            ),
            (None, Kind::User, None) => "the user's file for every project, in ~/.claude (CC1)".to_owned(),
            (None, Kind::Project | Kind::Local, None) => {
                "a rule file in a directory from the filesystem root down to the working directory (CC3)"
                    .to_owned()
            }
            (None, Kind::AutoMemory, None) => {
                "the index of the project's auto memory in ~/.claude/projects, last in the block (CC15)"
                    .to_owned()
            }
        };
        match &self.fate {
            Fate::Sent => why_here,
            Fate::Matched { globs } => {
                format!("{why_here}; its paths: ({}) match the file read (CC6, CC11)", globs.join(", "))
            }
            Fate::Empty => format!("{why_here}; left out: empty after frontmatter and comments (CC9)"),
            Fate::Conditional { globs } => format!(
                "{why_here}; held back: its paths: ({}) attach it only when a Read touches a matching file (CC6, CC11)",
                globs.join(", ")
            ),
            Fate::ExternalNotApproved => format!(
                "{why_here}; left out: outside the working directory {} and {} (CC8)",
                cwd.display(),
                approval.describe()
            ),
            Fate::TooDeep => format!(
                "{why_here}; left out: import level {} (only levels below {MAX_IMPORT_DEPTH} are followed) (CC5)",
                self.depth
            ),
            Fate::NotText => format!("{why_here}; left out: not a text file extension (CC4)"),
            Fate::Excluded { pattern, settings } => format!(
                "{why_here}; left out: claudeMdExcludes pattern `{pattern}` in {} matches it (CC14)",
                settings.display()
            ),
            Fate::LinkOutside => format!(
                "{why_here}; left out: the target is outside the working directory {} and {} (CC13)",
                cwd.display(),
                approval.describe()
            ),
            Fate::AlreadyLoaded if self.link.is_some() => {
                format!("{why_here}; not repeated: the target is already loaded (CC13)")
            }
            Fate::AlreadyLoaded => format!("{why_here}; not repeated: already loaded (CC5)"),
            Fate::Missing => format!("{why_here}; left out: no such file (CC4)"),
            Fate::Unreadable { reason } => format!("{why_here}; left out: cannot be read ({reason})"),
        }
    }
}

/// Everything Claude Code decides about its rule files for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ClaudeMdContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// `~/.claude`.
    pub config_dir: PathBuf,
    /// CC8: the approval of external imports read from `~/.claude.json`.
    pub approval: Approval,
    /// Every file looked at, sent or not, in order.
    pub files: Vec<MemoryFile>,
}

impl ClaudeMdContext {
    /// The files the block carries, in block order.
    pub fn sent(&self) -> impl Iterator<Item = &MemoryFile> {
        self.files.iter().filter(|f| f.is_sent())
    }

    /// CC2: the `<system-reminder>` block, or `None` when no file is sent.
    pub fn reminder(&self, prose: &Prose) -> Option<String> {
        let entries: Vec<String> = self.sent().map(|file| entry(file, prose)).collect();
        if entries.is_empty() {
            return None;
        }
        Some(format!("<system-reminder>\n{}\n\n{}\n</system-reminder>", prose.preamble, entries.join("\n\n")))
    }
}

/// CC2: one file's entry: `Contents of PATH LABEL:`, a blank line, the text.
pub fn entry(file: &MemoryFile, prose: &Prose) -> String {
    format!("Contents of {}{}:\n\n{}", path::display(&file.source), prose.label(file.kind), file.content)
}

/// `~/.claude`, where the user's files live (CC1).
pub fn config_dir(db: &dyn Db, ws: Workspace) -> PathBuf {
    ws.host(db).home(db).join(".claude")
}

/// The whole rule-file context Claude Code builds in `ws`.
#[salsa::tracked(returns(ref))]
pub fn claude_md_context(db: &dyn Db, ws: Workspace) -> ClaudeMdContext {
    let cwd = ws.cwd(db).clone();
    let config_dir = config_dir(db, ws);
    let tree = worktree(db, ws);
    let project = if tree.is_git() { tree.root.clone() } else { cwd.clone() };
    let memory = config_dir.join("projects").join(project_slug(&project)).join("memory").join("MEMORY.md");
    let approval = approval::approval(db, ws.host(db), project).clone();
    let home = ws.host(db).home(db).clone();
    let excludes = excludes::claude_md_excludes(db, ws);
    let mut loader = Loader::new(db, &cwd, &home, approval.approved(), true, excludes);

    // CC1: the user's files, whose imports may go anywhere.
    loader.load(&config_dir.join("CLAUDE.md"), Kind::User, 0, None, false);
    loader.rules_dir(&config_dir.join("rules"), Kind::User);
    // CC3: every directory from the root down, each: CLAUDE.md, .claude/CLAUDE.md,
    // .claude/rules, CLAUDE.local.md.
    for dir in walk_dirs(&cwd) {
        loader.load(&dir.join("CLAUDE.md"), Kind::Project, 0, None, false);
        loader.load(&dir.join(".claude").join("CLAUDE.md"), Kind::Project, 0, None, false);
        loader.rules_dir(&dir.join(".claude").join("rules"), Kind::Project);
        loader.load(&dir.join("CLAUDE.local.md"), Kind::Local, 0, None, false);
    }
    // CC15: the project's auto memory, last.
    loader.load(&memory, Kind::AutoMemory, 0, None, false);
    let files = loader.files;
    ClaudeMdContext { cwd, config_dir, approval, files }
}

/// CC15: the folder name Claude Code keeps a project's files under in `~/.claude/projects`:
/// the project's path (the git root, else the working directory) with every character but
/// an ASCII letter or digit written as `-`.
pub fn project_slug(project: &Path) -> String {
    project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// CC15: how many lines of `MEMORY.md` Claude Code sends.
pub const AUTO_MEMORY_LINES: usize = 200;

/// CC15: the index's text as sent: whole up to [`AUTO_MEMORY_LINES`] lines. Past that Claude
/// Code sends the first lines and a warning of its own with the counts; ctxgraph marks the
/// warning's place instead of writing it.
fn auto_memory_content(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= AUTO_MEMORY_LINES {
        return content.to_owned();
    }
    format!(
        "{}\n\n<Claude Code's warning that MEMORY.md is {} lines (limit: {AUTO_MEMORY_LINES}): not reproduced>",
        lines[..AUTO_MEMORY_LINES].join("\n"),
        lines.len()
    )
}

/// CC3: the directories from the filesystem root (itself excluded) down to `cwd`.
fn walk_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        cwd.ancestors().filter(|dir| dir.parent().is_some()).map(Path::to_path_buf).collect();
    dirs.reverse();
    dirs
}

/// One pass of Claude Code's loader: the paths it has processed, shared by the whole walk
/// (so a file is loaded once, first where it is met), and what it found.
struct Loader<'a> {
    db: &'a dyn Db,
    cwd: &'a Path,
    /// CC13: the working directory's real path, which a linked rule must stay inside (the
    /// process's working directory is a real path).
    real_cwd: PathBuf,
    home: &'a Path,
    /// CC8: `hasClaudeMdExternalIncludesApproved`.
    approved: bool,
    /// CC2 trims each file's text in the first message; CC11 attaches it untrimmed.
    trim: bool,
    /// CC14: the patterns that keep files out.
    excludes: excludes::ExcludeMatcher<'a>,
    seen: HashSet<PathBuf>,
    files: Vec<MemoryFile>,
    /// CC6: the rules directory being walked, whose listing orders what it finds.
    listing: Option<PathBuf>,
}

impl<'a> Loader<'a> {
    fn new(
        db: &'a dyn Db,
        cwd: &'a Path,
        home: &'a Path,
        approved: bool,
        trim: bool,
        excludes: &'a excludes::Excludes,
    ) -> Self {
        let real_cwd = real_path(db, cwd);
        Loader {
            db,
            cwd,
            real_cwd,
            home,
            approved,
            trim,
            excludes: excludes.matcher(),
            seen: HashSet::new(),
            files: Vec::new(),
            listing: None,
        }
    }

    fn record(
        &mut self,
        source: &Path,
        kind: Kind,
        depth: usize,
        parent: Option<&Path>,
        fate: Fate,
    ) -> usize {
        self.files.push(MemoryFile {
            source: source.to_path_buf(),
            kind,
            parent: parent.map(Path::to_path_buf),
            depth,
            link: None,
            content: String::new(),
            fate,
            listed_in: self.listing.clone(),
        });
        self.files.len() - 1
    }

    /// Loads one file and, after it, its imports (CC4). Returns the indexes of the files
    /// it recorded, the file itself first when it was read.
    fn load(
        &mut self,
        source: &Path,
        kind: Kind,
        depth: usize,
        parent: Option<&Path>,
        in_rules: bool,
    ) -> Vec<usize> {
        let is_import = parent.is_some();
        let may_leave_cwd = kind == Kind::User || self.approved;
        if self.seen.contains(source) {
            if is_import {
                self.record(source, kind, depth, parent, Fate::AlreadyLoaded);
            }
            return Vec::new();
        }
        if kind != Kind::AutoMemory
            && let Some(exclude) = self.excludes.matching(source)
        {
            let fate =
                Fate::Excluded { pattern: exclude.pattern.clone(), settings: exclude.settings.clone() };
            self.record(source, kind, depth, parent, fate);
            return Vec::new();
        }
        if depth >= MAX_IMPORT_DEPTH {
            self.record(source, kind, depth, parent, Fate::TooDeep);
            return Vec::new();
        }
        if depth > 0 && !may_leave_cwd && !source.starts_with(self.cwd) {
            self.record(source, kind, depth, parent, Fate::ExternalNotApproved);
            return Vec::new();
        }
        let file = self.db.files().get(self.db, source);
        match file.kind(self.db) {
            FileKind::File | FileKind::Other | FileKind::Inaccessible => {}
            FileKind::Missing | FileKind::Directory => {
                if is_import {
                    self.record(source, kind, depth, parent, Fate::Missing);
                }
                return Vec::new();
            }
        }
        self.seen.insert(source.to_path_buf());
        let bytes = match file_bytes(self.db, file) {
            Ok(bytes) if bytes.len() > MAX_FILE_BYTES => {
                let reason = format!("over Claude Code's {MAX_FILE_BYTES}-byte limit");
                return vec![self.record(source, kind, depth, parent, Fate::Unreadable { reason })];
            }
            Ok(bytes) => bytes.clone(),
            Err(ReadFailure::NotFound | ReadFailure::IsADirectory) => return Vec::new(),
            Err(err) => {
                return vec![self.record(
                    source,
                    kind,
                    depth,
                    parent,
                    Fate::Unreadable { reason: err.to_string() },
                )];
            }
        };
        if !has_text_extension(source) {
            return vec![self.record(source, kind, depth, parent, Fate::NotText)];
        }
        let parsed = markdown::parse(&String::from_utf8_lossy(&bytes));
        if js_trim(&parsed.content).is_empty() {
            return vec![self.record(source, kind, depth, parent, Fate::Empty)];
        }
        // CC6: `paths:` matters only for what a rules directory loads (its imports
        // included); a CLAUDE.md with `paths:` is sent all the same.
        let fate = match parsed.globs {
            Some(globs) if in_rules => Fate::Conditional { globs },
            _ => Fate::Sent,
        };
        let index = self.record(source, kind, depth, parent, fate);
        let content = if self.trim { js_trim(&parsed.content) } else { &parsed.content };
        if kind == Kind::AutoMemory {
            // CC15: the index's imports are not followed, and only its first lines are sent.
            self.files[index].content = auto_memory_content(content);
            return vec![index];
        }
        content.clone_into(&mut self.files[index].content);
        let mut loaded = vec![index];
        let dir = source.parent().unwrap_or(source).to_path_buf();
        for import in parsed.imports {
            let target = resolve_import(self.home, &dir, &import);
            if !may_leave_cwd && !target.starts_with(self.cwd) {
                loaded.push(self.record(&target, kind, depth + 1, Some(source), Fate::ExternalNotApproved));
                continue;
            }
            loaded.extend(self.load(&target, kind, depth + 1, Some(source), in_rules));
        }
        loaded
    }

    /// CC6: every `.md` file below a rules directory, recursively, in the file system's
    /// listing order, depth first; a rule with `paths:` (and what it imports with `paths:`)
    /// is held back.
    fn rules_dir(&mut self, dir: &Path, kind: Kind) {
        // CC13: a project's rules folder that is a link, or sits in a `.claude` that is one,
        // and leads outside the working directory is skipped whole without approval. Told
        // by real paths alone (no listing of the folder above, which changes with every new
        // file there): the link is at `.claude` or `rules` when the folder holding `.claude`
        // resolves elsewhere than the rules folder's parent's parent.
        if kind != Kind::User && !self.approved {
            let real = real_path(self.db, dir);
            if real != dir && !real.starts_with(&self.real_cwd) {
                let holder = dir.parent().and_then(Path::parent);
                let at_claude_or_rules = holder
                    .is_none_or(|holder| real_path(self.db, holder).join(".claude").join("rules") != real);
                if at_claude_or_rules {
                    self.record_link(&real, kind, dir, Fate::LinkOutside);
                    return;
                }
            }
        }
        // CC6: what the walk finds is placed by this folder's listing (named on its blocks).
        let outermost = self.listing.is_none();
        if outermost {
            self.listing = Some(dir.to_path_buf());
        }
        self.rules_walk(dir, kind, &mut HashSet::new());
        if outermost {
            self.listing = None;
        }
    }

    /// CC13: Claude Code walks a rules folder by real paths: each entry is loaded (or
    /// descended into) as its target's real path, at the entry's place; a link whose target
    /// is outside the working directory is skipped for a project without approval of
    /// external imports (the user's rules follow links anywhere). A folder already walked is
    /// not walked again, so a link back up ends.
    fn rules_walk(&mut self, dir: &Path, kind: Kind, walked: &mut HashSet<PathBuf>) {
        let real_dir = real_path(self.db, dir);
        if !walked.insert(real_dir.clone()) {
            return;
        }
        let may_leave_cwd = kind == Kind::User || self.approved;
        let listing = dir_listing(self.db, self.db.files().get(self.db, dir)).clone();
        for entry in listing.iter() {
            let child = dir.join(entry.name.as_str());
            let (target, target_kind) = match entry.kind {
                EntryKind::Symlink => {
                    (real_path(self.db, &child), self.db.files().get(self.db, &child).kind(self.db))
                }
                EntryKind::Directory => (real_dir.join(entry.name.as_str()), FileKind::Directory),
                EntryKind::File => (real_dir.join(entry.name.as_str()), FileKind::File),
                EntryKind::Other => continue,
            };
            let linked = target != real_dir.join(entry.name.as_str());
            let outside = linked && !may_leave_cwd && !target.starts_with(&self.real_cwd);
            // Claude Code's test is `name.endsWith(".md")` on the entry's own name:
            // case-sensitive, as here.
            let markdown = Path::new(entry.name.as_str()).extension().is_some_and(|ext| ext == "md");
            match target_kind {
                FileKind::Directory if outside => self.record_link(&target, kind, &child, Fate::LinkOutside),
                FileKind::Directory => self.rules_walk(&target, kind, walked),
                FileKind::File if markdown && outside => {
                    self.record_link(&target, kind, &child, Fate::LinkOutside);
                }
                FileKind::File if markdown => {
                    let loaded = self.load(&target, kind, 0, None, true);
                    if linked {
                        match loaded.first() {
                            Some(&index) => self.files[index].link = Some(child),
                            None => self.record_link(&target, kind, &child, Fate::AlreadyLoaded),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// CC13: a rules folder's link that loads nothing itself.
    fn record_link(&mut self, target: &Path, kind: Kind, link: &Path, fate: Fate) {
        let index = self.record(target, kind, 0, None, fate);
        self.files[index].link = Some(link.to_path_buf());
    }
}

/// CC4: `~/x` from the home directory, `/x` as is, anything else from the importing file's
/// directory; lexically normalised.
fn resolve_import(home: &Path, dir: &Path, import: &str) -> PathBuf {
    match import.strip_prefix("~/") {
        Some(rest) => path::resolve(home, rest),
        None => path::resolve(dir, import),
    }
}

fn has_text_extension(path: &Path) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        None => true,
        Some(ext) => TEXT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
    }
}

/// JavaScript's `trim`: Unicode white space and the byte order mark.
fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}
