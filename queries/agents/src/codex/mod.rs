//! The Codex CLI profile (`@openai/codex` 0.171.0): the `AGENTS.md` instructions message and the skills message.
//! Rule ids (CX1–CX13) are defined in `docs/profiles/codex.md`, each with the recorded case that
//! confirms it.
//!
//! Codex sends its rule files as one user message, built from the global file in
//! `$CODEX_HOME` (CX1) and one file per directory from the git root down to the working
//! directory (CX2, CX3), under a byte budget (CX5). Discovery keeps every file it looked at
//! with its [`Fate`], so `build --format json` can say why a file is in or out.

pub mod config;
pub mod fate;
pub mod lint;
pub mod profile;
pub mod rollout;
pub mod skills;
pub mod wording;

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{ReadFailure, file_bytes};
use ctxgraph_db::system::FileKind;
use ctxgraph_db::worktree::worktree;

pub use config::{Budget, BudgetSource};

/// The file name that takes precedence in a directory (CX3).
pub const OVERRIDE_NAME: &str = "AGENTS.override.md";
/// The rule file's name.
pub const AGENTS_NAME: &str = "AGENTS.md";
/// CX4: what joins the global text and the project files.
pub const PROJECT_DOC_SEPARATOR: &str = "\n\n--- project-doc ---\n\n";

/// Why Codex would not start (so there is nothing to reproduce).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CodexError {
    /// `$CODEX_HOME/config.toml` is unreadable or invalid.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Config {
        /// The config file.
        path: PathBuf,
        /// 1-based line (0 when the file could not be read at all).
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong.
        message: String,
        /// The line as written, for a snippet (empty without a position).
        line_text: String,
    },
}

/// Where a file would go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// `$CODEX_HOME`: the user's file for every project (CX1).
    Global,
    /// A directory between the git root and the working directory (CX2).
    Project,
}

/// What became of one file Codex looked at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the message whole.
    Included,
    /// CX5: in the message, its first `kept` bytes only: the budget ran out inside it.
    Cut {
        /// Bytes kept.
        kept: usize,
    },
    /// CX5: left out, the budget was spent by the files before it.
    OverBudget,
    /// CX6: empty or whitespace only.
    Empty,
    /// CX1/CX3: `AGENTS.override.md` in the same directory is used instead.
    Shadowed {
        /// The override.
        by: PathBuf,
    },
    /// The file could not be read (not confirmed against Codex: it is left out).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One file Codex looked at, in the order it looked.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Doc {
    /// Absolute path.
    pub source: PathBuf,
    /// Global or project.
    pub scope: Scope,
    /// The file's size in bytes.
    pub bytes: usize,
    /// Exactly the text the message carries for this file (empty when left out).
    pub text: String,
    /// Whether and why it is in the message.
    #[serde(flatten)]
    pub fate: Fate,
}

impl Doc {
    /// Whether the message carries (some of) this file.
    pub fn is_sent(&self) -> bool {
        matches!(self.fate, Fate::Included | Fate::Cut { .. })
    }

    /// The rule [`Doc::reason`] gives for the fate (its last citation).
    pub fn rule(&self) -> &'static str {
        match (&self.fate, self.scope) {
            (Fate::Cut { .. } | Fate::OverBudget, _) => "CX5",
            (Fate::Empty, _) => "CX6",
            (Fate::Shadowed { .. }, _) => "CX3",
            (Fate::Included | Fate::Unreadable { .. }, Scope::Global) => "CX1",
            (Fate::Included | Fate::Unreadable { .. }, Scope::Project) => "CX2",
        }
    }

    /// Why the file is in the message, or why not, in words, with the rule behind it.
    pub fn reason(&self, budget: &Budget) -> String {
        let why_here = match self.scope {
            Scope::Global => "the user's file for every project (CX1)",
            Scope::Project => "one file per directory from the git root down to the working directory (CX2)",
        };
        match &self.fate {
            Fate::Included => why_here.to_owned(),
            Fate::Cut { kept } => format!(
                "{why_here}; cut after {kept} of its {} bytes: project_doc_max_bytes = {} ran out (CX5)",
                self.bytes, budget.bytes
            ),
            Fate::OverBudget => {
                format!(
                    "left out: the files before it used all of project_doc_max_bytes = {} (CX5)",
                    budget.bytes
                )
            }
            Fate::Empty => "left out: empty or whitespace only (CX6)".to_owned(),
            Fate::Shadowed { by } => format!("shadowed by {} in the same directory (CX3)", by.display()),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) ({})", self.rule()),
        }
    }
}

