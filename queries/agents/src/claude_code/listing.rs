//! What Claude Code lists in its first request from the project's and the user's files:
//! skills and slash commands (CC17), subagents (CC18), the output style (CC19), and the
//! `.mcp.json` files between the working directory and the git root (the working directory's
//! servers are `mcp.rs`'s, CC22). Every file is read through the database, so a changed
//! skill re-runs only this query.

use std::path::{Path, PathBuf};

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes};
use ctxgraph_db::system::{EntryKind, FileKind};
use ctxgraph_db::worktree::worktree;

use super::markdown;

/// One entry of the skill list (CC17) or the agent list (CC18).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The name it is listed under.
    pub name: String,
    /// The file it comes from.
    pub source: PathBuf,
    /// The text after `- NAME: `; `None` for a skill with no description and no text, which
    /// gets Claude Code's default description.
    pub description: Option<String>,
    /// Why it is listed where it is.
    pub reason: String,
}

/// The project's output style (CC19).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    /// Its `name:`.
    pub name: String,
    /// Its text, frontmatter cut and trimmed; empty for a built-in style (Claude Code's).
    pub body: String,
    /// The style's file; the settings file for a built-in style.
    pub source: PathBuf,
    /// The settings file that chose it.
    pub settings: PathBuf,
    /// One of Claude Code's own styles, no file's.
    pub builtin: bool,
    /// `keep-coding-instructions: true` (every built-in style): the system prompt keeps its
    /// tasks section.
    pub keep_coding: bool,
}

/// CC19: the names of Claude Code 2.1.332's built-in output styles.
pub const BUILTIN_STYLES: [&str; 4] = ["Proactive", "Concise", "Explanatory", "Learning"];

/// Everything the listings of the first request take from files.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Listings {
    /// The skill list's own entries, in order: the user's skills, the project's, then the
    /// commands (CC17).
    pub skills: Vec<Entry>,
    /// Files that looked like entries and are not listed, with why.
    pub left_out: Vec<(PathBuf, &'static str, String)>,
    /// The user's and the project's agents, unsorted (CC18 sorts them among the built-ins).
    pub agents: Vec<Entry>,
    /// The output style in force, when its file is found.
    pub style: Option<Style>,
    /// `outputStyle` as set, and where, when set.
    pub style_setting: Option<(String, PathBuf)>,
    /// `.mcp.json` files from the working directory up to the git root (CC22).
    pub mcp: Vec<PathBuf>,
}

/// The folders whose `.claude/` the project's listings come from: the working directory and
/// every folder above it up to the git root, nearest first (the working directory alone
/// outside a git repository).
fn project_dirs(db: &dyn Db, ws: Workspace) -> Vec<PathBuf> {
    let cwd = ws.cwd(db).clone();
    let tree = worktree(db, ws);
    if !tree.is_git() || !cwd.starts_with(&tree.root) {
        return vec![cwd];
    }
    cwd.ancestors().take_while(|d| d.starts_with(&tree.root)).map(Path::to_path_buf).collect()
}

fn kind(db: &dyn Db, path: &Path) -> FileKind {
    db.files().get(db, path).kind(db)
}

/// The entries of `dir` sorted by name, each with whether it is a folder (links followed).
fn entries(db: &dyn Db, dir: &Path) -> Vec<(String, PathBuf, bool)> {
    if kind(db, dir) != FileKind::Directory {
        return Vec::new();
    }
    dir_listing_by_name(db, db.files().get(db, dir))
        .into_iter()
        .filter_map(|entry| {
            let path = dir.join(entry.name.as_str());
            let is_dir = match entry.kind {
                EntryKind::Directory => true,
                EntryKind::File => false,
                EntryKind::Symlink => match kind(db, &path) {
                    FileKind::Directory => true,
                    FileKind::File => false,
                    _ => return None,
                },
                EntryKind::Other => return None,
            };
            Some((entry.name.to_string(), path, is_dir))
        })
        .collect()
}

fn text(db: &dyn Db, path: &Path) -> Option<String> {
    let bytes = file_bytes(db, db.files().get(db, path)).as_ref().ok()?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

fn field<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// CC17: a skill's or command's description: its `description:`, else its text's first
/// line (a heading's `#`s cut), with ` - ` and `when_to_use:` after it; `>` written `&gt;`.
fn description(fields: &[(String, String)], body: &str) -> Option<String> {
    let described = field(fields, "description").filter(|d| !d.trim().is_empty()).map(str::to_owned);
    let first_line = || {
        body.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.trim_start_matches('#').trim_start().to_owned())
    };
    let mut text = described.or_else(first_line)?;
    if let Some(when) = field(fields, "when_to_use") {
        text = format!("{text} - {when}");
    }
    Some(cap(&text.replace('>', "&gt;")))
}

