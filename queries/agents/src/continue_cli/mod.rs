//! The Continue CLI profile (`@continuedev/cli` 1.5.47, `cn`): the rule files it puts at the
//! end of its system message in a `<context name="userRules">` block. Rule ids (CN1–CN8) are
//! defined in `docs/profiles/continue.md`, each with the recorded case that confirms it.
//!
//! Continue reads the working directory only (CN1): the first of four agent file names
//! (CN2), then every `.md` file below `.continue/rules` and `~/.continue/rules` (CN3) whose
//! front matter makes it always apply (CN4, CN5), each one even when its text repeats (CN6). Nothing is attached
//! on reads (CN8). Discovery keeps every file it looked at with its [`Fate`], so `build
//! --format json` and `explain` can say why a file is in or out.

pub mod frontmatter;
pub mod profile;

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes};
use ctxgraph_db::system::FileKind;

/// CN2: the agent file names, first found wins.
pub const AGENT_FILES: [&str; 4] = ["AGENTS.md", "AGENT.md", "CLAUDE.md", "CODEX.md"];

/// The opening of the block (a format marker, not a sentence of Continue's own).
pub const OPEN: &str = "<context name=\"userRules\">";
/// Its closing.
pub const CLOSE: &str = "</context>";

/// How deep the rule walk goes at most: Node's recursive listing would follow a link loop
/// until the path is too long; ctxgraph stops well before.
const MAX_DEPTH: usize = 32;

/// What kind of file a [`Candidate`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// CN2: the working directory's agent file.
    Agent,
    /// CN3: below the working directory's `.continue/rules`.
    Workspace,
    /// CN3: below `~/.continue/rules`.
    Global,
}

/// What became of one file Continue considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the block.
    Sent,
    /// CN2: an agent file found earlier in the list wins (or stopped the search).
    Shadowed {
        /// The first one found.
        by: PathBuf,
    },
    /// CN2/CN5: nothing to send (an empty agent file; a rule with nothing after its front
    /// matter).
    Empty,
    /// CN5: `alwaysApply: false`, `globs:`, `regex:` or `invokable:`: not always applied.
    Conditional {
        /// Which key decided.
        why: &'static str,
    },
    /// The read failed (CN2: a folder named like an agent file stops the search).
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One file Continue read, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Candidate {
    /// Absolute path.
    pub source: PathBuf,
    /// What kind of file it is.
    pub kind: Kind,
    /// The text Continue puts in the block (empty when left out).
    pub text: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: Fate,
}

impl Candidate {
    /// The rule [`Candidate::reason`] gives for the fate.
    pub fn rule(&self) -> &'static str {
        match (&self.fate, self.kind) {
            (Fate::Sent, Kind::Agent) | (Fate::Shadowed { .. }, _) => "CN2",
            (Fate::Sent, Kind::Workspace | Kind::Global) | (Fate::Empty | Fate::Conditional { .. }, _) => {
                "CN5"
            }
            (Fate::Unreadable { .. }, _) => "CN3",
        }
    }

    /// Why the file is in the block, or why not, with the rule behind it.
    pub fn reason(&self) -> String {
        let found = match self.kind {
            Kind::Agent => {
                "the working directory's agent file, the first of AGENTS.md, AGENT.md, CLAUDE.md, CODEX.md (CN2)"
            }
            Kind::Workspace => {
                "an always-applied rule below the working directory's .continue/rules (CN3, CN5)"
            }
            Kind::Global => "an always-applied rule below ~/.continue/rules (CN3, CN5)",
        };
        match &self.fate {
            Fate::Sent => found.to_owned(),
            Fate::Shadowed { by } => {
                format!(
                    "left out: {} comes first in AGENTS.md, AGENT.md, CLAUDE.md, CODEX.md (CN2)",
                    by.display()
                )
            }
            Fate::Empty => "left out: no text to send (CN2, CN5)".to_owned(),
            Fate::Conditional { why } => format!("left out: not always applied ({why}) (CN5)"),
            Fate::Unreadable { reason } => format!("left out: cannot be read ({reason}) (CN2, CN3)"),
        }
    }
}

/// Everything Continue decides about its rules for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ContinueRules {
    /// CN1: the working directory.
    pub workspace: PathBuf,
    /// Every file considered, in Continue's order.
    pub candidates: Vec<Candidate>,
}

