//! GM5/GM6: the settings Gemini CLI reads before it looks for context files: which file names
//! are context files (`context.fileName`), what marks the project root
//! (`context.memoryBoundaryMarkers`) and how imports are laid out (`context.importFormat`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use ctxgraph_db::db::{Db, Host, Workspace, env_var};
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::jsonc;
use ctxgraph_db::lines::Lines;
use ctxgraph_db::settings::SettingsFile;
use ctxgraph_db::system::FileKind;

use super::GeminiError;

/// The context file name Gemini CLI always looks for (GM6).
pub const DEFAULT_CONTEXT_FILENAME: &str = "GEMINI.md";
/// The folder of Gemini's own files, in the home directory and in a workspace.
pub const GEMINI_DIR: &str = ".gemini";

/// How `@imports` are laid out (GM4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportFormat {
    /// Each import inlined where it stands, between comment markers (the default).
    #[default]
    Tree,
    /// `importFormat: "flat"`: the importing file and every file it reaches, one after another.
    Flat,
}

/// The settings that shape context discovery, with the file each one came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Settings {
    /// GM6: the context file names, in the order a directory is searched.
    pub filenames: Vec<String>,
    /// The settings file `context.fileName` came from (`None`: the default).
    pub filenames_from: Option<PathBuf>,
    /// GM2: the entries whose presence marks the project root (default `.git`).
    pub boundary_markers: Vec<String>,
    /// The settings file `context.memoryBoundaryMarkers` came from.
    pub boundary_markers_from: Option<PathBuf>,
    /// GM4: tree (default) or flat.
    pub import_format: ImportFormat,
    /// The settings file `context.importFormat` came from (`None`: the default).
    pub import_format_from: Option<PathBuf>,
    /// Every settings file that exists, in the order they are merged (later wins).
    pub files: Vec<PathBuf>,
}

/// GM5: `$GEMINI_CLI_HOME` when set and not empty, else the home directory.
#[salsa::tracked(returns(ref))]
pub fn gemini_home(db: &dyn Db, host: Host) -> PathBuf {
    match env_var(db, host, "GEMINI_CLI_HOME".to_owned()) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => host.home(db).clone(),
    }
}

/// GM6: the settings files in merge order: system defaults, the user's, the workspace's
/// (`<cwd>/.gemini/settings.json`, not read when the working directory is the home
/// directory), then the system file, which overrides everything.
pub fn settings_files(db: &dyn Db, ws: Workspace) -> Vec<SettingsFile> {
    let host = ws.host(db);
    let system = env_var(db, host, "GEMINI_CLI_SYSTEM_SETTINGS_PATH".to_owned())
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"), PathBuf::from);
    let defaults = env_var(db, host, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_owned())
        .filter(|p| !p.is_empty())
        .map_or_else(
            || system.parent().unwrap_or(Path::new("/")).join("system-defaults.json"),
            PathBuf::from,
        );
    let home = gemini_home(db, host);
    let user = home.join(GEMINI_DIR).join("settings.json");
    let cwd = ws.cwd(db);
    let workspace = (cwd != home).then(|| cwd.join(GEMINI_DIR).join("settings.json"));
    layered_settings(defaults, user, workspace, system, "GM6")
}

/// Gemini CLI's four settings places in merge order (its descendants' too), cited by `rule`.
pub fn layered_settings(
    defaults: PathBuf,
    user: PathBuf,
    workspace: Option<PathBuf>,
    system: PathBuf,
    rule: &'static str,
) -> Vec<SettingsFile> {
    let file = |kind, label, path| SettingsFile { kind, label, path, rule };
    let mut files =
        vec![file("system-defaults", "system defaults", defaults), file("user", "user settings", user)];
    files.extend(workspace.map(|path| file("workspace", "workspace settings", path)));
    files.push(file("system", "system settings", system));
    files
}

