//! B5.10: `skills.urls`. For each URL opencode fetches `<url>/index.json`
//! (`{"skills": [{"name", "files", "version"?}]}`), downloads each listed skill that has a
//! `SKILL.md` into `<cache>/skills/<name>/` (a file already there is kept, unless `version`
//! differs from the directory's `.opencode-version`, which refreshes it whole), and scans
//! that directory like a `skills.paths` entry. The location the listing prints is therefore
//! the cache path.
//!
//! Here the index and each SKILL.md to download are [`RemoteDoc`]
//! inputs the engine fetches ([`skill_urls`] says which, in two rounds: indexes, then the
//! files they name); a SKILL.md already in the cache is a `File` input like any other.

use std::path::PathBuf;

use serde::Deserialize;

use crate::config::merged_config;
use crate::paths::global_paths;
use ctxgraph_db::db::{Db, Workspace, env_var};
use ctxgraph_db::files::File;
use ctxgraph_db::remote::{RemoteDoc, RemoteState};
use ctxgraph_db::system::FileKind;

use super::frontmatter::{self, Frontmatter};

/// One entry of an index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
pub struct IndexSkill {
    /// The skill's directory name under the index URL and in the cache.
    pub name: String,
    /// Its files, relative to `<url>/<name>/`.
    pub files: Vec<String>,
    /// When set, the cached copy is refreshed unless its `.opencode-version` says this.
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Deserialize)]
struct Index {
    skills: Vec<IndexSkill>,
}

/// What became of one `skills.urls` entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexState {
    /// Not fetched yet: no skills from it.
    Pending,
    /// The index could not be fetched or decoded; opencode logs it and adds nothing.
    Failed(String),
    /// The skills it lists (only those with a `SKILL.md`: opencode warns about the others).
    Loaded(Vec<IndexSkill>),
}

/// Where one downloaded skill's SKILL.md comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UrlSkill {
    /// The cached copy (`<cache>/skills/<name>/SKILL.md` exists and is current).
    Cached(PathBuf),
    /// To be downloaded from this URL to the cache path.
    Download {
        /// The SKILL.md URL.
        url: String,
        /// Where opencode writes it: the location the listing prints.
        path: PathBuf,
    },
}

/// `$XDG_CACHE_HOME/opencode` (or `~/.cache/opencode`): opencode's cache directory.
fn cache_dir(db: &dyn Db, ws: Workspace) -> Option<PathBuf> {
    let paths = global_paths(db, ws).as_ref().ok()?;
    let cache = match env_var(db, ws.host(db), "XDG_CACHE_HOME".to_owned()) {
        Some(value) if !value.is_empty() => ctxgraph_db::path::resolve(ws.cwd(db), value),
        _ => paths.os_home.join(".cache"),
    };
    Some(cache.join("opencode"))
}

/// The index URL opencode requests for a `skills.urls` entry.
pub fn index_url(url: &str) -> String {
    format!("{}/index.json", url.trim_end_matches('/'))
}

/// A file's URL: `<url>/<name>/<file>`.
fn file_url(url: &str, name: &str, file: &str) -> String {
    format!("{}/{name}/{file}", url.trim_end_matches('/'))
}

/// The `skills.urls` entries of the merged config.
pub fn configured_urls(db: &dyn Db, ws: Workspace) -> Vec<String> {
    let Ok(config) = merged_config(db, ws).as_ref() else { return Vec::new() };
    let value = config.value();
    value
        .pointer("/skills/urls")
        .and_then(|v| v.as_array())
        .map(|urls| urls.iter().filter_map(|u| u.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The index of one `skills.urls` entry, from its [`RemoteDoc`].
#[salsa::tracked(returns(ref))]
pub fn skill_index(db: &dyn Db, doc: RemoteDoc) -> IndexState {
    match doc.state(db) {
        RemoteState::Pending => IndexState::Pending,
        RemoteState::Failed(failure) => IndexState::Failed(failure.to_string()),
        RemoteState::Loaded { text, .. } => match serde_json::from_str::<Index>(text) {
            Ok(index) => IndexState::Loaded(
                index.skills.into_iter().filter(|s| s.files.iter().any(|f| f == "SKILL.md")).collect(),
            ),
            Err(err) => IndexState::Failed(format!("index.json: {err}")),
        },
    }
}

/// One `skills.urls` entry: its index and where each listed skill's SKILL.md comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UrlEntry {
    /// The entry as written.
    pub url: String,
    /// The index's state.
    pub index: IndexState,
    /// Per listed skill (with a SKILL.md): its cache directory and SKILL.md source.
    pub skills: Vec<(PathBuf, UrlSkill)>,
}

/// B5.10: every `skills.urls` entry, resolved against the cache.
#[salsa::tracked(returns(ref))]
pub fn url_entries(db: &dyn Db, ws: Workspace) -> Vec<UrlEntry> {
    let Some(cache) = cache_dir(db, ws) else { return Vec::new() };
    configured_urls(db, ws)
        .into_iter()
        .map(|url| {
            let index = skill_index(db, db.remotes().get(db, &index_url(&url))).clone();
            let skills = match &index {
                IndexState::Loaded(listed) => listed
                    .iter()
                    .map(|skill| {
                        let dir = cache.join("skills").join(&skill.name);
                        let path = dir.join("SKILL.md");
                        let exists = db.files().get(db, &path).kind(db) == FileKind::File;
                        let current = match &skill.version {
                            None => true,
                            Some(version) => {
                                cached_version(db, db.files().get(db, &dir.join(".opencode-version")))
                                    .is_some_and(|cached| &cached == version)
                            }
                        };
                        let source = if exists && current {
                            UrlSkill::Cached(path)
                        } else {
                            UrlSkill::Download { url: file_url(&url, &skill.name, "SKILL.md"), path }
                        };
                        (dir, source)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            UrlEntry { url, index, skills }
        })
        .collect()
}

fn cached_version(db: &dyn Db, file: File) -> Option<String> {
    ctxgraph_db::files::file_text(db, file).as_ref().ok().map(|decoded| decoded.text.to_string())
}

/// The URLs the engine should fetch for `skills.urls` now: every index, then the SKILL.md
/// files the loaded indexes name that are not in the cache.
pub fn skill_urls(db: &dyn Db, ws: Workspace) -> Vec<String> {
    let mut urls = Vec::new();
    for entry in url_entries(db, ws) {
        urls.push(index_url(&entry.url));
        for (_, source) in &entry.skills {
            if let UrlSkill::Download { url, .. } = source {
                urls.push(url.clone());
            }
        }
    }
    urls.dedup();
    urls
}

/// What opencode makes of a downloaded SKILL.md; `None` while it is not fetched (or the
/// download failed: opencode then leaves the skill out).
#[salsa::tracked(returns(ref))]
pub fn downloaded_skill(db: &dyn Db, doc: RemoteDoc) -> Option<Frontmatter> {
    match doc.state(db) {
        RemoteState::Loaded { text, .. } => Some(frontmatter::parse(text)),
        RemoteState::Pending | RemoteState::Failed(_) => None,
    }
}
