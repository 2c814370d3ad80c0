//! The Auggie profile (`@augmentcode/auggie` 0.36.0). Auggie builds no model prompt on the
//! machine: it sends its rules as fields of its `chat-stream` request to Augment's server,
//! which builds the prompt. What ctxgraph can promise is exactly those fields, in the
//! request's order: `user_guidelines`, `workspace_guidelines`, `rules`, `skills`. Rule ids
//! (AU1–AU7) are defined in `docs/profiles/auggie.md`, each with its recorded case.

pub mod profile;
pub mod prose;

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing, file_bytes};
use ctxgraph_db::system::FileKind;
use ctxgraph_db::worktree::worktree;

pub use prose::Prose;

/// AU2: the workspace's agent files, both sent, in this order.
pub const AGENT_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// A link loop would have Node recurse until the path is too long; ctxgraph stops earlier.
const MAX_DEPTH: usize = 32;

/// AU3: a rule's `type`, as the request numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleType {
    /// 0: always in the request's rules.
    AlwaysApply,
    /// 1: only when the user names it: not sent.
    Manual,
    /// 2: sent with its description; Augment's server decides.
    AgentRequested,
}

impl RuleType {
    /// The number the request carries.
    pub fn number(self) -> u8 {
        match self {
            RuleType::AlwaysApply => 0,
            RuleType::Manual => 1,
            RuleType::AgentRequested => 2,
        }
    }
}

/// Where a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// AU2: the workspace's `AGENTS.md` or `CLAUDE.md`.
    AgentFile,
    /// AU3: below the workspace's `.augment/rules`.
    Workspace,
    /// AU4: below `~/.augment/rules`.
    User,
}

/// One rule file Auggie read, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Rule {
    /// Absolute path.
    pub source: PathBuf,
    /// What the request names it by: relative to the workspace root, or absolute for a
    /// user rule.
    pub path: String,
    /// Where it comes from.
    pub kind: Kind,
    /// Its text, front matter removed (agent files: as on disk).
    pub content: String,
    /// Its type.
    #[serde(rename = "type")]
    pub rule_type: RuleType,
    /// Its `description`, when it has one.
    pub description: Option<String>,
}

impl Rule {
    /// Whether the request carries it.
    pub fn sent(&self) -> bool {
        self.rule_type != RuleType::Manual
    }

    /// The rule behind its fate.
    pub fn rule(&self) -> &'static str {
        match (self.kind, self.rule_type) {
            (_, RuleType::Manual) => "AU3",
            (Kind::AgentFile, _) => "AU2",
            (Kind::Workspace, _) => "AU3",
            (Kind::User, _) => "AU4",
        }
    }

    /// Why, citing the rule.
    pub fn reason(&self) -> String {
        match (self.kind, self.rule_type) {
            (_, RuleType::Manual) => {
                "left out: a manual rule, sent only when the user names it (AU3)".to_owned()
            }
            (Kind::AgentFile, _) => {
                "the workspace root's AGENTS.md or CLAUDE.md: both go in the request's rules, as written (AU2)".to_owned()
            }
            (Kind::Workspace, RuleType::AgentRequested) => "a rule below .augment/rules, sent as agent_requested with its description: Augment's server decides whether the model sees it (AU3)".to_owned(),
            (Kind::Workspace, _) => "a rule below .augment/rules, always applied (AU3)".to_owned(),
            (Kind::User, _) => "a rule below ~/.augment/rules, under its absolute path (AU4)".to_owned(),
        }
    }
}

/// One skill Auggie lists.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Skill {
    /// The `SKILL.md` file.
    pub location: PathBuf,
    /// Its `name`.
    pub name: String,
    /// Its `description`; a skill without one is not sent.
    pub description: Option<String>,
    /// `user` (`~/.augment/skills`) or `workspace`.
    pub source: &'static str,
}

/// Everything Auggie decides about its rule-bearing fields for one working directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct AuggieContext {
    /// AU1: the workspace root (the git root, else the working directory).
    pub root: PathBuf,
    /// AU5: `.augment-guidelines`, when it exists.
    pub guidelines: Option<(PathBuf, String)>,
    /// AU2–AU4: every rule file read, in order.
    pub rules: Vec<Rule>,
    /// AU6: every skill found, in order.
    pub skills: Vec<Skill>,
}

/// Node's `readFileSync(path, "utf-8")`.
fn read_text(db: &dyn Db, path: &Path) -> Option<String> {
    file_bytes(db, db.files().get(db, path))
        .as_ref()
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes[..]).into_owned())
}

/// The front matter's keys Auggie reads, and the text after it.
struct Parsed {
    keys: Vec<(String, String)>,
    body: String,
}

