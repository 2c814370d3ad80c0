//! The Qwen Code profile (`@qwen-code/qwen-code` 0.24.4): the context files and rules it puts
//! in its system message, and the rules it attaches to a tool's result. Rule ids (QW1–QW12)
//! are defined in `docs/profiles/qwen-code.md`, each with the recorded case that confirms it.
//!
//! Qwen Code descends from Gemini CLI: the `@import` walk is Gemini's in another
//! [`imports::DIALECT`], the settings files are read by Gemini's reader. What is Qwen's own:
//! the names (`QWEN.md`, then `AGENTS.md`), the walk from the folder above the git root down
//! to the working directory, name by name (QW1), the output-language file (QW3),
//! `.qwen/QWEN.local.md` (QW4), everything in the system message (QW6), and the rules (QW9,
//! QW10). Discovery keeps every file it looked at with its [`Fate`], so `build --format
//! json` and `explain` can say why a file is in or out.

pub mod explain;
pub mod imports;
pub mod installation;
pub mod language;
pub mod markdown;
pub mod nearby;
pub mod profile;
pub mod rules;
pub mod settings;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::gemini::ImportFormat;
use crate::gemini::imports::Import;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{File, dir_listing, real_path};
use ctxgraph_db::js::js_trim;
use ctxgraph_db::system::{EntryKind, FileKind};

pub use language::Wording;
pub use rules::{Rule, RuleFate};
pub use settings::{QWEN_DIR, Settings, qwen_dir, qwen_settings};

/// QW4: the local file's name, inside `.qwen` at the git root.
pub const LOCAL_NAME: &str = "QWEN.local.md";
/// QW3: the output-language file's name.
pub const OUTPUT_LANGUAGE_NAME: &str = "output-language.md";

/// Why Qwen would not start (so there is nothing to reproduce).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum QwenError {
    /// A settings file (not the workspace's) is unreadable or not a JSON object.
    #[error("{}: {message}", crate::gemini::settings::place(path, *line, *column))]
    Settings {
        /// The settings file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
        /// The line as written, for a snippet (empty without a position).
        line_text: String,
    },
}

/// What kind of context file a [`Doc`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// QW1: in Qwen's folder (`~/.qwen/<name>`).
    Global,
    /// QW1: the home directory's own file, when Qwen starts there.
    Home,
    /// QW1: on the way from the folder above the git root down to the working directory.
    Project,
    /// QW3: the output-language file.
    OutputLanguage,
    /// QW4: `.qwen/QWEN.local.md` at the git root.
    Local,
}

/// What became of one context file Qwen found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// Its block is in the system message.
    Included,
    /// QW5: empty or whitespace only after imports: no block.
    Empty,
    /// QW5: a directory, or a read that failed: no block.
    Unreadable {
        /// Why.
        reason: String,
    },
    /// QW5: the same file (by real path) as one found before: sent once, under that path.
    Duplicate {
        /// The path it is sent under.
        of: PathBuf,
    },
}

/// QW3: the output-language text Qwen writes at start-up, for a language (`None`: auto).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Written {
    /// The language it names; `None` for auto.
    pub language: Option<String>,
    /// Why Qwen writes it (the file is missing, or names no language).
    pub why: &'static str,
}

/// One context file, in the order Qwen sends them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Doc {
    /// Absolute path.
    pub source: PathBuf,
    /// Which kind of file it is.
    pub kind: Kind,
    /// QW6: the path the block shows (relative to the working directory).
    pub shown: String,
    /// Exactly the block (empty when left out, or when its text is Qwen's own, see
    /// [`Doc::written`]).
    pub text: String,
    /// Whether and why it is in the system message.
    #[serde(flatten)]
    pub fate: Fate,
    /// QW7: every `@path` met while processing it.
    pub imports: Vec<Import>,
    /// QW3: the text is the one Qwen writes itself (its wording), not what is on disk now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<Written>,
    /// QW8: the import format the text is laid out in.
    #[serde(skip)]
    pub format: ImportFormat,
}

impl Doc {
    /// Whether the system message carries this file.
    pub fn is_sent(&self) -> bool {
        self.fate == Fate::Included
    }

    /// The block with Qwen's own wording (for a [`Doc::written`] file) put in.
    pub fn block(&self, wording: &Wording) -> String {
        let Some(written) = &self.written else { return self.text.clone() };
        let text = wording.written(written.language.as_deref());
        let body = match self.format {
            ImportFormat::Tree => text,
            ImportFormat::Flat => imports::flat_entry(&self.source, &text),
        };
        context_block(&self.shown, &body)
    }

