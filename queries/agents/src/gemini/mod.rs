//! The Gemini CLI profile (`@google/gemini-cli` 0.61.0): the context files it loads at start-up
//! and on reads. Rule ids (GM1–GM8) are defined in `docs/profiles/gemini.md`, each with the
//! recorded case that confirms it.
//!
//! Gemini sends the user's global context file at the end of its system instruction (GM1) and
//! the project's context files, found upward from the working directory to the project root
//! (GM2), in the first user message (GM3), with `@imports` inlined (GM4). Discovery keeps every
//! file it looked at with its [`Fate`] and every import with its outcome, so `build --format
//! json` and `explain` can say why a file is in or out.

pub mod explain;
pub mod imports;
pub mod lint;
pub mod nearby;
pub mod profile;
pub mod settings;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, real_path};
use ctxgraph_db::js::js_trim;
use ctxgraph_db::system::FileKind;

pub use imports::{Import, Outcome};
pub use settings::{GEMINI_DIR, ImportFormat, Settings, gemini_home, gemini_settings};

/// Why Gemini would not start (so there is nothing to reproduce).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum GeminiError {
    /// A settings file is unreadable or not a JSON object.
    #[error("{}: {message}", crate::gemini::settings::place(path, *line, *column))]
    Settings {
        /// The settings file.
        path: PathBuf,
        /// 1-based line (0 when the file could not be read or the position is unknown).
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
        /// The line as written, for a snippet (empty without a position).
        line_text: String,
    },
}

/// Where a context file's text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// `~/.gemini/`: the user's files for every project, in the system instruction (GM1).
    Global,
    /// Between the working directory and the project root, in the first user message (GM2).
    Project,
    /// Below the working directory, attached to a read's result (GM8).
    Read,
}

impl Scope {
    /// Where the agent puts this scope's text, in words.
    pub fn placement(self) -> &'static str {
        match self {
            Scope::Global => "system instruction, at its end",
            Scope::Project => "first user message, in the session context",
            Scope::Read => "the read_file result",
        }
    }
}

/// What became of one context file Gemini found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// Its block is in the context.
    Included,
    /// GM7: empty or whitespace only after imports: no block (it still counts as loaded).
    Empty,
    /// Could not be read: left out (node's error message).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One context file, in the order Gemini sends them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Doc {
    /// Absolute path.
    pub source: PathBuf,
    /// Global, project or read.
    pub scope: Scope,
    /// The file's size in bytes.
    pub bytes: usize,
    /// Exactly the block the context carries for this file, header and footer lines
    /// included (empty when left out).
    pub text: String,
    /// Whether and why it is in the context.
    #[serde(flatten)]
    pub fate: Fate,
    /// GM4: every `@path` met while processing it.
    pub imports: Vec<Import>,
}

impl Doc {
    /// Whether the context carries this file.
    pub fn is_sent(&self) -> bool {
        self.fate == Fate::Included
    }

    /// The rule [`Doc::reason`] gives for the fate: the one that found the file, or GM7.
    pub fn rule(&self) -> &'static str {
        match (&self.fate, self.scope) {
            (Fate::Empty, _) => "GM7",
            (_, Scope::Global) => "GM1",
            (_, Scope::Project) => "GM2",
            (_, Scope::Read) => "GM8",
        }
    }

    /// Why the file is in the context, or why not, in words, with the rule behind it.
    pub fn reason(&self) -> String {
        let why_here = match self.scope {
            Scope::Global => "the user's context file for every project, in ~/.gemini (GM1)",
            Scope::Project => {
                "a context file in the working directory or a directory above it, up to the project root (GM2)"
            }
            Scope::Read => {
                "a context file between the file read and the working directory, not loaded before (GM8)"
            }
        };
        match &self.fate {
            Fate::Included => {
                let inlined = self.imports.iter().filter(|i| i.is_inlined()).count();
                if inlined == 0 {
                    why_here.to_owned()
                } else {
                    format!("{why_here}; {inlined} import(s) inlined (GM4)")
                }
            }
            Fate::Empty => "left out: empty or whitespace only (GM7)".to_owned(),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) ({})", self.rule()),
        }
    }
}

