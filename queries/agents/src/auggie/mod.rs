//! The Auggie profile (`@augmentcode/auggie` 0.36.0). Auggie builds no model prompt on the
//! machine: it sends its rules to Augment's server as fields of its `chat-stream` request,
//! and the server builds the prompt. What ctxgraph reproduces is exactly those fields
//! (AU1): `user_guidelines`, `workspace_guidelines`, `rules` and `skills`, in the request's
//! order, as the JSON Auggie writes. Rule ids AU1–AU9 are defined in
//! `docs/profiles/auggie.md`, each with the recorded case that confirms it.
//!
//! Discovery keeps every file it looked at with its [`Fate`], so `build --format json` and
//! `explain` can say why a file is in or out.

pub mod frontmatter;
pub mod installation;
pub mod profile;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing, file_bytes};
use ctxgraph_db::system::{EntryKind, FileKind};
use serde::Serialize;
use serde_json::{Value, json};

use frontmatter::FrontMatter;

/// The folder Auggie keeps its files in, in the repository and in the home folder.
pub const AUGMENT_DIR: &str = ".augment";
/// The repository's guidelines file (AU6).
pub const GUIDELINES: &str = ".augment-guidelines";
/// The rule files Auggie reads at the repository root, in its order (AU2).
pub const SHARED_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// The name of Auggie's built-in rule, sent first (AU1).
pub const BUILTIN_RULE: &str = "non-interactive-prompt.md";

/// AU4: a rule's type, as the request numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleType {
    /// 0: sent for the model to follow always.
    AlwaysApply,
    /// 1: only when the user names it; not sent.
    Manual,
    /// 2: sent with its description, for the model to pull in when it applies.
    AgentRequested,
}

impl RuleType {
    fn number(self) -> u8 {
        match self {
            RuleType::AlwaysApply => 0,
            RuleType::Manual => 1,
            RuleType::AgentRequested => 2,
        }
    }

    /// AU4: `type:` (any case), else `alwaysApply: true`, else a description, else always.
    fn of(front: &FrontMatter<'_>) -> RuleType {
        match front.string("type").map(|t| t.to_lowercase()).as_deref() {
            Some("always_apply") => return RuleType::AlwaysApply,
            Some("manual") => return RuleType::Manual,
            Some("agent_requested") => return RuleType::AgentRequested,
            _ => {}
        }
        if front.boolean("alwaysApply") == Some(true) {
            RuleType::AlwaysApply
        } else if front.string("description").is_some_and(|d| !d.is_empty()) {
            RuleType::AgentRequested
        } else {
            RuleType::AlwaysApply
        }
    }
}

/// Where Auggie found a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// AU2: `AGENTS.md` or `CLAUDE.md` at the repository root.
    Shared,
    /// AU3: under the repository's `.augment/rules`.
    Workspace,
    /// AU3: under `~/.augment/rules`.
    User,
    /// AU6: the repository's `.augment-guidelines`.
    Guidelines,
    /// AU7: a `SKILL.md` under one of the six skills folders.
    Skill,
}

/// What became of one file Auggie looked at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum Fate {
    /// In the request.
    Sent,
    /// AU4: `type: manual`: only sent when the user names it.
    Manual,
    /// AU5: a symbolic link, which Auggie does not follow.
    Symlink,
    /// AU7: a skill without a `name` or a `description`.
    Incomplete {
        /// The key that is missing or blank.
        missing: &'static str,
    },
    /// AU7: a skill whose name an earlier folder already gave.
    Shadowed {
        /// The skill that keeps the name.
        by: PathBuf,
    },
    /// The read failed.
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// One file Auggie looked at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Candidate {
    /// Absolute path.
    pub source: PathBuf,
    /// Where it was found.
    pub place: Place,
    /// What became of it.
    #[serde(flatten)]
    pub fate: Fate,
}

