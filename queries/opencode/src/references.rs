//! B3: the project references block, and the facts behind it (which configured reference
//! is listed, and why the others are not).
//!
//! opencode 1.18.33 reads `references` (or, in a file without it, the deprecated `reference`)
//! through its v2 config documents, not the merged V1 config: each config file's own entries, in file order, later files replacing a name; the
//! values as written (no `{env:}`/`{file:}` substitution); relative paths resolved from the
//! file's own directory. The documents are the global `opencode.json{,c}`, the project files
//! and the `.opencode` directories on the walk from the working directory to the worktree.
//! Only references with a `description` are listed, sorted by name with `localeCompare`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::config::tree::{Node, NodeKind};
use crate::config::{ConfigError, ConfigSource, SourceKind, config_layer, config_sources, merged_config};
use crate::paths::global_paths;
use crate::prompt::{Block, BlockKind};
use ctxgraph_db::collate::locale_compare;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::installation::asset;
use ctxgraph_db::lines::LineColumn;
use ctxgraph_db::path;
use ctxgraph_db::worktree::worktree;

/// One entry of a `references` object, as opencode resolved it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    /// The key in `references`.
    pub name: String,
    /// The directory the block names: a local path, or where opencode keeps a clone of a
    /// git reference (`<data>/repos/<host>/<path>[@<branch>]`). Empty when the entry is
    /// skipped before a path is known.
    pub path: String,
    /// A git reference's repository, as written.
    pub repository: Option<String>,
    /// The `description`, as written; without one the reference is not listed.
    pub description: Option<String>,
    /// The config file that set the entry.
    pub source: ConfigSource,
    /// Where in that file.
    pub at: Option<LineColumn>,
    /// Whether it is in the block, and why not.
    pub fate: ReferenceFate,
}

/// Why a reference is (not) in the block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "fate", content = "detail", rename_all = "kebab-case")]
pub enum ReferenceFate {
    /// Listed in the block.
    Listed,
    /// No `description`: opencode keeps the reference for its tools but leaves it out of
    /// the block.
    NoDescription,
    /// A later config file defines the same name (that file, by name).
    Replaced(String),
    /// The name is empty or contains `/`, white space, `` ` `` or `,`.
    InvalidName,
    /// A git repository opencode cannot parse (or a `file:` URL, which it refuses).
    InvalidRepository,
    /// A branch outside `[A-Za-z0-9/_.-]`, starting with `-` or containing `..`.
    InvalidBranch,
    /// Neither a string nor an object with `path` or `repository`.
    NotAReference,
}

impl ReferenceFate {
    /// A stable machine-readable name, for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            ReferenceFate::Listed => "listed",
            ReferenceFate::NoDescription => "no-description",
            ReferenceFate::Replaced(_) => "replaced",
            ReferenceFate::InvalidName => "invalid-name",
            ReferenceFate::InvalidRepository => "invalid-repository",
            ReferenceFate::InvalidBranch => "invalid-branch",
            ReferenceFate::NotAReference => "not-a-reference",
        }
    }

    /// The fate in words, for `explain`.
    pub fn describe(&self) -> String {
        match self {
            ReferenceFate::Listed => "listed in the references block".to_owned(),
            ReferenceFate::NoDescription => {
                "not listed: it has no description (opencode lists only references with one)".to_owned()
            }
            ReferenceFate::Replaced(by) => format!("not listed: {by} defines the same name later"),
            ReferenceFate::InvalidName => {
                "ignored: a name must be non-empty without '/', white space, '`' or ','".to_owned()
            }
            ReferenceFate::InvalidRepository => "ignored: opencode cannot parse the repository".to_owned(),
            ReferenceFate::InvalidBranch => "ignored: the branch name is invalid".to_owned(),
            ReferenceFate::NotAReference => {
                "ignored: neither a path/repository string nor an object with `path` or `repository`"
                    .to_owned()
            }
        }
    }
}

/// Every `references` entry of every config file opencode reads them from, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct References {
    /// In config order; see each entry's [`ReferenceFate`].
    pub entries: Vec<Reference>,
}

