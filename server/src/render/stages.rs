//! explain's references (B3) and MCP (B4) sections: each configured reference and server,
//! in config order, in or out and why (the sentences come from the queries).

use std::fmt::Write as _;

use ctxgraph_engine::answers::stages::{
    Connect, McpFate, McpServerFact, McpState, McpTransport, ReferenceFate, References,
};
use schemars::JsonSchema;
use serde::Serialize;

/// Both sections as JSON (`references`, `mcp` beside explain's other keys).
#[derive(Serialize, JsonSchema)]
pub struct StagesView {
    /// B3: each configured reference, in config order (left out when there is none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<ReferenceView>,
    /// B4: the MCP servers configured for the agent (left out when there is none).
    #[serde(skip_serializing_if = "McpView::is_empty")]
    mcp: McpView,
}

/// One configured reference (B3): listed in the prompt or not, and why.
#[derive(Serialize, JsonSchema)]
struct ReferenceView {
    /// Its name in the config.
    name: String,
    /// The path it names.
    path: String,
    /// The repository it is in, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<String>,
    /// Its description, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// The config file it is configured in.
    source: String,
    /// 1-based line of its entry there.
    line: Option<usize>,
    /// 1-based column of its entry there.
    column: Option<usize>,
    /// It is listed in the system prompt.
    in_prompt: bool,
    /// What became of it, as one snake-case word.
    fate: &'static str,
    /// Why, in one sentence.
    why: String,
}

/// The MCP servers of one agent (B4).
#[derive(Serialize, JsonSchema)]
struct McpView {
    /// The opencode agent whose servers these are.
    agent: String,
    /// Each server, in config order.
    servers: Vec<ServerView>,
}

impl McpView {
    fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

/// One configured MCP server (B4): its instructions in the prompt or not, and why.
#[derive(Serialize, JsonSchema)]
struct ServerView {
    /// Its name in the config.
    name: String,
    /// `local` or `remote`, when it is connected to.
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<&'static str>,
    /// The config file it is configured in.
    source: String,
    /// 1-based line of its entry there.
    line: Option<usize>,
    /// 1-based column of its entry there.
    column: Option<usize>,
    /// Its instructions are in the system prompt.
    in_prompt: bool,
    /// What became of it, as one snake-case word.
    fate: &'static str,
    /// Why connecting failed, as one snake-case word, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'static str>,
    /// Why, in one sentence.
    why: String,
    /// Bytes of the (untrimmed) instructions the server sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions_bytes: Option<usize>,
    /// The tools it lists.
    tools: Vec<String>,
}

impl StagesView {
    /// The references and MCP sections of `agent`'s explain, from the facts discovery
    /// returned: each reference and server with its fate and, when it failed, why.
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
