//! The Claude Code profile (`@anthropic-ai/claude-code` 2.1.332): the rule-file
//! `<system-reminder>` block of the first user message, and what a Read attaches. Rule ids
//! (CC1–CC12) are defined in `docs/profiles/claude-code.md`, each with the recorded case
//! that confirms it.
//!
//! Claude Code loads the user's files from `~/.claude` (CC1), then walks every directory
//! from the filesystem root down to the working directory (CC3), follows `@imports` (CC4,
//! CC5) and leaves out rules with `paths:` (CC6) until a Read of a file they match (CC11).
//! Discovery keeps every file it looked at with its [`Fate`], so `build --format json` and
//! `explain` can say why a file is in or out.

pub mod approval;
pub mod fate;
pub mod markdown;
mod nearby;
pub mod profile;
pub mod prose;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{ReadFailure, dir_listing, file_bytes};
use ctxgraph_db::path;
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::worktree::worktree;

pub use approval::{Approval, ApprovalState};
pub use nearby::{ReadAttachment, read_attachment, reads_in_session, reminder as nearby_reminder};
pub use prose::{Prose, ProseSource};

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
    /// CC5: an import [`MAX_IMPORT_DEPTH`] or more levels below the file the walk found.
    TooDeep,
    /// CC4: an import whose extension is not a text one.
    NotText,
    /// CC4/CC5: already in the block (or being loaded: a cycle); not repeated.
    AlreadyLoaded,
    /// CC4: an import that names nothing, or a directory.
    Missing,
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
    /// The text as sent: frontmatter and comment blocks cut, trimmed (empty when not sent).
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
            (None, Kind::User) => "CC1",
            (None, Kind::Project | Kind::Local) => "CC3",
        };
        match &self.fate {
            Fate::Sent | Fate::Unreadable { .. } => found,
            Fate::Matched { .. } | Fate::Conditional { .. } => "CC11",
            Fate::Empty => "CC9",
            Fate::ExternalNotApproved => "CC8",
            Fate::TooDeep | Fate::AlreadyLoaded => "CC5",
            Fate::NotText | Fate::Missing => "CC4",
        }
    }

    /// Why the file is in the block, or why not, in words, with the rule behind it.
    pub fn reason(&self, cwd: &Path, approval: &Approval) -> String {
        let why_here = match (&self.parent, self.kind) {
            (Some(parent), _) => format!("imported by {} (CC4)", parent.display()),
            (None, Kind::User) => "the user's file for every project, in ~/.claude (CC1)".to_owned(),
            (None, Kind::Project | Kind::Local) => {
                "a rule file in a directory from the filesystem root down to the working directory (CC3)"
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
    let approval = approval::approval(db, ws.host(db), project).clone();
    let home = ws.host(db).home(db).clone();
    let mut loader = Loader {
        db,
        cwd: &cwd,
        home: &home,
        approved: approval.approved(),
        seen: HashSet::new(),
        files: Vec::new(),
        listing: None,
    };

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
    let files = loader.files;
    ClaudeMdContext { cwd, config_dir, approval, files }
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
    home: &'a Path,
    /// CC8: `hasClaudeMdExternalIncludesApproved`.
    approved: bool,
    seen: HashSet<PathBuf>,
    files: Vec<MemoryFile>,
    /// CC6: the rules directory being walked, whose listing orders what it finds.
    listing: Option<PathBuf>,
}

impl Loader<'_> {
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
        js_trim(&parsed.content).clone_into(&mut self.files[index].content);
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
        let outermost = self.listing.is_none();
        if outermost {
            self.listing = Some(dir.to_path_buf());
        }
        self.rules_dir_entries(dir, kind);
        if outermost {
            self.listing = None;
        }
    }

    fn rules_dir_entries(&mut self, dir: &Path, kind: Kind) {
        let listing = dir_listing(self.db, self.db.files().get(self.db, dir)).clone();
        for entry in listing.iter() {
            let child = dir.join(&entry.name);
            let is_dir = match entry.kind {
                EntryKind::Directory => true,
                EntryKind::Symlink => {
                    self.db.files().get(self.db, &child).kind(self.db) == FileKind::Directory
                }
                EntryKind::File | EntryKind::Other => false,
            };
            if is_dir {
                self.rules_dir_entries(&child, kind);
            } else if Path::new(&entry.name).extension().is_some_and(|ext| ext == "md") {
                // Claude Code's test is `name.endsWith(".md")`: case-sensitive, as here.
                self.load(&child, kind, 0, None, true);
            }
        }
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