    /// The rule [`Doc::reason`] gives for the fate: the one that found the file, or QW5.
    pub fn rule(&self) -> &'static str {
        match (&self.fate, self.kind) {
            (Fate::Empty | Fate::Unreadable { .. } | Fate::Duplicate { .. }, _) => "QW5",
            (Fate::Included, Kind::Global | Kind::Home | Kind::Project) => "QW1",
            (Fate::Included, Kind::OutputLanguage) => "QW3",
            (Fate::Included, Kind::Local) => "QW4",
        }
    }

    /// Why the file is in the system message, or why not, in words, with the rule behind it.
    pub fn reason(&self) -> String {
        let why_here = match self.kind {
            Kind::Global => "a context file in Qwen's own folder (~/.qwen), read first for its name (QW1)",
            Kind::Home => "a context file of the home directory, where Qwen was started (QW1)",
            Kind::Project => {
                "a context file between the folder above the git root and the working directory (QW1)"
            }
            Kind::OutputLanguage => "the output-language file, after every other context file (QW3)",
            Kind::Local => "the git root's .qwen/QWEN.local.md, after the output-language file (QW4)",
        };
        match &self.fate {
            Fate::Included => {
                if let Some(written) = &self.written {
                    return format!("{why_here}; Qwen writes its text at start-up: {}", written.why);
                }
                let inlined = self.imports.iter().filter(|i| i.is_inlined()).count();
                if inlined == 0 {
                    why_here.to_owned()
                } else {
                    format!("{why_here}; {inlined} import(s) inlined (QW7)")
                }
            }
            Fate::Empty => "left out: empty or whitespace only (QW5)".to_owned(),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) (QW5)"),
            Fate::Duplicate { of } => {
                format!("left out: the same file as {}, sent under that path (QW5)", of.display())
            }
        }
    }
}

/// Everything Qwen decides about its context files and rules for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct QwenContext {
    /// The working directory.
    pub cwd: PathBuf,
    /// QW1: the git root (nearest folder with a `.git` directory or file), if any.
    pub git_root: Option<PathBuf>,
    /// QW9: the root rules and their paths are taken from: the git root, else the working
    /// directory.
    pub root: PathBuf,
    /// QW2: the settings in force.
    pub settings: Settings,
    /// Every context file found, in Qwen's order, sent or not.
    pub docs: Vec<Doc>,
    /// QW9/QW10: every rule file, global ones first.
    pub rules: Vec<Rule>,
}

impl QwenContext {
    /// QW6: exactly what `build --agent qwen-code` prints: the context blocks, then the rule
    /// blocks, joined by blank lines (the part of the system message after Qwen's `---`).
    pub fn text(&self, wording: &Wording) -> String {
        let docs = self.docs.iter().filter(|d| d.is_sent()).map(|d| d.block(wording));
        let rules = self.rules.iter().filter(|r| r.fate == RuleFate::Sent).map(|r| r.text.clone());
        docs.chain(rules).collect::<Vec<_>>().join("\n\n")
    }

    /// Whether the text carries Qwen's own wording (a written output-language file).
    pub fn has_wording(&self) -> bool {
        self.docs.iter().any(|d| d.is_sent() && d.written.is_some())
    }
}

/// QW6: one context file's block.
pub fn context_block(shown: &str, content: &str) -> String {
    format!("--- Context from: {shown} ---\n{content}\n--- End of Context from: {shown} ---")
}

/// QW1: the nearest folder at or above `start` with a `.git` entry that is a directory or a
/// file (not followed if it is a symlink).
pub fn git_root(db: &dyn Db, start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| {
            dir_listing(db, db.files().get(db, dir))
                .iter()
                .any(|e| e.name == ".git" && matches!(e.kind, EntryKind::Directory | EntryKind::File))
        })
        .map(Path::to_path_buf)
}

/// A path Qwen's `access(R_OK)` check passes: anything that exists, directories included
/// (a directory then fails to read and is left out).
fn readable(db: &dyn Db, path: &Path) -> bool {
    matches!(db.files().get(db, path).kind(db), FileKind::File | FileKind::Directory | FileKind::Other)
}