/// CC17: a description longer than this many UTF-16 code units is cut to one less and `…`.
const MAX_DESCRIPTION: usize = 1536;

fn cap(text: &str) -> String {
    if text.encode_utf16().count() <= MAX_DESCRIPTION {
        return text.to_owned();
    }
    let mut units = 0;
    let kept: String = text
        .chars()
        .take_while(|c| {
            units += c.len_utf16();
            units < MAX_DESCRIPTION
        })
        .collect();
    format!("{kept}\u{2026}")
}

/// CC17: `disable-model-invocation: true` keeps an entry out of the list.
fn hidden(fields: &[(String, String)]) -> bool {
    field(fields, "disable-model-invocation") == Some("true")
}

/// CC17: the skills of one `skills` folder: each direct subfolder's `SKILL.md`, by name.
pub(super) fn skills_in(db: &dyn Db, dir: &Path, whose: &str, out: &mut Listings, seen: &mut Vec<String>) {
    for (folder, path, is_dir) in entries(db, dir) {
        if !is_dir {
            continue;
        }
        let file = path.join("SKILL.md");
        let Some(text) = text(db, &file) else { continue };
        let (fields, body) = markdown::fields(&text);
        let name = field(&fields, "name").map_or(folder, str::to_owned);
        if hidden(&fields) {
            out.left_out.push((file, "hidden", format!("{name}: disable-model-invocation is true (CC17)")));
            continue;
        }
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let reason = format!("{whose} skill {name}, listed by name after the user's skills (CC17)");
        out.skills.push(Entry { name, source: file, description: description(&fields, body), reason });
    }
}

/// CC17: the `.md` files below a `commands` folder, `team/sync.md` named `team:sync`.
fn commands_in(db: &dyn Db, dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    for (name, path, is_dir) in entries(db, dir) {
        if is_dir {
            commands_in(db, &path, &format!("{prefix}{name}:"), out);
        } else if let Some(stem) = name.strip_suffix(".md") {
            out.push((format!("{prefix}{stem}"), path));
        }
    }
}

/// CC18: one agent file's entry: `name:` and `description:` both needed.
fn agent(db: &dyn Db, path: &Path, whose: &str) -> Result<Entry, String> {
    let text = text(db, path).ok_or("cannot be read")?;
    let (fields, _) = markdown::fields(&text);
    let name = field(&fields, "name").ok_or("no name: in its frontmatter")?;
    let described = field(&fields, "description").ok_or("no description: in its frontmatter")?;
    let tools = tools(field(&fields, "tools"), field(&fields, "disallowedTools"));
    Ok(Entry {
        name: name.to_owned(),
        source: path.to_path_buf(),
        description: Some(format!("{described} (Tools: {tools})")),
        reason: format!("{whose} agent {name}, sorted among the built-in agents by name, case aside (CC18)"),
    })
}

