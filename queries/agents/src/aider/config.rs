//! AI2/AI3: the `.aider.conf.yml` files and the `read:` list the nearest one sets.
//!
//! Aider reads its configuration through `ConfigArgParse`: the working directory's file, the
//! git root's and the home directory's, nearest first, each key taken from the first file
//! that gives it a value (a `read:` that is empty, `[]` or null gives none, so a farther
//! file's counts). The command line and `$AIDER_READ` come before every file.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde::Serialize;

use super::CONFIG_NAME;
use ctxgraph_db::db::Db;
use ctxgraph_db::files::{file_bytes, real_path};
use ctxgraph_db::system::FileKind;

/// Why Aider would not start (so there is nothing to reproduce).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum AiderError {
    /// AI3: a configuration file that is not a YAML mapping (an empty file included): Aider
    /// prints its usage and exits.
    #[error("{}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// What one configuration file gave.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigFate {
    /// Its `read:` is the list.
    Used,
    /// It sets `read:`, but the command line, `$AIDER_READ` or a nearer file came first.
    Overridden,
    /// It exists and sets no `read:` (or an empty one).
    NoRead,
    /// There is no such file.
    Missing,
}

/// One `.aider.conf.yml` Aider looks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ConfigFile {
    /// Where.
    pub path: PathBuf,
    /// What it gave.
    pub fate: ConfigFate,
    /// Its `read:` entries, as strings (empty unless it sets some).
    pub read: Vec<String>,
}

/// The configuration files looked for, and the first `read:` list one sets, with its file.
pub type Configs = (Vec<ConfigFile>, Option<(PathBuf, Vec<String>)>);

/// AI2: the files in Aider's order (working directory, git root, home), each real path once,
/// and the first list one of them sets.
///
/// # Errors
///
/// A file that exists and is not a YAML mapping: Aider would not start.
pub fn config_files(
    db: &dyn Db,
    cwd: &Path,
    git_root: Option<&Path>,
    home: &Path,
) -> Result<Configs, AiderError> {
    let mut paths: Vec<PathBuf> = vec![cwd.join(CONFIG_NAME)];
    paths.extend(git_root.map(|root| root.join(CONFIG_NAME)));
    paths.push(home.join(CONFIG_NAME));
    let mut files: Vec<ConfigFile> = Vec::new();
    let mut list = None;
    let mut seen: Vec<PathBuf> = Vec::new();
    for path in paths {
        // The same file through two names is read twice by Aider; it gives the same list.
        let real_config = real_path(db, &path);
        if seen.contains(&real_config) {
            continue;
        }
        seen.push(real_config);
        let file = db.files().get(db, &path);
        if file.kind(db) == FileKind::Missing {
            files.push(ConfigFile { path, fate: ConfigFate::Missing, read: Vec::new() });
            continue;
        }
        let bytes = file_bytes(db, file)
            .as_ref()
            .map_err(|err| AiderError::Config { path: path.clone(), message: err.to_string() })?;
        let read = read_key(bytes).map_err(|message| AiderError::Config { path: path.clone(), message })?;
        let fate = if read.is_empty() { ConfigFate::NoRead } else { ConfigFate::Used };
        if fate == ConfigFate::Used && list.is_none() {
            list = Some((path.clone(), read.clone()));
        }
        files.push(ConfigFile { path, fate, read });
    }
    Ok((files, list))
}

/// AI3: the entries of `read:` (or `--read:`) in one file's YAML, as Python's `str()` writes
/// each value: a list gives one entry per element, any other scalar one entry, null none.
fn read_key(bytes: &[u8]) -> Result<Vec<String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|err| format!("not UTF-8: {err}"))?;
    let docs = Yaml::load_from_str(text).map_err(|err| format!("Couldn't parse config file: {err}"))?;
    let Some(Yaml::Mapping(map)) = docs.first() else {
        return Err("the config file doesn't appear to contain 'key: value' pairs".to_owned());
    };
    let Some(value) = map
        .iter()
        .filter(|(key, _)| matches!(key, Yaml::Value(Scalar::String(k)) if k == "read" || k == "--read"))
        .map(|(_, v)| v)
        .next_back()
    else {
        return Ok(Vec::new());
    };
    Ok(match value {
        Yaml::Sequence(items) => items.iter().map(python_str).collect(),
        Yaml::Value(Scalar::Null) => Vec::new(),
        other => vec![python_str(other)],
    })
}

/// Python's `str()` of a YAML value as `PyYAML`'s safe loader builds it, for the scalars a
/// file name can be.
fn python_str(value: &Yaml) -> String {
    match value {
        Yaml::Value(Scalar::String(s)) => s.to_string(),
        Yaml::Value(Scalar::Integer(i)) => i.to_string(),
        Yaml::Value(Scalar::FloatingPoint(f)) => format!("{:?}", f.into_inner()),
        Yaml::Value(Scalar::Boolean(true)) => "True".to_owned(),
        Yaml::Value(Scalar::Boolean(false)) => "False".to_owned(),
        Yaml::Value(Scalar::Null) => "None".to_owned(),
        Yaml::Representation(text, _, _) => text.to_string(),
        _ => String::new(),
    }
}

/// AI2: `$AIDER_READ` as `ConfigArgParse` reads a list variable: `[a, b]` as JSON, else split
/// at commas; anything else is one entry.
pub fn env_list(value: &str) -> Vec<String> {
    if !(value.starts_with('[') && value.ends_with(']')) {
        return vec![value.to_owned()];
    }
    if let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(value) {
        return items
            .into_iter()
            .map(|item| match item {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect();
    }
    value[1..value.len() - 1].split(',').map(|s| s.trim().to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_is_a_list_a_scalar_or_nothing() {
        assert_eq!(read_key(b"read: [a.md, docs/b.md]\n").unwrap(), ["a.md", "docs/b.md"]);
        assert_eq!(read_key(b"read: a.md\n").unwrap(), ["a.md"]);
        assert_eq!(read_key(b"read:\n  - 1\n  - true\n").unwrap(), ["1", "True"]);
        assert!(read_key(b"read:\nmodel: x\n").unwrap().is_empty());
        assert!(read_key(b"read: []\n").unwrap().is_empty());
        assert!(read_key(b"model: x\n").unwrap().is_empty());
        assert!(read_key(b"").is_err(), "an empty file is not a mapping");
        assert!(read_key(b"- a\n").is_err());
        assert!(read_key(b"read: [a\n").is_err());
    }

    #[test]
    fn the_environment_list_is_json_or_comma_separated() {
        assert_eq!(env_list("a.md"), ["a.md"]);
        assert_eq!(env_list(r#"["a.md", "b.md"]"#), ["a.md", "b.md"]);
        assert_eq!(env_list("[a.md, b.md]"), ["a.md", "b.md"]);
    }
}
