//! The Cline profile (`cline` 3.0.65, the CLI): the rule files it appends to the end of its
//! system prompt as a `# Rules` section. Rule ids (CL1–CL11) are defined in
//! `docs/profiles/cline.md`, each with the recorded case that confirms it.
//!
//! Cline's workspace is the working directory (CL1): it walks neither up nor down. It looks
//! at a fixed list of places (CL2), each a file or a folder (CL3, CL4), names every rule by
//! its front matter's `name:` or its file name (CL5, CL6), keeps one rule per name (CL7) and
//! prints them sorted by name (CL8). Nothing is attached on reads and nothing is imported
//! (CL10). Discovery keeps every file it looked at with its [`Fate`], so `build --format
//! json` and `explain` can say why a file is in or out.

pub mod frontmatter;
pub mod profile;

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::collate::locale_compare;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing, file_text};
use ctxgraph_db::system::{EntryKind, FileKind};

/// The workspace's rules file or folder.
pub const CLINERULES: &str = ".clinerules";
/// The file Cline reads in the workspace and in `~/.agents`.
pub const AGENTS_MD: &str = "AGENTS.md";

/// Where Cline found a candidate: one entry of its list of places (CL2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// `<cwd>/AGENTS.md`.
    WorkspaceAgents,
    /// `<cwd>/.clinerules`, a file or a folder.
    Clinerules,
    /// `<cwd>/.cline/rules`.
    DotClineRules,
    /// `~/.agents/AGENTS.md`.
    GlobalAgents,
    /// `~/.cline/rules`.
    HomeClineRules,
    /// `~/Cline/Rules`.
    HomeRules,
    /// `~/Documents/Cline/Rules`.
    DocumentsRules,
    /// CL11: `<cwd>/.cline/<folder>/rules.md` beside a `managed.json`.
    Managed,
}

impl Place {
    /// The place in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Place::WorkspaceAgents => "the workspace's AGENTS.md",
            Place::Clinerules => "the workspace's .clinerules",
            Place::DotClineRules => "the workspace's .cline/rules",
            Place::GlobalAgents => "the global ~/.agents/AGENTS.md",
            Place::HomeClineRules => "~/.cline/rules",
            Place::HomeRules => "~/Cline/Rules",
            Place::DocumentsRules => "~/Documents/Cline/Rules",
            Place::Managed => "a managed folder in the workspace's .cline",
        }
    }
}

/// What became of one file Cline considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the `# Rules` section.
    Sent,
    /// CL7: a file found later has the same title (ignoring case) and replaced it.
    Replaced {
        /// The file that replaced it.
        by: PathBuf,
    },
    /// CL6: `enabled: false` or `disabled: true`.
    Disabled,
    /// CL6: nothing left after the front matter, trimmed.
    Empty,
    /// CL6: the front matter does not parse, or a key of it has the wrong type.
    BadFrontMatter {
        /// What is wrong.
        reason: String,
    },
    /// The read failed.
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One rule file Cline read, in the order it read them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Candidate {
    /// Absolute path.
    pub source: PathBuf,
    /// The place it was found in.
    pub place: Place,
    /// CL5: the section's title (empty when the file was dropped before it had one).
    pub title: String,
    /// CL6: the rule's text (the body after the front matter, trimmed).
    pub body: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: Fate,
    /// CL7: another file of the same folder has the same title, so which one wins depends
    /// on the order the file system lists them in.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub listing_order: bool,
}

impl Candidate {
    /// CL8: the rule's section.
    pub fn section(&self) -> String {
        format!("## {}\n{}", self.title, self.body)
    }

    /// The rule [`Candidate::reason`] gives for the fate: the fate's own, else the one that
    /// found the file.
    pub fn rule(&self) -> &'static str {
        match &self.fate {
            Fate::Sent => "CL8",
            Fate::Replaced { .. } => "CL7",
            Fate::Disabled | Fate::Empty | Fate::BadFrontMatter { .. } => "CL6",
            Fate::Unreadable { .. } => "CL3",
        }
    }

    /// Why the file is in the section, or why not, with the rule behind it.
    pub fn reason(&self) -> String {
        let found = match self.place {
            Place::WorkspaceAgents | Place::GlobalAgents => format!("{} (CL2)", self.place.describe()),
            Place::Managed => format!("{} (CL11)", self.place.describe()),
            place => format!("a rule file in {} (CL2, CL4)", place.describe()),
        };
        match &self.fate {
            Fate::Sent => format!("{found}, under `## {}` (CL5, CL8)", self.title),
            Fate::Replaced { by } => format!(
                "left out: {} has the same title `{}` (ignoring case) and was read later (CL7)",
                by.display(),
                self.title
            ),
            Fate::Disabled => "left out: its front matter disables it (CL6)".to_owned(),
            Fate::Empty => "left out: nothing after the front matter (CL6)".to_owned(),
            Fate::BadFrontMatter { reason } => format!("left out: {reason} (CL6)"),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) (CL3)"),
        }
    }
}