impl References {
    /// The listed references, in block order (`localeCompare` on the name).
    pub fn listed(&self) -> Vec<&Reference> {
        let mut listed: Vec<&Reference> =
            self.entries.iter().filter(|r| r.fate == ReferenceFate::Listed).collect();
        listed.sort_by(|a, b| locale_compare(&a.name, &b.name));
        listed
    }
}

/// B3's facts: every configured reference and its fate.
#[salsa::tracked(returns(ref))]
pub fn references(db: &dyn Db, ws: Workspace) -> Result<References, ConfigError> {
    let sources = config_sources(db, ws).as_ref().map_err(Clone::clone)?;
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let cwd = ws.cwd(db);
    let root = &worktree(db, ws).root;
    let repos = paths.data.join("repos");
    let mut entries: Vec<Reference> = Vec::new();
    for source in sources.iter().filter(|s| read_by_reference_loader(s, cwd, root)) {
        let layer = config_layer(db, ws, source.clone()).as_ref().map_err(Clone::clone)?;
        let Some(NodeKind::Object(refs)) = layer.tree.as_ref().and_then(references_of).map(|n| &n.kind)
        else {
            continue;
        };
        for (name, node) in refs {
            let entry = resolve_entry(name, node, source, &paths.home, &repos);
            // A later file's entry replaces an earlier one of the same name.
            for earlier in entries.iter_mut().filter(|e| e.name == *name && e.fate.is_kept()) {
                earlier.fate = ReferenceFate::Replaced(source.name());
            }
            entries.push(entry);
        }
    }
    Ok(References { entries })
}

impl ReferenceFate {
    fn is_kept(&self) -> bool {
        matches!(self, ReferenceFate::Listed | ReferenceFate::NoDescription)
    }
}

/// The directories opencode grants every agent for its references (`external_directory`,
/// G1): each kept reference's path, in the order its name was first defined, when the
/// merged config has a non-empty `references` (or the deprecated `reference`) object.
pub fn granted_paths(db: &dyn Db, ws: Workspace) -> Vec<PathBuf> {
    let Ok(config) = merged_config(db, ws) else { return Vec::new() };
    let configured = config.tree.get("references").or_else(|| config.tree.get("reference"));
    if !configured.is_some_and(|n| matches!(&n.kind, NodeKind::Object(map) if !map.is_empty())) {
        return Vec::new();
    }
    let Ok(references) = references(db, ws) else { return Vec::new() };
    // A JS Map keeps a name at the position it was first set, with the last value set.
    let mut names: Vec<&str> = Vec::new();
    for entry in &references.entries {
        if !names.contains(&entry.name.as_str())
            && references.entries.iter().any(|e| e.name == entry.name && e.fate.is_kept())
        {
            names.push(&entry.name);
        }
    }
    names
        .into_iter()
        .filter_map(|name| references.entries.iter().rev().find(|e| e.name == name && e.fate.is_kept()))
        .map(|e| PathBuf::from(&e.path))
        .collect()
}

/// B3: the references block, when some reference is listed.
#[salsa::tracked(returns(ref))]
pub fn references_block(db: &dyn Db, ws: Workspace) -> Option<Block> {
    let references = references(db, ws).as_ref().ok()?;
    let listed = references.listed();
    if listed.is_empty() {
        return None;
    }
    // The opening sentence is opencode's own text, loaded from the installation (L2).
    let (intro, unavailable) = match asset(db, db.installation(), "references/intro") {
        Ok(text) => (text.to_string(), None),
        Err(missing) => (missing.placeholder(), Some(missing.reason)),
    };
    let mut lines = vec![intro, "<available_references>".to_owned()];
    for reference in &listed {
        lines.push("  <reference>".to_owned());
        lines.push(format!("    <name>{}</name>", reference.name));
        lines.push(format!("    <path>{}</path>", reference.path));
        if let Some(description) = &reference.description {
            lines.push(format!("    <description>{description}</description>"));
        }
        lines.push("  </reference>".to_owned());
    }
    lines.push("</available_references>".to_owned());
    Some(Block {
        unavailable,
        ..Block::new(
            BlockKind::References,
            lines.join("\n"),
            "B3",
            format!("{} configured reference(s) with a description", listed.len()),
        )
    })
}

