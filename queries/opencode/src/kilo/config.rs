//! KI13: the `instructions` of Kilo's config files. Kilo merges `kilo.json` and
//! `opencode.json` (and their `.jsonc` forms) from its global folder and from the project,
//! and adds their `instructions` after the rule folders its legacy-config migration turned
//! into entries (KI4, KI8). A file that fails Kilo's validation is skipped whole: Kilo logs
//! one line and reads none of its keys, so its instructions are silently not sent.
//!
//! Kilo's schema is opencode's with Kilo's own keys added; unknown keys are fine. ctxgraph
//! checks what opencode's schema checks ([`crate::config::schema::validate`]) and, beside
//! it, the shape of each `mcp` entry, the mistake seen in practice (a server written in
//! another agent's shape, `{"command": "npx", "args": [...]}`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::schema;
use crate::fs::up;
use ctxgraph_db::db::Db;
use ctxgraph_db::files::{ReadFailure, file_text};
use ctxgraph_db::jsonc;

/// The names Kilo's global folder holds config in, in merge order.
pub const GLOBAL_FILES: [&str; 5] =
    ["config.json", "kilo.json", "kilo.jsonc", "opencode.json", "opencode.jsonc"];
/// The project's config names, in merge order: every `kilo` file, then every `opencode` one.
const PROJECT_NAMES: [&str; 2] = ["kilo", "opencode"];

/// One config file Kilo reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConfigFile {
    /// The file.
    pub path: PathBuf,
    /// Whether it is the global folder's (its absolute entries are trusted).
    pub global: bool,
    /// Its `instructions`, as written (those Kilo would have read, when it skips the file).
    pub instructions: Vec<String>,
    /// Why Kilo skips the whole file, when it does.
    pub invalid: Option<String>,
}

/// KI13: the config files Kilo reads, in its merge order: the global folder's, then from the
/// git root down to the working directory each `kilo.jsonc`/`kilo.json`, then each
/// `opencode.jsonc`/`opencode.json`. Files that do not exist are left out.
pub fn config_files(db: &dyn Db, global_dir: &Path, cwd: &Path, root: &Path) -> Vec<ConfigFile> {
    let mut paths: Vec<(PathBuf, bool)> =
        GLOBAL_FILES.iter().map(|name| (global_dir.join(name), true)).collect();
    for name in PROJECT_NAMES {
        let targets = vec![format!("{name}.jsonc"), format!("{name}.json")];
        let found = up(db, targets, cwd.to_path_buf(), root.to_path_buf()).clone().unwrap_or_default();
        paths.extend(found.into_iter().rev().map(|path| (path, false)));
    }
    paths.into_iter().filter_map(|(path, global)| read_config(db, path, global)).collect()
}

fn read_config(db: &dyn Db, path: PathBuf, global: bool) -> Option<ConfigFile> {
    let text = match file_text(db, db.files().get(db, &path)) {
        Ok(decoded) => decoded.text.clone(),
        Err(ReadFailure::NotFound | ReadFailure::IsADirectory) => return None,
        Err(err) => {
            let invalid = Some(format!("cannot be read ({err})"));
            return Some(ConfigFile { path, global, instructions: Vec::new(), invalid });
        }
    };
    // Kilo reads an empty file as no config at all.
    if text.is_empty() {
        return None;
    }
    let value = match jsonc::parse(&text) {
        Ok(value) => value,
        Err(err) => {
            let invalid =
                Some(format!("not valid JSONC: {} at line {}, column {}", err.code, err.line, err.column));
            return Some(ConfigFile { path, global, instructions: Vec::new(), invalid });
        }
    };
    let instructions = value
        .get("instructions")
        .and_then(Value::as_array)
        .map(|entries| entries.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Some(ConfigFile { path, global, instructions, invalid: first_problem(&value) })
}

/// The first reason Kilo's validation rejects `config`, if any.
fn first_problem(config: &Value) -> Option<String> {
    if let Some(issue) = schema::validate(config, config).first() {
        return Some(format!("{} at {}", issue.message, issue.path.join(".")));
    }
    let servers = config.get("mcp").and_then(Value::as_object)?;
    servers.iter().find(|(_, server)| !is_mcp_server(server)).map(|(name, _)| {
        format!(
            "mcp.{name} is neither a local server (`type: \"local\"`, `command` a list of strings) nor a remote one (`type: \"remote\"`, `url`), nor `{{\"enabled\": …}}`"
        )
    })
}

/// Kilo's (opencode's) MCP entry: a local or a remote server, or only `enabled`. Only the
/// fields that tell the kinds apart are checked.
fn is_mcp_server(server: &Value) -> bool {
    let Some(fields) = server.as_object() else { return false };
    match fields.get("type").and_then(Value::as_str) {
        Some("local") => fields
            .get("command")
            .and_then(Value::as_array)
            .is_some_and(|command| !command.is_empty() && command.iter().all(Value::is_string)),
        Some("remote") => fields.get("url").is_some_and(Value::is_string),
        Some(_) => false,
        None => fields.len() == 1 && fields.get("enabled").is_some_and(Value::is_boolean),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_entries_in_another_agents_shape_are_invalid() {
        let valid = json!({"mcp": {"a": {"type": "local", "command": ["npx", "x"]}, "b": {"type": "remote", "url": "http://127.0.0.1:1"}, "c": {"enabled": false}}, "unknown": 1});
        assert_eq!(first_problem(&valid), None);
        let claude_shape = json!({"mcp": {"x": {"command": "npx", "args": ["y"]}}});
        assert!(first_problem(&claude_shape).is_some_and(|p| p.contains("mcp.x")));
        assert!(
            first_problem(&json!({"instructions": "docs/a.md"})).is_some(),
            "instructions must be a list"
        );
    }
}
