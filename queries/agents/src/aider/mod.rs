//! The Aider profile (`aider-chat` 0.86.2): the read-only files it puts in its first user
//! message. Rule ids (AI1–AI9) are defined in `docs/profiles/aider.md`, each with the
//! recorded case that confirms it.
//!
//! Aider loads no rule file by itself (AI1). Its read-only files come from one list, taken
//! whole from the first place that sets it: `--read` on the command line (`-c read=FILE`
//! here), `$AIDER_READ`, then the `read:` of the nearest `.aider.conf.yml` of the working
//! directory, the git root and the home directory (AI2, AI3). Each entry is a path relative to
//! the working directory, a directory standing for every file below it (AI6); what exists is
//! kept once per real path, in a Python set (AI5), which is why the order of two files or more
//! changes between Aider's starts. Discovery keeps every file it looked at with its
//! [`Fate`], so `build --format json` and `explain` can say why a file is in or out.

pub mod config;
pub mod installation;
pub mod profile;
pub mod wording;

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes, real_path};
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::worktree::worktree;

pub use config::{AiderError, ConfigFate, ConfigFile, config_files};
pub use wording::Wording;

/// AI2: the configuration file's name, looked for in the working directory, the git root and
/// the home directory.
pub const CONFIG_NAME: &str = ".aider.conf.yml";

/// AI2: the environment variable that sets the list when `--read` does not.
pub const READ_ENV: &str = "AIDER_READ";

/// AI6: the extensions Aider treats as images (matched case-sensitively at the end of the
/// path): sent as an image message of their own, never in the read-only text.
const IMAGE_EXTENSIONS: [&str; 8] = [".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tiff", ".webp", ".pdf"];

/// AI8: the fences Aider can put around a file, in the order it tries them.
const FENCES: [(&str, &str); 7] = [
    ("```", "```"),
    ("````", "````"),
    ("<source>", "</source>"),
    ("<code>", "</code>"),
    ("<pre>", "</pre>"),
    ("<codeblock>", "</codeblock>"),
    ("<sourcecode>", "</sourcecode>"),
];

/// Where the list of read-only files came from (AI2).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum ListFrom {
    /// `--read` on the command line (`-c read=FILE`).
    CommandLine,
    /// `$AIDER_READ`.
    Environment,
    /// The `read:` of this configuration file.
    Config {
        /// The file.
        path: PathBuf,
    },
    /// Nothing sets it: Aider sends no read-only file.
    Nothing,
}

/// What became of one file Aider considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the read-only message.
    Sent,
    /// AI6: nothing exists at the path (a dangling symlink included): Aider warns and skips it.
    Missing,
    /// AI6: an image: sent in a message of its own, not in the read-only text.
    Image,
    /// AI7: not UTF-8: Aider cannot decode it and leaves it out.
    NotUtf8,
    /// AI7: the read failed.
    Unreadable {
        /// Why.
        reason: String,
    },
    /// AI5: the same real file as one named before: sent once.
    Duplicate {
        /// The real path it is sent under.
        of: PathBuf,
    },
}

/// One file Aider considered, in the order the list names it (a directory's files in its
/// place, AI6).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ReadOnly {
    /// The list entry that named it, as written.
    pub named: String,
    /// The path Aider keeps: the entry resolved against the working directory, symlinks
    /// followed (as named when nothing exists there).
    pub path: PathBuf,
    /// AI4: the name the message shows: relative to the root.
    pub shown: String,
    /// Whether and why it is sent.
    #[serde(flatten)]
    pub fate: Fate,
    /// AI7: the text as Aider reads it (newlines translated); empty unless sent.
    #[serde(skip)]
    pub content: String,
}

impl ReadOnly {
    /// Whether the read-only message carries this file.
    pub fn is_sent(&self) -> bool {
        self.fate == Fate::Sent
    }
}

/// Everything Aider decides about its read-only files for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AiderContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// The git root, when the working directory is in a repository.
    pub git_root: Option<PathBuf>,
    /// AI4: what names are shown relative to: the git root, else the working directory.
    pub root: PathBuf,
    /// AI2/AI3: every configuration file looked for, nearest first, and what it gave.
    pub configs: Vec<ConfigFile>,
    /// AI2: where the list came from.
    pub list_from: ListFrom,
    /// The list's entries, as written.
    pub list: Vec<String>,
    /// Every file considered, in list order.
    pub files: Vec<ReadOnly>,
    /// AI8: the fence around every file.
    pub fence: (&'static str, &'static str),
}

impl AiderContext {
    /// The files in the message, in list order (Aider's own order is a Python set's, AI5).
    pub fn sent(&self) -> impl Iterator<Item = &ReadOnly> {
        self.files.iter().filter(|f| f.is_sent())
    }

    /// AI5: whether the order of the sent files changes between Aider's starts.
    pub fn is_unordered(&self) -> bool {
        self.sent().nth(1).is_some()
    }

    /// AI4: one file's part of the message.
    pub fn part(&self, file: &ReadOnly) -> String {
        let (open, close) = self.fence;
        format!("\n{}\n{open}\n{}{close}\n", file.shown, file.content)
    }

    /// AI4: exactly what `build --agent aider` prints: the first user message, Aider's
    /// sentences then every sent file's part; empty when no file is sent (no such message).
    pub fn text(&self, wording: &Wording) -> String {
        if self.sent().next().is_none() {
            return String::new();
        }
        let mut text = wording.read_only_prefix.clone();
        for file in self.sent() {
            text.push_str(&self.part(file));
        }
        text
    }
}

