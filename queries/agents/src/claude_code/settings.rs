//! Claude Code's settings files, read once for every key ctxgraph models: `claudeMdExcludes`
//! (CC14), `outputStyle` (CC19) and `disabledMcpjsonServers`. Each is read from the user's
//! `~/.claude/settings.json`, the working directory's `.claude/settings.json` and its
//! `.claude/settings.local.json`, in that order.

use std::path::PathBuf;

use serde_json::Value;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::settings::SettingsFile;

/// Claude Code's settings files, in the order a later one wins: the user's, the project's,
/// the local one.
pub fn settings_paths(db: &dyn Db, ws: Workspace) -> [PathBuf; 3] {
    let cwd = ws.cwd(db);
    [
        ws.host(db).home(db).join(".claude").join("settings.json"),
        cwd.join(".claude").join("settings.json"),
        cwd.join(".claude").join("settings.local.json"),
    ]
}

/// The same files as `ctxgraph config` lists them.
pub fn settings_files(db: &dyn Db, ws: Workspace) -> Vec<SettingsFile> {
    let [user, project, local] = settings_paths(db, ws);
    let file = |kind, label, path| SettingsFile { kind, label, path, rule: "CC14" };
    vec![
        file("user", "user settings", user),
        file("project", "project settings", project),
        file("local", "local project settings", local),
    ]
}

/// Each settings file that holds a JSON object, in order, parsed once for every reader. A
/// file that is missing or not JSON gives nothing: Claude Code reads no key of it.
/// Invalid UTF-8 is read as node reads a file as UTF-8 (replacement characters).
#[salsa::tracked(returns(ref))]
pub fn claude_settings(db: &dyn Db, ws: Workspace) -> Vec<(PathBuf, Value)> {
    settings_paths(db, ws)
        .into_iter()
        .filter_map(|path| {
            let bytes = file_bytes(db, db.files().get(db, &path)).as_ref().ok()?;
            let value: Value = serde_json::from_str(&String::from_utf8_lossy(bytes)).ok()?;
            value.is_object().then_some((path, value))
        })
        .collect()
}

/// Every file's value of `key`, in order, with the file.
pub fn values<'a>(
    db: &'a dyn Db,
    ws: Workspace,
    key: &'a str,
) -> impl Iterator<Item = (&'a Value, &'a PathBuf)> {
    claude_settings(db, ws).iter().filter_map(move |(path, json)| Some((json.get(key)?, path)))
}