impl Place {
    /// The rule that finds a file here.
    pub fn rule(self) -> &'static str {
        match self {
            Place::Shared => "AU2",
            Place::Workspace | Place::User => "AU3",
            Place::Guidelines => "AU6",
            Place::Skill => "AU7",
        }
    }

    /// Where the file was found, in words, with [`Place::rule`].
    fn found(self) -> &'static str {
        match self {
            Place::Shared => "a rule file at the repository root (AU2)",
            Place::Workspace => "a rule in the repository's .augment/rules (AU3)",
            Place::User => "a rule in ~/.augment/rules (AU3)",
            Place::Guidelines => "the repository's .augment-guidelines, sent as workspace_guidelines (AU6)",
            Place::Skill => "a skill's SKILL.md (AU7)",
        }
    }

    /// Why a file found here is in the request.
    pub fn sent_reason(self) -> String {
        format!("{}, sent to Augment's server in the chat request", self.found())
    }
}

impl Candidate {
    /// The rule behind the fate.
    pub fn rule(&self) -> &'static str {
        match &self.fate {
            Fate::Symlink | Fate::Unreadable { .. } => "AU5",
            Fate::Manual => "AU4",
            Fate::Sent | Fate::Incomplete { .. } | Fate::Shadowed { .. } => self.place.rule(),
        }
    }

    /// Why the file is in the request, or why not, with the rule behind it.
    pub fn reason(&self) -> String {
        let found = self.place.found();
        match &self.fate {
            Fate::Sent => self.place.sent_reason(),
            Fate::Manual => {
                format!("{found}, but `type: manual`: Auggie sends it only when the user names it (AU4)")
            }
            Fate::Symlink => format!("{found}, but a symbolic link: Auggie skips links (AU5)"),
            Fate::Incomplete { missing } => {
                format!("{found}, but its front matter has no `{missing}`: not listed (AU7)")
            }
            Fate::Shadowed { by } => format!(
                "{found}, but {} gives the same name first: not listed (AU7)",
                ctxgraph_db::path::display(by)
            ),
            Fate::Unreadable { reason } => format!("{found}, but it could not be read: {reason}"),
        }
    }
}

/// One entry of the request's `rules`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The file.
    pub source: PathBuf,
    /// Where it was found.
    pub place: Place,
    /// `path` as sent: relative to the repository root, absolute for a user rule.
    pub path: String,
    /// `content`: the text after the front matter.
    pub content: String,
    /// `type`.
    pub kind: RuleType,
    /// `description`, when not blank.
    pub description: Option<String>,
}

impl Rule {
    /// The entry as Auggie serialises it.
    pub fn json(&self) -> Value {
        let mut entry = json!({
            "path": self.path,
            "content": self.content,
            "type": self.kind.number(),
            "description": self.description,
            "settingsStored": self.place == Place::Shared,
        });
        if self.place == Place::User {
            entry["source"] = json!("user");
        }
        entry
    }
}

/// One entry of the request's `skills`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Skill {
    /// The `SKILL.md`.
    pub source: PathBuf,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `source`: `user`, `workspace`, `.claude` or `.agents` (AU7).
    pub origin: &'static str,
}

impl Skill {
    /// The entry as Auggie serialises it.
    pub fn json(&self) -> Value {
        json!({
            "name": self.name,
            "displayName": null,
            "description": self.description,
            "location": self.source.to_string_lossy(),
            "source": self.origin,
        })
    }
}

/// What Auggie sends from a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AuggieRequest {
    /// The working directory.
    pub cwd: PathBuf,
    /// AU2: the repository root (the working directory outside git).
    pub root: PathBuf,
    /// AU6: `workspace_guidelines`, and the file it came from.
    pub guidelines: Option<(PathBuf, String)>,
    /// The file rules, after the built-in one, in the request's order.
    pub rules: Vec<Rule>,
    /// The skills, in the request's order.
    pub skills: Vec<Skill>,
    /// Every file looked at, with its fate.
    pub candidates: Vec<Candidate>,
}

/// A file's text as Node's `readFileSync(path, "utf-8")` gives it: a byte order mark kept.
fn read(db: &dyn Db, path: &Path) -> Result<String, String> {
    let file = db.files().get(db, path);
    file_bytes(db, file)
        .as_ref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .map_err(ToString::to_string)
}