impl ContinueRules {
    /// The agent file sent, if any.
    pub fn agent(&self) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.kind == Kind::Agent && c.fate == Fate::Sent)
    }

    /// The rules sent, in order.
    pub fn rules(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| c.kind != Kind::Agent && c.fate == Fate::Sent)
    }

    /// CN7: exactly what `build --agent continue` prints: the block, or nothing when there is
    /// neither an agent file nor a rule.
    pub fn text(&self) -> String {
        let agent = self.agent();
        let rules: Vec<&str> = self.rules().map(|c| c.text.as_str()).collect();
        if agent.is_none() && rules.is_empty() {
            return String::new();
        }
        let mut text = OPEN.to_owned();
        if let Some(agent) = agent {
            text.push('\n');
            text.push_str(&agent.text);
        }
        if !rules.is_empty() {
            text.push_str(if agent.is_some() { "\n\n" } else { "\n" });
            text.push_str(&rules.join("\n\n"));
        }
        text.push('\n');
        text.push_str(CLOSE);
        text
    }
}

/// Node's `readFileSync(path, "utf-8")`: invalid sequences replaced, a byte-order mark kept.
fn read_text(db: &dyn Db, path: &Path) -> Result<String, String> {
    match file_bytes(db, db.files().get(db, path)) {
        Ok(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        Err(err) => Err(err.to_string()),
    }
}

/// CN3: Node's `readdirSync(dir, { recursive: true })`: a folder's entries, then each
/// sub-folder's (links to folders followed) in the order met, as paths. Each folder comes
/// sorted by name whatever the disk lists: libuv's `scandir` sorts with `strcmp` (captured:
/// `a, z, b, m, sub/` listed on tmpfs came as a, b, m, z, sub/s; CN-09 on ext4).
fn walk(db: &dyn Db, root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = vec![(root.to_path_buf(), 0)];
    let mut next = 0;
    while let Some((dir, depth)) = queue.get(next).cloned() {
        next += 1;
        for entry in &dir_listing_by_name(db, db.files().get(db, &dir)) {
            let path = dir.join(entry.name.as_str());
            found.push(path.clone());
            if depth < MAX_DEPTH && db.files().get(db, &path).kind(db) == FileKind::Directory {
                queue.push((path, depth + 1));
            }
        }
    }
    found
}

/// CN1–CN7: every file Continue reads in `ws`, and what it sends.
#[salsa::tracked(returns(ref))]
pub fn continue_rules(db: &dyn Db, ws: Workspace) -> ContinueRules {
    let workspace = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    let mut candidates = Vec::new();

    // CN2: the first name that exists (a folder too) ends the search, whatever its text.
    let mut first: Option<PathBuf> = None;
    for name in AGENT_FILES {
        let path = workspace.join(name);
        if db.files().get(db, &path).kind(db) == FileKind::Missing {
            continue;
        }
        let mut candidate =
            Candidate { source: path.clone(), kind: Kind::Agent, text: String::new(), fate: Fate::Sent };
        if let Some(by) = &first {
            candidate.fate = Fate::Shadowed { by: by.clone() };
        } else {
            first = Some(path.clone());
            match read_text(db, &path) {
                Err(reason) => candidate.fate = Fate::Unreadable { reason },
                Ok(text) if text.is_empty() => candidate.fate = Fate::Empty,
                Ok(text) => candidate.text = text,
            }
        }
        candidates.push(candidate);
    }

    // CN3–CN6. Continue merges these rules into its configuration's, dropping any whose
    // text the configuration already has, then appends them again dropping the same: with
    // no rules in the configuration, every file is sent, the same text twice too (CN6).
    let dirs = [
        (workspace.join(".continue").join("rules"), Kind::Workspace),
        (home.join(".continue").join("rules"), Kind::Global),
    ];
    for (dir, kind) in dirs {
        if db.files().get(db, &dir).kind(db) == FileKind::Missing {
            continue;
        }
        for path in walk(db, &dir) {
            if !path.to_string_lossy().ends_with(".md")
                || db.files().get(db, &path).kind(db) != FileKind::File
            {
                continue;
            }
            let mut candidate =
                Candidate { source: path.clone(), kind, text: String::new(), fate: Fate::Sent };
            match read_text(db, &path) {
                Err(reason) => candidate.fate = Fate::Unreadable { reason },
                Ok(content) => {
                    let rule = frontmatter::parse(&content);
                    if let Some(why) = rule.not_always() {
                        candidate.fate = Fate::Conditional { why };
                    } else if ctxgraph_db::js::js_trim(&rule.markdown).is_empty() {
                        candidate.fate = Fate::Empty;
                    } else {
                        candidate.text = rule.markdown;
                    }
                }
            }
            candidates.push(candidate);
        }
    }
    ContinueRules { workspace, candidates }
}