/// Everything Gemini decides about its context files for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct GeminiContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// GM2: the project root (nearest directory with a boundary marker), if any.
    pub project_root: Option<PathBuf>,
    /// GM2: where the upward search stops: the project root, else the working directory.
    pub ceiling: PathBuf,
    /// GM5/GM6: the settings in force.
    pub settings: Settings,
    /// Every context file found, global ones first, sent or not.
    pub docs: Vec<Doc>,
    /// GM1: the `<loaded_context>` that ends the system instruction, or `None`.
    pub system: Option<String>,
    /// GM3: the `<loaded_context>` of the first user message, or `None`.
    pub user: Option<String>,
}

impl GeminiContext {
    /// The text `build --agent gemini` prints: the system instruction's part, then the first
    /// user message's part, separated by a blank line.
    pub fn text(&self) -> String {
        [self.system.as_deref(), self.user.as_deref()].into_iter().flatten().collect::<Vec<_>>().join("\n\n")
    }

    /// Every file loaded at start-up (read without error, empty ones too): what a read does
    /// not attach again (GM8).
    pub fn loaded(&self) -> impl Iterator<Item = &Path> {
        self.docs.iter().filter(|d| !matches!(d.fate, Fate::Unreadable { .. })).map(|d| d.source.as_path())
    }
}

/// GM1–GM7: the whole start-up context Gemini builds in `ws`.
#[salsa::tracked(returns(ref))]
pub fn gemini_context(db: &dyn Db, ws: Workspace) -> Result<GeminiContext, GeminiError> {
    let settings = gemini_settings(db, ws).clone()?;
    let cwd = ws.cwd(db).clone();
    let home = gemini_home(db, ws.host(db)).clone();
    let project_root = project_root(db, &cwd, &settings.boundary_markers);
    let ceiling = project_root.clone().unwrap_or_else(|| cwd.clone());

    let mut docs = Vec::new();
    for name in &settings.filenames {
        let path = ctxgraph_db::path::resolve(&home.join(GEMINI_DIR), name);
        if is_candidate(db, &path) {
            docs.push(load_doc(db, path, Scope::Global, &settings));
        }
    }
    let mut found = upward(db, &cwd, &ceiling, &home, &settings.filenames);
    found.sort_by(|a, b| js_cmp(a, b));
    found.dedup();
    // GM2: Gemini keeps one path per file, by real path: a `CLAUDE.md -> AGENTS.md` symlink
    // beside its target is loaded once, under the name that sorts first (recorded on a real
    // repository, relayfile).
    let mut real_paths: std::collections::HashSet<PathBuf> =
        docs.iter().map(|d| real_path(db, &d.source)).collect();
    for path in found {
        if real_paths.insert(real_path(db, &path)) {
            docs.push(load_doc(db, path, Scope::Project, &settings));
        }
    }
    let system =
        wrap(&docs, Scope::Global).map(|global| format!("<loaded_context>\n{global}\n</loaded_context>"));
    let user = wrap(&docs, Scope::Project).map(|project| {
        format!("<loaded_context>\n<project_context>\n{project}\n</project_context>\n</loaded_context>")
    });
    Ok(GeminiContext { cwd, project_root, ceiling, settings, docs, system, user })
}

/// GM3: the blocks of one scope joined by a blank line, `None` when there are none.
fn wrap(docs: &[Doc], scope: Scope) -> Option<String> {
    let blocks: Vec<&str> =
        docs.iter().filter(|d| d.scope == scope && d.is_sent()).map(|d| d.text.as_str()).collect();
    (!blocks.is_empty()).then(|| blocks.join("\n\n"))
}

