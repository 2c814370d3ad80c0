//! QW2: the settings Qwen Code reads before it looks for context files: the context file
//! names (`context.fileName`), how imports are laid out (`context.importFormat`) and the
//! language its output-language file asks for (`general.outputLanguage`, QW3); and where its
//! own folder is (`$QWEN_HOME`, else `~/.qwen`).
//!
//! The files and their order are Gemini CLI's with Qwen's names (system defaults, the
//! user's, the workspace's, the system file last); what differs from Gemini is recorded on
//! each item.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::gemini::ImportFormat;
use crate::gemini::settings::load_json_object;
use ctxgraph_db::db::{Db, Host, Workspace, env_var};
use ctxgraph_db::files::real_path;

use super::QwenError;

/// Qwen's folder, in the home directory and in a workspace.
pub const QWEN_DIR: &str = ".qwen";
/// QW1: the names searched when `context.fileName` is not set, in this order.
pub const DEFAULT_NAMES: [&str; 2] = ["QWEN.md", "AGENTS.md"];

/// The settings that shape Qwen's context, with the file each one came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Settings {
    /// QW2: the context file names, in the order they are searched.
    pub filenames: Vec<String>,
    /// The settings file `context.fileName` came from (`None`: the default).
    pub filenames_from: Option<PathBuf>,
    /// QW8: tree (default) or flat.
    pub import_format: ImportFormat,
    /// The settings file `context.importFormat` came from (`None`: the default).
    pub import_format_from: Option<PathBuf>,
    /// QW3: `general.outputLanguage` as written (`None`: not set, which is `auto`).
    pub output_language: Option<String>,
    /// The settings file `general.outputLanguage` came from (`None`: not set).
    pub output_language_from: Option<PathBuf>,
    /// Every settings file that exists and was read, in merge order (later wins).
    pub files: Vec<PathBuf>,
}

/// QW2: `$QWEN_HOME` (a leading `~` is the home directory, a relative path is taken from the
/// working directory) when set and not empty, else `~/.qwen`.
#[salsa::tracked(returns(ref))]
pub fn qwen_dir(db: &dyn Db, ws: Workspace) -> PathBuf {
    let host = ws.host(db);
    match env_var(db, host, "QWEN_HOME".to_owned()) {
        Some(dir) if !dir.is_empty() => {
            let home = host.home(db);
            if dir == "~" {
                home.clone()
            } else if let Some(rest) = dir.strip_prefix("~/") {
                ctxgraph_db::path::resolve(home, rest)
            } else {
                ctxgraph_db::path::resolve(ws.cwd(db), dir)
            }
        }
        _ => host.home(db).join(QWEN_DIR),
    }
}

fn system_paths(db: &dyn Db, host: Host) -> (PathBuf, PathBuf) {
    let var = |name: &str| env_var(db, host, name.to_owned()).filter(|p| !p.is_empty()).map(PathBuf::from);
    let system = var("QWEN_CODE_SYSTEM_SETTINGS_PATH").unwrap_or_else(|| match host.platform(db).as_str() {
        "darwin" => PathBuf::from("/Library/Application Support/QwenCode/settings.json"),
        _ => PathBuf::from("/etc/qwen-code/settings.json"),
    });
    let defaults = var("QWEN_CODE_SYSTEM_DEFAULTS_PATH")
        .unwrap_or_else(|| system.parent().unwrap_or(Path::new("/")).join("system-defaults.json"));
    (system, defaults)
}

/// QW2: the settings files in merge order, Gemini CLI's places with Qwen's names: system
/// defaults, the user's (`<qwen dir>/settings.json`), the workspace's (`<cwd>/.qwen/settings.json`,
/// not read when the working directory is the home directory), then the system file.
pub fn settings_files(db: &dyn Db, ws: Workspace) -> Vec<ctxgraph_db::settings::SettingsFile> {
    let host = ws.host(db);
    let (system, defaults) = system_paths(db, host);
    let cwd = ws.cwd(db);
    let home = host.home(db);
    let workspace =
        (real_path(db, cwd) != real_path(db, home)).then(|| cwd.join(QWEN_DIR).join("settings.json"));
    crate::gemini::settings::layered_settings(
        defaults,
        qwen_dir(db, ws).join("settings.json"),
        workspace,
        system,
        "QW2",
    )
}

/// QW2: the merged settings: system defaults, the user's (`<qwen dir>/settings.json`), the
/// workspace's (`<cwd>/.qwen/settings.json`, not read when the working directory is the
/// home directory), then the system file. A workspace file that is not JSON is read as
/// empty (Qwen resets it); any other one stops Qwen.
#[salsa::tracked(returns(ref))]
pub fn qwen_settings(db: &dyn Db, ws: Workspace) -> Result<Settings, QwenError> {
    let paths = settings_files(db, ws).into_iter().map(|file| {
        let workspace = file.kind == "workspace";
        (file.path, workspace)
    });

    let mut settings = Settings {
        filenames: DEFAULT_NAMES.map(str::to_owned).to_vec(),
        filenames_from: None,
        import_format: ImportFormat::Tree,
        import_format_from: None,
        output_language: None,
        output_language_from: None,
        files: Vec::new(),
    };
    for (path, workspace) in paths {
        let value = match load_json_object(db, &path) {
            Ok(Some(value)) => value,
            Ok(None) => continue,
            Err(_) if workspace => continue,
            Err(fault) => {
                return Err(QwenError::Settings {
                    path,
                    line: fault.line,
                    column: fault.column,
                    message: fault.message,
                    line_text: fault.line_text,
                });
            }
        };
        settings.files.push(path.clone());
        let context = value.get("context");
        // `context.fileName`: a string or a list of strings, each trimmed (an empty list or
        // string, or any other value, leaves the names as they were).
        match context.and_then(|c| c.get("fileName")) {
            Some(serde_json::Value::String(name)) if !name.trim().is_empty() => {
                settings.filenames = vec![name.trim().to_owned()];
                settings.filenames_from = Some(path.clone());
            }
            Some(serde_json::Value::Array(names)) if !names.is_empty() => {
                settings.filenames =
                    names.iter().map(|n| n.as_str().unwrap_or_default().trim().to_owned()).collect();
                settings.filenames_from = Some(path.clone());
            }
            _ => {}
        }
        if let Some(format) = context.and_then(|c| c.get("importFormat")).and_then(serde_json::Value::as_str)
        {
            settings.import_format = if format == "flat" { ImportFormat::Flat } else { ImportFormat::Tree };
            settings.import_format_from = Some(path.clone());
        }
        if let Some(language) =
            value.get("general").and_then(|g| g.get("outputLanguage")).and_then(serde_json::Value::as_str)
        {
            settings.output_language = Some(language.to_owned());
            settings.output_language_from = Some(path.clone());
        }
    }
    Ok(settings)
}
