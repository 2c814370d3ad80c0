//! `ctxgraph mcp`: the workspace memory and the assembled context as Model Context Protocol
//! tools over stdio, so any MCP client (Claude Code, Codex, Cursor, opencode) can use them.
//!
//! The protocol is the official SDK's (`rmcp`); this module only maps tool calls to the
//! operations of [`crate::ops::Host`], the ones `ctxgraph serve`'s methods call. The engine lives on one worker thread: the
//! database is not shared between threads, and its calls block (file reads, the store's
//! lock, remote fetches with their own runtime), which must not stall the protocol's.
//! Before each call the engine re-checks every path it knows, so a fact another session
//! wrote a moment ago is seen, exactly as a fresh `ctxgraph` process would see it.
//! Lines reach `rmcp` through `lines`, which answers those it cannot read as `ctxgraph
//! serve` does.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use ctxgraph_engine::remote::FetchOptions;
use ctxgraph_engine::{ChangeEvent, Engine, EngineError, HostEnv, OsSystem, RemoteRefresh, Workspace};
use rmcp::handler::server::common::{FromContextPart, schema_for_input, schema_for_type};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::service::ServerInitializeError;
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::ops::{Host, OpError};
use crate::protocol::{
    BuildParams, ConfigParams, ExplainParams, ForgetParams, LintParams, NearbyReply, RecallParams,
    RememberParams, SessionAppendParams, SessionCompactParams, SessionExplainParams, SessionOpenParams,
    SessionParams, SessionRulesParams,
};
use crate::render;

mod lines;

/// What a tool call answers: text for the model, or a message for a tool error.
type Answer = Result<String, String>;

/// A tool's arguments, or why they do not fit its schema. Malformed arguments are a tool
/// error the model can read and correct (MCP: input validation errors are tool execution
/// errors), not a protocol error; `rmcp`'s own `Parameters` makes them the latter.
struct Args<T>(Result<T, String>);

impl<'a, S, T: for<'de> Deserialize<'de>> FromContextPart<ToolCallContext<'a, S>> for Args<T> {
    fn from_context_part(context: &mut ToolCallContext<'a, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        Ok(Args(
            serde_json::from_value(serde_json::Value::Object(arguments))
                .map_err(|e| format!("invalid arguments: {e}")),
        ))
    }
}

/// A tool's input schema, as `rmcp` derives it for its own `Parameters` (the type's
/// title and doc comment dropped: the tool's description says it).
fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|_| schema_for_type::<T>())
}

/// `context_build`'s arguments: `build`'s, in the served workspace.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BuildArgs {
    /// Whose context, by its `--agent` name (default opencode: its system prompt).
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::agent_name")]
    agent: Option<String>,
    /// opencode's: the model whose prompt to build, as `provider/model` (default: the
    /// config's).
    #[serde(default)]
    model: Option<String>,
    /// Which part of what the agent sends (`build --section`): `system` (its rules text, the
    /// default), or a section its profile builds (opencode's `environment`,
    /// `instructions`, `message`; Claude Code's and Codex's `request`).
    #[serde(default)]
    section: Option<crate::protocol::SectionParam>,
    /// The agent's own settings as `KEY=VALUE` (`build -c`).
    #[serde(default)]
    settings: Vec<String>,
}

/// `context_explain`'s arguments: `explain`'s, and how to print the answer.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExplainArgs {
    /// A rule file, `instructions` entry or URL to explain (paths relative to the
    /// workspace); default: everything.
    #[serde(default)]
    target: Option<String>,
    /// Whose reasons, by `--agent` name, or `all` (with `target`: every agent side by side);
    /// default opencode.
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::agent_name_or_all")]
    agent: Option<String>,
    /// `text` (default) or `json`.
    #[serde(default)]
    format: Option<FormatName>,
}

/// `context_lint`'s arguments: `lint`'s, and how to print the answer.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LintArgs {
    /// Whose rules to check, by `--agent` name, or `all` (with the cross-agent checks
    /// CG012–CG015); default opencode.
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::agent_name_or_all")]
    agent: Option<String>,
    /// The token budget of the whole system text (default 8192).
    #[serde(default)]
    max_total_tokens: Option<usize>,
    /// The token budget of one rule file's block (default 4096).
    #[serde(default)]
    max_rule_tokens: Option<usize>,
    /// `text` (default) or `json`.
    #[serde(default)]
    format: Option<FormatName>,
}

