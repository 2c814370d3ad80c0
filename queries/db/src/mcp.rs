//! MCP servers' answers as inputs.
//!
//! Queries say which servers the config names ([`McpRequest`], one per server config) and
//! read an [`McpServer`] input per request; the engine connects, asks for the initialize
//! result and the tool list, and sets the input. No query ever waits on a server, and a
//! server is asked again only when its config (the request) changes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::Db;

pub use inputs::McpServer;

// salsa's input macro generates public constructors that cannot carry doc comments.
#[allow(missing_docs)]
mod inputs {
    use super::{McpRequest, McpState};

    /// One MCP server config: what the engine last learned from the server.
    #[salsa::input(debug)]
    pub struct McpServer {
        /// How to reach the server; the same config always maps to the same input.
        #[returns(ref)]
        pub request: McpRequest,
        /// Pending until the engine's connection settles.
        #[returns(ref)]
        pub state: McpState,
    }
}

/// How to reach one server, and how long to wait for each answer: everything of a server
/// config that can change what it answers. The server's name is not part of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpRequest {
    /// Local (a command over stdio) or remote (streamable HTTP).
    pub transport: McpTransport,
    /// opencode's `timeout` (ms): for the initialize handshake, and again for each page of
    /// the tool list.
    pub timeout_ms: u64,
}

/// The two kinds of server opencode connects to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum McpTransport {
    /// `type: "local"`: spawn `command` in `cwd` with the process environment plus
    /// `environment`, and speak JSON-RPC over its stdin and stdout.
    Local {
        /// The program and its arguments.
        command: Vec<String>,
        /// The working directory (the instance directory, or `cwd` resolved from it).
        cwd: PathBuf,
        /// Variables added to (or replacing) the process environment.
        environment: BTreeMap<String, String>,
    },
    /// `type: "remote"`: streamable HTTP to `url` with `headers` on every request.
    Remote {
        /// The endpoint.
        url: String,
        /// Name and value pairs, in config order.
        headers: Vec<(String, String)>,
    },
}

/// What the engine knows about one server.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum McpState {
    /// Not connected: MCP is off (`--no-mcp`, a `check` scenario without `mcp = true`) or
    /// the connection has not been made yet. A pending server produces nothing.
    Pending,
    /// Initialized and listed its tools.
    Connected(McpAnswer),
    /// Could not be used; opencode leaves such a server out too.
    Failed(McpFailure),
}

/// What a connected server said.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpAnswer {
    /// The initialize result's `instructions`, as sent (untrimmed).
    pub instructions: Option<String>,
    /// The names of the tools it lists (none when it does not advertise the capability).
    pub tools: Vec<String>,
}

/// Why a server could not be used.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum McpFailure {
    /// The command could not be started (not found, not executable, empty).
    Spawn(String),
    /// No answer within the server's timeout.
    Timeout {
        /// `"initialize"` or `"tools/list"`.
        phase: &'static str,
        /// The timeout that expired.
        after_ms: u64,
    },
    /// The server broke the protocol, closed the connection, or answered with an error
    /// (a crash at start-up ends here).
    Protocol(String),
    /// The remote URL is not a valid URL, or a header cannot be sent.
    InvalidConfig(String),
}

impl std::fmt::Display for McpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpFailure::Spawn(reason) => write!(f, "could not start the command: {reason}"),
            McpFailure::Timeout { phase, after_ms } => {
                write!(f, "no answer to {phase} within {after_ms} ms")
            }
            McpFailure::Protocol(reason) => write!(f, "{reason}"),
            McpFailure::InvalidConfig(reason) => write!(f, "{reason}"),
        }
    }
}

impl McpFailure {
    /// A stable machine-readable name, for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            McpFailure::Spawn(_) => "spawn",
            McpFailure::Timeout { .. } => "timeout",
            McpFailure::Protocol(_) => "protocol",
            McpFailure::InvalidConfig(_) => "invalid-config",
        }
    }
}

/// The side table from requests to [`McpServer`] inputs (held by
/// [`RemoteDocs`](crate::remote::RemoteDocs), with the other network inputs).
#[derive(Debug, Default)]
pub struct McpServers {
    by_request: dashmap::DashMap<McpRequest, McpServer>,
}

impl McpServers {
    /// The input for `request`, created [`McpState::Pending`] if it is new.
    pub fn get(&self, db: &dyn Db, request: &McpRequest) -> McpServer {
        if let Some(server) = self.by_request.get(request) {
            return *server;
        }
        *self
            .by_request
            .entry(request.clone())
            .or_insert_with(|| McpServer::new(db, request.clone(), McpState::Pending))
    }
}
