//! PI12–PI14: the skills pi lists in its system message (name, description, location; never
//! a body), found in four places and kept in that order: the working directory's
//! `.pi/skills`, `.agents/skills` from the working directory up to the git root, the global
//! folder's `skills`, `~/.agents/skills`.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing_by_name, file_bytes, real_path};
use ctxgraph_db::system::FileKind;

use super::CONFIG_DIR;

/// A link loop would have Node recurse until the path is too long; ctxgraph stops earlier.
const MAX_DEPTH: usize = 32;

/// What became of one skill file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum SkillFate {
    /// In `<available_skills>`.
    Listed,
    /// PI14: `disable-model-invocation: true`: loaded, not listed.
    Hidden,
    /// PI14: no `description` (or a blank one): not loaded.
    NoDescription,
    /// PI14: the front matter is not YAML pi reads (or a field is not text): not loaded.
    Unparsable {
        /// Why.
        reason: String,
    },
    /// PI13: an earlier skill has the same name; the first wins.
    Clash {
        /// The skill that won.
        by: PathBuf,
    },
    /// PI13: the same file was met earlier through another path (a link).
    SameFile {
        /// The path it was listed under.
        by: PathBuf,
    },
}

/// One skill file pi found, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Skill {
    /// The path pi names it by (`<location>`).
    pub path: PathBuf,
    /// Its name: the front matter's `name`, else its folder's name.
    pub name: String,
    /// Its description, as written.
    pub description: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: SkillFate,
}

impl Skill {
    /// The rule behind the fate.
    pub fn rule(&self) -> &'static str {
        match self.fate {
            SkillFate::Listed => "PI12",
            SkillFate::Clash { .. } | SkillFate::SameFile { .. } => "PI13",
            SkillFate::Hidden | SkillFate::NoDescription | SkillFate::Unparsable { .. } => "PI14",
        }
    }

    /// Why, citing the rule.
    pub fn reason(&self) -> String {
        match &self.fate {
            SkillFate::Listed => format!(
                "the skill `{}`: pi lists its name, description and location in <available_skills>, not its body (PI12)",
                self.name
            ),
            SkillFate::Hidden => "left out of the listing: disable-model-invocation: true (PI14)".to_owned(),
            SkillFate::NoDescription => "not loaded: no description (PI14)".to_owned(),
            SkillFate::Unparsable { reason } => format!("not loaded: {reason} (PI14)"),
            SkillFate::Clash { by } => format!(
                "not loaded: the skill `{}` of {} comes first (PI13)",
                self.name,
                ctxgraph_db::path::display(by)
            ),
            SkillFate::SameFile { by } => {
                format!(
                    "not loaded: the same file is already listed as {} (PI13)",
                    ctxgraph_db::path::display(by)
                )
            }
        }
    }
}

/// Every skill file found, in pi's order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Skills {
    /// Each file, with its fate.
    pub found: Vec<Skill>,
}

impl Skills {
    /// The skills in `<available_skills>`, in order.
    pub fn listed(&self) -> impl Iterator<Item = &Skill> {
        self.found.iter().filter(|s| s.fate == SkillFate::Listed)
    }
}

/// `collectSkillEntries`: a folder with a `SKILL.md` is one skill; otherwise its entries in
/// byte order of name (hidden ones and `node_modules` skipped, links followed), loose `.md`
/// files only at the top of a `.pi` skills folder (`loose`), sub-folders searched.
fn entries(db: &dyn Db, dir: &Path, loose: bool, depth: usize, out: &mut Vec<PathBuf>) {
    let kind = |path: &Path| db.files().get(db, path).kind(db);
    if depth > MAX_DEPTH || kind(dir) != FileKind::Directory {
        return;
    }
    let listing = dir_listing_by_name(db, db.files().get(db, dir));
    let skill = dir.join("SKILL.md");
    if listing.iter().any(|e| e.name.as_str() == "SKILL.md") && kind(&skill) == FileKind::File {
        out.push(skill);
        return;
    }
    for entry in &listing {
        if entry.name.starts_with('.') || entry.name.as_str() == "node_modules" {
            continue;
        }
        let path = dir.join(entry.name.as_str());
        match kind(&path) {
            FileKind::File if loose && depth == 0 && entry.name.ends_with(".md") => out.push(path),
            FileKind::Directory => entries(db, &path, loose, depth + 1, out),
            _ => {}
        }
    }
}

