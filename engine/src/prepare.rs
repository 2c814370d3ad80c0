//! [`Engine::prepare_agent`]: everything an agent's answer waits on outside the file
//! system, loaded in one documented step, with what went wrong as data.
//!
//! What waits on what is the profile's to say ([`Profile::waits_on`]). For a profile that
//! reads opencode's config, in opencode's order: the remote org config its auth store names
//! (R1–R4, before anything reads the config), then the `instructions` URLs and `skills.urls`
//! documents (I8, B5.10); then, for any agent, the MCP servers its profile names (opencode's
//! B4, Claude Code's CC22). Each is asked only when needed, so an answer that waits on none of
//! them prepares without starting a runtime. The CLI, `serve`, `watch`, `check` and `mcp` all
//! prepare through here; an embedding host calls [`Engine::load_agent`] from its own runtime.
//!
//! [`Profile::waits_on`]: ctxgraph_db::profile::Profile::waits_on

use std::fmt;

use ctxgraph_db::Workspace;
use ctxgraph_db::agent::Agent;
use ctxgraph_db::mcp::McpState;
use ctxgraph_db::profile::Section;
use ctxgraph_db::remote::{LoadedFrom, RemoteState};

use crate::mcp::McpConnector;
use crate::remote::{FetchOptions, Fetcher};

use crate::{Engine, EngineError};

/// What to load.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// How documents are fetched (timeouts, cache, offline, strict).
    pub fetch: FetchOptions,
    /// Fetch the `instructions` URLs and skills documents (the remote config is always
    /// fetched: opencode will not start without it).
    pub remote: bool,
    /// Connect to the MCP servers the agent's profile names.
    pub mcp: bool,
}

impl Policy {
    /// Everything: the remote config, remote rules and MCP servers.
    pub fn everything(fetch: FetchOptions) -> Self {
        Policy { fetch, remote: true, mcp: true }
    }

    /// Only what reading the config needs: the remote org config.
    pub fn config_only(fetch: FetchOptions) -> Self {
        Policy { fetch, remote: false, mcp: false }
    }
}

/// Something that did not load. The build goes on without it, as opencode's does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// A remote `instructions` URL failed: no block for it.
    RemoteFailed {
        /// The URL as written in the config (a `{env:}` token stays a token).
        url: String,
        /// What went wrong.
        failure: String,
        /// What opencode does instead.
        instead: String,
    },
    /// A remote URL failed and its last cached copy is used.
    RemoteStale {
        /// The URL as written in the config.
        url: String,
        /// What went wrong.
        failure: String,
    },
    /// An MCP server failed: opencode leaves it out, and so does the build.
    McpFailed {
        /// The server's name in the config.
        server: String,
        /// What went wrong.
        failure: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::RemoteFailed { url, failure, instead } => {
                write!(f, "{url}: {failure}; no block for it; {instead}")
            }
            Warning::RemoteStale { url, failure } => write!(
                f,
                "{url}: {failure}; using the last cached copy (opencode would drop it; --strict to do the same)"
            ),
            Warning::McpFailed { server, failure } => {
                write!(f, "MCP server {server:?}: {failure}; left out, as the agent leaves it out")
            }
        }
    }
}

/// What [`Engine::prepare_agent`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// What did not load, in the order it was asked.
    pub warnings: Vec<Warning>,
}

impl Prepared {
    /// `--strict`: an error naming every remote URL that could not be loaded, if any.
    pub fn strict(&self) -> Result<(), EngineError> {
        let urls: Vec<String> = self
            .warnings
            .iter()
            .filter_map(|w| match w {
                Warning::RemoteFailed { url, .. } => Some(url.clone()),
                _ => None,
            })
            .collect();
        if urls.is_empty() { Ok(()) } else { Err(EngineError::RemoteStrict { urls }) }
    }
}

