//! C1–C6: the config layers, loaded and merged the way opencode V1 does it.
//!
//! Each source is its own query, so editing one `opencode.json` re-parses that file only.
//! The merge keeps, next to the merged JSON, where every `instructions` entry came from:
//! discovery and `explain` need it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::db::{Db, Workspace, env_var};
use crate::files::{ReadFailure, file_text};
use crate::opencode::flags::{FlagError, flags};
use crate::opencode::fs::up;
use crate::opencode::jsonc::{self, JsoncError};
use crate::opencode::paths::global_paths;
use crate::opencode::substitute::{self, SubstitutionError};
use crate::opencode::worktree::worktree;
use crate::path;

/// Where a layer comes from, in C3 order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    /// C4: `config.json`, `opencode.json`, `opencode.jsonc` in the XDG config dir.
    Global,
    /// C3.3: `$OPENCODE_CONFIG`.
    EnvFile,
    /// C3.4: `opencode.json{,c}` from the worktree down to `D`.
    Project,
    /// C3.5/C5: `.opencode` dirs, `~/.opencode`, `$OPENCODE_CONFIG_DIR`.
    Directory,
    /// C3.6: `$OPENCODE_CONFIG_CONTENT`.
    EnvContent,
    /// C3.8: the managed dir (`/etc/opencode`).
    Managed,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigSource {
    pub kind: SourceKind,
    /// The file; for [`SourceKind::EnvContent`], the directory `{file:}` resolves against.
    pub path: PathBuf,
}

impl ConfigSource {
    /// How opencode names the source in errors.
    pub fn name(&self) -> String {
        match self.kind {
            SourceKind::EnvContent => "OPENCODE_CONFIG_CONTENT".to_owned(),
            _ => path::display(&self.path),
        }
    }
}

/// Why the config cannot be loaded. opencode aborts the instance on any of these, so no
/// prompt exists; ctxgraph reports them with the position.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// J2.
    #[error("{source_name}:{}:{}: invalid JSONC ({}): {}", error.line, error.column, error.code, error.message)]
    Json { source_name: String, error: Box<JsoncError>, line_text: String },
    /// V2.
    #[error("{source_name}:{line}:{column}: bad file reference: {}", describe_substitution(error))]
    Substitution {
        source_name: String,
        error: Box<SubstitutionError>,
        line: usize,
        column: usize,
        line_text: String,
    },
    /// C6: a read error other than "missing" or "permission denied".
    #[error("{source_name}: cannot read config file: {reason}")]
    Read { source_name: String, reason: String },
    /// S2, for the keys discovery depends on.
    #[error("{source_name}: invalid config: {message}")]
    Schema { source_name: String, message: String },
}

/// The V2 message without a location, e.g. `"{file:x}" /d/x does not exist`.
pub fn describe_substitution(error: &SubstitutionError) -> String {
    match error {
        SubstitutionError::Missing { token, resolved, .. } => {
            format!("\"{token}\" {} does not exist", resolved.display())
        }
        SubstitutionError::Unreadable { token, resolved, reason, .. } => {
            format!("\"{token}\" ({}: {reason})", resolved.display())
        }
    }
}

/// C3: every source that could contribute, in merge order. Files that do not exist are
/// listed too where opencode probes them unconditionally (they load as `{}`).
#[salsa::tracked(returns(ref))]
pub fn config_sources(db: &dyn Db, ws: Workspace) -> Result<Vec<ConfigSource>, ConfigError> {
    let flags = flags(db, ws.host(db)).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let cwd = ws.cwd(db);
    let mut sources = Vec::new();
    let mut push = |kind: SourceKind, path: PathBuf| sources.push(ConfigSource { kind, path });

    for name in ["config.json", "opencode.json", "opencode.jsonc"] {
        push(SourceKind::Global, paths.config.join(name));
    }
    if let Some(file) = &flags.config_file {
        push(SourceKind::EnvFile, path::resolve(cwd, file));
    }
    let root = &worktree(db, ws).root;
    let project_enabled = flags.disable_project_config.is_none();
    if project_enabled {
        let targets = vec!["opencode.jsonc".to_owned(), "opencode.json".to_owned()];
        let found = up(db, targets, cwd.clone(), root.clone()).clone().unwrap_or_default();
        for file in found.into_iter().rev() {
            push(SourceKind::Project, file);
        }
    }
    // C5: the directory list, compared as raw strings, first occurrence kept.
    let dot_opencode = |start: &Path, stop: &Path| {
        up(db, vec![".opencode".to_owned()], start.to_path_buf(), stop.to_path_buf())
            .clone()
            .unwrap_or_default()
    };
    let mut directories: Vec<String> = vec![path::display(&paths.config)];
    if project_enabled {
        directories.extend(dot_opencode(cwd, root).iter().map(|p| path::display(p)));
    }
    directories.extend(dot_opencode(&paths.home, &paths.home).iter().map(|p| path::display(p)));
    directories.extend(flags.config_dir.clone());
    let mut seen = std::collections::HashSet::new();
    for dir in directories.into_iter().filter(|d| seen.insert(d.clone())) {
        if dir.ends_with(".opencode") || flags.config_dir.as_deref() == Some(dir.as_str()) {
            let dir = path::resolve(cwd, &dir);
            push(SourceKind::Directory, dir.join("opencode.json"));
            push(SourceKind::Directory, dir.join("opencode.jsonc"));
        }
    }
    if flags.config_content.as_deref().is_some_and(|content| !content.is_empty()) {
        push(SourceKind::EnvContent, cwd.clone());
    }
    if db.files().get(db, &paths.managed).kind(db).exists() {
        push(SourceKind::Managed, paths.managed.join("opencode.json"));
        push(SourceKind::Managed, paths.managed.join("opencode.jsonc"));
    }
    Ok(sources)
}

