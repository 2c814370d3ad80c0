//! Remote documents for long-lived hosts (`serve`, `watch`).
//!
//! opencode loads the remote org config once per instance and re-fetches every
//! `instructions` URL on every model step. A warm host cannot pay a network round trip per
//! turn and still answer in microseconds, so it fetches a workspace's documents when the
//! workspace is first used and refreshes the URLs at most once per interval; between
//! refreshes the last fetched state (or cached copy) is what builds see.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ctxgraph_db::Workspace;

use crate::mcp::McpConnector;
use crate::remote::Fetcher;
use crate::{Engine, EngineError};

/// Keeps the remote documents of the workspaces a long-lived host serves loaded, refreshing
/// each at most once per interval.
#[derive(Debug)]
pub struct RemoteRefresh {
    fetcher: Fetcher,
    /// Connects to MCP servers whose config is new or changed (never on a timer: opencode
    /// connects once per instance); `None` when MCP is off.
    mcp: Option<McpConnector>,
    interval: Duration,
    fetched_at: HashMap<Workspace, Instant>,
}

impl RemoteRefresh {
    /// Refreshes through `fetcher`, at most once per `interval` per workspace.
    pub fn new(fetcher: Fetcher, interval: Duration) -> Self {
        Self { fetcher, mcp: None, interval, fetched_at: HashMap::new() }
    }

    /// Also connects the MCP servers an answer waits on ([`RemoteRefresh::connect_agent_mcp`]).
    #[must_use]
    pub fn with_mcp(mut self, connector: McpConnector) -> Self {
        self.mcp = Some(connector);
        self
    }

    /// Loads what `ws` needs from the network, unless it did so less than an interval ago.
    /// Failures end up in the inputs (and so in the build's error or missing block).
    pub fn refresh(&mut self, engine: &mut Engine, ws: Workspace) -> Result<(), EngineError> {
        // This runs on every request: a runtime is started only when something is to load
        // (a config request appears when the auth store changes; the URLs are due). The
        // sequence is the one `Engine::load_agent` runs for a profile that reads the config.
        let due = self.fetched_at.get(&ws).is_none_or(|at| at.elapsed() >= self.interval);
        // A config that cannot be read names no URL and no server here: the question that
        // reads it (opencode's build) says what is wrong and where; another agent's question
        // must not fail on it.
        let needs = !engine.config_requests(ws).is_empty()
            || (due && engine.remote_urls(ws).is_ok_and(|urls| !urls.is_empty()));
        if needs {
            // A long-lived host reports failures through the inputs (a missing block, the
            // build's error), not as warnings, and never refuses to serve (no strict).
            let load = engine.load_through(ws, &self.fetcher, due);
            match crate::current_thread_runtime()?.block_on(load) {
                Ok(_) | Err(EngineError::Build(_)) => {}
                Err(err) => return Err(err),
            }
        }
        if due {
            self.fetched_at.insert(ws, Instant::now());
        }
        Ok(())
    }

    /// Connects the MCP servers `agent`'s profile names for `ws` ([`Engine::pending_agent_mcp`]:
    /// opencode's `mcp` entries, Claude Code's `.mcp.json`) when its `section` waits on them
    /// and MCP is on: once per server config, so a config change or a new server reconnects
    /// only that server, and no agent's servers are started for another agent's question.
    pub fn connect_agent_mcp(
        &mut self,
        engine: &mut Engine,
        ws: Workspace,
        agent: ctxgraph_db::agent::Agent,
        section: ctxgraph_db::profile::Section,
    ) -> Result<(), EngineError> {
        if let Some(connector) = &self.mcp
            && crate::profiles::profile(agent).waits_on(section).mcp
        {
            // No runtime when nothing is pending; failures end up in the inputs: the layout
            // lists a server that failed as left out.
            engine.fetch_agent_mcp(ws, agent, connector)?;
        }
        Ok(())
    }
}