/// A file's references: `references`, or when that is absent or null the deprecated
/// `reference` (opencode converts a file with an old key to its v2 form with
/// `references ?? reference`).
fn references_of(tree: &Node) -> Option<&Node> {
    let present = |key| tree.get(key).filter(|n| !matches!(&n.kind, NodeKind::Scalar(Value::Null)));
    present("references").or_else(|| present("reference"))
}

/// The config documents opencode's reference loader reads: the global `opencode.json{,c}`,
/// the project files, and `.opencode` directories between the working directory and the
/// worktree (not `$OPENCODE_CONFIG`, `$OPENCODE_CONFIG_CONTENT`, `~/.opencode` outside
/// the walk, or managed config).
fn read_by_reference_loader(source: &ConfigSource, cwd: &Path, root: &Path) -> bool {
    let file = Path::new(&*source.name);
    match source.kind {
        SourceKind::Global | SourceKind::GlobalSeed => {
            file.file_name().is_some_and(|n| n == "opencode.json" || n == "opencode.jsonc")
        }
        SourceKind::Project => true,
        SourceKind::Directory => {
            let dir = file.parent();
            let owner = dir.and_then(Path::parent);
            dir.is_some_and(|d| d.file_name().is_some_and(|n| n == ".opencode"))
                && owner.is_some_and(|o| cwd.starts_with(o) && o.starts_with(root))
        }
        _ => false,
    }
}

/// A string as the file wrote it: opencode's reference loader does not substitute.
fn written(node: &Node) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar(serde_json::Value::String(value)) => {
            Some(node.origin.written.clone().unwrap_or_else(|| value.clone()))
        }
        _ => None,
    }
}

fn resolve_entry(name: &str, node: &Node, source: &ConfigSource, home: &Path, repos: &Path) -> Reference {
    let mut reference = Reference {
        name: name.to_owned(),
        path: String::new(),
        repository: None,
        description: None,
        source: source.clone(),
        at: node.origin.at,
        fate: ReferenceFate::Listed,
    };
    if !valid_name(name) {
        reference.fate = ReferenceFate::InvalidName;
        return reference;
    }
    let field = |key: &str| node.get(key).and_then(written);
    let (local, git) = match &node.kind {
        NodeKind::Scalar(_) => match written(node) {
            Some(value) if value.starts_with(['.', '/', '~']) => (Some(value), None),
            Some(value) => (None, Some((value, None))),
            None => (None, None),
        },
        NodeKind::Object(map) if map.contains_key("path") => (field("path"), None),
        NodeKind::Object(map) if map.contains_key("repository") => {
            (None, field("repository").map(|r| (r, field("branch"))))
        }
        _ => (None, None),
    };
    if matches!(node.kind, NodeKind::Object(_)) {
        reference.description = field("description");
    }
    match (local, git) {
        (Some(local), _) => reference.path = path::display(&local_path(&source.dir, home, &local)),
        (None, Some((repository, branch))) => {
            reference.repository = Some(repository.clone());
            match git_cache_path(repos, &repository, branch.as_deref()) {
                Ok(path) => reference.path = path::display(&path),
                Err(fate) => {
                    reference.fate = fate;
                    return reference;
                }
            }
        }
        (None, None) => {
            reference.fate = ReferenceFate::NotAReference;
            return reference;
        }
    }
    if reference.description.is_none() {
        reference.fate = ReferenceFate::NoDescription;
    }
    reference
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c == '/' || c == '`' || c == ',' || c.is_whitespace())
}

/// `~/x` → home/x; an absolute path as written; anything else from the file's directory.
fn local_path(dir: &Path, home: &Path, value: &str) -> PathBuf {
    if let Some(rest) = value.strip_prefix("~/") {
        path::normalize(Path::new(&format!("{}/{rest}", path::display(home))))
    } else if Path::new(value).is_absolute() {
        PathBuf::from(value)
    } else {
        path::resolve(dir, value)
    }
}