/// What pi reads from a skill's front matter.
#[derive(Debug, Default, PartialEq, Eq)]
struct FrontMatter {
    /// `name`, when it is non-empty text.
    name: Option<String>,
    /// `description`: `None` when absent or null, `Some(Err(()))` when not text.
    description: Option<Result<String, ()>>,
    /// `disable-model-invocation: true`.
    hidden: bool,
}

/// pi's `parseFrontmatter`: line ends made `\n`, a block from a leading `---` to the next
/// `\n---`, parsed as YAML.
fn front_matter(text: &str) -> Result<FrontMatter, String> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return Ok(FrontMatter::default());
    }
    let Some(end) = normalized.get(3..).and_then(|rest| rest.find("\n---")).map(|i| i + 3) else {
        return Ok(FrontMatter::default());
    };
    let yaml = normalized.get(4..end).unwrap_or("");
    let docs = Yaml::load_from_str(yaml).map_err(|err| format!("its front matter is not YAML: {err}"))?;
    let Some(Yaml::Mapping(map)) = docs.first() else { return Ok(FrontMatter::default()) };
    let get = |key: &str| map.iter().find(|(k, _)| text_of(k) == Some(key)).map(|(_, v)| v);
    Ok(FrontMatter {
        name: get("name").and_then(text_of).filter(|n| !n.is_empty()).map(str::to_owned),
        description: match get("description") {
            None | Some(Yaml::Value(Scalar::Null)) => None,
            Some(value) => Some(text_of(value).map(str::to_owned).ok_or(())),
        },
        hidden: matches!(get("disable-model-invocation"), Some(Yaml::Value(Scalar::Boolean(true)))),
    })
}

fn text_of<'a>(value: &'a Yaml<'_>) -> Option<&'a str> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

/// `loadSkillFromFile`: the skill in `path`, or why it is not loaded.
fn load(db: &dyn Db, path: &Path) -> Skill {
    let folder =
        path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut skill =
        Skill { path: path.to_path_buf(), name: folder, description: String::new(), fate: SkillFate::Listed };
    let parsed = file_bytes(db, db.files().get(db, path))
        .as_ref()
        .map_err(ToString::to_string)
        .and_then(|bytes| front_matter(&String::from_utf8_lossy(&bytes[..])));
    let fm = match parsed {
        Ok(fm) => fm,
        Err(reason) => {
            skill.fate = SkillFate::Unparsable { reason };
            return skill;
        }
    };
    if let Some(name) = fm.name {
        skill.name = name;
    }
    skill.fate = match fm.description {
        None => SkillFate::NoDescription,
        Some(Err(())) => SkillFate::Unparsable { reason: "its description is not text".to_owned() },
        Some(Ok(text)) if ctxgraph_db::js::js_trim(&text).is_empty() => SkillFate::NoDescription,
        Some(Ok(text)) => {
            skill.description = text;
            if fm.hidden { SkillFate::Hidden } else { SkillFate::Listed }
        }
    };
    skill
}