/// `context_nearby`'s arguments: `nearby`'s, in the served workspace.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NearbyArgs {
    /// The file read, relative to the workspace or absolute.
    file: PathBuf,
    /// Whose read, by its `--agent` name (default opencode).
    #[serde(default)]
    #[schemars(schema_with = "crate::protocol::agent_name")]
    agent: Option<String>,
    /// A session opened with `session_open` (opencode's): the read happens in its state
    /// (N2–N7).
    #[serde(default)]
    session: Option<String>,
    /// The assistant message the read belongs to; default: the session's next step.
    #[serde(default)]
    message: Option<String>,
    /// Another agent's own session record (Claude Code's transcript, …), relative to the
    /// workspace or absolute: the read happens at its next step.
    #[serde(default)]
    record: Option<PathBuf>,
    /// `text` (default: exactly what the agent attaches) or `json`.
    #[serde(default)]
    format: Option<FormatName>,
}

#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum FormatName {
    Text,
    Json,
}

/// The engine's side: the operations, in one workspace, kept warm between calls.
struct Worker {
    host: Host,
    cwd: PathBuf,
    ws: Workspace,
    session: Option<String>,
}

type Job = Box<dyn FnOnce(&mut Worker) + Send>;

impl Worker {
    /// Sees every change since the last call (another session's writes, edited rules),
    /// and the remote documents when their refresh is due.
    fn catch_up(&mut self) -> Result<(), String> {
        self.host.engine.apply_changes(&[ChangeEvent::Rescan]);
        self.ws = self.host.workspace(&self.cwd).map_err(|e| e.message().to_owned())?;
        Ok(())
    }

    fn build(&mut self, args: BuildArgs) -> Answer {
        let params = BuildParams {
            cwd: self.cwd.clone(),
            section: args.section,
            settings: args.settings,
            model: args.model,
            opencode_agent: None,
            json_schema: false,
            user_system: None,
            known_hash: None,
            agent: args.agent,
        };
        Ok(self.host.build(params).map_err(op)?.text().to_owned())
    }

    fn explain(&mut self, args: ExplainArgs) -> Answer {
        let params = ExplainParams { target: args.target, agent: args.agent };
        let reply = self.host.explain(self.ws, params).map_err(op)?;
        if args.format == Some(FormatName::Json) {
            return json(&reply);
        }
        Ok(redacted(reply.text()))
    }

    fn lint(&mut self, args: LintArgs) -> Answer {
        let params = LintParams {
            agent: args.agent,
            max_total_tokens: args.max_total_tokens,
            max_rule_tokens: args.max_rule_tokens,
        };
        let reply = self.host.lint(self.ws, params).map_err(op)?;
        if args.format == Some(FormatName::Json) {
            return json(&reply);
        }
        Ok(redacted(render::lint::text(&reply.0)))
    }

    fn nearby(&mut self, args: NearbyArgs) -> Answer {
        let params = crate::protocol::NearbyParams {
            file: args.file,
            cwd: self.cwd.clone(),
            agent: args.agent,
            session: args.session,
            message: args.message,
            record: args.record,
        };
        let reply = NearbyReply(self.host.nearby(params).map_err(op)?);
        if args.format == Some(FormatName::Json) {
            return json(&reply);
        }
        Ok(reply.0.layout.text)
    }
}

fn op(err: OpError) -> String {
    err.message().to_owned()
}

fn message(err: impl Display) -> String {
    err.to_string()
}

/// A reply as the tool's text: its JSON, redacted as `serve`'s replies are (a read's
/// `text` is what the agent sends).
fn json(reply: &impl Serialize) -> Answer {
    crate::rpc::redacted_json(reply, crate::rpc::PROMPT_TEXT).map_err(message)
}

/// A session's messages or summary request: what the agent sends, as it is.
fn sent_json(reply: &impl Serialize) -> Answer {
    crate::rpc::redacted_json(reply, crate::rpc::Verbatim::All).map_err(message)
}

/// A text answer that is not prompt text (an explanation, findings, an error), redacted.
fn redacted(text: String) -> String {
    ctxgraph_engine::secrets::redactor().text(&text).into_owned()
}

/// The MCP side: hands each call to the worker and turns its answer into a tool result.
#[derive(Clone)]
struct Server {
    jobs: mpsc::Sender<Job>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    async fn run<T: Send + 'static>(
        &self,
        args: Args<T>,
        call: impl FnOnce(&mut Worker, T) -> Answer + Send + 'static,
    ) -> CallToolResult {
        let answer = match args.0 {
            Err(invalid) => Err(invalid),
            Ok(args) => {
                let (reply, answer) = oneshot::channel();
                let job: Job = Box::new(move |worker| {
                    let answer = worker.catch_up().and_then(|()| call(worker, args));
                    let _ = reply.send(answer);
                });
                match self.jobs.send(job).await {
                    Ok(()) => {
                        answer.await.unwrap_or_else(|_| Err("internal error: the engine stopped".to_owned()))
                    }
                    Err(_) => Err("internal error: the engine stopped".to_owned()),
                }
            }
        };
        match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(redacted(error))]),
        }
    }
}