/// Where opencode clones a git reference: `<repos>/<host parts>/<segments>[@<branch>]`.
fn git_cache_path(repos: &Path, repository: &str, branch: Option<&str>) -> Result<PathBuf, ReferenceFate> {
    let (host, segments) = parse_repository(repository).ok_or(ReferenceFate::InvalidRepository)?;
    let mut path = repos.to_path_buf();
    for part in host.split(':').chain(segments.iter().map(String::as_str)) {
        path.push(part);
    }
    if let Some(branch) = branch {
        let valid = !branch.is_empty()
            && branch.bytes().all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b))
            && !branch.starts_with('-')
            && !branch.contains("..");
        if !valid {
            return Err(ReferenceFate::InvalidBranch);
        }
        // encodeURIComponent of the allowed characters changes only '/'.
        let mut name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name.push('@');
        name.push_str(&branch.replace('/', "%2F"));
        path.set_file_name(name);
    }
    Ok(path)
}

/// opencode's repository grammar: `github:owner/repo`, `[user@]host:path`, `host.tld/path`,
/// `owner/repo` (GitHub), or a URL other than `file:`. Returns the lower-cased host and the
/// path segments without `.git`.
fn parse_repository(repository: &str) -> Option<(String, Vec<String>)> {
    let trimmed = repository.trim();
    let trimmed = trimmed.strip_prefix("git+").unwrap_or(trimmed);
    let trimmed = trimmed.split_once('#').map_or(trimmed, |(before, _)| before);
    let value = trimmed.trim_end_matches('/');
    let segments = |path: &str| -> Vec<String> {
        path.split('/').map(|s| strip_git(s.trim()).to_owned()).filter(|s| !s.is_empty()).collect()
    };
    let no_space_or_slash = |s: &str| !s.is_empty() && !s.chars().any(|c| c == '/' || c.is_whitespace());
    if let Some((owner, repo)) = value.strip_prefix("github:").and_then(|r| r.split_once('/'))
        && no_space_or_slash(owner)
        && no_space_or_slash(repo)
    {
        return checked("github.com", vec![strip_git(owner).to_owned(), strip_git(repo).to_owned()]);
    }
    if !value.contains("://") {
        // [user@]host:path (scp-like)
        let after_user = match value.split_once('@') {
            Some((user, rest)) if no_space_or_slash(user) => rest,
            _ => value,
        };
        if let Some((host, rest)) = after_user.split_once(':')
            && no_space_or_slash(host)
            && !rest.is_empty()
        {
            return checked(host, segments(rest));
        }
        let parts = segments(value);
        if parts.len() >= 2 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
            return checked(&parts[0].clone(), parts[1..].to_vec());
        }
        if parts.len() == 2 {
            return checked("github.com", parts);
        }
    }
    let url = url::Url::parse(value).ok()?;
    if url.scheme() == "file" {
        return None;
    }
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    };
    checked(&host, segments(url.path()))
}

fn strip_git(segment: &str) -> &str {
    segment.strip_suffix(".git").unwrap_or(segment)
}

fn checked(host: &str, segments: Vec<String>) -> Option<(String, Vec<String>)> {
    let host_ok = !host.is_empty()
        && !host.starts_with('-')
        && !host.chars().any(|c| "/\\".contains(c) || c.is_whitespace());
    let segment_ok = |s: &String| {
        s != "." && s != ".." && !s.chars().any(|c| c == ':' || "/\\".contains(c) || c.is_whitespace())
    };
    (host_ok && !segments.is_empty() && segments.iter().all(segment_ok))
        .then(|| (host.to_lowercase(), segments))
}

#[cfg(test)]
mod tests {
    use super::parse_repository;

    #[test]
    fn repository_forms() {
        let parsed = |s: &str| parse_repository(s).map(|(h, s)| format!("{h}/{}", s.join("/")));
        assert_eq!(parsed("github:foo/bar").as_deref(), Some("github.com/foo/bar"));
        assert_eq!(parsed("foo/bar.git").as_deref(), Some("github.com/foo/bar"));
        assert_eq!(parsed("git@GitLab.com:g/sub/r.git").as_deref(), Some("gitlab.com/g/sub/r"));
        assert_eq!(parsed("example.org/a/b").as_deref(), Some("example.org/a/b"));
        assert_eq!(parsed("https://Example.org:8443/a/b/").as_deref(), Some("example.org:8443/a/b"));
        assert_eq!(parsed("file:///tmp/x"), None);
        assert_eq!(parsed("justone"), None);
    }
}
