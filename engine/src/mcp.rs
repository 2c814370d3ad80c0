//! The MCP connector: asks each configured server for its initialize result and tool list
//! (B4), with the official Rust SDK (rmcp) as client. Results become
//! [`McpServer`](ctxgraph_db::mcp::McpServer) inputs, one per server config.
//!
//! As opencode 1.18.33 does: a local server is its `command` spawned in its `cwd` with the
//! process environment plus `environment` (and `BUN_BE_BUN=1` when the command is
//! `opencode` itself); a remote one is streamable HTTP with `headers`; the server's
//! `timeout` (default 30 s) bounds the handshake and each page of the tool list; the tool
//! list stops at 1000 pages or a repeated cursor. Every failure is a value: the server is
//! left out, as opencode leaves it out. opencode falls back to the legacy SSE transport
//! when streamable HTTP fails; rmcp no longer has an SSE client, so such servers fail here.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ctxgraph_db::mcp::{McpAnswer, McpFailure, McpRequest, McpState, McpTransport};
use rmcp::model::{PaginatedRequestParams, ServerCapabilities};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceError, ServiceExt};

use crate::remote::FetcherError;

/// opencode's cap on tool-list pages.
const MAX_PAGES: usize = 1000;

/// Connects to MCP servers. Cheap to clone; one per process is enough.
#[derive(Clone, Debug)]
pub struct McpConnector {
    http: reqwest::Client,
}

impl McpConnector {
    /// A connector with its own HTTP client (rustls) for remote servers.
    pub fn new() -> Result<Self, FetcherError> {
        // rustls needs a process-wide crypto provider; an error means one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(concat!("ctxgraph/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| FetcherError::from_message(err.to_string()))?;
        Ok(Self { http })
    }

    /// Asks every server at once (opencode connects to all of them concurrently), spawning
    /// local ones with `env` as the process environment; states in input order.
    pub async fn connect_all(
        &self,
        requests: &[McpRequest],
        env: &BTreeMap<String, String>,
    ) -> Vec<McpState> {
        let env = Arc::new(env.clone());
        let mut tasks = tokio::task::JoinSet::new();
        for (index, request) in requests.iter().enumerate() {
            let (connector, request, env) = (self.clone(), request.clone(), Arc::clone(&env));
            tasks.spawn(async move { (index, connector.connect(&request, &env).await) });
        }
        let mut states = vec![McpState::Pending; requests.len()];
        while let Some(joined) = tasks.join_next().await {
            // A panic inside rmcp must not take the build down: that server stays pending
            // and is reported as not connected.
            if let Ok((index, state)) = joined {
                states[index] = state;
            }
        }
        states
    }

    /// One server: its instructions and tool names, or why it cannot be used.
    pub async fn connect(&self, request: &McpRequest, env: &BTreeMap<String, String>) -> McpState {
        let timeout = Duration::from_millis(request.timeout_ms);
        let client = match &request.transport {
            McpTransport::Local { command, cwd, environment } => {
                let Some((program, args)) = command.split_first() else {
                    return McpState::Failed(McpFailure::Spawn("the command is empty".to_owned()));
                };
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).current_dir(cwd).env_clear().envs(env.iter());
                if program == "opencode" {
                    cmd.env("BUN_BE_BUN", "1");
                }
                cmd.envs(environment.iter()).kill_on_drop(true);
                // The server's stderr is not read (opencode pipes it and ignores it);
                // /dev/null keeps a chatty server from blocking on a full pipe.
                let transport = match TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn() {
                    Ok((transport, _)) => transport,
                    Err(err) => return McpState::Failed(McpFailure::Spawn(format!("{program}: {err}"))),
                };
                initialize(().serve(transport), request.timeout_ms, timeout).await
            }
            McpTransport::Remote { url, headers } => {
                if reqwest::Url::parse(url).is_err() {
                    return McpState::Failed(McpFailure::InvalidConfig(format!("invalid MCP URL {url:?}")));
                }
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let parsed = (
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                        reqwest::header::HeaderValue::from_str(value),
                    );
                    let (Ok(name), Ok(value)) = parsed else {
                        return McpState::Failed(McpFailure::InvalidConfig(format!(
                            "header {name:?} cannot be sent over HTTP"
                        )));
                    };
                    custom.insert(name, value);
                }
                let config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let transport = StreamableHttpClientTransport::with_client(self.http.clone(), config);
                initialize(().serve(transport), request.timeout_ms, timeout).await
            }
        };
        let client = match client {
            Ok(client) => client,
            Err(failure) => return McpState::Failed(failure),
        };
        let state = answer(&client, request.timeout_ms, timeout).await;
        // Shutting down closes the transport; a local child is killed on drop in any case.
        let _ = tokio::time::timeout(Duration::from_secs(1), client.cancel()).await;
        state
    }
}

async fn initialize<F>(
    serve: F,
    timeout_ms: u64,
    timeout: Duration,
) -> Result<RunningService<RoleClient, ()>, McpFailure>
where
    F: Future<Output = Result<RunningService<RoleClient, ()>, ClientInitializeError>>,
{
    match tokio::time::timeout(timeout, serve).await {
        Err(_) => Err(McpFailure::Timeout { phase: "initialize", after_ms: timeout_ms }),
        Ok(Err(err)) => {
            Err(McpFailure::Protocol(format!("initialize failed: {}", describe_initialize(&err))))
        }
        Ok(Ok(client)) => Ok(client),
    }
}

