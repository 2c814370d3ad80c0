//! B4: the MCP instructions block, and the facts behind it (each configured server: in or
//! out, and why).
//!
//! The config (`mcp.*` of the merged config) says which servers exist and how to reach
//! them ([`mcp_servers`]); the engine connects and sets one [`McpServer`] input per server
//! config; [`mcp_facts`] reads the answers and applies opencode 1.18.33's rules; the block
//! is rendered from the facts.
//!
//! [`McpServer`]: ctxgraph_db::mcp::McpServer

use std::collections::BTreeMap;
use std::path::Path;

use crate::agents::agents;
use crate::config::tree::{Node, NodeKind};
use crate::config::{ConfigError, ConfigSource, merged_config};
use crate::prompt::{Block, BlockKind};
use ctxgraph_db::collate::locale_compare;
use ctxgraph_db::db::{Db, Workspace};
use ctxgraph_db::lines::LineColumn;
use ctxgraph_db::mcp::{McpAnswer, McpFailure, McpRequest, McpState, McpTransport};
use ctxgraph_db::path;

/// opencode's default `timeout` for a server (ms), when the config gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// One entry of the config's `mcp` object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpServerConfig {
    /// The key in `mcp`.
    pub name: String,
    /// The config source that set the entry, and where.
    pub source: ConfigSource,
    /// Its position in that source.
    pub at: Option<LineColumn>,
    /// How to reach it, or why opencode does not try.
    pub connect: Connect,
}

impl McpServerConfig {
    /// The entry's file and line, for findings (none for a source that is not a file).
    pub fn config_location(&self) -> Option<ctxgraph_db::lint::Location> {
        self.source.path().map(|path| ctxgraph_db::lint::Location {
            uri: path::display(path),
            line: self.at.map(|at| at.line),
            column: self.at.map(|at| at.column),
        })
    }
}

/// Whether opencode connects to a configured server.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Connect {
    /// It does, with this request.
    Yes(McpRequest),
    /// `enabled: false`.
    Disabled,
    /// Not an object with a `type`: opencode logs an error and ignores it.
    NoType,
    /// A `local` server without a command (opencode's config schema refuses it; ctxgraph
    /// reports it here instead of failing the whole config).
    NoCommand,
}

/// B4's config side: every `mcp` entry, in config order.
#[salsa::tracked(returns(ref))]
pub fn mcp_servers(db: &dyn Db, ws: Workspace) -> Result<Vec<McpServerConfig>, ConfigError> {
    let config = merged_config(db, ws).as_ref().map_err(Clone::clone)?;
    let Some(NodeKind::Object(entries)) = config.tree.get("mcp").map(|n| &n.kind) else {
        return Ok(Vec::new());
    };
    let cwd = ws.cwd(db);
    Ok(entries
        .iter()
        .map(|(name, node)| McpServerConfig {
            name: name.clone(),
            source: node.origin.source.clone(),
            at: node.origin.at,
            connect: connect(node, cwd),
        })
        .collect())
}

fn string(node: Option<&Node>) -> Option<String> {
    match node.map(|n| &n.kind) {
        Some(NodeKind::Scalar(serde_json::Value::String(s))) => Some(s.clone()),
        _ => None,
    }
}

fn string_map(node: Option<&Node>) -> Vec<(String, String)> {
    match node.map(|n| &n.kind) {
        Some(NodeKind::Object(map)) => {
            map.iter().filter_map(|(k, v)| string(Some(v)).map(|v| (k.clone(), v))).collect()
        }
        _ => Vec::new(),
    }
}

fn connect(node: &Node, cwd: &Path) -> Connect {
    let NodeKind::Object(map) = &node.kind else { return Connect::NoType };
    let Some(kind) = map.get("type") else { return Connect::NoType };
    if matches!(map.get("enabled").map(|n| &n.kind), Some(NodeKind::Scalar(serde_json::Value::Bool(false)))) {
        return Connect::Disabled;
    }
    let timeout_ms = match map.get("timeout").map(|n| &n.kind) {
        Some(NodeKind::Scalar(serde_json::Value::Number(n))) => n.as_u64().unwrap_or(DEFAULT_TIMEOUT_MS),
        _ => DEFAULT_TIMEOUT_MS,
    };
    let transport = if string(Some(kind)).as_deref() == Some("remote") {
        McpTransport::Remote {
            url: string(map.get("url")).unwrap_or_default(),
            headers: string_map(map.get("headers")),
        }
    } else {
        let command: Vec<String> = match map.get("command").map(|n| &n.kind) {
            Some(NodeKind::Array(items)) => items.iter().filter_map(|i| string(Some(i))).collect(),
            _ => Vec::new(),
        };
        if command.is_empty() {
            return Connect::NoCommand;
        }
        let cwd = match string(map.get("cwd")) {
            Some(dir) => path::resolve(cwd, dir),
            None => cwd.to_path_buf(),
        };
        let environment: BTreeMap<String, String> = string_map(map.get("environment")).into_iter().collect();
        McpTransport::Local { command, cwd, environment }
    };
    Connect::Yes(McpRequest { transport, timeout_ms })
}

/// One configured server, with what it answered and its fate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpServerFact {
    /// The config entry.
    pub config: McpServerConfig,
    /// What the engine learned (pending for servers opencode does not connect to).
    pub state: McpState,
    /// The server's tools under the names opencode registers them with
    /// (`<server>_<tool>`, each part with characters outside `[A-Za-z0-9_-]` replaced by `_`).
    pub tools: Vec<String>,
    /// In the block, or why not.
    pub fate: McpFate,
}

