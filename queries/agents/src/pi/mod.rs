//! The pi profile (`@mariozechner/pi-coding-agent` 0.73.1): everything pi sends that carries
//! rule files sits in its one system message. Rule ids (PI1–PI15) are defined in
//! `docs/profiles/pi.md`, each with the recorded case that confirms it.
//!
//! The message is pi's base prompt, or a `SYSTEM.md` in its place (PI7), then an
//! `APPEND_SYSTEM.md` (PI8), then the context files (PI1–PI6): the global folder's, then one
//! per folder from the filesystem root down to the working directory, then the skills
//! listing (PI12–PI14), then the date and working directory (PI9). Nothing is attached on
//! reads (PI11). Project extensions are code pi runs at start (PI15): what they change cannot
//! be predicted, only reported. Discovery keeps every file it looked at with its [`Fate`], so
//! `build --format json` and `explain` can say why a file is in or out.

pub mod installation;
pub mod profile;
pub mod skills;
pub mod text;
pub mod wording;

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes};
use ctxgraph_db::system::FileKind;
use ctxgraph_db::worktree::worktree;

pub use wording::Wording;

/// PI2: the context file names, first readable one per folder wins.
pub const CONTEXT_NAMES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// PI1: the variable naming the global folder (else `~/.pi/agent`).
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// The project's configuration folder.
pub const CONFIG_DIR: &str = ".pi";

/// What kind of file a [`Candidate`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// PI1: the global folder's context file.
    Global,
    /// PI2: a context file of a folder from `/` down to the working directory.
    Ancestor,
    /// PI7: a `SYSTEM.md`, in place of pi's base prompt.
    SystemPrompt,
    /// PI8: an `APPEND_SYSTEM.md`, after the prompt.
    AppendPrompt,
}

/// What became of one file pi considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the system message.
    Sent,
    /// PI2/PI7/PI8: a file earlier in the order was taken for the same place.
    Shadowed {
        /// The one taken.
        by: PathBuf,
    },
    /// PI7/PI8: empty, so it adds nothing (an empty `SYSTEM.md` leaves pi's base prompt).
    Empty,
    /// PI6: the same path was already sent (the global folder is also an ancestor).
    Repeated,
    /// PI3: exists but cannot be read as a file (a folder of that name); pi warns and goes on
    /// to the next name.
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One file pi looked at, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Candidate {
    /// The path pi names it by (a link's own path, PI5).
    pub source: PathBuf,
    /// What kind of file it is.
    pub kind: Kind,
    /// The text pi sends (empty when left out).
    pub text: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: Fate,
}

impl Candidate {
    /// The rule behind the fate.
    pub fn rule(&self) -> &'static str {
        match (self.kind, &self.fate) {
            (_, Fate::Repeated) => "PI6",
            (_, Fate::Unreadable { .. }) => "PI3",
            (Kind::Global, _) => "PI1",
            (Kind::Ancestor, _) => "PI2",
            (Kind::SystemPrompt, _) => "PI7",
            (Kind::AppendPrompt, _) => "PI8",
        }
    }

    /// Why the file is in the message, or why not, citing the rule.
    pub fn reason(&self) -> String {
        let found = match self.kind {
            Kind::Global => {
                "the global folder's context file (~/.pi/agent or $PI_CODING_AGENT_DIR), first in the Project Context section (PI1)"
            }
            Kind::Ancestor => {
                "its folder's context file, the first of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD; pi takes one per folder from / down to the working directory (PI2)"
            }
            Kind::SystemPrompt => "a SYSTEM.md: it replaces pi's base prompt (PI7)",
            Kind::AppendPrompt => "an APPEND_SYSTEM.md: it follows the prompt after a blank line (PI8)",
        };
        match &self.fate {
            Fate::Sent => found.to_owned(),
            Fate::Shadowed { by } => format!(
                "left out: {} comes first for the same place ({})",
                ctxgraph_db::path::display(by),
                self.rule()
            ),
            Fate::Empty => format!("left out: empty, so it adds nothing ({})", self.rule()),
            Fate::Repeated => {
                "left out: the same path is already in the Project Context section (PI6)".to_owned()
            }
            Fate::Unreadable { reason } => {
                format!("left out: cannot be read ({reason}); pi warns and tries the next name (PI3)")
            }
        }
    }
}