/// JavaScript's default sort: by UTF-16 code units.
fn js_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// AU3: the `.md` files below `dir` (the suffix's case matters), folder by folder in name
/// order, skipping names that start with a dot; links are reported, not followed (AU5).
fn walk_markdown(db: &dyn Db, dir: &Path, depth: usize, found: &mut Vec<(PathBuf, bool)>) {
    if depth > 32 {
        return;
    }
    let mut entries: Vec<_> = dir_listing(db, db.files().get(db, dir)).iter().cloned().collect();
    entries.sort_by(|a, b| js_order(&a.name, &b.name));
    for entry in entries {
        if entry.name.starts_with('.') {
            continue;
        }
        let path = dir.join(entry.name.as_str());
        match entry.kind {
            EntryKind::Directory => walk_markdown(db, &path, depth + 1, found),
            EntryKind::File if entry.name.ends_with(".md") => found.push((path, false)),
            EntryKind::Symlink if entry.name.ends_with(".md") => found.push((path, true)),
            _ => {}
        }
    }
}

/// AU7: every `SKILL.md` below `dir`, folder by folder in name order. Links are followed,
/// to a folder or to a `SKILL.md`, and shown under the link's path; a folder already walked
/// (a link back up) is not walked again.
fn walk_skills(db: &dyn Db, dir: &Path, visited: &mut Vec<PathBuf>, found: &mut Vec<PathBuf>) {
    let real = ctxgraph_db::files::real_path(db, dir);
    if visited.contains(&real) || visited.len() > 4096 {
        return;
    }
    visited.push(real);
    let mut entries: Vec<_> = dir_listing(db, db.files().get(db, dir)).iter().cloned().collect();
    entries.sort_by(|a, b| js_order(&a.name, &b.name));
    for entry in entries {
        let path = dir.join(entry.name.as_str());
        let kind = match entry.kind {
            EntryKind::Symlink => db.files().get(db, &path).kind(db),
            EntryKind::Directory => FileKind::Directory,
            EntryKind::File => FileKind::File,
            EntryKind::Other => FileKind::Other,
        };
        match kind {
            FileKind::Directory if !entry.name.starts_with('.') => walk_skills(db, &path, visited, found),
            FileKind::File if entry.name == "SKILL.md" => found.push(path),
            _ => {}
        }
    }
}