/// Why a server is (not) in the block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum McpFate {
    /// Its instructions are in the block.
    Included,
    /// `enabled: false`.
    Disabled,
    /// The entry has no `type`.
    NoType,
    /// A local server without a command.
    NoCommand,
    /// Not connected: MCP is off for this run (`--no-mcp`, or a `check` scenario without
    /// `mcp = true`).
    NotConnected,
    /// Connecting failed; opencode leaves it out too.
    Failed(McpFailure),
    /// Connected, but the initialize result has no (or only blank) instructions.
    NoInstructions,
    /// It lists tools and the agent's permissions disable every one of them.
    AllToolsDenied,
}

impl McpFate {
    /// A stable machine-readable name, for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            McpFate::Included => "included",
            McpFate::Disabled => "disabled",
            McpFate::NoType => "no-type",
            McpFate::NoCommand => "no-command",
            McpFate::NotConnected => "not-connected",
            McpFate::Failed(_) => "failed",
            McpFate::NoInstructions => "no-instructions",
            McpFate::AllToolsDenied => "all-tools-denied",
        }
    }

    /// The fate in words, for `explain`.
    pub fn describe(&self) -> String {
        match self {
            McpFate::Included => "its instructions are in the MCP block".to_owned(),
            McpFate::Disabled => "left out: `enabled` is false".to_owned(),
            McpFate::NoType => "ignored: the entry has no `type` (opencode logs an error)".to_owned(),
            McpFate::NoCommand => "ignored: a local server needs a `command`".to_owned(),
            McpFate::NotConnected => {
                "not connected: MCP is off for this run (--no-mcp, or a check scenario without mcp = true)"
                    .to_owned()
            }
            McpFate::Failed(failure) => format!("left out: the server failed: {failure}"),
            McpFate::NoInstructions => "left out: the server sent no instructions".to_owned(),
            McpFate::AllToolsDenied => {
                "left out: the agent's permissions disable every tool it lists".to_owned()
            }
        }
    }
}

/// opencode's tool-name part: every UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`.
fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

/// B4's facts for `agent`: every configured server, in config order.
#[salsa::tracked(returns(ref))]
pub fn mcp_facts(db: &dyn Db, ws: Workspace, agent: String) -> Result<Vec<McpServerFact>, ConfigError> {
    let servers = mcp_servers(db, ws).as_ref().map_err(Clone::clone)?;
    let mut facts = Vec::with_capacity(servers.len());
    for config in servers {
        let (state, fate) = match &config.connect {
            Connect::Disabled => (McpState::Pending, McpFate::Disabled),
            Connect::NoType => (McpState::Pending, McpFate::NoType),
            Connect::NoCommand => (McpState::Pending, McpFate::NoCommand),
            Connect::Yes(request) => {
                let state = db.remotes().mcp().get(db, request).state(db).clone();
                let fate = match &state {
                    McpState::Pending => McpFate::NotConnected,
                    McpState::Failed(failure) => McpFate::Failed(failure.clone()),
                    McpState::Connected(McpAnswer { instructions, .. }) => {
                        if instructions.as_deref().is_none_or(|i| i.trim().is_empty()) {
                            McpFate::NoInstructions
                        } else {
                            McpFate::Included
                        }
                    }
                };
                (state, fate)
            }
        };
        let tools: Vec<String> = match &state {
            McpState::Connected(answer) => {
                let server = sanitize(&config.name);
                answer.tools.iter().map(|t| format!("{server}_{}", sanitize(t))).collect()
            }
            _ => Vec::new(),
        };
        let fate = if fate == McpFate::Included && !tools.is_empty() && all_disabled(db, ws, &agent, &tools) {
            McpFate::AllToolsDenied
        } else {
            fate
        };
        facts.push(McpServerFact { config: config.clone(), state, tools, fate });
    }
    Ok(facts)
}

/// Whether the agent's permissions disable every one of `tools` (G6; a run has no session
/// permissions to merge in). An unknown agent disables nothing: assembly reports it.
fn all_disabled(db: &dyn Db, ws: Workspace, agent: &str, tools: &[String]) -> bool {
    let Ok(agents) = agents(db, ws) else { return false };
    agents.get(agent).is_some_and(|agent| tools.iter().all(|tool| agent.permission.is_tool_disabled(tool)))
}

/// B4: the MCP block for `agent`, when some connected server has instructions and is not
/// fully denied.
#[salsa::tracked(returns(ref))]
pub fn mcp_block(db: &dyn Db, ws: Workspace, agent: String) -> Option<Block> {
    let facts = mcp_facts(db, ws, agent).as_ref().ok()?;
    let mut included: Vec<(&str, &str)> = facts
        .iter()
        .filter(|f| f.fate == McpFate::Included)
        .filter_map(|f| match &f.state {
            McpState::Connected(McpAnswer { instructions: Some(text), .. }) => {
                Some((f.config.name.as_str(), text.trim()))
            }
            _ => None,
        })
        .collect();
    if included.is_empty() {
        return None;
    }
    included.sort_by(|a, b| locale_compare(a.0, b.0));
    let mut lines = vec!["<mcp_instructions>".to_owned()];
    for (name, instructions) in &included {
        lines.push(format!("  <server name=\"{name}\">"));
        lines.extend(instructions.split('\n').map(|line| format!("    {line}")));
        lines.push("  </server>".to_owned());
    }
    lines.push("</mcp_instructions>".to_owned());
    Some(Block::new(
        BlockKind::Mcp,
        lines.join("\n"),
        "B4",
        format!("instructions of {} connected MCP server(s)", included.len()),
    ))
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn tool_names_are_sanitized_per_utf16_unit() {
        assert_eq!(sanitize("my.server"), "my_server");
        assert_eq!(sanitize("a-b_c9"), "a-b_c9");
        assert_eq!(sanitize("é😀"), "___");
    }
}
