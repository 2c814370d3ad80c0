//! CX7–CX10: the skills Codex lists in its second developer message
//! (`<skills_instructions>`): where it looks (CX7), what a `SKILL.md` must hold (CX8), what
//! hides a skill (CX9), and the message's order and aliases (CX10). Recorded in cases
//! CX-11 to CX-14.
//!
//! Discovery follows Codex: a breadth-first walk of each root through the directory as the
//! disk lists it, links followed, each real file once (the first path met names it).

use std::collections::{HashSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing, file_bytes, real_path};
use ctxgraph_db::system::FileKind;

use super::config::{SkillsConfig, codex_home};

/// The file that makes a folder a skill (exactly this name: `skill.md` is not one).
pub const SKILL_FILE: &str = "SKILL.md";
/// How deep below a root Codex looks, and how many folders it reads per root: the limits
/// of Codex's own walker (its source), not reached by any recorded case.
const MAX_DEPTH: usize = 6;
const MAX_DIRS_PER_ROOT: usize = 2000;
/// CX8: longest name kept, and the description's cut (characters).
const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Which kind of folder a root is; the kind decides the skill's group in the listing (CX10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootKind {
    /// `<dir>/.codex/skills` of a project folder.
    ProjectCodex,
    /// `$CODEX_HOME/skills`.
    UserCodex,
    /// `~/.agents/skills`.
    UserAgents,
    /// `$CODEX_HOME/skills/.system`: the skills Codex writes there at start.
    Bundled,
    /// `<dir>/.agents/skills` of a project folder.
    ProjectAgents,
}

impl RootKind {
    /// CX10: bundled skills first, then the project's, then the user's.
    fn group(self) -> u8 {
        match self {
            RootKind::Bundled => 0,
            RootKind::ProjectCodex | RootKind::ProjectAgents => 1,
            RootKind::UserCodex | RootKind::UserAgents => 2,
        }
    }
}

/// One folder Codex looks for skills in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Root {
    /// The folder.
    pub path: PathBuf,
    /// What it is.
    pub kind: RootKind,
}

/// What became of one `SKILL.md`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum SkillFate {
    /// A line of the listing (CX10).
    Listed,
    /// CX9: loaded, not listed: `agents/openai.yaml` sets
    /// `policy.allow_implicit_invocation: false`.
    NoImplicitInvocation,
    /// CX9: turned off by a `[[skills.config]]` entry of `config.toml`.
    Disabled,
    /// CX8: not loaded, with Codex's reason.
    Failed {
        /// Why.
        reason: String,
    },
    /// The same file was met earlier through another path (a link).
    SameFile {
        /// The path it is listed under.
        by: PathBuf,
    },
}

/// One `SKILL.md` Codex found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Skill {
    /// The path Codex met it by.
    pub path: PathBuf,
    /// Index of its root in [`Skills::roots`].
    pub root: usize,
    /// Its name (the front matter's, else its folder's).
    pub name: String,
    /// Its description as listed (whitespace runs made one space, cut at 1024 characters).
    pub description: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: SkillFate,
}

impl Skill {
    /// The rule behind the fate.
    pub fn rule(&self) -> &'static str {
        match self.fate {
            SkillFate::Listed | SkillFate::SameFile { .. } => "CX10",
            SkillFate::Failed { .. } => "CX8",
            SkillFate::NoImplicitInvocation | SkillFate::Disabled => "CX9",
        }
    }

    /// Why, citing the rule.
    pub fn reason(&self) -> String {
        match &self.fate {
            SkillFate::Listed => format!(
                "the skill `{}`: Codex lists its name, description and path in <skills_instructions>, not its body (CX10)",
                self.name
            ),
            SkillFate::NoImplicitInvocation => {
                "not listed: its agents/openai.yaml sets policy.allow_implicit_invocation: false (CX9)"
                    .to_owned()
            }
            SkillFate::Disabled => {
                "not listed: a [[skills.config]] entry of config.toml disables it (CX9)".to_owned()
            }
            SkillFate::Failed { reason } => format!("not loaded: {reason} (CX8)"),
            SkillFate::SameFile { by } => {
                format!("the same file is already listed as {} (CX7)", ctxgraph_db::path::display(by))
            }
        }
    }
}