/// Everything Codex decides about its rule files for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AgentsContext {
    /// The working directory the message names.
    pub cwd: PathBuf,
    /// CX2: the git root the walk starts at; without one only `cwd` is searched.
    pub git_root: Option<PathBuf>,
    /// CX5: the budget in force.
    pub budget: Budget,
    /// Every file looked at, sent or not, in order.
    pub docs: Vec<Doc>,
    /// CX4: the user message, or `None` when no file contributes.
    pub message: Option<String>,
}

/// The whole `AGENTS.md` context Codex builds in `ws`. `max_bytes` is a command-line
/// `-c project_doc_max_bytes=N` override of the config file's budget.
#[salsa::tracked(returns(ref))]
pub fn agents_context(
    db: &dyn Db,
    ws: Workspace,
    max_bytes: Option<u64>,
) -> Result<AgentsContext, CodexError> {
    let budget = match max_bytes {
        Some(bytes) => Budget { bytes, source: BudgetSource::CommandLine },
        None => config::config_budget(db, ws.host(db)).clone()?,
    };
    let cwd = ws.cwd(db).clone();
    let git_root = git_root(db, ws);

    let mut docs = global_docs(db, ws);
    let mut remaining = usize::try_from(budget.bytes).unwrap_or(usize::MAX);
    // CX5: a budget of 0 turns project files off before any is looked at.
    if remaining > 0 {
        for dir in project_dirs(&cwd, git_root.as_deref()) {
            for mut doc in dir_docs(db, &dir) {
                if doc.fate == Fate::Included {
                    let raw = doc_bytes(db, &doc.source);
                    budget_doc(&mut doc, &raw, &mut remaining);
                }
                docs.push(doc);
            }
        }
    }
    let message = message(&cwd, &docs);
    Ok(AgentsContext { cwd, git_root, budget, docs, message })
}