/// Everything Cline decides about its rules for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ClineRules {
    /// CL1: the workspace, the working directory.
    pub workspace: PathBuf,
    /// Every rule file read, in Cline's order, sent or not.
    pub candidates: Vec<Candidate>,
    /// The indexes of the sent candidates, sorted by title (CL8).
    pub order: Vec<usize>,
}

impl ClineRules {
    /// The sent rules, in section order.
    pub fn sent(&self) -> impl Iterator<Item = &Candidate> {
        self.order.iter().map(|&i| &self.candidates[i])
    }

    /// CL8: exactly what `build --agent cline` prints: `# Rules` and one section per rule,
    /// sorted by title; empty when there is none (Cline then adds no section).
    pub fn text(&self) -> String {
        if self.order.is_empty() {
            return String::new();
        }
        let sections: Vec<String> = self.sent().map(Candidate::section).collect();
        format!("# Rules\n{}", sections.join("\n\n"))
    }
}

/// CL5: Node's `path.extname` of a file name: from its last dot, unless that dot opens the
/// name.
fn extname(name: &str) -> &str {
    match name.rfind('.') {
        Some(0) | None => "",
        Some(at) => &name[at..],
    }
}

/// CL4: the extensions a folder's files must have, in any case.
fn is_rule_name(name: &str) -> bool {
    matches!(extname(name).to_lowercase().as_str(), ".md" | ".markdown" | ".txt")
}

/// CL5: the title of a file without a `name:`.
fn default_title(path: &Path, workspace: &Path, home: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.to_lowercase() == AGENTS_MD.to_lowercase() {
        if path == workspace.join(AGENTS_MD) {
            return "Workspace AGENTS.md".to_owned();
        }
        if path == global_agents(home) {
            return "Global AGENTS.md".to_owned();
        }
    }
    let ext = extname(&name);
    name.strip_suffix(ext).filter(|stem| !stem.is_empty()).unwrap_or(&name).to_owned()
}

fn global_agents(home: &Path) -> PathBuf {
    home.join(".agents").join(AGENTS_MD)
}

/// CL2: the places, in Cline's order.
pub fn places(workspace: &Path, home: &Path) -> Vec<(PathBuf, Place)> {
    vec![
        (workspace.join(AGENTS_MD), Place::WorkspaceAgents),
        (workspace.join(CLINERULES), Place::Clinerules),
        (workspace.join(".cline").join("rules"), Place::DotClineRules),
        (global_agents(home), Place::GlobalAgents),
        (home.join(".cline").join("rules"), Place::HomeClineRules),
        (home.join("Cline").join("Rules"), Place::HomeRules),
        (home.join("Documents").join("Cline").join("Rules"), Place::DocumentsRules),
    ]
}

/// CL3/CL4: the files one place yields: itself when it is a file (a link followed), else its
/// regular entries with a rule extension, and its `AGENTS.md` when that is a file but was
/// not listed (a link). A missing place yields nothing.
fn discover(db: &dyn Db, place: &Path) -> Vec<PathBuf> {
    let file = db.files().get(db, place);
    match file.kind(db) {
        FileKind::File => {
            let name = place.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // The place's own name must be `.clinerules` or carry a rule extension.
            if name == CLINERULES || is_rule_name(&name) { vec![place.to_path_buf()] } else { Vec::new() }
        }
        FileKind::Directory => {
            // As listed: of three same-titled files listed `a, z, b, m` on tmpfs, Cline 3.0.65
            // kept `m`, the last listed (CL7).
            let listing = dir_listing(db, file);
            let mut found: Vec<PathBuf> = listing
                .iter()
                .filter(|e| e.kind == EntryKind::File && is_rule_name(&e.name))
                .map(|e| place.join(e.name.as_str()))
                .collect();
            let agents = place.join(AGENTS_MD);
            let listed = listing.iter().any(|e| e.name == AGENTS_MD && e.kind == EntryKind::File);
            if !listed && db.files().get(db, &agents).kind(db) == FileKind::File {
                found.push(agents);
            }
            found
        }
        FileKind::Missing | FileKind::Other | FileKind::Inaccessible => Vec::new(),
    }
}