/// GM5/GM6: the merged settings. A settings file that is not a JSON object (comments
/// allowed) is an error naming the file and position.
#[salsa::tracked(returns(ref))]
pub fn gemini_settings(db: &dyn Db, ws: Workspace) -> Result<Settings, GeminiError> {
    let mut settings = Settings {
        filenames: vec![DEFAULT_CONTEXT_FILENAME.to_owned()],
        filenames_from: None,
        boundary_markers: vec![".git".to_owned()],
        boundary_markers_from: None,
        import_format: ImportFormat::Tree,
        import_format_from: None,
        files: Vec::new(),
    };
    let mut file_name: Option<Vec<String>> = None;
    for path in settings_files(db, ws).into_iter().map(|file| file.path) {
        let Some(value) = load(db, &path)? else { continue };
        settings.files.push(path.clone());
        let Some(context) = value.get("context") else { continue };
        let bad = |key: &str, expected: &str| GeminiError::Settings {
            path: path.clone(),
            line: 0,
            column: 0,
            message: format!("context.{key} must be {expected}"),
            line_text: String::new(),
        };
        match context.get("fileName") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(name)) => {
                file_name = Some(vec![name.clone()]);
                settings.filenames_from = Some(path.clone());
            }
            Some(serde_json::Value::Array(names)) => {
                let names: Option<Vec<String>> =
                    names.iter().map(|n| n.as_str().map(str::to_owned)).collect();
                file_name = Some(names.ok_or_else(|| bad("fileName", "a string or an array of strings"))?);
                settings.filenames_from = Some(path.clone());
            }
            Some(_) => return Err(bad("fileName", "a string or an array of strings")),
        }
        match context.get("memoryBoundaryMarkers") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Array(markers)) => {
                let markers: Option<Vec<String>> =
                    markers.iter().map(|n| n.as_str().map(str::to_owned)).collect();
                settings.boundary_markers =
                    markers.ok_or_else(|| bad("memoryBoundaryMarkers", "an array of strings"))?;
                settings.boundary_markers_from = Some(path.clone());
            }
            Some(_) => return Err(bad("memoryBoundaryMarkers", "an array of strings")),
        }
        if let Some(format) = context.get("importFormat").and_then(serde_json::Value::as_str) {
            settings.import_format = if format == "flat" { ImportFormat::Flat } else { ImportFormat::Tree };
            settings.import_format_from = Some(path.clone());
        }
    }
    if let Some(names) = file_name {
        settings.filenames = context_filenames(&names);
    }
    Ok(settings)
}

/// GM6: the names given, trimmed, empty ones dropped, normalised, then the default
/// `GEMINI.md`, which Gemini CLI keeps looking for whatever the setting says.
pub fn context_filenames(given: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let wanted = given.iter().map(|n| n.trim()).filter(|n| !n.is_empty()).map(normalize_relative);
    for name in wanted.chain([DEFAULT_CONTEXT_FILENAME.to_owned()]) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// node's `path.normalize` on a relative name: `.` segments and repeated separators go.
fn normalize_relative(name: &str) -> String {
    if name.starts_with('/') {
        return ctxgraph_db::path::normalize(Path::new(name)).to_string_lossy().into_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
}

/// One settings file as JSON (comments allowed), `None` when it does not exist.
fn load(db: &dyn Db, path: &Path) -> Result<Option<serde_json::Value>, GeminiError> {
    load_json_object(db, path).map_err(|fault| GeminiError::Settings {
        path: path.to_path_buf(),
        line: fault.line,
        column: fault.column,
        message: fault.message,
        line_text: fault.line_text,
    })
}

/// `path:line:column`, or the path alone for a fault with no position (a value of the wrong
/// type, found after parsing).
pub fn place(path: &Path, line: usize, column: usize) -> String {
    if line == 0 { path.display().to_string() } else { format!("{}:{line}:{column}", path.display()) }
}

/// A settings file refused at `line`:`column` (JSONC's UTF-16 columns; 0 for no position),
/// as the fault every surface shows: `whole` is the error's message, `what` what is wrong,
/// `rule` the agent's rule for where settings come from. Gemini CLI's and its descendants'.
pub fn settings_fault(
    path: &Path,
    (line, column): (usize, usize),
    line_text: &str,
    (whole, what): (String, &str),
    rule: &'static str,
) -> ctxgraph_db::fault::InputFault {
    let at = (line, column, ctxgraph_db::lines::Column::Utf16);
    ctxgraph_db::fault::InputFault::in_file("invalid-settings", path, at, line_text, (whole, what), rule)
}

/// Why a settings file could not be used: its position (1-based; 0 when unknown) and what is
/// wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonFault {
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The line as written, for a snippet (empty without a position).
    pub line_text: String,
}

/// A settings file of Gemini CLI or one of its descendants: a JSON object, comments allowed;
/// `None` when the path does not exist.
pub fn load_json_object(db: &dyn Db, path: &Path) -> Result<Option<serde_json::Value>, JsonFault> {
    let file = db.files().get(db, path);
    if file.kind(db) == FileKind::Missing {
        return Ok(None);
    }
    let bytes = file_bytes(db, file).as_ref().map_err(|err| JsonFault {
        line: 0,
        column: 0,
        message: err.to_string(),
        line_text: String::new(),
    })?;
    let text = String::from_utf8_lossy(bytes);
    let fault = |line: usize, column: usize, message: String| {
        let line_text = Lines::new(&text).line_text(line).to_owned();
        JsonFault { line, column, message, line_text }
    };
    let value = jsonc::parse(&text).map_err(|err| fault(err.line, err.column, err.message))?;
    if !value.is_object() {
        return Err(fault(1, 1, "settings file is not a JSON object".to_owned()));
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_name_is_always_searched_last() {
        let names =
            |given: &[&str]| context_filenames(&given.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(names(&["AGENTS.md"]), ["AGENTS.md", "GEMINI.md"]);
        assert_eq!(
            names(&[" ./CONTEXT.md ", "", "GEMINI.md", "x//y.md"]),
            ["CONTEXT.md", "GEMINI.md", "x/y.md"]
        );
    }
}
