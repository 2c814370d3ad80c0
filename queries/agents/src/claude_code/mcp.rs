//! CC22: the MCP servers of the project's `.mcp.json` that Claude Code connects to at start,
//! as requests the engine connects (queries never wait on a server). With `-p` (what the
//! recordings run) every server is used but those a settings file names in
//! `disabledMcpjsonServers`; the interactive approval prompt never comes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::files::file_bytes;
use ctxgraph_db::mcp::{McpRequest, McpTransport};
use serde_json::Value;

/// The file Claude Code reads the project's servers from, in the working directory.
pub const MCP_JSON: &str = ".mcp.json";
/// How long ctxgraph waits for each answer of a server (Claude Code's default start-up
/// timeout, `MCP_TIMEOUT`, is 30 s).
const TIMEOUT_MS: u64 = 30_000;

/// One server of `.mcp.json`, and what becomes of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpServerConfig {
    /// Its name: the `mcpServers` key.
    pub name: String,
    /// How to reach it, when Claude Code would connect; else why not.
    pub connect: Result<McpRequest, String>,
}

/// The project's servers, by name; the file they come from. None without a `.mcp.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProjectServers {
    /// The `.mcp.json`.
    pub file: Option<PathBuf>,
    /// Every server it names, by name.
    pub servers: Vec<McpServerConfig>,
}

/// CC22: the `.mcp.json` of the working directory, each server approved or not.
#[salsa::tracked(returns(ref))]
pub fn project_servers(db: &dyn Db, ws: Workspace) -> ProjectServers {
    let cwd = ws.cwd(db).clone();
    let path = cwd.join(MCP_JSON);
    let Ok(bytes) = file_bytes(db, db.files().get(db, &path)) else { return ProjectServers::default() };
    let config = serde_json::from_slice::<Value>(bytes).unwrap_or(Value::Null);
    let disabled = disabled(db, ws);
    let mut servers: Vec<McpServerConfig> = config
        .get("mcpServers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, server)| {
            let connect = if disabled.contains(name) {
                Err("turned off by disabledMcpjsonServers in a settings file".to_owned())
            } else {
                request(server, &cwd)
            };
            McpServerConfig { name: name.clone(), connect }
        })
        .collect();
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    ProjectServers { file: Some(path), servers }
}

/// The servers a settings file turns off (`disabledMcpjsonServers`).
fn disabled(db: &dyn Db, ws: Workspace) -> Vec<String> {
    let lists =
        super::settings::values(db, ws, "disabledMcpjsonServers").filter_map(|(list, _)| list.as_array());
    lists.flatten().filter_map(|n| n.as_str().map(str::to_owned)).collect()
}

/// A server entry as a request: `command`/`args`/`env` over stdio, or `type: "http"` with
/// `url`/`headers` (streamable HTTP; ctxgraph does not speak the older SSE transport).
fn request(server: &Value, cwd: &std::path::Path) -> Result<McpRequest, String> {
    let kind = server.get("type").and_then(Value::as_str).unwrap_or("stdio");
    let strings = |key: &str| -> BTreeMap<String, String> {
        server
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect()
    };
    let transport = match kind {
        "stdio" => {
            let command =
                server.get("command").and_then(Value::as_str).ok_or("a stdio server without `command`")?;
            let args =
                server.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
            McpTransport::Local {
                command: std::iter::once(command).chain(args).map(str::to_owned).collect(),
                cwd: cwd.to_path_buf(),
                environment: strings("env"),
            }
        }
        "http" => McpTransport::Remote {
            url: server.get("url").and_then(Value::as_str).ok_or("a remote server without `url`")?.to_owned(),
            headers: strings("headers").into_iter().collect(),
        },
        other => return Err(format!("type {other:?}: not a kind of server ctxgraph connects to")),
    };
    Ok(McpRequest { transport, timeout_ms: TIMEOUT_MS })
}