/// CC18: an agent's tools as listed: `tools:` less `disallowedTools:` (`None` when nothing is
/// left), `All tools except …` with only the second, `All tools` with neither. Each is a
/// list or a comma-separated string.
fn tools(allowed: Option<&str>, disallowed: Option<&str>) -> String {
    let split = |list: Option<&str>| -> Vec<String> {
        list.map(|l| l.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let (allowed, disallowed) = (split(allowed), split(disallowed));
    match (allowed.is_empty(), disallowed.is_empty()) {
        (false, false) => {
            let left: Vec<&str> =
                allowed.iter().filter(|t| !disallowed.contains(t)).map(String::as_str).collect();
            if left.is_empty() { "None".to_owned() } else { left.join(", ") }
        }
        (false, true) => allowed.join(", "),
        (true, false) => format!("All tools except {}", disallowed.join(", ")),
        (true, true) => "All tools".to_owned(),
    }
}

/// The settings files `outputStyle` is read from, the last that sets it winning (CC19).
fn style_settings(db: &dyn Db, ws: Workspace) -> Option<(String, PathBuf)> {
    let set = super::settings::values(db, ws, "outputStyle");
    set.filter_map(|(name, settings)| Some((name.as_str()?.to_owned(), settings.clone()))).last()
}

/// CC19: the style file named `name`: its `name:` (else its file name) among the
/// project's and the user's `output-styles` folders; else Claude Code's built-in style of
/// that name.
fn find_style(db: &dyn Db, dirs: &[PathBuf], name: &str, settings: &Path) -> Option<Style> {
    for dir in dirs {
        for (file, path, is_dir) in entries(db, &dir.join("output-styles")) {
            let Some(stem) = file.strip_suffix(".md").filter(|_| !is_dir) else { continue };
            let Some(text) = text(db, &path) else { continue };
            let (fields, body) = markdown::fields(&text);
            if field(&fields, "name").unwrap_or(stem) == name {
                return Some(Style {
                    name: name.to_owned(),
                    body: body.trim().to_owned(),
                    source: path,
                    settings: settings.to_path_buf(),
                    builtin: false,
                    keep_coding: field(&fields, "keep-coding-instructions") == Some("true"),
                });
            }
        }
    }
    BUILTIN_STYLES.contains(&name).then(|| Style {
        name: name.to_owned(),
        body: String::new(),
        source: settings.to_path_buf(),
        settings: settings.to_path_buf(),
        builtin: true,
        keep_coding: true,
    })
}

/// The listings of `ws`'s first request.
#[salsa::tracked(returns(ref))]
pub fn listings(db: &dyn Db, ws: Workspace) -> Listings {
    let user = super::config_dir(db, ws);
    let project: Vec<PathBuf> = project_dirs(db, ws).into_iter().map(|d| d.join(".claude")).collect();
    let mut out = Listings::default();
    let mut seen = Vec::new();
    // CC17: the user's skills, then each project folder's, nearest first, each by name.
    for (dir, whose) in
        std::iter::once((&user, "the user's")).chain(project.iter().map(|d| (d, "the project's")))
    {
        let from = out.skills.len();
        skills_in(db, &dir.join("skills"), whose, &mut out, &mut seen);
        out.skills[from..].sort_by(|a, b| a.name.cmp(&b.name));
    }
    let mut commands = Vec::new();
    for dir in project.iter().chain(std::iter::once(&user)) {
        commands_in(db, &dir.join("commands"), "", &mut commands);
    }
    // By name; of two with one name, the nearest folder's (the sort is stable).
    commands.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, path) in commands {
        if seen.contains(&name) {
            out.left_out.push((
                path,
                "shadowed",
                format!("a skill or a nearer command is named {name} too: that one is listed (CC17)"),
            ));
            continue;
        }
        let Some(text) = text(db, &path) else { continue };
        let (fields, body) = markdown::fields(&text);
        if hidden(&fields) {
            out.left_out.push((path, "hidden", format!("{name}: disable-model-invocation is true (CC17)")));
            continue;
        }
        let Some(description) = description(&fields, body) else {
            out.left_out.push((
                path,
                "empty",
                format!("the command {name} has no description and no text (CC17)"),
            ));
            continue;
        };
        seen.push(name.clone());
        let reason = format!("the command {name}, listed by name after the skills (CC17)");
        out.skills.push(Entry { name, source: path, description: Some(description), reason });
    }
    // CC18: the project's agents (nearest folder first) win over the user's of one name.
    for (dir, whose) in
        project.iter().map(|d| (d, "the project's")).chain(std::iter::once((&user, "the user's")))
    {
        for (file, path, is_dir) in entries(db, &dir.join("agents")) {
            if is_dir || Path::new(&file).extension().is_none_or(|ext| ext != "md") {
                continue;
            }
            match agent(db, &path, whose) {
                Ok(entry) if !out.agents.iter().any(|a| a.name == entry.name) => out.agents.push(entry),
                Ok(_) => {}
                Err(why) => out.left_out.push((path, "not_an_agent", format!("{why} (CC18)"))),
            }
        }
    }
    out.style_setting = style_settings(db, ws);
    if let Some((name, settings)) = &out.style_setting {
        let dirs: Vec<PathBuf> = project.iter().cloned().chain(std::iter::once(user.clone())).collect();
        out.style = find_style(db, &dirs, name, settings);
    }
    out.mcp = project_dirs(db, ws)
        .into_iter()
        .map(|d| d.join(".mcp.json"))
        .filter(|p| kind(db, p) == FileKind::File)
        .collect();
    out
}