/// One parsed layer. `value` is `None` when the source contributes nothing (a missing or
/// empty file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    pub value: Option<Map<String, Value>>,
}

/// C6/C7 steps 1–3 for one source.
#[salsa::tracked(returns(ref))]
pub fn config_layer(db: &dyn Db, ws: Workspace, source: ConfigSource) -> Result<Layer, ConfigError> {
    let host = ws.host(db);
    let name = source.name();
    let (text, dir) = match source.kind {
        SourceKind::EnvContent => {
            let content = env_var(db, host, "OPENCODE_CONFIG_CONTENT".to_owned()).unwrap_or_default();
            (content, source.path.clone())
        }
        _ => {
            let file = db.files().get(db, &source.path);
            let text = match file_text(db, file) {
                Ok(decoded) => decoded.text.to_string(),
                Err(ReadFailure::NotFound | ReadFailure::PermissionDenied) => {
                    return Ok(Layer { value: None });
                }
                Err(failure) => {
                    return Err(ConfigError::Read { source_name: name, reason: failure.to_string() });
                }
            };
            let dir = source.path.parent().unwrap_or(Path::new("/")).to_path_buf();
            (text, dir)
        }
    };
    if text.is_empty() && source.kind != SourceKind::EnvContent {
        return Ok(Layer { value: None });
    }
    let paths = global_paths(db, ws).as_ref().map_err(|e| ConfigError::Flag(e.clone()))?;
    let env = |var: &str| env_var(db, host, var.to_owned());
    let read = |p: &Path| -> Result<Option<String>, String> {
        match file_text(db, db.files().get(db, p)) {
            Ok(decoded) => Ok(Some(decoded.text.to_string())),
            Err(ReadFailure::NotFound) => Ok(None),
            Err(failure) => Err(failure.to_string()),
        }
    };
    let cx = substitute::Context { env: &env, read: &read, dir: &dir, os_home: &paths.os_home };
    let (substituted, _) = substitute::substitute(&text, &cx).map_err(|error| {
        let offset = match &error {
            SubstitutionError::Missing { offset, .. } | SubstitutionError::Unreadable { offset, .. } => {
                *offset
            }
        };
        let (line, column, line_text) = position(&text, offset);
        ConfigError::Substitution {
            source_name: name.clone(),
            error: Box::new(error),
            line,
            column,
            line_text,
        }
    })?;
    let value = jsonc::parse(&substituted).map_err(|error| {
        let line_text = substituted.split('\n').nth(error.line - 1).unwrap_or("").to_owned();
        ConfigError::Json { source_name: name.clone(), error: Box::new(error), line_text }
    })?;
    let Value::Object(mut object) = value else {
        return Err(ConfigError::Schema {
            source_name: name,
            message: "expected an object at the top level".to_owned(),
        });
    };
    // C7.3: legacy TUI keys are dropped before validation.
    for legacy in ["theme", "keybinds", "tui"] {
        object.remove(legacy);
    }
    if let Some(instructions) = object.get("instructions") {
        let valid = instructions.as_array().is_some_and(|items| items.iter().all(Value::is_string));
        if !valid {
            return Err(ConfigError::Schema {
                source_name: name,
                message: "`instructions` must be an array of strings".to_owned(),
            });
        }
    }
    Ok(Layer { value: Some(object) })
}

