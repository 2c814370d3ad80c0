//! QW9/QW10: rule files: every `.md` below `<qwen dir>/rules`, then below the project root's
//! `.qwen/rules`. A rule without `paths:` goes in the system message after the context
//! files; a rule with `paths:` is held back until a tool touches a file it matches.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde::Serialize;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::{dir_listing, file_bytes};
use ctxgraph_db::js::js_trim;
use ctxgraph_db::system::EntryKind;

use super::QWEN_DIR;

/// One rule file Qwen read, sent or not.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Rule {
    /// Absolute path.
    pub source: PathBuf,
    /// `~/.qwen/rules` (true) or the project's.
    pub global: bool,
    /// The path the block shows: relative to the project root.
    pub shown: String,
    /// QW10: the `paths:` globs; `None`: the rule applies everywhere.
    pub paths: Option<Vec<String>>,
    /// Exactly the block (empty when the rule has no text).
    pub text: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: RuleFate,
}

/// What became of one rule file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fate")]
pub enum RuleFate {
    /// In the system message.
    Sent,
    /// QW10: held back for the reads its `paths:` match.
    OnRead,
    /// Nothing left after the frontmatter and HTML comments: dropped.
    Empty,
    /// Could not be read.
    Unreadable {
        /// Why.
        reason: String,
    },
}

impl Rule {
    /// The rule [`Rule::reason`] cites: QW10 for a rule held back, QW9 otherwise.
    pub fn rule(&self) -> &'static str {
        match self.fate {
            RuleFate::OnRead => "QW10",
            RuleFate::Sent | RuleFate::Empty | RuleFate::Unreadable { .. } => "QW9",
        }
    }

    /// Why the rule is in the system message, held back, or left out, with the rule behind it.
    pub fn reason(&self) -> String {
        let folder =
            if self.global { "Qwen's own folder (~/.qwen/rules)" } else { "the project's .qwen/rules" };
        match &self.fate {
            RuleFate::Sent => format!("a rule in {folder}, sent after the context files (QW9)"),
            RuleFate::OnRead => format!(
                "a rule in {folder} held back by its `paths:` ({}): attached to a tool's result for a file they match (QW10)",
                self.paths.as_deref().unwrap_or_default().join(", ")
            ),
            RuleFate::Empty => {
                format!(
                    "a rule in {folder} left out: nothing is left after its frontmatter and HTML comments (QW9)"
                )
            }
            RuleFate::Unreadable { reason } => {
                format!("a rule in {folder} left out: it cannot be read ({reason}) (QW9)")
            }
        }
    }
}

/// QW9: the rule files of `ws` in Qwen's order: the global folder's, then the project
/// root's (`root`) unless it is the same folder.
pub fn rules(db: &dyn Db, ws: Workspace, root: &Path) -> Vec<Rule> {
    let global_dir = super::qwen_dir(db, ws).join("rules");
    let project_dir = root.join(QWEN_DIR).join("rules");
    let mut dirs = vec![(global_dir.clone(), true)];
    if ctxgraph_db::path::normalize(&project_dir) != ctxgraph_db::path::normalize(&global_dir) {
        dirs.push((project_dir, false));
    }
    let mut out = Vec::new();
    for (dir, global) in dirs {
        let mut files = Vec::new();
        md_files(db, &dir, &mut files);
        files.sort_by(|a, b| crate::gemini::js_cmp(a, b));
        out.extend(files.into_iter().map(|path| rule(db, path, global, root)));
    }
    out
}

/// Every regular `.md` file below `dir`, subfolders included; symlinks are not followed
/// (neither to files nor to folders).
fn md_files(db: &dyn Db, dir: &Path, out: &mut Vec<PathBuf>) {
    let listing = dir_listing(db, db.files().get(db, dir));
    for entry in listing.iter() {
        let path = dir.join(entry.name.as_str());
        match entry.kind {
            EntryKind::Directory => md_files(db, &path, out),
            EntryKind::File if entry.name.ends_with(".md") => out.push(path),
            _ => {}
        }
    }
}

fn rule(db: &dyn Db, source: PathBuf, global: bool, root: &Path) -> Rule {
    let shown = ctxgraph_db::path::relative(root, &source).replace('\\', "/");
    let mut rule = Rule { source, global, shown, paths: None, text: String::new(), fate: RuleFate::Empty };
    let bytes = match file_bytes(db, db.files().get(db, &rule.source)) {
        Ok(bytes) => bytes,
        Err(err) => {
            rule.fate = RuleFate::Unreadable { reason: err.to_string() };
            return rule;
        }
    };
    let parsed = parse(&String::from_utf8_lossy(bytes));
    rule.paths = parsed.paths;
    if !parsed.content.is_empty() {
        rule.text = format_rule(&rule.shown, &parsed.content);
        rule.fate = if rule.paths.is_some() { RuleFate::OnRead } else { RuleFate::Sent };
    }
    rule
}

/// QW9: one rule's block.
pub fn format_rule(shown: &str, content: &str) -> String {
    format!("--- Rule from: {shown} ---\n{content}\n--- End of Rule from: {shown} ---")
}

/// A rule file's text as Qwen keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The text after the frontmatter, HTML comments cut, trimmed.
    pub content: String,
    /// The `paths:` globs, `None` when the rule applies everywhere.
    pub paths: Option<Vec<String>>,
}