/// GM2: the nearest directory at or above `start` holding any boundary marker (any kind of
/// entry). Markers that are absolute or contain `..` are ignored; none at all: no root.
pub fn project_root(db: &dyn Db, start: &Path, markers: &[String]) -> Option<PathBuf> {
    let markers: Vec<&String> =
        markers.iter().filter(|m| !Path::new(m.as_str()).is_absolute() && !m.contains("..")).collect();
    if markers.is_empty() {
        return None;
    }
    start
        .ancestors()
        .find(|dir| markers.iter().any(|m| db.files().get(db, &dir.join(m.as_str())).kind(db).exists()))
        .map(Path::to_path_buf)
}

/// GM2: the context files from `start` up to `ceiling` (or the file system root), never
/// looking inside `~/.gemini`; root-most first.
pub fn upward(db: &dyn Db, start: &Path, ceiling: &Path, home: &Path, names: &[String]) -> Vec<PathBuf> {
    let gemini_dir = home.join(GEMINI_DIR);
    let mut found = Vec::new();
    for dir in start.ancestors() {
        if dir == gemini_dir {
            break;
        }
        let here: Vec<PathBuf> = names
            .iter()
            .map(|name| ctxgraph_db::path::resolve(dir, name))
            .filter(|p| is_candidate(db, p))
            .collect();
        found.splice(0..0, here);
        if dir == ceiling {
            break;
        }
    }
    found
}

/// A path Gemini treats as a context file: something its `access` check passes that is not
/// a directory (a directory passes the check but its read fails, so it is skipped; a path
/// `stat` cannot resolve, such as a symlink loop, fails the check).
fn is_candidate(db: &dyn Db, path: &Path) -> bool {
    matches!(db.files().get(db, path).kind(db), FileKind::File | FileKind::Other)
}

/// Reads one context file, processes its imports and builds its block (GM3, GM4, GM7).
pub fn load_doc(db: &dyn Db, source: PathBuf, scope: Scope, settings: &Settings) -> Doc {
    let file: File = db.files().get(db, &source);
    let expanded = expanded_doc(db, file, settings.boundary_markers.clone(), settings.import_format);
    let (bytes, text, fate, imports) = match expanded {
        Err(reason) => (0, String::new(), Fate::Unreadable { reason: reason.clone() }, Vec::new()),
        Ok((bytes, expanded)) => {
            let trimmed = js_trim(&expanded.text);
            if trimmed.is_empty() {
                (*bytes, String::new(), Fate::Empty, expanded.imports.clone())
            } else {
                let p = source.display();
                let block = format!("--- Context from: {p} ---\n{trimmed}\n--- End of Context from: {p} ---");
                (*bytes, block, Fate::Included, expanded.imports.clone())
            }
        }
    };
    Doc { source, scope, bytes, text, fate, imports }
}

/// GM4: one context file's text with its imports processed, against the project root seen
/// from the file's own directory (the directory itself when no marker is found). One memo
/// per file: editing it, or a file it imports, re-runs this file only.
#[salsa::tracked(returns(ref))]
pub fn expanded_doc(
    db: &dyn Db,
    file: File,
    markers: Vec<String>,
    format: ImportFormat,
) -> Result<(usize, imports::Expanded), String> {
    let path = file.path(db).clone();
    let text = imports::read_text(db, &path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let root = project_root(db, dir, &markers).unwrap_or_else(|| dir.to_path_buf());
    // The file's size on disk, before the lossy decoding.
    let bytes = ctxgraph_db::files::file_bytes(db, file).as_ref().map_or(text.len(), |raw| raw.len());
    Ok((bytes, imports::expand(db, &path, &text, &root, format)))
}

/// JavaScript's default sort order on strings: by UTF-16 code units.
pub fn js_cmp(a: &Path, b: &Path) -> Ordering {
    a.to_string_lossy().encode_utf16().cmp(b.to_string_lossy().encode_utf16())
}