/// CL11: the workspace's `.cline/<folder>` folders (real folders, not links) whose
/// `managed.json` parses as a JSON object or array, sorted by path.
fn managed_folders(db: &dyn Db, workspace: &Path) -> Vec<PathBuf> {
    let dot_cline = workspace.join(".cline");
    let listing = dir_listing(db, db.files().get(db, &dot_cline));
    let mut folders: Vec<PathBuf> = listing
        .iter()
        .filter(|e| e.kind == EntryKind::Directory)
        .map(|e| dot_cline.join(e.name.as_str()))
        .filter(|dir| {
            let Ok(text) = file_text(db, db.files().get(db, &dir.join("managed.json"))) else { return false };
            matches!(
                serde_json::from_str::<serde_json::Value>(&text.text),
                Ok(serde_json::Value::Object(_) | serde_json::Value::Array(_))
            )
        })
        .collect();
    folders.sort_by(|a, b| locale_compare(&a.to_string_lossy(), &b.to_string_lossy()));
    folders
}

/// CL1–CL11: every rule file Cline reads in `ws`, and the section it builds from them.
#[salsa::tracked(returns(ref))]
pub fn cline_rules(db: &dyn Db, ws: Workspace) -> ClineRules {
    let workspace = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    let mut found: Vec<(PathBuf, Place, usize)> = Vec::new();
    let mut seen_places: Vec<PathBuf> = Vec::new();
    let mut group = 0;
    for (path, place) in places(&workspace, &home) {
        // The list is deduplicated by path (the workspace may be the home folder).
        if seen_places.contains(&path) {
            continue;
        }
        seen_places.push(path.clone());
        group += 1;
        found.extend(discover(db, &path).into_iter().map(|p| (p, place, group)));
    }
    for folder in managed_folders(db, &workspace) {
        group += 1;
        found.extend(discover(db, &folder.join("rules.md")).into_iter().map(|p| (p, Place::Managed, group)));
    }

    let mut candidates: Vec<Candidate> = Vec::new();
    // The winner of each title (lowercased), as an index into `candidates`, in the order
    // the titles were first seen.
    let mut by_id: Vec<(String, usize, usize)> = Vec::new();
    for (source, place, group) in found {
        let mut candidate = Candidate {
            title: String::new(),
            body: String::new(),
            fate: Fate::Sent,
            listing_order: false,
            source,
            place,
        };
        match file_text(db, db.files().get(db, &candidate.source)) {
            Err(err) => candidate.fate = Fate::Unreadable { reason: err.to_string() },
            Ok(text) => match frontmatter::parse(&text.text) {
                Err(reason) => candidate.fate = Fate::BadFrontMatter { reason },
                Ok(rule) => {
                    ctxgraph_db::js::js_trim(rule.body).clone_into(&mut candidate.body);
                    candidate.title = rule.name.unwrap_or_else(|| {
                        default_title(&candidate.source, &workspace, &home).trim().to_owned()
                    });
                    if candidate.body.is_empty() || candidate.title.is_empty() {
                        candidate.fate = Fate::Empty;
                    } else if rule.disabled {
                        candidate.fate = Fate::Disabled;
                    }
                }
            },
        }
        let index = candidates.len();
        let kept = candidate.fate == Fate::Sent || candidate.fate == Fate::Disabled;
        if kept {
            let id = candidate.title.to_lowercase();
            if let Some(entry) = by_id.iter_mut().find(|(known, _, _)| *known == id) {
                let (_, earlier, earlier_group) = *entry;
                let same_folder = earlier_group == group;
                candidates[earlier].fate = Fate::Replaced { by: candidate.source.clone() };
                candidates[earlier].listing_order |= same_folder;
                candidate.listing_order |= same_folder;
                *entry = (id, index, group);
            } else {
                by_id.push((id, index, group));
            }
        }
        candidates.push(candidate);
    }
    let mut order: Vec<usize> =
        by_id.iter().map(|&(_, i, _)| i).filter(|&i| candidates[i].fate == Fate::Sent).collect();
    order.sort_by(|&a, &b| locale_compare(&candidates[a].title, &candidates[b].title));
    ClineRules { workspace, candidates, order }
}

/// The places Cline never reads, for `explain` (CL9): names other agents use.
pub const NOT_READ: &[(&str, &str)] = &[
    ("CLAUDE.md", "Claude Code's file"),
    (".cursorrules", "Cursor's file"),
    (".windsurfrules", "Windsurf's file"),
    ("copilot-instructions.md", "Copilot's file"),
];