/// Every root and every `SKILL.md` Codex found from a working directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Skills {
    /// The roots in Codex's order (CX7).
    pub roots: Vec<Root>,
    /// Each file found, root by root, in walk order.
    pub found: Vec<Skill>,
    /// Whether the message is sent at all (`[skills] include_instructions`).
    pub include_instructions: bool,
}

impl Skills {
    /// The listed skills in the message's order (CX10): bundled, project, user; by name in
    /// byte order, then by path.
    pub fn listed(&self) -> Vec<&Skill> {
        let mut listed: Vec<&Skill> = self.found.iter().filter(|s| s.fate == SkillFate::Listed).collect();
        listed.sort_by(|a, b| {
            let group = |s: &Skill| self.roots[s.root].kind.group();
            (group(a), a.name.as_bytes(), &a.path).cmp(&(group(b), b.name.as_bytes(), &b.path))
        });
        listed
    }

    /// The roots that hold a listed skill, each with its alias number, in root order.
    pub fn aliases(&self) -> Vec<(usize, &Root)> {
        let used: HashSet<usize> = self.listed().iter().map(|s| s.root).collect();
        self.roots.iter().enumerate().filter(|(i, _)| used.contains(i)).collect()
    }

    /// The `<skills_instructions>` text, with `intro` (Codex's own sentence) after the first
    /// heading, fitted to the budget for a model of `context_window` tokens (CX13); `None`
    /// when Codex sends no skills message (no listed skill, or turned off).
    pub fn message(&self, intro: &str, context_window: u64) -> Option<Message> {
        let listed = self.listed();
        if !self.include_instructions || listed.is_empty() {
            return None;
        }
        let aliases = self.aliases();
        let alias_of = |root: usize| aliases.iter().position(|(i, _)| *i == root).unwrap_or_default();
        let entries: Vec<Entry<'_>> = listed
            .iter()
            .map(|skill| {
                let below = skill.path.strip_prefix(&self.roots[skill.root].path).unwrap_or(&skill.path);
                Entry {
                    name: &skill.name,
                    description: &skill.description,
                    file: format!("r{}/{}", alias_of(skill.root), below.display()),
                }
            })
            .collect();
        let fitted = fit(&entries, context_window.saturating_mul(BUDGET_PERCENT) / 100);
        let mut text = format!("<skills_instructions>\n## Skills\n{intro}\n### Skill roots\n");
        for (alias, (_, root)) in aliases.iter().enumerate() {
            let _ = writeln!(text, "- `r{alias}` = `{}`", root.path.display());
        }
        text.push_str("### Available skills\n");
        let mut lines = Vec::new();
        for ((skill, entry), kept) in listed.iter().zip(&entries).zip(&fitted.kept) {
            let Some(chars) = *kept else { continue };
            let start = text.len();
            text.push_str(&entry.line(chars));
            lines.push(Line {
                path: skill.path.clone(),
                range: start..text.len(),
                cut: chars < entry.description.chars().count(),
            });
            text.push('\n');
        }
        text.push_str("</skills_instructions>");
        let omitted = fitted.omitted();
        Some(Message { text, lines, budget: fitted.budget, omitted })
    }
}

/// CX13: the skills listing may use this share (per cent) of the model's context window.
const BUDGET_PERCENT: u64 = 2;

/// One skill's line before the budget: `- <name>: <description> (file: <file>)`.
struct Entry<'a> {
    name: &'a str,
    description: &'a str,
    file: String,
}

impl Entry<'_> {
    /// The line with the description's first `chars` characters (none: `- name: (file: …)`).
    fn line(&self, chars: usize) -> String {
        let end = self.description.char_indices().nth(chars).map_or(self.description.len(), |(at, _)| at);
        match &self.description[..end] {
            "" => format!("- {}: (file: {})", self.name, self.file),
            kept => format!("- {}: {kept} (file: {})", self.name, self.file),
        }
    }
}