/// What Auggie sends from `ws` (AU1–AU7).
#[salsa::tracked(returns(ref))]
pub fn auggie_request(db: &dyn Db, ws: Workspace) -> AuggieRequest {
    let cwd = ws.cwd(db).clone();
    let home = ws.host(db).home(db).clone();
    let worktree = ctxgraph_db::worktree::worktree(db, ws);
    let root = if worktree.is_git() { worktree.root.clone() } else { cwd.clone() };
    let mut rules = Vec::new();
    let mut candidates = Vec::new();
    let mut consider = |source: PathBuf, place: Place, link: bool, relative: String| {
        if link {
            candidates.push(Candidate { source, place, fate: Fate::Symlink });
            return;
        }
        match read(db, &source) {
            Err(reason) => candidates.push(Candidate { source, place, fate: Fate::Unreadable { reason } }),
            Ok(text) => {
                let front = FrontMatter::parse(&text);
                // AU2: the shared files' type is Auggie's setting for them (always, unless
                // changed in its settings), not their front matter.
                let kind = if place == Place::Shared { RuleType::AlwaysApply } else { RuleType::of(&front) };
                let fate = if kind == RuleType::Manual { Fate::Manual } else { Fate::Sent };
                if fate == Fate::Sent {
                    rules.push(Rule {
                        source: source.clone(),
                        place,
                        path: relative,
                        content: front.body.to_owned(),
                        kind,
                        description: front.string("description").filter(|d| !d.is_empty()),
                    });
                }
                candidates.push(Candidate { source, place, fate });
            }
        }
    };
    // AU2: AGENTS.md, then CLAUDE.md, at the root: regular files only.
    let root_listing = dir_listing(db, db.files().get(db, &root));
    for name in SHARED_FILES {
        match root_listing.iter().find(|e| e.name == name).map(|e| e.kind) {
            Some(EntryKind::File) => consider(root.join(name), Place::Shared, false, name.to_owned()),
            Some(EntryKind::Symlink) => consider(root.join(name), Place::Shared, true, name.to_owned()),
            _ => {}
        }
    }
    // AU3: the repository's rules, then the user's.
    for (dir, place) in [
        (root.join(AUGMENT_DIR).join("rules"), Place::Workspace),
        (home.join(AUGMENT_DIR).join("rules"), Place::User),
    ] {
        let mut found = Vec::new();
        walk_markdown(db, &dir, 0, &mut found);
        for (path, link) in found {
            let shown = match place {
                Place::Workspace => path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().into_owned(),
                _ => path.to_string_lossy().into_owned(),
            };
            consider(path, place, link, shown);
        }
    }
    // AU6: the guidelines file, raw.
    let guidelines_path = root.join(GUIDELINES);
    let guidelines = match db.files().get(db, &guidelines_path).kind(db) {
        FileKind::File => match read(db, &guidelines_path) {
            Ok(text) => {
                candidates.push(Candidate {
                    source: guidelines_path.clone(),
                    place: Place::Guidelines,
                    fate: Fate::Sent,
                });
                Some((guidelines_path, text))
            }
            Err(reason) => {
                candidates.push(Candidate {
                    source: guidelines_path,
                    place: Place::Guidelines,
                    fate: Fate::Unreadable { reason },
                });
                None
            }
        },
        _ => None,
    };
    // AU7: the six skills folders, the first of a name winning.
    let mut skills: Vec<Skill> = Vec::new();
    let folders = [
        (home.join(AUGMENT_DIR), "user"),
        (root.join(AUGMENT_DIR), "workspace"),
        (home.join(".claude"), ".claude"),
        (root.join(".claude"), ".claude"),
        (home.join(".agents"), ".agents"),
        (root.join(".agents"), ".agents"),
    ];
    for (folder, origin) in folders {
        let mut found = Vec::new();
        walk_skills(db, &folder.join("skills"), &mut Vec::new(), &mut found);
        for source in found {
            let fate = match read(db, &source) {
                Err(reason) => Fate::Unreadable { reason },
                Ok(text) => {
                    let front = FrontMatter::parse(&text);
                    let name = front.string("name").filter(|n| !n.is_empty());
                    let description = front.string("description").filter(|d| !d.is_empty());
                    match (name, description) {
                        (None, _) => Fate::Incomplete { missing: "name" },
                        (_, None) => Fate::Incomplete { missing: "description" },
                        (Some(name), Some(description)) => {
                            if let Some(first) = skills.iter().find(|s| s.name == name) {
                                Fate::Shadowed { by: first.source.clone() }
                            } else {
                                skills.push(Skill { source: source.clone(), name, description, origin });
                                Fate::Sent
                            }
                        }
                    }
                }
            };
            candidates.push(Candidate { source, place: Place::Skill, fate });
        }
    }
    AuggieRequest { cwd, root, guidelines, rules, skills, candidates }
}

impl AuggieRequest {
    /// AU1: the request's rule-bearing fields, in its order, as Auggie writes them
    /// (`JSON.stringify`), with `builtin` as the built-in rule's text.
    pub fn fields(&self, builtin: &str) -> Value {
        let mut rules = vec![json!({ "path": BUILTIN_RULE, "content": builtin, "type": 0 })];
        rules.extend(self.rules.iter().map(Rule::json));
        json!({
            "user_guidelines": "",
            "workspace_guidelines": self.guidelines.as_ref().map_or("", |(_, text)| text.as_str()),
            "rules": rules,
            "skills": self.skills.iter().map(Skill::json).collect::<Vec<_>>(),
        })
    }
}