impl Engine {
    /// What `agent`'s layout of `section` waits on outside the file system
    /// ([`Profile::waits_on`]), loaded as `policy` allows, on a runtime of its own (none is
    /// started when nothing is to load). A profile that waits on nothing prepares nothing:
    /// another agent's broken `opencode.json` is not its concern, and no other agent's MCP
    /// server is started for it. What did not load is in the warnings; `--strict` callers
    /// ask [`Prepared::strict`] after showing them.
    ///
    /// [`Profile::waits_on`]: ctxgraph_db::profile::Profile::waits_on
    pub fn prepare_agent(
        &mut self,
        ws: Workspace,
        agent: Agent,
        section: Section,
        policy: &Policy,
    ) -> Result<Prepared, EngineError> {
        let waits = crate::profiles::profile(agent).waits_on(section);
        let needs_config = waits.reads_config()
            && (!self.config_requests(ws).is_empty()
                || (policy.remote && waits.remote_documents && !self.remote_urls(ws)?.is_empty()));
        let needs_mcp = policy.mcp && waits.mcp && !self.pending_agent_mcp(ws, agent).is_empty();
        if !(needs_config || needs_mcp) {
            return Ok(Prepared::default());
        }
        crate::current_thread_runtime()?.block_on(self.load_agent(ws, agent, section, policy))
    }

    /// [`Engine::prepare_agent`] for a host that has its own runtime: the config's remote
    /// documents (for a profile that reads that config), then the agent's MCP servers
    /// ([`Profile::mcp_servers`]).
    ///
    /// [`Profile::mcp_servers`]: ctxgraph_db::profile::Profile::mcp_servers
    pub async fn load_agent(
        &mut self,
        ws: Workspace,
        agent: Agent,
        section: Section,
        policy: &Policy,
    ) -> Result<Prepared, EngineError> {
        let waits = crate::profiles::profile(agent).waits_on(section);
        let mut prepared = Prepared::default();
        if waits.reads_config() {
            let fetcher = Fetcher::new(policy.fetch.clone())?;
            prepared = self.load_through(ws, &fetcher, policy.remote && waits.remote_documents).await?;
        }
        let pending = if policy.mcp && waits.mcp { self.pending_agent_mcp(ws, agent) } else { Vec::new() };
        if !pending.is_empty() {
            let connector = McpConnector::new()?;
            for (server, state) in self.connect_pending(ws, pending, &connector).await {
                if let McpState::Failed(failure) = state {
                    prepared.warnings.push(Warning::McpFailed { server, failure: failure.to_string() });
                }
            }
        }
        Ok(prepared)
    }

    /// The one sequence behind [`Engine::load_agent`] and [`crate::RemoteRefresh`] for what
    /// a workspace's config names: the config, then (with `remote`) the remote documents.
    pub(crate) async fn load_through(
        &mut self,
        ws: Workspace,
        fetcher: &Fetcher,
        remote: bool,
    ) -> Result<Prepared, EngineError> {
        self.load_config(ws, fetcher).await;
        let mut prepared = Prepared::default();
        if remote && !self.remote_urls(ws)?.is_empty() {
            // Each URL is named as written in the config: a `{env:}` token, not its value.
            let shown: std::collections::HashMap<String, String> =
                self.system_paths(ws)?.remote.iter().map(|r| (r.url.clone(), r.shown.clone())).collect();
            for (url, state) in self.load_remote(ws, fetcher).await? {
                let url = shown.get(&url).cloned().unwrap_or(url);
                match state {
                    RemoteState::Failed(failure) => {
                        prepared.warnings.push(Warning::RemoteFailed {
                            url,
                            instead: failure.what_opencode_does().to_owned(),
                            failure: failure.to_string(),
                        });
                    }
                    RemoteState::Loaded { from: LoadedFrom::Cache { because: Some(failure) }, .. } => {
                        prepared.warnings.push(Warning::RemoteStale { url, failure: failure.to_string() });
                    }
                    RemoteState::Loaded { .. } | RemoteState::Pending => {}
                }
            }
        }
        Ok(prepared)
    }
}