/// QW1–QW7: the whole start-up context Qwen builds in `ws`.
#[salsa::tracked(returns(ref))]
pub fn qwen_context(db: &dyn Db, ws: Workspace) -> Result<QwenContext, QwenError> {
    let settings = qwen_settings(db, ws).clone()?;
    let cwd = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    let qwen_dir = qwen_dir(db, ws).clone();
    let git_root = git_root(db, &cwd);

    // QW1: name by name, Qwen's folder first, then the home directory's file (started
    // there) or the walk.
    let mut found: Vec<(PathBuf, Kind)> = Vec::new();
    let add = |found: &mut Vec<(PathBuf, Kind)>, path: PathBuf, kind: Kind| {
        if !found.iter().any(|(p, _)| *p == path) {
            found.push((path, kind));
        }
    };
    let at_home = cwd == home;
    for name in &settings.filenames {
        let global = qwen_dir.join(name);
        if readable(db, &global) {
            add(&mut found, global.clone(), Kind::Global);
        }
        if at_home {
            let own = home.join(name);
            if own != global && readable(db, &own) {
                add(&mut found, own, Kind::Home);
            }
            continue;
        }
        let stop = match &git_root {
            Some(root) => root.parent().unwrap_or(root).to_path_buf(),
            None => home.parent().unwrap_or(&home).to_path_buf(),
        };
        let mut upward = Vec::new();
        for dir in cwd.ancestors() {
            if dir.parent().is_none() || dir == qwen_dir || dir == home.join(QWEN_DIR) {
                break;
            }
            let path = dir.join(name);
            if path != global && readable(db, &path) {
                upward.insert(0, path);
            }
            if dir == stop {
                break;
            }
        }
        for path in upward {
            add(&mut found, path, Kind::Project);
        }
    }
    // QW3: the working directory's own file, else the one in Qwen's folder (which Qwen
    // writes at start-up when it has to).
    let own_language = cwd.join(QWEN_DIR).join(OUTPUT_LANGUAGE_NAME);
    let language_path = if db.files().get(db, &own_language).kind(db) == FileKind::Missing {
        qwen_dir.join(OUTPUT_LANGUAGE_NAME)
    } else {
        own_language
    };
    add(&mut found, language_path.clone(), Kind::OutputLanguage);
    // QW4: the git root's local file.
    if let Some(root) = &git_root {
        let local = root.join(QWEN_DIR).join(LOCAL_NAME);
        if readable(db, &local) {
            add(&mut found, local, Kind::Local);
        }
    }

    // QW5: one path per real file, the first one.
    let mut docs: Vec<Doc> = Vec::new();
    let mut seen: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (path, kind) in found {
        let real = real_path(db, &path);
        if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
            let shown = ctxgraph_db::path::relative(&cwd, &path);
            docs.push(Doc {
                fate: Fate::Duplicate { of: first.clone() },
                ..empty_doc(path, kind, shown, settings.import_format)
            });
            continue;
        }
        seen.push((real, path.clone()));
        let doc = if kind == Kind::OutputLanguage && path == qwen_dir.join(OUTPUT_LANGUAGE_NAME) {
            output_language_doc(db, path, &cwd, &settings)
        } else {
            load_doc(db, path, kind, &cwd, settings.import_format)
        };
        docs.push(doc);
    }
    let root = git_root.clone().unwrap_or_else(|| cwd.clone());
    let rules = rules::rules(db, ws, &root);
    Ok(QwenContext { cwd, git_root, root, settings, docs, rules })
}

fn empty_doc(source: PathBuf, kind: Kind, shown: String, format: ImportFormat) -> Doc {
    Doc {
        source,
        kind,
        shown,
        text: String::new(),
        fate: Fate::Empty,
        imports: Vec::new(),
        written: None,
        format,
    }
}

/// QW3: the output-language file in Qwen's folder as Qwen has it once started: the file as
/// it is when it names a language in its marker, else the text Qwen writes for the setting.
fn output_language_doc(db: &dyn Db, path: PathBuf, cwd: &Path, settings: &Settings) -> Doc {
    let on_disk = crate::gemini::imports::read_text(db, &path).ok();
    let kept = on_disk.as_deref().and_then(language::marked_language);
    if kept.is_some() {
        return load_doc(db, path, Kind::OutputLanguage, cwd, settings.import_format);
    }
    let why = if on_disk.is_some() {
        "the file names no language in its marker"
    } else {
        "the file does not exist"
    };
    let shown = ctxgraph_db::path::relative(cwd, &path);
    Doc {
        fate: Fate::Included,
        written: Some(Written { language: language::resolve(settings.output_language.as_deref()), why }),
        ..empty_doc(path, Kind::OutputLanguage, shown, settings.import_format)
    }
}

/// Reads one context file, processes its imports and builds its block (QW5–QW8).
fn load_doc(db: &dyn Db, source: PathBuf, kind: Kind, cwd: &Path, format: ImportFormat) -> Doc {
    let shown = ctxgraph_db::path::relative(cwd, &source);
    let mut doc = empty_doc(source, kind, shown, format);
    match expanded_doc(db, db.files().get(db, &doc.source), format) {
        Err(reason) => doc.fate = Fate::Unreadable { reason: reason.clone() },
        Ok(expanded) => {
            doc.imports.clone_from(&expanded.imports);
            let trimmed = js_trim(&expanded.text);
            if !trimmed.is_empty() {
                doc.text = context_block(&doc.shown, trimmed);
                doc.fate = Fate::Included;
            }
        }
    }
    doc
}

/// QW7/QW8: one context file's text with its imports processed, against the git root seen
/// from the file's own folder (the folder itself outside any repository). One memo per file.
#[salsa::tracked(returns(ref))]
pub fn expanded_doc(
    db: &dyn Db,
    file: File,
    format: ImportFormat,
) -> Result<crate::gemini::imports::Expanded, String> {
    let path = file.path(db).to_path_buf();
    let text = crate::gemini::imports::read_text(db, &path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let root = git_root(db, dir).unwrap_or_else(|| dir.to_path_buf());
    Ok(match format {
        ImportFormat::Tree => imports::tree(db, &path, &text, &root),
        ImportFormat::Flat => imports::flat(db, &path, &text, &root),
    })
}