/// The error without rmcp's transport type names, with its causes (reqwest's own message
/// leaves out "connection refused").
fn describe_initialize(err: &ClientInitializeError) -> String {
    let error: &(dyn std::error::Error + 'static) = match err {
        ClientInitializeError::TransportError { error, .. } => error.error.as_ref(),
        other => other,
    };
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

async fn answer(client: &RunningService<RoleClient, ()>, timeout_ms: u64, timeout: Duration) -> McpState {
    let Some(info) = client.peer_info() else {
        return McpState::Failed(McpFailure::Protocol("no initialize result".to_owned()));
    };
    let instructions = info.instructions.clone();
    let advertises_tools = matches!(&info.capabilities, ServerCapabilities { tools: Some(_), .. });
    let tools = if advertises_tools {
        match list_tools(client, timeout_ms, timeout).await {
            Ok(tools) => tools,
            Err(failure) => return McpState::Failed(failure),
        }
    } else {
        Vec::new()
    };
    McpState::Connected(McpAnswer { instructions, tools })
}

async fn list_tools(
    client: &RunningService<RoleClient, ()>,
    timeout_ms: u64,
    timeout: Duration,
) -> Result<Vec<String>, McpFailure> {
    let mut names = Vec::new();
    let mut cursors = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.clone().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = match tokio::time::timeout(timeout, client.list_tools(params)).await {
            Err(_) => return Err(McpFailure::Timeout { phase: "tools/list", after_ms: timeout_ms }),
            Ok(Err(err)) => {
                return Err(McpFailure::Protocol(format!("tools/list failed: {}", describe(&err))));
            }
            Ok(Ok(page)) => page,
        };
        names.extend(page.tools.into_iter().map(|tool| tool.name.into_owned()));
        match page.next_cursor {
            None => return Ok(names),
            Some(next) if !cursors.insert(next.clone()) => {
                return Err(McpFailure::Protocol(format!("tools/list returned the cursor {next:?} twice")));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(McpFailure::Protocol(format!("tools/list has more than {MAX_PAGES} pages")))
}

fn describe(err: &ServiceError) -> String {
    match err {
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        other => other.to_string(),
    }
}

impl crate::Engine {
    /// The servers `agent` connects to at start ([`Profile::mcp_servers`]: opencode's
    /// configured `mcp` entries, Claude Code's `.mcp.json`) whose answer the engine does not
    /// have yet, by name: a server config already answered is never asked again (`serve`
    /// reconnects only servers whose config changed or that are new).
    ///
    /// [`Profile::mcp_servers`]: ctxgraph_db::profile::Profile::mcp_servers
    pub fn pending_agent_mcp(
        &self,
        ws: ctxgraph_db::Workspace,
        agent: ctxgraph_db::agent::Agent,
    ) -> Vec<(String, McpRequest)> {
        use ctxgraph_db::Db as _;
        let mut pending: Vec<(String, McpRequest)> = Vec::new();
        for (name, request) in crate::profiles::profile(agent).mcp_servers(&self.db, ws) {
            if *self.db.remotes().mcp().get(&self.db, &request).state(&self.db) == McpState::Pending
                && !pending.iter().any(|(_, r)| *r == request)
            {
                pending.push((name, request));
            }
        }
        pending
    }

    /// Connects `agent`'s pending servers ([`crate::Engine::pending_agent_mcp`]) at once and
    /// sets the inputs; each one's name and state. Local servers are spawned with the
    /// workspace's environment (the `Host` input), as the agent spawns them with its own.
    pub async fn load_agent_mcp(
        &mut self,
        ws: ctxgraph_db::Workspace,
        agent: ctxgraph_db::agent::Agent,
        connector: &McpConnector,
    ) -> Vec<(String, McpState)> {
        let pending = self.pending_agent_mcp(ws, agent);
        self.connect_pending(ws, pending, connector).await
    }

    /// Connects `pending` (what [`crate::Engine::pending_agent_mcp`] answered, so a caller
    /// that looked already does not look again) and sets the inputs.
    pub(crate) async fn connect_pending(
        &mut self,
        ws: ctxgraph_db::Workspace,
        pending: Vec<(String, McpRequest)>,
        connector: &McpConnector,
    ) -> Vec<(String, McpState)> {
        if pending.is_empty() {
            return Vec::new();
        }
        let env = ws.host(&self.db).vars(&self.db).clone();
        let requests: Vec<McpRequest> = pending.iter().map(|(_, r)| r.clone()).collect();
        let states = connector.connect_all(&requests, &env).await;
        self.set_mcp_states(requests.into_iter().zip(states.iter().cloned()));
        pending.into_iter().map(|(name, _)| name).zip(states).collect()
    }

    /// [`crate::Engine::load_agent_mcp`] on a runtime of its own, for callers without one;
    /// no runtime when no server is pending (`serve` asks on every request).
    pub fn fetch_agent_mcp(
        &mut self,
        ws: ctxgraph_db::Workspace,
        agent: ctxgraph_db::agent::Agent,
        connector: &McpConnector,
    ) -> Result<Vec<(String, McpState)>, crate::EngineError> {
        let pending = self.pending_agent_mcp(ws, agent);
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        Ok(crate::current_thread_runtime()?.block_on(self.connect_pending(ws, pending, connector)))
    }

    /// Sets servers' answers, touching only those that changed.
    pub fn set_mcp_states(&mut self, states: impl IntoIterator<Item = (McpRequest, McpState)>) {
        use ctxgraph_db::Db as _;
        use salsa::Setter as _;
        for (request, state) in states {
            let server = self.db.remotes().mcp().get(&self.db, &request);
            if *server.state(&self.db) != state {
                server.set_state(&mut self.db).to(state);
            }
        }
    }
}