/// CX2: the directories from the git root down to `cwd`, root first; `cwd` alone outside
/// git (or outside that root: a rollout's message may name another folder).
pub(crate) fn project_dirs(cwd: &Path, git_root: Option<&Path>) -> Vec<PathBuf> {
    let Some(root) = git_root.filter(|root| cwd.starts_with(root)) else { return vec![cwd.to_path_buf()] };
    let mut dirs: Vec<PathBuf> =
        cwd.ancestors().take_while(|dir| dir.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    dirs
}

/// `ws`'s git root, where the walk of CX2 starts; `None` outside git.
pub(crate) fn git_root(db: &dyn Db, ws: Workspace) -> Option<PathBuf> {
    let tree = worktree(db, ws);
    tree.is_git().then(|| tree.root.clone())
}

/// CX3: the file Codex reads in `dir`: `AGENTS.override.md` when it exists (even empty),
/// else `AGENTS.md`; none when neither is a file.
pub(crate) fn chosen_file(db: &dyn Db, dir: &Path) -> Option<PathBuf> {
    let is_file = |path: &Path| db.files().get(db, path).kind(db) == FileKind::File;
    [dir.join(OVERRIDE_NAME), dir.join(AGENTS_NAME)].into_iter().find(|path| is_file(path))
}

/// CX1: `AGENTS.override.md` in `$CODEX_HOME` when its trimmed text is not empty, else
/// `AGENTS.md`; the text is trimmed.
pub(crate) fn global_docs(db: &dyn Db, ws: Workspace) -> Vec<Doc> {
    let home = config::codex_home(db, ws.host(db));
    let mut docs = Vec::new();
    for name in [OVERRIDE_NAME, AGENTS_NAME] {
        let source = home.join(name);
        let file = db.files().get(db, &source);
        if file.kind(db) != FileKind::File {
            continue;
        }
        let raw = doc_bytes(db, &source);
        let (text, fate) = match raw.as_ref() {
            Err(reason) => (String::new(), Fate::Unreadable { reason: reason.clone() }),
            Ok(bytes) => match std::str::from_utf8(bytes) {
                Err(_) => (String::new(), Fate::Unreadable { reason: "not valid UTF-8".to_owned() }),
                Ok(text) if text.trim().is_empty() => (String::new(), Fate::Empty),
                Ok(text) => (text.trim().to_owned(), Fate::Included),
            },
        };
        let doc = Doc { source, scope: Scope::Global, bytes: raw.as_ref().map_or(0, Vec::len), text, fate };
        let found = doc.is_sent();
        docs.push(doc);
        if found {
            // The global AGENTS.md behind a used override is shadowed.
            let by = home.join(OVERRIDE_NAME);
            if name == OVERRIDE_NAME && db.files().get(db, &home.join(AGENTS_NAME)).kind(db) == FileKind::File
            {
                docs.push(shadowed(db, home.join(AGENTS_NAME), Scope::Global, by));
            }
            break;
        }
    }
    docs
}

/// CX3: the file Codex uses in one project directory (`AGENTS.override.md` when it
/// exists, even empty, else `AGENTS.md`), and the `AGENTS.md` it shadows. The chosen file
/// comes back `Included`, to be budgeted.
fn dir_docs(db: &dyn Db, dir: &Path) -> Vec<Doc> {
    let is_file = |path: &Path| db.files().get(db, path).kind(db) == FileKind::File;
    let (over, agents) = (dir.join(OVERRIDE_NAME), dir.join(AGENTS_NAME));
    let Some(chosen) = chosen_file(db, dir) else { return Vec::new() };
    let bytes = doc_bytes(db, &chosen).as_ref().map_or(0, Vec::len);
    let mut docs = vec![Doc {
        source: chosen.clone(),
        scope: Scope::Project,
        bytes,
        text: String::new(),
        fate: Fate::Included,
    }];
    if chosen == over && is_file(&agents) {
        docs.push(shadowed(db, agents, Scope::Project, over));
    }
    docs
}

fn shadowed(db: &dyn Db, source: PathBuf, scope: Scope, by: PathBuf) -> Doc {
    let bytes = doc_bytes(db, &source).as_ref().map_or(0, Vec::len);
    Doc { source, scope, bytes, text: String::new(), fate: Fate::Shadowed { by } }
}

/// CX5/CX6: reads at most `remaining` bytes (decoded lossily, so a cut inside a character
/// leaves U+FFFD); an empty or whitespace-only result is dropped and costs nothing.
fn budget_doc(doc: &mut Doc, raw: &Result<Vec<u8>, String>, remaining: &mut usize) {
    let bytes = match raw {
        Ok(bytes) => bytes,
        Err(reason) => {
            doc.fate = Fate::Unreadable { reason: reason.clone() };
            return;
        }
    };
    if *remaining == 0 {
        doc.fate = Fate::OverBudget;
        return;
    }
    let kept = bytes.len().min(*remaining);
    let text = String::from_utf8_lossy(&bytes[..kept]);
    if text.trim().is_empty() {
        doc.fate = Fate::Empty;
        return;
    }
    *remaining -= kept;
    doc.text = text.into_owned();
    doc.fate = if kept < bytes.len() { Fate::Cut { kept } } else { Fate::Included };
}

/// A rule file's bytes through its `File` input, or why they cannot be had.
fn doc_bytes(db: &dyn Db, path: &Path) -> Result<Vec<u8>, String> {
    let file = db.files().get(db, path);
    file_bytes(db, file).as_ref().map(|bytes| bytes.to_vec()).map_err(ReadFailure::to_string)
}

/// CX4: the user message. With project files: a header naming `cwd`, then the global text
/// and the separator (when there is a global text), then the project texts joined by a
/// blank line. With the global text alone the header names no directory. Nothing at all:
/// no message.
fn message(cwd: &Path, docs: &[Doc]) -> Option<String> {
    let sent =
        |scope: Scope| docs.iter().filter(move |d| d.scope == scope && d.is_sent()).map(|d| d.text.as_ref());
    let global: Option<&str> = sent(Scope::Global).next();
    let project: Vec<&str> = sent(Scope::Project).collect();
    let (header, body) = match (global, project.is_empty()) {
        (None, true) => return None,
        (Some(global), true) => ("# AGENTS.md instructions".to_owned(), global.to_owned()),
        (global, false) => {
            let mut body = global.map(|g| format!("{g}{PROJECT_DOC_SEPARATOR}")).unwrap_or_default();
            body.push_str(&project.join("\n\n"));
            (format!("# AGENTS.md instructions for {}", cwd.display()), body)
        }
    };
    Some(format!("{header}\n\n<INSTRUCTIONS>\n{body}\n</INSTRUCTIONS>"))
}
