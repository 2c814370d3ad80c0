//! CX5: where Codex keeps its files and the `project_doc_max_bytes` budget it reads from
//! `$CODEX_HOME/config.toml`.

use std::path::PathBuf;

use ctxgraph_db::db::{Db, Host, env_var};
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::lines::{Column, Lines};
use ctxgraph_db::system::FileKind;

use super::CodexError;

/// Codex's default `project_doc_max_bytes` (32 KiB).
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: u64 = 32 * 1024;

/// Where the budget in force came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "from", content = "path")]
pub enum BudgetSource {
    /// Codex's default.
    Default,
    /// `project_doc_max_bytes` in this `config.toml`.
    ConfigFile(PathBuf),
    /// A `-c project_doc_max_bytes=N` override.
    CommandLine,
}

/// `project_doc_max_bytes`: how many raw bytes of project files Codex reads in total.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Budget {
    /// The budget in bytes; 0 turns project files off.
    pub bytes: u64,
    /// Where it was set.
    #[serde(flatten)]
    pub source: BudgetSource,
}

/// CX1: `$CODEX_HOME` when set and non-empty, else `~/.codex`.
#[salsa::tracked(returns(ref))]
pub fn codex_home(db: &dyn Db, host: Host) -> PathBuf {
    match env_var(db, host, "CODEX_HOME".to_owned()) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => host.home(db).join(".codex"),
    }
}

/// CX5: the budget from `$CODEX_HOME/config.toml` (default when the file or key is absent).
/// A config Codex could not parse is an error: Codex would not start either.
#[salsa::tracked(returns(ref))]
pub fn config_budget(db: &dyn Db, host: Host) -> Result<Budget, CodexError> {
    let path = codex_home(db, host).join("config.toml");
    let file = db.files().get(db, &path);
    let default = Budget { bytes: DEFAULT_PROJECT_DOC_MAX_BYTES, source: BudgetSource::Default };
    if file.kind(db) == FileKind::Missing {
        return Ok(default);
    }
    let bytes = file_bytes(db, file).as_ref().map_err(|err| CodexError::Config {
        path: path.clone(),
        line: 0,
        column: 0,
        message: err.to_string(),
    })?;
    let text = std::str::from_utf8(bytes).map_err(|err| {
        let at = Lines::new(&String::from_utf8_lossy(&bytes[..err.valid_up_to()]))
            .locate(err.valid_up_to(), Column::Chars);
        CodexError::Config {
            path: path.clone(),
            line: at.line,
            column: at.column,
            message: "not valid UTF-8".to_owned(),
        }
    })?;
    let error = |offset: usize, message: String| {
        let at = Lines::new(text).locate(offset, Column::Chars);
        CodexError::Config { path: path.clone(), line: at.line, column: at.column, message }
    };
    let table: toml::Table = text.parse().map_err(|err: toml::de::Error| {
        error(err.span().map_or(0, |span| span.start), err.message().to_owned())
    })?;
    match table.get("project_doc_max_bytes") {
        None => Ok(default),
        Some(toml::Value::Integer(n)) if *n >= 0 => {
            Ok(Budget { bytes: n.unsigned_abs(), source: BudgetSource::ConfigFile(path.clone()) })
        }
        Some(_) => Err(error(
            text.find("project_doc_max_bytes").unwrap_or(0),
            "project_doc_max_bytes must be a non-negative integer".to_owned(),
        )),
    }
}