/// QW9: a leading byte order mark dropped, line endings made LF, a frontmatter between `---`
/// lines split off (its YAML read for `paths:`), HTML comments cut (an unclosed `<!--` too),
/// the rest trimmed.
pub fn parse(raw: &str) -> Parsed {
    static FRONTMATTER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)\A---\n(.*?)\n---(?:\n|\z)(.*)\z").expect("valid pattern"));
    static COMMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").expect("valid pattern"));
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw).replace("\r\n", "\n").replace('\r', "\n");
    let (paths, body) = match FRONTMATTER.captures(&text) {
        Some(caps) => (
            paths_of(caps.get(1).map_or("", |m| m.as_str())),
            caps.get(2).map_or("", |m| m.as_str()).to_owned(),
        ),
        None => (None, text.clone()),
    };
    let mut body = body;
    loop {
        let cut = COMMENT.replace_all(&body, "").into_owned();
        if cut == body {
            break;
        }
        body = cut;
    }
    let body = body.replace("<!--", "");
    Parsed { content: js_trim(&body).to_owned(), paths }
}

/// QW10: `paths:` as a list (each item as JavaScript's `String` writes it, empty ones
/// dropped, an empty list meaning everywhere) or one non-empty string. YAML Qwen's parser
/// refuses falls back to a line-by-line reading of `key: value` and `  - item` lines.
fn paths_of(frontmatter: &str) -> Option<Vec<String>> {
    let value = match Yaml::load_from_str(frontmatter) {
        Ok(docs) if matches!(docs.first(), Some(Yaml::Mapping(_))) => {
            let Some(Yaml::Mapping(map)) = docs.into_iter().next() else { return None };
            map.into_iter()
                .find(|(k, _)| scalar_text(k).as_deref() == Some("paths"))
                .map(|(_, v)| from_yaml(&v))
        }
        _ => simple_paths(frontmatter),
    }?;
    match value {
        Value::List(items) => {
            let items: Vec<String> = items.into_iter().filter(|i| !i.is_empty()).collect();
            (!items.is_empty()).then_some(items)
        }
        Value::Text(text) if !text.is_empty() => Some(vec![text]),
        Value::Text(_) | Value::Other => None,
    }
}

/// A `paths:` value, reduced to what Qwen does with it.
enum Value {
    /// A list, each item as JavaScript's `String(item)` writes it (nulls dropped).
    List(Vec<String>),
    /// A string.
    Text(String),
    /// Anything else (a number, a map, null): no globs.
    Other,
}

fn from_yaml(value: &Yaml<'_>) -> Value {
    match value {
        Yaml::Sequence(items) => Value::List(items.iter().filter_map(js_string).collect()),
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Value::Text(s.to_string()),
        _ => Value::Other,
    }
}

/// JavaScript's `String(item)` of a YAML value; `None` for null (Qwen drops those).
fn js_string(value: &Yaml<'_>) -> Option<String> {
    match value {
        Yaml::Value(Scalar::Null) | Yaml::BadValue => None,
        Yaml::Sequence(items) => {
            Some(items.iter().map(|i| js_string(i).unwrap_or_default()).collect::<Vec<_>>().join(","))
        }
        Yaml::Mapping(_) => Some("[object Object]".to_owned()),
        other => scalar_text(other),
    }
}

fn scalar_text(value: &Yaml<'_>) -> Option<String> {
    match value {
        Yaml::Value(Scalar::String(s)) | Yaml::Representation(s, _, _) => Some(s.to_string()),
        Yaml::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        Yaml::Value(Scalar::Integer(n)) => Some(n.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => {
            let f = f.into_inner();
            Some(if f.fract() == 0.0 && f.abs() < 1e21 { format!("{f:.0}") } else { f.to_string() })
        }
        _ => None,
    }
}

/// The fallback reading of a frontmatter Qwen's YAML parser refuses: `paths: value` (a
/// quoted value unquoted), or `paths:` followed by `  - item` lines.
fn simple_paths(frontmatter: &str) -> Option<Value> {
    let lines: Vec<&str> =
        frontmatter.split('\n').filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#')).collect();
    let mut found = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with("  ") || !line.contains(':') {
            continue;
        }
        let (key, value) = line.split_once(':').unwrap_or((line, ""));
        if key.trim() != "paths" {
            continue;
        }
        let value = value.trim();
        if !value.is_empty() {
            found = Some(simple_value(value));
            continue;
        }
        let mut items = Vec::new();
        while let Some(item) = lines.get(i).and_then(|l| l.strip_prefix("  - ")) {
            items.push(item.trim());
            i += 1;
        }
        if !items.is_empty() {
            found = Some(Value::List(
                items
                    .into_iter()
                    .filter(|v| *v != "null")
                    .map(|v| match simple_value(v) {
                        Value::Text(t) => t,
                        _ => v.to_owned(),
                    })
                    .collect(),
            ));
        }
    }
    found
}

fn simple_value(value: &str) -> Value {
    match value {
        "true" | "false" | "null" => Value::Other,
        _ if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') => {
            Value::Text(value[1..value.len() - 1].replace("\\\"", "\"").replace("\\\\", "\\"))
        }
        _ if value.parse::<f64>().is_ok_and(f64::is_finite) => Value::Other,
        _ => Value::Text(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_and_paths() {
        let p = parse("\u{feff}---\r\ndescription: d\r\n---\r\nA <!-- x --> b\r\n");
        assert_eq!((p.content.as_str(), p.paths), ("A  b", None));
        assert_eq!(parse("---\npaths: \"src/*.ts\"\n---\nx").paths, Some(vec!["src/*.ts".to_owned()]));
        assert_eq!(parse("---\npaths: []\n---\nx").paths, None);
        assert_eq!(
            parse("---\npaths:\n  - a\n  - 1\n---\nx").paths,
            Some(vec!["a".to_owned(), "1".to_owned()])
        );
        assert_eq!(parse("---\npaths: [docs/**\n---\nx").paths, Some(vec!["[docs/**".to_owned()]));
        assert_eq!(parse("---\npaths: [\"x\"]\n---\n<!-- only -->\n").content, "");
        assert_eq!(parse("a <!-- open").content, "a  open");
    }
}