/// A leading `---` block: its `key: value` pairs (YAML strings), the text after its closing
/// line with the blank lines that start it removed. Without one, the whole text.
fn front_matter(text: &str) -> Parsed {
    let whole = || Parsed { keys: Vec::new(), body: text.to_owned() };
    let Some(rest) =
        text.strip_prefix("---").and_then(|r| r.strip_prefix("\r\n").or_else(|| r.strip_prefix('\n')))
    else {
        return whole();
    };
    let Some(close) = rest.find("\n---") else { return whole() };
    let yaml = rest[..close].trim_end_matches('\r');
    let after = &rest[close + "\n---".len()..];
    let after = after.strip_prefix("\r\n").or_else(|| after.strip_prefix('\n')).unwrap_or(after);
    let mut keys = Vec::new();
    if let Ok(docs) = Yaml::load_from_str(yaml)
        && let Some(Yaml::Mapping(map)) = docs.first()
    {
        for (k, v) in map {
            let text = |y: &Yaml<'_>| match y {
                Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s.to_string()),
                _ => None,
            };
            if let (Some(k), Some(v)) = (text(k), text(v)) {
                keys.push((k, v));
            }
        }
    }
    Parsed { keys, body: after.trim_start_matches(['\r', '\n']).to_owned() }
}

/// AU3: a rule file's type: its `type`, else agent-requested when it has a description,
/// else always applied.
fn rule_of(db: &dyn Db, source: PathBuf, path: String, kind: Kind) -> Option<Rule> {
    let text = read_text(db, &source)?;
    let parsed = front_matter(&text);
    let get = |key: &str| parsed.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let description = get("description").filter(|d| !d.is_empty());
    let rule_type = match get("type").map(|t| t.to_lowercase()).as_deref() {
        Some("always_apply") => RuleType::AlwaysApply,
        Some("manual") => RuleType::Manual,
        Some("agent_requested") => RuleType::AgentRequested,
        _ if description.is_some() => RuleType::AgentRequested,
        _ => RuleType::AlwaysApply,
    };
    Some(Rule { source, path, kind, content: parsed.body, rule_type, description })
}

/// The `.md` files below `dir`, by path.
fn markdown_below(db: &dyn Db, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH {
        return;
    }
    for entry in dir_listing(db, db.files().get(db, dir)).iter() {
        let path = dir.join(entry.name.as_str());
        match db.files().get(db, &path).kind(db) {
            FileKind::File if entry.name.ends_with(".md") => out.push(path),
            FileKind::Directory => markdown_below(db, &path, depth + 1, out),
            _ => {}
        }
    }
}

/// AU6: the skills of a skills folder (`<name>/SKILL.md`), by folder name.
fn skills_in(db: &dyn Db, dir: &Path, source: &'static str, out: &mut Vec<Skill>) {
    for entry in dir_listing(db, db.files().get(db, dir)).iter() {
        let location = dir.join(entry.name.as_str()).join("SKILL.md");
        let Some(text) = read_text(db, &location) else { continue };
        let parsed = front_matter(&text);
        let get = |key: &str| parsed.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let Some(name) = get("name").filter(|n| !n.trim().is_empty()) else { continue };
        out.push(Skill { location, name, description: get("description").filter(|d| !d.is_empty()), source });
    }
}

/// AU1–AU6: every file Auggie reads in `ws` for its request's rule-bearing fields.
#[salsa::tracked(returns(ref))]
pub fn auggie_context(db: &dyn Db, ws: Workspace) -> AuggieContext {
    let tree = worktree(db, ws);
    let root = if tree.is_git() { tree.root.clone() } else { ws.cwd(db).clone() };
    let home = ws.host(db).home(db).clone();
    let relative = |path: &Path| ctxgraph_db::path::relative(&root, path);
    let mut rules = Vec::new();
    for name in AGENT_FILES {
        let source = root.join(name);
        if db.files().get(db, &source).kind(db) == FileKind::File {
            rules.extend(rule_of(db, source, name.to_owned(), Kind::AgentFile).map(|mut rule| {
                // AU2: an agent file goes as written, front matter and all, always applied.
                rule.content = read_text(db, &rule.source).unwrap_or_default();
                rule.rule_type = RuleType::AlwaysApply;
                rule.description = None;
                rule
            }));
        }
    }
    let mut files = Vec::new();
    markdown_below(db, &root.join(".augment").join("rules"), 0, &mut files);
    for source in files {
        let path = relative(&source);
        rules.extend(rule_of(db, source, path, Kind::Workspace));
    }
    let mut files = Vec::new();
    markdown_below(db, &home.join(".augment").join("rules"), 0, &mut files);
    for source in files {
        let path = source.to_string_lossy().into_owned();
        rules.extend(rule_of(db, source, path, Kind::User));
    }
    let guidelines_path = root.join(".augment-guidelines");
    let guidelines = read_text(db, &guidelines_path).map(|text| (guidelines_path, text));
    let mut skills = Vec::new();
    skills_in(db, &home.join(".augment").join("skills"), "user", &mut skills);
    skills_in(db, &root.join(".augment").join("skills"), "workspace", &mut skills);
    AuggieContext { root, guidelines, rules, skills }
}
