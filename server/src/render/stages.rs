//! explain's references (B3) and MCP (B4) sections: each configured reference and server,
//! in config order, in or out and why (the sentences come from the queries).

use std::fmt::Write as _;

use ctxgraph_engine::answers::stages::{
    Connect, McpFate, McpServerFact, McpState, McpTransport, ReferenceFate, References,
};
use serde::Serialize;

/// Both sections as JSON (`references`, `mcp` beside explain's other keys).
#[derive(Serialize)]
pub struct StagesView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<ReferenceView>,
    #[serde(skip_serializing_if = "McpView::is_empty")]
    mcp: McpView,
}

#[derive(Serialize)]
struct ReferenceView {
    name: String,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    source: String,
    line: Option<usize>,
    column: Option<usize>,
    in_prompt: bool,
    fate: &'static str,
    why: String,
}

#[derive(Serialize)]
struct McpView {
    agent: String,
    servers: Vec<ServerView>,
}

impl McpView {
    fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

#[derive(Serialize)]
struct ServerView {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<&'static str>,
    source: String,
    line: Option<usize>,
    column: Option<usize>,
    in_prompt: bool,
    fate: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
    why: String,
    /// Bytes of the (untrimmed) instructions the server sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions_bytes: Option<usize>,
    tools: Vec<String>,
}

impl StagesView {
    pub fn new(references: &References, agent: &str, servers: &[McpServerFact]) -> Self {
        StagesView {
            references: references
                .entries
                .iter()
                .map(|r| ReferenceView {
                    name: r.name.clone(),
                    path: r.path.clone(),
                    repository: r.repository.clone(),
                    description: r.description.clone(),
                    source: r.source.name(),
                    line: r.at.map(|at| at.line),
                    column: r.at.map(|at| at.column),
                    in_prompt: r.fate == ReferenceFate::Listed,
                    fate: r.fate.code(),
                    why: r.fate.describe(),
                })
                .collect(),
            mcp: McpView { agent: agent.to_owned(), servers: servers.iter().map(server_view).collect() },
        }
    }
}

fn server_view(fact: &McpServerFact) -> ServerView {
    let transport = match &fact.config.connect {
        Connect::Yes(request) => Some(match request.transport {
            McpTransport::Local { .. } => "local",
            McpTransport::Remote { .. } => "remote",
        }),
        _ => None,
    };
    let instructions_bytes = match &fact.state {
        McpState::Connected(answer) => answer.instructions.as_ref().map(String::len),
        _ => None,
    };
    ServerView {
        name: fact.config.name.clone(),
        transport,
        source: fact.config.source.name(),
        line: fact.config.at.map(|at| at.line),
        column: fact.config.at.map(|at| at.column),
        in_prompt: fact.fate == McpFate::Included,
        fate: fact.fate.code(),
        failure: match &fact.fate {
            McpFate::Failed(failure) => Some(failure.code()),
            _ => None,
        },
        why: fact.fate.describe(),
        instructions_bytes,
        tools: fact.tools.clone(),
    }
}

/// Both sections as text; empty when nothing is configured.
pub fn text(references: &References, agent: &str, servers: &[McpServerFact]) -> String {
    let mut out = String::new();
    let at = |source: String, at: Option<ctxgraph_engine::answers::stages::LineColumn>| match at {
        Some(at) => format!("{source}:{}:{}", at.line, at.column),
        None => source,
    };
    if !references.entries.is_empty() {
        let _ = writeln!(out, "\nreferences (B3):");
        for r in &references.entries {
            let mark = if r.fate == ReferenceFate::Listed { "+" } else { "-" };
            let _ = writeln!(out, "  {mark} {} ({})", r.name, at(r.source.name(), r.at));
            if !r.path.is_empty() {
                let _ = writeln!(out, "      path {}", r.path);
            }
            let _ = writeln!(out, "      {}", r.fate.describe());
        }
    }
    if !servers.is_empty() {
        let _ = writeln!(out, "\nMCP servers (B4, agent {agent}):");
        for fact in servers {
            let mark = if fact.fate == McpFate::Included { "+" } else { "-" };
            let _ = writeln!(
                out,
                "  {mark} {} ({})",
                fact.config.name,
                at(fact.config.source.name(), fact.config.at)
            );
            let _ = writeln!(out, "      {}", fact.fate.describe());
            if !fact.tools.is_empty() {
                let _ = writeln!(out, "      tools: {}", fact.tools.join(", "));
            }
        }
    }
    out
}