/// Everything pi decides about its system message for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PiContext {
    /// The working directory (pi's `process.cwd()`, physical).
    pub cwd: PathBuf,
    /// PI1: the global folder.
    pub agent_dir: PathBuf,
    /// The git root, when there is one: where the `.agents/skills` walk stops (PI13).
    pub git_root: Option<PathBuf>,
    /// PI7/PI8: the prompt files considered, in order.
    pub prompts: Vec<Candidate>,
    /// PI1–PI6: the context files considered, in pi's order (global first, then from `/`).
    pub files: Vec<Candidate>,
    /// PI12–PI14: the skills.
    pub skills: skills::Skills,
    /// PI15: project and global extensions pi loads as code at start.
    pub extensions: Vec<PathBuf>,
}

impl PiContext {
    /// The `SYSTEM.md` that replaces the base prompt, if any.
    pub fn system_prompt(&self) -> Option<&Candidate> {
        self.prompts.iter().find(|c| c.kind == Kind::SystemPrompt && c.fate == Fate::Sent)
    }

    /// The `APPEND_SYSTEM.md` sent, if any.
    pub fn append_prompt(&self) -> Option<&Candidate> {
        self.prompts.iter().find(|c| c.kind == Kind::AppendPrompt && c.fate == Fate::Sent)
    }

    /// The context files sent, in order.
    pub fn sent(&self) -> impl Iterator<Item = &Candidate> {
        self.files.iter().filter(|c| c.fate == Fate::Sent)
    }

    /// Every candidate, prompts first.
    pub fn candidates(&self) -> impl Iterator<Item = &Candidate> {
        self.prompts.iter().chain(&self.files)
    }
}

/// Node's `readFileSync(path, "utf-8")`: invalid sequences replaced, a byte-order mark kept.
fn read_text(db: &dyn Db, path: &Path) -> Result<String, String> {
    match file_bytes(db, db.files().get(db, path)) {
        Ok(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        Err(err) => Err(err.to_string()),
    }
}

/// `existsSync`: follows links, so a dangling one does not exist.
fn exists(db: &dyn Db, path: &Path) -> bool {
    !matches!(db.files().get(db, path).kind(db), FileKind::Missing)
}

/// PI2/PI3: the first of the four names in `dir` that exists and reads; the ones before it
/// that exist and cannot be read are kept with their fate, the ones after it as shadowed.
fn folder_context(db: &dyn Db, dir: &Path, kind: Kind) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = Vec::new();
    let mut taken: Option<PathBuf> = None;
    for name in CONTEXT_NAMES {
        let path = dir.join(name);
        if !exists(db, &path) {
            continue;
        }
        let mut candidate = Candidate { source: path.clone(), kind, text: String::new(), fate: Fate::Sent };
        if let Some(by) = &taken {
            candidate.fate = Fate::Shadowed { by: by.clone() };
        } else {
            match read_text(db, &path) {
                Ok(text) => {
                    candidate.text = text;
                    taken = Some(path);
                }
                Err(reason) => candidate.fate = Fate::Unreadable { reason },
            }
        }
        found.push(candidate);
    }
    found
}