fn position(text: &str, offset: usize) -> (usize, usize, String) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").encode_utf16().count() + 1;
    let line_text = text.split('\n').nth(line - 1).unwrap_or("").to_owned();
    (line, column, line_text)
}

/// One entry of the merged `instructions` list and the layer that contributed it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstructionEntry {
    pub value: String,
    pub source: ConfigSource,
}

/// The merged config.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergedConfig {
    pub value: Map<String, Value>,
    /// `value["instructions"]`, each entry with its source.
    pub instructions: Vec<InstructionEntry>,
    /// The sources that existed and contributed, in merge order.
    pub layers: Vec<ConfigSource>,
}

/// C2–C4: merges every layer in order.
#[salsa::tracked(returns(ref))]
pub fn merged_config(db: &dyn Db, ws: Workspace) -> Result<MergedConfig, ConfigError> {
    let mut merged = MergedConfig::default();
    // C4: the global files merge among themselves with plain C1 (instructions replace)…
    let mut global = MergedConfig::default();
    for source in config_sources(db, ws).as_ref().map_err(Clone::clone)? {
        let layer = config_layer(db, ws, source.clone()).as_ref().map_err(Clone::clone)?;
        let Some(value) = &layer.value else { continue };
        if source.kind == SourceKind::Global {
            merge_layer(&mut global, value, source, false);
        } else {
            // …and that group then joins the chain as one C2 layer.
            if !global.layers.is_empty() {
                merge_group(&mut merged, std::mem::take(&mut global));
            }
            merge_layer(&mut merged, value, source, true);
        }
    }
    if !global.layers.is_empty() {
        merge_group(&mut merged, global);
    }
    Ok(merged)
}

fn merge_group(into: &mut MergedConfig, group: MergedConfig) {
    let had = into.value.contains_key("instructions");
    let incoming = group.value.contains_key("instructions").then_some(group.instructions);
    merge_deep(&mut into.value, group.value);
    merge_instructions(into, had, incoming, true);
    into.layers.extend(group.layers);
}

fn merge_layer(into: &mut MergedConfig, value: &Map<String, Value>, source: &ConfigSource, concat: bool) {
    let had = into.value.contains_key("instructions");
    let incoming = value.get("instructions").and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(|item| InstructionEntry { value: item.to_owned(), source: source.clone() })
            .collect::<Vec<_>>()
    });
    merge_deep(&mut into.value, value.clone());
    merge_instructions(into, had, incoming, concat);
    into.layers.push(source.clone());
}

/// C2 when `concat`: if both sides have `instructions` (an empty array counts), the result
/// is `unique(a ++ b)`, first occurrence kept; if only the new side has them they replace,
/// so duplicates inside one file survive. Without `concat` (C1, the global dir) they
/// always replace.
fn merge_instructions(
    into: &mut MergedConfig,
    had: bool,
    incoming: Option<Vec<InstructionEntry>>,
    concat: bool,
) {
    let Some(incoming) = incoming else { return };
    if concat && had {
        let mut all = std::mem::take(&mut into.instructions);
        all.extend(incoming);
        let mut seen = std::collections::HashSet::new();
        all.retain(|entry| seen.insert(entry.value.clone()));
        into.instructions = all;
    } else {
        into.instructions = incoming;
    }
    let list = into.instructions.iter().map(|e| Value::String(e.value.clone())).collect();
    into.value.insert("instructions".to_owned(), Value::Array(list));
}

/// C1 (remeda `mergeDeep`): objects merge recursively, everything else (arrays included)
/// is replaced by the newer value.
pub fn merge_deep(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(incoming)) => merge_deep(existing, incoming),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// The 1-based line of the config source where `entry` is written, for reports: the first
/// line holding the entry as a JSON string literal. `None` when it cannot be found (it was
/// produced by a `{file:}` or `{env:}` substitution, or spelled with escapes).
pub fn entry_line(db: &dyn Db, ws: Workspace, entry: &InstructionEntry) -> Option<usize> {
    let text: String = match entry.source.kind {
        SourceKind::EnvContent => env_var(db, ws.host(db), "OPENCODE_CONFIG_CONTENT".to_owned())?,
        _ => file_text(db, db.files().get(db, &entry.source.path)).as_ref().ok()?.text.to_string(),
    };
    let literal = serde_json::to_string(&entry.value).ok()?;
    let offset = text.find(&literal)?;
    Some(text[..offset].matches('\n').count() + 1)
}