/// PI13: the plain `skills` entries of a `settings.json` (not the `!`, `+`, `-` or glob
/// patterns), resolved against `base` (`~` is the home folder): a file is itself, a folder
/// is searched as a `.pi` skills folder. A file that is missing or not a JSON object gives
/// none.
fn settings_entries(db: &dyn Db, settings: &Path, base: &Path, home: &Path, out: &mut Vec<PathBuf>) {
    let Ok(bytes) = file_bytes(db, db.files().get(db, settings)) else { return };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return;
    };
    let Some(serde_json::Value::Array(list)) = map.get("skills") else { return };
    let is_pattern = |s: &str| s.starts_with(['!', '+', '-']) || s.contains(['*', '?']);
    for entry in list.iter().filter_map(serde_json::Value::as_str).filter(|s| !is_pattern(s)) {
        let trimmed = ctxgraph_db::js::js_trim(entry);
        let path = match trimmed.strip_prefix('~') {
            Some(rest) => home.join(rest.trim_start_matches('/')),
            None => ctxgraph_db::path::resolve(base, trimmed),
        };
        match db.files().get(db, &path).kind(db) {
            FileKind::File if path.extension().is_some_and(|e| e == "md") => out.push(path),
            FileKind::Directory => entries(db, &path, true, 0, out),
            _ => {}
        }
    }
}

/// PI12–PI14 in `ws`: every skill file in pi's order, each with its fate.
pub fn skills(db: &dyn Db, ws: Workspace, cwd: &Path, agent_dir: &Path, git_root: Option<&Path>) -> Skills {
    let home = ws.host(db).home(db);
    let home_agents = home.join(".agents").join("skills");
    let mut paths = Vec::new();
    // Project settings' entries, then the project's folders, then the global settings'
    // entries, then the global folders (pi's precedence ranks 0–3).
    let project = cwd.join(CONFIG_DIR);
    settings_entries(db, &project.join("settings.json"), &project, home, &mut paths);
    entries(db, &cwd.join(CONFIG_DIR).join("skills"), true, 0, &mut paths);
    for dir in cwd.ancestors() {
        let candidate = dir.join(".agents").join("skills");
        if candidate != home_agents {
            entries(db, &candidate, false, 0, &mut paths);
        }
        if Some(dir) == git_root {
            break;
        }
    }
    settings_entries(db, &agent_dir.join("settings.json"), agent_dir, home, &mut paths);
    entries(db, &agent_dir.join("skills"), true, 0, &mut paths);
    entries(db, &home_agents, false, 0, &mut paths);
    // The same path met twice is one entry (pi's map of resources by path).
    let mut unique = std::collections::HashSet::new();
    paths.retain(|path| unique.insert(path.clone()));

    let mut found: Vec<Skill> = Vec::new();
    let mut seen: Vec<(PathBuf, PathBuf)> = Vec::new();
    for path in paths {
        let real = real_path(db, &path);
        if let Some((_, by)) = seen.iter().find(|(r, _)| *r == real) {
            let name = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
            found.push(Skill {
                path: path.clone(),
                name: name.unwrap_or_default(),
                description: String::new(),
                fate: SkillFate::SameFile { by: by.clone() },
            });
            continue;
        }
        seen.push((real, path.clone()));
        let mut skill = load(db, &path);
        let loaded = |fate: &SkillFate| matches!(fate, SkillFate::Listed | SkillFate::Hidden);
        if loaded(&skill.fate)
            && let Some(winner) = found.iter().find(|s| s.name == skill.name && loaded(&s.fate))
        {
            skill.fate = SkillFate::Clash { by: winner.path.clone() };
        }
        found.push(skill);
    }
    Skills { found }
}

/// `escapeXml`.
pub fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_read_like_pi() {
        let fm = front_matter("---\r\nname: x\r\ndescription: >\r\n  a\r\n  b\r\n---\r\nbody").unwrap();
        assert_eq!(fm.description, Some(Ok("a b\n".to_owned())));
        assert_eq!(front_matter("no front matter").unwrap(), FrontMatter::default());
        assert_eq!(front_matter("---\ndescription: 5\n---\n").unwrap().description, Some(Err(())));
        assert!(front_matter("---\nname: [unclosed\n---\n").is_err());
        assert_eq!(escape_xml("<a & \"b\" 'c'>"), "&lt;a &amp; &quot;b&quot; &apos;c&apos;&gt;");
    }
}