/// The tools: each one is the JSON-RPC method of the same name in [`crate::protocol::METHODS`],
/// served by the same [`Host`] operation; JSON answers are the method's reply as JSON text.
#[tool_router]
impl Server {
    #[tool(
        description = "Recall what this workspace's memory holds about a topic: remembered facts, the task handoff, observations from earlier tool runs, tool lessons and related past sessions, ranked by keyword relevance and clamped to a character budget.",
        input_schema = schema::<RecallParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_recall(&self, args: Args<RecallParams>) -> CallToolResult {
        self.run(args, |worker, args| {
            let reply = worker.host.recall(worker.ws, worker.session.as_deref(), args).map_err(op)?;
            Ok(reply.text)
        })
        .await
    }

    #[tool(
        description = "Remember one fact about the user or the project for later sessions in this workspace. Secrets are redacted; an identical active fact is not stored twice; a near-identical one is replaced.",
        input_schema = schema::<RememberParams>(),
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn memory_remember(&self, args: Args<RememberParams>) -> CallToolResult {
        self.run(args, |worker, args| {
            json(&worker.host.remember(worker.ws, worker.session.as_deref(), args).map_err(op)?)
        })
        .await
    }

    #[tool(
        description = "Forget a remembered fact, by id or by a description of it. The fact is marked inactive (never recalled again), not deleted.",
        input_schema = schema::<ForgetParams>(),
        annotations(read_only_hint = false, destructive_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(&self, args: Args<ForgetParams>) -> CallToolResult {
        self.run(args, |worker, args| {
            json(&worker.host.forget(worker.ws, worker.session.as_deref(), args).map_err(op)?)
        })
        .await
    }

    #[tool(
        description = "The exact context a coding agent sends for this workspace, byte for byte: by default opencode's system prompt (rule files, instructions, the environment block, the workspace memory when memory.enabled is set); with `agent` (the names its schema lists), that agent's text.",
        input_schema = schema::<BuildArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_build(&self, args: Args<BuildArgs>) -> CallToolResult {
        self.run(args, Worker::build).await
    }

    #[tool(
        description = "Why each rule file or instruction is (or is not) in an agent's context: opencode's by default (with the memory items recalled or cut and why); with `agent`, that agent's verdict on every file it looked at; with `agent: all` and a `target`, that file in every agent side by side.",
        input_schema = schema::<ExplainArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_explain(&self, args: Args<ExplainArgs>) -> CallToolResult {
        self.run(args, Worker::explain).await
    }

    #[tool(
        description = "What an agent attaches to its context when its model reads a file (opencode's <system-reminder> by default; `agent` names another), as the exact text or as JSON with each block and every rule file left out; an agent that attaches nothing on reads answers with no text. With a session (opencode's), the read in that session's state.",
        input_schema = schema::<NearbyArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_nearby(&self, args: Args<NearbyArgs>) -> CallToolResult {
        self.run(args, Worker::nearby).await
    }

    #[tool(
        description = "Lint findings for this workspace's rule files and config (shadowed files, budgets, broken instructions, secrets …), with hints: opencode's by default, another agent's with `agent`, or every agent's and the cross-agent checks with `agent: all`.",
        input_schema = schema::<LintArgs>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_lint(&self, args: Args<LintArgs>) -> CallToolResult {
        self.run(args, Worker::lint).await
    }

    #[tool(
        description = "An agent's settings for this workspace as JSON (opencode's by default, another agent's with `agent`): the settings in effect, secrets masked (opencode's whole merged config as `opencode debug config` prints it), and every place they come from with what it did.",
        input_schema = schema::<ConfigParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn context_config(&self, args: Args<ConfigParams>) -> CallToolResult {
        self.run(args, |worker, args| json(&worker.host.config(worker.ws, args).map_err(op)?)).await
    }

    #[tool(
        description = "Open an `opencode export` (a file path or the export JSON) as a session the other session tools answer about. Answers the session id and its message count.",
        input_schema = schema::<SessionOpenParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_open(&self, args: Args<SessionOpenParams>) -> CallToolResult {
        self.run(args, |worker, args| json(&worker.host.session_open(args).map_err(op)?)).await
    }

    #[tool(
        description = "Append a message (one entry of an export's `messages`) to an open session, or replace the message with its id.",
        input_schema = schema::<SessionAppendParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_append(&self, args: Args<SessionAppendParams>) -> CallToolResult {
        self.run(args, |worker, args| json(&worker.host.session_append(args).map_err(op)?)).await
    }

    #[tool(
        description = "What opencode does about compaction at an open session's next step: the usable window, whether the last step overflowed, the tail kept, and the summarizer's request.",
        input_schema = schema::<SessionCompactParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_compact(&self, args: Args<SessionCompactParams>) -> CallToolResult {
        self.run(args, |worker, args| sent_json(&worker.host.session_compact(worker.ws, args).map_err(op)?))
            .await
    }

    #[tool(
        description = "The messages of an open session's next model call after the system message, in the chat-completions shape.",
        input_schema = schema::<SessionParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_messages(&self, args: Args<SessionParams>) -> CallToolResult {
        self.run(args, |worker, args| sent_json(&worker.host.session_messages(args).map_err(op)?)).await
    }

    #[tool(
        description = "Why each read of an open session attached the rules it did, and each message's fate at the next compaction.",
        input_schema = schema::<SessionExplainParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_explain(&self, args: Args<SessionExplainParams>) -> CallToolResult {
        self.run(args, |worker, args| json(&worker.host.session_explain(worker.ws, args).map_err(op)?)).await
    }

    #[tool(
        description = "What each rule-like file cost in every request of a recorded session and over the whole session (bytes, o200k tokens), from the agent's own record: a Claude Code transcript, a Codex rollout or an opencode export.",
        input_schema = schema::<SessionRulesParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_rules(&self, args: Args<SessionRulesParams>) -> CallToolResult {
        self.run(args, |worker, args| json(&worker.host.session_rules(worker.ws, args).map_err(op)?)).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ctxgraph", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "ctxgraph: this workspace's memory (recall, remember, forget), the exact context opencode \
                 assembles for it (build, explain, nearby, lint, config), and recorded sessions (open, \
                 append, compact, messages, explain).",
            )
    }
}