/// PI7/PI8: the cwd's `.pi/NAME`, else the global folder's; `resolvePromptInput` reads it
/// (a file that cannot be read gives its own path as the text, as pi does).
fn prompt_file(db: &dyn Db, cwd: &Path, agent_dir: &Path, name: &str, kind: Kind) -> Vec<Candidate> {
    let project = cwd.join(CONFIG_DIR).join(name);
    let global = agent_dir.join(name);
    let mut found = Vec::new();
    let chosen = if exists(db, &project) {
        Some(project.clone())
    } else {
        exists(db, &global).then(|| global.clone())
    };
    let Some(chosen) = chosen else { return found };
    let text = read_text(db, &chosen).unwrap_or_else(|_| chosen.to_string_lossy().into_owned());
    let fate = if text.is_empty() { Fate::Empty } else { Fate::Sent };
    found.push(Candidate { source: chosen.clone(), kind, text, fate });
    if chosen == project && exists(db, &global) {
        found.push(Candidate {
            source: global,
            kind,
            text: String::new(),
            fate: Fate::Shadowed { by: chosen },
        });
    }
    found
}

/// `expandTildePath`: `~` and `~/…` name the home folder.
fn expand_tilde(value: &str, home: &Path) -> PathBuf {
    match value {
        "~" => home.to_path_buf(),
        _ => match value.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => PathBuf::from(value),
        },
    }
}

/// PI1: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir(db: &dyn Db, ws: Workspace) -> PathBuf {
    let host = ws.host(db);
    let home = host.home(db);
    match env_var(db, host, AGENT_DIR_ENV.to_owned()).filter(|v| !v.is_empty()) {
        Some(dir) => ctxgraph_db::path::resolve(ws.cwd(db), expand_tilde(&dir, home)),
        None => home.join(CONFIG_DIR).join("agent"),
    }
}

/// PI15: the `.ts` and `.js` files (and folders with an index) of an extensions folder.
fn extensions_in(db: &dyn Db, dir: &Path) -> Vec<PathBuf> {
    dir_listing_by_name(db, db.files().get(db, dir))
        .iter()
        .filter(|entry| !entry.name.starts_with('.') && entry.name.as_str() != "node_modules")
        .map(|entry| dir.join(entry.name.as_str()))
        .filter(|path| {
            let name = path.to_string_lossy();
            match db.files().get(db, path).kind(db) {
                FileKind::File => name.ends_with(".ts") || name.ends_with(".js"),
                FileKind::Directory => true,
                _ => false,
            }
        })
        .collect()
}

/// PI1–PI15: every file pi reads in `ws`, and what it does with each.
#[salsa::tracked(returns(ref))]
pub fn pi_context(db: &dyn Db, ws: Workspace) -> PiContext {
    let cwd = ws.cwd(db).clone();
    let agent_dir = agent_dir(db, ws);
    let tree = worktree(db, ws);
    let git_root = tree.is_git().then(|| tree.root.clone());

    let mut prompts = prompt_file(db, &cwd, &agent_dir, "SYSTEM.md", Kind::SystemPrompt);
    prompts.extend(prompt_file(db, &cwd, &agent_dir, "APPEND_SYSTEM.md", Kind::AppendPrompt));

    // PI1, PI2, PI6: the global file, then every folder from `/` down; a path already sent
    // is not sent again (only an identical path counts).
    let mut files = folder_context(db, &agent_dir, Kind::Global);
    let mut ancestors: Vec<Vec<Candidate>> = Vec::new();
    for dir in cwd.ancestors() {
        let mut found = folder_context(db, dir, Kind::Ancestor);
        for candidate in &mut found {
            if candidate.fate == Fate::Sent
                && files.iter().any(|c| c.fate == Fate::Sent && c.source == candidate.source)
            {
                candidate.fate = Fate::Repeated;
            }
        }
        ancestors.push(found);
    }
    files.extend(ancestors.into_iter().rev().flatten());

    let skills = skills::skills(db, ws, &cwd, &agent_dir, git_root.as_deref());
    let mut extensions = extensions_in(db, &cwd.join(CONFIG_DIR).join("extensions"));
    extensions.extend(extensions_in(db, &agent_dir.join("extensions")));
    PiContext { cwd, agent_dir, git_root, prompts, files, skills, extensions }
}
