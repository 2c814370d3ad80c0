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

/// CX9: the `[skills]` settings of `$CODEX_HOME/config.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SkillsConfig {
    /// `[skills] include_instructions` (default true): false sends no skills message.
    pub include_instructions: bool,
    /// `[skills] bundled.enabled` (default true): false drops the bundled skills' root.
    pub bundled: bool,
    /// `[[skills.config]]` entries with `enabled = false`, by `name`.
    pub disabled_names: Vec<String>,
    /// `[[skills.config]]` entries with `enabled = false`, by `path` (a `SKILL.md`).
    pub disabled_paths: Vec<PathBuf>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            include_instructions: true,
            bundled: true,
            disabled_names: Vec::new(),
            disabled_paths: Vec::new(),
        }
    }
}

/// What ctxgraph reads of `$CODEX_HOME/config.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodexConfig {
    /// CX5.
    pub budget: Budget,
    /// CX9.
    pub skills: SkillsConfig,
    /// CX13: `model_context_window`, the model's context window in tokens.
    pub context_window: Option<u64>,
}

/// CX5: the budget from `$CODEX_HOME/config.toml` (default when the file or key is absent).
/// Its own query over [`codex_config`], so an edit to other settings leaves it equal and
/// the `AGENTS.md` message is not reassembled.
#[salsa::tracked(returns(ref))]
pub fn config_budget(db: &dyn Db, host: Host) -> Result<Budget, CodexError> {
    codex_config(db, host).as_ref().map(|config| config.budget.clone()).map_err(Clone::clone)
}

/// `$CODEX_HOME/config.toml` as ctxgraph reads it (defaults when the file is absent). A
/// config Codex could not parse is an error: Codex would not start either.
#[salsa::tracked(returns(ref))]
pub fn codex_config(db: &dyn Db, host: Host) -> Result<CodexConfig, CodexError> {
    let path = codex_home(db, host).join("config.toml");
    let file = db.files().get(db, &path);
    let default_budget = Budget { bytes: DEFAULT_PROJECT_DOC_MAX_BYTES, source: BudgetSource::Default };
    if file.kind(db) == FileKind::Missing {
        return Ok(CodexConfig {
            budget: default_budget,
            skills: SkillsConfig::default(),
            context_window: None,
        });
    }
    let bytes = file_bytes(db, file).as_ref().map_err(|err| CodexError::Config {
        path: path.clone(),
        line: 0,
        column: 0,
        message: err.to_string(),
        line_text: String::new(),
    })?;
    let text = std::str::from_utf8(bytes).map_err(|err| {
        let valid = String::from_utf8_lossy(&bytes[..err.valid_up_to()]);
        let lines = Lines::new(&valid);
        let at = lines.locate(err.valid_up_to(), Column::Chars);
        CodexError::Config {
            path: path.clone(),
            line: at.line,
            column: at.column,
            message: "not valid UTF-8".to_owned(),
            line_text: lines.line_text(at.line).to_owned(),
        }
    })?;
    let error = |offset: usize, message: String| {
        let lines = Lines::new(text);
        let at = lines.locate(offset, Column::Chars);
        let line_text = lines.line_text(at.line).to_owned();
        CodexError::Config { path: path.clone(), line: at.line, column: at.column, message, line_text }
    };
    let table: toml::Table = text.parse().map_err(|err: toml::de::Error| {
        error(err.span().map_or(0, |span| span.start), err.message().to_owned())
    })?;
    let budget = match table.get("project_doc_max_bytes") {
        None => default_budget,
        Some(toml::Value::Integer(n)) if *n >= 0 => {
            Budget { bytes: n.unsigned_abs(), source: BudgetSource::ConfigFile(path.clone()) }
        }
        Some(_) => {
            return Err(error(
                text.find("project_doc_max_bytes").unwrap_or(0),
                "project_doc_max_bytes must be a non-negative integer".to_owned(),
            ));
        }
    };
    let context_window = match table.get("model_context_window") {
        None => None,
        Some(toml::Value::Integer(n)) if *n > 0 => Some(n.unsigned_abs()),
        Some(_) => {
            return Err(error(
                text.find("model_context_window").unwrap_or(0),
                "model_context_window must be a positive integer".to_owned(),
            ));
        }
    };
    Ok(CodexConfig { budget, skills: skills_config(&table), context_window })
}

/// CX9: `[skills]` as Codex reads it; a value of the wrong type keeps the default.
fn skills_config(table: &toml::Table) -> SkillsConfig {
    let mut config = SkillsConfig::default();
    let Some(skills) = table.get("skills").and_then(toml::Value::as_table) else { return config };
    if let Some(include) = skills.get("include_instructions").and_then(toml::Value::as_bool) {
        config.include_instructions = include;
    }
    if let Some(enabled) = skills.get("bundled").and_then(|b| b.get("enabled")).and_then(toml::Value::as_bool)
    {
        config.bundled = enabled;
    }
    for entry in skills.get("config").and_then(toml::Value::as_array).into_iter().flatten() {
        if entry.get("enabled").and_then(toml::Value::as_bool) != Some(false) {
            continue;
        }
        if let Some(name) = entry.get("name").and_then(toml::Value::as_str) {
            config.disabled_names.push(name.to_owned());
        }
        if let Some(path) = entry.get("path").and_then(toml::Value::as_str) {
            config.disabled_paths.push(PathBuf::from(path));
        }
    }
    config
}