/// What `ctxgraph mcp` needs to start.
pub struct Options {
    /// The workspace served (default: the current directory).
    pub cwd: Option<PathBuf>,
    /// The asking opencode session, for memory (docs/memory.md §3.1's session id).
    pub session: Option<String>,
    /// How remote documents are fetched.
    pub fetch: FetchOptions,
    /// How often remote documents are fetched again.
    pub refresh: std::time::Duration,
}

/// Why `ctxgraph mcp` stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The workspace could not be opened, or the fetcher set up.
    Engine(EngineError),
    /// stdin or stdout, or a thread or runtime, failed.
    Io(std::io::Error),
}

impl From<EngineError> for ServeError {
    fn from(err: EngineError) -> Self {
        ServeError::Engine(err)
    }
}

/// Serves MCP on stdin/stdout until the client closes them.
pub fn serve(env: HostEnv, options: Options) -> Result<(), ServeError> {
    let mut engine =
        Engine::new(Arc::new(OsSystem), env).with_clock(Arc::new(ctxgraph_engine::SystemClock::default()));
    let cwd = match options.cwd {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|err| EngineError::WorkingDirectory {
            path: PathBuf::from("."),
            reason: err.to_string(),
        })?,
    };
    // A directory that does not exist is the user's mistake: say so now, not per call.
    let ws = engine.open(&cwd)?;
    let fetcher = ctxgraph_engine::remote::Fetcher::new(options.fetch).map_err(EngineError::from)?;
    let mut host = Host::new(engine);
    host.set_remote(RemoteRefresh::new(fetcher, options.refresh));
    let worker = Worker { host, cwd, ws, session: options.session };
    let (jobs, mut queue) = mpsc::channel::<Job>(16);
    let thread = std::thread::Builder::new()
        .name("ctxgraph-engine".to_owned())
        .spawn(move || {
            let mut worker = worker;
            while let Some(job) = queue.blocking_recv() {
                job(&mut worker);
            }
        })
        .map_err(ServeError::Io)?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ServeError::Io)?;
    let (transport, lines) =
        lines::start(std::io::BufReader::new(std::io::stdin()), std::io::stdout()).map_err(ServeError::Io)?;
    let served = runtime.block_on(async move {
        let server = Server { jobs, tool_router: Server::tool_router() };
        let running = match server.serve(transport).await {
            Ok(running) => running,
            // The client left before `initialize` was done: its choice, not a failure.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(err) => return Err(std::io::Error::other(err.to_string())),
        };
        running.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok::<(), std::io::Error>(())
    });
    // The server (and with it the job sender and the transport) is gone: the worker's
    // queue ends, and the writer ends once it has written every reply.
    drop(runtime);
    let _ = thread.join();
    lines.finish();
    served.map_err(ServeError::Io)
}