/// Codex's estimate of a text's tokens: a quarter of its bytes, rounded up.
fn approx_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// What the budget left of each line: `Some(n)`, the description's first n characters;
/// `None`, the line left out.
struct Fitted {
    budget: Option<u64>,
    kept: Vec<Option<usize>>,
}

impl Fitted {
    fn omitted(&self) -> usize {
        self.kept.iter().filter(|k| k.is_none()).count()
    }
}

/// CX13: every line whole when their estimated tokens (each line with its newline) fit
/// `budget`; else every line without its description, and what is left shared out one
/// character at a time, line by line in listing order, each character taken while its
/// cost still fits (so short descriptions finish and leave the rest to longer ones); when
/// even the bare lines do not fit, the first that fit, bare, and the others left out.
fn fit(entries: &[Entry<'_>], budget: u64) -> Fitted {
    let cost = |line: &str| approx_tokens(line.len() + 1);
    let full: Vec<usize> = entries.iter().map(|e| e.description.chars().count()).collect();
    if entries.iter().map(|e| cost(&e.line(usize::MAX))).sum::<u64>() <= budget {
        return Fitted { budget: None, kept: full.into_iter().map(Some).collect() };
    }
    let bare_bytes: Vec<usize> = entries.iter().map(|e| e.line(0).len() + 1).collect();
    let minimum: u64 = bare_bytes.iter().map(|&b| approx_tokens(b)).sum();
    if minimum > budget {
        let mut used = 0;
        let kept = bare_bytes
            .iter()
            .map(|&b| {
                let c = approx_tokens(b);
                (used + c <= budget).then(|| {
                    used += c;
                    0
                })
            })
            .collect();
        return Fitted { budget: Some(budget), kept };
    }
    // Each line's cost with its first k description characters, over its bare cost (the
    // space before the description is one more byte).
    let extra: Vec<Vec<u64>> = entries
        .iter()
        .zip(&bare_bytes)
        .map(|(entry, &bare)| {
            let base = approx_tokens(bare);
            let mut bytes = bare + 1;
            std::iter::once(0)
                .chain(entry.description.chars().map(|ch| {
                    bytes += ch.len_utf8();
                    approx_tokens(bytes) - base
                }))
                .collect()
        })
        .collect();
    let mut remaining = budget - minimum;
    let mut chars = vec![0usize; entries.len()];
    loop {
        let mut grew = false;
        for (i, costs) in extra.iter().enumerate() {
            if chars[i] >= full[i] {
                continue;
            }
            let delta = costs[chars[i] + 1] - costs[chars[i]];
            if delta <= remaining {
                remaining -= delta;
                chars[i] += 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Fitted { budget: Some(budget), kept: chars.into_iter().map(Some).collect() }
}

/// The skills message and where each skill's line is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Exactly the content item Codex sends.
    pub text: String,
    /// Each listed skill's line.
    pub lines: Vec<Line>,
    /// CX13: the budget in estimated tokens, when the lines did not fit whole.
    pub budget: Option<u64>,
    /// CX13: skills left out because even their bare lines did not fit.
    pub omitted: usize,
}

/// One skill's line in the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The skill's file.
    pub path: PathBuf,
    /// The line's byte range (without its newline).
    pub range: std::ops::Range<usize>,
    /// CX13: its description was shortened to fit the budget.
    pub cut: bool,
}

/// CX7: the roots, in Codex's order: `.codex/skills` of every folder from the working
/// directory up to the git root, `$CODEX_HOME/skills`, `~/.agents/skills`, the bundled
/// skills' folder, then `.agents/skills` of every folder from the git root down.
pub fn roots(
    cwd: &Path,
    git_root: Option<&Path>,
    codex_home: &Path,
    home: &Path,
    bundled: bool,
) -> Vec<Root> {
    // From the git root down (CX2's folders).
    let project = super::project_dirs(cwd, git_root);
    let mut roots: Vec<Root> = project
        .iter()
        .rev()
        .map(|dir| Root { path: dir.join(".codex").join("skills"), kind: RootKind::ProjectCodex })
        .collect();
    roots.push(Root { path: codex_home.join("skills"), kind: RootKind::UserCodex });
    roots.push(Root { path: home.join(".agents").join("skills"), kind: RootKind::UserAgents });
    if bundled {
        roots.push(Root { path: codex_home.join("skills").join(".system"), kind: RootKind::Bundled });
    }
    roots.extend(
        project
            .iter()
            .map(|dir| Root { path: dir.join(".agents").join("skills"), kind: RootKind::ProjectAgents }),
    );
    roots
}

/// CX7–CX9 from `ws`'s working directory: every root and every skill file, each with its
/// fate.
#[salsa::tracked(returns(ref))]
pub fn skills(db: &dyn Db, ws: Workspace) -> Skills {
    let (cwd, git_root) = (ws.cwd(db).clone(), super::git_root(db, ws));
    let host = ws.host(db);
    let home = codex_home(db, host);
    let config = match super::config::codex_config(db, host) {
        Ok(config) => config.skills.clone(),
        Err(_) => SkillsConfig::default(),
    };
    let roots = roots(&cwd, git_root.as_deref(), home, host.home(db), config.bundled);
    let mut found = Vec::new();
    let mut met: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (index, root) in roots.iter().enumerate() {
        for path in walk(db, &root.path) {
            let real = real_path(db, &path);
            if let Some((_, by)) = met.iter().find(|(r, _)| *r == real) {
                let by = by.clone();
                found.push(Skill {
                    path,
                    root: index,
                    name: String::new(),
                    description: String::new(),
                    fate: SkillFate::SameFile { by },
                });
                continue;
            }
            met.push((real.clone(), path.clone()));
            let mut skill = load(db, &path, index);
            if skill.fate == SkillFate::Listed {
                if config.disabled_names.contains(&skill.name)
                    || config.disabled_paths.iter().any(|p| *p == path || *p == real)
                {
                    skill.fate = SkillFate::Disabled;
                } else if no_implicit_invocation(db, &path) {
                    skill.fate = SkillFate::NoImplicitInvocation;
                }
            }
            found.push(skill);
        }
    }
    Skills { roots, found, include_instructions: config.include_instructions }
}

/// The `SKILL.md` files below `root`, breadth first through the disk's listing order: a
/// folder's own `SKILL.md`, then its sub-folders (dot folders skipped, links followed, each
/// real folder once).
fn walk(db: &dyn Db, root: &Path) -> Vec<PathBuf> {
    let kind = |path: &Path| db.files().get(db, path).kind(db);
    let mut out = Vec::new();
    if kind(root) != FileKind::Directory {
        return out;
    }
    let mut seen = HashSet::from([real_path(db, root)]);
    let mut queue = VecDeque::from([(root.to_path_buf(), 0usize)]);
    let mut read = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        read += 1;
        if read > MAX_DIRS_PER_ROOT {
            break;
        }
        for entry in dir_listing(db, db.files().get(db, &dir)).iter() {
            let name = entry.name.as_str();
            let path = dir.join(name);
            match kind(&path) {
                FileKind::File if name == SKILL_FILE => out.push(path),
                FileKind::Directory
                    if !name.starts_with('.') && depth < MAX_DEPTH && seen.insert(real_path(db, &path)) =>
                {
                    queue.push_back((path, depth + 1));
                }
                _ => {}
            }
        }
    }
    out
}

/// CX9: `agents/openai.yaml` beside the skill turns implicit invocation off.
fn no_implicit_invocation(db: &dyn Db, skill: &Path) -> bool {
    let Some(dir) = skill.parent() else { return false };
    let Ok(bytes) = file_bytes(db, db.files().get(db, &dir.join("agents").join("openai.yaml"))) else {
        return false;
    };
    let Ok(docs) = Yaml::load_from_str(&String::from_utf8_lossy(bytes)) else { return false };
    let Some(Yaml::Mapping(map)) = docs.first() else { return false };
    let Some(Yaml::Mapping(policy)) = entry(map, "policy") else { return false };
    matches!(entry(policy, "allow_implicit_invocation"), Some(Yaml::Value(Scalar::Boolean(false))))
}

/// The value of `key` in a YAML mapping.
fn entry<'a, 'y>(map: &'a saphyr::Mapping<'y>, key: &str) -> Option<&'a Yaml<'y>> {
    map.iter().find(|(k, _)| matches!(k, Yaml::Value(Scalar::String(s)) if s == key)).map(|(_, v)| v)
}

/// CX8: the skill in `path`, loaded as Codex loads it.
fn load(db: &dyn Db, path: &Path, root: usize) -> Skill {
    let folder =
        path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut skill = Skill {
        path: path.to_path_buf(),
        root,
        name: folder,
        description: String::new(),
        fate: SkillFate::Listed,
    };
    let parsed = file_bytes(db, db.files().get(db, path))
        .as_ref()
        .map_err(ToString::to_string)
        .and_then(|bytes| front_matter(&String::from_utf8_lossy(bytes)));
    match parsed {
        Ok((name, description)) => {
            if let Some(name) = name {
                skill.name = name;
            }
            skill.description = description;
        }
        Err(reason) => skill.fate = SkillFate::Failed { reason },
    }
    skill
}

/// CX8: `(name, description)` from a `SKILL.md`'s front matter, or Codex's reason for not
/// loading it. Values are YAML scalars with whitespace runs made one space; where strict
/// YAML refuses a plain `key: value` line, Codex keeps the value as written.
fn front_matter(text: &str) -> Result<(Option<String>, String), String> {
    const MISSING: &str = "missing YAML frontmatter delimited by ---";
    let mut lines = text.split_inclusive('\n');
    let is_fence = |line: &str| line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---";
    if !lines.next().is_some_and(is_fence) {
        return Err(MISSING.to_owned());
    }
    let mut body = String::new();
    let mut closed = false;
    for line in lines {
        if is_fence(line) {
            closed = true;
            break;
        }
        body.push_str(line);
    }
    if !closed {
        return Err(MISSING.to_owned());
    }
    let body = body.replace("\r\n", "\n");
    let (name, description) = match Yaml::load_from_str(&body) {
        Ok(docs) => fields_of_yaml(docs.first())?,
        Err(err) if err.to_string().contains("tab") => return Err(format!("invalid YAML: {err}")),
        Err(_) => fields_of_lines(&body)?,
    };
    let name = name.map(|n| collapse(&n)).filter(|n| !n.is_empty());
    if let Some(name) = &name
        && name.chars().count() > MAX_NAME_CHARS
    {
        return Err(format!("invalid name: exceeds maximum length of {MAX_NAME_CHARS} characters"));
    }
    let description = collapse(&description.ok_or_else(|| "missing field `description`".to_owned())?);
    if description.is_empty() {
        return Err("missing field `description`".to_owned());
    }
    Ok((name, cut(description)))
}

/// `name` and `description` of a parsed front matter; a key given twice is an error.
fn fields_of_yaml(doc: Option<&Yaml<'_>>) -> Result<(Option<String>, Option<String>), String> {
    let Some(Yaml::Mapping(map)) = doc else { return Ok((None, None)) };
    let mut name = None;
    let mut description = None;
    for (key, value) in map {
        let Yaml::Value(Scalar::String(key)) = key else { continue };
        let slot = match key.as_ref() {
            "name" => &mut name,
            "description" => &mut description,
            _ => continue,
        };
        if slot.is_some() {
            return Err(format!("invalid YAML: duplicate field `{key}`"));
        }
        *slot = Some(scalar_text(value));
    }
    Ok((name.flatten(), description.flatten()))
}

/// A scalar as text (`42` is `"42"`); null and collections are no text.
fn scalar_text(value: &Yaml<'_>) -> Option<String> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s.to_string()),
        Yaml::Value(Scalar::Integer(n)) => Some(n.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        Yaml::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        _ => None,
    }
}

/// The lenient reading: top-level `name:` and `description:` lines, values as written.
fn fields_of_lines(body: &str) -> Result<(Option<String>, Option<String>), String> {
    let mut name = None;
    let mut description = None;
    for line in body.lines() {
        let (slot, key, value) = if let Some(v) = line.strip_prefix("name:") {
            (&mut name, "name", v)
        } else if let Some(v) = line.strip_prefix("description:") {
            (&mut description, "description", v)
        } else {
            continue;
        };
        if slot.is_some() {
            return Err(format!("invalid YAML: duplicate field `{key}`"));
        }
        *slot = Some(value.trim().to_owned());
    }
    Ok((name, description))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// CX8: a description over 1024 characters keeps its first 1021 and `...`.
fn cut(description: String) -> String {
    if description.chars().count() <= MAX_DESCRIPTION_CHARS {
        return description;
    }
    let mut kept: String = description.chars().take(MAX_DESCRIPTION_CHARS - 3).collect();
    kept.push_str("...");
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_as_codex_reads_it() {
        let ok = |text: &str| front_matter(text).expect("loads");
        assert_eq!(ok("---\ndescription: a   b\n---\n"), (None, "a b".to_owned()));
        assert_eq!(
            ok("---  \r\nname: x # c\r\ndescription: \"q \\\"d\\\"\"\r\n---\r\n").0.as_deref(),
            Some("x")
        );
        assert_eq!(
            ok("---\nname: [bracket\ndescription: a: b c\n---\n"),
            (Some("[bracket".into()), "a: b c".into())
        );
        assert_eq!(ok("---\nname: n\ndescription: 42\n---\n").1, "42");
        assert_eq!(ok("---\nname: \"  \"\ndescription: d\n---\n").0, None);
        let err = |text: &str| front_matter(text).expect_err("refused");
        assert!(err("\u{feff}---\ndescription: d\n---\n").contains("missing YAML frontmatter"));
        assert!(err("---\ndescription: d\n").contains("missing YAML frontmatter"));
        assert!(err("---\nname: n\n---\n").contains("missing field `description`"));
        assert!(err("---\ndescription: a\ndescription: b\n---\n").contains("duplicate field `description`"));
        assert!(
            err(&format!("---\nname: {}\ndescription: d\n---\n", "n".repeat(65))).contains("64 characters")
        );
    }

    #[test]
    fn a_long_description_is_cut_by_characters() {
        let long = "é".repeat(1050);
        let cut = cut(long);
        assert_eq!(cut.chars().count(), 1024);
        assert!(cut.ends_with("..."));
        assert_eq!(super::cut("y".repeat(1024)).len(), 1024);
    }

    #[test]
    fn the_budget_cuts_long_descriptions_first_and_then_leaves_skills_out() {
        let entry = |name: &'static str, description: &'static str| Entry {
            name,
            description,
            file: format!("r0/{name}/SKILL.md"),
        };
        let entries = [entry("long", "abcdefghijklmnopqrstuvwxyz0123456789"), entry("short", "tiny")];
        // Whole: 70 and 40 bytes with their newlines, 18 + 10 estimated tokens.
        assert_eq!(fit(&entries, 28).budget, None);
        assert_eq!(fit(&entries, 28).kept, [Some(36), Some(4)]);
        // Bare: 33 and 35 bytes, 9 + 9 tokens; the 5 left go one character at a time:
        // `tiny` takes 1 and is whole, the long one 4 more (up to 52 bytes: 18 characters).
        let fitted = fit(&entries, 23);
        assert_eq!(fitted.kept, [Some(18), Some(4)]);
        assert_eq!(fitted.budget, Some(23));
        // Even bare lines do not both fit: the first is kept bare, the other left out.
        let fitted = fit(&entries, 13);
        assert_eq!(fitted.kept, [Some(0), None]);
        assert_eq!(fitted.omitted(), 1);
    }

    #[test]
    fn roots_go_up_for_codex_folders_and_down_for_agents_folders() {
        let roots = roots(
            Path::new("/p/sub/deeper"),
            Some(Path::new("/p")),
            Path::new("/h/.codex"),
            Path::new("/h"),
            true,
        );
        let shown: Vec<String> = roots.iter().map(|r| r.path.display().to_string()).collect();
        assert_eq!(
            shown,
            [
                "/p/sub/deeper/.codex/skills",
                "/p/sub/.codex/skills",
                "/p/.codex/skills",
                "/h/.codex/skills",
                "/h/.agents/skills",
                "/h/.codex/skills/.system",
                "/p/.agents/skills",
                "/p/sub/.agents/skills",
                "/p/sub/deeper/.agents/skills",
            ]
        );
    }
}