/// AI7: a file's text as Python's `open(…, encoding="utf-8")` reads it: strict UTF-8 (a
/// byte-order mark kept as U+FEFF), universal newlines (`\r\n` and a lone `\r` become `\n`).
pub fn python_text(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    Some(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// AI8: Python's `str.splitlines` boundaries (after newline translation only these remain
/// besides `\n`).
fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}'])
}

/// AI8: the first fence no line of any sent file starts with (either half); the first one
/// when every fence is taken.
fn choose_fence<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> (&'static str, &'static str) {
    FENCES
        .into_iter()
        .find(|(open, close)| {
            !texts
                .clone()
                .any(|t| python_lines(t).any(|line| line.starts_with(open) || line.starts_with(close)))
        })
        .unwrap_or(FENCES[0])
}

/// `Path(entry).expanduser()`, then taken from the working directory.
fn entry_path(entry: &str, cwd: &Path, home: &Path) -> PathBuf {
    let expanded = if entry == "~" {
        home.to_path_buf()
    } else if let Some(rest) = entry.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(entry)
    };
    ctxgraph_db::path::normalize(&cwd.join(expanded))
}

/// AI6: every file below `dir` as Python's `Path.rglob("*")` finds it: hidden names
/// included, symlinks to files kept, symlinked directories not descended into.
fn files_below(db: &dyn Db, dir: &Path, out: &mut Vec<PathBuf>) {
    // Aider keeps read-only files in a set (unordered): by name, for a stable answer.
    for entry in &dir_listing_by_name(db, db.files().get(db, dir)) {
        let path = dir.join(entry.name.as_str());
        match entry.kind {
            EntryKind::Directory => files_below(db, &path, out),
            EntryKind::File => out.push(path),
            EntryKind::Symlink if db.files().get(db, &path).kind(db) == FileKind::File => out.push(path),
            EntryKind::Symlink | EntryKind::Other => {}
        }
    }
}

/// AI2–AI8: the whole read-only message Aider builds in `ws`, with `command_line` the
/// `--read` entries (`-c read=FILE`).
#[salsa::tracked(returns(ref))]
pub fn aider_context(
    db: &dyn Db,
    ws: Workspace,
    command_line: Vec<String>,
) -> Result<AiderContext, AiderError> {
    let cwd = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    let tree = worktree(db, ws);
    let git_root = tree.is_git().then(|| real_path(db, &tree.root));
    let root = git_root.clone().unwrap_or_else(|| real_path(db, &cwd));
    let env = ws.host(db).vars(db).get(READ_ENV).cloned();
    let (configs, config_list) = config_files(db, &cwd, tree.is_git().then_some(tree.root.as_path()), &home)?;
    let (list_from, list) = if !command_line.is_empty() {
        (ListFrom::CommandLine, command_line)
    } else if let Some(value) = env {
        (ListFrom::Environment, config::env_list(&value))
    } else if let Some((path, list)) = config_list {
        (ListFrom::Config { path }, list)
    } else {
        (ListFrom::Nothing, Vec::new())
    };
    let configs = configs
        .into_iter()
        .map(|mut c| {
            if c.fate == ConfigFate::Used && list_from != (ListFrom::Config { path: c.path.clone() }) {
                c.fate = ConfigFate::Overridden;
            }
            c
        })
        .collect();

    // AI6: each entry resolved from the working directory; a directory is its files.
    let mut named: Vec<(String, PathBuf)> = Vec::new();
    for entry in &list {
        let path = entry_path(entry, &cwd, &home);
        let resolved = real_path(db, &path);
        if db.files().get(db, &resolved).kind(db) == FileKind::Directory {
            let mut below = Vec::new();
            files_below(db, &resolved, &mut below);
            named.extend(below.into_iter().map(|p| (entry.clone(), real_path(db, &p))));
        } else {
            named.push((entry.clone(), resolved));
        }
    }
    let mut files: Vec<ReadOnly> = Vec::new();
    for (entry, path) in named {
        let shown = ctxgraph_db::path::relative(&root, &path);
        let kind = db.files().get(db, &path).kind(db);
        let mut file = ReadOnly { named: entry, path, shown, fate: Fate::Sent, content: String::new() };
        if files.iter().any(|f| f.path == file.path && f.fate != Fate::Missing) {
            file.fate = Fate::Duplicate { of: file.path.clone() };
        } else if kind == FileKind::Missing {
            file.fate = Fate::Missing;
        } else if IMAGE_EXTENSIONS.iter().any(|ext| file.path.to_string_lossy().ends_with(ext)) {
            file.fate = Fate::Image;
        } else {
            match file_bytes(db, db.files().get(db, &file.path)) {
                Err(err) => file.fate = Fate::Unreadable { reason: err.to_string() },
                Ok(bytes) => match python_text(bytes) {
                    Some(text) => file.content = text,
                    None => file.fate = Fate::NotUtf8,
                },
            }
        }
        files.push(file);
    }
    let fence = choose_fence(files.iter().filter(|f| f.is_sent()).map(|f| f.content.as_str()));
    Ok(AiderContext { cwd, git_root, root, configs, list_from, list, files, fence })
}
